# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: host preflight checks (gather, judge, report).

Three layers, each plain data in and out:

* :func:`gather` reads one host's state (``/proc``, ``/sys``, ``/etc``, ``statvfs``, TCP
  connects to its peers). Everything it touches is below ``root`` and every program it runs
  goes through the ``run`` callable, so tests feed it a fake tree.
* :func:`judge_host` turns one host's facts into results ``{check, status, message}``
  against thresholds; :func:`judge_inventory` adds the checks that need every host at once
  (unique hostnames and machine-ids, reachability) on the controller.
* :func:`render_report` builds the host x check table and the list of what to do.

A status is ``pass``, ``install`` (not ready yet, but ``mooring.cluster.install`` configures it:
no action needed, never a failure or a warning), ``warn``, ``fail`` or ``ignored`` (a check named
in the ignore list). Which checks the install configures is a setting (``install_configures``);
a check not in it keeps blocking. Nothing here changes anything on a host.
"""

from __future__ import annotations

import copy
import decimal
import ipaddress
import json
import os
import re
import socket
import tempfile
import time

from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


class PreflightError(MooringError):
    """Preflight was given bad settings (the message names the setting and what to do)."""


ROLES = ("control_plane", "etcd", "workers")
STATUSES = ("pass", "install", "warn", "fail", "ignored")
# Report columns, in order. Every result's ``check`` is one of these.
CHECKS = (
    "cpu", "memory", "disk", "swap", "ports", "bridge_netfilter", "overlayfs", "ip_forward",
    "ipvs", "ipip", "wireguard", "cgroup", "systemd", "time_sync", "distribution",
    "hostname", "machine_id", "reachability", "default_route", "networks", "etcd_disk", "clock",
)
KERNEL_FEATURES = ("ipvs", "ipip", "wireguard")
# What the install (roles/kubeadm: tasks/swap.yml, tasks/kernel.yml) configures on a host that is
# not ready yet. A check named in ``install_configures`` gets status ``install`` instead of
# failing, as long as the install can do it (a kernel module it needs must exist for the kernel).
INSTALL_CONFIGURABLE = ("swap", "bridge_netfilter", "overlayfs", "ip_forward")
DEFAULT_INSTALL_CONFIGURES = list(INSTALL_CONFIGURABLE)
# The kernel module behind a check, which the install loads (roles/kubeadm vars __kubeadm_kernel_modules).
NEEDED_MODULES = {"bridge_netfilter": "br_netfilter", "overlayfs": "overlay"}

MIB = 1024 * 1024

# Minimum (fail below) and recommended (warn below) per role; a host with several roles
# must meet the highest of them. Figures: kubeadm's own preflight (2 CPUs, 1700 MB for a
# control plane) and etcd's hardware guidance.
DEFAULT_THRESHOLDS = {
    "control_plane": {"cpus": {"min": 2, "recommended": 4}, "memory_mb": {"min": 1700, "recommended": 4096}},
    "etcd": {"cpus": {"min": 2, "recommended": 2}, "memory_mb": {"min": 2048, "recommended": 8192}},
    "workers": {"cpus": {"min": 1, "recommended": 2}, "memory_mb": {"min": 1024, "recommended": 2048}},
}
DEFAULT_DISKS = [
    {"path": "/var/lib/etcd", "roles": ["etcd"], "min_free_mb": 2048, "recommended_free_mb": 10240,
     "purpose": "etcd data"},
    {"path": "/var/lib/containerd", "roles": list(ROLES), "min_free_mb": 10240, "recommended_free_mb": 51200,
     "purpose": "containerd images"},
    {"path": "/var/lib/mooring", "roles": list(ROLES), "min_free_mb": 4096, "recommended_free_mb": 10240,
     "purpose": "the air-gap bundle"},
]
DEFAULT_PORTS = {
    "control_plane": [6443, 10250, 10257, 10259],
    "etcd": [2379, 2380],
    "workers": [10250, 10256],
}
# Our own components may hold their ports on a re-run: that is not a conflict.
OWN_PROCESSES = ("kube-apiserver", "kube-controller", "kube-scheduler", "kubelet", "kube-proxy", "etcd")
# The host operating systems the bundle installs onto - the one definition (docs/platforms.md); preflight's
# default and the only values preflight_distributions may narrow it to. The bundle carries Debian packages only:
# the catalog names host packages under ``packages.debian``, a bundle is built for distro ``debian``
# (bundle/build.py), its .debs are Debian 12 "bookworm"'s (the controller's or the execution environment's apt,
# the test mirror) and the roles install them with apt from the bundle's own repository. A unit test keeps this
# equal to the distros the catalog carries packages for. os-release ID -> name, VERSION_ID -> codename, and how
# the host installs the packages.
PLATFORMS = {
    "debian": {"name": "Debian", "versions": {"12": "bookworm"}, "packages": "Debian packages (.deb, installed with apt)"},
}
DEFAULT_DISTRIBUTIONS = {os_id: sorted(p["versions"]) for os_id, p in PLATFORMS.items()}
# The installer spec's defaults (spec/installer.py DEFAULTS; a unit test keeps them equal): the networks a
# cluster gets when neither a lock nor preflight_networks names them.
DEFAULT_NETWORKS = {"pod": "10.32.0.0/16", "service": "10.96.0.0/16"}
NETWORK_NAMES = {"pod": "pod CIDR (spec.kubernetes.podCIDR)", "service": "service CIDR (spec.kubernetes.serviceCIDR)"}
# Devices of the cluster's own networking: on an installed host their addresses and routes lie inside the
# pod or service CIDR on purpose (CNI bridges and tunnels, kube-proxy's IPVS dummy), so they are no clash.
CLUSTER_DEVICES = re.compile(r"^(cni|flannel|cali|tunl|vxlan|cilium|weave|kube-ipvs|antrea|genev|nodelocaldns|lxc)")
# etcd's disk: the write pattern of its write-ahead log (small writes, each followed by fdatasync), measured
# in the data directory (its nearest existing parent), bounded in bytes and time. etcd's hardware guidance:
# the 99th percentile of fdatasync under 10 ms; far above it, leader elections and timeouts follow.
DEFAULT_ETCD_DISK = {"path": "/var/lib/etcd", "roles": ["etcd"], "warn_p99_ms": 10, "fail_p99_ms": 100,
                     "bytes": 1024 * 1024, "operation_bytes": 2300, "timeout_s": 15}
# Clocks: a host this far from the controller (where the PKI is made and dated) fails, beyond the
# measurement's own error bound.
DEFAULT_MAX_CLOCK_OFFSET = 2.0
HOSTNAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$")
TCP_LISTEN = "0A"


# ---------------------------------------------------------------- settings

def settings(thresholds=None, disks=None, ports=None, distributions=None, kernel_features=None, ignore=None,
             install_configures=None, networks=None, etcd_disk=None, max_clock_offset=None):
    """Validated settings: user values merged over the defaults. Raises PreflightError.

    ``install_configures`` None means the default (every check the install configures);
    ``[]`` makes all of them blocking again (hosts prepared otherwise).
    """
    problems = []
    th = copy.deepcopy(DEFAULT_THRESHOLDS)
    for role, items in (thresholds or {}).items():
        if role not in ROLES:
            problems.append("thresholds: unknown role %r (use one of %s)" % (role, ", ".join(ROLES)))
            continue
        if not isinstance(items, dict):
            problems.append("thresholds.%s: must be a mapping of cpus/memory_mb" % role)
            continue
        for key, lim in items.items():
            if key not in ("cpus", "memory_mb"):
                problems.append("thresholds.%s: unknown key %r (use cpus or memory_mb)" % (role, key))
                continue
            if isinstance(lim, (int, float)) and not isinstance(lim, bool):
                lim = {"min": lim}
            if not isinstance(lim, dict) or set(lim) - {"min", "recommended"}:
                problems.append("thresholds.%s.%s: expected a number or {min, recommended}, got %r" % (role, key, lim))
                continue
            th[role][key].update(lim)
            if th[role][key]["recommended"] < th[role][key]["min"]:
                th[role][key]["recommended"] = th[role][key]["min"]
            for k, v in th[role][key].items():
                if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                    problems.append("thresholds.%s.%s.%s: must be a number >= 0, got %r" % (role, key, k, v))
    dk = []
    for i, d in enumerate(DEFAULT_DISKS if disks is None else disks):
        if not isinstance(d, dict) or not str(d.get("path", "")).startswith("/"):
            problems.append("disks[%d]: needs an absolute path, got %r" % (i, d))
            continue
        item = {"roles": list(ROLES), "min_free_mb": 0, "recommended_free_mb": 0, "purpose": d["path"]}
        item.update(d)
        bad_roles = [r for r in item["roles"] if r not in ROLES]
        if bad_roles:
            problems.append("disks[%d].roles: unknown %s (use %s)" % (i, bad_roles, ", ".join(ROLES)))
        item["recommended_free_mb"] = max(item["recommended_free_mb"], item["min_free_mb"])
        dk.append(item)
    pt = copy.deepcopy(DEFAULT_PORTS if ports is None else ports)
    for role, plist in pt.items():
        if role not in ROLES:
            problems.append("ports: unknown role %r (use one of %s)" % (role, ", ".join(ROLES)))
        elif not all(isinstance(p, int) and 0 < p < 65536 for p in plist):
            problems.append("ports.%s: every port must be an integer 1-65535, got %r" % (role, plist))
    kf = list(kernel_features or [])
    for f in kf:
        if f not in KERNEL_FEATURES:
            problems.append("kernel_features: unknown feature %r (use %s)" % (f, ", ".join(KERNEL_FEATURES)))
    ig = list(ignore or [])
    for entry in ig:
        check = entry.split(":", 1)[-1]
        if check not in CHECKS:
            problems.append("ignore: unknown check %r (use CHECK or HOST:CHECK, checks: %s)"
                            % (entry, ", ".join(CHECKS)))
    ic = list(DEFAULT_INSTALL_CONFIGURES if install_configures is None else install_configures)
    for check in ic:
        if check not in INSTALL_CONFIGURABLE:
            problems.append("install_configures: %r is not something the install configures (use any of %s)"
                            % (check, ", ".join(INSTALL_CONFIGURABLE)))
    nets = dict(DEFAULT_NETWORKS if networks is None else networks)
    for name, cidr in sorted(nets.items()):
        if name not in NETWORK_NAMES:
            problems.append("networks: unknown network %r (use %s)" % (name, ", ".join(sorted(NETWORK_NAMES))))
            continue
        try:
            ipaddress.ip_network(str(cidr), strict=False)
        except ValueError as exc:
            problems.append("networks.%s: %r is not a network in CIDR notation (%s)" % (name, cidr, exc))
    ed = dict(DEFAULT_ETCD_DISK)
    ed.update(etcd_disk or {})
    unknown = sorted(set(ed) - set(DEFAULT_ETCD_DISK))
    if unknown:
        problems.append("etcd_disk: unknown key(s) %s (use %s)" % (", ".join(unknown), ", ".join(sorted(DEFAULT_ETCD_DISK))))
    if not str(ed["path"]).startswith("/"):
        problems.append("etcd_disk.path: needs an absolute path, got %r" % (ed["path"],))
    if not isinstance(ed["roles"], list) or [r for r in ed["roles"] if r not in ROLES]:
        problems.append("etcd_disk.roles: a list of %s, got %r" % (", ".join(ROLES), ed["roles"]))
    for key, low, high in (("warn_p99_ms", 0, 10000), ("fail_p99_ms", 0, 10000), ("bytes", 0, 64 * MIB),
                           ("operation_bytes", 1, MIB), ("timeout_s", 1, 300)):
        if not isinstance(ed[key], (int, float)) or isinstance(ed[key], bool) or not low <= ed[key] <= high:
            problems.append("etcd_disk.%s: a number from %s to %s, got %r" % (key, low, high, ed[key]))
    clock = DEFAULT_MAX_CLOCK_OFFSET if max_clock_offset is None else max_clock_offset
    if not isinstance(clock, (int, float)) or isinstance(clock, bool) or clock <= 0:
        problems.append("max_clock_offset: seconds, a number above 0, got %r" % (clock,))
    dist = _distributions(distributions, problems)
    if problems:
        raise PreflightError("invalid preflight settings", problems)
    return {"thresholds": th, "disks": dk, "ports": pt, "distributions": dist, "kernel_features": kf,
            "ignore": ig, "install_configures": ic, "networks": nets, "etcd_disk": ed, "max_clock_offset": float(clock)}


def platforms_text(distributions=None):
    """``Debian 12 (bookworm)``: the supported host OSes in words (``distributions``: settings' mapping)."""
    given = DEFAULT_DISTRIBUTIONS if distributions is None else distributions
    parts = []
    for os_id, versions in sorted(given.items()):
        known = PLATFORMS[os_id]["versions"]
        parts.append("%s %s" % (PLATFORMS[os_id]["name"],
                                ", ".join("%s (%s)" % (v, known[v]) for v in sorted(versions))))
    return "; ".join(parts)


def _distributions(distributions, problems):
    """The supported distributions: the default (:data:`PLATFORMS`), or a narrower list. A setting that names an
    OS or version the bundle cannot install onto is a problem: preflight would let that host through."""
    if distributions is None:
        return copy.deepcopy(DEFAULT_DISTRIBUTIONS)
    supported = platforms_text()
    if not isinstance(distributions, dict) or not distributions:
        problems.append("distributions: a mapping of os-release ID to VERSION_IDs, at most %s; got %r (leave it unset "
                        "for the default)" % (supported, distributions))
        return {}
    out = {}
    for os_id, versions in sorted(distributions.items(), key=lambda kv: str(kv[0])):
        versions = [str(v) for v in versions] if isinstance(versions, list) else None
        known = PLATFORMS.get(os_id, {}).get("versions", {})
        if not known:
            problems.append("distributions.%s: the bundle cannot install onto %s (it carries Debian packages "
                            "only); supported: %s - this setting can only narrow that list" % (os_id, os_id, supported))
        elif not versions or set(versions) - set(known):
            problems.append("distributions.%s: %r - supported: %s; this setting can only narrow that list"
                            % (os_id, distributions[os_id], supported))
        else:
            out[os_id] = sorted(set(versions))
    return out


def platform_status(dist, distributions):
    """``supported``, ``family`` (an OS of a supported family - the same package format, e.g. Ubuntu or another
    Debian release - but not a supported release) or ``foreign`` (the bundle cannot install onto it at all)."""
    os_id = dist.get("id") or ""
    if dist.get("version_id") in distributions.get(os_id, ()):
        return "supported"
    family = [os_id] + (dist.get("id_like") or "").split()
    return "family" if set(family) & set(PLATFORMS) else "foreign"


def host_roles(groups):
    """The preflight roles of a host from its group names; a host in none counts as a worker."""
    roles = [r for r in ROLES if r in (groups or [])]
    return roles or ["workers"]


# ---------------------------------------------------------------- gather (on the host)

def _read(root, path, default=None):
    try:
        with open(os.path.join(root, path.lstrip("/")), encoding="utf-8", errors="replace") as f:
            return f.read()
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
            for _dir, _subdirs, files in os.walk(os.path.join(root, moddir.lstrip("/"))):
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


def free_mb(path, root="/"):
    """(free MiB, the existing directory measured) at PATH or its nearest existing parent."""
    p = existing_parent(path, root)
    st = os.statvfs(p)
    return st.f_bavail * st.f_frsize // MIB, "/" + os.path.relpath(p, root).lstrip(".")


def fdatasync_latencies(directory, operation_bytes, total_bytes, timeout, clock=time.monotonic):
    """fdatasync latencies (ns) of writing ``total_bytes``, ``operation_bytes`` at a time, to a new temporary
    file in ``directory`` (deleted after), each write followed by fdatasync - etcd's write-ahead log pattern,
    as fio's ``--rw=write --ioengine=sync --fdatasync=1`` measures it. Stops at ``timeout`` seconds with the
    latencies measured so far."""
    fd, temp = tempfile.mkstemp(prefix=".mooring-fsperf-", dir=directory)
    latencies = []
    try:
        block, written, deadline = os.urandom(operation_bytes), 0, clock() + timeout
        while written < total_bytes and clock() < deadline:
            view = memoryview(block)[:min(operation_bytes, total_bytes - written)]
            while view:
                view = view[os.write(fd, view):]
            started = time.perf_counter_ns()
            os.fdatasync(fd)
            latencies.append(time.perf_counter_ns() - started)
            written += min(operation_bytes, total_bytes - written)
    finally:
        os.close(fd)
        os.unlink(temp)
    return latencies


def nearest_rank(ordered, percent):
    """The nearest-rank percentile (``percent``: a number or its text, as fio's "99.000000") of an ascending list."""
    rank = int((decimal.Decimal(str(percent)) * len(ordered) / 100).to_integral_value(rounding=decimal.ROUND_CEILING))
    return ordered[min(len(ordered), max(rank, 1)) - 1]


def existing_parent(path, root="/"):
    """PATH, or its nearest parent that exists, below ``root``."""
    p = os.path.join(root, path.lstrip("/"))
    while not os.path.exists(p) and p not in ("/", root):
        p = os.path.dirname(p)
    return p


def measure_disk(spec, root="/"):
    """etcd's disk: fdatasync latencies in ``spec["path"]`` (its nearest existing parent: preflight creates
    nothing) -> ``{p99_ms, p50_ms, writes, measured}`` or ``{error}``."""
    where = existing_parent(spec["path"], root)
    try:
        latencies = sorted(fdatasync_latencies(where, int(spec["operation_bytes"]), int(spec["bytes"]),
                                               float(spec["timeout_s"])))
    except OSError as exc:
        return {"error": "%s: %s" % (where, exc.strerror or exc)}
    if not latencies:
        return {"error": "%s: no write completed within %ss" % (where, spec["timeout_s"])}
    return {"p99_ms": round(nearest_rank(latencies, 99) / 1e6, 3), "p50_ms": round(nearest_rank(latencies, 50) / 1e6, 3),
            "writes": len(latencies), "measured": "/" + os.path.relpath(where, root).lstrip(".")}


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
    try:
        cpus = len(os.sched_getaffinity(0)) if root == "/" else None
    except (AttributeError, OSError):
        cpus = None
    if cpus is None:
        cpus = len(re.findall(r"^processor\s*:", _read(root, "/proc/cpuinfo", "") or "", re.M)) or None
    if _exists(root, "/sys/fs/cgroup/cgroup.controllers"):
        cgroup = "v2"
    elif _exists(root, "/sys/fs/cgroup/unified"):
        cgroup = "hybrid"
    else:
        cgroup = "v1"
    filesystems = _read(root, "/proc/filesystems", "") or ""
    modules = _read(root, "/proc/modules", "") or ""

    def module(name):
        return _exists(root, "/sys/module/" + name) or re.search(r"^%s\s" % name, modules, re.M) is not None

    time_sync = None
    if run is not None:
        rc, out, _err = run(["timedatectl", "show", "-p", "NTPSynchronized", "--value"])
        if rc == 0 and out.strip() in ("yes", "no"):
            time_sync = out.strip() == "yes"
    disks = {}
    for path in disk_paths:
        try:
            disks[path] = dict(zip(("free_mb", "measured"), free_mb(path, root)))
        except OSError as exc:
            disks[path] = {"error": str(exc)}
    reach = {}
    for name, address in sorted((peers or {}).items()):
        ok, err = probe(address or name, peer_port)
        reach[name] = {"address": address or name, "ok": ok, "error": err}
    ip_forward = (_read(root, "/proc/sys/net/ipv4/ip_forward", "") or "").strip()
    release = (_read(root, "/proc/sys/kernel/osrelease", "") or "").strip()
    builtin, loadable = module_files(root, release)
    return {
        "hostname": (_read(root, "/proc/sys/kernel/hostname", "") or "").strip() or socket.gethostname(),
        "machine_id": (_read(root, "/etc/machine-id", "") or "").strip(),
        "cpus": cpus,
        "memory_mb": meminfo.get("MemTotal", 0) // 1024,
        "swap_mb": parse_swaps(_read(root, "/proc/swaps")),
        "disks": disks,
        "listening": {str(p): owners.get(i, "") for p, i in sorted(listening.items())},
        "kernel": {
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
        },
        "cgroup": cgroup,
        "init": (_read(root, "/proc/1/comm", "") or "").strip(),
        "systemd": _exists(root, "/run/systemd/system"),
        "time_sync": time_sync,
        "distribution": distribution,
        "reach": reach,
        "network": gather_networks(run) if run is not None else {"error": "not gathered"},
        "etcd_disk": measure_disk(etcd_disk, root) if etcd_disk else None,
    }


# ---------------------------------------------------------------- judge

def _result(check, status, message):
    return {"check": check, "status": status, "message": message}


def _need(th, roles, key):
    """(min, recommended, role that sets the min) across a host's roles."""
    mins = [(th[r][key]["min"], r) for r in roles]
    rec = max(th[r][key]["recommended"] for r in roles)
    value, role = max(mins)
    return value, rec, role


# What the install does for each check it configures (status ``install``), after the finding.
INSTALL_DOES = {
    "swap": "the install turns it off (swapoff -a) and comments it out in /etc/fstab (kubelet failSwapOn)",
    "bridge_netfilter": "the install loads it (modprobe br_netfilter; at boot from "
                        "/etc/modules-load.d/mooring-kubernetes.conf) and sets net.bridge.bridge-nf-call-iptables=1 "
                        "and net.bridge.bridge-nf-call-ip6tables=1 in /etc/sysctl.d/90-mooring-kubernetes.conf",
    "overlayfs": "the install loads it (modprobe overlay; at boot from /etc/modules-load.d/mooring-kubernetes.conf)",
    "ip_forward": "the install turns it on (net.ipv4.ip_forward=1, kept in /etc/sysctl.d/90-mooring-kubernetes.conf)",
}
# Where a needed kernel feature shows when its module is in: what gather looks at.
FEATURE_SHOWS = {
    "bridge_netfilter": "/proc/sys/net/bridge/bridge-nf-call-iptables",
    "overlayfs": "overlay in /proc/filesystems",
}


def _needed_module(check, kernel, configures, blocking):
    """Result for a kernel feature the install gets by loading a module (it is missing now).

    ``configures`` is the install_configures setting; ``blocking`` the failure message when
    the check is not in it.
    """
    if check not in configures:
        return _result(check, "fail", blocking)
    name = NEEDED_MODULES[check]
    mod = (kernel.get("modules") or {}).get(name) or {}
    release = kernel.get("release") or "?"
    if mod.get("loaded") or mod.get("builtin"):
        state = "loaded" if mod.get("loaded") else "built into kernel %s" % release
        return _result(check, "fail", "%s is %s but %s is missing, so loading it (what the install does) will not "
                       "help: find out why (a container's /proc or network namespace?)"
                       % (name, state, FEATURE_SHOWS[check]))
    if mod.get("loadable"):
        return _result(check, "install", "%s is not loaded: %s" % (name, INSTALL_DOES[check]))
    return _result(check, "fail", "%s is missing and kernel %s cannot load it (not loaded, not built in, no module "
                   "file under /lib/modules/%s): the install cannot configure it; install the modules package of "
                   "the running kernel or boot a kernel that has %s" % (name, release, release, name))


def judge_host(facts, roles, cfg):
    """Results of the single-host checks for one host's facts."""
    res = []
    configures = cfg.get("install_configures", DEFAULT_INSTALL_CONFIGURES)
    th = cfg["thresholds"]
    cpus = facts.get("cpus") or 0
    lo, rec, role = _need(th, roles, "cpus")
    if cpus < lo:
        res.append(_result("cpu", "fail", "%d CPU(s); %s needs at least %d: give the host more CPUs"
                           % (cpus, role, lo)))
    elif cpus < rec:
        res.append(_result("cpu", "warn", "%d CPU(s); %d recommended for %s" % (cpus, rec, "+".join(roles))))
    else:
        res.append(_result("cpu", "pass", "%d CPU(s)" % cpus))
    mem = facts.get("memory_mb") or 0
    lo, rec, role = _need(th, roles, "memory_mb")
    if mem < lo:
        res.append(_result("memory", "fail", "%d MiB memory; %s needs at least %d MiB: add memory"
                           % (mem, role, lo)))
    elif mem < rec:
        res.append(_result("memory", "warn", "%d MiB memory; %d MiB recommended for %s"
                           % (mem, rec, "+".join(roles))))
    else:
        res.append(_result("memory", "pass", "%d MiB memory" % mem))
    for d in cfg["disks"]:
        if not set(d["roles"]) & set(roles):
            continue
        got = (facts.get("disks") or {}).get(d["path"], {})
        if "free_mb" not in got:
            res.append(_result("disk", "fail", "%s (%s): free space unknown (%s): check the path"
                               % (d["path"], d["purpose"], got.get("error", "not measured"))))
        elif got["free_mb"] < d["min_free_mb"]:
            args = (d["path"], d["purpose"], got["free_mb"], got["measured"], d["min_free_mb"])
            res.append(_result("disk", "fail", "%s (%s): %d MiB free on %s, needs %d MiB: free space or mount a "
                               "bigger disk there" % args))
        elif got["free_mb"] < d["recommended_free_mb"]:
            res.append(_result("disk", "warn", "%s (%s): %d MiB free, %d MiB recommended"
                               % (d["path"], d["purpose"], got["free_mb"], d["recommended_free_mb"])))
        else:
            res.append(_result("disk", "pass", "%s: %d MiB free" % (d["path"], got["free_mb"])))
    swap = facts.get("swap_mb") or 0
    if not swap:
        res.append(_result("swap", "pass", "swap off"))
    elif "swap" in configures:
        res.append(_result("swap", "install", "swap is on (%d MiB): %s" % (swap, INSTALL_DOES["swap"])))
    else:
        res.append(_result("swap", "fail", "swap is on (%d MiB): kubelet refuses to start; run `swapoff -a` and "
                           "remove swap from /etc/fstab" % swap))
    wanted = sorted({p for r in roles for p in cfg["ports"].get(r, [])})
    listening = facts.get("listening") or {}
    busy = []
    own = []
    for p in wanted:
        if str(p) in listening:
            owner = listening[str(p)]
            if owner.startswith(OWN_PROCESSES):
                own.append("%d (%s)" % (p, owner))
            else:
                busy.append("%d (%s)" % (p, owner or "unknown process"))
    if busy:
        res.append(_result("ports", "fail", "port(s) in use: %s: stop what holds them or move it to another port"
                           % ", ".join(busy)))
    else:
        res.append(_result("ports", "pass", "%s free%s" % (
            ",".join(str(p) for p in wanted) or "no ports",
            "; held by our own components: %s" % ", ".join(own) if own else "")))
    k = facts.get("kernel") or {}
    res.append(_result("bridge_netfilter", "pass", "bridge netfilter available") if k.get("bridge_netfilter")
               else _needed_module("bridge_netfilter", k, configures, "bridge netfilter missing: `modprobe br_netfilter` "
                                   "and add it to /etc/modules-load.d"))
    res.append(_result("overlayfs", "pass", "overlayfs available") if k.get("overlayfs")
               else _needed_module("overlayfs", k, configures, "overlayfs missing: `modprobe overlay` (containerd needs "
                                   "it)"))
    if k.get("ip_forward"):
        res.append(_result("ip_forward", "pass", "net.ipv4.ip_forward=1"))
    elif "ip_forward" in configures:
        res.append(_result("ip_forward", "install", "net.ipv4.ip_forward is off: %s" % INSTALL_DOES["ip_forward"]))
    else:
        res.append(_result("ip_forward", "warn", "net.ipv4.ip_forward is off: pod traffic needs it; set "
                           "net.ipv4.ip_forward=1 (sysctl and /etc/sysctl.d) and make sure nothing turns it off "
                           "again"))
    labels = {"ipvs": "IPVS (kube-proxy ipvs mode)", "ipip": "IPIP (Calico IPIP encapsulation)",
              "wireguard": "WireGuard (encrypted pod traffic)"}
    for f in KERNEL_FEATURES:
        if k.get(f):
            res.append(_result(f, "pass", "%s available" % labels[f]))
        elif f in cfg["kernel_features"]:
            res.append(_result(f, "warn", "%s is not available in kernel %s but a chosen add-on uses it: load the "
                               "module or choose an add-on setting without it" % (labels[f], k.get("release", "?"))))
        else:
            res.append(_result(f, "pass", "%s absent, not needed by the chosen add-ons" % labels[f]))
    cg = facts.get("cgroup")
    driver = "systemd" if facts.get("init") == "systemd" else "cgroupfs"
    if cg == "v2":
        res.append(_result("cgroup", "pass", "cgroup v2, driver %s" % driver))
    else:
        res.append(_result("cgroup", "warn", "cgroup %s, driver %s: Kubernetes keeps cgroup v1 in maintenance "
                           "mode; boot with systemd.unified_cgroup_hierarchy=1 for v2" % (cg, driver)))
    res.append(_result("systemd", "pass", "systemd is PID 1") if facts.get("systemd")
               else _result("systemd", "fail", "systemd is not running as init (%s): the roles manage services "
                            "with systemd" % (facts.get("init") or "unknown")))
    ts = facts.get("time_sync")
    if ts:
        res.append(_result("time_sync", "pass", "clock synchronised"))
    else:
        res.append(_result("time_sync", "warn", "clock %s: enable chrony or systemd-timesyncd against a reachable "
                           "time server (certificates and etcd need agreeing clocks)"
                           % ("not synchronised" if ts is False else "sync state unknown (no timedatectl)")))
    res.append(judge_distribution(facts.get("distribution") or {}, cfg["distributions"]))
    res.extend(judge_network(facts.get("network") or {}, cfg["networks"]))
    if set(roles) & set(cfg["etcd_disk"]["roles"]) and facts.get("etcd_disk") is not None:  # None: a check run
        res.append(judge_etcd_disk(facts["etcd_disk"], cfg["etcd_disk"]))
    return res


def judge_distribution(dist, distributions):
    """The host's OS against the supported ones (settings' ``distributions``, within :data:`PLATFORMS`). An OS of
    another family (no Debian packages, no apt) fails and ``preflight_ignore`` cannot skip it (``ignorable``
    false): the install would stop half way on that host."""
    status = platform_status(dist, distributions)
    host = "%s %s" % (dist.get("id") or "unknown", dist.get("version_id") or "(no VERSION_ID)")
    if status == "supported":
        return _result("distribution", "pass", dist.get("pretty") or host)
    seen = "os-release ID=%s VERSION_ID=%s%s" % (dist.get("id") or "(none)", dist.get("version_id") or "(none)",
                                                 " ID_LIKE=%s" % dist["id_like"] if dist.get("id_like") else "")
    if dist.get("pretty"):
        seen = "%s, %s" % (dist["pretty"], seen)
    carries = "; ".join(sorted({PLATFORMS[d]["packages"] for d in distributions})) or "nothing"
    message = ("host OS %s (%s) is not supported: the bundle carries %s for %s only; install onto a supported "
               "host OS (docs/platforms.md)" % (host, seen, carries, platforms_text(distributions) or "no host OS"))
    result = _result("distribution", "fail", message)
    if status == "foreign":
        result["ignorable"] = False
    return result


def network_clashes(network, cidr):
    """This host's addresses and routes that overlap ``cidr`` (``"10.89.3.11/24 (eth0)"``), the cluster's own
    devices' entries inside it aside (a CNI bridge or tunnel, kube-proxy's IPVS dummy on a re-run)."""
    net = ipaddress.ip_network(cidr, strict=False)
    found = []
    for kind, key, items in (("address", "cidr", network.get("addresses") or []),
                             ("route", "dst", network.get("routes") or [])):
        for item in items:
            try:
                other = ipaddress.ip_interface(item[key]).network
            except (KeyError, ValueError):
                continue
            if other.version != net.version or not other.overlaps(net) or other.prefixlen == 0:
                continue
            if CLUSTER_DEVICES.match(item.get("dev") or "") and other.subnet_of(net):
                continue
            if other.is_loopback or other.is_link_local:
                continue
            found.append("%s %s (%s)" % (kind, item[key], item.get("dev") or "no device"))
    return found


def judge_network(network, networks):
    """The default route, and the cluster's pod and service networks against this host's addresses and routes."""
    if network.get("error"):
        return [_result("default_route", "warn", "routes not read (%s)" % network["error"]),
                _result("networks", "warn", "addresses and routes not read (%s): the pod and service CIDRs are not "
                        "checked against this host's networks" % network["error"])]
    res = []
    if network.get("default_route"):
        res.append(_result("default_route", "pass", "default route %s" % network["default_route"]))
    else:
        res.append(_result("default_route", "fail", "no default route: kubelet and kube-proxy take the node's address "
                           "from it; add one (ip route add default via GATEWAY, and in the host's network "
                           "configuration), even on an air-gapped network"))
    clashes = []
    for name, cidr in sorted(networks.items()):
        found = network_clashes(network, cidr)
        if found:
            clashes.append("%s %s overlaps this host's %s" % (NETWORK_NAMES[name], cidr, ", ".join(found[:4])))
    if clashes:
        res.append(_result("networks", "fail", "%s: pods or services there would be unreachable from this host, or "
                           "its own network from them; choose ranges that no host uses (in the installer spec)"
                           % "; ".join(clashes)))
    else:
        res.append(_result("networks", "pass", "%s clear of this host's %d address(es) and %d route(s)" % (
            " and ".join("%s %s" % (name, cidr) for name, cidr in sorted(networks.items())) or "no networks",
            len(network.get("addresses") or []), len(network.get("routes") or []))))
    return res


def judge_etcd_disk(measured, spec):
    """etcd's disk latency (fdatasync p99) against the warn and fail limits."""
    if measured.get("error"):
        return _result("etcd_disk", "warn", "etcd disk latency not measured (%s)" % measured["error"])
    what = "fdatasync p99 %.1f ms (p50 %.1f ms, %d writes of %d bytes in %s)" % (
        measured["p99_ms"], measured["p50_ms"], measured["writes"], spec["operation_bytes"], measured["measured"])
    if measured["p99_ms"] > spec["fail_p99_ms"]:
        return _result("etcd_disk", "fail", "%s, above %s ms: etcd on this disk loses its leader and times out; "
                       "put %s on a faster disk (SSD)" % (what, spec["fail_p99_ms"], spec["path"]))
    if measured["p99_ms"] > spec["warn_p99_ms"]:
        return _result("etcd_disk", "warn", "%s; etcd wants under %s ms: expect slow writes and leader elections "
                       "under load" % (what, spec["warn_p99_ms"]))
    return _result("etcd_disk", "pass", what)


def clock_offset(sent, received, replied, back):
    """A host clock's offset from the controller's, as NTP estimates it from one exchange: the controller
    sent at ``sent`` and got the answer at ``back`` (its clock), the host received at ``received`` and
    replied at ``replied`` (its clock). ``{offset, error}`` in seconds; the true offset lies within
    offset +- error (half the round trip less the host's own time)."""
    delay = max(0.0, (back - sent) - (replied - received))
    return {"offset": round(((received - sent) + (replied - back)) / 2.0, 3), "error": round(delay / 2.0, 3)}


def judge_clock(clock, limit):
    """A host's clock offset from the controller (:func:`clock_offset`) against ``limit`` seconds."""
    offset, error = clock["offset"], clock["error"]
    where = "%.2f s %s the controller's (+-%.2f s)" % (abs(offset), "ahead of" if offset > 0 else "behind", error)
    if abs(offset) - error > limit:
        return _result("clock", "fail", "clock %s; more than %g s apart: certificates made on the controller are "
                       "not yet valid (or expire early) here and etcd reports clock drift; synchronise the hosts and "
                       "the controller (chrony or systemd-timesyncd against one time source)" % (where, limit))
    if abs(offset) + error > limit:
        return _result("clock", "warn", "clock %s; cannot tell whether it is within %g s (slow round trip)"
                       % (where, limit))
    return _result("clock", "pass", "clock %s" % where)


def judge_inventory(hosts, max_clock_offset=DEFAULT_MAX_CLOCK_OFFSET):
    """Cross-host results, judged once on the controller.

    ``hosts`` maps inventory name to ``{"facts": {...}}`` or, for a host preflight could not
    reach, ``{"unreachable": "why"}``. Returns ``{host: [results]}``.
    """
    out = {h: [] for h in hosts}
    by_name = {}
    by_id = {}
    for h, data in sorted(hosts.items()):
        facts = data.get("facts")
        if facts is None:
            out[h].append(_result("reachability", "fail", "preflight could not run on this host: %s"
                                  % (data.get("unreachable") or "no result")))
            continue
        by_name.setdefault(facts.get("hostname", ""), []).append(h)
        by_id.setdefault(facts.get("machine_id", ""), []).append(h)
    for h, data in sorted(hosts.items()):
        facts = data.get("facts")
        if facts is None:
            continue
        hn = facts.get("hostname", "")
        others = [o for o in by_name.get(hn, []) if o != h]
        if not HOSTNAME_RE.match(hn) or len(hn) > 253:
            out[h].append(_result("hostname", "fail", "hostname %r is not a valid lowercase DNS name (RFC 1123): "
                                  "Kubernetes node names must be; set one with hostnamectl" % hn))
        elif others:
            out[h].append(_result("hostname", "fail", "hostname %r is also used by %s: give every host its own "
                                  "hostname (hostnamectl set-hostname)" % (hn, ", ".join(others))))
        else:
            out[h].append(_result("hostname", "pass", "%s (unique)" % hn))
        mid = facts.get("machine_id", "")
        others = [o for o in by_id.get(mid, []) if o != h]
        if not mid:
            out[h].append(_result("machine_id", "fail", "/etc/machine-id is empty: run `systemd-machine-id-setup`"))
        elif others:
            out[h].append(_result("machine_id", "fail", "machine-id %s is also used by %s (cloned image?): run "
                                  "`rm /etc/machine-id && systemd-machine-id-setup` on one of them"
                                  % (mid[:12], ", ".join(others))))
        else:
            out[h].append(_result("machine_id", "pass", "%s (unique)" % mid[:12]))
        reach = facts.get("reach") or {}
        failed = ["%s (%s: %s)" % (p, r["address"], r.get("error") or "no answer")
                  for p, r in sorted(reach.items()) if not r.get("ok")]
        if failed:
            out[h].append(_result("reachability", "fail", "cannot reach %s: open the firewall between the hosts"
                                  % ", ".join(failed)))
        else:
            out[h].append(_result("reachability", "pass", "reaches %d peer(s)" % len(reach)))
        if facts.get("clock"):  # measured by the action plugin, from the controller
            out[h].append(judge_clock(facts["clock"], max_clock_offset))
    return out


def apply_ignore(host, results, ignore):
    """Mark results named in ``ignore`` (CHECK or HOST:CHECK) as ``ignored`` - all but those with ``ignorable``
    false (a host OS the bundle cannot install onto), which stay failed."""
    names = {e for e in ignore if ":" not in e}
    names |= {e.split(":", 1)[1] for e in ignore if ":" in e and e.split(":", 1)[0] == host}
    out = []
    for r in results:
        if r["check"] in names and r["status"] in ("warn", "fail"):
            if r.get("ignorable", True):
                r = dict(r, status="ignored", message="%s [%s, ignored by preflight_ignore]" % (r["message"], r["status"]))
            else:
                r = dict(r, message="%s [preflight_ignore cannot skip this one]" % r["message"])
        out.append(r)
    return out


# ---------------------------------------------------------------- report

CELL = {"pass": "ok", "install": "fix", "warn": "WARN", "fail": "FAIL", "ignored": "ign"}
# Short column headers, so the table stays narrow; the legend under it names them.
SHORT = {
    "cpu": "cpu", "memory": "mem", "disk": "disk", "swap": "swap", "ports": "ports", "bridge_netfilter": "brnf",
    "overlayfs": "ovl", "ip_forward": "fwd", "ipvs": "ipvs", "ipip": "ipip", "wireguard": "wg", "cgroup": "cgrp",
    "systemd": "sysd", "time_sync": "time", "distribution": "dist", "hostname": "name", "machine_id": "mid",
    "reachability": "reach", "default_route": "route", "networks": "nets", "etcd_disk": "fsync", "clock": "clock",
}
RANK = {"pass": 0, "install": 1, "ignored": 2, "warn": 3, "fail": 4}


def summarise(results_by_host):
    """{"failed": [(host, check, message)], "warnings": [...], "install": [...], "status": {host: {check: status}}}.

    ``install`` lists what the install will configure: neither a failure nor a warning.
    """
    status = {}
    failed = []
    warnings = []
    install = []
    for h in sorted(results_by_host):
        status[h] = {}
        for r in results_by_host[h]:
            cur = status[h].get(r["check"])
            if cur is None or RANK[r["status"]] > RANK[cur]:
                status[h][r["check"]] = r["status"]
            if r["status"] == "fail":
                failed.append((h, r["check"], r["message"]))
            elif r["status"] == "warn":
                warnings.append((h, r["check"], r["message"]))
            elif r["status"] == "install":
                install.append((h, r["check"], r["message"]))
    return {"failed": failed, "warnings": warnings, "install": install, "status": status}


def render_report(results_by_host):
    """The report: a host x check table, then one line per failure, warning and what the install configures."""
    s = summarise(results_by_host)
    checks = [c for c in CHECKS if any(c in st for st in s["status"].values())]
    width = max([len("host")] + [len(h) for h in s["status"]])
    colw = [max(len(SHORT[c]), 4) for c in checks]
    lines = ["  ".join(["host".ljust(width)] + [SHORT[c].ljust(w) for c, w in zip(checks, colw)]).rstrip()]
    lines.append("  ".join(["-" * width] + ["-" * w for w in colw]))
    for h, st in s["status"].items():
        lines.append("  ".join([h.ljust(width)] + [CELL.get(st.get(c), "-").ljust(w)
                                                   for c, w in zip(checks, colw)]).rstrip())
    legend = ["%s=%s" % (SHORT[c], c) for c in checks if SHORT[c] != c]
    if s["install"]:
        legend.append("%s=the install configures it" % CELL["install"])
    lines.append("(%s)" % ", ".join(legend))
    # Checks of HostPreflight documents (troubleshoot.sh): each by name, per host, with its outcome.
    extra = {h: [(c, v) for c, v in st.items() if c not in CHECKS] for h, st in s["status"].items()}
    if any(extra.values()):
        lines.append("")
        lines.append("Host preflights (troubleshoot.sh documents):")
        for h, items in extra.items():
            lines.extend("  %s %s: %s" % (h.ljust(width), CELL.get(v, v), c) for c, v in items)
    if s["failed"]:
        lines.append("")
        lines.append("FAIL (must fix):")
        lines.extend("  %s %s: %s" % item for item in s["failed"])
    if s["warnings"]:
        lines.append("")
        lines.append("WARN (should fix):")
        lines.extend("  %s %s: %s" % item for item in s["warnings"])
    if s["install"]:
        lines.append("")
        lines.append("FIX (not ready yet, the install configures it; nothing to do):")
        lines.extend("  %s %s: %s" % item for item in s["install"])
    lines.append("")
    lines.append("preflight: %d host(s), %d failure(s), %d warning(s)"
                 % (len(s["status"]), len(s["failed"]), len(s["warnings"])))
    return "\n".join(lines), s


def split_registered(registered):
    """(host results, judge_inventory input) from each host's registered host-scope result.

    ``registered`` maps host to what ``register:`` captured: a successful result carries
    ``facts`` and ``results``; an unreachable or failed one carries ``msg``.
    """
    host_results = {}
    inv = {}
    for h, r in sorted((registered or {}).items()):
        r = r or {}
        if r.get("facts") is not None and not r.get("failed") and not r.get("unreachable"):
            host_results[h] = list(r.get("checks") or [])
            inv[h] = {"facts": r["facts"]}
        else:
            inv[h] = {"unreachable": r.get("msg") or ("skipped" if r.get("skipped") else "no result")}
    return host_results, inv


def run_inventory(registered, ignore=(), max_clock_offset=DEFAULT_MAX_CLOCK_OFFSET):
    """Everything the controller decides: merged results, the report text and the summary."""
    host_results, inv = split_registered(registered)
    cross = judge_inventory(inv, max_clock_offset)
    merged = {h: apply_ignore(h, rs, list(ignore)) for h, rs in merge_results(host_results, cross).items()}
    text, summary = render_report(merged)
    return merged, text, summary


def merge_results(host_results, inventory_results):
    """Per-host results followed by the cross-host ones, one list per host."""
    out = {}
    for h in sorted(set(host_results) | set(inventory_results)):
        out[h] = list(host_results.get(h, [])) + list(inventory_results.get(h, []))
    return out
