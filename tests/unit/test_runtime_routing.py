# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The old names in meta/runtime.yml still reach their new plugins, through Ansible's own plugin loader, with the
deprecation users see; and every old playbook name kept as an alias imports the playbook it names."""

from __future__ import annotations

import os

import pytest
import yaml
from ansible.plugins.loader import action_loader, module_loader

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
with open(os.path.join(ROOT, "meta", "runtime.yml"), encoding="utf-8") as _handle:
    ROUTING = yaml.safe_load(_handle)["plugin_routing"]
MODULES = sorted(ROUTING["modules"].items())


@pytest.mark.parametrize("old,entry", MODULES, ids=[entry[0] for entry in MODULES])
def test_an_old_module_name_reaches_the_new_module(old, entry):
    new = entry["redirect"]
    assert entry["deprecation"]["removal_version"], old
    assert new.split(".")[-1] in entry["deprecation"]["warning_text"], entry
    context = module_loader.find_plugin_with_context("mooring.cluster.%s" % old)
    assert context.resolved, context.plugin_resolved_name
    assert context.resolved_fqcn == new
    assert os.path.isfile(os.path.join(ROOT, "plugins", "modules", new.split(".")[-1] + ".py"))
    assert context.deprecated and context.deprecation_warnings, "no deprecation for %s" % old
    has_action = os.path.isfile(os.path.join(ROOT, "plugins", "action", new.split(".")[-1] + ".py"))
    # A module with an action plugin runs on the controller: the old name must reach the action too.
    assert (old in ROUTING.get("action", {})) == has_action, old
    if has_action:
        assert action_loader.find_plugin_with_context("mooring.cluster.%s" % old).resolved_fqcn == new


def test_an_old_playbook_name_imports_the_new_one():
    aliases = {"etcd_backups": "etcd_scheduled_snapshots"}
    for old, new in aliases.items():
        with open(os.path.join(ROOT, "playbooks", old + ".yml"), encoding="utf-8") as handle:
            plays = yaml.safe_load(handle)
        assert plays[-1] == {"name": plays[-1]["name"], "ansible.builtin.import_playbook": "mooring.cluster.%s" % new}
        said = plays[0]["tasks"][0]["ansible.builtin.debug"]["msg"]
        assert "mooring.cluster.%s is now mooring.cluster.%s" % (old, new) in said
        assert os.path.isfile(os.path.join(ROOT, "playbooks", new + ".yml"))
