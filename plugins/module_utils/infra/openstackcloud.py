# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: an OpenStack plan against a cloud, before anything is created.

:func:`check_cloud` validates the plan (:mod:`infra.openstack`) against the cloud (flavors,
image, external network, CIDR overlaps, quotas, services) and raises
:class:`infra.openstackspec.OpenStackInfraError` naming every bad resource;
:func:`verify_file_checksum` checks an image file before it is uploaded. The cloud is reached
through a small reader object (:class:`SdkCloud` wraps an openstacksdk connection), so the
decisions are unit-tested without a cloud.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.mooring.cluster.plugins.module_utils.infra.openstack import plan_resources
from ansible_collections.mooring.cluster.plugins.module_utils.infra.openstackspec import OpenStackInfraError


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
