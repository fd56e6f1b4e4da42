# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: render a local Helm chart to Kubernetes objects.

:func:`template` runs ``helm template`` on a chart directory and returns the rendered objects
as dicts, in helm's order. Nothing is fetched and no cluster is contacted: the chart's
dependencies must be vendored in its ``charts/`` directory, helm gets private, empty
config/cache/data homes and an empty kubeconfig, and the namespace is always passed. A chart
holding a symlink or a special file is refused before helm runs (:func:`check_chart`): helm
follows links, and a chart is rendered from its own files only.

Which helm: the ``helm`` argument, else the ``MOORING_HELM`` environment variable, else
``helm`` on ``PATH`` (Helm 3.8+; the tests use v4.1.4 from ``scripts/tools.sh helm``).
Every failure is one :class:`HelmError` whose single line names the chart. helm's output goes to
a file (at most :data:`MAX_OUTPUT_BYTES` are read) and is parsed with ``common/yamlio``'s bounds.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt

HELM_ENV = "MOORING_HELM"
DEFAULT_TIMEOUT = 120
DEFAULT_NAMESPACE = "default"
STDERR_LINES = 3
# helm's output: read at most this much, parsed with these bounds (a chart renders far less).
MAX_OUTPUT_BYTES = 32 * 1024 * 1024
MAX_OUTPUT_NODES = 2000000
MAX_OUTPUT_DEPTH = 128
MAX_STDERR_BYTES = 64 * 1024


class HelmError(MooringError):
    """helm is missing, or ``helm template`` failed or printed something that is not objects."""


def find_helm(chart_dir, helm=None):
    """Path of the helm binary: ``helm``, else ``$MOORING_HELM``, else ``helm`` on PATH."""
    for source, path in (("the helm argument", helm), (HELM_ENV, os.environ.get(HELM_ENV))):
        if path:
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
            raise HelmError("helm is needed to render %s; %s names %s, which is not an executable file" % (chart_dir, source, path))
    found = shutil.which("helm")
    if not found:
        raise HelmError("helm is needed to render %s; install Helm 3.8+ or set %s" % (chart_dir, HELM_ENV))
    return found


def _tail(text, lines=STDERR_LINES):
    """helm's error on one line: from its last ``Error:`` line on (else the last lines), without the --debug hint."""
    kept = [line.strip() for line in (text or "").splitlines() if line.strip() and not line.strip().startswith("Use --debug")]
    starts = [i for i, line in enumerate(kept) if line.startswith("Error:")]
    kept = kept[starts[-1]:][:lines + 2] if starts else kept[-lines:]
    return "; ".join(kept) or "no output on stderr"


def _offline_env(tmp):
    """The environment helm runs in: its config, cache and data under ``tmp``, and an empty kubeconfig
    (``template`` never talks to a cluster)."""
    kubeconfig = os.path.join(tmp, "kubeconfig")
    with open(kubeconfig, "w", encoding="utf-8") as f:
        f.write("apiVersion: v1\nkind: Config\n")
    env = dict(os.environ)
    env.update({
        "HELM_CONFIG_HOME": os.path.join(tmp, "config"),
        "HELM_CACHE_HOME": os.path.join(tmp, "cache"),
        "HELM_DATA_HOME": os.path.join(tmp, "data"),
        "KUBECONFIG": kubeconfig,
    })
    return env


def _run_template(binary, argv, env, tmp, chart_dir, timeout):
    """Run ``argv`` with stdout and stderr in files under ``tmp``; helm's stdout (bytes, bounded), or HelmError."""
    out_path = os.path.join(tmp, "stdout")
    err_path = os.path.join(tmp, "stderr")
    try:
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, timeout=timeout,
                                  check=False)
    except subprocess.TimeoutExpired:
        raise HelmError("helm template of %s did not finish within %ss" % (chart_dir, timeout)) from None
    except OSError as exc:
        raise HelmError("helm template of %s could not run %s: %s" % (chart_dir, binary, exc.strerror or exc)) from None
    with open(err_path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - MAX_STDERR_BYTES))
        stderr = f.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise HelmError("helm template of %s failed (exit %d): %s" % (chart_dir, proc.returncode, _tail(stderr)[:500]))
    if os.path.getsize(out_path) > MAX_OUTPUT_BYTES:
        raise HelmError("helm template of %s printed %d bytes, more than the limit of %d"
                        % (chart_dir, os.path.getsize(out_path), MAX_OUTPUT_BYTES))
    with open(out_path, "rb") as f:
        return f.read()


def _objects(stdout, chart_dir):
    """The rendered objects of helm's output (bounded YAML); empty documents dropped, anything but a mapping refused."""
    try:
        docs = yamlio.load(stdout, "helm template output", multi=True, max_bytes=MAX_OUTPUT_BYTES,
                           max_nodes=MAX_OUTPUT_NODES, max_depth=MAX_OUTPUT_DEPTH)
    except yamlio.YamlInputError as exc:
        raise HelmError("helm template of %s printed invalid YAML: %s" % (chart_dir, exc)) from None
    objects = []
    for doc in docs:
        if doc is None or doc == {}:
            continue
        if not isinstance(doc, dict):
            raise HelmError("helm template of %s printed a document that is not an object: %s"
                            % (chart_dir, excerpt(doc)))
        objects.append(doc)
    return objects


def check_chart(chart_dir):
    """HelmError naming the first entry of ``chart_dir`` that is neither a directory nor a regular
    file: helm follows symlinks, so a link would bring a file from outside the chart into the output."""
    for dirpath, dirnames, filenames in os.walk(chart_dir):
        for name in sorted(dirnames) + sorted(filenames):
            full = os.path.join(dirpath, name)
            mode = os.lstat(full).st_mode
            if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
                continue
            raise HelmError("helm template of %s refused: %s is %s; a chart is rendered from its own files only"
                            % (chart_dir, full if full.isprintable() and len(full) <= 300 else excerpt(full, 300),
                               "a symlink" if stat.S_ISLNK(mode) else "a FIFO, device or socket"))


def template(chart_dir, release_name, values, namespace=None, kube_version=None, helm=None, timeout=DEFAULT_TIMEOUT):
    """``helm template RELEASE CHART_DIR`` with ``values``; the rendered objects as a list of dicts.

    Empty documents are dropped; a document that is not a mapping is an error.
    """
    if not yamlio.HAS_YAML:  # pragma: no cover
        raise HelmError("PyYAML is needed to render %s: %s" % (chart_dir, yamlio.YAML_IMPORT_ERROR))
    if not os.path.isfile(os.path.join(chart_dir, "Chart.yaml")):
        raise HelmError("%s is not a Helm chart: it has no Chart.yaml" % chart_dir)
    check_chart(chart_dir)
    binary = find_helm(chart_dir, helm)
    with tempfile.TemporaryDirectory(prefix="mooring-helm-") as tmp:
        values_file = os.path.join(tmp, "values.yaml")
        with open(values_file, "w", encoding="utf-8") as f:
            json.dump(values or {}, f)  # JSON is YAML, and keeps every type as given
        env = _offline_env(tmp)
        argv = [binary, "template", release_name, chart_dir,
                "--namespace", namespace or DEFAULT_NAMESPACE,
                "--values", values_file]
        if kube_version:
            argv += ["--kube-version", str(kube_version)]
        stdout = _run_template(binary, argv, env, tmp, chart_dir, timeout)
    return _objects(stdout, chart_dir)
