# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mooring lab: air-gapped test hosts (podman containers running systemd and sshd).

Run as root with ``python3 tests/lab/lab.py ...`` on Debian/Ubuntu. Standard library only,
so it runs before ``make setup``.

    lab.py setup                      install podman, netavark & co., write podman config, sysctls
    lab.py image                      build (or reuse) the base image, print its reference
    lab.py env [NAME]                 print ``export`` lines for the lab's environment
    lab.py net NAME                   create the lab's internal network (idempotent)
    lab.py up NAME -n N [--privileged] [--control-plane K]
                                      create N hosts, wait until ready, write known_hosts and the inventory
    lab.py create NAME --platforms JSON   (molecule create) hosts named NAME-N, wait until ready, write known_hosts
    lab.py rm NAME HOST...            (molecule destroy) remove hosts and their known_hosts lines, keep the network
    lab.py status NAME                print each host's readiness
    lab.py down NAME                  remove the lab's hosts, volumes, network, inventory and known_hosts
    lab.py spec NAME [-o FILE] [--from patch]  the lab's installer spec: tests/lab/installer.yaml with NAME's API
                                      endpoint, a keepalived virtual IP (the subnet's .100) as a user on that network
                                      sets it; --from: at the versions an upgrade starts from (tests/lab/previous.yaml)
    lab.py route-check ADDR...        refuse (exit 1) unless each address routes through a lab bridge
    lab.py connect HOST PORT          ssh ProxyCommand (with ProxyUseFdpass): route check, then connect

Everything slow to build lives under ``${MOORING_CACHE_DIR:-/var/cache/mooring}/lab``:
``rootfs-<recipe hash>.tar``, podman storage holding the image (``storage/``), the lab SSH
key (``ssh/id_ed25519``) and the podman configuration (``etc/``). A lab NAME owns the
podman network ``mooring-NAME`` with the bridge ``mlabX``, the subnet ``10.89.X.0/24`` (X
chosen deterministically from NAME, see :func:`subnet_index`) and containers/volumes labelled
``mooring.lab=NAME``. Its hosts' SSH host keys, read through podman once they have booted, are
written to ``inventories/lab/NAME/known_hosts``; every SSH connection to them checks the key
strictly against that file (docs/lab.md).

Networking (docs/lab.md): podman's backend is netavark, set explicitly in the lab's
containers.conf (Debian's podman falls back to CNI without it, and a CNI ``--internal``
bridge gets no address, so lab traffic would leave through the default route). Nothing
connects to a lab address before the route guard (``plugins/module_utils/common/netguard.py``) has
seen the kernel route it through the lab's own bridge.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import importlib.util
import ipaddress
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # lab.py is also loaded by path (tests, benchmarks)
import labspec  # noqa: E402  (the lab's installer specs, same folder)

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("MOORING_CACHE_DIR", "/var/cache/mooring")) / "lab"
# podman's run state (mount counts, layer mounts) must not be shared by two storages: two caches
# with one runroot unmount each other's containers ("Storage for container ... has been removed").
# The default cache keeps the runroot it always had; any other cache gets its own.
DEFAULT_CACHE = Path("/var/cache/mooring/lab")
RUNROOT = Path("/run/mooring-lab")
# Rootful podman keeps one address database for the machine (/run/containers/networks/ipam.db),
# keyed by network name: a cache's networks get their own names, or a run of another cache that
# was killed (no teardown) keeps this lab's addresses allocated.
CACHE_TAG = ""
if str(CACHE) != str(DEFAULT_CACHE):
    CACHE_TAG = hashlib.sha256(str(CACHE.resolve()).encode()).hexdigest()[:12]
    RUNROOT = RUNROOT / ("cache-" + CACHE_TAG)
APT_PACKAGES = ["podman", "runc", "netavark", "aardvark-dns", "debootstrap", "buildah", "skopeo", "busybox-static",
                "openssh-client", "iproute2", "iptables",  # netavark sets up its bridges with iptables
                "libfaketime"]  # the preflight scenario's clock-skew stand-in (hosts share the kernel's clock)
NETWORK_BACKEND = "netavark"
BRIDGE_PREFIX = "mlab"  # bridge of lab network 10.89.X.0/24 is mlabX
# Bump when the way lab networks are made changes: networks of another version are recreated.
NETWORK_VERSION = "2"
ROUTE_GUARD = BRIDGE_PREFIX + "*"  # MOORING_ROUTE_GUARD for everything that talks to the lab
MIRROR = os.environ.get("MOORING_LAB_MIRROR", "http://deb.debian.org/debian")
SUITE = "bookworm"
IMAGE_REPO = "localhost/mooring-lab"
LAB_USER = "mooring"
INCLUDE = [
    "systemd", "systemd-sysv", "dbus", "openssh-server", "python3", "python3-apt", "iproute2",
    "ca-certificates", "sudo", "procps", "iputils-ping", "kmod", "util-linux", "less",
]
FIRST_HOST = 11  # host i (1-based) gets address .(10 + i)
MAX_HOSTS = 200
READY_TIMEOUT = float(os.environ.get("MOORING_LAB_READY_TIMEOUT", "120"))

# Everything below is hashed into the image tag: change it and the image is rebuilt.
CUSTOMISE = r"""
set -eu
R=$1; PUB=$2; USER=$3
: > "$R/etc/machine-id"
rm -f "$R/var/lib/dbus/machine-id"
ln -s /etc/machine-id "$R/var/lib/dbus/machine-id"
: > "$R/etc/hostname"
rm -f "$R"/etc/ssh/ssh_host_*
cat > "$R/etc/systemd/system/mooring-ssh-hostkeys.service" <<'EOF'
[Unit]
Description=Generate this host's SSH host keys on first boot
Before=ssh.service
ConditionPathExists=!/etc/ssh/ssh_host_ed25519_key

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -A

[Install]
WantedBy=ssh.service
EOF
mkdir -p "$R/etc/systemd/system/ssh.service.wants"
ln -sf /etc/systemd/system/mooring-ssh-hostkeys.service "$R/etc/systemd/system/ssh.service.wants/"
printf 'UseDNS no\nPasswordAuthentication no\n' > "$R/etc/ssh/sshd_config.d/mooring-lab.conf"
chroot "$R" useradd -m -s /bin/bash "$USER"
for home in /root "/home/$USER"; do
  install -d -m 0700 "$R$home/.ssh"
  install -m 0600 "$PUB" "$R$home/.ssh/authorized_keys"
done
chroot "$R" chown -R "$USER:$USER" "/home/$USER/.ssh"
echo "$USER ALL=(ALL) NOPASSWD:ALL" > "$R/etc/sudoers.d/$USER"
chmod 0440 "$R/etc/sudoers.d/$USER"
rm -f "$R/etc/apt/sources.list" "$R"/etc/apt/sources.list.d/*
rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*.bin "$R"/var/cache/apt/archives/*.deb
rm -f "$R"/etc/systemd/system/timers.target.wants/*
for u in getty@tty1.service console-getty.service getty.target systemd-logind.service; do
  ln -sf /dev/null "$R/etc/systemd/system/$u"
done
"""


class LabError(Exception):
    """A lab operation failed; the message says what to do."""


COMMON = "ansible_collections.mooring.cluster.plugins.module_utils.common"


def _load_netguard():
    """The collection's route guard, loaded by path: this file runs before ``make setup`` makes the collection
    importable, so the one module the guard imports (common/errors.py) is loaded by path first, under its name."""
    modules = {}
    for name in ("errors", "netguard"):
        spec = importlib.util.spec_from_file_location("%s.%s" % (COMMON, name),
                                                      ROOT / "plugins" / "module_utils" / "common" / ("%s.py" % name))
        modules[name] = importlib.util.module_from_spec(spec)
        if sys.modules.setdefault(spec.name, modules[name]) is modules[name]:
            spec.loader.exec_module(modules[name])
        modules[name] = sys.modules[spec.name]
    return modules["netguard"]


netguard = _load_netguard()


def log(msg):
    print("lab: %s" % msg, file=sys.stderr, flush=True)


def run(cmd, check=True, capture=True, env=None, timeout=None):
    proc = subprocess.run(cmd, capture_output=capture, text=True, env=env or podman_env(), timeout=timeout,
                          check=False)
    if check and proc.returncode != 0:
        raise LabError("%s failed (rc=%s): %s" % (" ".join(cmd), proc.returncode, (proc.stderr or "").strip()))
    return proc


def podman_env():
    env = dict(os.environ)
    env["CONTAINERS_CONF"] = str(CACHE / "etc" / "containers.conf")
    env["CONTAINERS_STORAGE_CONF"] = str(CACHE / "etc" / "storage.conf")
    return env


def podman(*args, check=True, timeout=None):
    return run(["podman", *args], check=check, timeout=timeout)


# ---------------------------------------------------------------- naming (pure functions)

def subnet_index(name, taken=()):
    """Third octet of the lab's 10.89.X.0/24: a hash of NAME in 10..249, probing past ``taken``."""
    start = int(hashlib.sha256(name.encode()).hexdigest(), 16) % 240
    for step in range(240):
        idx = 10 + (start + step) % 240
        if idx not in taken:
            return idx
    raise LabError("no free lab subnet left in 10.89.0.0/16")


def scenario_names():
    names = []
    for d in sorted((ROOT / "molecule").glob("*/molecule.yml")):
        names.append(d.parent.name)
    return names


def lab_prefix(name):
    """``10.89.X`` for lab NAME, deterministic given the molecule scenarios in the tree.

    Scenarios are assigned in sorted order, each probing past the octets already given to
    the ones before it, so no two scenarios in the tree share a subnet. A lab that is not a
    scenario probes past all of them.
    """
    override = os.environ.get("MOORING_LAB_SUBNET_INDEX")
    if override:
        return "10.89.%d" % int(override)
    taken = []
    for s in scenario_names():
        idx = subnet_index(s, taken)
        if s == name:
            return "10.89.%d" % idx
        taken.append(idx)
    return "10.89.%d" % subnet_index(name, taken)


def network_name(name):
    """``mooring-NAME`` in the default cache, ``mooring-NAME-<cache hash>`` in any other."""
    return "mooring-%s" % name + ("-" + CACHE_TAG[:8] if CACHE_TAG else "")


def host_name(name, i):
    return "%s-%d" % (name, i)


def host_address(name, i):
    return "%s.%d" % (lab_prefix(name), 10 + i)


def group_layout(n, control_plane=None):
    """Group membership for N hosts: the first K are control_plane+etcd, the rest workers."""
    if control_plane is None:
        control_plane = 3 if n >= 3 else 1
    if not 1 <= control_plane <= n:
        raise LabError("--control-plane must be between 1 and the number of hosts (%d), got %d" % (n, control_plane))
    idx = list(range(1, n + 1))
    cp = idx[:control_plane]
    workers = idx[control_plane:] or idx
    return {"control_plane": cp, "etcd": cp, "workers": workers}


# ---------------------------------------------------------------- setup

def ssh_key():
    key = CACHE / "ssh" / "id_ed25519"
    if not key.exists():
        key.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "mooring-lab", "-f", str(key)], env=os.environ)
    key.chmod(0o600)
    return key


def one_at_a_time(func):
    """Run ``func`` holding the lab cache's lock: setup and image may be asked for by two stages at once
    (make test prepares the lab in the background while the package stage uses it)."""
    def locked(args):
        import fcntl

        CACHE.mkdir(parents=True, exist_ok=True)
        with open(CACHE / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return func(args)
    return locked


@one_at_a_time
def cmd_setup(_args):
    if os.geteuid() != 0:
        raise LabError("the lab needs root (rootful podman, debootstrap); run it as root")
    missing = [p for p in APT_PACKAGES if run(["dpkg-query", "-W", "-f=${Status}", p], check=False,
                                              env=os.environ).stdout.strip() != "install ok installed"]
    if missing:
        log("installing %s" % " ".join(missing))
        apt = ["apt-get", "-o", "DPkg::Lock::Timeout=600"]
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run(apt + ["update", "-qq"], env=env, capture=False)
        run(apt + ["install", "-y", "-qq", "--no-install-recommends", *missing], env=env, capture=False)
    etc = CACHE / "etc"
    for d in (etc, CACHE / "storage", CACHE / "networks", RUNROOT):
        d.mkdir(parents=True, exist_ok=True)
    hard = subprocess.run(["sh", "-c", "ulimit -Hn"], capture_output=True, text=True, check=False).stdout.strip()
    nofile = hard if hard.isdigit() else "65536"
    write_if_changed(etc / "containers.conf", (
        "# Written by tests/lab/lab.py: the lab's podman configuration.\n"
        "[containers]\n"
        "default_ulimits = [\"nofile=%s:%s\", \"nproc=32768:32768\"]\n"
        "[engine]\n"
        "runtime = \"runc\"\n"
        "[network]\n"
        "network_backend = \"%s\"\n"
        "network_config_dir = \"%s\"\n" % (nofile, nofile, NETWORK_BACKEND, CACHE / "networks")))
    write_if_changed(etc / "storage.conf", (
        "# Written by tests/lab/lab.py: podman storage for the lab (holds the base image).\n"
        "[storage]\n"
        "driver = \"overlay\"\n"
        "graphroot = \"%s\"\n"
        "runroot = \"%s\"\n" % (CACHE / "storage", RUNROOT / "storage")))
    sysctl = Path("/proc/sys/fs/inotify/max_user_instances")
    if sysctl.exists() and int(sysctl.read_text()) < 1024:
        log("raising fs.inotify.max_user_instances to 1024 (systemd in many hosts needs it)")
        sysctl.write_text("1024\n")
    ssh_key()
    backend = network_backend()
    log("podman network backend: %s (set in %s)" % (backend, etc / "containers.conf"))
    return 0


def network_backend():
    """podman's network backend under the lab's configuration; an error unless netavark."""
    backend = podman("info", "--format", "{{.Host.NetworkBackend}}").stdout.strip()
    if backend != NETWORK_BACKEND:
        raise LabError("podman reports the network backend %r, the lab needs %r: with CNI an --internal "
                       "bridge gets no address and lab traffic would leave the machine by the default route. "
                       "Install netavark and aardvark-dns (`python3 tests/lab/lab.py setup` does) and check "
                       "network_backend in %s" % (backend, NETWORK_BACKEND, CACHE / "etc" / "containers.conf"))
    return backend


def write_if_changed(path, text):
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


# ---------------------------------------------------------------- image

def recipe_hash():
    pub = (CACHE / "ssh" / "id_ed25519.pub").read_text()
    h = hashlib.sha256(json.dumps([SUITE, INCLUDE, CUSTOMISE, LAB_USER, pub]).encode())
    return h.hexdigest()[:12]


def image_ref():
    return "%s:%s" % (IMAGE_REPO, recipe_hash())


@one_at_a_time
def cmd_image(_args):
    ref = ensure_image()
    print(ref)
    return 0


def ensure_image():
    ssh_key()
    ref = image_ref()
    if podman("image", "exists", ref, check=False).returncode == 0:
        return ref
    tag = recipe_hash()
    tar = CACHE / ("rootfs-%s.tar" % tag)
    if not tar.exists():
        t0 = time.monotonic()
        log("building the base rootfs with debootstrap (%s, about a minute)" % SUITE)
        with tempfile.TemporaryDirectory(dir=CACHE, prefix="rootfs-") as tmp:
            rootfs = Path(tmp) / "rootfs"
            run(["debootstrap", "--variant=minbase", "--include=" + ",".join(INCLUDE), SUITE, str(rootfs), MIRROR],
                env=os.environ)
            run(["bash", "-c", CUSTOMISE, "customise", str(rootfs), str(CACHE / "ssh" / "id_ed25519.pub"), LAB_USER],
                env=os.environ)
            partial = tar.with_suffix(".tar.part")
            run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(partial), "."], env=os.environ)
            partial.rename(tar)
        log("rootfs built in %.0f s" % (time.monotonic() - t0))
    t0 = time.monotonic()
    podman("import", "--change", 'CMD ["/sbin/init"]', "--change", "STOPSIGNAL=SIGRTMIN+3",
           "--change", "ENV container=podman", str(tar), ref)
    log("imported %s in %.1f s" % (ref, time.monotonic() - t0))
    for old in CACHE.glob("rootfs-*.tar"):
        if old != tar:
            old.unlink()
    # Images of older recipes: removed unless a running lab still uses one.
    for old_ref in podman("images", "--format", "{{.Repository}}:{{.Tag}}", IMAGE_REPO).stdout.split():
        if old_ref != ref:
            podman("rmi", old_ref, check=False)
    return ref


# ---------------------------------------------------------------- networks and hosts

def cmd_env(args):
    ref = image_ref()
    lines = {
        "CONTAINERS_CONF": str(CACHE / "etc" / "containers.conf"),
        "CONTAINERS_STORAGE_CONF": str(CACHE / "etc" / "storage.conf"),
        "MOORING_LAB_IMAGE": ref,
        "MOORING_LAB_KEY": str(CACHE / "ssh" / "id_ed25519"),
        "MOORING_LAB_USER": LAB_USER,
        "MOORING_ROUTE_GUARD": "'%s'" % ROUTE_GUARD,
    }
    if args.name:
        lines["MOORING_LAB"] = args.name
        lines["MOORING_LAB_NETWORK"] = network_name(args.name)
        lines["MOORING_LAB_NET"] = lab_prefix(args.name)
        lines["MOORING_LAB_KNOWN_HOSTS"] = str(known_hosts_path(args.name))
    for k, v in lines.items():
        print("export %s=%s" % (k, v))
    return 0


def bridge_name(name):
    """The lab's bridge interface: ``mlabX`` for 10.89.X.0/24 (at most 15 characters)."""
    return "%s%s" % (BRIDGE_PREFIX, lab_prefix(name).rsplit(".", 1)[1])


def network_problems(info, name):
    """Why an existing podman network cannot be the lab's (empty list: it can). Pure."""
    subnet = lab_prefix(name) + ".0/24"
    have = [s.get("subnet") for s in info.get("subnets") or []]
    problems = []
    if info.get("driver") != "bridge":
        problems.append("driver %s, not bridge" % info.get("driver"))
    if subnet not in have:
        problems.append("subnets %s, not %s" % (have, subnet))
    if not info.get("internal"):
        problems.append("not internal")
    if info.get("network_interface") != bridge_name(name):
        problems.append("bridge %s, not %s" % (info.get("network_interface"), bridge_name(name)))
    if (info.get("labels") or {}).get("mooring.lab.network") != NETWORK_VERSION:
        problems.append("made by another lab version (mooring.lab.network=%s, this is %s)"
                        % ((info.get("labels") or {}).get("mooring.lab.network"), NETWORK_VERSION))
    return problems


def ensure_network(name):
    net = network_name(name)
    prefix = lab_prefix(name)
    subnet = prefix + ".0/24"
    network_backend()
    if podman("network", "exists", net, check=False).returncode == 0:
        info = json.loads(podman("network", "inspect", net).stdout)[0]
        problems = network_problems(info, name)
        if not problems:
            return net
        log("network %s is not this lab version's (%s): removing it and its hosts, then recreating it"
            % (net, "; ".join(problems)))
        podman("network", "rm", "-f", net)
    for other in json.loads(podman("network", "ls", "--format", "json").stdout):
        for s in other.get("subnets") or []:
            if s.get("subnet") == subnet:
                raise LabError("subnet %s for lab %r is already used by network %s; remove that lab "
                               "or set MOORING_LAB_SUBNET_INDEX to a free 10-249" % (subnet, name, other["name"]))
    release_stale_bridge(name, subnet)
    podman("network", "create", "--internal", "--driver", "bridge", "--subnet", subnet, "--gateway", prefix + ".1",
           "--label", "mooring.lab=" + name, "--label", "mooring.lab.network=" + NETWORK_VERSION, net)
    name_bridge(net, bridge_name(name))
    return net


def _interface_holding(subnet):
    """The host interface with an IPv4 address in SUBNET, or None."""
    net = ipaddress.ip_network(subnet)
    for link in json.loads(run(["ip", "-j", "-4", "addr", "show"]).stdout or "[]"):
        for addr in link.get("addr_info") or []:
            if "local" in addr and ipaddress.ip_address(addr["local"]) in net:
                return link["ifname"]
    return None


def release_stale_bridge(name, subnet):
    """Free SUBNET on the host when a lab run that was killed left its bridge behind.

    A lab run under another MOORING_CACHE_DIR keeps its networks in that cache, so podman here
    does not list them; when such a run is killed, netavark never tears down and the bridge
    ``mlabX`` stays on the host with its address and the veths of namespaces no process uses
    any more. podman then refuses the subnet. The bridge is removed only if no process runs in
    any namespace attached to it; a live lab, or an interface that is not this lab's bridge,
    is refused with what to do. The namespaces stay: the other cache's podman still records
    them, and its ``lab.py down`` removes them with its containers.
    """
    iface = _interface_holding(subnet)
    if iface is None:
        return
    if iface != bridge_name(name):
        raise LabError("subnet %s for lab %r is held by host interface %s, which is not a lab bridge: "
                       "set MOORING_LAB_SUBNET_INDEX to a free 10-249" % (subnet, name, iface))
    ports = json.loads(run(["ip", "-j", "link", "show", "master", iface]).stdout or "[]")
    spaces = {int(m.group(2)): m.group(1)
              for m in re.finditer(r"^(\S+) \(id: (\d+)\)", run(["ip", "netns", "list"]).stdout, re.M)}
    for port in ports:
        space = spaces.get(port.get("link_netnsid"))
        pids = run(["ip", "netns", "pids", space]).stdout.split() if space else ["(unknown)"]
        if pids:
            raise LabError("subnet %s for lab %r is held by bridge %s of a running lab (port %s, processes %s): "
                           "take that lab down (lab.py down %s under its MOORING_CACHE_DIR) or set "
                           "MOORING_LAB_SUBNET_INDEX to a free 10-249"
                           % (subnet, name, iface, port.get("ifname"), " ".join(pids[:5]), name))
    run(["ip", "link", "delete", iface])
    log("removed bridge %s (%s), left by a lab run that was killed: no process in the %d network namespaces "
        "attached to it (take that run's lab down under its MOORING_CACHE_DIR to free them)" % (iface, subnet, len(ports)))


def name_bridge(net, bridge):
    """Give network ``net`` the bridge interface ``bridge`` (before any container uses it).

    podman 4.3 has no ``--interface-name``; netavark reads the bridge's name from the network's
    file in ``network_config_dir``, so the lab writes it there. A known name lets the route
    guard tell the lab's bridge from any other interface without asking podman."""
    path = CACHE / "networks" / ("%s.json" % net)
    info = json.loads(path.read_text())
    if info.get("network_interface") != bridge:
        info["network_interface"] = bridge
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(info, indent=5) + "\n")
        tmp.replace(path)
    got = json.loads(podman("network", "inspect", net).stdout)[0].get("network_interface")
    if got != bridge:
        raise LabError("network %s: podman reports bridge %s after it was named %s in %s" % (net, got, bridge, path))


# Why a lab address is routed elsewhere, as the lab sees it (the product's guard names only the route).
ROUTE_HINT = ("Likely cause: the lab network's bridge has no address, or the lab is down: the kernel falls back to the "
              "default route. With podman's CNI backend an --internal bridge gets no address; the lab needs netavark "
              "(`python3 tests/lab/lab.py setup`, docs/lab.md).")


def route_check(address, allowed=(ROUTE_GUARD,)):
    """Raise LabError unless the kernel routes ``address`` directly through a lab bridge."""
    try:
        netguard.check(address, allowed)
    except netguard.RouteRefused as exc:
        raise LabError("%s %s" % (exc, ROUTE_HINT)) from None


def cmd_route_check(args):
    for a in args.addresses:
        route_check(a)
        print("%s: %s" % (a, netguard.describe(netguard.route_get(a))))
    return 0


def cmd_connect(args):
    """ssh ``ProxyCommand`` with ``ProxyUseFdpass=yes``: check the route, connect, hand ssh the socket.

    Nothing is sent to an address the kernel would route off the lab's bridges."""
    route_check(args.host)
    sock = socket.create_connection((args.host, args.port), timeout=10)
    sock.settimeout(None)
    with socket.socket(fileno=os.dup(sys.stdout.fileno())) as out:
        socket.send_fds(out, [b"\0"], [sock.fileno()])
    sock.close()
    return 0


def ssh_proxy_args():
    """ssh options that send every lab connection through :func:`cmd_connect`."""
    return ["-o", "ProxyCommand=python3 %s connect %%h %%p" % Path(__file__).resolve(), "-o", "ProxyUseFdpass=yes"]


def cmd_net(args):
    print(ensure_network(args.name))
    return 0


def start_host(name, i, image, privileged):
    h = host_name(name, i)
    cmd = ["run", "-d", "--name", h, "--hostname", h, "--network", network_name(name),
           "--ip", host_address(name, i), "--systemd=always", "--label", "mooring.lab=" + name]
    if privileged:
        # What a kubelet needs in a container (as kind sets up its nodes): privileged, its own cgroup
        # namespace, containerd's and the kubelet's state off the container's overlay root (overlayfs on
        # overlayfs fails), the host's kernel modules read-only where the machine has any.
        cmd += ["--privileged", "--cgroupns=private"]
        for state in ("containerd", "kubelet"):
            vol = "%s-%s" % (h, state)
            if podman("volume", "exists", vol, check=False).returncode != 0:
                podman("volume", "create", "--label", "mooring.lab=" + name, vol)
            cmd += ["-v", "%s:/var/lib/%s" % (vol, state)]
        if os.path.isdir("/lib/modules"):
            cmd += ["-v", "/lib/modules:/lib/modules:ro"]
    podman(*cmd, image)
    return h


BOOTED = ("running", "degraded")  # `systemctl is-system-running` once boot is over (sshd and its keys included)
HOST_KEY = re.compile(r"(ssh-[a-z0-9-]+|ecdsa-sha2-nistp[0-9]+) [A-Za-z0-9+/]+={0,3}")


def system_state(h):
    return podman("exec", h, "systemctl", "is-system-running", check=False).stdout.strip()


def host_keys(h):
    """(ok, keys or detail): host H's public SSH host keys, ``["TYPE BASE64", ...]`` sorted.

    Read through podman (``podman exec``: a local channel to the container, not the network), once
    its first boot is over: the keys are generated then (``mooring-ssh-hostkeys.service``, before
    sshd). Not ok while it boots or has no ed25519 key."""
    state = system_state(h)
    if state not in BOOTED:
        return False, "systemd is %s" % (state or "not answering")
    out = podman("exec", h, "sh", "-c", "cat /etc/ssh/ssh_host_*_key.pub", check=False).stdout
    keys = sorted(" ".join(line.split()[:2]) for line in out.splitlines() if line.strip())
    bad = [k for k in keys if not HOST_KEY.fullmatch(k)]
    if bad:
        raise LabError("%s: /etc/ssh/ssh_host_*_key.pub holds something that is not a public key: %r" % (h, bad[0]))
    if not any(k.startswith("ssh-ed25519 ") for k in keys):
        return False, "systemd %s, no SSH host key yet (/etc/ssh/ssh_host_ed25519_key.pub)" % state
    return True, keys


def known_hosts_path(name):
    """The lab's known_hosts, next to its inventory (``lab.py up``; ``lab.py create`` writes it there too)."""
    return inventory_path(name).with_name("known_hosts")


def host_key_args(known_hosts):
    """ssh options that accept a lab host only with the key the lab wrote for it in KNOWN_HOSTS."""
    return ["-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=%s" % known_hosts]


def write_known_hosts(path, name, keys):
    """Write known_hosts PATH for lab NAME: a line ``ADDRESS TYPE BASE64`` per address and key of
    KEYS ({address: [key, ...]}), replacing what the file held (a host re-created at the same
    address has a new key). No keys: the file is removed."""
    if not keys:
        path.unlink(missing_ok=True)
        return path
    lines = ["# Written by tests/lab/lab.py for lab %s: its hosts' SSH host keys, read through podman "
             "(rewritten by lab.py up, create and rm; removed by lab.py down)." % name]
    for address in sorted(keys, key=ipaddress.ip_address):
        lines += ["%s %s" % (address, k) for k in keys[address]]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(".%s.%d.tmp" % (path.name, os.getpid()))
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)
    return path


def host_ready(h, address, key, known_hosts, user="root"):
    """(ready, detail) for one host: systemd running/degraded and SSH answering with its key in KNOWN_HOSTS."""
    state = system_state(h)
    if state not in BOOTED:
        return False, "systemd is %s" % (state or "not answering")
    route_check(address)  # a LabError here ends the wait at once: no packet leaves the machine
    proc = subprocess.run(
        ["ssh", "-i", str(key), *ssh_proxy_args(), *host_key_args(known_hosts), "-o", "BatchMode=yes",
         "-o", "ConnectTimeout=3", "-o", "LogLevel=ERROR", "%s@%s" % (user, address), "true"],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return False, "systemd %s, ssh not answering: %s" % (state, proc.stderr.strip())
    return True, "systemd %s, ssh ok" % state


def poll(hosts, probe, deadline):
    """Run ``probe(host, address)`` -> (ok, value) on HOSTS ({host: address}), again every 0.5 s on
    those not ok, until all are or DEADLINE (time.monotonic) has passed; every host is probed at
    least once. Returns ({host: value when ok}, {host: value of its last probe, for those never ok})."""
    done, failed = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(16, len(hosts) or 1)) as pool:
        while True:
            futs = {pool.submit(probe, h, a): h for h, a in hosts.items() if h not in done}
            for fut, h in futs.items():
                ok, value = fut.result()
                if ok:
                    done[h] = value
                    failed.pop(h, None)
                else:
                    failed[h] = value
            if not failed or time.monotonic() >= deadline:
                return done, failed
            time.sleep(0.5)


def wait_ready(name, hosts, timeout=READY_TIMEOUT):
    """Wait until HOSTS ({host: address}) of lab NAME have booted, write the lab's known_hosts with
    their host keys, then wait until each answers SSH with its key checked against that file."""
    key = ssh_key()
    known_hosts = known_hosts_path(name)
    deadline = time.monotonic() + timeout
    keys, failed = poll(hosts, lambda h, _address: host_keys(h), deadline)
    if not failed:
        write_known_hosts(known_hosts, name, {hosts[h]: k for h, k in keys.items()})
        detail, failed = poll(hosts, lambda h, address: host_ready(h, address, key, known_hosts), deadline)
    if failed:
        msgs = []
        for h in sorted(failed):
            journal = podman("exec", h, "journalctl", "-n", "25", "--no-pager", check=False)
            tail = (journal.stdout or journal.stderr or podman("logs", "--tail", "25", h, check=False).stdout).strip()
            msgs.append("%s (%s) not ready after %.0f s: %s\n--- journal tail of %s ---\n%s"
                        % (h, hosts[h], timeout, failed[h], h, tail))
        raise LabError("\n".join(msgs))
    return detail


def inventory_path(name):
    return ROOT / "inventories" / "lab" / name / "hosts.yml"


def write_inventory(name, n, control_plane):
    groups = group_layout(n, control_plane)
    key = CACHE / "ssh" / "id_ed25519"
    lines = ["# Written by tests/lab/lab.py for lab %r; removed by `make lab-down`." % name,
             "all:", "  vars:",
             "    ansible_user: root",
             "    ansible_ssh_private_key_file: %s" % key,
             "    ansible_ssh_common_args: %s -o ProxyUseFdpass=yes -o 'ProxyCommand=python3 %s connect %%h %%p'"
             % (" ".join(host_key_args(known_hosts_path(name))), Path(__file__).resolve()),
             "    mooring_lab: %s" % name,
             "  hosts:"]
    for i in range(1, n + 1):
        lines.append("    %s:" % host_name(name, i))
        lines.append("      ansible_host: %s" % host_address(name, i))
    lines.append("  children:")
    for g, members in groups.items():
        lines.append("    %s:" % g)
        lines.append("      hosts:")
        for i in members:
            lines.append("        %s: {}" % host_name(name, i))
    path = inventory_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def lab_containers(name):
    out = podman("ps", "-a", "--filter", "label=mooring.lab=" + name, "--format", "{{.Names}}").stdout
    return sorted(out.split())


def cmd_up(args):
    if not 1 <= args.hosts <= MAX_HOSTS:
        raise LabError("-n must be between 1 and %d, got %d" % (MAX_HOSTS, args.hosts))
    group_layout(args.hosts, args.control_plane)
    existing = lab_containers(args.name)
    if existing:
        raise LabError("lab %r already has hosts (%s); run `make lab-down NAME=%s` first"
                       % (args.name, ", ".join(existing), args.name))
    t0 = time.monotonic()
    image = ensure_image()
    t_img = time.monotonic() - t0
    ensure_network(args.name)
    t1 = time.monotonic()
    hosts = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            futs = [pool.submit(start_host, args.name, i, image, args.privileged) for i in range(1, args.hosts + 1)]
            for i, fut in enumerate(futs, start=1):
                hosts[fut.result()] = host_address(args.name, i)
        for h in hosts:
            default_route(args.name, h)
        detail = wait_ready(args.name, hosts)
    except (LabError, KeyboardInterrupt):
        if not args.keep_on_failure:
            log("removing the half-created lab %r (use --keep-on-failure to inspect it)" % args.name)
            down(args.name)
        raise
    inv = write_inventory(args.name, args.hosts, args.control_plane)
    for h in sorted(hosts, key=lambda x: int(x.rsplit("-", 1)[1])):
        print("%-24s %-15s %s" % (h, hosts[h], detail[h]))
    print("lab %s: %d hosts ready in %.1f s (image %.1f s); inventory %s, known_hosts %s"
          % (args.name, len(hosts), time.monotonic() - t1, t_img, inv.relative_to(ROOT),
             known_hosts_path(args.name).relative_to(ROOT)))
    return 0


def platform_index(name, platform):
    """N from a molecule platform named NAME-N (N decides the host's address)."""
    m = re.fullmatch(re.escape(name) + r"-([0-9]+)", platform)
    if not m or not 1 <= int(m.group(1)) <= MAX_HOSTS:
        raise LabError("molecule platform %r: lab host names must be ${MOORING_LAB}-N with N in 1..%d "
                       "(here %s-1, %s-2, ...)" % (platform, MAX_HOSTS, name, name))
    return int(m.group(1))


def default_route(name, host):
    """Internal networks have no default route; give the host one, as a real site's host has (air-gapped
    or not: kubelet, kube-proxy and the CNIs take the node's address from it, and preflight checks it).
    Its gateway is an unused lab address: nothing answers there, so nothing leaves the lab. Set from the
    controller in the host's network namespace (an unprivileged host may not change its routes)."""
    pid = podman("inspect", "-f", "{{.State.Pid}}", host).stdout.strip()
    run(["nsenter", "-t", pid, "-n", "ip", "route", "replace", "default", "via", lab_prefix(name) + ".254"])


def cmd_create(args):
    """Create the hosts listed by molecule's platforms (JSON), wait until they are ready, write the lab's known_hosts."""
    platforms = json.loads(args.platforms)
    wanted = {p["name"]: (platform_index(args.name, p["name"]), bool(p.get("privileged"))) for p in platforms}
    image = os.environ.get("MOORING_LAB_IMAGE") or ensure_image()
    ensure_network(args.name)
    existing = set(lab_containers(args.name))
    t0 = time.monotonic()
    hosts = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        futs = {h: pool.submit(start_host, args.name, i, image, priv) for h, (i, priv) in wanted.items()
                if h not in existing}
        for fut in futs.values():
            fut.result()
    for h, (i, _priv) in wanted.items():
        hosts[h] = host_address(args.name, i)
        default_route(args.name, h)
    wait_ready(args.name, hosts)
    print("lab %s: %d hosts ready in %.1f s; known_hosts %s"
          % (args.name, len(hosts), time.monotonic() - t0, known_hosts_path(args.name).relative_to(ROOT)))
    return 0


def cmd_rm(args):
    """Remove the named hosts (and their containerd volumes) but keep the lab's network."""
    names = [h for h in args.hosts if podman("container", "exists", h, check=False).returncode == 0]
    if names:
        podman("rm", "-f", "-t", "0", *names)
    vols = [v for v in podman("volume", "ls", "-q").stdout.split()
            if v in {h + suffix for h in args.hosts for suffix in ("-containerd", "-kubelet")}]
    if vols:
        podman("volume", "rm", "-f", *vols)
    # The lab's known_hosts: the keys of the hosts left, none of the removed ones (a host re-created
    # at the same address gets a new key).
    keys = {}
    for h in lab_containers(args.name):
        ok, value = host_keys(h)
        if ok:
            keys[host_address(args.name, platform_index(args.name, h))] = value
    write_known_hosts(known_hosts_path(args.name), args.name, keys)
    print("lab %s: removed %d hosts" % (args.name, len(names)))
    return 0


def cmd_status(args):
    names = lab_containers(args.name)
    if not names:
        print("lab %s: no hosts" % args.name)
        return 1
    key = ssh_key()
    bad = 0
    for h in names:
        addr = podman("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", h).stdout.strip()
        ok, detail = host_ready(h, addr, key, known_hosts_path(args.name))
        bad += not ok
        print("%-24s %-15s %s" % (h, addr, detail))
    return 1 if bad else 0


def down(name):
    names = lab_containers(name)
    if names:
        podman("rm", "-f", "-t", "0", *names)
    vols = set(podman("volume", "ls", "-q", "--filter", "label=mooring.lab=" + name).stdout.split())
    # Volumes a molecule platform names NAME-N-containerd carry no label: match them by name.
    vols.update(v for v in podman("volume", "ls", "-q").stdout.split()
                if re.fullmatch(re.escape(name) + r"-[0-9]+-containerd", v))
    vols = sorted(vols)
    if vols:
        podman("volume", "rm", "-f", *vols)
    net = network_name(name)
    if podman("network", "exists", net, check=False).returncode == 0:
        podman("network", "rm", "-f", net)
    lab_dir = inventory_path(name).parent  # the inventory and known_hosts (only the latter for molecule's labs)
    if lab_dir.exists():
        shutil.rmtree(lab_dir)
    return names, vols


def cmd_down(args):
    t0 = time.monotonic()
    names, vols = down(args.name)
    print("lab %s: removed %d hosts, %d volumes and network %s in %.1f s"
          % (args.name, len(names), len(vols), network_name(args.name), time.monotonic() - t0))
    return 0


VIP_HOST = 100  # the lab's hosts are .11 upwards, the bridge .1


def lab_spec(name, upgrade_from=None, leave_out=()):
    """tests/lab/installer.yaml (at tests/lab/previous.yaml's versions ``upgrade_from`` when given) with lab NAME's
    highly available API endpoint: ``kubernetes.controlPlaneEndpoint`` a free address of its subnet and
    ``haEndpoint: {mode: vip}`` (keepalived, docs/ha-endpoint.md)."""
    try:
        text = labspec.without(labspec.spec_text(upgrade_from), leave_out)
    except labspec.SpecError as exc:
        raise LabError(str(exc)) from None
    marker = "\n  kubernetes:\n"
    if text.count(marker) != 1 or "controlPlaneEndpoint" in text:
        raise LabError("%s: expected one `kubernetes:` section and no controlPlaneEndpoint" % labspec.LAB_SPEC)
    endpoint = ("    # lab %s's API endpoint: a free address of its subnet, held by keepalived (tests/lab/lab.py spec)\n"
                "    controlPlaneEndpoint: %s.%d:6443\n    haEndpoint: {mode: vip}\n" % (name, lab_prefix(name), VIP_HOST))
    return text.replace(marker, marker + endpoint, 1)


def cmd_spec(args):
    text = lab_spec(args.name, args.upgrade_from, args.leave_out or ())
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="lab.py", description=__doc__.split("\n", maxsplit=1)[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("setup").set_defaults(func=cmd_setup)
    sub.add_parser("image").set_defaults(func=cmd_image)
    e = sub.add_parser("env")
    e.add_argument("name", nargs="?")
    e.set_defaults(func=cmd_env)
    for cmd, func in (("net", cmd_net), ("status", cmd_status), ("down", cmd_down)):
        s = sub.add_parser(cmd)
        s.add_argument("name")
        s.set_defaults(func=func)
    sp = sub.add_parser("spec", help="the lab's installer spec (its API endpoint a keepalived VIP)")
    sp.add_argument("name")
    sp.add_argument("-o", "--output")
    sp.add_argument("--from", dest="upgrade_from", metavar="WHICH",
                    help="at the versions an upgrade starts from (tests/lab/previous.yaml: patch)")
    sp.add_argument("--without", dest="leave_out", action="append", metavar="ADDON",
                    help="leave spec.ADDON out (a lab with no worker: nothing schedules storage or metrics)")
    sp.set_defaults(func=cmd_spec)
    rc = sub.add_parser("route-check", help="refuse unless each address routes through a lab bridge")
    rc.add_argument("addresses", nargs="+")
    rc.set_defaults(func=cmd_route_check)
    cn = sub.add_parser("connect", help="ssh ProxyCommand (ProxyUseFdpass=yes) with the route check")
    cn.add_argument("host")
    cn.add_argument("port", type=int)
    cn.set_defaults(func=cmd_connect)
    c = sub.add_parser("create", help="molecule create: hosts from a JSON list of platforms")
    c.add_argument("name")
    c.add_argument("--platforms", required=True)
    c.set_defaults(func=cmd_create)
    r = sub.add_parser("rm", help="molecule destroy: remove hosts, keep the network")
    r.add_argument("name")
    r.add_argument("hosts", nargs="*")
    r.set_defaults(func=cmd_rm)
    u = sub.add_parser("up")
    u.add_argument("name")
    u.add_argument("-n", "--hosts", type=int, default=3)
    u.add_argument("--privileged", action="store_true", help="privileged hosts with a /var/lib/containerd volume")
    u.add_argument("--control-plane", type=int, default=None, help="how many hosts are control_plane+etcd")
    u.add_argument("--keep-on-failure", action="store_true")
    u.set_defaults(func=cmd_up)
    args = p.parse_args(argv)
    try:
        return args.func(args)
    except LabError as exc:
        print("lab: ERROR: %s" % exc, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
