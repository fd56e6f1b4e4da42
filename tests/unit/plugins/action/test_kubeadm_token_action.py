# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm_token action plugin: the bootstrap token is made on the controller and sent to the module. The module
run is a FAKE (_execute_module replaced); the real module registers the token on lab hosts in molecule/install and
molecule/noderoll (join)."""

from __future__ import annotations

import re
import types

import pytest

from ansible_collections.mooring.cluster.plugins.action import kubeadm_token as action
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


def plugin(seen):
    def fake(module_name, module_args, task_vars):
        seen.append((module_name, module_args))
        return {"changed": True}

    p = object.__new__(action.ActionModule)
    p._task = types.SimpleNamespace(check_mode=False)
    p._execute_module = fake
    return p


def test_a_fresh_token_per_run_is_made_on_the_controller():
    seen = []
    for _i in range(2):
        plugin(seen).act({"server": "10.0.0.10:6443", "ttl": "1h", "token": None}, {})
    names = {name for name, _args in seen}
    tokens = [args["token"] for _name, args in seen]
    assert names == {"mooring.cluster.kubeadm_token"}
    assert all(re.fullmatch(r"[a-z0-9]{6}\.[a-z0-9]{16}", t) for t in tokens) and tokens[0] != tokens[1]
    assert seen[0][1]["server"] == "10.0.0.10:6443"


def test_a_given_token_is_checked_and_passed_on():
    seen, given = [], "abcdef." + "0123456789abcdef"
    plugin(seen).act({"server": "s:6443", "token": given}, {})
    assert seen[0][1]["token"] == given
    with pytest.raises(MooringError, match="not a bootstrap token"):
        plugin(seen).act({"server": "s:6443", "token": "ABCDEF.0123456789abcdef"}, {})
    assert len(seen) == 1
