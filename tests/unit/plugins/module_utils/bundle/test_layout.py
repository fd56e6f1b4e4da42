# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""layout.artifact_version / boundary and host_install.select / file_state / plan, in isolation."""

import hashlib
import os
import re

import pytest
from bundle_testlib import Measured, pax_header_bomb

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import install as hi
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import layout
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import addon_contents, load_catalog

# (add-on, add-on version, artifact name, URL in the real catalog for amd64, the version it carries)
REAL_URLS = [
    ("etcd", "3.6.14", "etcd",
     "https://github.com/etcd-io/etcd/releases/download/v3.6.14/etcd-v3.6.14-linux-amd64.tar.gz", "3.6.14"),
    ("containerd", "2.1.9", "containerd",
     "https://github.com/containerd/containerd/releases/download/v2.1.9/containerd-2.1.9-linux-amd64.tar.gz", "2.1.9"),
    ("containerd", "2.1.9", "runc",
     "https://github.com/opencontainers/runc/releases/download/v1.3.3/runc.amd64", "1.3.3"),
    ("kubernetes", "1.35.8", "cni-plugins",
     "https://github.com/containernetworking/plugins/releases/download/v1.9.1/cni-plugins-linux-amd64-v1.9.1.tgz", "1.9.1"),
    ("kubernetes", "1.35.8", "crictl",
     "https://github.com/kubernetes-sigs/cri-tools/releases/download/v1.35.0/crictl-v1.35.0-linux-amd64.tar.gz", "1.35.0"),
    ("kubernetes", "1.35.8", "kubeadm", "https://dl.k8s.io/release/v1.35.8/bin/linux/amd64/kubeadm", "1.35.8"),
]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(None)


# ------------------------------------------------------------------------------------ artifact_version
@pytest.mark.parametrize("addon,addon_version,name,url,version", REAL_URLS)
def test_artifact_version_of_real_catalog_urls(catalog, addon, addon_version, name, url, version):
    listed = addon_contents(catalog, addon, addon_version, ["amd64"])["artifacts"]
    (artifact,) = [a for a in listed if a["name"] == name]
    assert artifact["url"] == url  # the URL is the real catalog's
    assert layout.artifact_version(artifact) == version
    # The URL's version wins over the add-on's (runc, crictl and the CNI plugins have their own).
    assert layout.artifact_version(artifact, addon_version) == version


def test_every_installed_artifact_url_of_the_catalog_carries_its_version(catalog):
    """Across every version and architecture of the catalog: each artifact LAYOUT installs has a
    version in its URL, and the add-on's own artifacts carry exactly the add-on's version."""
    own = {"etcd": "etcd", "containerd": "containerd", "kubeadm": "kubernetes", "kubelet": "kubernetes",
           "kubectl": "kubernetes"}
    seen = set()
    for addon in catalog.names():
        arches = catalog.addons[addon]["architectures"]
        for version in catalog.versions(addon):
            for artifact in addon_contents(catalog, addon, version, arches)["artifacts"]:
                if artifact["name"] not in layout.LAYOUT:
                    continue
                seen.add(artifact["name"])
                assert layout.LAYOUT[artifact["name"]]["kind"] == artifact["kind"], artifact
                got = layout.artifact_version(artifact)
                assert got is not None, artifact["url"]
                if own.get(artifact["name"]) == addon:
                    assert got == version, artifact["url"]
    assert seen == set(layout.LAYOUT)


@pytest.mark.parametrize("url,version", [
    ("file:///var/cache/mooring/mirror/releases/runc/v1.1.5/runc.amd64", "1.1.5"),
    ("file:///var/cache/mooring/mirror/etcd/v3.5.1/etcd-v3.5.1-linux-amd64.tar.gz", "3.5.1"),
    ("http://127.0.0.1:8080/releases/runc/v1.1.5/runc.amd64", "1.1.5"),
    # The host is not part of the path: an address that looks like a version is not taken.
    ("http://10.0.0.1/releases/crictl/crictl-v1.35.0-linux-amd64.tar.gz", "1.35.0"),
    # The query string is not part of the path.
    ("https://example.invalid/download/kubeadm?ref=release-9.9.9", None),
    ("https://dl.k8s.io/release/v1.35.8/bin/linux/amd64/kubelet?checksum=sha256", "1.35.8"),
    # Four-part or glued numbers are not a version boundary.
    ("https://example.invalid/go1.24.9/tool", None),
])
def test_artifact_version_of_mirror_and_odd_urls(url, version):
    assert layout.artifact_version({"name": "x", "url": url}) == version


def test_artifact_version_falls_back_to_the_addon_version():
    artifact = {"name": "calico-manifest", "url": "file:///srv/mirror/calico/calico.yaml"}
    assert layout.artifact_version(artifact, "3.31.7") == "3.31.7"
    assert layout.artifact_version(artifact) is None
    assert layout.artifact_version({"name": "x"}, "1.0.0") == "1.0.0"
    assert layout.artifact_version({"name": "x", "url": None}) is None


def test_artifact_version_ignores_a_versioned_mirror_directory():
    artifact = {"name": "etcd", "kind": "archive",
                "url": "file:///srv/airgap-1.35.8/etcd/v3.6.14/etcd-v3.6.14-linux-amd64.tar.gz"}
    assert layout.artifact_version(artifact) == "3.6.14"


# ------------------------------------------------------------------------------------ boundary
def lock_with(artifacts, images, arch="amd64"):
    return {"architectures": [arch], "addons": {"kubernetes": {
        "version": "1.35.8",
        "artifacts": [{"name": n, "kind": layout.LAYOUT[n]["kind"], "arch": arch} for n in artifacts],
        "images": [{"ref": r} for r in images]}}}


CONTROL_PLANE = ["registry.k8s.io/kube-apiserver:v1.35.8", "registry.k8s.io/kube-controller-manager:v1.35.8",
                 "registry.k8s.io/kube-scheduler:v1.35.8"]


def test_boundary_names_what_a_lock_lacks():
    # An overlay with kubectl and the CNI plugins, only the pause image.
    lock = lock_with(["cni-plugins", "kubectl"], ["registry.k8s.io/pause:3.10.1"])
    assert layout.boundary(lock) == {"artifacts": ["kubeadm", "kubelet"],
                                     "images": ["kube-apiserver", "kube-controller-manager", "kube-scheduler"]}


def test_boundary_lists_each_missing_artifact_by_name():
    full = ["kubeadm", "kubelet", "crictl", "cni-plugins", "kubectl"]
    assert layout.boundary(lock_with(full, CONTROL_PLANE)) == {"artifacts": [], "images": []}
    for missing in ("kubeadm", "kubelet", "cni-plugins"):
        lock = lock_with([n for n in full if n != missing], CONTROL_PLANE)
        assert layout.boundary(lock) == {"artifacts": [missing], "images": []}
    # Neither kubectl nor crictl is needed before kubeadm can run (kubeadm talks to the CRI itself).
    assert layout.boundary(lock_with(full[:4], CONTROL_PLANE))["artifacts"] == []
    assert layout.boundary(lock_with(["kubeadm", "kubelet", "cni-plugins"], CONTROL_PLANE))["artifacts"] == []
    lock = lock_with(full, CONTROL_PLANE[:1] + CONTROL_PLANE[2:])
    assert layout.boundary(lock) == {"artifacts": [], "images": ["kube-controller-manager"]}


def test_boundary_without_kubernetes_or_for_another_arch():
    assert layout.boundary({"addons": {"etcd": {"artifacts": [{"name": "etcd", "arch": "amd64"}]}}}) == {
        "artifacts": ["kubeadm", "kubelet", "cni-plugins"],
        "images": ["kube-apiserver", "kube-controller-manager", "kube-scheduler"]}
    assert layout.boundary({}) == layout.boundary({"addons": None})
    arm = lock_with(["kubeadm", "kubelet", "crictl", "cni-plugins"], CONTROL_PLANE, arch="arm64")
    assert layout.boundary(arm, "arm64") == {"artifacts": [], "images": []}
    # The default architecture is amd64: an arm64-only lock is at the boundary there.
    assert layout.boundary(arm)["artifacts"] == ["kubeadm", "kubelet", "cni-plugins"]
    # Architecture-independent entries count for every architecture.
    for a in arm["addons"]["kubernetes"]["artifacts"]:
        a["arch"] = "all"
    assert layout.boundary(arm, "ppc64le")["artifacts"] == []


# ------------------------------------------------------------------------------------ select
INSTALLS = [
    {"name": "etcd", "addon": "etcd", "arch": "amd64"},
    {"name": "etcd", "addon": "etcd", "arch": "arm64"},
    {"name": "containerd", "addon": "containerd", "arch": "amd64"},
    {"name": "runc", "addon": "containerd", "arch": "amd64"},
    {"name": "runc", "addon": "containerd", "arch": "arm64"},
    {"name": "kubectl", "addon": "kubernetes", "arch": "all"},
    {"name": "crictl", "addon": "kubernetes"},
]


def names(entries):
    return [(e["name"], e.get("arch")) for e in entries]


def test_select_by_name_and_arch():
    assert names(hi.select(INSTALLS, names=["etcd"], arch="arm64")) == [("etcd", "arm64")]
    assert names(hi.select(INSTALLS, names=["etcd", "runc"], arch="amd64")) == [("etcd", "amd64"), ("runc", "amd64")]
    assert names(hi.select(INSTALLS, names=["etcd"])) == [("etcd", "amd64"), ("etcd", "arm64")]
    # 'all' and entries without an arch go to every architecture.
    assert names(hi.select(INSTALLS, arch="ppc64le")) == [("kubectl", "all"), ("crictl", None)]
    assert names(hi.select(INSTALLS, arch="arm64")) == [("etcd", "arm64"), ("runc", "arm64"), ("kubectl", "all"),
                                                        ("crictl", None)]
    assert names(hi.select(INSTALLS, names=["kubeadm"], arch="amd64")) == []
    assert hi.select(INSTALLS) == INSTALLS and hi.select(None) == []


def test_select_by_addon():
    assert names(hi.select(INSTALLS, addons=["containerd"], arch="arm64")) == [("runc", "arm64")]
    assert names(hi.select(INSTALLS, names=["runc"], addons=["etcd"])) == []


def test_host_arch():
    assert hi.host_arch("x86_64") == "amd64" and hi.host_arch("aarch64") == "arm64"
    assert hi.host_arch("riscv64") == "riscv64"
    assert hi.host_arch() == hi.ARCH.get(os.uname().machine, os.uname().machine)


# ------------------------------------------------------------------------------------ file_state / plan
DATA = b"#!/bin/sh\necho 'runc version 1.3.3'\n"
DATA_SHA = "%s" % __import__("hashlib").sha256(DATA).hexdigest()


@pytest.fixture
def installed(tmp_path):
    dest = tmp_path / "usr" / "local" / "sbin" / "runc"
    dest.parent.mkdir(parents=True)
    dest.write_bytes(DATA)
    dest.chmod(0o755)
    return dest


def test_file_state_ok_and_mode_only(installed):
    assert hi.file_state(str(installed), DATA_SHA, "0755") == "ok"
    assert hi.file_state(str(installed), DATA_SHA, "0755", len(DATA)) == "ok"
    for mode in (0o700, 0o644, 0o4755, 0o775):
        installed.chmod(mode)
        assert hi.file_state(str(installed), DATA_SHA, "0755") == "mode", oct(mode)
    installed.chmod(0o755)
    assert hi.file_state(str(installed), DATA_SHA, "0700") == "mode"


def test_file_state_content(installed, tmp_path):
    assert hi.file_state(str(tmp_path / "absent"), DATA_SHA, "0755") == "content"
    assert hi.file_state(str(installed), "0" * 64, "0755") == "content"
    assert hi.file_state(str(installed), DATA_SHA, "0755", len(DATA) + 1) == "content"
    # Different content and a wrong mode: content first (the write sets the mode).
    installed.write_bytes(DATA + b"#\n")
    installed.chmod(0o644)
    assert hi.file_state(str(installed), DATA_SHA, "0755") == "content"
    # A symlink to the right bytes, or a directory, is not the installed file.
    target = tmp_path / "elsewhere"
    target.write_bytes(DATA)
    target.chmod(0o755)
    link = tmp_path / "link"
    link.symlink_to(target)
    assert hi.file_state(str(link), DATA_SHA, "0755") == "content"
    assert hi.file_state(str(tmp_path), DATA_SHA, "0755") == "content"


def test_mode_only_change_is_planned_and_applied_without_a_rewrite(installed, tmp_path):
    source = tmp_path / "bundle-runc.amd64"
    source.write_bytes(b"not read for a mode change")
    entry = {"name": "runc", "path": str(source),
             "files": [{"member": None, "dest": str(installed), "mode": "0755", "sha256": DATA_SHA, "size": len(DATA)}]}
    assert hi.plan([entry]) == []
    installed.chmod(0o600)
    inode = os.stat(str(installed)).st_ino
    todo = hi.plan([entry])
    assert [(f["dest"], state) for _e, f, state in todo] == [(str(installed), "mode")]
    assert hi.apply(todo) == [str(installed)]
    st = os.stat(str(installed))
    assert st.st_mode & 0o7777 == 0o755 and st.st_ino == inode and installed.read_bytes() == DATA
    assert hi.plan([entry]) == []


def test_recorded_mode_is_applied(tmp_path):
    source = tmp_path / "README.md"
    source.write_bytes(DATA)
    dest = tmp_path / "root" / "share" / "doc"
    entry = {"name": "doc", "path": str(source),
             "files": [{"member": None, "dest": str(dest), "mode": "0644", "sha256": DATA_SHA, "size": len(DATA)}]}
    assert [s for _e, _f, s in hi.plan([entry])] == ["content"]
    hi.apply(hi.plan([entry]))
    assert os.stat(str(dest)).st_mode & 0o7777 == 0o644 and dest.read_bytes() == DATA
    assert hi.plan([entry]) == []


def test_symlinked_destination_is_replaced_not_followed(tmp_path):
    source = tmp_path / "runc.amd64"
    source.write_bytes(DATA)
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    dest = tmp_path / "sbin" / "runc"
    dest.parent.mkdir()
    dest.symlink_to(victim)
    entry = {"name": "runc", "path": str(source),
             "files": [{"member": None, "dest": str(dest), "mode": "0755", "sha256": DATA_SHA, "size": len(DATA)}]}
    hi.apply(hi.plan([entry]))
    assert not dest.is_symlink() and dest.read_bytes() == DATA and victim.read_bytes() == b"keep me"
    assert hi.plan([entry]) == []


# ------------------------------------------------------------------------------------ versions
@pytest.mark.parametrize("output,version", [
    ("etcd Version: 3.6.14\nGit SHA: 1a2b3c4d\nGo Version: go1.24.9", "3.6.14"),
    ("etcdctl version: 3.6.14\nAPI version: 3.6", "3.6.14"),
    ("containerd github.com/containerd/containerd/v2 v2.1.9 0123abc", "2.1.9"),
    ("runc version 1.3.3\ncommit: v1.3.3-0-gd842d771\nspec: 1.2.1", "1.3.3"),
    ("crictl version v1.35.0", "1.35.0"),
    ("v1.35.8", "1.35.8"),
    ("Kubernetes v1.35.8", "1.35.8"),
    ("Client Version: v1.35.8\nKustomize Version: v5.7.1", "1.35.8"),
    # A number glued to a word (go1.24.9) is not the version.
    ("etcd built with go1.24.9, version 3.6.14", "3.6.14"),
    ("no version here", None),
    ("", None),
])
def test_reported_version(output, version):
    assert hi.reported_version(output) == version


@pytest.mark.parametrize("out,err", [("", ""), ("\n", "")])
def test_check_versions_of_a_silent_binary_is_a_problem(out, err):
    entries = [{"name": "runc", "check": [{"binary": "/usr/local/sbin/runc", "argv": ["/usr/local/sbin/runc", "--version"],
                                           "version": "1.3.3"}]}]
    versions, problems = hi.check_versions(entries, lambda argv: (0, out, err))
    assert versions == {"runc": None}
    assert len(problems) == 1 and "1.3.3" in problems[0]


def test_check_versions_reads_stderr_too():
    entries = [{"name": "x", "check": [{"binary": "/usr/local/bin/kubelet", "argv": ["/usr/local/bin/kubelet", "--version"],
                                        "version": "1.35.8"}]}]
    assert hi.check_versions(entries, lambda argv: (0, "", "Kubernetes v1.35.8\n")) == ({"kubelet": "1.35.8"}, [])
    versions, problems = hi.check_versions(entries, lambda argv: (0, "", "Kubernetes v1.34.2\n"))
    assert problems == ["kubelet reports version 1.34.2, the lock says 1.35.8 (Kubernetes v1.34.2)"]


# ------------------------------------------------------------------------------------ install plan
def plan_lock(k8s_artifacts, images=()):
    lock = lock_with(k8s_artifacts, list(images))
    lock["addons"]["kubernetes"]["artifacts"][0]["url"] = "https://dl.k8s.io/release/v1.35.8/bin/linux/amd64/kubeadm"
    lock["addons"]["etcd"] = {"version": "3.5.21", "artifacts": [
        {"name": "etcd", "kind": "archive", "arch": "amd64", "dest": "etcd-v3.5.21-linux-amd64.tar.gz",
         "url": "https://github.com/etcd-io/etcd/releases/download/v3.5.21/etcd-v3.5.21-linux-amd64.tar.gz"}]}
    lock["addons"]["containerd"] = {"version": "2.1.4", "artifacts": [
        {"name": "containerd", "kind": "archive", "arch": "amd64", "dest": "containerd-2.1.4-linux-amd64.tar.gz"},
        {"name": "runc", "kind": "binary", "arch": "amd64", "dest": "runc.amd64"},
        {"name": "runc", "kind": "binary", "arch": "arm64", "dest": "runc.arm64"}]}
    return lock


def test_install_plan_per_group():
    lock = plan_lock(["kubeadm", "kubelet", "crictl", "cni-plugins", "kubectl"], CONTROL_PLANE)
    etcd_only = layout.install_plan(lock, ["etcd"])
    assert etcd_only == [
        "install containerd 2.1.4 (containerd-2.1.4-linux-amd64.tar.gz) -> /usr/local/bin/*",
        "install runc 2.1.4 (runc.amd64) -> /usr/local/sbin/runc",
        "install etcd 3.5.21 (etcd-v3.5.21-linux-amd64.tar.gz) -> /usr/local/bin/etcd, /usr/local/bin/etcdctl, "
        "/usr/local/bin/etcdutl (if present)",
        "etcd 3.5.21 member with mutual TLS (unit etcd.service, data /var/lib/etcd)"]
    first = layout.install_plan(lock, ["control_plane"], first_control_plane=True)
    assert not any("etcd" in line for line in first)
    assert "install kubeadm 1.35.8 (kubeadm) -> /usr/local/bin/kubeadm" in first
    assert "install cni-plugins 1.35.8 () -> /opt/cni/bin/*" in first
    assert first[-1] == "kubeadm init"
    assert layout.install_plan(lock, ["control_plane"])[-1] == "kubeadm join --control-plane"
    assert layout.install_plan(lock, ["workers"])[-1] == "kubeadm join"
    # Another architecture's runc is not planned; an arm64 host gets it and no amd64 archive.
    assert sum("runc" in line for line in first) == 1
    assert layout.install_plan(lock, ["workers"], arch="arm64")[0] == "install runc 2.1.4 (runc.arm64) -> /usr/local/sbin/runc"


def test_install_plan_names_the_boundary():
    lock = plan_lock(["cni-plugins", "kubectl"], ["registry.k8s.io/pause:3.10.1"])
    assert layout.install_plan(lock, ["workers"])[-1] == (
        "stop at the kubeadm boundary: the lock carries no kubeadm, kubelet, kube-apiserver, "
        "kube-controller-manager, kube-scheduler")


def test_an_addons_own_binary_installs_as_itself_into_bin():
    tool = {"name": "tool", "kind": "binary", "arch": "amd64", "url": "https://example.invalid/v2.1.0/tool",
            "dest": "../../etc/tool"}
    planned = layout.plan_install(tool, "/b/alpha/bin/amd64/tool", "ab" * 32, 5, "2.1.0")
    assert planned["generic"] and planned["check"] == [] and planned["version"] == "2.1.0"
    assert [(f["dest"], f["mode"], f["member"]) for f in planned["files"]] == [("/usr/local/bin/tool", "0755", None)]
    # Upstream-known names keep their own layout and version check; other kinds are not installed.
    runc = layout.plan_install({"name": "runc", "arch": "amd64", "url": "https://x/v1.4.3/runc.amd64"}, "/b/runc")
    assert "generic" not in runc and runc["files"][0]["dest"] == "/usr/local/sbin/runc" and runc["check"]
    assert layout.plan_install({"name": "tool", "kind": "manifest", "url": "https://x/t.yaml"}, "/b/t.yaml") is None


# ------------------------------------------------------------------------------------ install (the one path)
def _runc_bundle(tmp_path, version="1.3.3"):
    source = tmp_path / "runc.amd64"
    source.write_bytes(DATA)
    dest = tmp_path / "sbin" / "runc"
    entry = {"name": "runc", "arch": "amd64", "version": version, "path": str(source),
             "files": [{"member": None, "dest": str(dest), "mode": "0755", "sha256": DATA_SHA, "size": len(DATA)}],
             "check": [{"binary": str(dest), "argv": ["/bin/sh", str(dest)], "version": version}]}
    return {"id": "b1", "installs": [entry]}, dest


def _run(argv):
    import subprocess  # pylint: disable=import-outside-toplevel
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def test_install_writes_checks_the_version_and_then_changes_nothing(tmp_path):
    bundle, dest = _runc_bundle(tmp_path)
    planned, problems = hi.install(bundle, ["runc"], _run, arch="amd64", check_mode=True)
    assert planned["installed"] == [str(dest)] and not dest.exists() and not problems
    done, problems = hi.install(bundle, ["runc"], _run, arch="amd64")
    assert done["installed"] == [str(dest)] and dest.read_bytes() == DATA and not problems
    assert done["versions"] == {"runc": "1.3.3"} and done["artifacts"][0]["version"] == "1.3.3"
    again, problems = hi.install(bundle, ["runc"], _run, arch="amd64")
    assert again["installed"] == [] and again["versions"] == {"runc": "1.3.3"} and not problems


def test_install_reports_a_version_the_lock_does_not_name(tmp_path):
    bundle, _dest = _runc_bundle(tmp_path, version="1.4.0")
    _result, problems = hi.install(bundle, ["runc"], _run, arch="amd64")
    assert problems == ["runc reports version 1.3.3, the lock says 1.4.0 (runc version 1.3.3)"]


def test_install_refuses_a_missing_name_and_keeps_an_optional_one(tmp_path):
    bundle, dest = _runc_bundle(tmp_path)
    with pytest.raises(hi.InstallError, match="carries no kubelet for amd64"):
        hi.install(bundle, ["runc", "kubelet"], _run, arch="amd64")
    assert not dest.exists()
    result, _problems = hi.install(bundle, ["runc", "kubelet"], _run, optional=["kubelet"], arch="amd64")
    assert result["absent"] == ["kubelet"] and dest.exists()


def test_install_never_swaps_the_binaries_of_a_running_unit(tmp_path):
    bundle, dest = _runc_bundle(tmp_path)
    dest.parent.mkdir()
    dest.write_bytes(b"the binary the running unit started from\n")
    asked = []

    def active(argv):
        asked.append(argv)
        return 0, "", ""
    with pytest.raises(hi.InstallError, match="h1: containerd is running"):
        hi.install(bundle, ["runc"], active, arch="amd64", running_unit="containerd", host="h1", versions=False)
    assert dest.read_bytes() == b"the binary the running unit started from\n"
    assert asked == [["systemctl", "is-active", "--quiet", "containerd"]]
    # A missing file is restored even then: nothing that runs is swapped.
    dest.unlink()
    result, _problems = hi.install(bundle, ["runc"], active, arch="amd64", running_unit="containerd", versions=False)
    assert result["installed"] == [str(dest)]


@pytest.mark.parametrize("compression", ["tar", "gz", "xz", "bz2"])
def test_install_refuses_a_release_archive_with_a_2gib_pax_header_from_the_header(tmp_path, compression):
    """Each host's bundle_install opens the archive again: tarfile would read the 2 GiB header whole there too."""
    path = pax_header_bomb(tmp_path / ("containerd.tar." + compression), compression)
    dest = tmp_path / "bin" / "containerd"
    entry = {"name": "containerd", "arch": "amd64", "version": "1.0.0", "path": path, "check": [],
             "files": [{"member": "bin/containerd", "dest": str(dest), "mode": "0755", "sha256": DATA_SHA, "size": 3}]}
    with Measured() as took, pytest.raises(hi.InstallError) as info:
        hi.install({"id": "b1", "installs": [entry]}, ["containerd"], _run, arch="amd64", versions=False)
    assert took.seconds < 5 and took.rss < 100 * 1024  # KiB: under 100 MiB more
    assert re.match(r"%s: a pax extended header of 2147483648 bytes at offset 0 \(at most 1048576\); refusing the "
                    r"archive$" % re.escape(path), str(info.value)), str(info.value)
    assert not dest.exists() and not dest.parent.exists()


@pytest.mark.parametrize("cut", ["header", "data"])
def test_install_refuses_a_damaged_release_archive_in_one_line(tmp_path, cut):
    """A release archive truncated or corrupted after the bundle was verified: one line naming the archive,
    nothing written (not tarfile's own error escaping as an internal error)."""
    import io  # pylint: disable=import-outside-toplevel
    import tarfile  # pylint: disable=import-outside-toplevel

    payload = os.urandom(256 * 1024)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("bin/containerd")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    raw = buf.getvalue()
    path = tmp_path / "containerd.tar.gz"
    path.write_bytes(raw[:40] if cut == "header" else raw[: len(raw) // 2])
    dest = tmp_path / "bin" / "containerd"
    entry = {"name": "containerd", "arch": "amd64", "version": "1.0.0", "path": str(path), "check": [],
             "files": [{"member": "bin/containerd", "dest": str(dest), "mode": "0755",
                        "sha256": hashlib.sha256(payload).hexdigest(), "size": len(payload)}]}
    with pytest.raises(hi.InstallError) as info:
        hi.install({"id": "b1", "installs": [entry]}, ["containerd"], _run, arch="amd64", versions=False)
    assert re.match(r"%s: the archive is damaged \((ReadError|EOFError|BadGzipFile|error): .*\); refusing it\. "
                    r"Build the bundle again from the lock$" % re.escape(str(path)), str(info.value)), str(info.value)
    assert not dest.exists()
