# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The backends' imports follow the pipeline: common <- spec <- lock <- bundle <- cluster <- solutions | infra.

A stage imports only itself and the stages before it (docs/DEVELOPING.md, "Where code goes"). The test
reads every module_utils file's imports (statically, without importing it) and names each edge that
runs against that order.
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
                found.append((node.lineno, rest[0], ".".join(rest[:2])))
    return found


def edges_against_the_order(root=ROOT):
    """One line per import that runs against :data:`ALLOWED`."""
    problems = []
    for stage in sorted(os.listdir(root)):
        folder = os.path.join(root, stage)
        if not os.path.isdir(folder) or stage.startswith("__"):
            continue
        assert stage in ALLOWED, "module_utils/%s is not a stage of the pipeline; add it to ALLOWED and DEVELOPING" % stage
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".py"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                imports = imported_stages(handle.read())
            for line, target, module in sorted(set(imports)):
                if target != stage and target not in ALLOWED[stage]:
                    problems.append("%s/%s:%d: %s imports %s, a later stage" % (stage, name, line, stage, module))
    return problems


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
])
def test_the_check_sees_an_edge_against_the_order(tmp_path, stage, source, refused):
    for name in ALLOWED:
        (tmp_path / name).mkdir()
    (tmp_path / stage / "probe.py").write_text(source)
    problems = edges_against_the_order(str(tmp_path))
    assert bool(problems) is refused, problems
