# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm_token action plugin: the bootstrap token is made on the controller and sent to the module, the discovery
kubeconfig built here from the CA the module returns. The module run is a FAKE (_execute_module replaced); the real
module registers the token on lab hosts in molecule/install, molecule/noderoll and molecule/haendpoint (join)."""

from __future__ import annotations

import json
import re
import types

import pytest

from ansible_collections.mooring.cluster.plugins.action import kubeadm_token as action
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def plugin(seen, answer=None):
    def fake(module_name, module_args, task_vars):
        seen.append((module_name, module_args))
        return dict(answer if answer is not None else {"changed": True, "ca_pem": CA, "argv": ["kubeadm"]})

    p = object.__new__(action.ActionModule)
    p._task = types.SimpleNamespace(check_mode=False)
    p._execute_module = fake
    return p


def test_a_fresh_token_per_run_is_made_on_the_controller_and_the_discovery_kubeconfig_built_here():
    seen, results = [], []
    for _i in range(2):
        results.append(plugin(seen).act({"server": "10.0.0.10:6443", "ttl": "1h", "token": None,
                                         "cluster_name": "kubernetes"}, {}))
    tokens = [args["token"] for _name, args in seen]
    assert {name for name, _args in seen} == {"mooring.cluster.kubeadm_token"}
    assert all(re.fullmatch(r"[a-z0-9]{6}\.[a-z0-9]{16}", t) for t in tokens) and tokens[0] != tokens[1]
    for token, result in zip(tokens, results):
        config = json.loads(result["discovery_kubeconfig"])
        assert result["token"] == token and config["users"][0]["user"]["token"] == token
        assert config["clusters"][0]["cluster"]["server"] == "https://10.0.0.10:6443"


def test_a_given_token_is_checked_and_passed_on():
    seen, given = [], "abcdef." + "0123456789abcdef"
    plugin(seen).act({"server": "s:6443", "token": given}, {})
    assert seen[0][1]["token"] == given
    with pytest.raises(MooringError, match="not a bootstrap token"):
        plugin(seen).act({"server": "s:6443", "token": "ABCDEF.0123456789abcdef"}, {})
    assert len(seen) == 1


def test_a_failure_or_a_check_run_is_passed_on_without_the_token():
    for answer in ({"failed": True, "msg": "kubeadm token create failed (rc=1): x"}, {"changed": True, "argv": ["k"]}):
        got = plugin([], answer).act({"server": "s:6443", "token": None}, {})
        assert got == answer
