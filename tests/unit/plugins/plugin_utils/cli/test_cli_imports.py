# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``mooring`` imports only what the command runs.

Every command pays for its imports at start-up (jsonschema, cryptography, ansible's urls are
0.1-0.2 s each), so main.py imports only the group named on the command line and the group
modules import their backends inside the command functions. Each check runs the CLI in a fresh
interpreter and reads ``sys.modules`` afterwards: a heavy import put back at the top of a group
module (or a backend that starts importing another group's backend) fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import groups

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
EXAMPLE = os.path.join(ROOT, "inventories", "example", "installer.yaml")
STACK = os.path.join(ROOT, "stacks", "openstack", "default", "1-35")
CLI = "ansible_collections.mooring.cluster.plugins.plugin_utils.cli"
UTILS = "ansible_collections.mooring.cluster.plugins.module_utils"
# Third-party libraries and ansible-core modules no help text needs.
LIBRARIES = ("jsonschema", "cryptography", "yaml", "packaging", "pycdlib", "ansible.module_utils.urls",
             "ansible.module_utils.basic")
# What main.py itself needs from module_utils.
BASE = {UTILS, UTILS + ".common", UTILS + ".common.errors"}

RUN = """
import json, sys
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main
try:
    code = main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
with open(sys.argv[1], "w") as handle:
    json.dump(sorted(sys.modules), handle)
sys.exit(code)
"""


def imported(tmp_path, *argv):
    """The modules loaded by ``mooring ARGV`` (run in a fresh interpreter), and its exit code."""
    out = tmp_path / "modules.json"
    run = subprocess.run([sys.executable, "-c", RUN, str(out), *argv], capture_output=True, text=True, cwd=ROOT,
                         check=False)
    with open(out, encoding="utf-8") as handle:
        return set(json.load(handle)), run


def loaded(modules, name):
    return name in modules or any(m.startswith(name + ".") for m in modules)


def backends(modules, *allowed):
    """The collection's module_utils loaded, but for main.py's own and those under the ``allowed`` packages."""
    allowed = tuple("%s.%s" % (UTILS, package) for package in allowed)
    return sorted(m for m in modules if m.startswith(UTILS + ".") and m not in BASE
                  and not any(m == a or m.startswith(a + ".") for a in allowed))


def test_top_level_help_imports_every_group_and_no_backend(tmp_path):
    modules, run = imported(tmp_path, "--help")
    assert run.returncode == 0
    assert {m for m in modules if m.startswith(CLI + ".")} == {"%s.%s" % (CLI, g) for g in groups() + ["main"]}
    assert [lib for lib in LIBRARIES if loaded(modules, lib)] == []
    assert backends(modules) == []


@pytest.mark.parametrize("group", groups())
def test_group_help_imports_only_that_group(tmp_path, group):
    modules, run = imported(tmp_path, group, "--help")
    assert run.returncode == 0, run.stderr
    allowed = {"%s.%s" % (CLI, g) for g in ("main", group)}
    if group == "catalog":
        allowed.add(CLI + ".spec")  # the --catalog options are the spec group's
    assert {m for m in modules if m.startswith(CLI + ".")} == allowed
    assert [lib for lib in LIBRARIES if loaded(modules, lib)] == []
    assert backends(modules) == []


def test_pki_list_imports_only_the_pki_backend(tmp_path):
    modules, run = imported(tmp_path, "pki", "list", "--dir", str(tmp_path / "pki"))
    assert run.returncode in (0, 1), run.stderr
    assert loaded(modules, "cryptography")
    assert [lib for lib in ("jsonschema", "packaging", "pycdlib", "ansible.module_utils.urls")
            if loaded(modules, lib)] == []
    assert UTILS + ".cluster.pki.pkistatus" in modules
    # the endpoint checks are the spec's (standard library only): no schema, no YAML
    assert backends(modules, "cluster", "common") == [UTILS + ".spec", UTILS + ".spec.errors", UTILS + ".spec.network"]


def test_catalog_list_imports_no_cryptography_and_no_schema(tmp_path):
    modules, run = imported(tmp_path, "catalog", "list", "containerd")
    assert run.returncode == 0, run.stderr
    assert [lib for lib in ("jsonschema", "cryptography", "pycdlib", "ansible.module_utils.urls")
            if loaded(modules, lib)] == []
    assert backends(modules, "common") == [UTILS + ".lock", UTILS + ".lock.catalog", UTILS + ".lock.catalogshape", UTILS + ".lock.errors"]


def test_spec_hash_reads_no_catalog_and_no_certificates(tmp_path):
    modules, run = imported(tmp_path, "spec", "hash", EXAMPLE)
    assert run.returncode == 0, run.stderr
    assert [lib for lib in ("cryptography", "packaging", "pycdlib", "ansible.module_utils.urls")
            if loaded(modules, lib)] == []
    assert not loaded(modules, UTILS + ".lock.catalog") and not loaded(modules, UTILS + ".lock.lockfile")


def test_spec_resolve_and_stack_version_need_no_cryptography(tmp_path):
    for argv in (("spec", "resolve", EXAMPLE), ("stack", "version", STACK, "--check")):
        modules, run = imported(tmp_path, *argv)
        assert run.returncode == 0, run.stderr
        assert [lib for lib in ("cryptography", "pycdlib", "ansible.module_utils.urls")
                if loaded(modules, lib)] == [], argv
