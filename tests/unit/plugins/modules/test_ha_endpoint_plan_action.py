# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""mooring.cluster.ha_endpoint_plan's action: the hosts' `ip -j addr` and the inventory's addresses in, the plan out."""

from __future__ import annotations

import json

import pytest

from ansible_collections.mooring.cluster.plugins.action.ha_endpoint_plan import ActionModule
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import EndpointError


def ip_addr(*addresses):
    return json.dumps([
        {"ifname": "lo", "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8, "scope": "host"}]},
        {"ifname": "eth0", "addr_info": [{"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1]),
                                          "scope": "global"} for a in addresses]},
    ])


TASK_VARS = {
    "groups": {"all": ["cp1", "cp2", "w1"], "control_plane": ["cp1", "cp2"], "workers": ["w1"]},
    "hostvars": {"cp1": {"ansible_host": "10.0.0.11"}, "cp2": {"ansible_host": "10.0.0.12"},
                 "w1": {"ansible_host": "10.0.0.21", "mooring_address": "10.0.0.31"}},
}
ARGS = {"port": 6443, "router_id": 51, "interface": None, "control_plane": None,
        "addresses": {"cp1": ip_addr("10.0.0.11/24"), "cp2": json.loads(ip_addr("10.0.0.12/24"))}}


def act(**kwargs):
    return ActionModule.act(None, dict(ARGS, **kwargs), TASK_VARS)


def test_plan_from_the_hosts_reports():
    result = act(vip="10.0.0.100")
    assert result["hosts"]["cp1"] == {"interface": "eth0", "address": "10.0.0.11", "network": "10.0.0.0/24",
                                      "priority": 200, "peers": ["10.0.0.12"]}
    assert result["hosts"]["cp2"]["priority"] == 199 and result["prefix"] == 24


def test_every_inventory_host_counts_mooring_address_first():
    with pytest.raises(EndpointError, match="vip 10.0.0.31: it is the address of inventory host w1"):
        act(vip="10.0.0.31")
    assert act(vip="10.0.0.21")["vip"] == "10.0.0.21"  # w1's ansible_host is not its address: mooring_address is


def test_a_host_that_reported_nothing_or_garbage():
    with pytest.raises(EndpointError, match="addresses.cp2: no interfaces reported for control-plane host cp2"):
        act(vip="10.0.0.100", addresses={"cp1": ip_addr("10.0.0.11/24")})
    with pytest.raises(EndpointError, match="addresses.cp1: not the JSON of ip -j addr"):
        act(vip="10.0.0.100", addresses={"cp1": "Device not found", "cp2": ip_addr("10.0.0.12/24")})


def test_explicit_control_plane_list_and_interface():
    result = act(vip="10.0.0.100", control_plane=["cp2"], interface="eth0")
    assert list(result["hosts"]) == ["cp2"] and result["hosts"]["cp2"]["peers"] == []
    with pytest.raises(EndpointError, match="host cp2: interface eth1 .* is missing; it has eth0, lo"):
        act(vip="10.0.0.100", control_plane=["cp2"], interface="eth1")
