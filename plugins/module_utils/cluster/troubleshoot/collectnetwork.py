# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: troubleshoot's host collectors of the network - tcpPortStatus, udpPortStatus,
tcpConnect, tcpLoadBalancer, http, subnetAvailable, subnetContainsIP, ipv4Interfaces and dns (:data:`COLLECTORS`).

Host side: standard library only. Every network operation has a timeout and an HTTP body is kept up to
1 MiB. Where troubleshoot writes a status file even when it fails (tcpPortStatus, udpPortStatus,
tcpConnect, tcpLoadBalancer), so does this.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import http.client
import ipaddress
import json
import os
import re
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts.hostio import MIB, CollectError, first_ipv4
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflightgather import probe_tcp
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot.collectspec import dial_address, spec_int, spec_seconds, spec_text
from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt

MAX_BODY = MIB                  # an HTTP response body, kept
PORT_TIMEOUT = 10.0             # tcpPortStatus, as troubleshoot
CONNECT_TIMEOUT = 10.0          # tcpConnect default, as troubleshoot
LB_TIMEOUT_MAX = 60.0           # tcpLoadBalancer (troubleshoot's default is 60m)
HTTP_TIMEOUT = 30.0             # http when the spec gives none (troubleshoot: no timeout)
DNS_TIMEOUT = 10.0              # one name
DIAL_TIMEOUT = 1.0              # one connection attempt of the port / load balancer checks
RETRY_SECONDS = 1.0             # between two attempts, as troubleshoot
LISTEN_ALL = "0.0.0.0"  # noqa: S104 - troubleshoot's port checks listen on every IPv4 address, as the service will

CONNECTED, IN_USE, REFUSED, TIMEOUT, ERROR, INVALID = (
    "connected", "address-in-use", "connection-refused", "connection-timeout", "error", "invalid-address")


def _listen(address, port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Go's listeners: TIME_WAIT is not "in use"
        sock.bind((address, port))
        sock.listen(16)
    except OSError:
        sock.close()
        raise
    return sock


def _recv(sock, size):
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _exchange(client, listener, request, response, wait=1.0):
    """The client sends ``request``; a connection accepted on ``listener`` that carries it answers ``response``;
    True when the client reads it back. Connections from others (health checks, other hosts) are dropped."""
    end = time.monotonic() + wait
    try:
        client.settimeout(wait)
        client.sendall(request)
        while time.monotonic() < end:
            listener.settimeout(max(0.01, end - time.monotonic()))
            conn, _peer = listener.accept()
            with conn:
                conn.settimeout(max(0.01, min(0.5, end - time.monotonic())))
                try:
                    if _recv(conn, len(request)) != request:
                        continue
                    conn.sendall(response)
                except OSError:
                    continue
            return _recv(client, len(response)) == response
    except OSError:
        return False
    return False


def _round_trip(host, listen_address, port, dial, timeout):
    """troubleshoot's TCP check: listen on ``listen_address:port``, connect to ``dial`` (host, port) until a
    random token goes round (``connected``) or ``timeout`` passes; ``(status, message)``."""
    try:
        listener = _listen(listen_address, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return IN_USE, str(exc)
        return ERROR, "failed to create listener: %s" % exc
    request, response = os.urandom(16), os.urandom(16)
    with listener:
        deadline = host.now() + timeout
        try:
            netguard.check(dial[0])
        except OSError as exc:
            return ERROR, str(exc)
        while True:
            if host.now() > deadline:
                return TIMEOUT, "no connection within %gs" % timeout
            try:
                client = socket.create_connection(dial, timeout=DIAL_TIMEOUT)
            except socket.timeout:
                time.sleep(max(0.0, min(RETRY_SECONDS, deadline - host.now())))
                continue
            except ConnectionRefusedError as exc:
                return REFUSED, str(exc)
            except OSError as exc:
                return ERROR, "failed to dial: %s" % exc
            with client:
                if _exchange(client, listener, request, response):
                    return CONNECTED, ""
            time.sleep(max(0.0, min(RETRY_SECONDS, deadline - host.now())))


def _status_files(path, status, message):
    files = {path: {"status": status, "message": message}}
    if status in (ERROR, INVALID):
        raise CollectError(message or status, files)
    return files


def _tcp_port_status(host, spec, path):
    """tcpPortStatus: listen on 0.0.0.0:port (or the interface's first IPv4), connect to this host's first
    non-loopback IPv4 (or the interface's) at that port; 10 s in all."""
    port = spec_int(spec, "port", low=1, high=65535)
    interface = spec_text(spec, "interface")
    address = host.interface_ipv4(interface) if interface else None
    dial = (address or host.first_ipv4(), port)
    status, message = _round_trip(host, address or LISTEN_ALL, port, dial, PORT_TIMEOUT)
    return _status_files(path, status, message)


def _udp_port_status(host, spec, path):
    """udpPortStatus: only binds the UDP port (no traffic): connected, address-in-use or error."""
    port = spec_int(spec, "port", low=1, high=65535)
    interface = spec_text(spec, "interface")
    address = host.interface_ipv4(interface) if interface else LISTEN_ALL
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((address, port))
        status, message = CONNECTED, ""
    except OSError as exc:
        status, message = (IN_USE if exc.errno == errno.EADDRINUSE else ERROR), str(exc)
    finally:
        sock.close()
    return _status_files(path, status, message)


def _tcp_connect(host, spec, path):
    """tcpConnect: one connection to ``address`` within ``timeout`` (default 10s)."""
    address = spec_text(spec, "address", required=True)
    timeout = spec_seconds(spec, "timeout", CONNECT_TIMEOUT)
    name, _sep, port = address.rpartition(":")
    if not name or not port.isdigit() or not 0 < int(port) < 65536:
        return _status_files(path, ERROR, "address %s is not host:port" % excerpt(address))
    ok, message = probe_tcp(name.strip("[]"), int(port), timeout)
    if ok:
        status = CONNECTED
    elif "refused" in message.lower():
        status = REFUSED
    elif "timed out" in message.lower():
        status = TIMEOUT
    else:
        status = ERROR
    return _status_files(path, status, message)


def _tcp_load_balancer(host, spec, path):
    """tcpLoadBalancer: listen on 0.0.0.0:port, connect to the balancer at ``address`` until the token comes
    back through it; ``timeout`` at most 60s (troubleshoot waits up to 60m by default)."""
    address = spec_text(spec, "address", required=True)
    port = spec_int(spec, "port", low=1, high=65535)
    timeout = min(spec_seconds(spec, "timeout", LB_TIMEOUT_MAX), LB_TIMEOUT_MAX)
    dial = dial_address(address)
    if dial is None:
        return _status_files(path, INVALID, "invalid load balancer address %s (expected host:port)" % excerpt(address))
    status, message = _round_trip(host, LISTEN_ALL, port, dial, timeout)
    return _status_files(path, status, message)


def _canonical_header(name):
    return "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))


def _http(host, spec, path):
    """http: one get, post or put; ``{"response": {status, body, headers, raw_json}}`` (any status code) or
    ``{"error": {"message"}}``. The body is kept up to 1 MiB; ``timeout`` bounds the whole request (default
    30s); a loopback URL never goes through a proxy (as Go's client)."""
    method = next((m for m in ("get", "post", "put") if spec.get(m) is not None), None)
    if method is None:
        raise CollectError("no supported http request type (get, post or put)")
    request = spec[method]
    if not isinstance(request, dict):
        raise CollectError("%s must be a mapping with url" % method)
    url = spec_text(request, "url", required=True)
    timeout = spec_seconds(request, "timeout", HTTP_TIMEOUT)
    headers = request.get("headers") or {}
    if not isinstance(headers, dict):
        raise CollectError("%s.headers must be a mapping" % method)
    body = request.get("body")
    try:
        content = {"response": _http_request(method.upper(), url, {str(k): str(v) for k, v in headers.items()},
                                             None if body is None or method == "get" else str(body).encode("utf-8"),
                                             bool(request.get("insecureSkipVerify")), timeout)}
    except (OSError, ValueError, http.client.HTTPException) as exc:  # URLError is an OSError
        content = {"error": {"message": str(getattr(exc, "reason", None) or exc)}}
    return {path: content}


def _http_request(method, url, headers, data, insecure, timeout):
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError("unsupported URL scheme %s (http or https)" % excerpt(parts.scheme))
    netguard.check_url(url)
    context = ssl.create_default_context()
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    handlers = [urllib.request.HTTPSHandler(context=context)]
    if parts.hostname == "localhost" or _is_loopback(parts.hostname):
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    deadline = time.monotonic() + timeout
    try:
        request = urllib.request.Request(url, data=data, headers=headers, method=method)  # noqa: S310 - http(s) only, checked above
        resp = opener.open(request, timeout=timeout)
    except urllib.error.HTTPError as exc:  # a status >= 400 is still a response
        resp = exc
    with resp:
        body = b""
        while len(body) <= MAX_BODY:
            if time.monotonic() > deadline:
                raise TimeoutError("response body not read within %gs" % timeout)
            chunk = resp.read1(65536)
            if not chunk:
                break
            body += chunk
        body = body[:MAX_BODY].decode("utf-8", "replace")
        names = dict.fromkeys(resp.headers.keys())
        out = {"status": resp.status, "body": body,
               "headers": {_canonical_header(n): ",".join(resp.headers.get_all(n) or []) for n in names}}
    with contextlib.suppress(ValueError):  # not JSON: no raw_json, as troubleshoot
        out["raw_json"] = json.loads(body)
    return out


def _is_loopback(name):
    try:
        return ipaddress.ip_address(str(name).strip("[]")).is_loopback
    except ValueError:
        return False


def _subnet_available(host, spec, path):
    """subnetAvailable: the first /desiredCIDR subnet of CIDRRangeAlloc that overlaps no IPv4 route of
    /proc/net/route (the default route aside)."""
    try:
        pool = ipaddress.IPv4Network(spec_text(spec, "CIDRRangeAlloc", required=True), strict=False)
    except ValueError as exc:
        raise CollectError("CIDRRangeAlloc: %s" % exc) from None
    size = spec_int(spec, "desiredCIDR", low=pool.prefixlen, high=32)
    spans = []
    for line in host.read("/proc/net/route").splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        dest, mask = (ipaddress.IPv4Address(int(f, 16).to_bytes(4, "little")) for f in (fields[1], fields[7]))
        if int(dest) or int(mask):
            route = ipaddress.IPv4Network("%s/%s" % (dest, mask), strict=False)
            spans.append((int(route.network_address), int(route.broadcast_address)))
    used = []  # the routes' addresses as disjoint ranges, in order: one pass finds the first free subnet
    for lo, hi in sorted(spans):
        if used and lo <= used[-1][1] + 1:
            used[-1][1] = max(used[-1][1], hi)
        else:
            used.append([lo, hi])
    step = 2 ** (32 - size)
    start, last = int(pool.network_address), int(pool.broadcast_address)
    status, i = "no-subnet-available", 0
    while start + step - 1 <= last:
        while i < len(used) and used[i][1] < start:
            i += 1
        if i == len(used) or used[i][0] > start + step - 1:
            status = "a-subnet-is-available"
            break
        start = -(-(used[i][1] + 1) // step) * step  # the first subnet boundary past the range in the way
    return {path: {"CIDRRangeAlloc": str(spec["CIDRRangeAlloc"]), "desiredCIDR": size, "status": status}}


def _subnet_contains_ip(host, spec, path):
    cidr, ip = spec_text(spec, "cidr", required=True), spec_text(spec, "ip", required=True)
    try:
        contains = ipaddress.ip_address(ip) in ipaddress.ip_network(cidr, strict=False)
    except ValueError as exc:
        raise CollectError(str(exc)) from None
    return {path: {"cidr": cidr, "ip": ip, "contains": contains}}


# Go's net.Flags bits from the kernel's IFF_* flags (/sys/class/net/<if>/flags) and from ip's flag names.
_GO_FLAGS = ((0x1, "UP", 1), (0x2, "BROADCAST", 2), (0x8, "LOOPBACK", 4), (0x10, "POINTOPOINT", 8),
             (0x1000, "MULTICAST", 16), (0x40, "LOWER_UP", 32))


def _ipv4_interfaces(host, spec, path):
    """ipv4Interfaces: the interfaces that are up, not loopback, with an IPv4 address, as Go's net.Interface
    (HardwareAddr base64 of the MAC bytes, Flags Go's bits). None gives ``[]`` (troubleshoot: null)."""
    out = []
    for entry in host.ip_addresses():
        flags = entry.get("flags") or []
        if "UP" not in flags or "LOOPBACK" in flags or not first_ipv4(entry):
            continue
        name = str(entry.get("ifname"))
        iff = host.read("/sys/class/net/%s/flags" % name, "").strip()
        if re.match(r"^0x[0-9a-fA-F]+$", iff):
            go_flags = sum(bit for mask, _n, bit in _GO_FLAGS if int(iff, 16) & mask)
        else:  # IFF_RUNNING is not shown by ip: LOWER_UP stands for it
            go_flags = sum(bit for _m, flag, bit in _GO_FLAGS if flag in flags)
        mac = (entry.get("address") or host.read("/sys/class/net/%s/address" % name, "")).strip()
        raw = bytes.fromhex(mac.replace(":", "")) if re.match(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2})+$", mac) else b""
        out.append({"Index": entry.get("ifindex"), "MTU": entry.get("mtu"), "Name": name,
                    "HardwareAddr": base64.b64encode(raw).decode("ascii") if raw else None, "Flags": go_flags})
    return {path: out}


def _resolve(name, timeout=DNS_TIMEOUT):
    """The addresses of ``name`` from the system resolver within ``timeout`` (getaddrinfo has none of its own)."""
    box = {}

    def ask():
        with contextlib.suppress(OSError):  # does not resolve: an empty answer
            box["infos"] = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)

    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    worker.join(timeout)
    addresses = list(dict.fromkeys(info[4][0] for info in box.get("infos") or []))
    return sorted(addresses, key=lambda a: ":" in a)  # A before AAAA, as troubleshoot asks


def _dns(host, spec, path):
    """dns: the system resolver (getaddrinfo) once per name, not every nameserver for every search-list
    candidate: ``server`` is "system resolver", ``search`` and ``resolvedFromSearch`` are empty, ``answer``
    is "<name>\\tIN\\tA|AAAA\\t<address>" without a TTL. /etc/resolv.conf is copied beside the result."""
    names = spec.get("hostnames")
    if not isinstance(names, list) or not names:
        raise CollectError("hostnames is required (a list)")
    query = {}
    for name in map(str, names):
        addresses = _resolve(name)
        record = addresses[0] if addresses else ""
        answer = "%s\tIN\t%s\t%s" % (name, "AAAA" if ":" in record else "A", record) if record else ""
        query[name] = [{"server": "system resolver", "search": "", "name": name, "answer": answer, "record": record}]
    files = {path: {"query": query, "resolvedFromSearch": ""}}
    resolv = host.read("/etc/resolv.conf", None)
    if resolv is not None:
        files[path.rsplit("/", 1)[0] + "/resolv.conf"] = resolv
    return files


COLLECTORS = {
    "tcpPortStatus": _tcp_port_status, "udpPortStatus": _udp_port_status, "tcpConnect": _tcp_connect,
    "tcpLoadBalancer": _tcp_load_balancer, "http": _http, "subnetAvailable": _subnet_available,
    "subnetContainsIP": _subnet_contains_ip, "ipv4Interfaces": _ipv4_interfaces, "dns": _dns,
}
