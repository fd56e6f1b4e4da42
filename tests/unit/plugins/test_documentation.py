# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every plugin's DOCUMENTATION, EXAMPLES and RETURN is YAML that parses.

ansible-doc and the sanity tests refuse a plugin whose documentation does not parse (a plain
scalar with ": " in it is the usual cause); this finds it in the fast stage instead of after the
sanity stage's two minutes.
"""

from __future__ import annotations

import ast
import glob
import os

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DOC_NAMES = ("DOCUMENTATION", "EXAMPLES", "RETURN")
FILES = sorted(
    os.path.relpath(path, ROOT)
    for path in glob.glob(os.path.join(ROOT, "plugins", "*", "*.py"))
    if os.sep + "module_utils" + os.sep not in path and not path.endswith("__init__.py")
)


def _doc_strings(tree):
    """(name, text) of every documentation string assigned at module level or in a class body."""
    bodies = [tree.body] + [node.body for node in tree.body if isinstance(node, ast.ClassDef)]
    for body in bodies:
        for node in body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id in DOC_NAMES and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)):
                yield node.targets[0].id, node.value.value


def test_plugins_are_found():
    assert any(path.startswith(os.path.join("plugins", "modules")) for path in FILES)
    assert any(path.startswith(os.path.join("plugins", "doc_fragments")) for path in FILES)


@pytest.mark.parametrize("path", FILES)
def test_documentation_parses(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    for name, text in _doc_strings(tree):
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            pytest.fail("%s: %s does not parse: %s" % (path, name, exc))
        if name == "DOCUMENTATION":
            assert isinstance(data, dict), "%s: DOCUMENTATION is not a mapping" % path
