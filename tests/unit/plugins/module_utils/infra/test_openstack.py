# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenStack infrastructure plan: the data model, security rules, fixed IPs, inventory, and
validation against a cloud.

The cloud here is FakeCloud, an in-memory stand-in for ``SdkCloud`` (the real one is
exercised against a real OpenStack by the `openstack` molecule scenario).
"""

import hashlib

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.infra import openstack as infra
from ansible_collections.mooring.cluster.plugins.module_utils.infra import openstackcloud, openstackspec, openstackuserdata

PUB = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDummyKeyForTestsOnly test"


def spec(**over):
    base = {
        "name": "demo",
        "image": {"name": "debian-12", "existing": True},
        "network": {"cidr": "10.42.0.0/24", "dns_nameservers": ["10.42.0.53"]},
        "external_network": "public",
        "api_allowed_cidrs": ["203.0.113.0/24"],
        "ssh_allowed_cidrs": ["198.51.100.0/24"],
        "nodeport_allowed_cidrs": ["0.0.0.0/0"],
        "cni": {"name": "calico", "mode": "vxlan"},
        "keypair": {"name": "demo", "public_key": PUB},
        "nodes": {"control_plane": {"count": 3, "flavor": "m1.medium", "floating_ip": True},
                  "workers": {"count": 2, "flavor": "m1.small"}},
        "load_balancer": {},
        "user_data": {"packages": ["chrony"], "sysctls": {"net.ipv4.ip_forward": 1}},
    }
    base.update(over)
    return base


def problems_of(exc_info):
    return "\n".join(exc_info.value.problems)


def rules_of(plan, group):
    g = next(g for g in plan["security_groups"] if g["name"] == group)
    return {(r["protocol"], r["port_range_min"], r["port_range_max"], r["remote_ip_prefix"],
             r["remote_group"]) for r in g["rules"] if r["direction"] == "ingress"}


class FakeCloud:
    """In-memory stand-in for SdkCloud (a fake: no OpenStack here)."""

    def __init__(self, flavors=None, images=(), networks=None, subnets=(), services=(),
                 compute_quota=None, fip_quota=(-1, 0)):
        self.flavors = flavors if flavors is not None else {
            "m1.small": {"name": "m1.small", "vcpus": 1, "ram": 2048},
            "m1.medium": {"name": "m1.medium", "vcpus": 2, "ram": 4096}}
        self.images = set(images)
        self.networks = networks if networks is not None else {
            "public": {"id": "ext", "is_router_external": True}}
        self._subnets = list(subnets)
        self.services = set(services)
        self.quota = compute_quota or {"instances": (-1, 0), "cores": (-1, 0), "ram": (-1, 0)}
        self.fip_quota = fip_quota

    def flavor(self, name):
        return self.flavors.get(name)

    def flavor_names(self):
        return list(self.flavors)

    def image(self, name):
        return name if name in self.images else None

    def network(self, name):
        return self.networks.get(name)

    def subnets(self):
        return self._subnets

    def has_service(self, service_type):
        return service_type in self.services

    def compute_quota(self):
        return self.quota

    def network_quota(self):
        return {"floatingip": self.fip_quota}


# ------------------------------------------------------------------ the data model
def test_normalize_fills_defaults():
    s = openstackspec.normalize(spec(cni={}, network={}))
    assert s["cni"] == {"name": "calico", "mode": "vxlan"}
    assert s["network"]["cidr"] == "10.42.0.0/24"
    assert s["nodes"]["etcd"]["count"] == 0


@pytest.mark.parametrize("over, needle", [
    ({"name": "Demo_1"}, "name: 'Demo_1'"),
    ({"network": {"cidr": "10.42.0.1/24"}}, "network.cidr: '10.42.0.1/24' is not a network CIDR"),
    ({"api_allowed_cidrs": ["nope"]}, "api_allowed_cidrs[0]: 'nope'"),
    ({"cni": {"name": "calico", "mode": "ipvlan"}}, "cni: calico/ipvlan is not supported"),
    ({"nodes": {"control_plane": {"count": 2, "flavor": "x"}}}, "nodes.control_plane.count: 2 must be odd"),
    ({"nodes": {"control_plane": {"count": 1}}}, "nodes.control_plane.flavor: required"),
    ({"nodes": {"workers": {"count": 1, "flavor": "x"}}}, "at least 1 control-plane node"),
    ({"nodes": {"control_plane": {"count": 1, "flavor": "x", "flavour": "y"}}},
     "nodes.control_plane.flavour: unknown key"),
    ({"image": {"name": "x"}}, "give exactly one of image.file or image.url"),
    ({"image": {"name": "x", "url": "http://h/i", "checksum": "abc"}}, "image.checksum: 'abc'"),
    ({"image": {"name": "x", "file": "/nonexistent/img", "checksum": "sha256:" + "0" * 64}},
     "image.file: '/nonexistent/img' does not exist"),
    ({"keypair": {"name": "k", "public_key": "-----BEGIN OPENSSH PRIVATE KEY-----"}},
     "keypair.public_key: this is a private key"),
    ({"user_data": {"write_files": []}}, "user_data.write_files: not allowed"),
    ({"user_data": {"packages": ["-----BEGIN CERTIFICATE-----"]}}, "is not a package"),
    ({"external_network": None}, "external_network: required"),
    ({"network": {"cidr": "10.42.0.0/28"}}, "too few for 2 workers"),
])
def test_normalize_rejects_bad_input_naming_the_field(over, needle):
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackspec.normalize(spec(**over))
    assert needle in problems_of(exc)
    assert isinstance(exc.value, MooringError)


def test_normalize_lists_every_problem_at_once():
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackspec.normalize(spec(name="X", external_network=None))
    assert len(exc.value.problems) == 2


# ------------------------------------------------------------------ security groups
@pytest.mark.parametrize("cni, expected", [
    ({"name": "calico", "mode": "vxlan"}, {("udp", 4789)}),
    ({"name": "calico", "mode": "bgp"}, {("tcp", 179)}),
    ({"name": "flannel", "mode": "vxlan"}, {("udp", 8472)}),
    ({"name": "cilium", "mode": "vxlan"}, {("udp", 8472)}),
])
def test_cni_overlay_ports_follow_the_cni(cni, expected):
    plan = infra.build_plan(openstackspec.normalize(spec(cni=cni)))
    node = rules_of(plan, "demo-node")
    overlay = {(p, lo) for p, lo, hi, cidr, grp in node
               if grp == "demo-node" and (p, lo) not in {("tcp", 10250), ("icmp", None)}}
    assert overlay == expected


def test_stacked_etcd_only_between_control_planes():
    plan = infra.build_plan(openstackspec.normalize(spec()))
    cp = rules_of(plan, "demo-control-plane")
    assert ("tcp", 2379, 2380, None, "demo-control-plane") in cp
    assert ("tcp", 6443, 6443, "203.0.113.0/24", None) in cp
    assert "demo-etcd" not in [g["name"] for g in plan["security_groups"]]
    every = set().union(*(rules_of(plan, g["name"]) for g in plan["security_groups"]))
    assert not [r for r in every if r[1] and r[1] <= 2379 <= r[2] and r[3] is not None]


def test_external_etcd_gets_its_own_group_and_server_group():
    s = spec(nodes={"control_plane": {"count": 1, "flavor": "m1.medium"},
                    "etcd": {"count": 3, "flavor": "m1.small"},
                    "workers": {"count": 0}})
    plan = infra.build_plan(openstackspec.normalize(s))
    etcd = rules_of(plan, "demo-etcd")
    assert etcd == {("tcp", 2379, 2379, None, "demo-control-plane"),
                    ("tcp", 2379, 2380, None, "demo-etcd")}
    assert [g["name"] for g in plan["server_groups"]] == ["demo-control-plane", "demo-etcd"]
    assert all(g["policy"] == "anti-affinity" for g in plan["server_groups"])


def test_every_group_keeps_its_egress_rules():
    plan = infra.build_plan(openstackspec.normalize(spec()))
    for g in plan["security_groups"]:
        egress = [r for r in g["rules"] if r["direction"] == "egress"]
        assert {r["ether_type"] for r in egress} == {"IPv4", "IPv6"}


def test_workers_open_nodeports_not_the_api():
    plan = infra.build_plan(openstackspec.normalize(spec()))
    w = rules_of(plan, "demo-worker")
    assert w == {("tcp", 30000, 32767, "0.0.0.0/0", None), ("udp", 30000, 32767, "0.0.0.0/0", None)}


# ------------------------------------------------------------------ servers
def test_servers_fixed_ips_groups_and_names():
    plan = infra.build_plan(openstackspec.normalize(spec()))
    got = [(s["name"], s["fixed_ip"], s["server_group"], tuple(s["security_groups"]))
           for s in plan["servers"]]
    assert got == [
        ("demo-cp-1", "10.42.0.10", "demo-control-plane", ("demo-node", "demo-control-plane")),
        ("demo-cp-2", "10.42.0.11", "demo-control-plane", ("demo-node", "demo-control-plane")),
        ("demo-cp-3", "10.42.0.12", "demo-control-plane", ("demo-node", "demo-control-plane")),
        ("demo-worker-1", "10.42.0.30", None, ("demo-node", "demo-worker")),
        ("demo-worker-2", "10.42.0.31", None, ("demo-node", "demo-worker")),
    ]
    assert plan["network"]["gateway_ip"] == "10.42.0.1"


def test_load_balancer_members_are_the_control_plane():
    plan = infra.build_plan(openstackspec.normalize(spec(load_balancer={"enabled": True})))
    lb = plan["load_balancer"]
    assert [m["address"] for m in lb["members"]] == ["10.42.0.10", "10.42.0.11", "10.42.0.12"]
    assert ("tcp", 6443, 6443, "10.42.0.0/24", None) in rules_of(plan, "demo-control-plane")


_OPENSSH_PRIVATE_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"


@pytest.mark.parametrize("user_data,needle", [
    # What a substring deny-list let through:
    ({"users": [{"name": "ops", "ssh_authorized_keys": [_OPENSSH_PRIVATE_BODY]}]},
     "user_data.users[0].ssh_authorized_keys[0]: not an SSH public key line"),
    ({"packages": ["-----BEGIN PRIVATE  KEY-----"]}, "user_data.packages[0]: '-----BEGIN PRIVATE  KEY-----' is not a package"),
    ({"sysctls": {"net.ipv4.ip_forward": "abcdef.0123456789abcdef"}},
     "user_data.sysctls.net.ipv4.ip_forward: 'abcdef.0123456789abcdef' is not a number"),
    ({"sysctls": {"net.ipv4.ip_forward": "1\nkernel.modprobe = /tmp/x"}}, "is not a number"),
    ({"sysctls": {"net.ipv4.ip_forward\nkernel.modprobe": 1}}, "is not a sysctl name"),
    ({"users": [{"name": "ops", "passwd": "$6$salt$hash"}]}, "user_data.users[0].passwd: not allowed"),
    ({"users": [{"name": "ops", "plain_text_passwd": "hunter2"}]}, "user_data.users[0].plain_text_passwd: not allowed"),
    ({"users": [{"name": "Ops!"}]}, "user_data.users[0].name: 'Ops!' is not a user name"),
    ({"users": ["ops"]}, "user_data.users[0]: a mapping with at least name"),
    ({"packages": "chrony"}, "user_data.packages: must be a list"),
    ({"packages": ["chrony\n"]}, "user_data.packages[0]: 'chrony\\n' is not a package"),
    ({"sysctls": {"vm.swappiness": "1\n"}}, "user_data.sysctls.vm.swappiness: '1\\n' is not a number"),
])
def test_user_data_is_an_allow_list(user_data, needle):
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackspec.normalize(spec(user_data=user_data))
    assert needle in problems_of(exc)


def test_user_data_allows_what_hosts_need_and_a_deny_list_refused():
    user = {"name": "ops", "groups": ["sudo", "adm"], "shell": "/bin/bash", "lock_passwd": True,
            "sudo": "ALL=(ALL) NOPASSWD:ALL", "ssh_authorized_keys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG ops@laptop"]}
    got = openstackspec.normalize(spec(user_data={"users": [user], "packages": ["chrony", "nfs-common=1:2.6.2-4"],
                                                  "sysctls": {"net.ipv4.ip_local_port_range": "1024 65535",
                                                              "vm.max_map_count": 262144}}))
    text = openstackuserdata.render_user_data(got["user_data"])
    assert "NOPASSWD:ALL" in text and "lock_passwd" in text and "1024 65535" in text


def test_user_data_is_cloud_config_with_only_host_config():
    text = infra.build_plan(openstackspec.normalize(spec()))["user_data"]
    assert text.startswith("#cloud-config\n")
    assert '"chrony"' in text and "net.ipv4.ip_forward = 1" in text
    assert "ssh_authorized_keys" not in text


# ------------------------------------------------------------------ against a cloud
def plan_for(**over):
    return infra.build_plan(openstackspec.normalize(spec(**over)))


def test_check_cloud_accepts_a_good_request():
    openstackcloud.check_cloud(plan_for(), FakeCloud(images={"debian-12"}))


def test_unknown_flavor_is_named_with_the_available_ones():
    plan = plan_for(nodes={"control_plane": {"count": 1, "flavor": "m1.medium"},
                           "workers": {"count": 1, "flavor": "m1.nope"}})
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackcloud.check_cloud(plan, FakeCloud(images={"debian-12"}))
    assert "nodes.workers.flavor: flavor 'm1.nope' not found" in problems_of(exc)
    assert "m1.medium, m1.small" in problems_of(exc)


def test_unknown_image_and_external_network():
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackcloud.check_cloud(plan_for(external_network="outside"), FakeCloud())
    text = problems_of(exc)
    assert "image.name: image 'debian-12' not found" in text
    assert "external_network: network 'outside' not found" in text


def test_a_network_that_is_not_external_is_refused():
    cloud = FakeCloud(images={"debian-12"},
                      networks={"public": {"id": "x", "is_router_external": False}})
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackcloud.check_cloud(plan_for(), cloud)
    assert "is not an external network" in problems_of(exc)


def test_overlapping_cidr_names_the_other_subnet_but_not_our_own():
    cloud = FakeCloud(images={"debian-12"}, subnets=[
        {"id": "1", "name": "demo-subnet", "cidr": "10.42.0.0/24"},
        {"id": "2", "name": "legacy", "cidr": "10.42.0.128/25"},
        {"id": "3", "name": "v6", "cidr": "fd00::/64"}])
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackcloud.check_cloud(plan_for(), cloud)
    assert exc.value.problems == [
        "network.cidr: 10.42.0.0/24 overlaps subnet 'legacy' (10.42.0.128/25) in this cloud; "
        "choose another CIDR"]


def test_quota_exceeded_counts_only_new_servers():
    cloud = FakeCloud(images={"debian-12"},
                      compute_quota={"instances": (10, 6), "cores": (-1, 0), "ram": (-1, 0)})
    plan = plan_for()
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackcloud.check_cloud(plan, cloud)
    assert "quota: instances would reach 11 (in use 6 + needed 5)" in problems_of(exc)
    # A re-run where 2 of the 5 servers exist needs only 3 more: fits.
    openstackcloud.check_cloud(plan, cloud, existing_servers={"demo-cp-1", "demo-cp-2"})


def test_floating_ip_quota():
    cloud = FakeCloud(images={"debian-12"}, fip_quota=(2, 1))
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackcloud.check_cloud(plan_for(), cloud)
    assert "floating IPs would reach 4" in problems_of(exc)


def test_boot_volumes_and_load_balancer_need_their_services():
    plan = plan_for(load_balancer={"enabled": True},
                    nodes={"control_plane": {"count": 1, "flavor": "m1.small",
                                             "boot_volume_size": 20}})
    with pytest.raises(openstackspec.OpenStackInfraError) as exc:
        openstackcloud.check_cloud(plan, FakeCloud(images={"debian-12"}))
    assert "boot volumes need Cinder" in problems_of(exc)
    assert "no Octavia" in problems_of(exc)
    openstackcloud.check_cloud(plan, FakeCloud(images={"debian-12"},
                                               services={"block-storage", "load-balancer"}))


# ------------------------------------------------------------------ changes and inventory
def test_resource_changes_create_keep_and_delete_in_reverse_order():
    plan = plan_for()
    existing = {("network", "demo-net"), ("server", "demo-cp-1"), ("keypair", "demo")}
    ch = infra.resource_changes(plan, existing, "present")
    assert "network/demo-net" in ch["keep"] and "subnet/demo-subnet" in ch["create"]
    gone = infra.resource_changes(plan, existing, "absent")
    assert gone["delete"] == ["server/demo-cp-1", "network/demo-net", "keypair/demo"]
    assert infra.resource_changes(plan, set(), "absent")["delete"] == []


def test_inventory_groups_endpoint_and_stacked_etcd():
    plan = plan_for()
    servers = {s["name"]: {"id": "id-" + s["name"], "fixed_ip": s["fixed_ip"],
                           "floating_ip": "172.24.4.%d" % (i + 20) if s["floating_ip"] else None}
               for i, s in enumerate(plan["servers"])}
    inv = infra.build_inventory(plan, servers)["all"]
    assert inv["vars"]["mooring_control_plane_endpoint"] == "172.24.4.20:6443"
    assert inv["children"]["control_plane"]["hosts"]["demo-cp-2"]["ansible_host"] == "172.24.4.21"
    assert inv["children"]["workers"]["hosts"]["demo-worker-1"]["ansible_host"] == "10.42.0.30"
    assert sorted(inv["children"]["etcd"]["hosts"]) == ["demo-cp-1", "demo-cp-2", "demo-cp-3"]
    inv = infra.build_inventory(plan, servers, endpoint="10.42.0.5")["all"]
    assert inv["vars"]["mooring_control_plane_endpoint"] == "10.42.0.5:6443"
    del servers["demo-worker-2"]
    with pytest.raises(openstackspec.OpenStackInfraError, match="demo-worker-2"):
        infra.build_inventory(plan, servers)


def test_verify_file_checksum(tmp_path):
    f = tmp_path / "img"
    f.write_bytes(b"node image")
    good = "sha256:" + hashlib.sha256(b"node image").hexdigest()
    openstackcloud.verify_file_checksum(str(f), good)
    with pytest.raises(openstackspec.OpenStackInfraError, match="image.checksum"):
        openstackcloud.verify_file_checksum(str(f), "sha256:" + "0" * 64)
