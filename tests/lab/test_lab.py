# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Self-tests of the lab: naming rules, host keys and known_hosts, and the networking guard on the real kernel and podman
(run by scripts/integration.sh after `lab.py setup`, before any lab host starts)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("mooring_lab", Path(__file__).with_name("lab.py"))
lab = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lab)


def test_lab_spec_at_the_versions_an_upgrade_starts_from():
    import yaml

    demo = yaml.safe_load(lab.lab_spec("noderoll"))["spec"]
    assert demo["kubernetes"]["controlPlaneEndpoint"] == "%s.%d:6443" % (lab.lab_prefix("noderoll"), lab.VIP_HOST)
    old = yaml.safe_load(lab.lab_spec("noderoll", "patch"))["spec"]
    pins = lab.labspec.previous("patch")
    assert {name: old[name]["version"] for name in pins} == pins
    # Nothing else moves: the same spec with the demo's versions put back.
    for name in pins:
        old[name]["version"] = demo[name]["version"]
    assert old == demo
    with pytest.raises(lab.LabError, match="no entry 'nope'"):
        lab.lab_spec("noderoll", "nope")
    with pytest.raises(lab.labspec.SpecError, match="no spec.calico.version line"):
        lab.labspec.pin_versions(lab.labspec.spec_text(), {"calico": "3.30.0"})


def test_subnet_index_is_deterministic_and_in_range():
    for name in ("preflight", "etcd", "lab", "a" * 60):
        idx = lab.subnet_index(name)
        assert 10 <= idx <= 249
        assert lab.subnet_index(name) == idx


def test_subnet_index_probes_past_taken():
    idx = lab.subnet_index("etcd")
    assert lab.subnet_index("etcd", taken=[idx]) == (idx + 1 if idx < 249 else 10)


def test_scenarios_in_the_tree_never_share_a_subnet(monkeypatch):
    monkeypatch.delenv("MOORING_LAB_SUBNET_INDEX", raising=False)
    names = lab.scenario_names()
    prefixes = [lab.lab_prefix(n) for n in names]
    assert len(set(prefixes)) == len(prefixes), dict(zip(names, prefixes))
    assert lab.lab_prefix("not-a-scenario") not in prefixes


def test_forced_subnet(monkeypatch):
    monkeypatch.setenv("MOORING_LAB_SUBNET_INDEX", "42")
    assert lab.lab_prefix("anything") == "10.89.42"
    assert lab.host_address("anything", 3) == "10.89.42.13"


@pytest.mark.parametrize("n,k,cp,workers", [
    (1, None, [1], [1]),
    (2, None, [1], [2]),
    (3, None, [1, 2, 3], [1, 2, 3]),
    (5, None, [1, 2, 3], [4, 5]),
    (5, 1, [1], [2, 3, 4, 5]),
])
def test_group_layout(n, k, cp, workers):
    g = lab.group_layout(n, k)
    assert g["control_plane"] == cp and g["etcd"] == cp and g["workers"] == workers


def test_group_layout_rejects_bad_control_plane():
    with pytest.raises(lab.LabError, match="between 1 and the number of hosts"):
        lab.group_layout(2, 3)


def test_platform_index():
    assert lab.platform_index("etcd", "etcd-3") == 3
    for bad in ("etcd3", "other-1", "etcd-0", "etcd-x", "etcd-201"):
        with pytest.raises(lab.LabError, match="MOORING_LAB"):
            lab.platform_index("etcd", bad)


def test_inventory_groups_and_addresses(tmp_path, monkeypatch):
    monkeypatch.setenv("MOORING_LAB_SUBNET_INDEX", "77")
    monkeypatch.setattr(lab, "ROOT", tmp_path)
    text = lab.write_inventory("t", 4, None).read_text()
    assert "    t-4:\n      ansible_host: 10.89.77.14\n" in text
    assert "    workers:\n      hosts:\n        t-4: {}\n" in text
    assert "    control_plane:\n      hosts:\n        t-1: {}\n        t-2: {}\n        t-3: {}\n" in text


def test_inventory_checks_host_keys_against_the_labs_known_hosts(tmp_path, monkeypatch):
    monkeypatch.setattr(lab, "ROOT", tmp_path)
    text = lab.write_inventory("t", 2, None).read_text()
    args = next(line for line in text.splitlines() if "ansible_ssh_common_args" in line)
    known_hosts = tmp_path / "inventories" / "lab" / "t" / "known_hosts"
    assert "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s " % known_hosts in args
    assert "StrictHostKeyChecking=no" not in text and "/dev/null" not in text
    assert lab.known_hosts_path("t") == known_hosts


# ---------------------------------------------------------------- host keys and known_hosts (docs/lab.md)

needs_ssh_keygen = pytest.mark.skipif(not shutil.which("ssh-keygen"), reason="needs ssh-keygen (openssh-client)")


def _keygen(tmp_path, name, kind="ed25519"):
    """A real public key ``TYPE BASE64`` (what a host's /etc/ssh/ssh_host_*_key.pub holds)."""
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", "root@" + name, "-f", str(tmp_path / name)],
                   check=True)
    return " ".join((tmp_path / (name + ".pub")).read_text().split()[:2])


def _entries(path):
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


def _ssh_keygen_find(path, address):
    """The keys OpenSSH itself finds for ADDRESS in known_hosts PATH."""
    out = subprocess.run(["ssh-keygen", "-F", address, "-f", str(path)], capture_output=True, text=True,
                         check=False).stdout
    return [" ".join(line.split()[1:3]) for line in out.splitlines() if line and not line.startswith("#")]


@needs_ssh_keygen
def test_known_hosts_has_one_line_per_address_and_key(tmp_path):
    a, b, c = _keygen(tmp_path, "a"), _keygen(tmp_path, "b", "ecdsa"), _keygen(tmp_path, "c")
    path = tmp_path / "lab" / "known_hosts"
    lab.write_known_hosts(path, "t", {"10.89.77.100": [c], "10.89.77.12": [b, a]})
    assert _entries(path) == ["10.89.77.12 " + b, "10.89.77.12 " + a, "10.89.77.100 " + c]  # numeric order
    assert path.read_text().startswith("# Written by tests/lab/lab.py")
    assert sorted(_ssh_keygen_find(path, "10.89.77.12")) == sorted([a, b])
    assert _ssh_keygen_find(path, "10.89.77.100") == [c]
    assert _ssh_keygen_find(path, "10.89.77.13") == []


@needs_ssh_keygen
def test_known_hosts_rewrite_replaces_old_entries(tmp_path):
    old, new, other = _keygen(tmp_path, "old"), _keygen(tmp_path, "new"), _keygen(tmp_path, "other")
    path = tmp_path / "known_hosts"
    lab.write_known_hosts(path, "t", {"10.89.77.11": [old], "10.89.77.12": [other]})
    lab.write_known_hosts(path, "t", {"10.89.77.11": [new]})  # the lab re-created with host 1 only
    assert _entries(path) == ["10.89.77.11 " + new]
    assert _ssh_keygen_find(path, "10.89.77.11") == [new]
    assert [p.name for p in tmp_path.iterdir() if "known_hosts" in p.name] == ["known_hosts"]  # no temp file left
    lab.write_known_hosts(path, "t", {})
    assert not path.exists()


class _Proc:
    def __init__(self, stdout="", returncode=0):
        self.stdout, self.returncode = stdout, returncode


def _fake_host(monkeypatch, state, pubs):
    def podman(*args, check=True, timeout=None):
        if "is-system-running" in args:
            return _Proc(state + "\n")
        assert args[-3:] == ("sh", "-c", "cat /etc/ssh/ssh_host_*_key.pub")
        return _Proc(pubs)
    monkeypatch.setattr(lab, "podman", podman)


ED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC7M1OBz5437itDf7I0F1e0dhEwguOGVA0ScjLLjNwyu"
RSA = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQChCF81i4CzEeSSGkuSVinkM/A7XGRcJ9Fd0nXWZyVpVbWYEGexngOfb5EHA=="


def test_host_keys_after_boot_without_comments(monkeypatch):
    _fake_host(monkeypatch, "degraded", "%s root@t-1\n%s root@t-1\n" % (RSA, ED))
    assert lab.host_keys("t-1") == (True, [ED, RSA])


@pytest.mark.parametrize("state,pubs,detail", [
    ("starting", ED + "\n", "systemd is starting"),   # first boot not over: keys may be half written
    ("", "", "systemd is not answering"),
    ("running", RSA + "\n", "no SSH host key yet"),    # no ed25519 key
    ("running", "", "no SSH host key yet"),
])
def test_host_keys_not_yet(monkeypatch, state, pubs, detail):
    _fake_host(monkeypatch, state, pubs)
    ok, got = lab.host_keys("t-1")
    assert not ok and detail in got


def test_host_keys_refuses_what_is_not_a_key(monkeypatch):
    _fake_host(monkeypatch, "running", ED + "\n10.0.0.1 ssh-ed25519 AAAA\n")
    with pytest.raises(lab.LabError, match="not a public key"):
        lab.host_keys("t-1")


def test_wait_ready_writes_known_hosts_then_checks_ssh_against_it(tmp_path, monkeypatch):
    monkeypatch.setattr(lab, "ROOT", tmp_path)
    monkeypatch.setattr(lab, "ssh_key", lambda: tmp_path / "id")
    booted = {"t-1": [False, True], "t-2": [True]}  # t-1 still boots at the first probe
    monkeypatch.setattr(lab, "host_keys", lambda h: (True, [ED]) if booted[h].pop(0) else (False, "systemd is starting"))
    monkeypatch.setattr(lab.time, "sleep", lambda _s: None)
    seen = []

    def host_ready(h, address, key, known_hosts):
        seen.append((h, _entries(known_hosts)))
        return True, "ssh ok"
    monkeypatch.setattr(lab, "host_ready", host_ready)
    hosts = {"t-1": "10.89.77.11", "t-2": "10.89.77.12"}
    assert lab.wait_ready("t", hosts) == {"t-1": "ssh ok", "t-2": "ssh ok"}
    entries = ["10.89.77.11 " + ED, "10.89.77.12 " + ED]
    assert sorted(seen) == [("t-1", entries), ("t-2", entries)]  # ssh only once every key is in the file


def test_rm_keeps_the_known_hosts_lines_of_the_hosts_left_only(tmp_path, monkeypatch):
    monkeypatch.setenv("MOORING_LAB_SUBNET_INDEX", "77")
    monkeypatch.setattr(lab, "ROOT", tmp_path)
    path = lab.write_known_hosts(lab.known_hosts_path("t"), "t", {"10.89.77.11": [ED], "10.89.77.12": [RSA]})
    monkeypatch.setattr(lab, "podman", lambda *a, **k: _Proc(returncode=1))
    monkeypatch.setattr(lab, "lab_containers", lambda name: ["t-2"])
    monkeypatch.setattr(lab, "host_keys", lambda h: (True, [RSA]))
    lab.cmd_rm(argparse.Namespace(name="t", hosts=["t-1"]))
    assert _entries(path) == ["10.89.77.12 " + RSA]
    monkeypatch.setattr(lab, "lab_containers", lambda name: [])
    lab.cmd_rm(argparse.Namespace(name="t", hosts=["t-2"]))
    assert not path.exists()


# ---------------------------------------------------------------- networking (docs/lab.md)

def _info(name, **over):
    info = {"driver": "bridge", "subnets": [{"subnet": lab.lab_prefix(name) + ".0/24"}], "internal": True,
            "network_interface": lab.bridge_name(name), "labels": {"mooring.lab.network": lab.NETWORK_VERSION}}
    info.update(over)
    return info


def test_network_of_this_version_is_kept():
    assert lab.network_problems(_info("etcd"), "etcd") == []


@pytest.mark.parametrize("over,word", [
    ({"labels": {}}, "another lab version"),               # made by the lab before the route guard
    ({"network_interface": "cni-podman1"}, "bridge cni-podman1"),  # made by the CNI backend
    ({"internal": False}, "not internal"),
    ({"subnets": [{"subnet": "10.88.0.0/16"}]}, "subnets"),
])
def test_old_or_foreign_networks_are_recreated(over, word):
    assert any(word in p for p in lab.network_problems(_info("etcd", **over), "etcd"))


def test_bridge_names_fit_the_kernel_limit():
    for name in lab.scenario_names() + ["demo", "x" * 80]:
        assert len(lab.bridge_name(name)) <= 15


needs_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"),
                                reason="needs root and iproute2 (CI runs as root)")
TEST_BRIDGE = "mlab251"  # 251 is outside the labs' 10..249: never a real lab's bridge
TEST_ADDR = "10.89.251.11"


@pytest.fixture()
def bare_bridge():
    """A real bridge named like a lab bridge, up, with no address: what CNI left behind."""
    subprocess.run(["ip", "link", "del", TEST_BRIDGE], capture_output=True, check=False)
    subprocess.run(["ip", "link", "add", TEST_BRIDGE, "type", "bridge"], check=True)
    subprocess.run(["ip", "link", "set", TEST_BRIDGE, "up"], check=True)
    yield TEST_BRIDGE
    subprocess.run(["ip", "link", "del", TEST_BRIDGE], capture_output=True, check=False)


@needs_root
def test_bridge_without_address_is_refused_before_any_connection(bare_bridge, monkeypatch):
    sent = []
    monkeypatch.setattr(lab.socket, "create_connection", lambda *a, **k: sent.append(a))
    with pytest.raises(lab.LabError) as exc:
        lab.cmd_connect(argparse.Namespace(host=TEST_ADDR, port=22))
    msg = str(exc.value)
    assert TEST_ADDR in msg and "not directly through an interface" in msg and "netavark" in msg
    assert "dev %s" % bare_bridge not in msg  # the kernel did not pick the bridge
    assert sent == []


@needs_root
def test_the_same_bridge_with_its_gateway_address_is_allowed(bare_bridge):
    subprocess.run(["ip", "addr", "add", "10.89.251.1/24", "dev", bare_bridge], check=True)
    lab.route_check(TEST_ADDR)
    assert netguard_route(TEST_ADDR)["dev"] == bare_bridge


@needs_root
def test_connect_command_refuses_and_ssh_never_connects(bare_bridge):
    proc = subprocess.run(
        ["ssh", "-o", "BatchMode=yes", "-o", "ProxyUseFdpass=yes",
         "-o", "ProxyCommand=%s %s connect %%h %%p" % (sys.executable, Path(lab.__file__)),
         "root@" + TEST_ADDR, "true"], capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 255
    assert "refusing to connect to %s" % TEST_ADDR in proc.stderr


def netguard_route(address):
    return lab.netguard.route_get(address)


needs_podman = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("podman"),
                                  reason="needs root and podman (run after `lab.py setup`, as scripts/integration.sh does)")


@needs_podman
def test_a_network_made_by_an_older_lab_is_recreated(monkeypatch):
    monkeypatch.setenv("MOORING_LAB_SUBNET_INDEX", "250")
    name = "selftest-net"
    net = lab.network_name(name)
    lab.podman("network", "rm", "-f", net, check=False)
    try:
        # the previous lab's way: internal, no bridge name, no version label
        lab.podman("network", "create", "--internal", "--subnet", "10.89.250.0/24", "--gateway", "10.89.250.1",
                   "--label", "mooring.lab=" + name, net)
        lab.ensure_network(name)
        info = json.loads(lab.podman("network", "inspect", net).stdout)[0]
        assert lab.network_problems(info, name) == []
        assert info["network_interface"] == "mlab250"
    finally:
        lab.podman("network", "rm", "-f", net, check=False)


STALE_INDEX = "252"  # outside the labs' 10..249
STALE_BRIDGE = "mlab" + STALE_INDEX
STALE_SUBNET = "10.89.%s.0/24" % STALE_INDEX
STALE_NS = "mooring-selftest-stale"


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@pytest.fixture()
def stale_bridge(monkeypatch):
    """A real bridge with the lab's name and gateway address and a veth into a namespace with no
    process in it: what a lab run under another MOORING_CACHE_DIR leaves when it is killed."""
    monkeypatch.setenv("MOORING_LAB_SUBNET_INDEX", STALE_INDEX)

    def clean():
        _ip("link", "del", STALE_BRIDGE, check=False)
        _ip("link", "del", "mtest" + STALE_INDEX, check=False)
        _ip("netns", "del", STALE_NS, check=False)
    clean()
    _ip("netns", "add", STALE_NS)
    _ip("link", "add", STALE_BRIDGE, "type", "bridge")
    _ip("addr", "add", "10.89.%s.1/24" % STALE_INDEX, "dev", STALE_BRIDGE)
    _ip("link", "add", "mtestveth0", "type", "veth", "peer", "name", "eth0", "netns", STALE_NS)
    _ip("link", "set", "mtestveth0", "master", STALE_BRIDGE, "up")
    _ip("link", "set", STALE_BRIDGE, "up")
    yield STALE_BRIDGE
    clean()


@needs_root
def test_a_killed_runs_bridge_is_removed(stale_bridge):
    lab.release_stale_bridge("selftest-stale", STALE_SUBNET)
    assert _ip("link", "show", stale_bridge, check=False).returncode != 0
    assert STALE_NS in _ip("netns", "list").stdout  # the other cache's podman still records it
    lab.release_stale_bridge("selftest-stale", STALE_SUBNET)  # nothing left: a no-op


@needs_root
def test_a_live_labs_bridge_is_refused_and_kept(stale_bridge):
    proc = subprocess.Popen(["ip", "netns", "exec", STALE_NS, "sleep", "60"])
    try:
        for _attempt in range(50):  # until the process is in the namespace
            if _ip("netns", "pids", STALE_NS).stdout.split():
                break
            time.sleep(0.1)
        with pytest.raises(lab.LabError) as exc:
            lab.release_stale_bridge("selftest-stale", STALE_SUBNET)
        assert "of a running lab" in str(exc.value) and str(proc.pid) in str(exc.value)
        assert _ip("link", "show", stale_bridge, check=False).returncode == 0
    finally:
        proc.kill()
        proc.wait()


@needs_root
def test_an_interface_that_is_not_the_labs_bridge_is_refused(stale_bridge):
    _ip("link", "del", stale_bridge)
    _ip("link", "add", "mtest" + STALE_INDEX, "type", "bridge")
    _ip("addr", "add", "10.89.%s.7/24" % STALE_INDEX, "dev", "mtest" + STALE_INDEX)
    with pytest.raises(lab.LabError) as exc:
        lab.release_stale_bridge("selftest-stale", STALE_SUBNET)
    assert "mtest%s, which is not a lab bridge" % STALE_INDEX in str(exc.value)
    assert _ip("link", "show", "mtest" + STALE_INDEX, check=False).returncode == 0


def test_networks_are_named_per_cache(monkeypatch):
    """podman's address database is one per machine, keyed by network name."""
    monkeypatch.setattr(lab, "CACHE_TAG", "")
    assert lab.network_name("etcd") == "mooring-etcd"
    monkeypatch.setattr(lab, "CACHE_TAG", "445d61eb0123")
    assert lab.network_name("etcd") == "mooring-etcd-445d61eb"
