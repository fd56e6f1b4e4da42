# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The surfaces the ``mooring`` CLI does not reach, called for the bad-input harness as the CLI calls a command.

Each entry takes file paths (``argv`` of a case whose ``entry`` names it), calls the product function a module or
action plugin calls with them, and prints what it produced on stdout; errors go through the CLI's own handler
(:func:`cli.main.call`): one line per problem and exit 1, a bug one line and exit 70.

- ``template FILE``: kURL ``{{kurl}}`` templates rendered as ``preflight_check`` renders a HostPreflight file;
- ``preflight SPEC [COLLECTED]``: a HostPreflight spec read, rendered and loaded as the module's spec scope does
  (``spec_documents``, ``hostpreflight.load``), then its analyzers run over ``COLLECTED`` (a JSON mapping of
  troubleshoot result paths to contents);
- ``collect SPEC ROOT``: the spec's host collectors run over ``ROOT`` as the host scope runs them, with a runner
  that refuses to start programs (a stand-in: the harness starts nothing on the machine);
- ``redact FILE``: the file redacted as the support bundle redacts every text;
- ``support RESULTS LOCK DEST``: the support bundle assembled from registered ``support_collect`` results (a JSON
  mapping of host to result) and a lock, written to ``DEST`` (the action plugin's ``make_bundle``);
- ``restore ARCHIVE IDENTITY SIGNER TARGETS``: a controller backup restored (``controllerstate.unpack``) to the
  targets a JSON mapping names, trusting the public key in ``SIGNER``.
"""

from __future__ import annotations

import json
import sys

# Imported here, in the harness's process: ansible's first import makes ~/.ansible/tmp, which a case must not write.
from ansible_collections.mooring.cluster.plugins.action.support_bundle import make_bundle
from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import call

NOW = 1_780_000_000  # a fixed clock: 2026-05-28


def _print(value):
    sys.stdout.write("%s\n" % (value if isinstance(value, str) else json.dumps(value, sort_keys=True)))


def _spec(path):
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostpreflight
    from ansible_collections.mooring.cluster.plugins.modules.preflight_check import spec_documents

    docs = spec_documents({"installer": {}, "host_preflight_file": path, "host_preflight": [], "run": "install",
                           "primary_hosts": ["10.0.0.1"], "secondary_hosts": []})
    return hostpreflight.load(docs["primary"], source=path)


def template(path):
    from ansible_collections.mooring.cluster.plugins.module_utils.spec import kurltemplate

    text = yamlio.decode(yamlio.read_bytes(path), path)
    data = kurltemplate.template_data({"spec": {"kubernetes": {"version": "1.35.0"}}}, primary_hosts=["10.0.0.1"])
    _print("rendered %d characters" % len(kurltemplate.render_text(text, data, path)))


def preflight(path, collected=None):
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostanalyze

    plan = _spec(path)
    _print("%d collectors, %d analyzers" % (len(plan["collectors"]), len(plan["analyzers"])))
    if collected is not None:
        results = yamlio.load_file(collected)
        if not isinstance(results, dict):
            raise MooringError("%s: the collected results must be a mapping" % collected)
        for result in hostanalyze.analyze_all(plan, results):
            _print("%s %s: %s" % (result["outcome"].upper(), result["check"], result.get("message") or ""))


def _no_programs(argv, timeout=None, env=None, cwd=None):
    """A stand-in runner: the harness never starts a program on the machine."""
    return 127, "", "%s: programs are not run in the bad-input harness" % argv[0]


def collect(path, root):
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostcollect

    got = hostcollect.collect(_spec(path)["collectors"], root=root, run=_no_programs, now=lambda: NOW)
    _print("collected %d results" % len(got["collected"]))
    for line in got["errors"]:
        _print("ERROR %s" % line)


def redact(path):
    from ansible_collections.mooring.cluster.plugins.module_utils.common.redact import redact as redact_text

    text, counts = redact_text(yamlio.decode(yamlio.read_bytes(path), path))
    sys.stdout.write(text)
    _print(counts)


def support(results, lock, dest):
    got = yamlio.load_file(results)
    if not isinstance(got, dict):
        raise MooringError("%s: the registered results must be a mapping of host to result" % results)
    done = make_bundle(got, lock, None, dest, NOW, "controller")
    for line in done["finding_lines"]:
        _print(line)


def restore(archive, identity, signer, targets):
    from ansible_collections.mooring.cluster.plugins.plugin_utils import controllerstate

    _print(controllerstate.unpack(archive, identity, yamlio.load_file(targets), [signer])["written"])


ENTRIES = {f.__name__: f for f in (template, preflight, collect, redact, support, restore)}


def main(argv):
    """Run the entry ``argv[0]`` with the rest of ``argv`` as its paths; the exit code as the CLI gives it."""
    if not argv or argv[0] not in ENTRIES:
        sys.stderr.write("usage: ENTRY PATH... (ENTRY one of %s)\n" % ", ".join(sorted(ENTRIES)))
        return 2
    return call(ENTRIES[argv[0]], *argv[1:])
