# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the route guard - refuse to connect where the kernel would
send the packets somewhere they must not go.

An option for any operator who wants the controller's own connections (the etcd client of the lease,
``/readyz``, bundle downloads, preflight probes, image copies, the cloud API) to leave only through known
interfaces, directly: set the environment variable ``MOORING_ROUTE_GUARD`` to a comma-separated list of
interface-name patterns (``fnmatch``), e.g. ``eth1,bond0*`` (docs/proxy.md). Unset (the default), the
guard is off. With it set, :func:`check` allows a destination only when every address it resolves to is on
loopback, or the kernel's route to it (``ip -j route get``, which sends nothing) leaves through one of those
interfaces *directly* (no gateway). Anything else raises :class:`RouteRefused` naming the address and the
route the kernel chose, before a single packet is sent.

Standard library and ``common/errors.py`` only.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import json
import os
import socket
import subprocess

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

ENV = "MOORING_ROUTE_GUARD"


class RouteRefused(MooringError, OSError):
    """The kernel would route a test connection off this machine; nothing was sent."""

    def __init__(self, message):
        MooringError.__init__(self, message)


def patterns(value=None):
    """Interface patterns from ``value`` (default: the environment); empty = guard off."""
    if value is None:
        value = os.environ.get(ENV, "")
    return [p.strip() for p in str(value).split(",") if p.strip()]


def addresses(host):
    """The IP addresses ``host`` stands for (itself if it is one)."""
    host = str(host).strip("[]")
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise RouteRefused("refusing to connect to %s: it does not resolve (%s)" % (host, exc)) from None
    return sorted({info[4][0] for info in infos})


def route_get(address):
    """The kernel's route to ``address`` as a dict (``dev``, ``gateway``, ``prefsrc`` ...)."""
    proc = subprocess.run(["ip", "-j", "route", "get", address], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"error": (proc.stderr or "").strip() or "ip route get exited %d" % proc.returncode}
    try:
        routes = json.loads(proc.stdout or "[]")
    except ValueError:
        return {"error": "unreadable output of ip -j route get: %r" % proc.stdout[:200]}
    return routes[0] if routes else {"error": "no route"}


def describe(route):
    if "error" in route:
        return route["error"]
    parts = []
    if route.get("type") not in (None, "unicast"):
        parts.append(route["type"])
    if route.get("gateway"):
        parts.append("via %s" % route["gateway"])
    parts.append("dev %s" % route.get("dev", "?"))
    if route.get("prefsrc"):
        parts.append("src %s" % route["prefsrc"])
    return " ".join(parts)


def verdict(address, route, allowed):
    """None when ``route`` to ``address`` is allowed, else the reason (pure: unit-tested)."""
    ip = ipaddress.ip_address(address)
    if ip.is_loopback or route.get("dev") == "lo":
        return None
    dev = route.get("dev") or ""
    if "error" not in route and not route.get("gateway") and route.get("type", "unicast") == "unicast" \
            and any(fnmatch.fnmatchcase(dev, p) for p in allowed):
        return None
    return ("refusing to connect to %s: the kernel routes it %s, not directly through an interface %s allows (%s). "
            "Nothing was sent." % (address, describe(route), ENV, ", ".join(allowed)))


def check(host, allowed=None, route=route_get):
    """Raise :class:`RouteRefused` unless every address of ``host`` routes where allowed.

    ``allowed`` defaults to the environment's patterns; with none, the guard is off."""
    allowed = patterns() if allowed is None else list(allowed)
    if not allowed:
        return
    for address in addresses(host):
        reason = verdict(address, route(address), allowed)
        if reason:
            raise RouteRefused(reason)


def check_url(url, allowed=None, route=route_get):
    """:func:`check` on the host of an http(s) URL; other schemes (file://) send nothing."""
    from urllib.parse import urlsplit

    parts = urlsplit(str(url))
    if parts.scheme in ("http", "https") and parts.hostname:
        check(parts.hostname, allowed, route)
