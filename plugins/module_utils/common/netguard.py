# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the route guard - refuse to connect where the kernel would
send the packets somewhere they must not go.

Off unless the environment variable ``MOORING_ROUTE_GUARD`` is set (the lab and the tests set
it; a user's run never does). Its value is a comma-separated list of interface-name patterns
(``fnmatch``), e.g. ``mlab*``. With it set, :func:`check` allows a destination only when
every address it resolves to is on loopback, or the kernel's route to it (``ip -j route get``,
which sends nothing) leaves through one of those interfaces *directly* (no gateway). Anything
else raises :class:`RouteRefused` naming the address, the route the kernel chose and the
likely cause, before a single packet is sent.

Standard library only: ``tests/lab/lab.py`` loads this file by path before ``make setup``.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import json
import os
import socket
import subprocess

ENV = "MOORING_ROUTE_GUARD"
LAB_BRIDGE_PREFIX = "mlab"  # lab bridges are mlab<third octet> (tests/lab/lab.py)


try:
    from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
except ImportError:  # loaded by path (tests/lab/lab.py) before the collection is importable
    class MooringError(Exception):
        """Stands in for common.errors.MooringError when this file is loaded on its own."""


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
    cause = ("the lab network's bridge has no address, or the lab is down: the kernel falls back to the "
             "default route. With podman's CNI backend an --internal bridge gets no address; the lab "
             "needs netavark (`python3 tests/lab/lab.py setup`, docs/lab.md)")
    return ("refusing to connect to %s: the kernel routes it %s, not directly through a lab bridge (%s). "
            "Likely cause: %s. Nothing was sent." % (address, describe(route), ", ".join(allowed), cause))


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
