# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: troubleshoot's host collectors of the system - cpu, memory, diskUsage,
filesystemPerformance, hostOS, hostServices, time, kernelModules, sysctl and cgroups (:data:`COLLECTORS`).

Host side: standard library only. Where mooring measures differently from troubleshoot (see
:mod:`hostcollect`), the collector's docstring says how.
"""

from __future__ import annotations

import os
import re
import socket

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts.hostdisk import MIB, fdatasync_latencies, free_mb, nearest_rank
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts.hostio import CollectError, read_file
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflightgather import module_files, parse_meminfo, parse_os_release
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostconditions
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot.collectspec import spec_int, spec_seconds, spec_text

FSPERF_TIMEOUT = 60.0           # filesystemPerformance default, as troubleshoot
MAX_SYSCTL_FILES = 20000
SYSCTL_VALUE_MAX = 64 * 1024


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
        raise CollectError("no processor in /proc/cpuinfo")
    return {path: {"logicalCount": logical, "physicalCount": len(cores) or logical, "flags": list(flags),
                   "machineArch": os.uname().machine}}


def _memory(host, spec, path):
    total_kb = parse_meminfo(host.read("/proc/meminfo")).get("MemTotal")
    if not total_kb:
        raise CollectError("no MemTotal in /proc/meminfo")
    return {path: {"total": total_kb * 1024}}


def _disk_usage(host, spec, path):
    """diskUsage: the file system of ``path``, or of its nearest existing parent; used = total - free
    (blocks reserved for root count as neither used nor available, as troubleshoot's statfs)."""
    _free, measured = free_mb(spec_text(spec, "path", required=True), host.root)
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
        raise CollectError("no ID in /etc/os-release")
    ids = [osr["ID"].lower()] + osr.get("ID_LIKE", "").lower().split()
    return {path: {"name": host.read("/proc/sys/kernel/hostname", "").strip() or socket.gethostname(),
                   "kernelVersion": host.release(), "platform": osr["ID"], "platformVersion": osr.get("VERSION_ID", ""),
                   "platformFamily": next((_FAMILIES[i] for i in ids if i in _FAMILIES), "")}}


def _host_services(host, spec, path):
    rc, out, err = host.run(["systemctl", "list-units", "--type=service", "--no-legend", "--all", "--plain"])
    if rc != 0:
        raise CollectError("systemctl list-units exited %d: %s" % (rc, err.strip()[:200]))
    units = [dict(zip(("Unit", "Load", "Active", "Sub"), line.split()[:4])) for line in out.splitlines() if len(line.split()) >= 4]
    return {path: units}


def _time(host, spec, path):
    """time: timedatectl (systemd-timedated, as troubleshoot's D-Bus read); the time zone upper-cased, Etc/UTC as UTC."""
    rc, out, err = host.run(["timedatectl", "show", "-p", "Timezone", "-p", "NTPSynchronized", "-p", "NTP"])
    props = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    if rc != 0 or "Timezone" not in props:
        raise CollectError("timedatectl show exited %d: %s" % (rc, (err.strip() or out.strip())[:200]))
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
                raise CollectError("more than %d files under /proc/sys; the rest were not read" % MAX_SYSCTL_FILES,
                                   {path: values})
            full = os.path.join(dirpath, name)
            try:
                values[os.path.relpath(full, base).replace(os.sep, ".")] = read_file(full, SYSCTL_VALUE_MAX).strip()
            except (OSError, CollectError):
                continue
    if not values:
        raise CollectError("nothing readable under /proc/sys")
    return {path: values}


def _cgroups(host, spec, path):
    """cgroups: the file system type at ``mountPoint`` from /proc/self/mountinfo: cgroup2 -> v2 (controllers
    of cgroup.controllers, cpuacct with cpu, freezer where cgroup.freeze exists, devices where the kernel
    has CONFIG_CGROUP_BPF); cgroup or tmpfs -> v1 (controllers enabled in /proc/cgroups); nothing mounted
    there -> all disabled."""
    mount = spec_text(spec, "mountPoint", "/sys/fs/cgroup").rstrip("/") or "/"
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
            raise CollectError("%s is not a mount point" % mount)
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
        raise CollectError("unexpected file system type %s at %s" % (fstype, mount))
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


def _filesystem_performance(host, spec, path):
    """filesystemPerformance, MEASURED BY MOORING, NOT BY FIO (hosts have no fio): in ``directory`` (created
    0700) a temporary file gets ``operationSize`` bytes at a time (kURL's ``operationSizeBytes`` too; default
    1024) up to ``fileSize`` (default 10Mi), each write followed by fdatasync, whose latency is recorded
    (ns), as fio's ``--rw=write --ioengine=sync --fdatasync=1`` job ``fsperf`` measures it. Writing stops at
    ``timeout`` (default 1m; ``runTime`` seconds if shorter) and the latencies measured so far are the
    result; the file is deleted. The result is shaped as fio's JSON (job fsperf, sync.lat_ns with min, max,
    mean, stddev, N and the percentiles troubleshoot reads; each percentile the nearest-rank value). The
    background IOPS load (``enableBackgroundIOPS``) is not generated."""
    directory = spec_text(spec, "directory", required=True)
    try:
        file_size = hostconditions.quantity(spec.get("fileSize") or "10Mi")
    except hostconditions.ConditionError as exc:
        raise CollectError("fileSize: %s" % exc) from None
    op_size = spec_int(spec, "operationSize", spec.get("operationSizeBytes") or 1024, low=1, high=64 * MIB)
    timeout = spec_seconds(spec, "timeout", FSPERF_TIMEOUT)
    run_time = spec_int(spec, "runTime", 0, 0, 24 * 3600) if str(spec.get("runTime") or "").isdigit() else 0
    if run_time > 0:
        timeout = min(timeout, float(run_time))
    if file_size < 1:
        raise CollectError("fileSize must be at least 1 byte")
    full = host.path(directory)
    os.makedirs(full, mode=0o700, exist_ok=True)
    latencies = fdatasync_latencies(full, op_size, file_size, timeout, clock=host.now)
    if not latencies:
        raise CollectError("no write completed within %gs" % timeout)
    return {path: fio_result(latencies)}


def fio_result(latencies):
    """fio's JSON for job ``fsperf`` from fdatasync latencies in ns (nearest-rank percentiles)."""
    ordered = sorted(latencies)
    n = len(ordered)
    mean = sum(ordered) / float(n)
    percentiles = {key: nearest_rank(ordered, key) for key in hostconditions.PERCENTILES.values()}
    stddev = (sum((x - mean) ** 2 for x in ordered) / n) ** 0.5
    return {"jobs": [{"jobname": "fsperf", "sync": {"total_ios": n, "lat_ns": {
        "min": ordered[0], "max": ordered[-1], "mean": mean, "stddev": stddev, "N": n, "percentile": percentiles}}}]}


COLLECTORS = {
    "cpu": _cpu, "memory": _memory, "diskUsage": _disk_usage, "hostOS": _host_os, "hostServices": _host_services,
    "time": _time, "filesystemPerformance": _filesystem_performance, "kernelModules": _kernel_modules,
    "sysctl": _sysctl, "cgroups": _cgroups,
}
