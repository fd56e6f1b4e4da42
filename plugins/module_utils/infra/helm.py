# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: render a local Helm chart to Kubernetes objects.

:func:`template` runs ``helm template`` on a chart directory and returns the rendered objects
as dicts, in helm's order. Nothing is fetched and no cluster is contacted: the chart's
dependencies must be vendored in its ``charts/`` directory, helm gets private, empty
config/cache/data homes and an empty kubeconfig, and the namespace is always passed.

Which helm: the ``helm`` argument, else the ``MOORING_HELM`` environment variable, else
``helm`` on ``PATH`` (Helm 3.8+; the tests use v4.1.4 from ``scripts/tools.sh helm``).
Every failure is one :class:`HelmError` whose single line names the chart.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

try:
    import yaml

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - PyYAML comes with ansible-core on the controller
    HAS_YAML = False
    YAML_IMPORT_ERROR = _exc

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

HELM_ENV = "MOORING_HELM"
DEFAULT_TIMEOUT = 120
DEFAULT_NAMESPACE = "default"
STDERR_LINES = 3


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


def template(chart_dir, release_name, values, namespace=None, kube_version=None, helm=None, timeout=DEFAULT_TIMEOUT):
    """``helm template RELEASE CHART_DIR`` with ``values``; the rendered objects as a list of dicts.

    Empty documents are dropped; a document that is not a mapping is an error.
    """
    if not HAS_YAML:  # pragma: no cover
        raise HelmError("PyYAML is needed to render %s: %s" % (chart_dir, YAML_IMPORT_ERROR))
    if not os.path.isfile(os.path.join(chart_dir, "Chart.yaml")):
        raise HelmError("%s is not a Helm chart: it has no Chart.yaml" % chart_dir)
    binary = find_helm(chart_dir, helm)
    with tempfile.TemporaryDirectory(prefix="mooring-helm-") as tmp:
        values_file = os.path.join(tmp, "values.yaml")
        with open(values_file, "w", encoding="utf-8") as f:
            json.dump(values or {}, f)  # JSON is YAML, and keeps every type as given
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
        argv = [binary, "template", release_name, chart_dir,
                "--namespace", namespace or DEFAULT_NAMESPACE,
                "--values", values_file]
        if kube_version:
            argv += ["--kube-version", str(kube_version)]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise HelmError("helm template of %s did not finish within %ss" % (chart_dir, timeout)) from None
        except OSError as exc:
            raise HelmError("helm template of %s could not run %s: %s" % (chart_dir, binary, exc)) from None
    if proc.returncode != 0:
        raise HelmError("helm template of %s failed (exit %d): %s" % (chart_dir, proc.returncode, _tail(proc.stderr)))
    try:
        docs = list(yaml.safe_load_all(proc.stdout))
    except yaml.YAMLError as exc:
        raise HelmError("helm template of %s printed invalid YAML: %s" % (chart_dir, " ".join(str(exc).split()))) from None
    objects = []
    for doc in docs:
        if doc is None or doc == {}:
            continue
        if not isinstance(doc, dict):
            raise HelmError("helm template of %s printed a document that is not an object: %r" % (chart_dir, doc))
        objects.append(doc)
    return objects
