# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: host preflight checks - the checks, their settings and their defaults.

Preflight is three layers, each plain data in and out, each in its own module:

* :func:`preflightgather.gather` reads one host's state (``/proc``, ``/sys``, ``/etc``, ``statvfs``, TCP
  connects to its peers); :mod:`hostdisk` measures its disks. Everything it touches is below ``root``
  and every program it runs goes through the ``run`` callable, so tests feed it a fake tree.
* :func:`preflightjudge.judge_host` turns one host's facts into results ``{check, status, message}``
  (:func:`result`) against thresholds; :func:`preflightinventory.judge_inventory` adds the checks that
  need every host at once (unique hostnames and machine-ids, reachability, clocks: :mod:`preflightclock`)
  on the controller.
* :func:`preflightreport.render_report` builds the host x check table and the list of what to do.

This module holds what they share: the checks, the statuses, the defaults and :func:`settings`, which
validates the user's values over them. A status is ``pass``, ``install`` (not ready yet, but
``mooring.cluster.install`` configures it: no action needed, never a failure or a warning), ``warn``,
``fail`` or ``ignored`` (a check named in the ignore list). Which checks the install configures is a
setting (``install_configures``); a check not in it keeps blocking. Nothing here changes anything on a host.
"""

from __future__ import annotations

import copy
import ipaddress
import re

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.kubeadm import KubeadmError, parse_version
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import must_be


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
# From this minor the kubelet refuses to start on cgroup v1 unless its configuration says failCgroupV1: false (its
# default turned true), and kubeadm's SystemVerification preflight fails there: the installer spec's option that
# tells both (plugins/module_utils/cluster/kubeadm/kubeadmconfig.py renders it).
CGROUP_V1_REFUSED_FROM = (1, 35)
CGROUP_V1_OPTION = "spec.kubernetes.kubelet.failCgroupV1: false"
HOSTNAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$")


# ---------------------------------------------------------------- settings

def settings(thresholds=None, disks=None, ports=None, distributions=None, kernel_features=None, ignore=None,
             install_configures=None, networks=None, etcd_disk=None, max_clock_offset=None, kubernetes=None):
    """Validated settings: user values merged over the defaults. Raises PreflightError.

    ``install_configures`` None means the default (every check the install configures);
    ``[]`` makes all of them blocking again (hosts prepared otherwise).
    """
    problems = []
    th = _thresholds(thresholds, problems)
    dk = _disks(disks, problems)
    pt = _ports(ports, problems)
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
    nets = _networks(networks, problems)
    ed = _etcd_disk(etcd_disk, problems)
    clock = DEFAULT_MAX_CLOCK_OFFSET if max_clock_offset is None else max_clock_offset
    if not isinstance(clock, (int, float)) or isinstance(clock, bool) or clock <= 0:
        problems.append("max_clock_offset: %s" % must_be("seconds, a number above 0", clock))
    dist = _distributions(distributions, problems)
    kube = _kubernetes(kubernetes, problems)
    if problems:
        raise PreflightError("invalid preflight settings", problems)
    return {"thresholds": th, "disks": dk, "ports": pt, "distributions": dist, "kernel_features": kf,
            "ignore": ig, "install_configures": ic, "networks": nets, "etcd_disk": ed, "max_clock_offset": float(clock),
            "kubernetes": kube}


def _thresholds(thresholds, problems):
    """The per-role CPU and memory thresholds, the user's over :data:`DEFAULT_THRESHOLDS`."""
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
                problems.append("thresholds.%s.%s: %s" % (role, key, must_be("a number or {min, recommended}", lim)))
                continue
            th[role][key].update(lim)
            if th[role][key]["recommended"] < th[role][key]["min"]:
                th[role][key]["recommended"] = th[role][key]["min"]
            for k, v in th[role][key].items():
                if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                    problems.append("thresholds.%s.%s.%s: %s" % (role, key, k, must_be("a number >= 0", v)))
    return th


def _disks(disks, problems):
    """The disks whose free space is checked (:data:`DEFAULT_DISKS` unless given)."""
    dk = []
    for i, d in enumerate(DEFAULT_DISKS if disks is None else disks):
        if not isinstance(d, dict) or not str(d.get("path", "")).startswith("/"):
            problems.append("disks[%d]: %s" % (i, must_be("an absolute path", d)))
            continue
        item = {"roles": list(ROLES), "min_free_mb": 0, "recommended_free_mb": 0, "purpose": d["path"]}
        item.update(d)
        bad_roles = [r for r in item["roles"] if r not in ROLES]
        if bad_roles:
            problems.append("disks[%d].roles: unknown %s (use %s)" % (i, bad_roles, ", ".join(ROLES)))
        item["recommended_free_mb"] = max(item["recommended_free_mb"], item["min_free_mb"])
        dk.append(item)
    return dk


def _ports(ports, problems):
    """The ports each role needs free (:data:`DEFAULT_PORTS` unless given)."""
    pt = copy.deepcopy(DEFAULT_PORTS if ports is None else ports)
    for role, plist in pt.items():
        if role not in ROLES:
            problems.append("ports: unknown role %r (use one of %s)" % (role, ", ".join(ROLES)))
        elif not all(isinstance(p, int) and 0 < p < 65536 for p in plist):
            problems.append("ports.%s: %s" % (role, must_be("a list of integers 1-65535", plist)))
    return pt


def _networks(networks, problems):
    """The cluster's pod and service networks (:data:`DEFAULT_NETWORKS` unless given), each a CIDR."""
    nets = dict(DEFAULT_NETWORKS if networks is None else networks)
    for name, cidr in sorted(nets.items()):
        if name not in NETWORK_NAMES:
            problems.append("networks: unknown network %r (use %s)" % (name, ", ".join(sorted(NETWORK_NAMES))))
            continue
        try:
            ipaddress.ip_network(str(cidr), strict=False)
        except ValueError as exc:
            problems.append("networks.%s: %r is not a network in CIDR notation (%s)" % (name, cidr, exc))
    return nets


def _etcd_disk(etcd_disk, problems):
    """How etcd's disk latency is measured and judged, the user's keys over :data:`DEFAULT_ETCD_DISK`."""
    ed = dict(DEFAULT_ETCD_DISK)
    ed.update(etcd_disk or {})
    unknown = sorted(set(ed) - set(DEFAULT_ETCD_DISK))
    if unknown:
        problems.append("etcd_disk: unknown key(s) %s (use %s)" % (", ".join(unknown), ", ".join(sorted(DEFAULT_ETCD_DISK))))
    if not str(ed["path"]).startswith("/"):
        problems.append("etcd_disk.path: %s" % must_be("an absolute path", ed["path"]))
    if not isinstance(ed["roles"], list) or [r for r in ed["roles"] if r not in ROLES]:
        problems.append("etcd_disk.roles: %s" % must_be("a list of %s" % ", ".join(ROLES), ed["roles"]))
    for key, low, high in (("warn_p99_ms", 0, 10000), ("fail_p99_ms", 0, 10000), ("bytes", 0, 64 * MIB),
                           ("operation_bytes", 1, MIB), ("timeout_s", 1, 300)):
        if not isinstance(ed[key], (int, float)) or isinstance(ed[key], bool) or not low <= ed[key] <= high:
            problems.append("etcd_disk.%s: %s" % (key, must_be("a number from %s to %s" % (low, high), ed[key])))
    return ed


def _kubernetes(kubernetes, problems):
    """The Kubernetes the hosts are to run, as the cgroup check needs it: ``{version, minor, allows_cgroup_v1}``
    from ``{version, kubelet}`` (the lock's version and the spec's kubernetes.kubelet); ``minor`` is None without
    a version (preflight run alone, no lock)."""
    given = kubernetes or {}
    unknown = sorted(set(given) - {"version", "kubelet"}, key=str)
    if unknown:
        problems.append("kubernetes: unknown key(s) %s (use version, kubelet)" % ", ".join(map(str, unknown)))
    version, kubelet, minor = str(given.get("version") or ""), given.get("kubelet") or {}, None
    if version:
        try:
            minor = parse_version(version, "kubernetes.version")[:2]
        except KubeadmError as exc:
            problems.append(str(exc))
    if not isinstance(kubelet, dict) or not isinstance(kubelet.get("failCgroupV1", True), bool):
        problems.append("kubernetes.kubelet: %r is not the spec's kubelet settings (failCgroupV1 true or false)"
                        % (kubelet,))
        kubelet = {}
    return {"version": version, "minor": minor, "allows_cgroup_v1": kubelet.get("failCgroupV1") is False}


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
        problems.append("distributions: %s (leave it unset for the default)"
                        % must_be("a mapping of os-release ID to VERSION_IDs, at most %s" % supported, distributions))
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


def result(check, status, message):
    """One check's result: ``{check, status, message}`` (status one of :data:`STATUSES`)."""
    return {"check": check, "status": status, "message": message}
