# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""troubleshoot.sh's host collectors run by mooring on a host: over a fake tree (tmp_path) and fake programs;
sockets and HTTP only on 127.0.0.1; fdatasync writes into tmp_path."""

from __future__ import annotations

import base64
import contextlib
import http.server
import ipaddress
import json
import os
import shutil
import socket
import stat
import subprocess
import threading

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts import hostio as hio
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import collectnetwork as cn
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import collectsystem as cs
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostanalyze as ha
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostcollect as hc
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostconditions as hcond
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostpreflight as hp

REL = "6.1.0-18-amd64"
CPUINFO = "".join("processor\t: %d\nphysical id\t: 0\ncore id\t\t: %d\nflags\t\t: fpu sse sse2%s\n\n" % (n, n // 2, " avx" if n else "")
                  for n in range(4))
ROUTES = ("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
          "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"      # default via 192.0.2.1
          "eth0\t000020AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"      # 172.32.0.0/16
          "cni0\t0000200A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")     # 10.32.0.0/24
TREE = {
    "proc/cpuinfo": CPUINFO,
    "proc/meminfo": "MemTotal:        8000000 kB\nMemFree:         1000000 kB\n",
    "etc/os-release": 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n',
    "proc/sys/kernel/osrelease": REL + "\n",
    "proc/sys/kernel/hostname": "node-1\n",
    "proc/sys/net/ipv4/ip_forward": "1\n",
    "proc/sys/net/ipv4/ip_local_port_range": "32768\t60999\n",
    "proc/sys/fs/inotify/max_user_instances": "128\n",
    "proc/modules": "br_netfilter 32768 0 - Live 0x0000000000000000\noverlay 163840 3 - Live 0x0\nip_vs 200000 0 - Loading 0x0\n",
    "lib/modules/%s/modules.builtin" % REL: "kernel/net/ipv4/tcp_bbr.ko\n",
    "lib/modules/%s/kernel/net/netfilter/nf_conntrack.ko.xz" % REL: "",
    "lib/modules/%s/kernel/drivers/net/wireguard/wireguard.ko" % REL: "",
    "lib/modules/%s/kernel/net/bridge/br_netfilter.ko" % REL: "",
    "proc/net/route": ROUTES,
    "proc/self/mountinfo": "24 30 0:22 / /sys rw - sysfs sysfs rw\n35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
    "proc/self/cgroup": "0::/user.slice/session-1.scope\n",
    "sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
    "sys/fs/cgroup/user.slice/session-1.scope/cgroup.freeze": "0\n",
    "boot/config-%s" % REL: "CONFIG_CGROUPS=y\nCONFIG_CGROUP_BPF=y\n",
    "sys/class/net/eth0/address": "02:fc:00:00:00:01\n",
    "sys/class/net/eth0/flags": "0x1043\n",
    "etc/resolv.conf": "nameserver 192.0.2.53\n",
}
IP = [
    {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536,
     "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8}]},
    {},  # ip -4 prints an empty object for an interface without IPv4
    {"ifindex": 2, "ifname": "eth0", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
     "addr_info": [{"family": "inet", "local": "192.0.2.10", "prefixlen": 24}]},
    {"ifindex": 5, "ifname": "wg0", "flags": ["POINTOPOINT", "NOARP", "UP", "LOWER_UP"], "mtu": 1420,
     "addr_info": [{"family": "inet", "local": "10.99.0.1", "prefixlen": 24}]},
]
SERVICES = ("containerd.service  loaded active running containerd container runtime\n"
            "ufw.service         loaded inactive dead    Uncomplicated firewall\n"
            "foo.service         not-found inactive dead foo.service\n")
PROGRAMS = {
    "ip": (0, json.dumps(IP), ""),
    "systemctl": (0, SERVICES, ""),
    "timedatectl": (0, "Timezone=Etc/UTC\nNTP=yes\nNTPSynchronized=no\n", ""),
}


def make_tree(base, files=None):
    for rel, text in (TREE if files is None else files).items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return base


class FakeRun:
    """Programs by name: (rc, stdout, stderr), a callable, or an exception to raise."""

    def __init__(self, programs=None):
        self.programs = dict(PROGRAMS, **(programs or {}))
        self.calls = []

    def __call__(self, argv, **kwargs):
        self.calls.append((list(argv), kwargs))
        answer = self.programs.get(os.path.basename(argv[0]))
        if answer is None or isinstance(answer, Exception):
            raise answer or FileNotFoundError(2, "No such file or directory", argv[0])
        return answer(argv, **kwargs) if callable(answer) else answer


@pytest.fixture
def root(tmp_path):
    return make_tree(tmp_path / "root")


def run_one(kind, spec, root, run=None, **kw):
    out = hc.collect([(kind, spec)], root=str(root), run=run or FakeRun(), **kw)
    return out["collected"], out["errors"]


def result(kind, spec, root, run=None, **kw):
    collected, errors = run_one(kind, spec, root, run, **kw)
    assert errors == []
    return collected[hp.result_path(kind, spec)]


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------------------ system


def test_cpu_memory_and_host_os_from_the_tree(root):
    cpu = result("cpu", {}, root)
    assert cpu == {"logicalCount": 4, "physicalCount": 2, "flags": ["fpu", "sse", "sse2", "avx"],
                   "machineArch": os.uname().machine}
    assert result("memory", {}, root) == {"total": 8000000 * 1024}
    assert result("hostOS", {}, root) == {"name": "node-1", "kernelVersion": REL, "platform": "ubuntu",
                                          "platformVersion": "22.04", "platformFamily": "debian"}


def test_cpu_without_core_ids_counts_logical_and_rocky_is_rhel(tmp_path):
    root = make_tree(tmp_path, {"proc/cpuinfo": "processor\t: 0\nFeatures\t: fp asimd\n\nprocessor\t: 1\nFeatures\t: fp asimd crc32\n",
                                "etc/os-release": 'ID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.3"\n'})
    cpu = result("cpu", {}, root)
    assert (cpu["logicalCount"], cpu["physicalCount"], cpu["flags"]) == (2, 2, ["fp", "asimd", "crc32"])
    host_os = result("hostOS", {}, root)
    assert (host_os["platform"], host_os["platformVersion"], host_os["platformFamily"]) == ("rocky", "9.3", "rhel")


def test_a_missing_file_is_one_error_naming_the_collector(tmp_path):
    collected, errors = run_one("memory", {}, make_tree(tmp_path, {"proc/meminfo": "MemFree: 1 kB\n"}))
    assert collected == {} and errors == ["memory: no MemTotal in /proc/meminfo"]
    collected, errors = run_one("diskUsage", {"collectorName": "etcd"}, tmp_path)
    assert collected == {} and errors == ["diskUsage etcd: path is required"]


def test_disk_usage_measures_the_nearest_existing_directory(root):
    (root / "var/lib").mkdir(parents=True)
    # Other processes write to the same file system meanwhile (CI shares the machine): the used bytes the collector
    # read lie between a reading just before and one just after it.
    before = os.statvfs(root / "var/lib")
    got = result("diskUsage", {"collectorName": "kubelet", "path": "/var/lib/kubelet/pods"}, root)
    after = os.statvfs(root / "var/lib")
    assert got["total_bytes"] == after.f_blocks * after.f_frsize > 0
    used = sorted((st.f_blocks - st.f_bfree) * st.f_frsize for st in (before, after))
    assert used[0] <= got["used_bytes"] <= used[1]
    assert list(run_one("diskUsage", {"collectorName": "kubelet", "path": "/x"}, root)[0]) == ["host-collectors/diskUsage/kubelet.json"]


def test_host_services_and_time_from_their_programs(root):
    run = FakeRun()
    assert result("hostServices", {}, root, run) == [
        {"Unit": "containerd.service", "Load": "loaded", "Active": "active", "Sub": "running"},
        {"Unit": "ufw.service", "Load": "loaded", "Active": "inactive", "Sub": "dead"},
        {"Unit": "foo.service", "Load": "not-found", "Active": "inactive", "Sub": "dead"}]
    assert run.calls[0][0] == ["systemctl", "list-units", "--type=service", "--no-legend", "--all", "--plain"]
    assert result("time", {}, root, run) == {"timezone": "UTC", "ntp_synchronized": False, "ntp_active": True}
    zone = FakeRun({"timedatectl": (0, "Timezone=America/New_York\nNTP=no\nNTPSynchronized=yes\n", "")})
    assert result("time", {}, root, zone) == {"timezone": "AMERICA/NEW_YORK", "ntp_synchronized": True, "ntp_active": False}


def test_time_without_timedated_is_an_error_and_no_file(root):
    run = FakeRun({"timedatectl": (1, "", "Failed to connect to bus: No such file or directory\n")})
    collected, errors = run_one("time", {}, root, run)
    assert collected == {}
    assert errors == ["time: timedatectl show exited 1: Failed to connect to bus: No such file or directory"]
    collected, errors = run_one("time", {}, root, FakeRun({"timedatectl": FileNotFoundError(2, "No such file", "timedatectl")}))
    assert collected == {} and errors == ["time: [Errno 2] No such file: 'timedatectl'"]


def test_kernel_modules_loaded_builtin_and_loadable(root):
    modules = result("kernelModules", {}, root)
    assert modules["br_netfilter"] == {"size": 32768, "instances": 0, "status": "loaded"}  # loaded wins over its file
    assert modules["overlay"] == {"size": 163840, "instances": 3, "status": "loaded"}
    assert modules["ip_vs"]["status"] == "loading"
    assert modules["tcp_bbr"]["status"] == "loaded"                                       # built in
    assert modules["nf_conntrack"] == modules["wireguard"] == {"size": 0, "instances": 0, "status": "loadable"}
    assert len(modules) == 6
    # A kernel without loadable module support has no /proc/modules: the built-in and module files still count.
    os.remove(root / "proc/modules")
    modules = result("kernelModules", {}, root)
    assert modules["br_netfilter"]["status"] == "loadable" and modules["tcp_bbr"]["status"] == "loaded"


def test_sysctl_reads_proc_sys_and_skips_what_is_not_a_file(root):
    os.mkfifo(root / "proc/sys/fs/a-fifo")  # never opened for a blocking read
    values = result("sysctl", {}, root)
    assert values == {"fs.inotify.max_user_instances": "128", "kernel.hostname": "node-1", "kernel.osrelease": REL,
                      "net.ipv4.ip_forward": "1", "net.ipv4.ip_local_port_range": "32768\t60999"}


def test_sysctl_is_bounded(root, monkeypatch):
    monkeypatch.setattr(cs, "MAX_SYSCTL_FILES", 2)
    collected, errors = run_one("sysctl", {}, root)
    assert errors == ["sysctl: more than 2 files under /proc/sys; the rest were not read"]
    assert len(collected["host-collectors/system/sysctl.json"]) == 2


def test_cgroups_v2_v1_and_none(root, tmp_path):
    v2 = result("cgroups", {}, root)
    controllers = ["cpu", "cpuacct", "cpuset", "devices", "freezer", "io", "memory", "pids"]
    assert v2 == {"cgroup-enabled": True, "cgroup-v1": {"enabled": False, "mountPoint": "", "controllers": []},
                  "cgroup-v2": {"enabled": True, "mountPoint": "/sys/fs/cgroup", "controllers": controllers},
                  "allControllers": controllers}
    v1 = make_tree(tmp_path / "v1", {
        "proc/self/mountinfo": "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n",
        "proc/cgroups": "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t2\t1\t1\nmemory\t4\t90\t1\nhugetlb\t9\t1\t0\n"})
    got = result("cgroups", {}, v1)
    assert got["cgroup-v1"] == {"enabled": True, "mountPoint": "/sys/fs/cgroup", "controllers": ["cpu", "memory"]}
    assert (got["cgroup-v2"]["enabled"], got["allControllers"]) == (False, ["cpu", "memory"])
    none = make_tree(tmp_path / "none", {"proc/self/mountinfo": ""})
    assert result("cgroups", {}, none)["cgroup-enabled"] is False
    (none / "sys/fs/cgroup").mkdir(parents=True)
    assert run_one("cgroups", {}, none)[1] == ["cgroups: /sys/fs/cgroup is not a mount point"]


def test_subnet_available_skips_routed_subnets(root):
    spec = {"CIDRRangeAlloc": "10.32.0.0/16", "desiredCIDR": 24}
    assert result("subnetAvailable", spec, root) == dict(spec, status="a-subnet-is-available")
    taken = {"CIDRRangeAlloc": "172.32.0.0/16", "desiredCIDR": 22}   # a /16 route covers all of it
    assert result("subnetAvailable", taken, root)["status"] == "no-subnet-available"
    collected, errors = run_one("subnetAvailable", {"CIDRRangeAlloc": "10.32.0.0/16", "desiredCIDR": 8}, root)
    assert collected == {} and errors == ["subnetAvailable result: desiredCIDR: must be between 16 and 32, not 8"]


def routes(*cidrs):
    """/proc/net/route with these networks (addresses and masks little-endian hex, as the kernel prints them)."""
    lines = [ROUTES.splitlines()[0]]
    for cidr in cidrs:
        net = ipaddress.IPv4Network(cidr)
        lines.append("eth0\t%s\t00000000\t0001\t0\t0\t0\t%s\t0\t0\t0" % tuple(
            a.packed[::-1].hex().upper() for a in (net.network_address, net.netmask)))
    return "\n".join(lines) + "\n"


def test_subnet_available_jumps_over_routes_within_the_range(tmp_path):
    root = make_tree(tmp_path, {"proc/net/route": routes(*("10.32.%d.0/24" % n for n in range(255)))})
    assert result("subnetAvailable", {"CIDRRangeAlloc": "10.32.0.0/16", "desiredCIDR": 24}, root)["status"] == "a-subnet-is-available"
    assert result("subnetAvailable", {"CIDRRangeAlloc": "10.32.0.0/17", "desiredCIDR": 24}, root)["status"] == "no-subnet-available"


def test_subnet_available_is_bounded_by_the_routes_not_the_range(tmp_path):
    root = make_tree(tmp_path, {"proc/net/route": routes("10.0.0.0/9", "10.128.0.0/10")})
    # 2^23 + 2^22 candidate /32s come before the first free one: found by jumping past each route, not by walking them
    assert result("subnetAvailable", {"CIDRRangeAlloc": "10.0.0.0/8", "desiredCIDR": 32}, root)["status"] == "a-subnet-is-available"
    assert result("subnetAvailable", {"CIDRRangeAlloc": "10.0.0.0/9", "desiredCIDR": 32}, root)["status"] == "no-subnet-available"


def test_subnet_contains_ip(root):
    assert result("subnetContainsIP", {"cidr": "10.0.0.0/8", "ip": "10.1.2.3"}, root) == {"cidr": "10.0.0.0/8", "ip": "10.1.2.3",
                                                                                          "contains": True}
    assert result("subnetContainsIP", {"cidr": "10.0.0.0/8", "ip": "192.0.2.1"}, root)["contains"] is False
    assert run_one("subnetContainsIP", {"cidr": "10.0.0.0/8", "ip": "ten"}, root)[1] == [
        "subnetContainsIP result: 'ten' does not appear to be an IPv4 or IPv6 address"]


def test_ipv4_interfaces_as_gos_net_interface(root):
    run = FakeRun()
    got = result("ipv4Interfaces", {}, root, run)
    assert got == [
        {"Index": 2, "MTU": 1500, "Name": "eth0", "HardwareAddr": base64.b64encode(bytes([2, 0xfc, 0, 0, 0, 1])).decode(),
         "Flags": 1 | 2 | 16 | 32},                 # from /sys: up, broadcast, multicast, running
        {"Index": 5, "MTU": 1420, "Name": "wg0", "HardwareAddr": None, "Flags": 1 | 8 | 32}]  # from ip's flag names
    assert run.calls[0][0] == ["ip", "-j", "-4", "addr", "show", "up"]


def test_dns_asks_the_system_resolver(root, monkeypatch):
    answers = {"registry.local": [(socket.AF_INET6, 1, 6, "", ("fd00::5", 0, 0, 0)), (socket.AF_INET, 1, 6, "", ("10.0.0.5", 0))]}

    def getaddrinfo(name, *args, **kwargs):
        if name not in answers:
            raise socket.gaierror(-2, "Name or service not known")
        return answers[name]

    monkeypatch.setattr(cn.socket, "getaddrinfo", getaddrinfo)
    collected, errors = run_one("dns", {"collectorName": "registry", "hostnames": ["registry.local", "nope.invalid"]}, root)
    assert errors == []
    assert collected["host-collectors/dns/registry/result.json"] == {"query": {
        "registry.local": [{"server": "system resolver", "search": "", "name": "registry.local",
                            "answer": "registry.local\tIN\tA\t10.0.0.5", "record": "10.0.0.5"}],
        "nope.invalid": [{"server": "system resolver", "search": "", "name": "nope.invalid", "answer": "", "record": ""}]},
        "resolvedFromSearch": ""}
    assert collected["host-collectors/dns/registry/resolv.conf"] == "nameserver 192.0.2.53\n"


# ------------------------------------------------------------------------------------------ ports and connections


def test_tcp_port_status_in_use_and_connected_on_loopback(root):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        spec = {"collectorName": "etcd", "port": busy.getsockname()[1], "interface": "lo"}
        got = result("tcpPortStatus", spec, root)
        assert got["status"] == "address-in-use" and "in use" in got["message"]
    assert result("tcpPortStatus", {"port": free_port(), "interface": "lo"}, root) == {"status": "connected", "message": ""}


def test_tcp_port_status_on_an_interface_without_ipv4_writes_nothing(root):
    collected, errors = run_one("tcpPortStatus", {"port": 6443, "interface": "eth1"}, root)
    assert collected == {} and errors == ["tcpPortStatus tcpPortStatus: interface eth1 is not up or has no IPv4 address"]


def test_udp_port_status_binds_only(root):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as busy:
        busy.bind(("127.0.0.1", 0))
        assert result("udpPortStatus", {"port": busy.getsockname()[1], "interface": "lo"}, root)["status"] == "address-in-use"
    assert result("udpPortStatus", {"port": free_port(socket.SOCK_DGRAM), "interface": "lo"}, root)["status"] == "connected"


def test_tcp_connect_connected_refused_and_bad_address(root):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        spec = {"collectorName": "api", "address": "127.0.0.1:%d" % server.getsockname()[1], "timeout": "2s"}
        assert result("tcpConnect", spec, root) == {"status": "connected", "message": ""}
    refused = result("tcpConnect", {"address": "127.0.0.1:%d" % free_port(), "timeout": "500ms"}, root)
    assert refused["status"] == "connection-refused" and "refused" in refused["message"].lower()
    collected, errors = run_one("tcpConnect", {"address": "127.0.0.1"}, root)
    assert collected["host-collectors/connect/connect.json"]["status"] == "error"
    assert errors == ["tcpConnect connect: address '127.0.0.1' is not host:port"]
    assert run_one("tcpConnect", {"address": "127.0.0.1:1", "timeout": "soon"}, root)[1] == [
        "tcpConnect connect: timeout 'soon' is not a duration (e.g. 10s, 500ms, 2m)"]


@pytest.fixture
def loopback_lb(monkeypatch):
    monkeypatch.setattr(cn, "LISTEN_ALL", "127.0.0.1")  # the tests never listen beyond loopback
    monkeypatch.setattr(cn, "RETRY_SECONDS", 0.05)


def test_tcp_load_balancer_token_round_trip(root, loopback_lb):
    port = free_port()
    spec = {"collectorName": "api lb", "address": "127.0.0.1:%d" % port, "port": port, "timeout": "3m"}
    collected, errors = run_one("tcpLoadBalancer", spec, root)
    assert errors == [] and collected == {"host-collectors/tcpLoadBalancer/api_lb.json": {"status": "connected", "message": ""}}


def test_tcp_load_balancer_that_never_forwards_times_out(root, loopback_lb):
    with socket.socket() as balancer:  # accepts and says nothing: the token never comes back
        balancer.bind(("127.0.0.1", 0))
        balancer.listen(8)
        spec = {"address": "127.0.0.1:%d" % balancer.getsockname()[1], "port": free_port(), "timeout": "1500ms"}
        got = result("tcpLoadBalancer", spec, root)
    assert got == {"status": "connection-timeout", "message": "no connection within 1.5s"}
    collected, errors = run_one("tcpLoadBalancer", {"address": "LB.example:6443", "port": 6443}, root)
    assert collected["host-collectors/tcpLoadBalancer/tcpLoadBalancer.json"]["status"] == "invalid-address"
    assert errors == ["tcpLoadBalancer tcpLoadBalancer: invalid load balancer address 'LB.example:6443' (expected host:port)"]


def test_tcp_load_balancer_that_forwards_someone_else_is_not_connected(root, loopback_lb):
    """A balancer whose backend connection to us carries another token: our listener must not answer it."""
    port = free_port()

    def misforward(balancer):
        with contextlib.suppress(OSError):
            while True:
                client, _peer = balancer.accept()
                with client, socket.create_connection(("127.0.0.1", port), timeout=1) as backend:
                    backend.sendall(b"x" * 16)
                    backend.settimeout(0.5)
                    client.sendall(backend.recv(64))

    with socket.socket() as balancer:
        balancer.bind(("127.0.0.1", 0))
        balancer.listen(8)
        threading.Thread(target=misforward, args=(balancer,), daemon=True).start()
        spec = {"address": "127.0.0.1:%d" % balancer.getsockname()[1], "port": port, "timeout": "1500ms"}
        assert result("tcpLoadBalancer", spec, root)["status"] == "connection-timeout"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self, code, body, kind="application/json"):
        self.send_response(code)
        self.send_header("content-type", kind)
        self.send_header("x-multi", "a")
        self.send_header("x-multi", "b")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path == "/healthz":
            self._answer(200, b'{"ok": true}')
        elif self.path == "/big":
            self._answer(200, b"x" * (cn.MAX_BODY + 100), "text/plain")
        else:
            self._answer(503, b"unavailable", "text/plain")

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["content-length"]))
        self._answer(201, json.dumps({"got": body.decode(), "token": self.headers.get("x-token")}).encode())


@pytest.fixture
def web():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.server_address[1]
    server.shutdown()
    server.server_close()


def test_http_responses_errors_and_the_body_cap(root, web):
    # Generous timeouts: a busy machine must not fail a test of what the collector returns.
    ok = result("http", {"collectorName": "health", "get": {"url": web + "/healthz", "timeout": "120s"}}, root)
    assert ok["response"]["status"] == 200 and ok["response"]["raw_json"] == {"ok": True}
    assert ok["response"]["body"] == '{"ok": true}'
    assert ok["response"]["headers"]["Content-Type"] == "application/json" and ok["response"]["headers"]["X-Multi"] == "a,b"
    down = result("http", {"get": {"url": web + "/down"}}, root)["response"]
    assert (down["status"], down["body"], "raw_json" in down) == (503, "unavailable", False)
    posted = result("http", {"post": {"url": web + "/x", "body": "hello", "headers": {"X-Token": "t1"}}}, root)
    assert posted["response"]["status"] == 201 and posted["response"]["raw_json"] == {"got": "hello", "token": "t1"}
    assert len(result("http", {"get": {"url": web + "/big"}}, root)["response"]["body"]) == cn.MAX_BODY
    closed = result("http", {"get": {"url": "http://127.0.0.1:%d/" % free_port(), "timeout": "2s"}}, root)
    assert list(closed) == ["error"] and "refused" in closed["error"]["message"].lower()
    assert run_one("http", {"head": {"url": web}}, root)[1] == ["http result: no supported http request type (get, post or put)"]


# ------------------------------------------------------------------------------------------ certificate

CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\n"
ENCRYPTED = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF\n-----END ENCRYPTED PRIVATE KEY-----\n"
PUB = "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n"


def openssl(cert_pub=PUB, key_pub=PUB):
    return lambda argv, **kw: (0, cert_pub if argv[1] == "x509" else key_pub, "")


@pytest.mark.parametrize("cert, key, run, status, why", [
    (CERT, KEY, openssl(), "key-pair-valid", None),
    (CERT, KEY, openssl(key_pub=PUB.replace("MFkw", "MFkx")), "key-pair-mismatch", "does not match the certificate's public key"),
    (None, KEY, openssl(), "key-pair-missing", "no such file"),
    (KEY, CERT, openssl(), "key-pair-switched", "holds a private key and no certificate"),
    (CERT, CERT, openssl(), "key-pair-switched", "holds a certificate rather than a private key"),
    (CERT, ENCRYPTED, openssl(), "key-pair-encrypted", "is encrypted"),
    ("garbage", KEY, openssl(), "key-pair-invalid", "no CERTIFICATE PEM block"),
    (CERT, KEY, FileNotFoundError(2, "No such file or directory", "openssl"), "key-pair-invalid", "install openssl"),
    (CERT, KEY, lambda argv, **kw: (1, "", "unable to load certificate"), "key-pair-invalid", "does not parse: unable to load"),
])
def test_certificate_key_pair_statuses(root, cert, key, run, status, why):
    pki = root / "etc/pki"
    pki.mkdir(parents=True)
    if cert is not None:
        (pki / "tls.crt").write_text(cert)
    (pki / "tls.key").write_text(key)
    spec = {"collectorName": "api", "certificatePath": "/etc/pki/tls.crt", "keyPath": "/etc/pki/tls.key"}
    collected, errors = run_one("certificate", spec, root, FakeRun({"openssl": run}))
    assert collected == {"host-collectors/certificate/api.json": status}
    assert errors == ([] if why is None else [errors[0]])
    if why:
        assert errors[0].startswith("certificate api: %s: " % status) and why in errors[0]


@pytest.mark.skipif(not shutil.which("openssl"), reason="needs openssl")
def test_certificate_with_the_real_openssl(root):
    pki = root / "pki"
    pki.mkdir()
    for name in ("a", "b"):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                        "-subj", "/CN=%s" % name, "-days", "1", "-keyout", str(pki / (name + ".key")), "-out", str(pki / (name + ".crt"))],
                       check=True, capture_output=True)
    plan = [("certificate", {"collectorName": "same", "certificatePath": "/pki/a.crt", "keyPath": "/pki/a.key"}),
            ("certificate", {"collectorName": "other", "certificatePath": "/pki/a.crt", "keyPath": "/pki/b.key"})]
    out = hc.collect(plan, root=str(root))
    assert out["collected"] == {"host-collectors/certificate/same.json": "key-pair-valid",
                                "host-collectors/certificate/other.json": "key-pair-mismatch"}
    assert len(out["errors"]) == 1 and out["errors"][0].startswith("certificate other: key-pair-mismatch")


# ------------------------------------------------------------------------------------------ filesystem performance


def test_filesystem_performance_writes_and_syncs_in_the_directory(root, monkeypatch):
    synced = []
    real = os.fdatasync
    monkeypatch.setattr(cs.os, "fdatasync", lambda fd: (synced.append(fd), real(fd))[1])
    spec = {"collectorName": "etcd", "directory": "/var/lib/etcd", "fileSize": "64Ki", "operationSizeBytes": 4096}
    fio = result("filesystemPerformance", spec, root)
    lat = fio["jobs"][0]["sync"]["lat_ns"]
    assert fio["jobs"][0]["jobname"] == "fsperf" and lat["N"] == len(synced) == 16   # 64 KiB in 4 KiB writes, each fdatasync-ed
    assert set(lat["percentile"]) == set(hcond.PERCENTILES.values())
    assert 0 < lat["min"] <= lat["percentile"]["50.000000"] <= lat["percentile"]["99.990000"] == lat["max"]
    directory = root / "var/lib/etcd"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700 and list(directory.iterdir()) == []   # the file is gone
    assert hcond.fsperf_latencies(fio)["max"] == lat["max"]
    assert result("filesystemPerformance", {"directory": "/var/lib/etcd", "fileSize": "64Ki"}, root)["jobs"][0]["sync"]["lat_ns"]["N"] == 64


def test_filesystem_performance_stops_at_the_timeout(root):
    clock = iter(range(0, 1000, 1))
    spec = {"directory": "/data", "fileSize": "64Ki", "operationSize": 1024, "timeout": "5s"}
    fio = result("filesystemPerformance", spec, root, now=lambda: float(next(clock)))
    assert fio["jobs"][0]["sync"]["lat_ns"]["N"] == 4   # the clock moves 1 s per reading: 4 writes before 5 s
    assert list((root / "data").iterdir()) == []


@pytest.mark.parametrize("size, why", [
    ("1e999", "fileSize: could not parse quantity '1e999' (out of range)"),     # float overflow: was an uncaught OverflowError
    ("1e300Ei", "fileSize: could not parse quantity '1e300Ei' (out of range)"),
    ("9" * 400, "fileSize: could not parse quantity '999999999"),
])
def test_filesystem_performance_with_a_file_size_past_the_range_is_the_collectors_error(root, size, why):
    collected, errors = run_one("filesystemPerformance", {"directory": "/data", "fileSize": size}, root)
    assert collected == {} and len(errors) == 1
    assert errors[0].startswith("filesystemPerformance filesystemPerformance: " + why) and len(errors[0]) < 200
    assert not (root / "data").exists()   # refused before anything is written


def test_fio_percentiles_are_nearest_rank():
    lat = cs.fio_result(list(range(100, 0, -1)))["jobs"][0]["sync"]["lat_ns"]
    assert (lat["min"], lat["max"], lat["mean"], lat["N"]) == (1, 100, 50.5, 100)
    pct = lat["percentile"]
    assert (pct["1.000000"], pct["50.000000"], pct["99.000000"], pct["99.500000"], pct["99.990000"]) == (1, 50, 99, 100, 100)


# ------------------------------------------------------------------------------------------ run


def test_run_writes_stdout_and_its_info(root, monkeypatch):
    monkeypatch.setenv("MOORING_TEST_PARENT", "kept")
    seen = {}

    def program(argv, timeout=None, env=None, cwd=None):
        seen.update(argv=argv, timeout=timeout, env=env, cwd=cwd, cwd_existed=os.path.isdir(cwd))
        return 3, "3 packets transmitted, 0 received, 100% packet loss\n", "unreachable\n"

    spec = {"collectorName": "ping", "command": "ping", "args": ["-c", 3, "10.0.0.1"], "env": ["LC_ALL=C"], "timeout": "5s"}
    collected, errors = run_one("run", spec, root, FakeRun({"ping": program}))
    assert errors == []
    assert collected["host-collectors/run-host/ping.txt"].startswith("3 packets transmitted")
    info = {"command": "ping -c 3 10.0.0.1", "exitCode": "3", "error": "unreachable\n", "outputDir": "", "input": "",
            "env": ["LC_ALL=C"]}
    assert collected["host-collectors/run-host/ping-info.json"] == info
    assert seen["argv"] == ["ping", "-c", "3", "10.0.0.1"] and seen["timeout"] == 5.0 and seen["cwd_existed"]
    assert seen["env"]["LC_ALL"] == "C" and seen["env"]["MOORING_TEST_PARENT"] == "kept"
    only = run_one("run", dict(spec, ignoreParentEnvs=True), root, FakeRun({"ping": program}))
    assert only[1] == [] and "MOORING_TEST_PARENT" not in seen["env"] and seen["env"]["LC_ALL"] == "C"
    assert run_one("run", dict(spec, env=["BROKEN"]), root)[1] == ["run ping: env entry 'BROKEN' must be NAME=VALUE"]
    assert run_one("run", {"command": "nope"}, root)[1] == ["run run-host: [Errno 2] No such file or directory: 'nope'"]


def test_run_bounded_caps_output_and_kills_at_the_timeout():
    rc, out, err = hio.run_bounded(["sh", "-c", "head -c 3000000 /dev/zero; echo done >&2"], limit=1000)
    assert (rc, len(out), err) == (0, 1000, "done\n")
    rc, out, err = hio.run_bounded(["sh", "-c", "echo started; exec sleep 30"], timeout=0.3)
    assert (rc, out, err) == (-1, "started\n", "command timed out after 0.3s")
    with pytest.raises(FileNotFoundError):
        hio.run_bounded(["/nonexistent/program"])


# ------------------------------------------------------------------------------------------ end to end

DOC = yaml.safe_load("""
apiVersion: troubleshoot.sh/v1beta2
kind: HostPreflight
metadata: {name: mooring-e2e}
spec:
  collectors:
    - cpu: {}
    - memory: {}
    - hostOS: {}
    - time: {}
    - hostServices: {}
    - kernelModules: {}
    - sysctl: {}
    - cgroups: {}
    - ipv4Interfaces: {}
    - subnetAvailable: {CIDRRangeAlloc: 10.32.0.0/16, desiredCIDR: 24}
    - tcpConnect: {collectorName: apiserver, address: "127.0.0.1:CLOSED_PORT", timeout: 2s}
    - run: {collectorName: hello, command: echo, args: [hello world]}
    - blockDevices: {}
  analyzers:
    - cpu:
        outcomes:
          - fail: {when: "count < 2", message: too few}
          - pass: {when: "supports x86-64", message: cpus ok}
          - warn: {message: no sse}
    - memory:
        outcomes:
          - fail: {when: "< 4G", message: too little}
          - warn: {when: "< 8G", message: little}
          - pass: {message: plenty}
    - hostOS:
        outcomes:
          - pass: {when: "ubuntu >= 22.04 && < 24.10", message: supported}
          - fail: {message: unsupported}
    - time:
        checkName: NTP
        outcomes:
          - fail: {when: "ntp == unsynchronized+inactive", message: no ntp}
          - warn: {when: "ntp == unsynchronized+active", message: syncing}
          - pass: {message: synced}
    - hostServices:
        outcomes:
          - fail: {when: "ufw = active", message: firewall on}
          - pass: {message: no firewall}
    - kernelModules:
        outcomes:
          - fail: {when: "br_netfilter,overlay,nf_conntrack != loaded,loadable", message: missing}
          - pass: {message: modules ok}
    - sysctl:
        outcomes:
          - fail: {when: "net.ipv4.ip_forward = 0", message: no forwarding}
          - pass: {message: forwarding}
    - subnetAvailable:
        outcomes:
          - fail: {when: no-subnet-available, message: full}
          - pass: {when: a-subnet-is-available, message: room}
    - ipv4Interfaces:
        outcomes:
          - fail: {when: "count == 0", message: no interfaces}
          - pass: {message: interfaces}
    - tcpConnect:
        collectorName: apiserver
        outcomes:
          - fail: {when: connection-refused, message: refused}
          - pass: {when: connected, message: reachable}
    - jsonCompare:
        checkName: cgroup v2
        fileName: host-collectors/system/cgroups.json
        path: cgroup-v2.enabled
        value: "true"
        outcomes:
          - fail: {when: "false", message: v1}
          - pass: {when: "true", message: v2}
    - textAnalyze:
        checkName: hello
        fileName: host-collectors/run-host/hello.txt
        regex: hello world
        outcomes:
          - fail: {when: "false", message: silent}
          - pass: {when: "true", message: greeted}
""")


def test_a_document_collected_on_a_fake_host_and_analyzed(root):
    doc = json.loads(json.dumps(DOC).replace("CLOSED_PORT", str(free_port())))
    plan = hp.load(doc)
    run = FakeRun({"echo": lambda argv, **kw: (0, " ".join(argv[1:]) + "\n", "")})
    out = hc.collect(plan["collectors"], root=str(root), run=run)
    assert out["errors"] == []
    results = ha.analyze_all(plan, out["collected"])
    assert [(r["check"], r["outcome"], r["message"]) for r in results] == [
        ("Number of CPUs", "warn", "no sse"),            # the fake cpuinfo lacks most x86-64 flags
        ("Amount of Memory", "pass", "plenty"),          # 8000000 kB = 8.192 GB
        ("Host OS Info", "pass", "supported"),
        ("NTP", "warn", "syncing"),
        ("Host Services", "pass", "no firewall"),
        ("Kernel Modules", "pass", "modules ok"),
        ("Sysctl", "pass", "forwarding"),
        ("Subnet Available", "pass", "room"),
        ("IPv4 Interfaces", "pass", "interfaces"),
        ("TCP Connection Attempt", "fail", "refused"),
        ("cgroup v2", "pass", "v2"),
        ("hello", "pass", "greeted"),
    ]
