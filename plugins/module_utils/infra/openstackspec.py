# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the OpenStack infrastructure request (the ``openstack_infra`` role's data model).

:func:`normalize` checks the request on its own (names, CIDRs, counts, CNI, image, key pair,
user data) and fills defaults; every problem is listed in one :class:`OpenStackInfraError`.
The plan made from it is in :mod:`infra.openstack`, the checks against a cloud in
:mod:`infra.openstackcloud`, the user data in :mod:`infra.openstackuserdata`.
"""

from __future__ import annotations

import ipaddress
import os
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.infra.openstackuserdata import check_user_data


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
    cidr = _network(spec, problems)
    cni = dict(spec.get("cni") or {})
    cni.setdefault("name", "calico")
    cni.setdefault("mode", "vxlan")
    if (cni["name"], cni["mode"]) not in CNI_PORTS:
        problems.append("cni: %s/%s is not supported; use one of %s" % (
            cni["name"], cni["mode"], ", ".join("%s/%s" % k for k in sorted(CNI_PORTS))))
    spec["cni"] = cni
    spec["nodes"] = nodes = _nodes(spec, problems)
    if cidr is not None and not problems:
        last = ROLE_OFFSETS["workers"] + nodes["workers"]["count"]
        if last >= cidr.num_addresses - 1:
            problems.append("network.cidr: %s has %d addresses, too few for %d workers "
                            "(workers start at host offset %d)"
                            % (cidr, cidr.num_addresses, nodes["workers"]["count"],
                               ROLE_OFFSETS["workers"]))
    spec["image"] = _image(spec, file_exists, problems)
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
    spec["user_data"] = check_user_data(spec.get("user_data") or {}, problems)
    spec.setdefault("external_network", None)
    if not spec["external_network"]:
        problems.append("external_network: required (the network the router uplinks to)")
    if problems:
        raise OpenStackInfraError("invalid OpenStack infrastructure request", problems)
    return spec


def _network(spec, problems):
    """Fill ``spec``'s network and allowed CIDRs (defaults); the node network, or None when invalid."""
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
    return cidr


def _nodes(spec, problems):
    """Every role's node settings, defaults filled and counts checked."""
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
    return nodes


def _image(spec, file_exists, problems):
    """The image settings, defaults filled: an existing image, or one file or URL to upload with its checksum."""
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
    return image
