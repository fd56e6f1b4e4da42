# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight_check action plugin: the module's exchange timed on the controller, the host's clock offset from
it. The module run is a FAKE (_execute_module replaced) with a host clock 5 s ahead; the real module runs on lab
hosts in molecule/preflight."""

from __future__ import annotations

import types

from ansible_collections.mooring.cluster.plugins.action import preflight_check as action
from ansible_collections.mooring.cluster.plugins.plugin_utils import action as base


def test_the_host_clock_becomes_an_offset_with_its_error_bound(monkeypatch):
    ticks = iter([1000.0, 1000.4])  # the controller: sent, answer back
    seen = {}

    def fake(module_name, module_args, task_vars):
        seen.update(name=module_name, args=module_args)
        return {"facts": {"hostname": "h1", "clock": {"received": 1005.1, "replied": 1005.3}}, "checks": []}

    monkeypatch.setattr(base, "time", types.SimpleNamespace(time=lambda: next(ticks)))
    plugin = object.__new__(action.ActionModule)
    plugin._task = types.SimpleNamespace(check_mode=False)
    plugin._execute_module = fake
    got = plugin.act({"roles": ["etcd"], "networks": None, "scope": "host"}, {})
    assert seen == {"name": "mooring.cluster.preflight_check", "args": {"roles": ["etcd"], "scope": "host"}}
    assert got["facts"]["clock"] == {"offset": 5.0, "error": 0.1}


def test_a_result_without_a_clock_is_passed_on_untouched(monkeypatch):
    monkeypatch.setattr(base, "time", types.SimpleNamespace(time=lambda: 1.0))
    plugin = object.__new__(action.ActionModule)
    plugin._task = types.SimpleNamespace(check_mode=False)
    plugin._execute_module = lambda **kwargs: {"failed": True, "msg": "invalid preflight settings"}
    assert plugin.act({"scope": "inventory"}, {}) == {"failed": True, "msg": "invalid preflight settings"}
