# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every module declares its attributes through the collection's fragments: a module backed by an action
plugin (plugins/action/<name>.py) extends ``mooring.cluster.attributes.controller`` or ``.flow``; every
module extends ``mooring.cluster.attributes`` (or its ``read_only`` variant)."""

from __future__ import annotations

import ast
import os

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MODULES = os.path.join(ROOT, "plugins", "modules")
ACTIONS = os.path.join(ROOT, "plugins", "action")
NAMES = sorted(n[:-3] for n in os.listdir(MODULES) if n.endswith(".py") and n != "__init__.py")


def _fragments(name):
    path = os.path.join(MODULES, name + ".py")
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    text = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                and any(getattr(target, "id", None) == "DOCUMENTATION" for target in node.targets))
    return yaml.safe_load(text).get("extends_documentation_fragment") or []


def test_there_are_modules_with_and_without_action_plugins():
    backed = [n for n in NAMES if os.path.exists(os.path.join(ACTIONS, n + ".py"))]
    assert len(backed) >= 10 and len(NAMES) - len(backed) >= 10


@pytest.mark.parametrize("name", NAMES)
def test_module_declares_its_attributes_fragment(name):
    fragments = _fragments(name)
    assert {"mooring.cluster.attributes", "mooring.cluster.attributes.read_only"} & set(fragments), fragments
    flow = {"mooring.cluster.attributes.controller", "mooring.cluster.attributes.flow"} & set(fragments)
    if os.path.exists(os.path.join(ACTIONS, name + ".py")):
        assert len(flow) == 1, "%s has an action plugin: extend attributes.controller or attributes.flow" % name
    else:
        assert not flow, "%s has no action plugin: it must not declare the action attributes" % name
