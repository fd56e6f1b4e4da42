# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: preflight's judgement of one host's facts (:func:`judge_host`).

Each check turns facts into results ``{check, status, message}`` (:func:`preflight.result`) against the
settings' thresholds; a status ``install`` marks what ``mooring.cluster.install`` configures itself.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflight import (
    CGROUP_V1_OPTION,
    CGROUP_V1_REFUSED_FROM,
    CLUSTER_DEVICES,
    DEFAULT_INSTALL_CONFIGURES,
    KERNEL_FEATURES,
    NEEDED_MODULES,
    NETWORK_NAMES,
    OWN_PROCESSES,
    PLATFORMS,
    platform_status,
    platforms_text,
    result,
)


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
        return result(check, "fail", blocking)
    name = NEEDED_MODULES[check]
    mod = (kernel.get("modules") or {}).get(name) or {}
    release = kernel.get("release") or "?"
    if mod.get("loaded") or mod.get("builtin"):
        state = "loaded" if mod.get("loaded") else "built into kernel %s" % release
        return result(check, "fail", "%s is %s but %s is missing, so loading it (what the install does) will not "
                      "help: find out why (a container's /proc or network namespace?)"
                      % (name, state, FEATURE_SHOWS[check]))
    if mod.get("loadable"):
        return result(check, "install", "%s is not loaded: %s" % (name, INSTALL_DOES[check]))
    return result(check, "fail", "%s is missing and kernel %s cannot load it (not loaded, not built in, no module "
                  "file under /lib/modules/%s): the install cannot configure it; install the modules package of "
                  "the running kernel or boot a kernel that has %s" % (name, release, release, name))


def judge_host(facts, roles, cfg):
    """Results of the single-host checks for one host's facts."""
    configures = cfg.get("install_configures", DEFAULT_INSTALL_CONFIGURES)
    k = facts.get("kernel") or {}
    res = [judge_cpu(facts, roles, cfg["thresholds"]), judge_memory(facts, roles, cfg["thresholds"])]
    res.extend(judge_disks(facts, roles, cfg["disks"]))
    res.append(judge_swap(facts, configures))
    res.append(judge_ports(facts, roles, cfg["ports"]))
    res.extend(judge_kernel(k, configures, cfg["kernel_features"]))
    res.append(judge_cgroup(facts, cfg.get("kubernetes")))
    res.append(result("systemd", "pass", "systemd is PID 1") if facts.get("systemd")
               else result("systemd", "fail", "systemd is not running as init (%s): the roles manage services "
                           "with systemd" % (facts.get("init") or "unknown")))
    res.append(judge_time_sync(facts.get("time_sync")))
    res.append(judge_distribution(facts.get("distribution") or {}, cfg["distributions"]))
    res.extend(judge_network(facts.get("network") or {}, cfg["networks"]))
    if set(roles) & set(cfg["etcd_disk"]["roles"]) and facts.get("etcd_disk") is not None:  # None: a check run
        res.append(judge_etcd_disk(facts["etcd_disk"], cfg["etcd_disk"]))
    return res


def judge_cpu(facts, roles, th):
    """The host's CPUs against the highest minimum and recommendation of its roles."""
    cpus = facts.get("cpus") or 0
    lo, rec, role = _need(th, roles, "cpus")
    if cpus < lo:
        return result("cpu", "fail", "%d CPU(s); %s needs at least %d: give the host more CPUs" % (cpus, role, lo))
    if cpus < rec:
        return result("cpu", "warn", "%d CPU(s); %d recommended for %s" % (cpus, rec, "+".join(roles)))
    return result("cpu", "pass", "%d CPU(s)" % cpus)


def judge_memory(facts, roles, th):
    """The host's memory against the highest minimum and recommendation of its roles."""
    mem = facts.get("memory_mb") or 0
    lo, rec, role = _need(th, roles, "memory_mb")
    if mem < lo:
        return result("memory", "fail", "%d MiB memory; %s needs at least %d MiB: add memory" % (mem, role, lo))
    if mem < rec:
        return result("memory", "warn", "%d MiB memory; %d MiB recommended for %s" % (mem, rec, "+".join(roles)))
    return result("memory", "pass", "%d MiB memory" % mem)


def judge_disks(facts, roles, disks):
    """Free space of each disk setting that applies to one of the host's roles."""
    res = []
    for d in disks:
        if not set(d["roles"]) & set(roles):
            continue
        got = (facts.get("disks") or {}).get(d["path"], {})
        if "free_mb" not in got:
            res.append(result("disk", "fail", "%s (%s): free space unknown (%s): check the path"
                              % (d["path"], d["purpose"], got.get("error", "not measured"))))
        elif got["free_mb"] < d["min_free_mb"]:
            args = (d["path"], d["purpose"], got["free_mb"], got["measured"], d["min_free_mb"])
            res.append(result("disk", "fail", "%s (%s): %d MiB free on %s, needs %d MiB: free space or mount a "
                              "bigger disk there" % args))
        elif got["free_mb"] < d["recommended_free_mb"]:
            res.append(result("disk", "warn", "%s (%s): %d MiB free, %d MiB recommended"
                              % (d["path"], d["purpose"], got["free_mb"], d["recommended_free_mb"])))
        else:
            res.append(result("disk", "pass", "%s: %d MiB free" % (d["path"], got["free_mb"])))
    return res


def judge_swap(facts, configures):
    """Swap must be off for kubelet; the install turns it off when ``swap`` is in ``configures``."""
    swap = facts.get("swap_mb") or 0
    if not swap:
        return result("swap", "pass", "swap off")
    if "swap" in configures:
        return result("swap", "install", "swap is on (%d MiB): %s" % (swap, INSTALL_DOES["swap"]))
    return result("swap", "fail", "swap is on (%d MiB): kubelet refuses to start; run `swapoff -a` and "
                  "remove swap from /etc/fstab" % swap)


def judge_ports(facts, roles, ports):
    """The ports of the host's roles: free, or held by our own components (a re-run)."""
    wanted = sorted({p for r in roles for p in ports.get(r, [])})
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
        return result("ports", "fail", "port(s) in use: %s: stop what holds them or move it to another port"
                      % ", ".join(busy))
    return result("ports", "pass", "%s free%s" % (
        ",".join(str(p) for p in wanted) or "no ports",
        "; held by our own components: %s" % ", ".join(own) if own else ""))


KERNEL_LABELS = {"ipvs": "IPVS (kube-proxy ipvs mode)", "ipip": "IPIP (Calico IPIP encapsulation)",
                 "wireguard": "WireGuard (encrypted pod traffic)"}


def judge_kernel(k, configures, kernel_features):
    """bridge netfilter, overlayfs and IP forwarding (which the install may configure), then the kernel
    features the chosen add-ons use (``kernel_features``)."""
    res = [result("bridge_netfilter", "pass", "bridge netfilter available") if k.get("bridge_netfilter")
           else _needed_module("bridge_netfilter", k, configures, "bridge netfilter missing: `modprobe br_netfilter` "
                               "and add it to /etc/modules-load.d"),
           result("overlayfs", "pass", "overlayfs available") if k.get("overlayfs")
           else _needed_module("overlayfs", k, configures, "overlayfs missing: `modprobe overlay` (containerd needs "
                               "it)")]
    if k.get("ip_forward"):
        res.append(result("ip_forward", "pass", "net.ipv4.ip_forward=1"))
    elif "ip_forward" in configures:
        res.append(result("ip_forward", "install", "net.ipv4.ip_forward is off: %s" % INSTALL_DOES["ip_forward"]))
    else:
        res.append(result("ip_forward", "warn", "net.ipv4.ip_forward is off: pod traffic needs it; set "
                          "net.ipv4.ip_forward=1 (sysctl and /etc/sysctl.d) and make sure nothing turns it off "
                          "again"))
    for f in KERNEL_FEATURES:
        if k.get(f):
            res.append(result(f, "pass", "%s available" % KERNEL_LABELS[f]))
        elif f in kernel_features:
            res.append(result(f, "warn", "%s is not available in kernel %s but a chosen add-on uses it: load the "
                              "module or choose an add-on setting without it" % (KERNEL_LABELS[f], k.get("release", "?"))))
        else:
            res.append(result(f, "pass", "%s absent, not needed by the chosen add-ons" % KERNEL_LABELS[f]))
    return res


TO_V2 = "boot the host with systemd.unified_cgroup_hierarchy=1 for cgroup v2"


def judge_cgroup(facts, kubernetes=None):
    """cgroup v2 passes. On v1 (or hybrid) the Kubernetes to run decides (``kubernetes``: settings'): from 1.35
    its kubelet refuses v1 - a failure naming the spec's option, which preflight_ignore cannot skip, or a warning
    when the spec sets it; before 1.35 a note; with no version known (no lock), a warning."""
    k = kubernetes or {}
    cg = facts.get("cgroup")
    seen = "cgroup %s, driver %s" % (cg, "systemd" if facts.get("init") == "systemd" else "cgroupfs")
    if cg == "v2":
        return result("cgroup", "pass", seen)
    if k.get("minor") is None:
        return result("cgroup", "warn", "%s: Kubernetes keeps cgroup v1 in maintenance mode and its kubelet refuses "
                      "it from 1.35 unless the installer spec sets %s; %s" % (seen, CGROUP_V1_OPTION, TO_V2))
    if k["minor"] < CGROUP_V1_REFUSED_FROM:
        later = "the spec sets %s for 1.35+" if k.get("allows_cgroup_v1") else "from 1.35 the kubelet needs %s here"
        return result("cgroup", "pass", "%s: fine for Kubernetes %s (%s)" % (seen, k["version"], later % CGROUP_V1_OPTION))
    if k.get("allows_cgroup_v1"):
        return result("cgroup", "warn", "%s: Kubernetes %s runs on it only because the spec sets %s (the kubelet is "
                      "told so and kubeadm ignores its SystemVerification preflight error); cgroup v1 support is "
                      "deprecated: %s" % (seen, k["version"], CGROUP_V1_OPTION, TO_V2))
    out = result("cgroup", "fail", "%s: the kubelet of Kubernetes %s refuses to start on cgroup v1 and kubeadm's "
                 "SystemVerification preflight fails: set %s in the installer spec and resolve the lock again, or %s"
                 % (seen, k["version"], CGROUP_V1_OPTION, TO_V2))
    out["ignorable"] = False
    return out


def judge_time_sync(ts):
    """The clock's synchronisation as timedatectl reports it (None: unknown)."""
    if ts:
        return result("time_sync", "pass", "clock synchronised")
    return result("time_sync", "warn", "clock %s: enable chrony or systemd-timesyncd against a reachable "
                  "time server (certificates and etcd need agreeing clocks)"
                  % ("not synchronised" if ts is False else "sync state unknown (no timedatectl)"))


def judge_distribution(dist, distributions):
    """The host's OS against the supported ones (settings' ``distributions``, within :data:`PLATFORMS`). An OS of
    another family (no Debian packages, no apt) fails and ``preflight_ignore`` cannot skip it (``ignorable``
    false): the install would stop half way on that host."""
    status = platform_status(dist, distributions)
    host = "%s %s" % (dist.get("id") or "unknown", dist.get("version_id") or "(no VERSION_ID)")
    if status == "supported":
        return result("distribution", "pass", dist.get("pretty") or host)
    seen = "os-release ID=%s VERSION_ID=%s%s" % (dist.get("id") or "(none)", dist.get("version_id") or "(none)",
                                                 " ID_LIKE=%s" % dist["id_like"] if dist.get("id_like") else "")
    if dist.get("pretty"):
        seen = "%s, %s" % (dist["pretty"], seen)
    carries = "; ".join(sorted({PLATFORMS[d]["packages"] for d in distributions})) or "nothing"
    message = ("host OS %s (%s) is not supported: the bundle carries %s for %s only; install onto a supported "
               "host OS (docs/platforms.md)" % (host, seen, carries, platforms_text(distributions) or "no host OS"))
    out = result("distribution", "fail", message)
    if status == "foreign":
        out["ignorable"] = False
    return out


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
        return [result("default_route", "warn", "routes not read (%s)" % network["error"]),
                result("networks", "warn", "addresses and routes not read (%s): the pod and service CIDRs are not "
                       "checked against this host's networks" % network["error"])]
    res = []
    if network.get("default_route"):
        res.append(result("default_route", "pass", "default route %s" % network["default_route"]))
    else:
        res.append(result("default_route", "fail", "no default route: kubelet and kube-proxy take the node's address "
                          "from it; add one (ip route add default via GATEWAY, and in the host's network "
                          "configuration), even on an air-gapped network"))
    clashes = []
    for name, cidr in sorted(networks.items()):
        found = network_clashes(network, cidr)
        if found:
            clashes.append("%s %s overlaps this host's %s" % (NETWORK_NAMES[name], cidr, ", ".join(found[:4])))
    if clashes:
        res.append(result("networks", "fail", "%s: pods or services there would be unreachable from this host, or "
                          "its own network from them; choose ranges that no host uses (in the installer spec)"
                          % "; ".join(clashes)))
    else:
        res.append(result("networks", "pass", "%s clear of this host's %d address(es) and %d route(s)" % (
            " and ".join("%s %s" % (name, cidr) for name, cidr in sorted(networks.items())) or "no networks",
            len(network.get("addresses") or []), len(network.get("routes") or []))))
    return res


def judge_etcd_disk(measured, spec):
    """etcd's disk latency (fdatasync p99) against the warn and fail limits."""
    if measured.get("error"):
        return result("etcd_disk", "warn", "etcd disk latency not measured (%s)" % measured["error"])
    what = "fdatasync p99 %.1f ms (p50 %.1f ms, %d writes of %d bytes in %s)" % (
        measured["p99_ms"], measured["p50_ms"], measured["writes"], spec["operation_bytes"], measured["measured"])
    if measured["p99_ms"] > spec["fail_p99_ms"]:
        return result("etcd_disk", "fail", "%s, above %s ms: etcd on this disk loses its leader and times out; "
                      "put %s on a faster disk (SSD)" % (what, spec["fail_p99_ms"], spec["path"]))
    if measured["p99_ms"] > spec["warn_p99_ms"]:
        return result("etcd_disk", "warn", "%s; etcd wants under %s ms: expect slow writes and leader elections "
                      "under load" % (what, spec["warn_p99_ms"]))
    return result("etcd_disk", "pass", what)
