# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: where each upstream artifact lands on a host (controller side).

One table, :data:`LAYOUT`, says for every artifact the catalog ships how it is installed: a
bare binary to one path, or which members of a release archive go where. The bundle builder
reads each artifact once (:func:`plan_install`), checks that it has the upstream shape and
records the result in the signed manifest: per file the archive member, the destination, the
mode, the size and the sha256. Hosts install from that record (``host_install.py``) and never
interpret archives themselves; a stand-in built for the lab takes the same path as the real
artifact because only its bytes differ.

Versions: an artifact's version is the first ``X.Y.Z`` in its URL (upstream release URLs
always carry one) or else the add-on's version; each installed binary is asked for its own
version after install (``check``) and compared with it.

Archives are read with bounds: every header is measured before tarfile reads what it announces
(``common/tarsafe.py``: no pax header or GNU long name over 1 MiB), and each member is checked on
its header before its data is read: at most :data:`MAX_MEMBERS` members, none larger than
:data:`MAX_MEMBER`, and the declared sizes together at most :data:`MAX_RATIO` times the archive's
own size (at least :data:`MIN_BUDGET`, at most :data:`MAX_TOTAL`), so a small archive that expands
to gigabytes is refused at once. Members that are devices or FIFOs, have absolute names or '..'
components, or are links pointing outside the archive are refused.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import posixpath
import re
import tarfile
import zlib

from ansible_collections.mooring.cluster.plugins.module_utils.common import tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt

BIN = "/usr/local/bin"
SBIN = "/usr/local/sbin"
CNI_BIN = "/opt/cni/bin"
MAX_MEMBERS = 10000
MAX_MEMBER = 1 << 30  # upstream members are far smaller (kubelet, the largest, ~80 MiB)
MAX_TOTAL = 4 << 30
MAX_RATIO = 40  # release binaries compress 2-5 times; a bomb of zeros ~1000 times
MIN_BUDGET = 64 << 20
_VERSION_IN_URL = re.compile(r"(?:^|[/_-])v?([0-9]+\.[0-9]+\.[0-9]+)(?=[/._-]|$)")


def _bins(*names, prefix="*/", optional=()):
    return [{"match": prefix + n, "dest": "%s/%s" % (BIN, n), "optional": n in optional} for n in names]


# name -> {kind, members: [{match (fnmatch on the member path), dest (a file, or a directory
# ending in "/" for every match), optional}], check: {binary: [argv after the binary]}}
LAYOUT = {
    "etcd": {
        "kind": "archive",
        # etcd-vX.Y.Z-linux-ARCH/{etcd,etcdctl,etcdutl}; releases before 3.5 have no etcdutl
        "members": _bins("etcd", "etcdctl", "etcdutl", optional=("etcdutl",)),
        "check": {"etcd": ["--version"], "etcdctl": ["version"], "etcdutl": ["version"]},
    },
    "containerd": {
        "kind": "archive",
        # bin/containerd, bin/containerd-shim-runc-v2, bin/ctr (+ containerd-stress in 1.7+/2.x)
        "members": [{"match": "bin/*", "dest": BIN + "/", "optional": False}],
        "require": ["bin/containerd", "bin/containerd-shim-runc-v2", "bin/ctr"],
        "check": {"containerd": ["--version"], "ctr": ["--version"]},
    },
    "runc": {"kind": "binary", "dest": SBIN + "/runc", "check": {"runc": ["--version"]}},
    "cni-plugins": {
        "kind": "archive",
        # ./bridge, ./host-local, ./loopback, ./portmap ... plus ./LICENSE and ./README.md (not installed)
        "members": [{"match": "*", "dest": CNI_BIN + "/", "optional": False, "executable": True}],
        "require": ["bridge", "host-local", "loopback", "portmap"],
        "check": {},
    },
    "crictl": {
        "kind": "archive",
        "members": [{"match": "crictl", "dest": BIN + "/crictl", "optional": False}],
        "check": {"crictl": ["--version"]},
    },
    "kubeadm": {"kind": "binary", "dest": BIN + "/kubeadm", "check": {"kubeadm": ["version", "-o", "short"]}},
    "kubelet": {"kind": "binary", "dest": BIN + "/kubelet", "check": {"kubelet": ["--version"]}},
    "kubectl": {"kind": "binary", "dest": BIN + "/kubectl", "check": {"kubectl": ["version", "--client"]}},
}

# What a Kubernetes node needs from the lock before kubeadm can run (the install's boundary). Not crictl: kubeadm
# talks to the CRI itself (since 1.31), and the health gates read the API; crictl is installed when the lock has it.
KUBEADM_NEEDS = ("kubeadm", "kubelet", "cni-plugins")


class LayoutError(MooringError):
    """An artifact does not have the shape of the upstream release it stands for."""


def artifact_version(artifact, addon_version=None):
    """The version an artifact carries: the last X.Y.Z in its URL path, else the add-on's."""
    url = (artifact.get("url") or "").split("?", 1)[0]
    path = url.split("://", 1)[-1]
    path = path.split("/", 1)[1] if "/" in path else path
    # The last X.Y.Z: upstream release URLs end in the release's own directory and file name, and a
    # mirror directory named after some other version (airgap-1.35.8/...) must not win.
    found = _VERSION_IN_URL.findall(path)
    return found[-1] if found else (str(addon_version) if addon_version is not None else None)


def _member_name(name):
    name = name[2:] if name.startswith("./") else name
    return name.rstrip("/")


def _digest_member(tar, member):
    h = hashlib.sha256()
    handle = tar.extractfile(member)
    size = 0
    while True:
        chunk = handle.read(1 << 20)
        if not chunk:
            break
        h.update(chunk)
        size += len(chunk)
    return h.hexdigest(), size


def plan_install(artifact, path, sha256=None, size=None, addon_version=None):
    """How the artifact at ``path`` installs, or None when it is not installed on hosts
    (manifests, charts, debs). Raises :class:`LayoutError` when the shape is not upstream's."""
    name = artifact.get("name")
    rule = LAYOUT.get(name)
    kind = artifact.get("kind") or "binary"
    generic = rule is None and kind == "binary"
    if generic:
        # An add-on's own bare binary with no upstream layout known here: it lands in BIN under its own
        # name, through the same install path as every other binary (sha256 and mode checked); how to ask
        # it for its version is not known, so it has no version check.
        rule = {"kind": "binary", "dest": BIN + "/" + posixpath.basename(artifact.get("dest") or name), "check": {}}
    if rule is None or kind not in ("binary", "archive"):
        return None
    if kind != rule["kind"]:
        # Not carried as a loose file that nothing installs: upstream's shape or nothing.
        raise LayoutError("%s: upstream ships it as %s %s, the catalog entry says %s; list the upstream %s"
                          % (excerpt(name), "an" if rule["kind"] == "archive" else "a", rule["kind"], excerpt(kind),
                             rule["kind"]))
    label = "%s (%s)" % (name, posixpath.basename(path))
    version = artifact_version(artifact, addon_version)
    files = []
    if rule["kind"] == "binary":
        files.append({"member": None, "dest": rule["dest"], "mode": "0755", "sha256": sha256, "size": size})
    else:
        files = _plan_archive(rule, path, label)
    dests = {f["dest"] for f in files}
    check = []
    for binary, argv in sorted(rule.get("check", {}).items()):
        dest = next((d for d in sorted(dests) if posixpath.basename(d) == binary), None)
        if dest:
            check.append({"binary": dest, "argv": [dest] + list(argv), "version": version})
    planned = {"name": name, "kind": rule["kind"], "arch": artifact.get("arch") or "all", "version": version,
               "files": files, "check": check}
    if generic:
        planned["generic"] = True
    return planned


def archive_budget(path):
    """How many bytes the members of the archive at ``path`` may declare in all."""
    return min(MAX_TOTAL, max(MIN_BUDGET, MAX_RATIO * os.path.getsize(path)))


class _Bounds(object):
    """The member checks of one archive (see the module docstring); raises :class:`LayoutError`."""

    def __init__(self, label, budget):
        self.label, self.budget, self.total, self.count = label, budget, 0, 0

    def refuse(self, member, why):
        raise LayoutError("%s: member %s %s; refusing the archive" % (self.label, excerpt(member.name), why))

    def check(self, member):
        self.count += 1
        if self.count > MAX_MEMBERS:
            raise LayoutError("%s: more than %d members; refusing the archive" % (self.label, MAX_MEMBERS))
        name = member.name
        if name.startswith("/") or "\\" in name or ".." in name.split("/"):
            self.refuse(member, "has an absolute name or a '..' component")
        if member.ischr() or member.isblk() or member.isfifo():
            self.refuse(member, "is a device or FIFO")
        if member.issym() or member.islnk():
            target = member.linkname
            base = posixpath.dirname(name) if member.issym() else ""
            resolved = posixpath.normpath(posixpath.join(base, target))
            if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
                self.refuse(member, "is a link to %s, outside the archive" % excerpt(target))
        elif not (member.isfile() or member.isdir()):
            self.refuse(member, "is not a file, directory or link")
        if member.size > MAX_MEMBER:
            self.refuse(member, "declares %d bytes; the limit is %d" % (member.size, MAX_MEMBER))
        self.total += member.size
        if self.total > self.budget:
            raise LayoutError("%s: members declare more than %d bytes in all (%d times the archive's size, at "
                              "least %d); refusing the archive" % (self.label, self.budget, MAX_RATIO, MIN_BUDGET))


def _plan_archive(rule, path, label):
    # One streaming pass: every regular member is digested as it goes by (a compressed archive is
    # decompressed once; random access would decompress it again for every seek back). Each header
    # is measured before tarfile reads what it announces (tarsafe), and checked (_Bounds) before the
    # member's data is read.
    digests = {}
    try:
        bounds = _Bounds(label, archive_budget(path))
        with tarsafe.open_tar(path, "r|*") as tar:
            for member in tar:
                bounds.check(member)
                if member.isfile():
                    sha, size = _digest_member(tar, member)
                    digests[_member_name(member.name)] = (member, sha, size)
    except tarsafe.HeaderBoundError as exc:
        raise LayoutError("%s: %s; refusing the archive" % (label, exc)) from None
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise LayoutError("%s: not a readable release archive: %s" % (label, reason)) from None
    names = {n: v[0] for n, v in digests.items()}
    for want in rule.get("require", []):
        if want not in names:
            raise LayoutError("%s: member %s is missing; this is not the upstream release layout (members: %s)"
                              % (label, want, ", ".join(sorted(names)[:20])))
    files = []
    seen = set()
    for spec in rule["members"]:
        matched = [n for n in sorted(names) if fnmatch.fnmatchcase(n, spec["match"])]
        if spec.get("executable"):
            matched = [n for n in matched if names[n].mode & 0o111 and "/" not in n]
        if not matched and not spec.get("optional"):
            raise LayoutError("%s: no member matches %s; this is not the upstream release layout (members: %s)"
                              % (label, spec["match"], ", ".join(sorted(names)[:20])))
        for n in matched:
            dest = spec["dest"] + posixpath.basename(n) if spec["dest"].endswith("/") else spec["dest"]
            if dest in seen:
                raise LayoutError("%s: two members would install as %s" % (label, dest))
            seen.add(dest)
            member, sha, size = digests[n]
            files.append({"member": member.name, "dest": dest, "mode": "0755", "sha256": sha, "size": size})
    return files


def boundary(lock, arch="amd64"):
    """What a Kubernetes node needs that the lock does not carry: ``{"artifacts": [...], "images": n}``.

    Empty lists mean kubeadm can run; a lock whose overlay leaves any of them out stops here, by name."""
    k8s = (lock.get("addons") or {}).get("kubernetes") or {}
    have = {a.get("name") for a in k8s.get("artifacts") or [] if a.get("arch") in (arch, "all", None)}
    missing = [n for n in KUBEADM_NEEDS if n not in have]
    images = [i.get("ref") for i in k8s.get("images") or []]
    control_plane = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
    missing_images = [c for c in control_plane if not any("/%s:" % c in (r or "") for r in images)]
    return {"artifacts": missing, "images": missing_images}


# Which hosts install an artifact, by inventory group: etcd on etcd members, the kubeadm role's on
# Kubernetes nodes; containerd and runc on every host the bundle play reaches.
_NODES = ("control_plane", "workers")
_INSTALLED_ON = {"etcd": ("etcd",), "kubeadm": _NODES, "kubelet": _NODES, "kubectl": _NODES, "crictl": _NODES,
                 "cni-plugins": _NODES}


def _destinations(rule):
    if rule["kind"] == "binary":
        return rule["dest"]
    dests = []
    for spec in rule["members"]:
        if spec["dest"].endswith("/"):
            dests.append(spec["dest"] + "*")
        else:
            dests.append(spec["dest"] + (" (if present)" if spec.get("optional") else ""))
    return ", ".join(dests)


def install_plan(lock, groups, arch="amd64", first_control_plane=False):
    """What ``mooring.cluster.install`` does on a host in ``groups``, as lines, from the lock alone.

    Printed per host by ``--check`` on hosts the bundle has not reached yet (nothing there can be
    checked in detail before the bundle is unpacked) and in the plan of every run."""
    groups = set(groups or ())
    addons = lock.get("addons") or {}
    lines = []
    for addon_name in sorted(addons):
        addon = addons[addon_name] or {}
        for art in addon.get("artifacts") or []:
            rule = LAYOUT.get(art.get("name"))
            if rule is None or art.get("kind") != rule["kind"] or art.get("arch") not in (arch, "all", None):
                continue
            where = _INSTALLED_ON.get(art["name"])
            if where and not groups.intersection(where):
                continue
            version = artifact_version(art, addon.get("version"))
            lines.append("install %s %s (%s) -> %s" % (art["name"], version or "?",
                                                       posixpath.basename(art.get("dest") or art.get("url") or ""),
                                                       _destinations(rule)))
    if "etcd" in groups and "etcd" in addons:
        lines.append("etcd %s member with mutual TLS (unit etcd.service, data /var/lib/etcd)"
                     % addons["etcd"].get("version"))
    if groups.intersection(("control_plane", "workers")) and "kubernetes" in addons:
        lines.append("kernel modules overlay, br_netfilter; sysctls ip_forward, bridge-nf-call-ip(6)tables; swap off")
        edge = boundary(lock, arch)
        if edge["artifacts"] or edge["images"]:
            lines.append("stop at the kubeadm boundary: the lock carries no %s"
                         % ", ".join(edge["artifacts"] + edge["images"]))
        elif "control_plane" in groups:
            lines.append("kubeadm %s" % ("init" if first_control_plane else "join --control-plane"))
        else:
            lines.append("kubeadm join")
    return lines
