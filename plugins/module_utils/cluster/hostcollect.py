# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: troubleshoot.sh's host collectors, run on the host.

:func:`collect` runs the collectors of a HostPreflight plan (:func:`hostpreflight.load`) on this host and
returns what troubleshoot's collectors would have written: a mapping of troubleshoot's result paths
(:func:`hostpreflight.result_path`) to their content (parsed JSON, or text), for
:func:`hostpreflight.analyze_all` to judge on the controller.

Host side: Python 3 standard library only. Every file read is below ``root`` (``/proc``, ``/sys``,
``/etc``, ``/lib/modules`` and the paths a spec names), every program goes through ``run``, so tests feed
a fake tree and fake programs. Everything is bounded: file reads (4 MiB), command output and HTTP bodies
(1 MiB), and every command and network operation has a timeout.

``errors`` lists what could not be measured, one line per collector ("<type> <name>: why"). A measured
outcome (a port in use, a refused connection, a key that does not match) is the result itself, as
troubleshoot writes it, not an error. Where troubleshoot writes a status file even when it fails
(tcpPortStatus, udpPortStatus, tcpConnect, tcpLoadBalancer, certificate), so does this.

Where mooring measures differently from troubleshoot (documented at each collector):

* filesystemPerformance is measured by mooring's own writer, not fio (hosts do not have fio); the
  background IOPS load is not generated;
* certificate compares the key pair with ``openssl`` (no Python crypto on the host);
* dns asks the system resolver (``getaddrinfo``) once per name instead of every nameserver for every
  search-list candidate;
* hostOS reads ``/etc/os-release`` (platformVersion is VERSION_ID);
* sysctl reads ``/proc/sys`` instead of running ``sysctl -a``;
* ipv4Interfaces and the interface addresses of tcpPortStatus/udpPortStatus come from ``ip -j -4 addr``;
* cgroups reads the file system type from ``/proc/self/mountinfo`` and decides the v2 ``devices``
  controller from the kernel configuration instead of attaching an eBPF program.
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
import signal
import socket
import ssl
import stat
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import hostpreflight
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostdisk import fdatasync_latencies, free_mb, nearest_rank
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflightgather import (
    module_files,
    parse_meminfo,
    parse_os_release,
    probe_tcp,
)
from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard

MIB = 1024 * 1024
MAX_READ = 4 * MIB              # any one file read
MAX_OUTPUT = MIB                # stdout / stderr of a command, kept
MAX_BODY = MIB                  # an HTTP response body, kept
RUN_TIMEOUT = 30.0              # a command (and the run collector's default)
PORT_TIMEOUT = 10.0             # tcpPortStatus, as troubleshoot
CONNECT_TIMEOUT = 10.0          # tcpConnect default, as troubleshoot
LB_TIMEOUT_MAX = 60.0           # tcpLoadBalancer (troubleshoot's default is 60m)
HTTP_TIMEOUT = 30.0             # http when the spec gives none (troubleshoot: no timeout)
DNS_TIMEOUT = 10.0              # one name
FSPERF_TIMEOUT = 60.0           # filesystemPerformance default, as troubleshoot
DIAL_TIMEOUT = 1.0              # one connection attempt of the port / load balancer checks
RETRY_SECONDS = 1.0             # between two attempts, as troubleshoot
MAX_SYSCTL_FILES = 20000
SYSCTL_VALUE_MAX = 64 * 1024
LISTEN_ALL = "0.0.0.0"  # noqa: S104 - troubleshoot's port checks listen on every IPv4 address, as the service will

CONNECTED, IN_USE, REFUSED, TIMEOUT, ERROR, INVALID = (
    "connected", "address-in-use", "connection-refused", "connection-timeout", "error", "invalid-address")


class _Failed(Exception):
    """A collector could not measure; ``files`` is what it still writes (troubleshoot's status files)."""

    def __init__(self, why, files=None):
        super().__init__(why)
        self.files = files or {}


CollectError = _Failed  # what read_file raises for a file it will not read (for the support bundle's reader)


# ------------------------------------------------------------------------------------------ host access


def run_bounded(argv, timeout=RUN_TIMEOUT, env=None, cwd=None, limit=MAX_OUTPUT):
    """``(rc, stdout, stderr)`` of ``argv``: no shell, empty stdin, at most ``limit`` bytes of each output
    kept (the rest is read and dropped), killed with its process group after ``timeout`` seconds, which
    gives rc -1 and stderr "command timed out after ...". A program that cannot start raises its OSError."""
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=cwd, start_new_session=True)
    kept = (bytearray(), bytearray())

    def drain(pipe, buf):
        with pipe:
            while True:
                chunk = pipe.read1(65536)
                if not chunk:
                    return
                if len(buf) < limit:
                    buf.extend(chunk[:limit - len(buf)])

    readers = [threading.Thread(target=drain, args=pair, daemon=True) for pair in zip((proc.stdout, proc.stderr), kept)]
    for reader in readers:
        reader.start()
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        rc = None
    for reader in readers:
        reader.join(2.0)  # a daemon it started may hold the pipes open: do not wait for it
    out, err = (bytes(b).decode("utf-8", "replace") for b in kept)
    if rc is None:
        return -1, out, "command timed out after %gs" % timeout
    return rc, out, err


def read_file(path, limit=MAX_READ):
    """Text of the regular file ``path``, at most ``limit`` bytes (more is an error, never a partial parse).
    A FIFO or device is refused unopened-for-blocking; a missing file raises FileNotFoundError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _Failed("%s is not a regular file" % path)
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise _Failed("%s is larger than %d bytes; not read" % (path, limit))
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


class _Host:
    """What the collectors reach the host through: ``root``, ``run`` and the clock."""

    _MISSING = object()

    def __init__(self, root, run, now):
        self.root = os.path.abspath(root)
        self.run = run
        self.now = now
        self._ip = None

    def path(self, path):
        return os.path.join(self.root, str(path).lstrip("/"))

    def read(self, path, default=_MISSING, limit=MAX_READ):
        try:
            return read_file(self.path(path), limit)
        except (OSError, _Failed):
            if default is self._MISSING:
                raise
            return default

    def release(self):
        return self.read("/proc/sys/kernel/osrelease", "").strip() or os.uname().release

    def ip_addresses(self):
        """``ip -j -4 addr show up``, parsed (once per collect)."""
        if self._ip is None:
            rc, out, err = self.run(["ip", "-j", "-4", "addr", "show", "up"])
            if rc != 0:
                raise _Failed("ip -j -4 addr show up exited %d: %s" % (rc, err.strip()[:200]))
            try:
                self._ip = [e for e in json.loads(out or "[]") if isinstance(e, dict)]
            except ValueError:
                raise _Failed("ip -j -4 addr show up printed no JSON: %r" % out[:200]) from None
        return self._ip

    def interface_ipv4(self, name):
        for entry in self.ip_addresses():
            if entry.get("ifname") == name:
                addr = _first_ipv4(entry)
                if addr:
                    return addr
        raise _Failed("interface %s is not up or has no IPv4 address" % name)

    def first_ipv4(self):
        """The first IPv4 of the first interface that is up and not loopback (troubleshoot's dial address)."""
        for entry in self.ip_addresses():
            flags = entry.get("flags") or []
            if "UP" in flags and "LOOPBACK" not in flags and _first_ipv4(entry):
                return _first_ipv4(entry)
        raise _Failed("no interface is up with an IPv4 address")


def _first_ipv4(entry):
    return next((a.get("local") for a in entry.get("addr_info") or [] if a.get("family") == "inet" and a.get("local")), None)


# ------------------------------------------------------------------------------------------ spec values


def _text(spec, key, default=None, required=False):
    value = spec.get(key, default)
    if value is None or value == "":
        if required:
            raise _Failed("%s is required" % key)
        return default
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise _Failed("%s must be a string, got %r" % (key, value))
    return str(value)


def _int(spec, key, default=None, low=0, high=None):
    value = spec.get(key, default)
    if value is None or value == "":
        raise _Failed("%s is required" % key)
    try:
        number = int(str(value), 10)
    except ValueError:
        raise _Failed("%s must be an integer, got %r" % (key, value)) from None
    if number < low or (high is not None and number > high):
        raise _Failed("%s must be between %d and %s, got %d" % (key, low, high if high is not None else "any", number))
    return number


def _seconds(spec, key, default):
    """Seconds of a Go duration (``5s``, ``500ms``, ``2m``); ``default`` when unset."""
    value = spec.get(key)
    if value in (None, ""):
        return default
    try:
        seconds = hostpreflight._duration_ns(str(value).strip()) / 1e9
    except hostpreflight._Condition:
        raise _Failed("%s %r is not a duration (e.g. 10s, 500ms, 2m)" % (key, value)) from None
    if seconds <= 0:
        raise _Failed("%s must be more than 0, got %r" % (key, value))
    return seconds


def _address(text):
    """(host, port) of ``host:port`` as troubleshoot accepts a dial address (lower-case IPv4 or DNS name); else None."""
    host, sep, port = str(text).partition(":")
    if not sep or ":" in port or not port.isdigit() or not 0 < int(port) < 65536 or host != host.lower():
        return None
    if re.match(r"^[0-9.]+$", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return None
    elif not re.match(r"^[a-z0-9]([-a-z0-9_.]{0,251}[a-z0-9])?$", host):
        return None
    return host, int(port)


# ------------------------------------------------------------------------------------------ system


def _cpu(host, spec, path):
    """cpu: from /proc/cpuinfo; physical = distinct (physical id, core id), or logical where they are absent."""
    logical, cores, flags = 0, set(), {}
    for block in re.split(r"\n\s*\n", host.read("/proc/cpuinfo")):
        fields = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        if "processor" not in fields:
            continue
        logical += 1
        if "physical id" in fields and "core id" in fields:
            cores.add((fields["physical id"], fields["core id"]))
        for flag in (fields.get("flags") or fields.get("Features") or "").split():
            flags.setdefault(flag)
    if not logical:
        raise _Failed("no processor in /proc/cpuinfo")
    return {path: {"logicalCount": logical, "physicalCount": len(cores) or logical, "flags": list(flags),
                   "machineArch": os.uname().machine}}


def _memory(host, spec, path):
    total_kb = parse_meminfo(host.read("/proc/meminfo")).get("MemTotal")
    if not total_kb:
        raise _Failed("no MemTotal in /proc/meminfo")
    return {path: {"total": total_kb * 1024}}


def _disk_usage(host, spec, path):
    """diskUsage: the file system of ``path``, or of its nearest existing parent; used = total - free
    (blocks reserved for root count as neither used nor available, as troubleshoot's statfs)."""
    _free, measured = free_mb(_text(spec, "path", required=True), host.root)
    st = os.statvfs(host.path(measured))
    total = st.f_blocks * st.f_frsize
    return {path: {"total_bytes": total, "used_bytes": total - st.f_bfree * st.f_frsize}}


_FAMILIES = {"debian": "debian", "ubuntu": "debian", "rhel": "rhel", "centos": "rhel", "rocky": "rhel",
             "almalinux": "rhel", "fedora": "rhel", "suse": "suse", "sles": "suse", "opensuse": "suse"}


def _host_os(host, spec, path):
    """hostOS: platform and platformVersion are os-release ID and VERSION_ID; platformFamily from ID, then
    ID_LIKE (debian for Debian and Ubuntu, rhel for the RHEL family and Fedora)."""
    osr = parse_os_release(host.read("/etc/os-release", None) or host.read("/usr/lib/os-release", ""))
    if not osr.get("ID"):
        raise _Failed("no ID in /etc/os-release")
    ids = [osr["ID"].lower()] + osr.get("ID_LIKE", "").lower().split()
    return {path: {"name": host.read("/proc/sys/kernel/hostname", "").strip() or socket.gethostname(),
                   "kernelVersion": host.release(), "platform": osr["ID"], "platformVersion": osr.get("VERSION_ID", ""),
                   "platformFamily": next((_FAMILIES[i] for i in ids if i in _FAMILIES), "")}}


def _host_services(host, spec, path):
    rc, out, err = host.run(["systemctl", "list-units", "--type=service", "--no-legend", "--all", "--plain"])
    if rc != 0:
        raise _Failed("systemctl list-units exited %d: %s" % (rc, err.strip()[:200]))
    units = [dict(zip(("Unit", "Load", "Active", "Sub"), line.split()[:4])) for line in out.splitlines() if len(line.split()) >= 4]
    return {path: units}


def _time(host, spec, path):
    """time: timedatectl (systemd-timedated, as troubleshoot's D-Bus read); the time zone upper-cased, Etc/UTC as UTC."""
    rc, out, err = host.run(["timedatectl", "show", "-p", "Timezone", "-p", "NTPSynchronized", "-p", "NTP"])
    props = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    if rc != 0 or "Timezone" not in props:
        raise _Failed("timedatectl show exited %d: %s" % (rc, (err.strip() or out.strip())[:200]))
    zone = props["Timezone"].strip().strip('"')
    return {path: {"timezone": "UTC" if zone.lower() == "etc/utc" else zone.upper(),
                   "ntp_synchronized": props.get("NTPSynchronized", "").strip() == "yes",
                   "ntp_active": props.get("NTP", "").strip() == "yes"}}


_MODULE_STATES = {"Live": "loaded", "Loading": "loading", "Unloading": "unloading"}


def _kernel_modules(host, spec, path):
    """kernelModules: module files of the running kernel -> loadable, modules.builtin -> loaded, /proc/modules
    by state (Live -> loaded; none when the kernel has no module support); what is loaded overrides what is
    loadable."""
    builtin, loadable = module_files(host.root, host.release())
    modules = {name: {"size": 0, "instances": 0, "status": "loadable"} for name in sorted(loadable)}
    modules.update({name: {"size": 0, "instances": 0, "status": "loaded"} for name in sorted(builtin)})
    try:
        loaded = host.read("/proc/modules")
    except FileNotFoundError:  # a kernel built without loadable module support: nothing is loaded as a module
        loaded = ""
    for line in loaded.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[1].isdigit() and parts[2].isdigit():
            modules[parts[0]] = {"size": int(parts[1]), "instances": int(parts[2]),
                                 "status": _MODULE_STATES.get(parts[4], "unknown")}
    return {path: modules}


def _sysctl(host, spec, path):
    """sysctl: every readable file under /proc/sys (at most MAX_SYSCTL_FILES), key = its path with / as .,
    value stripped; files that cannot be read (write-only, EIO) are left out, as ``sysctl -a`` leaves them."""
    base = host.path("/proc/sys")
    values, seen = {}, 0
    for dirpath, dirnames, files in os.walk(base):
        dirnames.sort()
        for name in sorted(files):
            seen += 1
            if seen > MAX_SYSCTL_FILES:
                raise _Failed("more than %d files under /proc/sys; the rest were not read" % MAX_SYSCTL_FILES,
                              {path: values})
            full = os.path.join(dirpath, name)
            try:
                values[os.path.relpath(full, base).replace(os.sep, ".")] = read_file(full, SYSCTL_VALUE_MAX).strip()
            except (OSError, _Failed):
                continue
    if not values:
        raise _Failed("nothing readable under /proc/sys")
    return {path: values}


# ------------------------------------------------------------------------------------------ cgroups


def _cgroups(host, spec, path):
    """cgroups: the file system type at ``mountPoint`` from /proc/self/mountinfo: cgroup2 -> v2 (controllers
    of cgroup.controllers, cpuacct with cpu, freezer where cgroup.freeze exists, devices where the kernel
    has CONFIG_CGROUP_BPF); cgroup or tmpfs -> v1 (controllers enabled in /proc/cgroups); nothing mounted
    there -> all disabled."""
    mount = _text(spec, "mountPoint", "/sys/fs/cgroup").rstrip("/") or "/"
    fstype = None
    for line in host.read("/proc/self/mountinfo").splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if sep and len(fields) >= 5 and fields[4].replace("\\040", " ") == mount and right.split():
            fstype = right.split()[0]  # the last mount there is the one visible
    result = {"cgroup-enabled": False, "cgroup-v1": {"enabled": False, "mountPoint": "", "controllers": []},
              "cgroup-v2": {"enabled": False, "mountPoint": "", "controllers": []}, "allControllers": []}
    if fstype is None:
        if os.path.exists(host.path(mount)):
            raise _Failed("%s is not a mount point" % mount)
        return {path: result}
    if fstype == "cgroup2":
        controllers = set(host.read(mount + "/cgroup.controllers").split())
        if "cpu" in controllers:
            controllers.add("cpuacct")
        if _v2_freezer(host, mount):
            controllers.add("freezer")
        if _v2_devices(host):
            controllers.add("devices")
        version = "cgroup-v2"
    elif fstype in ("cgroup", "tmpfs"):
        controllers = set()
        for line in host.read("/proc/cgroups").splitlines():
            parts = line.split()
            if len(parts) >= 4 and not parts[0].startswith("#") and parts[3] == "1":
                controllers.add(parts[0])
        version = "cgroup-v1"
    else:
        raise _Failed("unexpected file system type %s at %s" % (fstype, mount))
    result[version] = {"enabled": True, "mountPoint": mount, "controllers": sorted(controllers)}
    result["cgroup-enabled"] = True
    result["allControllers"] = sorted(controllers)
    return {path: result}


def _v2_freezer(host, mount):
    """cgroup.freeze exists in this process's cgroup, or (in the root cgroup, which has none) in a child of it."""
    own = next((line[3:] for line in host.read("/proc/self/cgroup", "").splitlines() if line.startswith("0::")), "/")
    if own.strip("/"):
        return os.path.isfile(host.path("%s/%s/cgroup.freeze" % (mount, own.strip("/"))))
    try:
        with os.scandir(host.path(mount)) as entries:
            return any(e.is_dir() and os.path.isfile(os.path.join(e.path, "cgroup.freeze")) for _n, e in zip(range(64), entries))
    except OSError:
        return False


def _v2_devices(host):
    """The v2 devices controller is an eBPF program: the kernel has it with CONFIG_CGROUP_BPF (its config in
    /boot); without the config, from 4.15 on (where it appeared)."""
    release = host.release()
    config = host.read("/boot/config-%s" % release, None)
    if config is not None:
        return re.search(r"^CONFIG_CGROUP_BPF=y", config, re.M) is not None
    m = re.match(r"^(\d+)\.(\d+)", release)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (4, 15)


# ------------------------------------------------------------------------------------------ network


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
        raise _Failed(message or status, files)
    return files


def _tcp_port_status(host, spec, path):
    """tcpPortStatus: listen on 0.0.0.0:port (or the interface's first IPv4), connect to this host's first
    non-loopback IPv4 (or the interface's) at that port; 10 s in all."""
    port = _int(spec, "port", low=1, high=65535)
    interface = _text(spec, "interface")
    address = host.interface_ipv4(interface) if interface else None
    dial = (address or host.first_ipv4(), port)
    status, message = _round_trip(host, address or LISTEN_ALL, port, dial, PORT_TIMEOUT)
    return _status_files(path, status, message)


def _udp_port_status(host, spec, path):
    """udpPortStatus: only binds the UDP port (no traffic): connected, address-in-use or error."""
    port = _int(spec, "port", low=1, high=65535)
    interface = _text(spec, "interface")
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
    address = _text(spec, "address", required=True)
    timeout = _seconds(spec, "timeout", CONNECT_TIMEOUT)
    name, _sep, port = address.rpartition(":")
    if not name or not port.isdigit() or not 0 < int(port) < 65536:
        return _status_files(path, ERROR, "address %r is not host:port" % address)
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
    address = _text(spec, "address", required=True)
    port = _int(spec, "port", low=1, high=65535)
    timeout = min(_seconds(spec, "timeout", LB_TIMEOUT_MAX), LB_TIMEOUT_MAX)
    dial = _address(address)
    if dial is None:
        return _status_files(path, INVALID, "invalid load balancer address %r (expected host:port)" % address)
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
        raise _Failed("no supported http request type (get, post or put)")
    request = spec[method]
    if not isinstance(request, dict):
        raise _Failed("%s must be a mapping with url" % method)
    url = _text(request, "url", required=True)
    timeout = _seconds(request, "timeout", HTTP_TIMEOUT)
    headers = request.get("headers") or {}
    if not isinstance(headers, dict):
        raise _Failed("%s.headers must be a mapping" % method)
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
        raise ValueError("unsupported URL scheme %r (http or https)" % parts.scheme)
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
        pool = ipaddress.IPv4Network(_text(spec, "CIDRRangeAlloc", required=True), strict=False)
    except ValueError as exc:
        raise _Failed("CIDRRangeAlloc: %s" % exc) from None
    size = _int(spec, "desiredCIDR", low=pool.prefixlen, high=32)
    routes = []
    for line in host.read("/proc/net/route").splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        dest, mask = (ipaddress.IPv4Address(int(f, 16).to_bytes(4, "little")) for f in (fields[1], fields[7]))
        if int(dest) or int(mask):
            routes.append(ipaddress.IPv4Network("%s/%s" % (dest, mask), strict=False))
    step = 2 ** (32 - size)
    start, last = int(pool.network_address), int(pool.broadcast_address)
    status = "no-subnet-available"
    while start + step - 1 <= last:
        candidate = ipaddress.IPv4Network((start, size))
        clashes = [r for r in routes if r.overlaps(candidate)]
        if not clashes:
            status = "a-subnet-is-available"
            break
        past = max(int(r.broadcast_address) for r in clashes) + 1
        start = max(start + step, -(-past // step) * step)
    return {path: {"CIDRRangeAlloc": str(spec["CIDRRangeAlloc"]), "desiredCIDR": size, "status": status}}


def _subnet_contains_ip(host, spec, path):
    cidr, ip = _text(spec, "cidr", required=True), _text(spec, "ip", required=True)
    try:
        contains = ipaddress.ip_address(ip) in ipaddress.ip_network(cidr, strict=False)
    except ValueError as exc:
        raise _Failed(str(exc)) from None
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
        if "UP" not in flags or "LOOPBACK" in flags or not _first_ipv4(entry):
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
        raise _Failed("hostnames is required (a list)")
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


# ------------------------------------------------------------------------------------------ certificate


_PEM = re.compile(r"^-----BEGIN ([A-Z0-9 ]+)-----$", re.M)


def _is_key(block_type):
    return block_type == "PRIVATE KEY" or block_type.endswith(" PRIVATE KEY")


def _key_pair(host, cert_path, key_path):
    """(status, why) of troubleshoot's certificate check, from the PEM blocks and openssl."""
    try:
        cert, key = host.read(cert_path), host.read(key_path)
    except FileNotFoundError as exc:
        return "key-pair-missing", "no such file: %s" % exc.filename
    except (OSError, _Failed) as exc:
        return "key-pair-invalid", str(exc)
    cert_types, key_types = _PEM.findall(cert), _PEM.findall(key)
    if "CERTIFICATE" not in cert_types:
        if any(map(_is_key, cert_types)):
            return "key-pair-switched", "%s holds a private key and no certificate: the two paths look switched" % cert_path
        return "key-pair-invalid", "no CERTIFICATE PEM block in %s" % cert_path
    if not any(map(_is_key, key_types)):
        if "CERTIFICATE" in key_types:
            return "key-pair-switched", "%s holds a certificate rather than a private key: the two paths look switched" % key_path
        return "key-pair-invalid", "no PRIVATE KEY PEM block in %s" % key_path
    if "ENCRYPTED" in key:
        return "key-pair-encrypted", "the private key in %s is encrypted" % key_path
    try:
        rc_cert, pub_cert, err_cert = host.run(["openssl", "x509", "-noout", "-pubkey", "-in", host.path(cert_path)])
        rc_key, pub_key, err_key = host.run(["openssl", "pkey", "-pubout", "-passin", "pass:", "-in", host.path(key_path)])
    except OSError as exc:
        return "key-pair-invalid", "openssl is needed to compare the key pair and cannot run (%s): install openssl" % exc
    if 127 in (rc_cert, rc_key):
        return "key-pair-invalid", "openssl is needed to compare the key pair and is not installed: install openssl"
    if rc_cert != 0:
        return "key-pair-invalid", "the certificate in %s does not parse: %s" % (cert_path, err_cert.strip()[:200])
    if rc_key != 0:
        return "key-pair-invalid", "the private key in %s does not parse: %s" % (key_path, err_key.strip()[:200])
    if pub_cert.strip() != pub_key.strip() or "PUBLIC KEY" not in pub_cert:
        return "key-pair-mismatch", "the private key in %s does not match the certificate's public key" % key_path
    return "key-pair-valid", ""


def _certificate(host, spec, path):
    """certificate: the bare status string; every status but key-pair-valid also gives its reason in errors."""
    cert_path = _text(spec, "certificatePath") or _text(spec, "certificatepath", required=True)
    status, why = _key_pair(host, cert_path, _text(spec, "keyPath", required=True))
    if status != "key-pair-valid":
        raise _Failed("%s: %s" % (status, why), {path: status})
    return {path: status}


# ------------------------------------------------------------------------------------------ filesystem performance


def _filesystem_performance(host, spec, path):
    """filesystemPerformance, MEASURED BY MOORING, NOT BY FIO (hosts have no fio): in ``directory`` (created
    0700) a temporary file gets ``operationSize`` bytes at a time (kURL's ``operationSizeBytes`` too; default
    1024) up to ``fileSize`` (default 10Mi), each write followed by fdatasync, whose latency is recorded
    (ns), as fio's ``--rw=write --ioengine=sync --fdatasync=1`` job ``fsperf`` measures it. Writing stops at
    ``timeout`` (default 1m; ``runTime`` seconds if shorter) and the latencies measured so far are the
    result; the file is deleted. The result is shaped as fio's JSON (job fsperf, sync.lat_ns with min, max,
    mean, stddev, N and the percentiles troubleshoot reads; each percentile the nearest-rank value). The
    background IOPS load (``enableBackgroundIOPS``) is not generated."""
    directory = _text(spec, "directory", required=True)
    try:
        file_size = hostpreflight.quantity(spec.get("fileSize") or "10Mi")
    except hostpreflight._Condition as exc:
        raise _Failed("fileSize: %s" % exc) from None
    op_size = _int(spec, "operationSize", spec.get("operationSizeBytes") or 1024, low=1, high=64 * MIB)
    timeout = _seconds(spec, "timeout", FSPERF_TIMEOUT)
    if str(spec.get("runTime") or "").isdigit() and int(spec["runTime"]) > 0:
        timeout = min(timeout, float(spec["runTime"]))
    if file_size < 1:
        raise _Failed("fileSize must be at least 1 byte")
    full = host.path(directory)
    os.makedirs(full, mode=0o700, exist_ok=True)
    latencies = fdatasync_latencies(full, op_size, file_size, timeout, clock=host.now)
    if not latencies:
        raise _Failed("no write completed within %gs" % timeout)
    return {path: fio_result(latencies)}


def fio_result(latencies):
    """fio's JSON for job ``fsperf`` from fdatasync latencies in ns (nearest-rank percentiles)."""
    ordered = sorted(latencies)
    n = len(ordered)
    mean = sum(ordered) / float(n)
    percentiles = {key: nearest_rank(ordered, key) for key in hostpreflight._PERCENTILES.values()}
    stddev = (sum((x - mean) ** 2 for x in ordered) / n) ** 0.5
    return {"jobs": [{"jobname": "fsperf", "sync": {"total_ios": n, "lat_ns": {
        "min": ordered[0], "max": ordered[-1], "mean": mean, "stddev": stddev, "N": n, "percentile": percentiles}}}]}


# ------------------------------------------------------------------------------------------ run


def _run(host, spec, path):
    """run: ``command`` with ``args`` directly (no shell) in a fresh temporary directory, the environment of
    this process (or only PATH, KUBECONFIG, PWD with ``ignoreParentEnvs``, plus ``inheritEnvs``) and then
    ``env`` (K=V), killed after ``timeout`` (default 30s). stdout (at most 1 MiB) is the result; beside it
    ``<name>-info.json`` {command, exitCode (a string; -1 on timeout), error (stderr when it failed), env}.
    ``input`` and ``outputDir`` are not supported."""
    command = _text(spec, "command", required=True)
    args = spec.get("args") or []
    env_list = spec.get("env") or []
    if not isinstance(args, list) or not isinstance(env_list, list):
        raise _Failed("args and env must be lists")
    for unsupported in ("input", "outputDir"):
        if spec.get(unsupported):
            raise _Failed("%s is not supported by mooring.cluster; not run" % unsupported)
    timeout = _seconds(spec, "timeout", RUN_TIMEOUT)
    env = _run_env(spec, env_list)
    argv = [command] + [str(a) for a in args]
    with tempfile.TemporaryDirectory(prefix="mooring-run-") as workdir:
        rc, out, err = host.run(argv, timeout=timeout, env=env, cwd=workdir)
    info = {"command": " ".join(argv), "exitCode": str(rc), "error": err if rc != 0 else "",
            "outputDir": "", "input": "", "env": [str(e) for e in env_list]}
    return {path: out[:MAX_OUTPUT], path[:-len(".txt")] + "-info.json": info}


def _run_env(spec, env_list):
    if spec.get("ignoreParentEnvs") or spec.get("inheritEnvs"):
        names = ["PATH", "KUBECONFIG", "PWD"] + ([] if spec.get("ignoreParentEnvs") else list(spec.get("inheritEnvs") or []))
        missing = [n for n in names[3:] if n not in os.environ]
        if missing:
            raise _Failed("inheritEnvs: %s not set in the environment" % ", ".join(missing))
        env = {n: os.environ[n] for n in names if n in os.environ}
    else:
        env = dict(os.environ)
    for item in env_list:
        name, sep, value = str(item).partition("=")
        if not sep or not name or not value or "=" in value:
            raise _Failed("env entry %r must be NAME=VALUE" % (item,))
        env[name] = value
    return env


# ------------------------------------------------------------------------------------------ entry point


_COLLECTORS = {
    "cpu": _cpu, "memory": _memory, "diskUsage": _disk_usage, "hostOS": _host_os, "hostServices": _host_services,
    "time": _time, "tcpPortStatus": _tcp_port_status, "udpPortStatus": _udp_port_status, "tcpConnect": _tcp_connect,
    "tcpLoadBalancer": _tcp_load_balancer, "http": _http, "certificate": _certificate,
    "filesystemPerformance": _filesystem_performance, "kernelModules": _kernel_modules, "sysctl": _sysctl,
    "subnetAvailable": _subnet_available, "subnetContainsIP": _subnet_contains_ip, "ipv4Interfaces": _ipv4_interfaces,
    "dns": _dns, "cgroups": _cgroups, "run": _run,
}


def _label(kind, spec):
    name = spec.get("collectorName") or (hostpreflight.COLLECTORS.get(kind) or (None, None))[1]
    return "%s %s" % (kind, name) if name else kind


def collect(collectors, root="/", run=None, now=time.time):
    """Run ``collectors`` (the plan's ``[(type, spec)]``) on this host, in order: ``{"collected": {result
    path: content}, "errors": ["<type> <name>: why"]}``.

    ``run(argv, timeout=None, env=None, cwd=None) -> (rc, stdout, stderr)`` runs a program; the default is
    :func:`run_bounded` (30 s, output capped; a replacement gets ``timeout``/``env``/``cwd`` only from the
    run collector). ``root`` prefixes every path read; ``now`` is the clock deadlines are kept with."""
    host = _Host(root, run or run_bounded, now)
    collected, errors = {}, []
    for kind, spec in collectors:
        spec = spec or {}
        label = _label(kind, spec)
        collector = _COLLECTORS.get(kind)
        if collector is None:
            errors.append("%s: not a host collector mooring.cluster runs" % label)
            continue
        try:
            collected.update(collector(host, spec, hostpreflight.result_path(kind, spec)))
        except _Failed as exc:
            collected.update(exc.files)
            errors.append("%s: %s" % (label, exc))
        except (OSError, ValueError) as exc:
            errors.append("%s: %s" % (label, exc))
    return {"collected": collected, "errors": errors}
