# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the highly available API endpoint (a keepalived virtual IP), decided once.

With ``kubernetes.haEndpoint: {mode: vip}`` the ``controlPlaneEndpoint`` (``IP:PORT``) names a
virtual IP that one control-plane host holds at a time; keepalived (VRRP, unicast so it also works
where multicast does not, e.g. clouds) moves it when that host or its kube-apiserver fails.

:func:`plan` takes the VIP, the port, the VRRP router id, an optional interface name, per
control-plane host (inventory order) its interfaces with addresses and prefix lengths (read on the
hosts: :func:`interfaces_from_ip_json` reads ``ip -j addr``), and every inventory host's addresses.
What the spec says about the endpoint (``controlPlaneEndpoint``, ``haEndpoint``) is checked in ``spec/network.py``.
It returns per control-plane host the interface on the VIP's subnet, its source address, its VRRP
priority (inventory order: the first host is preferred) and its unicast peers - or raises
:class:`EndpointError` listing one line per problem (naming host and address), so a playbook fails
before anything changes on any host. Plain data in, plain data out.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import EndpointError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.network import DEFAULT_ROUTER_ID

# Priorities: the first control-plane host TOP_PRIORITY, each next one a step lower. A failing local
# API server check lowers a host's priority by CHECK_WEIGHT, more than the spread of the priorities,
# so a host whose API server fails never holds the VIP while another host's answers; when none answers
# (before kubeadm init) the order is kept and the VIP is still held.
TOP_PRIORITY = 200
PRIORITY_STEP = 1
CHECK_WEIGHT = 50
MAX_HOSTS = CHECK_WEIGHT - 1


def interfaces_from_ip_json(data):
    """``ip -j addr`` output (a list of links) -> ``[{"name", "addresses": ["ADDR/PREFIX", ...]}]``.

    Loopback and link-local addresses are left out: a VIP is never on them."""
    interfaces = []
    for link in data or []:
        if not isinstance(link, dict) or not link.get("ifname"):
            continue
        addresses = []
        for info in link.get("addr_info") or []:
            if info.get("family") not in ("inet", "inet6") or info.get("scope") in ("host", "link"):
                continue
            addresses.append("%s/%s" % (info.get("local"), info.get("prefixlen")))
        interfaces.append({"name": link["ifname"], "addresses": addresses})
    return interfaces


def _interface_networks(host, interfaces):
    """``[(interface name, ip_interface)]`` of a host, checked."""
    out = []
    for iface in interfaces or []:
        name = iface.get("name") if isinstance(iface, dict) else None
        if not name:
            raise EndpointError("control_plane.%s: an interface without a name" % host)
        for text in iface.get("addresses") or []:
            try:
                net = ipaddress.ip_interface(str(text))
            except ValueError:
                raise EndpointError("control_plane.%s: interface %s: %r is not ADDRESS/PREFIX" % (host, name, text)) from None
            if not (net.ip.is_loopback or net.ip.is_link_local):  # never where a VIP goes
                out.append((name, net))
    return out


def _addresses(values):
    out = []
    for value in values or []:
        try:
            out.append(ipaddress.ip_address(str(value).split("/", 1)[0]))
        except ValueError:
            continue  # a DNS name: not an address the VIP can collide with
    return out


def _checked_inputs(vip, port, hosts, inventory_addresses, router_id):
    """The VIP as an ``ipaddress`` address, once the scalar inputs and the inventory are checked."""
    try:
        vip = ipaddress.ip_address(str(vip))
    except ValueError:
        raise EndpointError("vip: %r is not an IP address" % (vip,)) from None
    if not isinstance(router_id, int) or isinstance(router_id, bool) or not 1 <= router_id <= 255:
        raise EndpointError("router_id: %r is not an integer 1-255" % (router_id,))
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise EndpointError("port: %r is not a port 1-65535" % (port,))
    if not hosts:
        raise EndpointError("control_plane: no host; the VIP is held by the control-plane hosts")
    if len(hosts) > MAX_HOSTS:
        raise EndpointError("control_plane: %d hosts; at most %d share one VIP" % (len(hosts), MAX_HOSTS))
    problems = []
    for name, values in sorted((inventory_addresses or {}).items()):
        if vip in _addresses(values):
            problems.append("vip %s: it is the address of inventory host %s; choose an unused address" % (vip, name))
    if problems:  # the cause; what follows from it (that host "has no other address there") would only confuse
        raise EndpointError("the HA endpoint cannot be planned", problems)
    return vip


def _choose(vip, hosts, interface, problems):
    """``(chosen, held_by)``: per host its interface on the VIP's subnet (None when it has none), and the hosts
    holding the VIP now. A missing ``interface`` is added to ``problems``."""
    chosen = {}
    held_by = []
    for index, entry in enumerate(hosts):
        name = entry.get("name")
        nets = _interface_networks(name, entry.get("interfaces"))
        # The VIP on a control-plane host's interface is the VIP keepalived holds there (a re-run): not one of
        # the host's own addresses (those are the inventory's, checked above).
        held_by.extend(name for _iface, net in nets if net.ip == vip)
        nets = [(iface, net) for iface, net in nets if net.ip != vip]
        if interface and interface not in [i.get("name") for i in entry.get("interfaces") or []]:
            problems.append("host %s: interface %s (haEndpoint.interface) is missing; it has %s"
                            % (name, interface, ", ".join(sorted({i.get("name") for i in entry.get("interfaces") or []}))
                               or "none"))
            continue
        on_subnet = [(iface, net) for iface, net in nets
                     if net.version == vip.version and vip in net.network
                     and (not interface or iface == interface)]
        if not on_subnet:
            chosen[name] = None
            continue
        iface, net = on_subnet[0]
        chosen[name] = {"interface": iface, "address": str(net.ip), "network": str(net.network),
                        "priority": TOP_PRIORITY - PRIORITY_STEP * index}
    return chosen, held_by


def _subnet_problems(vip, hosts, interface, chosen):
    """One line per control-plane host without an interface on the VIP's subnet (one line when none has)."""
    if not any(chosen.values()):
        subnets = []
        for entry in hosts:
            nets = dict.fromkeys(str(n.network) for _i, n in _interface_networks(entry.get("name"), entry.get("interfaces")))
            subnets.append("%s: %s" % (entry.get("name"), ", ".join(nets) or "none"))
        return ["vip %s: outside every control-plane host's subnets (%s); choose an address on the subnet "
                "the control-plane hosts share" % (vip, "; ".join(subnets))]
    return ["host %s: no interface on the VIP %s's subnet%s; every control-plane host must have one"
            % (entry.get("name"), vip, " on %s" % interface if interface else "")
            for entry in hosts if entry.get("name") in chosen and chosen[entry.get("name")] is None]


def plan(vip, port, control_plane, inventory_addresses=None, router_id=DEFAULT_ROUTER_ID, interface=None):
    """The keepalived plan for a VIP.

    ``control_plane``: ``[{"name": host, "interfaces": [{"name": IFACE, "addresses": ["ADDR/PREFIX"]}]}]``
    in inventory order. ``inventory_addresses``: ``{host: [address, ...]}`` for every inventory host.
    Returns ``{"vip", "prefix", "port", "family", "router_id", "check_weight", "hosts": {host: {...}}, "held_by"}``
    (``held_by``: the hosts that have the VIP on an interface now - keepalived's holder on a re-run).
    An interface address equal to the VIP is taken as the VIP held there, not as the host's own address:
    a VIP equal to a host's address is found through ``inventory_addresses``."""
    hosts = list(control_plane or [])
    vip = _checked_inputs(vip, port, hosts, inventory_addresses, router_id)
    problems = []
    chosen, held_by = _choose(vip, hosts, interface, problems)
    if not problems or any(chosen.values()):
        problems.extend(_subnet_problems(vip, hosts, interface, chosen))
    if problems:
        raise EndpointError("the HA endpoint cannot be planned", problems)

    prefix = next(ipaddress.ip_interface("%s/%s" % (vip, c["network"].split("/")[1])).network.prefixlen
                  for c in chosen.values())
    result = {}
    for entry in hosts:
        name = entry.get("name")
        mine = chosen[name]
        peers = [chosen[other.get("name")]["address"] for other in hosts if other.get("name") != name]
        result[name] = dict(mine, peers=peers)
    return {"vip": str(vip), "prefix": prefix, "port": port, "family": vip.version, "router_id": router_id,
            "check_weight": CHECK_WEIGHT, "hosts": result, "held_by": sorted(set(held_by))}
