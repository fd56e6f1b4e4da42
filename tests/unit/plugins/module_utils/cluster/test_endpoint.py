# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The keepalived VIP plan: interfaces, priorities, unicast peers, and every refusal before any host changes."""

from __future__ import annotations

import ipaddress

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import endpoint
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.endpoint import interfaces_from_ip_json, plan
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import EndpointError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.network import control_plane_packages, ip_endpoint


def host(name, *interfaces):
    return {"name": name, "interfaces": [{"name": i, "addresses": list(a)} for i, a in interfaces]}


CP = [
    host("cp1", ("lo", ["127.0.0.1/8"]), ("eth0", ["10.0.0.11/24"]), ("eth1", ["192.168.5.11/24"])),
    host("cp2", ("eth0", ["10.0.0.12/24"]), ("ens4", ["192.168.5.12/24"])),
    host("cp3", ("bond0", ["10.0.0.13/24", "fd00::13/64"])),
]
INVENTORY = {"cp1": ["10.0.0.11"], "cp2": ["10.0.0.12"], "cp3": ["10.0.0.13"], "w1": ["10.0.0.21"]}


def errors(*args, **kwargs):
    with pytest.raises(EndpointError) as err:
        plan(*args, **kwargs)
    return err.value.problems


def test_interface_priority_and_unicast_peers_per_host():
    result = plan("10.0.0.100", 6443, CP, INVENTORY)
    assert result["vip"] == "10.0.0.100" and result["prefix"] == 24 and result["family"] == 4
    assert result["router_id"] == endpoint.DEFAULT_ROUTER_ID == 51 and result["port"] == 6443
    assert result["held_by"] == []
    assert result["hosts"] == {
        "cp1": {"interface": "eth0", "address": "10.0.0.11", "network": "10.0.0.0/24", "priority": 200,
                "peers": ["10.0.0.12", "10.0.0.13"]},
        "cp2": {"interface": "eth0", "address": "10.0.0.12", "network": "10.0.0.0/24", "priority": 199,
                "peers": ["10.0.0.11", "10.0.0.13"]},
        "cp3": {"interface": "bond0", "address": "10.0.0.13", "network": "10.0.0.0/24", "priority": 198,
                "peers": ["10.0.0.11", "10.0.0.12"]},
    }


def test_priority_follows_inventory_order_and_the_check_weight_exceeds_the_spread():
    result = plan("10.0.0.100", 6443, list(reversed(CP)), INVENTORY)
    order = sorted(result["hosts"], key=lambda h: -result["hosts"][h]["priority"])
    assert order == ["cp3", "cp2", "cp1"]
    priorities = [h["priority"] for h in result["hosts"].values()]
    # A host whose API server check fails drops below every host whose check passes.
    assert max(priorities) - result["check_weight"] < min(priorities)
    assert all(1 <= p <= 254 for p in priorities)


def test_the_vip_subnet_picks_the_interface_on_each_host():
    result = plan("192.168.5.200", 443, CP[:2], INVENTORY, router_id=7)
    assert {h: v["interface"] for h, v in result["hosts"].items()} == {"cp1": "eth1", "cp2": "ens4"}
    assert result["hosts"]["cp1"]["peers"] == ["192.168.5.12"] and result["router_id"] == 7


def test_ipv6_vip():
    cps = [host("a", ("eth0", ["fd00::11/64", "10.1.0.11/24"])), host("b", ("eth0", ["10.1.0.12/24", "fd00::12/64"]))]
    result = plan("fd00::100", 6443, cps, {"a": ["fd00::11"], "b": ["fd00::12"]})
    assert result["family"] == 6 and result["prefix"] == 64 and result["vip"] == "fd00::100"
    assert result["hosts"]["a"]["peers"] == ["fd00::12"] and result["hosts"]["b"]["address"] == "fd00::12"
    found = errors("fd00::12", 6443, cps, {"a": ["fd00::11"], "b": ["fd00::12"]})
    assert found == ["vip fd00::12: it is the address of inventory host b; choose an unused address"]


def test_a_re_run_sees_the_vip_keepalived_holds_and_plans_the_same():
    first = plan("10.0.0.100", 6443, CP, INVENTORY)
    held = [dict(CP[0], interfaces=CP[0]["interfaces"][:1] + [
        {"name": "eth0", "addresses": ["10.0.0.11/24", "10.0.0.100/24"]}])] + CP[1:]
    again = plan("10.0.0.100", 6443, held, INVENTORY)
    assert again["held_by"] == ["cp1"] and first["held_by"] == []
    assert again["hosts"] == first["hosts"]


def test_given_interface_is_used_and_a_missing_one_named():
    cps = [host("a", ("eth0", ["10.0.0.11/24"]), ("vlan9", ["10.0.0.31/24"])), host("b", ("vlan9", ["10.0.0.32/24"]))]
    assert plan("10.0.0.100", 6443, cps, {}, interface="vlan9")["hosts"]["a"]["interface"] == "vlan9"
    found = errors("10.0.0.100", 6443, cps, {}, interface="eth0")
    assert found == ["host b: interface eth0 (haEndpoint.interface) is missing; it has vlan9"]


def test_vip_outside_every_subnet():
    found = errors("172.16.0.100", 6443, CP, INVENTORY)
    assert len(found) == 1
    assert found[0].startswith("vip 172.16.0.100: outside every control-plane host's subnets (cp1: 10.0.0.0/24, "
                               "192.168.5.0/24; cp2: ")


def test_vip_equal_to_an_inventory_hosts_address():
    assert errors("10.0.0.21", 6443, CP, INVENTORY) == [
        "vip 10.0.0.21: it is the address of inventory host w1; choose an unused address"]
    assert errors("10.0.0.12", 6443, CP, INVENTORY) == [
        "vip 10.0.0.12: it is the address of inventory host cp2; choose an unused address"]


def test_a_control_plane_host_without_an_interface_on_the_vip_subnet():
    cps = CP[:2] + [host("cp3", ("eth0", ["10.9.0.13/24"]))]
    assert errors("10.0.0.100", 6443, cps, INVENTORY) == [
        "host cp3: no interface on the VIP 10.0.0.100's subnet; every control-plane host must have one"]


@pytest.mark.parametrize("kwargs, message", [
    ({"router_id": 0}, "router_id: 0 is not an integer 1-255"),
    ({"router_id": 256}, "router_id: 256 is not an integer 1-255"),
    ({"port": 0}, "port: 0 is not a port 1-65535"),
])
def test_bad_numbers(kwargs, message):
    args = dict({"port": 6443}, **kwargs)
    port = args.pop("port")
    assert errors("10.0.0.100", port, CP, INVENTORY, **args) == [message]


def test_bad_vip_and_no_hosts():
    assert errors("vip.example", 6443, CP) == ["vip: 'vip.example' is not an IP address"]
    assert errors("10.0.0.100", 6443, []) == ["control_plane: no host; the VIP is held by the control-plane hosts"]
    assert errors("10.0.0.100", 6443, [host("a", ("eth0", ["10.0.0.1"]))]) != []  # /32: the VIP is on no subnet
    with pytest.raises(EndpointError, match="'bad' is not ADDRESS/PREFIX"):
        plan("10.0.0.100", 6443, [host("a", ("eth0", ["bad"]))])


@pytest.mark.parametrize("text, expected", [
    ("10.0.0.100:6443", ("10.0.0.100", 6443)),
    ("[fd00::100]:443", ("fd00::100", 443)),
])
def test_ip_endpoint(text, expected):
    address, port = ip_endpoint(text)
    assert (str(address), port) == expected and address == ipaddress.ip_address(expected[0])


@pytest.mark.parametrize("text", ["api.example:6443", "10.0.0.100", "fd00::100:6443", "[10.0.0.1]:6443",
                                  "10.0.0.100:0", "10.0.0.100:99999", "[fd00::1]6443", "", None, "10.0.0.100:x"])
def test_ip_endpoint_refuses(text):
    with pytest.raises(EndpointError, match="is not IP:PORT"):
        ip_endpoint(text, "spec.kubernetes.controlPlaneEndpoint")


def test_interfaces_from_ip_json_skips_loopback_and_link_local():
    data = [
        {"ifname": "lo", "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8, "scope": "host"}]},
        {"ifname": "eth0", "addr_info": [
            {"family": "inet", "local": "10.89.3.11", "prefixlen": 24, "scope": "global"},
            {"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link"},
            {"family": "inet6", "local": "fd00::11", "prefixlen": 64, "scope": "global"}]},
        {"ifname": "eth1"},
    ]
    assert interfaces_from_ip_json(data) == [
        {"name": "lo", "addresses": []},
        {"name": "eth0", "addresses": ["10.89.3.11/24", "fd00::11/64"]},
        {"name": "eth1", "addresses": []},
    ]


def test_packages_only_with_a_vip():
    assert control_plane_packages({"haEndpoint": {"mode": "vip"}}) == {"debian": ["keepalived"]}
    assert control_plane_packages({}) == {} and control_plane_packages(None) == {}


# The lock carries it, lock_values hands it to the playbook, the bundle's package fetches keepalived.
def _lock(kubernetes):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import build_lock
    from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import parse_installer
    document = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "Installer", "metadata": {"name": "t"},
                "spec": {"kubernetes": dict({"version": "1.35.x"}, **kubernetes), "calico": {"version": "latest"}}}
    return build_lock(parse_installer(document), load_catalog())


def test_lock_values_and_bundle_inputs_carry_the_ha_endpoint():
    from ansible_collections.mooring.cluster.plugins.module_utils.bundle.package import package_inputs
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.run.values import lock_values
    lock = _lock({"controlPlaneEndpoint": "[fd00::100]:8443", "haEndpoint": {"mode": "vip", "interface": "eth1"}})
    assert lock_values(lock)["ha_endpoint"] == {"mode": "vip", "vip": "fd00::100", "port": 8443, "interface": "eth1",
                                                "router_id": 51, "packages": {"debian": ["keepalived"]}}
    kube = lock["addons"]["kubernetes"]
    assert kube["controlPlanePackages"] == {"debian": ["keepalived"]}
    inputs = package_inputs("kubernetes", kube)
    # Fetched into the bundle's repository, but not in the list the bundle role installs on every host.
    assert inputs["controlPlanePackages"] == ["keepalived"] and "keepalived" not in inputs["packages"]


def test_no_ha_endpoint_changes_nothing():
    from ansible_collections.mooring.cluster.plugins.module_utils.bundle.package import package_inputs
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.run.values import lock_values
    lock = _lock({"controlPlaneEndpoint": "api.example:6443"})
    assert lock_values(lock)["ha_endpoint"] is None
    assert "controlPlanePackages" not in lock["addons"]["kubernetes"]
    assert "controlPlanePackages" not in package_inputs("kubernetes", lock["addons"]["kubernetes"])


def test_lock_values_refuses_a_vip_lock_with_a_host_name():
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.run.values import lock_values
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import LockError
    lock = _lock({"controlPlaneEndpoint": "10.0.0.100:6443", "haEndpoint": {"mode": "vip", "routerId": 9}})
    assert lock_values(lock)["ha_endpoint"]["router_id"] == 9
    lock["addons"]["kubernetes"]["options"]["controlPlaneEndpoint"] = "api:6443"
    with pytest.raises(LockError, match="addons.kubernetes.options.controlPlaneEndpoint: 'api:6443' is not IP:PORT"):
        lock_values(lock)


def test_pki_puts_the_vip_into_the_api_server_sans():
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki import pkispec
    request = {"control_plane": [{"name": "cp1", "addresses": ["10.0.0.11"]}], "etcd": [], "kubelets": ["cp1"],
               "control_plane_endpoint": "10.0.0.100:6443"}
    spec = pkispec.normalize(request)
    api = next(s for s in pkispec.plan_specs(spec) if s.name == "apiserver")
    assert ipaddress.ip_address("10.0.0.100") in api.ips
