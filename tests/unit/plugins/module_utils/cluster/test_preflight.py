# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for the preflight backend: gathering from a fake host tree, judging, report."""

from __future__ import annotations

import copy
import json
import os

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts import hostdisk as hd
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight import preflight as pf
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight import preflightclock as pc
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight import preflightgather as pg
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight import preflightinventory as pi
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight import preflightjudge as pj
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight import preflightreport as pr
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1
   1: 0100007F:0943 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2222 1
   2: 0B0A590A:0016 0C0A590A:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 3333 1
"""
TCP6 = """  sl  local_address                         remote_address                        st tx_queue rx_queue
   0: 00000000000000000000000000000000:1A0B 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1
"""


def fake_host(tmp_path, **over):
    """A fake host tree under tmp_path (the parts of /proc, /sys, /etc that gather reads)."""
    files = {
        "proc/meminfo": "MemTotal:        8000000 kB\nMemFree:  100 kB\n",
        "proc/cpuinfo": "processor\t: 0\nprocessor\t: 1\nprocessor\t: 2\nprocessor\t: 3\n",
        "proc/swaps": "Filename\tType\tSize\tUsed\tPriority\n",
        "proc/net/tcp": TCP,
        "proc/net/tcp6": TCP6,
        "proc/filesystems": "nodev\tsysfs\nnodev\toverlay\n",
        "proc/sys/net/ipv4/ip_forward": "1\n",
        "proc/sys/net/bridge/bridge-nf-call-iptables": "1\n",
        "proc/sys/kernel/hostname": "cp1\n",
        "proc/sys/kernel/osrelease": "6.1.0-test\n",
        "proc/1/comm": "systemd\n",
        "proc/77/comm": "sshd\n",
        "run/systemd/system/.keep": "",
        "etc/machine-id": "0123456789abcdef0123456789abcdef\n",
        "etc/os-release": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n',
        "sys/fs/cgroup/cgroup.controllers": "cpu memory\n",
        "var/lib/.keep": "",
    }
    files.update(over)
    for rel, text in files.items():
        if text is None:
            continue
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    fd = tmp_path / "proc" / "77" / "fd"
    fd.mkdir(parents=True, exist_ok=True)
    os.symlink("socket:[1111]", fd / "3")
    return str(tmp_path)


# ``ip -j`` as iproute2 6.1 prints it (recorded on a lab host, trimmed): addresses, IPv4 and IPv6 routes.
IP_JSON = {
    ("ip", "-j", "addr", "show"): (0, json.dumps([
        {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "addr_info": [
            {"family": "inet", "local": "127.0.0.1", "prefixlen": 8, "scope": "host", "label": "lo"},
            {"family": "inet6", "local": "::1", "prefixlen": 128, "scope": "host"}]},
        {"ifindex": 2, "ifname": "eth0", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "addr_info": [
            {"family": "inet", "local": "10.89.3.11", "prefixlen": 24, "scope": "global", "label": "eth0"}]}]), ""),
    ("ip", "-j", "-4", "route", "show"): (0, json.dumps([
        {"dst": "default", "gateway": "10.89.3.1", "dev": "eth0", "flags": []},
        {"dst": "10.89.3.0/24", "dev": "eth0", "protocol": "kernel", "scope": "link", "prefsrc": "10.89.3.11",
         "flags": []},
        {"dst": "10.32.7.0/26", "type": "blackhole", "protocol": "bird", "flags": []}]), ""),
    ("ip", "-j", "-6", "route", "show"): (0, json.dumps([
        {"dst": "fe80::/64", "dev": "eth0", "protocol": "kernel", "metric": 256, "flags": [], "pref": "medium"}]), ""),
}


def good_facts(**over):
    f = {
        "hostname": "cp1", "machine_id": "a" * 32, "cpus": 4, "memory_mb": 16000, "swap_mb": 0,
        "disks": {d["path"]: {"free_mb": 100000, "measured": "/"} for d in pf.DEFAULT_DISKS},
        "listening": {"22": "sshd"},
        "kernel": {"release": "6.1", "bridge_netfilter": True, "overlayfs": True, "ip_forward": True,
                   "ipvs": False, "ipip": False, "wireguard": False},
        "cgroup": "v2", "init": "systemd", "systemd": True, "time_sync": True,
        "distribution": {"id": "debian", "version_id": "12", "pretty": "Debian 12"},
        "reach": {},
        "network": {"addresses": [{"dev": "eth0", "cidr": "192.168.1.10/24"}],
                    "routes": [{"dst": "192.168.1.0/24", "dev": "eth0"}], "default_route": "via 192.168.1.1 dev eth0"},
        "etcd_disk": {"p99_ms": 1.5, "p50_ms": 0.4, "writes": 456, "measured": "/var/lib"},
    }
    f.update(over)
    return f


def by_check(results):
    out = {}
    for r in results:
        out.setdefault(r["check"], []).append(r)
    return out


def status_of(results, check):
    statuses = [r["status"] for r in results if r["check"] == check]
    assert statuses, "no %s result" % check
    return max(statuses, key=pr.RANK.get)


CFG = pf.settings()
FIX_HEADER = "FIX (not ready yet, the install configures it; nothing to do):"
# The old behaviour: the install configures nothing (hosts prepared otherwise).
CFG_BLOCKING = pf.settings(install_configures=[])


# ---------------------------------------------------------------- gather

def test_gather_reads_a_fake_host(tmp_path):
    root = fake_host(tmp_path)
    calls = []

    def run(argv):
        calls.append(argv)
        return IP_JSON.get(tuple(argv), (0, "yes\n", ""))

    probes = []

    def probe(addr, port):
        probes.append((addr, port))
        return addr != "10.0.0.13", "" if addr != "10.0.0.13" else "timed out"

    f = pg.gather(root=root, run=run, disk_paths=["/var/lib/etcd"],
                  peers={"cp2": "10.0.0.12", "w1": "10.0.0.13"}, peer_port=22, probe=probe)
    assert f["hostname"] == "cp1"
    assert f["machine_id"] == "0123456789abcdef0123456789abcdef"
    assert f["cpus"] == 4
    assert f["memory_mb"] == 8000000 // 1024
    assert f["swap_mb"] == 0
    assert f["listening"] == {"22": "sshd", "2371": "", "6667": ""}
    assert f["kernel"]["overlayfs"] and f["kernel"]["bridge_netfilter"] and f["kernel"]["ip_forward"]
    assert not f["kernel"]["ipvs"] and not f["kernel"]["ipip"] and not f["kernel"]["wireguard"]
    assert f["cgroup"] == "v2" and f["systemd"] and f["init"] == "systemd"
    assert f["time_sync"] is True and calls == [["timedatectl", "show", "-p", "NTPSynchronized", "--value"]] + [
        list(argv) for argv in IP_JSON]
    assert f["network"] == {"addresses": [{"dev": "lo", "cidr": "127.0.0.1/8"}, {"dev": "lo", "cidr": "::1/128"},
                                          {"dev": "eth0", "cidr": "10.89.3.11/24"}],
                            "routes": [{"dst": "10.89.3.0/24", "dev": "eth0"}, {"dst": "fe80::/64", "dev": "eth0"}],
                            "default_route": "via 10.89.3.1 dev eth0"}
    assert f["etcd_disk"] is None
    assert f["distribution"]["id"] == "debian" and f["distribution"]["version_id"] == "12"
    assert f["disks"]["/var/lib/etcd"]["measured"] == "/var/lib"
    assert f["disks"]["/var/lib/etcd"]["free_mb"] > 0
    assert probes == [("10.0.0.12", 22), ("10.0.0.13", 22)]
    assert f["reach"]["w1"] == {"address": "10.0.0.13", "ok": False, "error": "timed out"}


def test_gather_detects_v1_swap_and_modules(tmp_path):
    root = fake_host(tmp_path, **{
        "sys/fs/cgroup/cgroup.controllers": None,
        "proc/swaps": "Filename\tType\tSize\tUsed\tPriority\n/swap file 2097148 0 -2\n",
        "proc/modules": "ip_vs 188416 0 - Live 0x0\nwireguard 1 0 - Live 0x0\n",
        "sys/module/ipip/.keep": "",
        "proc/sys/net/ipv4/ip_forward": "0\n",
        "proc/sys/net/bridge/bridge-nf-call-iptables": None,
        "proc/filesystems": "nodev\tsysfs\n",
    })
    f = pg.gather(root=root)
    assert f["cgroup"] == "v1"
    assert f["swap_mb"] == 2047
    assert f["kernel"]["ipvs"] and f["kernel"]["wireguard"] and f["kernel"]["ipip"]
    assert f["kernel"]["ip_forward"] is False
    assert not f["kernel"]["bridge_netfilter"] and not f["kernel"]["overlayfs"]
    assert f["time_sync"] is None  # no way to run timedatectl


# A fresh VM: br_netfilter and overlay not loaded, forwarding off, swap on.
FRESH = {
    "proc/swaps": "Filename\tType\tSize\tUsed\tPriority\n/swap.img file 524284 0 -2\n",
    "proc/sys/net/bridge/bridge-nf-call-iptables": None,
    "proc/sys/net/ipv4/ip_forward": "0\n",
    "proc/filesystems": "nodev\tsysfs\n",
}
MODULES_DEP = ("kernel/net/bridge/bridge.ko.zst: kernel/net/802/stp.ko.zst kernel/net/llc/llc.ko.zst\n"
               "kernel/net/bridge/br_netfilter.ko.zst: kernel/net/bridge/bridge.ko.zst kernel/net/802/stp.ko.zst\n"
               "kernel/fs/overlayfs/overlay.ko.xz:\n")


def test_gather_finds_loadable_builtin_and_loaded_modules(tmp_path):
    root = fake_host(tmp_path / "dep", **FRESH, **{"lib/modules/6.1.0-test/modules.dep": MODULES_DEP})
    mods = pg.gather(root=root)["kernel"]["modules"]
    assert mods == {"br_netfilter": {"loaded": False, "builtin": False, "loadable": True},
                    "overlay": {"loaded": False, "builtin": False, "loadable": True}}
    root = fake_host(tmp_path / "builtin", **FRESH, **{
        "lib/modules/6.1.0-test/modules.builtin": "kernel/fs/overlayfs/overlay.ko\nkernel/net/bridge/bridge.ko\n",
        "lib/modules/6.1.0-test/modules.dep": "",
        "proc/modules": "br_netfilter 32768 0 - Live 0x0\nbridge 1 1 br_netfilter, Live 0x0\n"})
    mods = pg.gather(root=root)["kernel"]["modules"]
    assert mods == {"br_netfilter": {"loaded": True, "builtin": False, "loadable": False},
                    "overlay": {"loaded": False, "builtin": True, "loadable": False}}
    # no modules.dep: the module files themselves; other kernels' modules do not count
    root = fake_host(tmp_path / "files", **FRESH, **{
        "lib/modules/6.1.0-test/kernel/net/bridge/br_netfilter.ko.xz": "",
        "lib/modules/5.10.0-old/kernel/fs/overlayfs/overlay.ko": "",
        "lib/modules/5.10.0-old/modules.dep": "kernel/fs/overlayfs/overlay.ko:\n"})
    mods = pg.gather(root=root)["kernel"]["modules"]
    assert mods["br_netfilter"]["loadable"] and not mods["overlay"]["loadable"]
    # no /lib/modules at all (the lab kernel): nothing loadable
    mods = pg.gather(root=fake_host(tmp_path / "none", **FRESH))["kernel"]["modules"]
    assert not any(v for m in mods.values() for v in m.values())


def test_fresh_vm_is_configured_by_the_install_not_failed(tmp_path):
    root = fake_host(tmp_path, **FRESH, **{"lib/modules/6.1.0-test/modules.dep": MODULES_DEP})
    res = by_check(pj.judge_host(pg.gather(root=root), ["workers"], CFG))
    for check in ("swap", "bridge_netfilter", "overlayfs", "ip_forward"):
        assert [r["status"] for r in res[check]] == ["install"], res[check]
    assert res["swap"][0]["message"] == ("swap is on (511 MiB): the install turns it off (swapoff -a) and comments "
                                         "it out in /etc/fstab (kubelet failSwapOn)")
    assert "modprobe br_netfilter" in res["bridge_netfilter"][0]["message"]
    assert "bridge-nf-call-iptables=1" in res["bridge_netfilter"][0]["message"]
    assert "modprobe overlay" in res["overlayfs"][0]["message"]
    assert "net.ipv4.ip_forward=1" in res["ip_forward"][0]["message"]
    # the same host with install_configures []: the old blocking behaviour
    res = pj.judge_host(pg.gather(root=root), ["workers"], CFG_BLOCKING)
    assert [status_of(res, c) for c in ("swap", "bridge_netfilter", "overlayfs", "ip_forward")] == \
        ["fail", "fail", "fail", "warn"]


def test_swap_on_is_configured_by_the_install():
    r = by_check(pj.judge_host(good_facts(swap_mb=512), ["workers"], CFG))["swap"][0]
    assert r["status"] == "install"
    assert r["message"].startswith("swap is on (512 MiB): the install turns it off (swapoff -a) and comments it out "
                                   "in /etc/fstab")
    merged, _t, summary = pi.run_inventory(registered(a=good_facts(swap_mb=512)))
    assert summary["failed"] == [] and summary["warnings"] == []
    assert [(h, c) for h, c, _m in summary["install"]] == [("a", "swap")]


def test_swap_on_fails_when_the_install_configures_nothing():
    r = by_check(pj.judge_host(good_facts(swap_mb=512), ["workers"], CFG_BLOCKING))["swap"][0]
    assert r["status"] == "fail" and "kubelet refuses to start" in r["message"]
    cfg = pf.settings(install_configures=["bridge_netfilter"])  # only what is listed
    assert status_of(pj.judge_host(good_facts(swap_mb=512), ["workers"], cfg), "swap") == "fail"


def _kernel(**modules):
    k = dict(good_facts()["kernel"], bridge_netfilter=False, overlayfs=False, release="6.1.0-test")
    k["modules"] = {name: dict({"loaded": False, "builtin": False, "loadable": False}, **state)
                    for name, state in modules.items()}
    return k


def test_br_netfilter_not_loaded_but_loadable_is_configured_by_the_install():
    k = _kernel(br_netfilter={"loadable": True}, overlay={"loadable": True})
    res = pj.judge_host(good_facts(kernel=k), ["workers"], CFG)
    assert status_of(res, "bridge_netfilter") == "install"
    assert status_of(res, "overlayfs") == "install"
    assert status_of(pj.judge_host(good_facts(kernel=k), ["workers"], CFG_BLOCKING), "bridge_netfilter") == "fail"


def test_br_netfilter_not_loadable_fails_even_when_the_install_configures_it():
    k = _kernel(br_netfilter={}, overlay={})
    res = by_check(pj.judge_host(good_facts(kernel=k), ["workers"], CFG))
    r = res["bridge_netfilter"][0]
    assert r["status"] == "fail"
    assert "kernel 6.1.0-test cannot load it" in r["message"] and "/lib/modules/6.1.0-test" in r["message"]
    assert res["overlayfs"][0]["status"] == "fail" and "overlay" in res["overlayfs"][0]["message"]
    # loaded (or built in) and still missing: loading it again will not help
    for state in ({"loaded": True}, {"builtin": True, "loadable": True}):
        k = _kernel(br_netfilter=state, overlay={"loadable": True})
        r = by_check(pj.judge_host(good_facts(kernel=k), ["workers"], CFG))["bridge_netfilter"][0]
        assert r["status"] == "fail" and "/proc/sys/net/bridge/bridge-nf-call-iptables is missing" in r["message"]


def test_parse_listening_only_listen_state():
    assert pg.parse_listening(TCP) == {22: "1111", 2371: "2222"}


# ---------------------------------------------------------------- judge one host

def test_good_host_passes_everything():
    res = pj.judge_host(good_facts(), ["control_plane", "etcd"], CFG)
    assert {r["status"] for r in res} == {"pass"}, res


@pytest.mark.parametrize("roles,cpus,status", [
    (["workers"], 1, "warn"),
    (["workers"], 2, "pass"),
    (["control_plane"], 1, "fail"),
    (["control_plane"], 2, "warn"),
    (["control_plane"], 4, "pass"),
    (["workers", "etcd"], 1, "fail"),  # the strictest role decides
])
def test_cpu_thresholds_per_role(roles, cpus, status):
    assert status_of(pj.judge_host(good_facts(cpus=cpus), roles, CFG), "cpu") == status


def test_memory_fail_names_role_and_minimum():
    res = by_check(pj.judge_host(good_facts(memory_mb=1500), ["control_plane"], CFG))["memory"][0]
    assert res["status"] == "fail"
    assert "control_plane needs at least 1700 MiB" in res["message"]


def test_disk_checks_follow_roles_and_thresholds():
    facts = good_facts()
    facts["disks"]["/var/lib/containerd"]["free_mb"] = 5000
    facts["disks"]["/var/lib/mooring"]["free_mb"] = 5000
    res = by_check(pj.judge_host(facts, ["workers"], CFG))["disk"]
    assert [r["message"].split(" ")[0] for r in res] == ["/var/lib/containerd", "/var/lib/mooring"]
    assert [r["status"] for r in res] == ["fail", "warn"]  # etcd path not checked on a worker
    missing = good_facts(disks={})
    assert status_of(pj.judge_host(missing, ["workers"], CFG), "disk") == "fail"


def test_swap_fails():
    # install_configures [] (was: the default): swap on blocks only when the install is not to turn it off
    r = by_check(pj.judge_host(good_facts(swap_mb=2048), ["workers"], CFG_BLOCKING))["swap"][0]
    assert r["status"] == "fail" and "swapoff -a" in r["message"]


def test_ports_in_use_by_others_fail_by_our_own_pass():
    res = pj.judge_host(good_facts(listening={"6443": "nginx", "2379": "etcd"}), ["control_plane", "etcd"], CFG)
    r = by_check(res)["ports"][0]
    assert r["status"] == "fail" and "6443 (nginx)" in r["message"] and "2379" not in r["message"]
    res = pj.judge_host(good_facts(listening={"2379": "etcd", "10250": "kubelet"}), ["control_plane", "etcd"], CFG)
    assert status_of(res, "ports") == "pass"
    # a worker does not need 6443
    assert status_of(pj.judge_host(good_facts(listening={"6443": "nginx"}), ["workers"], CFG), "ports") == "pass"


def test_optional_kernel_features_warn_only_when_needed():
    cfg = pf.settings(kernel_features=["ipvs", "wireguard"])
    res = pj.judge_host(good_facts(), ["workers"], cfg)
    assert status_of(res, "ipvs") == "warn"
    assert status_of(res, "wireguard") == "warn"
    assert status_of(res, "ipip") == "pass"
    assert status_of(pj.judge_host(good_facts(), ["workers"], CFG), "ipvs") == "pass"


def test_required_kernel_features_fail():
    k = dict(good_facts()["kernel"], bridge_netfilter=False, overlayfs=False, ip_forward=False)
    res = pj.judge_host(good_facts(kernel=k), ["workers"], CFG)
    assert status_of(res, "bridge_netfilter") == "fail"
    assert status_of(res, "overlayfs") == "fail"
    # was "warn": forwarding off is now what the install configures (and warns with install_configures [])
    assert status_of(res, "ip_forward") == "install"
    assert status_of(pj.judge_host(good_facts(kernel=k), ["workers"], CFG_BLOCKING), "ip_forward") == "warn"


@pytest.mark.parametrize("over,check,status", [
    ({"cgroup": "v1"}, "cgroup", "warn"),
    ({"cgroup": "hybrid"}, "cgroup", "warn"),
    ({"systemd": False, "init": "sh"}, "systemd", "fail"),
    ({"time_sync": False}, "time_sync", "warn"),
    ({"time_sync": None}, "time_sync", "warn"),
    ({"distribution": {"id": "debian", "version_id": "10"}}, "distribution", "fail"),
    ({"distribution": {"id": "arch", "version_id": ""}}, "distribution", "fail"),
    ({"distribution": {"id": "ubuntu", "version_id": "24.04", "id_like": "debian"}}, "distribution", "fail"),
    ({"distribution": {"id": "rocky", "version_id": "9.4", "id_like": "rhel centos fedora"}}, "distribution", "fail"),
])
def test_other_checks(over, check, status):
    assert status_of(pj.judge_host(good_facts(**over), ["workers"], CFG), check) == status


# ---------------------------------------------------------------- cgroup v1 and Kubernetes 1.35

def kube(version, option=None):
    """Settings for hosts to run ``version``; ``option``: the spec's kubelet.failCgroupV1 (None: unset)."""
    kubelet = {} if option is None else {"failCgroupV1": option}
    return pf.settings(kubernetes={"version": version, "kubelet": kubelet})


OPTION = "spec.kubernetes.kubelet.failCgroupV1: false"


@pytest.mark.parametrize("cgroup", ["v1", "hybrid", "v2"])
@pytest.mark.parametrize("version", ["1.34.3", "1.35.8", "1.36.0", ""])
@pytest.mark.parametrize("option", [None, True, False])
def test_cgroup_decision(cgroup, version, option):
    res = pj.judge_host(good_facts(cgroup=cgroup), ["workers"], kube(version, option))
    got = by_check(res)["cgroup"][0]
    if cgroup == "v2":
        expected = "pass"
    elif not version:
        expected = "warn"  # no lock: cannot tell
    elif version == "1.34.3":
        expected = "pass"  # a note only
    else:
        expected = "warn" if option is False else "fail"
    assert got["status"] == expected, got
    if cgroup != "v2":
        assert OPTION in got["message"]  # every v1 result says what to set
    assert got.get("ignorable", True) is (expected != "fail")


def test_cgroup_v1_at_1_35_refuses_naming_the_host_and_the_option():
    cfg = kube("1.35.8")
    reg = registered(cfg, cp1=good_facts(hostname="cp1", machine_id="1" * 32, cgroup="hybrid"),
                     w1=good_facts(hostname="w1", machine_id="2" * 32))
    _merged, _text, summary = pi.run_inventory(reg, ignore=["cgroup"])
    assert [(h, c) for h, c, _m in summary["failed"]] == [("cp1", "cgroup")]
    line = "%s %s: %s" % summary["failed"][0]  # the module's failure_lines
    assert line.startswith("cp1 cgroup: cgroup hybrid") and OPTION in line
    assert "Kubernetes 1.35.8" in line and "preflight_ignore cannot skip this one" in line


def test_cgroup_v1_at_1_35_with_the_option_warns_naming_the_host():
    reg = registered(kube("1.35.8", False), cp1=good_facts(hostname="cp1", cgroup="v1"))
    _merged, _text, summary = pi.run_inventory(reg)
    assert summary["failed"] == []
    assert [(h, c) for h, c, _m in summary["warnings"]] == [("cp1", "cgroup")]
    assert "SystemVerification" in summary["warnings"][0][2]


@pytest.mark.parametrize("kubernetes, problem", [
    ({"version": "1.35"}, "kubernetes.version: '1.35' is not a Kubernetes version"),
    ({"version": "1.35.8", "kubelet": {"failCgroupV1": "false"}}, "kubernetes.kubelet: {'failCgroupV1': 'false'} is not"),
    ({"version": "1.35.8", "kubelet": ["failCgroupV1"]}, "kubernetes.kubelet: ['failCgroupV1'] is not"),
    ({"versions": "1.35.8"}, "kubernetes: unknown key(s) versions (use version, kubelet)"),
])
def test_bad_kubernetes_settings_are_refused(kubernetes, problem):
    with pytest.raises(pf.PreflightError) as err:
        pf.settings(kubernetes=kubernetes)
    assert any(p.startswith(problem) for p in err.value.problems), err.value.problems


def test_kubernetes_settings_default_to_unknown():
    assert CFG["kubernetes"] == {"version": "", "minor": None, "allows_cgroup_v1": False}
    assert kube("v1.35.8", False)["kubernetes"] == {"version": "v1.35.8", "minor": (1, 35), "allows_cgroup_v1": True}


# ---------------------------------------------------------------- settings

def test_settings_merge_and_validate():
    cfg = pf.settings(thresholds={"workers": {"cpus": 3, "memory_mb": {"recommended": 9000}}})
    assert cfg["thresholds"]["workers"]["cpus"] == {"min": 3, "recommended": 3}
    assert cfg["thresholds"]["workers"]["memory_mb"] == {"min": 1024, "recommended": 9000}
    assert cfg["thresholds"]["control_plane"] == pf.DEFAULT_THRESHOLDS["control_plane"]
    with pytest.raises(pf.PreflightError) as exc:
        pf.settings(thresholds={"masters": {}}, kernel_features=["dummy"], ignore=["nosuch", "h1:swap"],
                    disks=[{"path": "relative"}], ports={"workers": [70000]})
    text = str(exc.value)
    for needle in ("'masters'", "'dummy'", "'nosuch'", "relative", "70000"):
        assert needle in text
    assert "h1:swap" not in text
    assert isinstance(exc.value, MooringError)


def test_settings_install_configures():
    assert CFG["install_configures"] == ["swap", "bridge_netfilter", "overlayfs", "ip_forward"]
    assert CFG_BLOCKING["install_configures"] == []
    assert pf.settings(install_configures=["ip_forward"])["install_configures"] == ["ip_forward"]
    with pytest.raises(pf.PreflightError) as exc:
        pf.settings(install_configures=["swap", "cpu"])
    assert "install_configures: 'cpu'" in str(exc.value) and "'swap'" not in str(exc.value)


def test_host_roles():
    assert pf.host_roles(["etcd", "control_plane", "other"]) == ["control_plane", "etcd"]
    assert pf.host_roles([]) == ["workers"]


# ---------------------------------------------------------------- inventory

def registered(cfg=None, **hosts):
    cfg = CFG if cfg is None else cfg
    out = {}
    for name, facts in hosts.items():
        if isinstance(facts, str):
            out[name] = {"unreachable": True, "msg": facts}
        else:
            out[name] = {"facts": facts, "checks": pj.judge_host(facts, ["workers"], cfg), "changed": False}
    return out


def test_unique_hostnames_and_machine_ids():
    a = good_facts(hostname="h1", machine_id="1" * 32)
    b = good_facts(hostname="h2", machine_id="1" * 32)
    c = good_facts(hostname="h1", machine_id="3" * 32)
    merged, text, summary = pi.run_inventory(registered(a=a, b=b, c=c))
    failed = {(h, c) for h, c, _m in summary["failed"]}
    assert failed == {("a", "machine_id"), ("b", "machine_id"), ("a", "hostname"), ("c", "hostname")}
    msg = [m for h, c, m in summary["failed"] if (h, c) == ("a", "machine_id")][0]
    assert "also used by b" in msg
    assert "FAIL (must fix):" in text and "a machine_id:" in text


def test_invalid_and_empty_identity():
    merged, _t, summary = pi.run_inventory(registered(x=good_facts(hostname="Bad_Name", machine_id="")))
    assert {c for _h, c, _m in summary["failed"]} == {"hostname", "machine_id"}


def test_reachability_and_unreachable_host():
    a = good_facts(hostname="h1", machine_id="1" * 32,
                   reach={"b": {"address": "10.0.0.2", "ok": False, "error": "timed out"}})
    merged, text, summary = pi.run_inventory(registered(a=a, b="ssh: connect timed out"))
    failed = {(h, c): m for h, c, m in summary["failed"]}
    assert "cannot reach b (10.0.0.2: timed out)" in failed[("a", "reachability")]
    assert "ssh: connect timed out" in failed[("b", "reachability")]
    assert merged["b"] == [r for r in merged["b"] if r["check"] == "reachability"]


def test_ignore_list_per_check_and_per_host():
    a = good_facts(hostname="h1", machine_id="1" * 32, swap_mb=100)
    b = good_facts(hostname="h2", machine_id="1" * 32, swap_mb=100)
    # swap on blocks with install_configures [] (with the default it is "install", which ignore leaves alone)
    merged, text, summary = pi.run_inventory(registered(CFG_BLOCKING, a=a, b=b), ignore=["machine_id", "a:swap"])
    assert [(h, c) for h, c, _m in summary["failed"]] == [("b", "swap")]
    ign = [r for r in merged["a"] if r["status"] == "ignored"]
    assert {r["check"] for r in ign} == {"machine_id", "swap"}
    assert all("ignored by preflight_ignore" in r["message"] for r in ign)


def test_report_table_is_host_by_check():
    a = good_facts(hostname="h1", machine_id="1" * 32, cpus=1)
    b = good_facts(hostname="h2", machine_id="2" * 32)
    _m, text, summary = pi.run_inventory(registered(a=a, b=b))
    lines = text.splitlines()
    header = lines[0].split()
    assert header[0] == "host" and header[1:4] == ["cpu", "mem", "disk"] and header[-3:] == ["reach", "route", "nets"]
    row_a = lines[2].split()
    row_b = lines[3].split()
    assert row_a[0] == "a" and row_a[1] == "WARN"  # 1 CPU on a worker: below recommended
    assert row_b[0] == "b" and set(row_b[1:]) == {"ok"}
    assert len(row_a) == len(header)
    assert lines[-1] == "preflight: 2 host(s), 0 failure(s), 1 warning(s)"
    assert summary["status"]["a"]["cpu"] == "warn"


def test_report_shows_what_the_install_configures():
    k = _kernel(br_netfilter={"loadable": True}, overlay={"loadable": True})
    a = good_facts(hostname="h1", machine_id="1" * 32, swap_mb=512, kernel=dict(k, ip_forward=False))
    b = good_facts(hostname="h2", machine_id="2" * 32)
    merged, text, summary = pi.run_inventory(registered(a=a, b=b), ignore=["swap"])
    lines = text.splitlines()
    header = lines[0].split()
    row_a = dict(zip(header, lines[2].split()))
    assert [row_a[c] for c in ("swap", "brnf", "ovl", "fwd")] == ["fix"] * 4
    assert set(lines[3].split()[1:]) == {"ok"}
    assert "fix=the install configures it" in lines[4]
    section = lines.index(FIX_HEADER)
    assert lines[section + 1:section + 5] == ["  a %s: %s" % (c, m) for h, c, m in summary["install"]]
    assert lines[section + 1].startswith("  a swap: swap is on (512 MiB): the install turns it off (swapoff -a)")
    assert [c for _h, c, _m in summary["install"]] == ["swap", "bridge_netfilter", "overlayfs", "ip_forward"]
    # not a failure, not a warning, not "ignored" (ignore only touches warn/fail); the summary keeps its format
    assert summary["failed"] == [] and summary["warnings"] == []
    assert not any(ln.startswith(("FAIL", "WARN")) for ln in lines)
    assert summary["status"]["a"]["swap"] == "install"
    assert [r["status"] for r in merged["a"] if r["check"] == "swap"] == ["install"]
    assert lines[-1] == "preflight: 2 host(s), 0 failure(s), 0 warning(s)"
    # with a real failure too, both sections, FAIL first
    c = good_facts(hostname="h3", machine_id="3" * 32, swap_mb=1, cpus=0)
    _m, text, summary = pi.run_inventory(registered(a=a, c=c))
    lines = text.splitlines()
    assert lines.index("FAIL (must fix):") < lines.index(FIX_HEADER)
    assert {(h, ch) for h, ch, _m in summary["install"]} >= {("a", "swap"), ("c", "swap")}
    assert [(h, ch) for h, ch, _m in summary["failed"]] == [("c", "cpu")]


def test_no_install_section_when_nothing_to_configure():
    _m, text, summary = pi.run_inventory(registered(a=good_facts()))
    assert summary["install"] == [] and "FIX" not in text and "fix" not in text.split()


def test_inputs_not_mutated():
    a = good_facts(hostname="h1", machine_id="1" * 32, swap_mb=1)
    reg = registered(a=a)
    before = copy.deepcopy(reg)
    pi.run_inventory(reg, ignore=["swap"])
    assert reg == before


# ---------------------------------------------------------------- report invariants (property test)

_result_st = st.fixed_dictionaries({
    "check": st.sampled_from(pf.CHECKS),
    "status": st.sampled_from(pf.STATUSES),
    "message": st.text(alphabet="abc xyz", min_size=1, max_size=20),
})


@hsettings(max_examples=60, deadline=None)
@given(st.dictionaries(st.from_regex(r"^h[0-9]{1,3}$", fullmatch=True), st.lists(_result_st, max_size=12),
                       min_size=1, max_size=8))
def test_report_lists_every_failure_and_one_row_per_host(results_by_host):
    text, summary = pr.render_report(results_by_host)
    lines = text.splitlines()
    fails = [(h, r["check"]) for h, rs in results_by_host.items() for r in rs if r["status"] == "fail"]
    warns = [(h, r["check"]) for h, rs in results_by_host.items() for r in rs if r["status"] == "warn"]
    assert sorted((h, c) for h, c, _m in summary["failed"]) == sorted(fails)
    assert len(summary["warnings"]) == len(warns)
    installs = [(h, r["check"]) for h, rs in results_by_host.items() for r in rs if r["status"] == "install"]
    assert sorted((h, c) for h, c, _m in summary["install"]) == sorted(installs)
    assert (lines.count(FIX_HEADER) == 1) == bool(installs)
    assert lines[-1] == "preflight: %d host(s), %d failure(s), %d warning(s)" % (
        len(results_by_host), len(fails), len(warns))
    rows = [ln.split()[0] for ln in lines[2:2 + len(results_by_host)]]
    assert rows == sorted(results_by_host)
    for h, checks in summary["status"].items():
        for c, s in checks.items():
            worst = max((r["status"] for r in results_by_host[h] if r["check"] == c), key=pr.RANK.get)
            assert s == worst


def test_report_lists_host_preflight_checks_per_host_by_name():
    """Checks of troubleshoot.sh documents are not table columns: each is listed per host with its outcome,
    and a fail among them fails the inventory like a built-in check."""
    results = {"h1": [{"check": "cpu", "status": "pass", "message": ""},
                      {"check": "Kubelet port free", "status": "fail", "message": "10250 is in use"},
                      {"check": "Amount of Memory", "status": "warn", "message": "little"}],
               "h2": [{"check": "cpu", "status": "pass", "message": ""},
                      {"check": "Kubelet port free", "status": "pass", "message": "free"}]}
    text, summary = pr.render_report(results)
    lines = text.splitlines()
    start = lines.index("Host preflights (troubleshoot.sh documents):")
    assert [line.split() for line in lines[start + 1:start + 4]] == [
        ["h1", "FAIL:", "Kubelet", "port", "free"], ["h1", "WARN:", "Amount", "of", "Memory"], ["h2", "ok:", "Kubelet", "port", "free"]]
    assert "Kubelet port free" not in lines[0]
    assert summary["failed"] == [("h1", "Kubelet port free", "10250 is in use")]
    assert "  h1 Kubelet port free: 10250 is in use" in lines


# ---------------------------------------------------------------- field checks: networks, default route, etcd disk, clock

def test_the_network_defaults_are_the_installer_specs():
    from ansible_collections.mooring.cluster.plugins.module_utils.spec import installer  # pylint: disable=import-outside-toplevel

    spec_defaults = {"pod": installer.DEFAULTS["kubernetes"]["podCIDR"], "service": installer.DEFAULTS["kubernetes"]["serviceCIDR"]}
    assert spec_defaults == pf.DEFAULT_NETWORKS


def test_a_good_host_passes_the_field_checks():
    res = by_check(pj.judge_host(good_facts(), ["etcd"], CFG))
    flat = pj.judge_host(good_facts(), ["etcd"], CFG)
    assert [status_of(flat, c) for c in ("default_route", "networks", "etcd_disk")] == ["pass", "pass", "pass"]
    assert res["default_route"][0]["message"] == "default route via 192.168.1.1 dev eth0"
    assert res["etcd_disk"][0]["message"] == ("fdatasync p99 1.5 ms (p50 0.4 ms, 456 writes of 2300 bytes in /var/lib)")
    assert "etcd_disk" not in by_check(pj.judge_host(good_facts(), ["workers"], CFG))  # only on etcd hosts


def test_a_pod_cidr_overlapping_a_host_network_fails_naming_both():
    cfg = pf.settings(networks={"pod": "192.168.0.0/16", "service": "10.96.0.0/16"})
    r = by_check(pj.judge_host(good_facts(), ["workers"], cfg))["networks"][0]
    assert r["status"] == "fail"
    assert r["message"].startswith("pod CIDR (spec.kubernetes.podCIDR) 192.168.0.0/16 overlaps this host's address "
                                   "192.168.1.10/24 (eth0), route 192.168.1.0/24 (eth0)")
    # a service CIDR inside a host's wider route fails too
    wide = good_facts(network=dict(good_facts()["network"], routes=[{"dst": "10.0.0.0/8", "dev": "eth1"}]))
    r = by_check(pj.judge_host(wide, ["workers"], CFG))["networks"][0]
    assert r["status"] == "fail" and "service CIDR (spec.kubernetes.serviceCIDR) 10.96.0.0/16 overlaps this host's " \
        "route 10.0.0.0/8 (eth1)" in r["message"] and "pod CIDR" in r["message"]


def test_the_clusters_own_devices_inside_its_networks_are_no_clash():
    own = good_facts(network={
        "addresses": [{"dev": "cni0", "cidr": "10.32.0.1/24"}, {"dev": "kube-ipvs0", "cidr": "10.96.0.1/32"},
                      {"dev": "lo", "cidr": "127.0.0.1/8"}, {"dev": "eth0", "cidr": "fe80::1/64"}],
        "routes": [{"dst": "10.32.1.0/24", "dev": "flannel.1"}, {"dst": "10.32.9.3", "dev": "cali12ab"}],
        "default_route": "via 192.168.1.1 dev eth0"})
    assert status_of(pj.judge_host(own, ["workers"], CFG), "networks") == "pass"
    # the same range on a host interface is a clash
    lan = good_facts(network=dict(own["network"], addresses=[{"dev": "eth1", "cidr": "10.32.0.5/24"}]))
    assert status_of(pj.judge_host(lan, ["workers"], CFG), "networks") == "fail"
    # a CNI device whose route is wider than the pod CIDR is not the cluster's own
    wide = good_facts(network=dict(own["network"], routes=[{"dst": "10.0.0.0/8", "dev": "cni0"}]))
    assert status_of(pj.judge_host(wide, ["workers"], CFG), "networks") == "fail"


def test_no_default_route_fails_and_unreadable_routes_warn():
    r = by_check(pj.judge_host(good_facts(network=dict(good_facts()["network"], default_route=None)), ["workers"], CFG))
    assert r["default_route"][0]["status"] == "fail" and r["default_route"][0]["message"].startswith("no default route")
    r = by_check(pj.judge_host(good_facts(network={"error": "ip -j addr show exited 1: x"}), ["workers"], CFG))
    assert [r["default_route"][0]["status"], r["networks"][0]["status"]] == ["warn", "warn"]


def test_gather_networks_reports_what_ip_could_not_give():
    assert pg.gather_networks(lambda argv: (1, "", "Cannot open netlink socket"))["error"] == \
        "ip -j addr show exited 1: Cannot open netlink socket"
    assert "no JSON list" in pg.gather_networks(lambda argv: (0, "{}", ""))["error"]
    only_v6_default = pg.gather_networks(lambda argv: {("ip", "-j", "-6", "route", "show"): (0, json.dumps(
        [{"dst": "default", "gateway": "fd00::1", "dev": "eth0"}]), "")}.get(tuple(argv), (0, "[]", "")))
    assert only_v6_default["default_route"] == "via fd00::1 dev eth0"


def test_etcd_disk_latency_warns_and_fails_at_its_limits():
    def judged(p99, **spec):
        cfg = pf.settings(etcd_disk=spec)
        facts = good_facts(etcd_disk={"p99_ms": p99, "p50_ms": 1.0, "writes": 456, "measured": "/var/lib"})
        return by_check(pj.judge_host(facts, ["etcd"], cfg))["etcd_disk"][0]

    assert judged(9.9)["status"] == "pass"
    assert judged(10.1)["status"] == "warn" and "etcd wants under 10 ms" in judged(10.1)["message"]
    assert judged(100.5)["status"] == "fail" and "put /var/lib/etcd on a faster disk" in judged(100.5)["message"]
    assert judged(30, fail_p99_ms=25)["status"] == "fail"
    missing = by_check(pj.judge_host(good_facts(etcd_disk={"error": "/var/lib: Read-only file system"}), ["etcd"], CFG))
    assert missing["etcd_disk"][0]["status"] == "warn" and "Read-only file system" in missing["etcd_disk"][0]["message"]


def test_measure_disk_writes_in_the_nearest_existing_parent_and_leaves_nothing(tmp_path):
    (tmp_path / "var" / "lib").mkdir(parents=True)
    spec = dict(pf.DEFAULT_ETCD_DISK, bytes=23000)
    got = hd.measure_disk(spec, root=str(tmp_path))
    assert got["writes"] == 10 and got["measured"] == "/var/lib" and 0 <= got["p50_ms"] <= got["p99_ms"]
    assert not (tmp_path / "var" / "lib" / "etcd").exists() and list((tmp_path / "var" / "lib").iterdir()) == []
    # a directory it cannot write to is reported, not raised
    (tmp_path / "var" / "lib").chmod(0o500)
    try:
        if os.getuid() != 0:
            assert "error" in hd.measure_disk(spec, root=str(tmp_path))
    finally:
        (tmp_path / "var" / "lib").chmod(0o700)


def test_nearest_rank_percentiles():
    ordered = list(range(1, 201))
    assert [hd.nearest_rank(ordered, p) for p in (50, 99, "99.900000", 100)] == [100, 198, 200, 200]
    assert hd.nearest_rank([7], 99) == 7


def test_clock_offset_is_ntps_estimate_with_its_error_bound():
    # controller sends at 100.0, the host (5 s ahead) receives at 105.2, replies at 105.5, the answer is back at 100.6
    got = pc.clock_offset(100.0, 105.2, 105.5, 100.6)
    assert got == {"offset": 5.05, "error": 0.15}
    assert got["offset"] - got["error"] <= 5.0 <= got["offset"] + got["error"]


def test_a_clock_5_s_apart_fails_and_a_close_one_passes():
    def clock(offset, error):
        regs = registered(a=good_facts(clock={"offset": offset, "error": error}), b=good_facts(hostname="b", machine_id="b" * 32))
        merged, _text, summary = pi.run_inventory(regs)
        return merged

    merged = clock(5.02, 0.1)
    r = by_check(merged["a"])["clock"][0]
    assert r["status"] == "fail" and r["message"].startswith("clock 5.02 s ahead of the controller's (+-0.10 s); more than 2 s")
    assert "clock" not in by_check(merged["b"])  # no measurement, no result
    assert by_check(clock(-0.3, 0.05)["a"])["clock"][0]["status"] == "pass"
    assert by_check(clock(-1.9, 0.3)["a"])["clock"][0]["status"] == "warn"
    _m, _t, summary = pi.run_inventory(registered(a=good_facts(clock={"offset": 1.5, "error": 0.1})), max_clock_offset=1.0)
    assert [c for _h, c, _msg in summary["failed"]] == ["clock"]


@pytest.mark.parametrize("kwargs,problem", [
    ({"networks": {"pod": "10.32.0.0/33"}}, "networks.pod: '10.32.0.0/33' is not a network in CIDR notation"),
    ({"networks": {"nodes": "10.0.0.0/8"}}, "networks: unknown network 'nodes'"),
    ({"etcd_disk": {"fail_p99": 5}}, "etcd_disk: unknown key(s) fail_p99"),
    ({"etcd_disk": {"bytes": -1}}, "etcd_disk.bytes: must be a number from 0"),
    ({"etcd_disk": {"path": "var/lib/etcd"}}, "etcd_disk.path: must be an absolute path"),
    ({"etcd_disk": {"roles": ["masters"]}}, "etcd_disk.roles: must be a list of"),
    ({"max_clock_offset": 0}, "max_clock_offset: must be seconds, a number above 0"),
])
def test_bad_field_check_settings_are_refused(kwargs, problem):
    with pytest.raises(pf.PreflightError) as err:
        pf.settings(**kwargs)
    assert any(p.startswith(problem) for p in err.value.problems), err.value.problems


# ---------------------------------------------------------------- platforms (docs/platforms.md)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
ROCKY = {"id": "rocky", "version_id": "9.4", "pretty": "Rocky Linux 9.4 (Blue Onyx)", "id_like": "rhel centos fedora"}


def test_platforms_are_what_the_catalog_and_the_bundle_carry():
    """One definition, held to the data: the distros the catalog has host packages for, the bundle's distro,
    and the release of the lab and the execution environment the bundle's .debs come from."""
    import inspect
    import re

    import yaml

    from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build

    carried = set()
    catalog = os.path.join(ROOT, "catalog")
    for name in sorted(os.listdir(catalog)):
        if name.endswith(".yml"):
            with open(os.path.join(catalog, name), encoding="utf-8") as f:
                entry = yaml.safe_load(f)
            for key in ("packages", "controlPlanePackages"):
                carried |= {d for d, names in (entry.get(key) or {}).items() if names}
    assert carried == set(pf.PLATFORMS) == {"debian"}
    assert inspect.signature(build.build_bundle).parameters["distro"].default in pf.PLATFORMS
    codenames = {c for p in pf.PLATFORMS.values() for c in p["versions"].values()}
    for path in ("tests/lab/lab.py", "scripts/ee.sh"):
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            assert re.search(r'^SUITE ?= ?"?(\w+)"?$', f.read(), re.M).group(1) in codenames, path
    assert pf.DEFAULT_DISTRIBUTIONS == {"debian": ["12"]}
    assert pf.platforms_text() == "Debian 12 (bookworm)"


def test_a_rhel_family_host_is_refused_naming_both_and_cannot_be_ignored():
    res = pj.judge_distribution(ROCKY, CFG["distributions"])
    assert res == {
        "check": "distribution", "status": "fail", "ignorable": False,
        "message": "host OS rocky 9.4 (Rocky Linux 9.4 (Blue Onyx), os-release ID=rocky VERSION_ID=9.4 ID_LIKE=rhel "
                   "centos fedora) is not supported: the bundle carries Debian packages (.deb, installed with apt) "
                   "for Debian 12 (bookworm) only; install onto a supported host OS (docs/platforms.md)"}
    kept = pi.apply_ignore("w1", [res], ["distribution"])
    assert kept[0]["status"] == "fail" and kept[0]["message"].endswith("[preflight_ignore cannot skip this one]")
    for os_id in ("rhel", "almalinux", "centos", "fedora", "opensuse-leap", "arch", ""):
        assert pf.platform_status({"id": os_id, "version_id": "9"}, CFG["distributions"]) == "foreign"


@pytest.mark.parametrize("dist,expected", [
    ({"id": "debian", "version_id": "12"}, "supported"),
    ({"id": "debian", "version_id": "11"}, "family"),
    ({"id": "debian", "version_id": "13"}, "family"),
    ({"id": "debian", "version_id": ""}, "family"),
    ({"id": "ubuntu", "version_id": "24.04", "id_like": "debian"}, "family"),
    ({"id": "linuxmint", "version_id": "21", "id_like": "ubuntu debian"}, "family"),
    ({"id": "ubuntu", "version_id": "24.04"}, "foreign"),
])
def test_platform_status(dist, expected):
    assert pf.platform_status(dist, CFG["distributions"]) == expected


def test_another_release_of_the_family_fails_and_can_be_ignored():
    res = pj.judge_distribution({"id": "debian", "version_id": "11", "pretty": "Debian GNU/Linux 11 (bullseye)"},
                                CFG["distributions"])
    assert res["status"] == "fail" and "ignorable" not in res
    assert res["message"].startswith("host OS debian 11 (Debian GNU/Linux 11 (bullseye), os-release ID=debian "
                                     "VERSION_ID=11) is not supported: ")
    assert pi.apply_ignore("cp1", [res], ["cp1:distribution"])[0]["status"] == "ignored"
    nothing = pj.judge_distribution({}, CFG["distributions"])
    assert nothing["message"].startswith("host OS unknown (no VERSION_ID) (os-release ID=(none) VERSION_ID=(none)) ")


def test_distributions_setting_can_only_narrow():
    assert pf.settings(distributions={"debian": [12]})["distributions"] == {"debian": ["12"]}
    assert pf.settings()["distributions"] == pf.DEFAULT_DISTRIBUTIONS
    for value, needle in (({"rocky": ["9"]}, "distributions.rocky: the bundle cannot install onto rocky"),
                          ({"debian": ["11", "12"]}, "distributions.debian: ['11', '12'] - supported: Debian 12"),
                          ({"debian": "12"}, "distributions.debian: '12'"),
                          ({}, "distributions: must be a mapping of os-release ID to VERSION_IDs, at most Debian 12")):
        with pytest.raises(pf.PreflightError) as exc:
            pf.settings(distributions=value)
        assert needle in str(exc.value), str(exc.value)


def test_a_refused_host_is_not_written_to(tmp_path):
    """The etcd disk test (a temporary file) is left out on a host whose OS is refused: nothing is written."""
    spec = dict(pf.DEFAULT_ETCD_DISK, path="/var/lib/etcd", bytes=4600)
    root = fake_host(tmp_path, **{"etc/os-release": 'ID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\n'})
    before = sorted((p, os.stat(os.path.join(p)).st_mtime_ns) for p, _d, _f in os.walk(root))
    facts = pg.gather(root=root, etcd_disk=spec, distributions=CFG["distributions"])
    assert facts["etcd_disk"] is None
    assert facts["distribution"] == {"id": "rocky", "version_id": "9.4", "pretty": "", "id_like": "rhel centos fedora"}
    assert sorted((p, os.stat(os.path.join(p)).st_mtime_ns) for p, _d, _f in os.walk(root)) == before
    ok = pg.gather(root=fake_host(tmp_path / "deb"), etcd_disk=spec, distributions=CFG["distributions"])
    assert ok["etcd_disk"] is not None
