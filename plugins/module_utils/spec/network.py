# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the spec's network settings - the API endpoint, the pod and service networks.

What ``spec.kubernetes`` may say about the network, checked before anything is resolved: the
``controlPlaneEndpoint`` (``HOST[:PORT]``, or ``IP:PORT`` with ``haEndpoint``, see :func:`ip_endpoint`),
the ``podCIDR`` and ``serviceCIDR`` (:func:`network_problems`), and the ``haEndpoint`` modes with the host
packages each needs (:func:`control_plane_packages`). The keepalived plan itself is
``cluster/endpoint.py``'s. Plain data in, plain data out; standard library only.
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, reason
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import EndpointError

MODES = ("vip",)
DEFAULT_ROUTER_ID = 51
# The host packages a mode needs, per distro: in the bundle's apt repository (the kubernetes add-on's
# package), installed by the ha_endpoint role on the control-plane hosts only.
PACKAGES = {"vip": {"debian": ["keepalived"]}}
ENDPOINT = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?)(:([1-9][0-9]{0,4}))?$")
CIDR_FIELDS = ("podCIDR", "serviceCIDR")


def control_plane_packages(kubernetes_options):
    """``{distro: [package]}`` the lock's kubernetes options need on the control-plane hosts (``{}`` without haEndpoint)."""
    mode = ((kubernetes_options or {}).get("haEndpoint") or {}).get("mode")
    return {distro: list(names) for distro, names in PACKAGES.get(mode, {}).items()}


def host_problem(host):
    """Why ``host`` (the host part of an API endpoint: a DNS name, an IPv4 address or a bracketed IPv6 address)
    cannot be one, or None. Dotted digits must be an IPv4 address, brackets hold an IPv6 address; the unspecified
    and multicast addresses are no endpoint a client can reach."""
    bracketed = host.startswith("[") and host.endswith("]")
    try:
        address = ipaddress.ip_address(host[1:-1] if bracketed else host)
        if bracketed != (address.version == 6):
            raise ValueError(host)
    except ValueError:
        if bracketed:
            return "%r is not a bracketed IPv6 address" % host
        if host.replace(".", "").isdigit() or ":" in host:
            return "%r is not an IPv4 address (an IPv6 address goes in brackets)" % host
        return None  # a DNS name: its syntax is checked where it is read
    if address.is_unspecified or address.is_multicast:
        return "%s is the %s address, not one a client can reach" % (
            address, "unspecified" if address.is_unspecified else "multicast")
    return None


def service_network_problem(network):
    """Why the service network (an ``ipaddress`` network) cannot hold the cluster's services, or None: the API
    server takes its first address and the cluster DNS its tenth."""
    if network.num_addresses < 16:
        return ("holds %d address(es); the API server takes the first and the cluster DNS the tenth, so at least 16 "
                "(IPv4 /28, IPv6 /124)" % network.num_addresses)
    return None


def ip_endpoint(text, field="controlPlaneEndpoint"):
    """``IP:PORT`` (IPv4) or ``[IPv6]:PORT`` -> ``(ip_address, port)``; raises :class:`EndpointError`."""
    value = str(text or "")
    host, sep, port = value.rpartition(":")
    if value.startswith("["):
        if not host.endswith("]"):
            sep = ""
        host = host[1:-1]
    elif ":" in host:
        sep = ""  # an IPv6 address must be bracketed
    try:
        if not sep or not port.isdigit():
            raise ValueError("not IP:PORT")
        address = ipaddress.ip_address(host)
        if value.startswith("[") != (address.version == 6):
            raise ValueError("brackets only around an IPv6 address")
        number = int(port)
        if not 1 <= number <= 65535:
            raise ValueError("port out of range")
    except ValueError:
        raise EndpointError("%s: %r is not IP:PORT (IPv4) or [IPv6]:PORT; with haEndpoint mode vip its IP is "
                            "the virtual IP" % (field, value)) from None
    return address, number


def cidr_problems(kube):
    """One line per problem of ``spec.kubernetes``'s ``podCIDR`` and ``serviceCIDR`` (defaults filled in)."""
    problems, networks = [], {}
    for field in CIDR_FIELDS:
        value = kube.get(field)
        if value is None or not isinstance(value, str):
            continue
        try:
            if "/" not in value:
                raise ValueError("no prefix length, e.g. /16")
            networks[field] = ipaddress.ip_network(value, strict=True)
        except ValueError as exc:
            problems.append("spec.kubernetes.%s: %s is not a network in CIDR notation (%s)" % (field, excerpt(value), reason(exc)))
    if len(networks) == 2 and networks["podCIDR"].version != networks["serviceCIDR"].version:
        problems.append("spec.kubernetes.serviceCIDR: IPv%d, but podCIDR is IPv%d; pod and service networks must be of "
                        "the same family (dual-stack is not supported)"
                        % (networks["serviceCIDR"].version, networks["podCIDR"].version))
    elif len(networks) == 2 and networks["podCIDR"].overlaps(networks["serviceCIDR"]):
        problems.append("spec.kubernetes.serviceCIDR: '%s' overlaps podCIDR '%s'; choose disjoint ranges"
                        % (kube["serviceCIDR"], kube["podCIDR"]))
    why = service_network_problem(networks["serviceCIDR"]) if "serviceCIDR" in networks else None
    if why:
        problems.append("spec.kubernetes.serviceCIDR: '%s' %s" % (kube["serviceCIDR"], why))
    return problems


def endpoint_problems(kube):
    """One line per problem of ``spec.kubernetes``'s ``controlPlaneEndpoint`` and ``haEndpoint``."""
    problems = []
    endpoint = kube.get("controlPlaneEndpoint")
    matched = ENDPOINT.match(endpoint) if isinstance(endpoint, str) else None
    if isinstance(endpoint, str) and not matched and not isinstance(kube.get("haEndpoint"), dict):
        problems.append("spec.kubernetes.controlPlaneEndpoint: %s is not HOST[:PORT] (a DNS name or an IPv4 address) "
                        "or [IPv6][:PORT]" % excerpt(endpoint))
    elif matched:
        why = host_problem(matched.group(1))
        if matched.group(4) and not 1 <= int(matched.group(4)) <= 65535:
            why = "port %s is not 1-65535" % matched.group(4)
        if why:
            problems.append("spec.kubernetes.controlPlaneEndpoint: %s: %s" % (excerpt(endpoint), why))
    if isinstance(kube.get("haEndpoint"), dict):
        if "controlPlaneEndpoint" not in kube:
            problems.append("spec.kubernetes.haEndpoint: mode vip needs spec.kubernetes.controlPlaneEndpoint "
                            "(VIP:PORT, e.g. 10.0.0.100:6443 or [fd00::100]:6443): its IP is the virtual IP")
        else:
            try:
                ip_endpoint(kube["controlPlaneEndpoint"], "spec.kubernetes.controlPlaneEndpoint")
            except EndpointError as exc:
                problems.append("%s (spec.kubernetes.haEndpoint is set)" % exc)
    return problems


def network_problems(kube):
    """One line per problem of the network settings of ``spec.kubernetes`` (defaults filled in)."""
    return cidr_problems(kube) + endpoint_problems(kube)
