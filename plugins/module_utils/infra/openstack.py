# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the OpenStack infrastructure plan for a cluster.

Plain data in, plain data out, no AnsibleModule:

* :func:`build_plan` turns a normalised request (:func:`infra.openstackspec.normalize`) into
  every resource the ``openstack_infra`` role creates with ``openstack.cloud`` modules: network,
  subnet, router, security groups and their rules per node role, server groups
  (anti-affinity), ports with fixed IPs, servers, floating IPs and an optional load balancer;
* :func:`resource_changes` compares the plan with what exists (the check-mode report);
* :func:`build_inventory` makes the Ansible inventory of the created servers.

The plan is checked against a cloud by :mod:`infra.openstackcloud`.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.mooring.cluster.plugins.module_utils.infra.openstackspec import CNI_PORTS, ROLE_OFFSETS, ROLES, OpenStackInfraError
from ansible_collections.mooring.cluster.plugins.module_utils.infra.openstackuserdata import render_user_data


def _rule(proto, port_min, port_max, description, cidr=None, group=None):
    """One ingress rule in the shape of openstack.cloud.security_group's rules."""
    ether = "IPv4"
    if cidr is not None and ipaddress.ip_network(cidr).version == 6:
        ether = "IPv6"
    return {"description": description, "direction": "ingress", "ether_type": ether,
            "protocol": proto, "port_range_min": port_min, "port_range_max": port_max,
            "remote_ip_prefix": cidr, "remote_group": group}


EGRESS = [
    {"description": "all egress (IPv4)", "direction": "egress", "ether_type": "IPv4",
     "protocol": None, "port_range_min": None, "port_range_max": None,
     "remote_ip_prefix": None, "remote_group": None},
    {"description": "all egress (IPv6)", "direction": "egress", "ether_type": "IPv6",
     "protocol": None, "port_range_min": None, "port_range_max": None,
     "remote_ip_prefix": None, "remote_group": None},
]


def security_groups(spec):
    """Security groups per node role, each with its complete rule set (ingress + egress)."""
    n = spec["name"]
    node, cp, etcd, worker = ("%s-node" % n, "%s-control-plane" % n, "%s-etcd" % n,
                              "%s-worker" % n)
    external_etcd = spec["nodes"]["etcd"]["count"] > 0
    rules = {node: [], cp: [], worker: [], etcd: []}
    for cidr in spec["ssh_allowed_cidrs"]:
        rules[node].append(_rule("tcp", 22, 22, "SSH", cidr=cidr))
    rules[node].append(_rule("tcp", 10250, 10250, "kubelet API", group=node))
    rules[node].append(_rule("icmp", None, None, "ICMP between nodes", group=node))
    for proto, port in CNI_PORTS[(spec["cni"]["name"], spec["cni"]["mode"])]:
        rules[node].append(_rule(proto, port, port, "CNI %s %s" % (
            spec["cni"]["name"], spec["cni"]["mode"]), group=node))
    for cidr in spec["api_allowed_cidrs"]:
        rules[cp].append(_rule("tcp", 6443, 6443, "Kubernetes API", cidr=cidr))
    rules[cp].append(_rule("tcp", 6443, 6443, "Kubernetes API from nodes", group=node))
    if spec["load_balancer"]["enabled"]:
        rules[cp].append(_rule("tcp", 6443, 6443, "Kubernetes API from the load balancer",
                               cidr=spec["network"]["cidr"]))
    if external_etcd:
        rules[etcd].append(_rule("tcp", 2379, 2379, "etcd clients (control plane)", group=cp))
        rules[etcd].append(_rule("tcp", 2379, 2380, "etcd peers", group=etcd))
    else:
        rules[cp].append(_rule("tcp", 2379, 2380, "etcd between control planes", group=cp))
    for cidr in spec["nodeport_allowed_cidrs"]:
        rules[worker].append(_rule("tcp", 30000, 32767, "NodePorts (TCP)", cidr=cidr))
        rules[worker].append(_rule("udp", 30000, 32767, "NodePorts (UDP)", cidr=cidr))
    groups = [
        {"name": node, "description": "%s: every node (SSH, kubelet, CNI overlay)" % n},
        {"name": cp, "description": "%s: control plane (Kubernetes API)" % n},
        {"name": worker, "description": "%s: workers (NodePorts)" % n},
    ]
    if external_etcd:
        groups.append({"name": etcd, "description": "%s: external etcd members" % n})
    for g in groups:
        g["rules"] = rules[g["name"]] + [dict(r) for r in EGRESS]
    return groups


def build_plan(spec):
    """Every resource to create, in creation order, from a normalised spec."""
    n = spec["name"]
    cidr = ipaddress.ip_network(spec["network"]["cidr"])
    groups = security_groups(spec)
    role_groups = {
        "control_plane": ["%s-node" % n, "%s-control-plane" % n],
        "etcd": ["%s-node" % n, "%s-etcd" % n],
        "workers": ["%s-node" % n, "%s-worker" % n],
    }
    server_groups = []
    servers = []
    user_data = render_user_data(spec["user_data"])
    for role in ROLES:
        node = spec["nodes"][role]
        if not node["count"]:
            continue
        sg_name = None
        if role in ("control_plane", "etcd"):
            sg_name = "%s-%s" % (n, role.replace("_", "-"))
            server_groups.append({"name": sg_name, "policy": "anti-affinity"})
        short = {"control_plane": "cp", "etcd": "etcd", "workers": "worker"}[role]
        for i in range(node["count"]):
            host = "%s-%s-%d" % (n, short, i + 1)
            servers.append({
                "name": host, "role": role, "flavor": node["flavor"],
                "port": "%s-port" % host,
                "fixed_ip": str(cidr.network_address + ROLE_OFFSETS[role] + i),
                "security_groups": role_groups[role], "server_group": sg_name,
                "boot_volume_size": node["boot_volume_size"],
                "volume_type": node["volume_type"],
                "floating_ip": bool(node["floating_ip"]),
            })
    lb = None
    if spec["load_balancer"]["enabled"]:
        lb = {"name": "%s-api" % n, "listener": "%s-api-6443" % n, "pool": "%s-api-pool" % n,
              "monitor": "%s-api-monitor" % n, "protocol": "TCP", "port": 6443,
              "provider": spec["load_balancer"]["provider"],
              "members": [{"name": s["name"], "address": s["fixed_ip"]}
                          for s in servers if s["role"] == "control_plane"]}
    return {
        "name": n,
        "image": spec["image"],
        "keypair": {"name": spec["keypair"]["name"], "public_key": spec["keypair"]["public_key"]},
        "network": {"name": "%s-net" % n, "subnet": "%s-subnet" % n, "router": "%s-router" % n,
                    "cidr": str(cidr), "gateway_ip": str(cidr.network_address + 1),
                    "dns_nameservers": list(spec["network"]["dns_nameservers"]),
                    "external_network": spec["external_network"]},
        "security_groups": groups,
        "server_groups": server_groups,
        "servers": servers,
        "load_balancer": lb,
        "user_data": user_data,
    }


def plan_resources(plan):
    """(kind, name) of every resource the plan owns, in creation order."""
    out = []
    if not plan["image"]["existing"]:
        out.append(("image", plan["image"]["name"]))
    out.append(("keypair", plan["keypair"]["name"]))
    net = plan["network"]
    out += [("network", net["name"]), ("subnet", net["subnet"]), ("router", net["router"])]
    out += [("security_group", g["name"]) for g in plan["security_groups"]]
    out += [("server_group", g["name"]) for g in plan["server_groups"]]
    out += [("port", s["port"]) for s in plan["servers"]]
    out += [("server", s["name"]) for s in plan["servers"]]
    out += [("floating_ip", s["name"]) for s in plan["servers"] if s["floating_ip"]]
    if plan["load_balancer"]:
        out.append(("load_balancer", plan["load_balancer"]["name"]))
    return out


def resource_changes(plan, existing, state):
    """What applying `state` would do: {'create': [...], 'delete': [...], 'keep': [...]}.

    ``existing`` is a set of (kind, name) found in the cloud. Deletion runs in reverse
    creation order.
    """
    wanted = plan_resources(plan)
    if state == "absent":
        delete = [r for r in reversed(wanted) if r in existing]
        return {"create": [], "delete": ["%s/%s" % r for r in delete], "keep": []}
    return {"create": ["%s/%s" % r for r in wanted if r not in existing],
            "delete": [],
            "keep": ["%s/%s" % r for r in wanted if r in existing]}


def build_inventory(plan, servers, endpoint=None):
    """Inventory (as a dict for YAML) of the created servers.

    ``servers`` maps server name to {'fixed_ip', 'floating_ip', 'id', 'host'} read back
    from the cloud. Groups: control_plane, etcd (the control plane when etcd is stacked),
    workers. ``endpoint`` is the load balancer VIP; otherwise the first control-plane
    node's reachable address.
    """
    groups = {"control_plane": {}, "etcd": {}, "workers": {}}
    missing = [s["name"] for s in plan["servers"] if s["name"] not in servers]
    if missing:
        raise OpenStackInfraError("servers not found in the cloud: %s" % ", ".join(missing))
    for s in plan["servers"]:
        got = servers[s["name"]]
        groups[s["role"]][s["name"]] = {
            "ansible_host": got.get("floating_ip") or got["fixed_ip"],
            "mooring_internal_ip": got["fixed_ip"],
            "openstack_server_id": got["id"],
        }
    if not groups["etcd"]:
        groups["etcd"] = {h: {} for h in groups["control_plane"]}
    if endpoint is None:
        first = next(iter(groups["control_plane"].values()))
        endpoint = first["ansible_host"]
    return {"all": {
        "vars": {"mooring_control_plane_endpoint": "%s:6443" % endpoint,
                 "mooring_openstack_cluster": plan["name"]},
        "children": {g: {"hosts": hosts} for g, hosts in groups.items()},
    }}
