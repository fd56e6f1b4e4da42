# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: preflight's facts of one host, read on the host (:func:`gather`).

Everything it touches is below ``root`` (``/proc``, ``/sys``, ``/etc``, ``statvfs``, TCP connects to its
peers) and every program it runs goes through the ``run`` callable, so tests feed it a fake tree. Nothing
here changes anything on a host. Standard library only.
"""

from __future__ import annotations

import json
import os
import re
import socket

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts.hostdisk import free_mb, measure_disk
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflight import NEEDED_MODULES, platform_status
from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard
from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import read_regular

TCP_LISTEN = "0A"


MAX_READ = 16 * 1024 * 1024  # a file of /proc or /lib/modules (/proc/net/tcp of a busy node is a few MiB)
MAX_MODULE_FILES = 100000    # files looked at under /lib/modules/RELEASE when it has no modules.dep


def _read(root, path, default=None):
    """The text of a regular file under ``root``, ``default`` when it is missing, not a regular file (a FIFO, a
    device) or larger than MAX_READ."""
    try:
        return read_regular(os.path.join(root, path.lstrip("/")), MAX_READ, "").decode("utf-8", "replace")
    except OSError:
        return default


def _exists(root, path):
    return os.path.exists(os.path.join(root, path.lstrip("/")))


def parse_meminfo(text):
    """{key: kB} from /proc/meminfo."""
    out = {}
    for line in (text or "").splitlines():
        m = re.match(r"^(\w+):\s+(\d+)", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def parse_os_release(text):
    """{key: value} of /etc/os-release (quotes removed)."""
    out = {}
    for line in (text or "").splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip().strip('"').strip("'")
    return out


def parse_listening(*tables):
    """{port: inode} of listening TCP sockets from /proc/net/tcp and /proc/net/tcp6 texts."""
    out = {}
    for text in tables:
        for line in (text or "").splitlines()[1:]:
            parts = line.split()
            if len(parts) < 10 or parts[3] != TCP_LISTEN:
                continue
            port = int(parts[1].rsplit(":", 1)[1], 16)
            out.setdefault(port, parts[9])
    return out


def parse_swaps(text):
    """Total swap in MiB from /proc/swaps."""
    total_kb = 0
    for line in (text or "").splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 3 and parts[2].isdigit():
            total_kb += int(parts[2])
    return total_kb // 1024


MODULE_DIRS = ("/lib/modules", "/usr/lib/modules")
_KO_RE = re.compile(r"\.ko(\.(xz|gz|zst|bz2))?$")


def _module_name(path):
    """The module name of a module file path (``kernel/net/bridge/br_netfilter.ko.xz`` -> ``br_netfilter``)."""
    base = os.path.basename(path.strip())
    if not _KO_RE.search(base):
        return None
    return _KO_RE.sub("", base).replace("-", "_")


def module_files(root, release):
    """(built-in module names, loadable module names) of kernel ``release``.

    From ``modules.builtin`` and ``modules.dep`` in /lib/modules/RELEASE (or /usr/lib/modules);
    without modules.dep, the ``*.ko*`` files found there count as loadable.
    """
    builtin = set()
    loadable = set()
    if not release:
        return builtin, loadable
    for base in MODULE_DIRS:
        moddir = "%s/%s" % (base, release)
        if not _exists(root, moddir):
            continue
        for line in (_read(root, moddir + "/modules.builtin", "") or "").splitlines():
            name = _module_name(line)
            if name:
                builtin.add(name)
        dep = _read(root, moddir + "/modules.dep")
        if dep is not None:
            for line in dep.splitlines():
                name = _module_name(line.split(":", 1)[0])
                if name:
                    loadable.add(name)
        else:
            seen = 0
            for _dir, _subdirs, files in os.walk(os.path.join(root, moddir.lstrip("/"))):
                seen += len(files) + len(_subdirs)
                if seen > MAX_MODULE_FILES:  # not a module tree (a link to /, say): what was found so far
                    break
                loadable.update(n for n in (_module_name(f) for f in files) if n)
        break
    return builtin, loadable


def socket_owners(root, inodes):
    """{inode: process name} for the given socket inodes, by walking /proc/*/fd."""
    wanted = {"socket:[%s]" % i: i for i in inodes}
    owners = {}
    proc = os.path.join(root, "proc")
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return owners
    for pid in pids:
        fd_dir = os.path.join(proc, pid, "fd")
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if target in wanted and wanted[target] not in owners:
                comm = (_read(root, "/proc/%s/comm" % pid, "") or "").strip()
                owners[wanted[target]] = comm or "pid %s" % pid
        if len(owners) == len(wanted):
            break
    return owners


def _ip_json(run, argv):
    rc, out, err = run(argv)
    if rc != 0:
        raise ValueError("%s exited %d: %s" % (" ".join(argv), rc, (err or out).strip()[:200]))
    data = json.loads(out or "[]")
    if not isinstance(data, list):
        raise ValueError("%s printed no JSON list" % " ".join(argv))
    return [e for e in data if isinstance(e, dict)]


def gather_networks(run):
    """This host's addresses and routes (``ip -j``; IPv4 and IPv6, main table) and its default route:
    ``{addresses: [{dev, cidr}], routes: [{dst, dev}], default_route}`` or ``{error}``."""
    try:
        addrs = _ip_json(run, ["ip", "-j", "addr", "show"])
        routes = _ip_json(run, ["ip", "-j", "-4", "route", "show"]) + _ip_json(run, ["ip", "-j", "-6", "route", "show"])
    except ValueError as exc:
        return {"error": str(exc)}
    addresses = [{"dev": str(e.get("ifname", "")), "cidr": "%s/%s" % (a["local"], a.get("prefixlen", ""))}
                 for e in addrs for a in e.get("addr_info") or []
                 if isinstance(a, dict) and a.get("local") and a.get("family") in ("inet", "inet6")]
    default = None
    table = []
    for r in routes:
        dst, dev = str(r.get("dst", "")), str(r.get("dev", ""))
        if dst == "default":
            default = default or ("via %s dev %s" % (r["gateway"], dev) if r.get("gateway") else "dev %s" % dev)
        elif dst and r.get("type", "unicast") == "unicast":
            table.append({"dst": dst, "dev": dev})
    return {"addresses": addresses, "routes": table, "default_route": default}


def probe_tcp(address, port, timeout=2.0):
    """``(True, "")`` when a TCP connection to ``address:port`` opens within ``timeout``, else ``(False, why)``."""
    try:
        netguard.check(address)
        with socket.create_connection((address, port), timeout=timeout):
            return True, ""
    except OSError as exc:
        return False, str(exc)


def gather(root="/", run=None, disk_paths=(), peers=None, peer_port=22, probe=probe_tcp, etcd_disk=None,
           distributions=None):
    """Facts of this host. ``run(argv) -> (rc, stdout, stderr)`` runs a program (optional); ``etcd_disk``
    (settings' ``etcd_disk``, for a host with one of its roles): measure that disk's write latency - not on a
    host whose OS is not in ``distributions`` (settings'), which is refused without writing anything."""
    meminfo = parse_meminfo(_read(root, "/proc/meminfo"))
    osr = parse_os_release(_read(root, "/etc/os-release") or _read(root, "/usr/lib/os-release"))
    distribution = {"id": osr.get("ID", ""), "version_id": osr.get("VERSION_ID", ""),
                    "pretty": osr.get("PRETTY_NAME", ""), "id_like": osr.get("ID_LIKE", "")}
    if distributions is not None and platform_status(distribution, distributions) != "supported":
        etcd_disk = None
    listening = parse_listening(_read(root, "/proc/net/tcp"), _read(root, "/proc/net/tcp6"))
    owners = socket_owners(root, set(listening.values())) if listening else {}
    return {
        "hostname": (_read(root, "/proc/sys/kernel/hostname", "") or "").strip() or socket.gethostname(),
        "machine_id": (_read(root, "/etc/machine-id", "") or "").strip(),
        "cpus": _cpus(root),
        "memory_mb": meminfo.get("MemTotal", 0) // 1024,
        "swap_mb": parse_swaps(_read(root, "/proc/swaps")),
        "disks": _disks(root, disk_paths),
        "listening": {str(p): owners.get(i, "") for p, i in sorted(listening.items())},
        "kernel": _kernel(root),
        "cgroup": _cgroup(root),
        "init": (_read(root, "/proc/1/comm", "") or "").strip(),
        "systemd": _exists(root, "/run/systemd/system"),
        "time_sync": _time_sync(run),
        "distribution": distribution,
        "reach": _reach(peers, peer_port, probe),
        "network": gather_networks(run) if run is not None else {"error": "not gathered"},
        "etcd_disk": measure_disk(etcd_disk, root) if etcd_disk else None,
    }


def _cpus(root):
    """The CPUs this process may run on (below another root: the processors of its /proc/cpuinfo)."""
    try:
        cpus = len(os.sched_getaffinity(0)) if root == "/" else None
    except (AttributeError, OSError):
        cpus = None
    if cpus is None:
        cpus = len(re.findall(r"^processor\s*:", _read(root, "/proc/cpuinfo", "") or "", re.M)) or None
    return cpus


def _cgroup(root):
    """``v2``, ``hybrid`` or ``v1``: the cgroup hierarchy mounted at /sys/fs/cgroup."""
    if _exists(root, "/sys/fs/cgroup/cgroup.controllers"):
        return "v2"
    if _exists(root, "/sys/fs/cgroup/unified"):
        return "hybrid"
    return "v1"


def _time_sync(run):
    """Whether timedatectl says the clock is synchronised; None when it cannot tell (or cannot run)."""
    if run is None:
        return None
    rc, out, _err = run(["timedatectl", "show", "-p", "NTPSynchronized", "--value"])
    if rc == 0 and out.strip() in ("yes", "no"):
        return out.strip() == "yes"
    return None


def _disks(root, disk_paths):
    """``{path: {free_mb, measured} or {error}}`` of each path."""
    disks = {}
    for path in disk_paths:
        try:
            disks[path] = dict(zip(("free_mb", "measured"), free_mb(path, root)))
        except OSError as exc:
            disks[path] = {"error": str(exc)}
    return disks


def _reach(peers, peer_port, probe):
    """``{peer: {address, ok, error}}``: a TCP connect to each peer's ``peer_port``."""
    reach = {}
    for name, address in sorted((peers or {}).items()):
        ok, err = probe(address or name, peer_port)
        reach[name] = {"address": address or name, "ok": ok, "error": err}
    return reach


def _kernel(root):
    """The kernel features preflight checks, and the state of the modules the install loads."""
    filesystems = _read(root, "/proc/filesystems", "") or ""
    modules = _read(root, "/proc/modules", "") or ""

    def module(name):
        return _exists(root, "/sys/module/" + name) or re.search(r"^%s\s" % name, modules, re.M) is not None

    ip_forward = (_read(root, "/proc/sys/net/ipv4/ip_forward", "") or "").strip()
    release = (_read(root, "/proc/sys/kernel/osrelease", "") or "").strip()
    builtin, loadable = module_files(root, release)
    return {
        "release": release,
        "bridge_netfilter": _exists(root, "/proc/sys/net/bridge/bridge-nf-call-iptables"),
        "overlayfs": re.search(r"\toverlay$", filesystems, re.M) is not None,
        "ip_forward": ip_forward == "1" if ip_forward else None,
        "ipvs": _exists(root, "/proc/net/ip_vs") or module("ip_vs"),
        "ipip": module("ipip") or _exists(root, "/sys/class/net/tunl0"),
        "wireguard": module("wireguard"),
        # The modules the install loads: loaded now, built into the kernel, or loadable
        # (a module file for the running kernel).
        "modules": {name: {"loaded": module(name), "builtin": name in builtin, "loadable": name in loadable}
                    for name in sorted(NEEDED_MODULES.values())},
    }
