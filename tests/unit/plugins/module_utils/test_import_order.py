# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The backends' imports follow the pipeline: common <- spec <- lock <- bundle <- cluster <- solutions | infra.

A stage imports only itself and the stages before it (docs/DEVELOPING.md, "Where code goes"). Inside
``cluster`` the sub-packages have an order of their own (:data:`CLUSTER_ALLOWED`): how a host is read comes
first, the components (etcd, pki, kubeadm, addons) next, then the two preflight engines, the support
bundle and, last, what a run takes from the lock. The test reads every module_utils file's imports
(statically, without importing it) and names each edge that runs against either order.
"""

from __future__ import annotations

import ast
import os

import pytest

PREFIX = "ansible_collections.mooring.cluster.plugins.module_utils."
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", "..", "plugins", "module_utils"))

# What each stage may import, besides itself.
ALLOWED = {
    "common": set(),
    "spec": {"common"},
    "lock": {"common", "spec"},
    "bundle": {"common", "spec", "lock"},
    "cluster": {"common", "spec", "lock", "bundle"},
    "solutions": {"common", "spec", "lock", "bundle", "cluster"},
    "infra": {"common", "spec", "lock", "bundle", "cluster"},
}
# Inside cluster: what each sub-package may import, besides itself.
CLUSTER_ALLOWED = {
    "hostfacts": set(),
    "etcd": {"hostfacts"},
    "pki": {"hostfacts"},
    "kubeadm": {"hostfacts"},
    "addons": set(),
    "preflight": {"hostfacts", "kubeadm"},
    "troubleshoot": {"hostfacts", "preflight"},
    "support": {"hostfacts", "etcd", "preflight"},
    "run": {"hostfacts", "etcd", "pki", "kubeadm", "addons"},
}


def imported_stages(source):
    """``(line, stage, module)`` for every import of a module_utils module in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + ["%s.%s" % (node.module, alias.name) for alias in node.names]
        for name in names:
            if name.startswith(PREFIX):
                rest = name[len(PREFIX):].split(".")
                found.append((node.lineno, rest[0], ".".join(rest[:3] if rest[0] == "cluster" else rest[:2])))
    return found


def _sources(folder):
    """``(relative name, source)`` of every ``.py`` file under ``folder``, sub-packages included."""
    for base, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("__"))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(base, name)
                with open(path, encoding="utf-8") as handle:
                    yield os.path.relpath(path, folder), handle.read()


def _against(stage, relative, target, module):
    """True when ``stage``/``relative`` may not import ``module`` (of stage ``target``)."""
    if target != stage:
        return target not in ALLOWED[stage]
    if stage != "cluster":
        return False
    mine, theirs = relative.split(os.sep)[0], module.split(".")[1]
    if theirs not in CLUSTER_ALLOWED or mine not in CLUSTER_ALLOWED:
        return True  # a module at cluster/'s top level, or a sub-package the order does not know
    return theirs != mine and theirs not in CLUSTER_ALLOWED[mine]


def edges_against_the_order(root=ROOT):
    """One line per import that runs against :data:`ALLOWED` or :data:`CLUSTER_ALLOWED`."""
    problems = []
    for stage in sorted(os.listdir(root)):
        folder = os.path.join(root, stage)
        if not os.path.isdir(folder) or stage.startswith("__"):
            continue
        assert stage in ALLOWED, "module_utils/%s is not a stage of the pipeline; add it to ALLOWED and DEVELOPING" % stage
        for relative, source in _sources(folder):
            for line, target, module in sorted(set(imported_stages(source))):
                if _against(stage, relative, target, module):
                    problems.append("%s/%s:%d: imports %s, against the order" % (stage, relative, line, module))
    return problems


def test_cluster_has_only_sub_packages_and_each_is_ordered():
    folder = os.path.join(ROOT, "cluster")
    top = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    packages = {d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)) and not d.startswith("__")}
    assert top == ["__init__.py"], top
    assert packages == set(CLUSTER_ALLOWED)
    for package in packages:
        # ansible-test's empty-init (2.17, 2.18): a module_utils __init__.py is empty; the opening paragraph is
        # the package's README.md.
        assert os.path.getsize(os.path.join(folder, package, "__init__.py")) == 0, "cluster/%s/__init__.py" % package
        with open(os.path.join(folder, package, "README.md"), encoding="utf-8") as handle:
            assert "PRIVATE to mooring.cluster: " in handle.read(), "cluster/%s has no opening paragraph" % package


def test_every_stage_is_known_and_the_tree_is_read():
    stages = [d for d in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, d)) and not d.startswith("__")]
    assert set(stages) == set(ALLOWED)


def test_imports_follow_the_pipeline():
    problems = edges_against_the_order()
    assert not problems, "imports against the pipeline order:\n" + "\n".join(problems)


@pytest.mark.parametrize("stage, source, refused", [
    ("spec", "from %scluster.endpoint import X\n" % PREFIX, True),
    ("lock", "from %sspec import installer\n" % PREFIX, False),
    ("bundle", "import %scluster.kubeadm\n" % PREFIX, True),
    ("cluster", "from %sinfra.stacks import Y\n" % PREFIX, True),
    ("infra", "from %scluster import pki\n" % PREFIX, False),
    ("solutions", "from %sinfra import helm\n" % PREFIX, True),
    ("cluster/etcd", "from %scluster.support import supportbundle\n" % PREFIX, True),
    ("cluster/hostfacts", "from %scluster.pki.pkispec import X\n" % PREFIX, True),
    ("cluster/support", "from %scluster.etcd import etcdctl\n" % PREFIX, False),
    ("cluster/run", "from %scluster.kubeadm import kubeadm\n" % PREFIX, False),
    ("cluster/troubleshoot", "from %scluster.hostfacts import hostio\n" % PREFIX, False),
    ("cluster", "from %scluster.etcd import etcdctl\n" % PREFIX, True),
    ("cluster/newthing", "import os\n", False),
    ("cluster/etcd", "from %scluster.newthing import x\n" % PREFIX, True),
])
def test_the_check_sees_an_edge_against_the_order(tmp_path, stage, source, refused):
    for name in ALLOWED:
        (tmp_path / name).mkdir()
    (tmp_path / stage).mkdir(parents=True, exist_ok=True)
    (tmp_path / stage / "probe.py").write_text(source)
    problems = edges_against_the_order(str(tmp_path))
    assert bool(problems) is refused, problems
