# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the OpenStack infrastructure plan for a cluster.

Plain data in, plain data out, no AnsibleModule:

* :func:`normalize` checks the role's data model on its own (names, CIDRs, counts, CNI) and
  fills defaults;
* :func:`build_plan` turns it into every resource the ``openstack_infra`` role creates with
  ``openstack.cloud`` modules: network, subnet, router, security groups and their rules per
  node role, server groups (anti-affinity), ports with fixed IPs, servers, floating IPs and an
  optional load balancer;
* :func:`check_cloud` validates the plan against a cloud *before anything is created*
  (flavors, image, external network, CIDR overlaps, quotas, services) and raises
  :class:`OpenStackInfraError` naming every bad resource;
* :func:`resource_changes` compares the plan with what exists (the check-mode report);
* :func:`build_inventory` makes the Ansible inventory of the created servers.

The cloud is reached through a small reader object (:class:`SdkCloud` wraps an openstacksdk
connection), so the decisions are unit-tested without a cloud.
"""

from __future__ import annotations

import ipaddress
import os
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.common.yamlio import excerpt


class OpenStackInfraError(MooringError):
    """The OpenStack infrastructure request is invalid for this cloud; nothing was created."""


ROLES = ("control_plane", "etcd", "workers")
# First host offset of each role in the node subnet; each role has room for `ROLE_SLOTS`.
ROLE_OFFSETS = {"control_plane": 10, "etcd": 20, "workers": 30}
ROLE_SLOTS = {"control_plane": 9, "etcd": 9}
# CNI overlay traffic between nodes: (protocol, port) per CNI and mode.
CNI_PORTS = {
    ("calico", "vxlan"): [("udp", 4789)],
    ("calico", "bgp"): [("tcp", 179)],
    ("flannel", "vxlan"): [("udp", 8472)],
    ("cilium", "vxlan"): [("udp", 8472)],
    ("weave", "vxlan"): [("tcp", 6783), ("udp", 6783), ("udp", 6784)],
}
NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$")
USER_DATA_KEYS = ("users", "packages", "sysctls")
# User data is an allow-list: each value has the shape of what it is (a package name, a number, an SSH public
# key line, ...), on one line, so a key, certificate, token or extra cloud-config line has nowhere to go.
_ONE_LINE = r"[\x20-\x7e]"
_USER_DATA_VALUES = {
    "package": re.compile(r"^[a-z0-9][a-z0-9+.-]{0,99}(=[A-Za-z0-9.+~:-]{1,100})?$"),
    "sysctl name": re.compile(r"^[a-z0-9_]+([./][A-Za-z0-9_-]+){1,10}$"),
    "user name": re.compile(r"^[a-z_][a-z0-9_-]{0,31}$"),
    "path": re.compile(r"^(/[A-Za-z0-9._-]+){1,16}$"),
    "sudo rule": re.compile(r"^[A-Za-z0-9_=(),:!/ .-]{1,200}$"),
    "comment": re.compile(r"^[A-Za-z0-9 ,._'-]{0,100}$"),
    "SSH public key line": re.compile(r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com"
                                      r"|sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]{16,16384}={0,3}"
                                      r"( %s{1,200})?$" % _ONE_LINE),
}
_SYSCTL_VALUE = re.compile(r"^-?[0-9]{1,20}( -?[0-9]{1,20}){0,3}$")
# Per user, the cloud-config keys allowed and the shape of their values (never a password or hash).
_USER_KEYS = {"name": "user name", "groups": "user name", "primary_group": "user name", "shell": "path",
              "homedir": "path", "sudo": "sudo rule", "gecos": "comment", "ssh_authorized_keys": "SSH public key line",
              "lock_passwd": bool, "system": bool, "no_create_home": bool}


def _cidr(value, field, problems):
    try:
        return ipaddress.ip_network(str(value), strict=True)
    except ValueError as exc:
        problems.append("%s: %r is not a network CIDR (%s)" % (field, value, exc))
        return None


ALLOWED_KEYS = {
    "image": ("name", "existing", "file", "url", "checksum", "disk_format", "container_format"),
    "network": ("cidr", "dns_nameservers"),
    "cni": ("name", "mode"),
    "keypair": ("name", "public_key"),
    "load_balancer": ("enabled", "provider"),
    "nodes": ROLES,
    "node": ("count", "flavor", "boot_volume_size", "volume_type", "floating_ip"),
}


def _unknown_keys(spec, problems):
    for field, allowed in ALLOWED_KEYS.items():
        if field == "node":
            continue
        for key in sorted(spec.get(field) or {}):
            if key not in allowed:
                problems.append("%s.%s: unknown key; allowed: %s" % (field, key, ", ".join(allowed)))
    for role, node in sorted((spec.get("nodes") or {}).items()):
        for key in sorted(node or {}):
            if key not in ALLOWED_KEYS["node"]:
                problems.append("nodes.%s.%s: unknown key; allowed: %s"
                                % (role, key, ", ".join(ALLOWED_KEYS["node"])))


def normalize(spec, file_exists=os.path.isfile):
    """Check the data model on its own and return a normalised copy (defaults filled)."""
    problems = []
    spec = dict(spec)
    _unknown_keys(spec, problems)
    name = spec.get("name") or ""
    if not NAME_RE.match(name):
        problems.append("name: %r must match %s (it prefixes every resource)"
                        % (name, NAME_RE.pattern))
    net = dict(spec.get("network") or {})
    net.setdefault("cidr", "10.42.0.0/24")
    net.setdefault("dns_nameservers", [])
    cidr = _cidr(net["cidr"], "network.cidr", problems)
    for i, dns in enumerate(net["dns_nameservers"]):
        try:
            ipaddress.ip_address(dns)
        except ValueError:
            problems.append("network.dns_nameservers[%d]: %r is not an IP address" % (i, dns))
    spec["network"] = net
    for field in ("api_allowed_cidrs", "ssh_allowed_cidrs", "nodeport_allowed_cidrs"):
        spec[field] = list(spec.get(field) or [])
        for i, value in enumerate(spec[field]):
            _cidr(value, "%s[%d]" % (field, i), problems)
    cni = dict(spec.get("cni") or {})
    cni.setdefault("name", "calico")
    cni.setdefault("mode", "vxlan")
    if (cni["name"], cni["mode"]) not in CNI_PORTS:
        problems.append("cni: %s/%s is not supported; use one of %s" % (
            cni["name"], cni["mode"], ", ".join("%s/%s" % k for k in sorted(CNI_PORTS))))
    spec["cni"] = cni
    nodes = {}
    for role in ROLES:
        node = dict((spec.get("nodes") or {}).get(role) or {})
        node.setdefault("count", 0)
        node.setdefault("flavor", None)
        node.setdefault("boot_volume_size", 0)
        node.setdefault("volume_type", None)
        node.setdefault("floating_ip", False)
        if node["count"] < 0:
            problems.append("nodes.%s.count: %d must be 0 or more" % (role, node["count"]))
        if node["count"] and not node["flavor"]:
            problems.append("nodes.%s.flavor: required when count is %d" % (role, node["count"]))
        if role in ROLE_SLOTS and node["count"] > ROLE_SLOTS[role]:
            problems.append("nodes.%s.count: %d is more than the %d this layout allows"
                            % (role, node["count"], ROLE_SLOTS[role]))
        if role in ("control_plane", "etcd") and node["count"] and node["count"] % 2 == 0:
            problems.append("nodes.%s.count: %d must be odd (etcd quorum)" % (role, node["count"]))
        if node["boot_volume_size"] < 0:
            problems.append("nodes.%s.boot_volume_size: must be 0 (no volume) or GiB" % role)
        nodes[role] = node
    if nodes["control_plane"]["count"] < 1:
        problems.append("nodes.control_plane.count: at least 1 control-plane node is needed")
    spec["nodes"] = nodes
    if cidr is not None and not problems:
        last = ROLE_OFFSETS["workers"] + nodes["workers"]["count"]
        if last >= cidr.num_addresses - 1:
            problems.append("network.cidr: %s has %d addresses, too few for %d workers "
                            "(workers start at host offset %d)"
                            % (cidr, cidr.num_addresses, nodes["workers"]["count"],
                               ROLE_OFFSETS["workers"]))
    image = dict(spec.get("image") or {})
    image.setdefault("name", None)
    image.setdefault("existing", False)
    image.setdefault("file", None)
    image.setdefault("url", None)
    image.setdefault("checksum", None)
    image.setdefault("disk_format", "qcow2")
    image.setdefault("container_format", "bare")
    if not image["name"]:
        problems.append("image.name: required")
    if not image["existing"]:
        if bool(image["file"]) == bool(image["url"]):
            problems.append("image: give exactly one of image.file or image.url to upload, "
                            "or set image.existing: true to use an image already in Glance")
        if image["file"] and not file_exists(image["file"]):
            problems.append("image.file: %r does not exist on the controller" % image["file"])
        if not image["checksum"]:
            problems.append("image.checksum: required when uploading (sha256:<hex> or md5:<hex>)")
        elif not re.match(r"^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128}|md5:[0-9a-f]{32})$",
                          image["checksum"]):
            problems.append("image.checksum: %r must be sha256:<64 hex>, sha512:<128 hex> "
                            "or md5:<32 hex>" % image["checksum"])
    spec["image"] = image
    lb = dict(spec.get("load_balancer") or {})
    lb.setdefault("enabled", False)
    lb.setdefault("provider", None)
    spec["load_balancer"] = lb
    key = dict(spec.get("keypair") or {})
    if not key.get("name") or not key.get("public_key"):
        problems.append("keypair: name and public_key are required")
    elif "PRIVATE KEY" in key["public_key"]:
        problems.append("keypair.public_key: this is a private key; give the public key only")
    spec["keypair"] = key
    spec["user_data"] = _check_user_data(spec.get("user_data") or {}, problems)
    spec.setdefault("external_network", None)
    if not spec["external_network"]:
        problems.append("external_network: required (the network the router uplinks to)")
    if problems:
        raise OpenStackInfraError("invalid OpenStack infrastructure request", problems)
    return spec


def _value(value, kind, field, problems):
    """Whether ``value`` has the shape of a ``kind`` (one of _USER_DATA_VALUES, or bool); else a problem."""
    if kind is bool:
        ok = isinstance(value, bool)
        shape = "true or false"
    else:
        ok = isinstance(value, str) and bool(_USER_DATA_VALUES[kind].fullmatch(value))
        shape = "a %s" % kind
    if not ok:
        if kind == "SSH public key line":
            problems.append("%s: not an SSH public key line (TYPE BASE64 [COMMENT])" % field)
        else:
            problems.append("%s: %s is not %s" % (field, excerpt(value), shape))
    return ok


def _check_user_data(data, problems):
    """Only immutable host configuration may go to cloud-init - users, packages, sysctls - and each value only in
    the shape of what it is (an allow-list): certificates, keys, tokens and passwords go over SSH later."""
    data = dict(data)
    for key in sorted(data, key=str):
        if key not in USER_DATA_KEYS:
            problems.append("user_data.%s: not allowed; user data carries only %s (secrets, "
                            "certificates and tokens go over SSH later)"
                            % (key, ", ".join(USER_DATA_KEYS)))
    for key in ("users", "packages"):
        if data.get(key) is not None and not isinstance(data[key], list):
            problems.append("user_data.%s: a list, got %s" % (key, excerpt(data[key])))
            data[key] = []
    for i, name in enumerate(data.get("packages") or []):
        _value(name, "package", "user_data.packages[%d]" % i, problems)
    for i, user in enumerate(data.get("users") or []):
        where = "user_data.users[%d]" % i
        if not isinstance(user, dict) or "name" not in user:
            problems.append("%s: a mapping with at least name (and %s)" % (where, ", ".join(sorted(_USER_KEYS))))
            continue
        for key in sorted(user, key=str):
            kind = _USER_KEYS.get(key)
            if kind is None:
                problems.append("%s.%s: not allowed; a user takes only %s (no password: keys over SSH)"
                                % (where, key, ", ".join(sorted(_USER_KEYS))))
            elif isinstance(user[key], list) and key in ("groups", "ssh_authorized_keys"):
                for j, item in enumerate(user[key]):
                    _value(item, kind, "%s.%s[%d]" % (where, key, j), problems)
            else:
                _value(user[key], kind, "%s.%s" % (where, key), problems)
    sysctls = data.get("sysctls")
    if sysctls is not None and not isinstance(sysctls, dict):
        problems.append("user_data.sysctls: a mapping of name to number, got %s" % excerpt(sysctls))
        sysctls = data["sysctls"] = {}
    for name, value in sorted((sysctls or {}).items(), key=lambda kv: str(kv[0])):
        if not isinstance(name, str) or not _USER_DATA_VALUES["sysctl name"].fullmatch(name):
            problems.append("user_data.sysctls: %s is not a sysctl name" % excerpt(name))
        elif isinstance(value, bool) or not _SYSCTL_VALUE.fullmatch(str(value)):
            problems.append("user_data.sysctls.%s: %s is not a number (or up to 4, space-separated); other values "
                            "go to the hosts over SSH" % (name, excerpt(value)))
    return {k: data.get(k) or ([] if k != "sysctls" else {}) for k in USER_DATA_KEYS}


def render_user_data(user_data):
    """cloud-config text (YAML is JSON's superset; JSON keeps this free of YAML emitters)."""
    import json
    doc = {}
    if user_data.get("users"):
        doc["users"] = ["default"] + list(user_data["users"])
    if user_data.get("packages"):
        doc["packages"] = list(user_data["packages"])
    if user_data.get("sysctls"):
        lines = "".join("%s = %s\n" % (k, user_data["sysctls"][k])
                        for k in sorted(user_data["sysctls"]))
        doc["write_files"] = [{"path": "/etc/sysctl.d/60-mooring.conf",
                               "permissions": "0644", "content": lines}]
        doc["runcmd"] = [["sysctl", "--system"]]
    return "#cloud-config\n" + json.dumps(doc, indent=2, sort_keys=True) + "\n"


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


# ---------------------------------------------------------------------- against a cloud
def check_cloud(plan, cloud, existing_servers=()):
    """Validate the plan against the cloud; raise naming every problem. Reads only."""
    problems = []
    flavors = {}
    for server in plan["servers"]:
        name = server["flavor"]
        if name not in flavors:
            flavors[name] = cloud.flavor(name)
            if flavors[name] is None:
                problems.append("nodes.%s.flavor: flavor %r not found in this cloud "
                                "(available: %s)" % (server["role"], name,
                                                     ", ".join(sorted(cloud.flavor_names()))))
    image = plan["image"]
    if image["existing"] and cloud.image(image["name"]) is None:
        problems.append("image.name: image %r not found in this cloud (set image.file or "
                        "image.url to upload it)" % image["name"])
    ext = cloud.network(plan["network"]["external_network"])
    if ext is None:
        problems.append("external_network: network %r not found in this cloud"
                        % plan["network"]["external_network"])
    elif not ext.get("is_router_external"):
        problems.append("external_network: network %r is not an external network"
                        % plan["network"]["external_network"])
    ours = ipaddress.ip_network(plan["network"]["cidr"])
    for subnet in cloud.subnets():
        if subnet["name"] == plan["network"]["subnet"] and subnet["cidr"] == str(ours):
            continue
        try:
            theirs = ipaddress.ip_network(subnet["cidr"])
        except ValueError:
            continue
        if theirs.version == ours.version and theirs.overlaps(ours):
            problems.append("network.cidr: %s overlaps subnet %r (%s) in this cloud; choose "
                            "another CIDR" % (ours, subnet["name"] or subnet["id"], theirs))
    if any(s["boot_volume_size"] for s in plan["servers"]) and not cloud.has_service("block-storage"):
        problems.append("nodes.*.boot_volume_size: boot volumes need Cinder, which this cloud "
                        "does not offer")
    if plan["load_balancer"] and not cloud.has_service("load-balancer"):
        problems.append("load_balancer.enabled: this cloud has no Octavia (load-balancer) "
                        "service")
    if not problems:
        problems.extend(_check_quota(plan, cloud, flavors, set(existing_servers)))
    if problems:
        raise OpenStackInfraError("the cloud cannot take this request; nothing was created",
                                  problems)


def _check_quota(plan, cloud, flavors, existing):
    new = [s for s in plan["servers"] if s["name"] not in existing]
    need = {"instances": len(new),
            "cores": sum(flavors[s["flavor"]]["vcpus"] for s in new),
            "ram": sum(flavors[s["flavor"]]["ram"] for s in new)}
    problems = []
    quota = cloud.compute_quota()
    for key in ("instances", "cores", "ram"):
        limit, used = quota.get(key, (-1, 0))
        if limit >= 0 and used + need[key] > limit:
            problems.append("quota: %s would reach %d (in use %d + needed %d) but the project "
                            "limit is %d; raise the quota or ask for fewer/smaller servers"
                            % (key, used + need[key], used, need[key], limit))
    fips = sum(1 for s in new if s["floating_ip"])
    limit, used = cloud.network_quota().get("floatingip", (-1, 0))
    if fips and limit >= 0 and used + fips > limit:
        problems.append("quota: floating IPs would reach %d (in use %d + needed %d) but the "
                        "project limit is %d" % (used + fips, used, fips, limit))
    return problems


def verify_file_checksum(path, checksum):
    """Raise unless the file's digest matches ``algo:hex`` (checked before uploading)."""
    import hashlib
    algo, want = checksum.split(":", 1)
    h = hashlib.new(algo)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    if h.hexdigest() != want:
        raise OpenStackInfraError("image.checksum: %s has %s:%s, not %s; nothing was created"
                                  % (path, algo, h.hexdigest(), checksum))


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


class SdkCloud:
    """Read-only view of a cloud through an openstacksdk connection (for check_cloud)."""

    def __init__(self, conn):
        self.conn = conn

    def flavor(self, name):
        f = self.conn.compute.find_flavor(name, ignore_missing=True)
        return None if f is None else {"name": f.name, "vcpus": f.vcpus, "ram": f.ram}

    def flavor_names(self):
        return [f.name for f in self.conn.compute.flavors()]

    def image(self, name):
        return self.conn.image.find_image(name, ignore_missing=True)

    def network(self, name):
        n = self.conn.network.find_network(name, ignore_missing=True)
        return None if n is None else {"id": n.id, "is_router_external": n.is_router_external}

    def subnets(self):
        return [{"id": s.id, "name": s.name, "cidr": s.cidr} for s in self.conn.network.subnets()]

    def has_service(self, service_type):
        try:
            return bool(self.conn.endpoint_for(service_type))
        except Exception:  # noqa: BLE001 - keystoneauth raises several kinds for "no endpoint"
            return False

    def compute_quota(self):
        project = self.conn.current_project_id
        q = self.conn.compute.get_quota_set(project, usage=True)
        usage = q.usage or {}
        return {k: (getattr(q, k), usage.get(k, 0)) for k in ("instances", "cores", "ram")}

    def network_quota(self):
        project = self.conn.current_project_id
        q = self.conn.network.get_quota(project, details=True)
        fip = q.floating_ips if isinstance(q.floating_ips, dict) else {}
        return {"floatingip": (fip.get("limit", -1), fip.get("used", 0))}

    def existing(self, plan):
        """(kind, name) of the plan's resources that exist now."""
        c = self.conn
        found = set()
        finders = {
            "image": lambda n: c.image.find_image(n, ignore_missing=True),
            "keypair": lambda n: c.compute.find_keypair(n, ignore_missing=True),
            "network": lambda n: c.network.find_network(n, ignore_missing=True),
            "subnet": lambda n: c.network.find_subnet(n, ignore_missing=True),
            "router": lambda n: c.network.find_router(n, ignore_missing=True),
            "security_group": lambda n: c.network.find_security_group(n, ignore_missing=True),
            "server_group": lambda n: c.compute.find_server_group(n, ignore_missing=True),
            "port": lambda n: c.network.find_port(n, ignore_missing=True),
            "server": lambda n: c.compute.find_server(n, ignore_missing=True),
            "load_balancer": lambda n: c.load_balancer.find_load_balancer(n, ignore_missing=True),
        }
        fips_by_port = None
        for kind, name in plan_resources(plan):
            if kind == "floating_ip":
                if fips_by_port is None:
                    fips_by_port = {f.port_id for f in c.network.ips() if f.port_id}
                port = c.network.find_port("%s-port" % name, ignore_missing=True)
                if port is not None and port.id in fips_by_port:
                    found.add((kind, name))
            elif finders[kind](name) is not None:
                found.add((kind, name))
        return found

    def server_addresses(self, plan):
        """name -> {'id', 'fixed_ip', 'floating_ip'} for the plan's servers that exist."""
        out = {}
        for s in plan["servers"]:
            server = self.conn.compute.find_server(s["name"], ignore_missing=True)
            if server is None:
                continue
            fixed = floating = None
            for addrs in (server.addresses or {}).values():
                for a in addrs:
                    if a.get("OS-EXT-IPS:type") == "floating":
                        floating = floating or a["addr"]
                    else:
                        fixed = fixed or a["addr"]
            if floating is None:
                port = self.conn.network.find_port(s["port"], ignore_missing=True)
                if port is not None:
                    for f in self.conn.network.ips(port_id=port.id):
                        floating = f.floating_ip_address
            out[s["name"]] = {"id": server.id, "fixed_ip": fixed or s["fixed_ip"],
                              "floating_ip": floating}
        return out
