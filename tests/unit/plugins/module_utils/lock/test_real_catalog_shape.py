# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real catalog's shape, end to end, without network.

Resolves the example installer (inventories/example/installer.yaml) against the collection's
catalog through the CLI backend (``mooring spec resolve``), for every architecture every add-on
of the example supports. Then generates, in a temporary directory, small stand-ins carrying
exactly the upstream file names and archive member layouts of every artifact that lock lists
(each binary a shell script printing the version line the real binary prints), points the
lock at them with a catalog overlay in the documented format (file:// URLs under a directory
tree that mirrors the upstream URL paths, the generated files' sha256s, and the images as
``archive:`` files, so every add-on of the lock is bundled and the image refs stay the real
ones), builds and unpacks a signed bundle, and installs from its records on a fake root.
"""

import copy
import hashlib
import io
import os
import posixpath
import re
import subprocess
import tarfile
from urllib.parse import urlsplit

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as b
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import host as h
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import install as hi
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import layout
from ansible_collections.mooring.cluster.plugins.module_utils.common import digest
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import load_lock
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main as cli_main

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
EXAMPLE = os.path.join(ROOT, "inventories", "example", "installer.yaml")
MANIFESTS = os.path.join(ROOT, "tests", "unit", "data", "addons")
# Every architecture each add-on of the example supports (ingressNginx has no ppc64le).
ARCHES = ("amd64", "arm64")

# What each real binary prints when asked for its version the way LAYOUT asks
# (etcd --version, etcdctl version, containerd --version, runc --version, crictl --version,
# kubeadm version -o short, kubelet --version, kubectl version --client).
VERSION_OUTPUT = {
    "etcd": "etcd Version: {v}\nGit SHA: 1a2b3c4d\nGo Version: go1.24.9\nGo OS/Arch: linux/{arch}",
    "etcdctl": "etcdctl version: {v}\nAPI version: 3.6",
    "etcdutl": "etcdutl version: {v}\nAPI version: 3.6",
    "containerd": "containerd github.com/containerd/containerd/v2 v{v} 0123abc",
    "ctr": "ctr github.com/containerd/containerd/v2 v{v}",
    "containerd-shim-runc-v2": "containerd-shim-runc-v2:\n  Version:  v{v}\n  Revision: 0123abc\n  Go version: go1.24.9",
    "containerd-stress": "containerd-stress version v{v}",
    "runc": "runc version {v}\ncommit: v{v}-0-gd842d771\nspec: 1.2.1\ngo: go1.24.9\nlibseccomp: 2.5.6",
    "crictl": "crictl version v{v}",
    "kubeadm": "v{v}",
    "kubelet": "Kubernetes v{v}",
    "kubectl": "Client Version: v{v}\nKustomize Version: v5.7.1",
}
CNI_PLUGINS = ("bandwidth", "bridge", "dhcp", "dummy", "firewall", "host-device", "host-local", "ipvlan",
               "loopback", "macvlan", "portmap", "ptp", "sbr", "static", "tap", "tuning", "vlan", "vrf")
ETCD_BINARIES = ("etcd", "etcdctl", "etcdutl")
CONTAINERD_BINARIES = ("containerd", "containerd-shim-runc-v2", "containerd-stress", "ctr")
KUBE_BINARIES = ("kubeadm", "kubelet", "kubectl")
INSTALLED_ADDONS = ["containerd", "etcd", "kubernetes"]
MANIFEST_ADDONS = ["calico", "ingressNginx", "localPathProvisioner", "metricsServer"]


def sha(data):
    return hashlib.sha256(data).hexdigest()


def script(binary, version, arch):
    """A tiny executable standing in for ``binary``: prints the real binary's version output."""
    text = VERSION_OUTPUT.get(binary, "%s v{v}" % binary).format(v=version, arch=arch)
    return ("#!/bin/sh\n# stand-in for %s %s linux/%s\ncat <<'EOF'\n%s\nEOF\n" % (binary, version, arch, text)).encode()


def make_tar(path, members, compress="gz"):
    """``members``: [(name, bytes or None for a directory, mode)] in the given order."""
    with tarfile.open(str(path), "w:" + compress, format=tarfile.GNU_FORMAT) as tar:
        for name, data, mode in members:
            info = tarfile.TarInfo(name)
            info.mode = mode
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = 1700000000
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def etcd_members(version, arch, skip=()):
    top = "etcd-v%s-linux-%s" % (version, arch)
    members = [(top + "/", None, 0o755),
               (top + "/Documentation/", None, 0o755),
               (top + "/Documentation/README.md", b"# etcd docs\n", 0o644),
               (top + "/README-etcdctl.md", b"# etcdctl\n", 0o644),
               (top + "/README-etcdutl.md", b"# etcdutl\n", 0o644),
               (top + "/README.md", b"# etcd\n", 0o644),
               (top + "/READMEv2-etcdctl.md", b"# etcdctl v2\n", 0o644)]
    members += [("%s/%s" % (top, n), script(n, version, arch), 0o755) for n in ETCD_BINARIES if n not in skip]
    return members


def containerd_members(version, arch, prefix="bin/"):
    members = [("bin/", None, 0o755)] if prefix else []
    return members + [(prefix + n, script(n, version, arch), 0o755) for n in CONTAINERD_BINARIES]


def cni_members(version, arch, skip=()):
    members = [("./", None, 0o755), ("./LICENSE", b"Apache License 2.0\n", 0o644),
               ("./README.md", b"# CNI plugins\n", 0o644)]
    return members + [("./" + n, script(n, version, arch), 0o755) for n in CNI_PLUGINS if n not in skip]


def generate(artifact, version, arch, target, addon):
    """Write the stand-in for one lock artifact at ``target`` (its upstream file name)."""
    name, kind = artifact["name"], artifact["kind"]
    if name == "etcd":
        make_tar(target, etcd_members(version, arch))
    elif name == "containerd":
        make_tar(target, containerd_members(version, arch))
    elif name == "cni-plugins":
        make_tar(target, cni_members(version, arch))
    elif name == "crictl":
        make_tar(target, [("crictl", script("crictl", version, arch), 0o755)])
    elif kind == "binary":
        target.write_bytes(script(name, version, arch))
        target.chmod(0o755)
    elif kind == "manifest":
        synthetic = os.path.join(MANIFESTS, "%s.manifest" % addon)
        if os.path.exists(synthetic):
            with open(synthetic, "rb") as handle:
                target.write_bytes(handle.read())
        else:
            target.write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n" % addon.encode())
    else:
        raise AssertionError("the example lock has an artifact this test cannot stand in for: %r" % artifact)


def mirror_path(upstream_root, url):
    """Where the stand-in for ``url`` lives: the upstream host and path under ``upstream_root``."""
    parts = urlsplit(url)
    return upstream_root.joinpath(parts.netloc, *parts.path.lstrip("/").split("/"))


def resolve(tmp, overlays=(), name="installer.lock.yaml", arches=ARCHES):
    """``mooring spec resolve`` (the CLI backend) for the example spec; returns the loaded lock."""
    out = tmp / name
    argv = ["spec", "resolve", EXAMPLE, "-o", str(out)]
    for arch in arches:
        argv += ["--arch", arch]
    for overlay in overlays:
        argv += ["--catalog-overlay", str(overlay)]
    assert cli_main(argv) == 0
    return load_lock(str(out))


def rooted(entries, root):
    """The install entries with every destination (and the binary each check runs) under ``root``."""
    out = copy.deepcopy(entries)
    for entry in out:
        for f in entry["files"]:
            f["dest"] = str(root) + f["dest"]
        for check in entry.get("check") or []:
            check["binary"] = str(root) + check["binary"]
            check["argv"] = [check["binary"]] + check["argv"][1:]
    return out


def run(argv):
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    return proc.returncode, proc.stdout, proc.stderr


def no_apt_for(asked):
    def apt_download(names, dest_dir):
        asked.append(sorted(names))  # host packages: not fetched here (no network); the request is checked
    return apt_download


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("real-catalog-shape")
    assert not re.search(r"[0-9]+\.[0-9]+\.[0-9]+", str(tmp)), "the temp dir must not look like a version"
    real = resolve(tmp, name="real.lock.yaml")
    catalog = load_catalog(None)
    upstream = tmp / "upstream"
    overlay_docs = []
    for addon, data in sorted(real["addons"].items()):
        version = data["version"]
        artifacts = []
        for art in data["artifacts"]:
            target = mirror_path(upstream, art["url"])
            target.parent.mkdir(parents=True, exist_ok=True)
            assert target.name == posixpath.basename(urlsplit(art["url"]).path)
            generate(art, layout.artifact_version(art, version), art["arch"], target, addon)
            artifacts.append({"name": art["name"], "kind": art["kind"], "arch": art["arch"], "dest": art["dest"],
                              "url": "file://%s" % target, "sha256": sha(target.read_bytes())})
        images = []
        for image in data["images"]:
            target = upstream / "images" / (re.sub(r"[^A-Za-z0-9._-]", "_", image["ref"]) + ".oci.tar")
            target.parent.mkdir(parents=True, exist_ok=True)
            make_tar(target, [("oci-layout", b'{"imageLayoutVersion": "1.0.0"}', 0o644),
                              ("index.json", ('{"schemaVersion": 2, "ref": "%s"}' % image["ref"]).encode(), 0o644)],
                     compress="")
            images.append({"ref": image["ref"], "archive": {"url": "file://%s" % target, "sha256": sha(target.read_bytes()),
                                                            "format": "oci-archive"}})
        # The catalog's version entry with artifacts and images made concrete; templates emptied.
        entry = copy.deepcopy(catalog.entry(addon, version))
        entry.update({"sha256": {}, "artifacts": artifacts, "images": images})
        overlay_docs.append({"name": addon, "artifacts": [], "images": [], "versions": [entry]})
    overlay = tmp / "overlay.yml"
    overlay.write_text(yaml.safe_dump({"addons": overlay_docs}, sort_keys=True))
    lock = resolve(tmp, [overlay], name="overlay.lock.yaml")
    asked = []
    # The add-ons whose artifacts hosts install (LAYOUT) with their images; the manifest-only add-ons
    # are bundled in test_manifest_addons_* (a multi-arch lock of them does not bundle, see there).
    result = b.build_bundle(lock, str(tmp / "bundle.tar"), key_path=str(tmp / "key" / "signing.key"),
                            cache_dir=str(tmp / "cache"), addons=INSTALLED_ADDONS, apt_download=no_apt_for(asked))
    pub = h.read_public_key(str(tmp / "key" / "signing.pub"))
    summary, changed = h.unpack_bundle(str(tmp / "bundle.tar"), str(tmp / "unpacked"), pub)
    assert changed
    return {"tmp": tmp, "real": real, "lock": lock, "overlay": overlay, "result": result, "summary": summary,
            "asked": asked, "upstream": upstream}


def real_binaries_and_archives(lock):
    return [(addon, a) for addon, data in sorted(lock["addons"].items()) for a in data["artifacts"]
            if a["kind"] in ("binary", "archive")]


# ------------------------------------------------------------------------------------ the lock
def test_real_lock_has_the_upstream_artifacts(world):
    real = world["real"]
    assert real["architectures"] == list(ARCHES)
    names = {(a["name"], a["kind"]) for _addon, a in real_binaries_and_archives(real)}
    assert names == {("etcd", "archive"), ("containerd", "archive"), ("runc", "binary"), ("cni-plugins", "archive"),
                     ("crictl", "archive"), ("kubeadm", "binary"), ("kubelet", "binary"), ("kubectl", "binary")}
    # Every one of them for every architecture of the lock, from its upstream release URL.
    for name, _kind in names:
        assert sorted(a["arch"] for _addon, a in real_binaries_and_archives(real) if a["name"] == name) == list(ARCHES)
    for _addon, a in real_binaries_and_archives(real):
        assert a["url"].startswith("https://") and len(a["sha256"]) == 64
    assert layout.boundary(real) == {"artifacts": [], "images": []}
    for arch in ARCHES:
        assert layout.boundary(real, arch) == {"artifacts": [], "images": []}


def test_overlay_keeps_the_real_lock_shape(world):
    real, lock = world["real"], world["lock"]
    assert sorted(lock["addons"]) == sorted(real["addons"])
    for addon, data in real["addons"].items():
        got = lock["addons"][addon]
        assert got["version"] == data["version"] and got["packages"] == data["packages"]
        assert [i["ref"] for i in got["images"]] == [i["ref"] for i in data["images"]]
        assert all(i["archive"]["url"].startswith("file://") for i in got["images"])

        def shape(artifacts):
            return sorted((a["name"], a["kind"], a["arch"], a["dest"], posixpath.basename(a["url"]))
                          for a in artifacts)
        assert shape(got["artifacts"]) == shape(data["artifacts"])
        for a in got["artifacts"]:
            assert a["url"].startswith("file://%s/" % world["upstream"]) and len(a["sha256"]) == 64
    assert layout.boundary(lock) == {"artifacts": [], "images": []}


# ------------------------------------------------------------------------------------ the bundle
def test_every_layout_artifact_gets_an_install_record(world):
    installs = world["summary"]["installs"]
    wanted = sorted((a["name"], a["arch"]) for _addon, a in real_binaries_and_archives(world["real"])
                    if a["name"] in layout.LAYOUT and layout.LAYOUT[a["name"]]["kind"] == a["kind"])
    assert len(wanted) == 8 * len(ARCHES)
    assert sorted((i["name"], i["arch"]) for i in installs) == wanted
    for entry in installs:
        assert os.path.isfile(entry["path"]) and entry["path"].startswith(world["summary"]["path"] + "/")
        assert posixpath.basename(entry["path"]) == posixpath.basename(entry["artifact"])
        assert entry["addon"] in ("etcd", "containerd", "kubernetes")
    # Installed by record, so not handed to roles as loose binaries or archives.
    recorded = {i["path"] for i in installs}
    assert not recorded & {x["path"] for x in world["summary"]["binaries"] + world["summary"]["archives"]}
    # The images come from their archives under the real refs.
    assert sorted(i["ref"] for i in world["summary"]["images"]) == sorted(
        i["ref"] for a in INSTALLED_ADDONS for i in world["real"]["addons"][a]["images"])
    assert sorted(world["summary"]["addons"]) == INSTALLED_ADDONS
    assert world["result"]["sandbox_image"] == "registry.k8s.io/pause:3.10.1"
    assert world["asked"] == [sorted(world["real"]["addons"]["kubernetes"]["packages"]["debian"])]


def dests(installs, name, arch="amd64"):
    (entry,) = hi.select(installs, names=[name], arch=arch)
    return entry, sorted(f["dest"] for f in entry["files"])


@pytest.mark.parametrize("arch", ARCHES)
def test_dests_are_the_upstream_host_layout(world, arch):
    installs = world["summary"]["installs"]
    assert dests(installs, "etcd", arch)[1] == ["/usr/local/bin/etcd", "/usr/local/bin/etcdctl", "/usr/local/bin/etcdutl"]
    assert dests(installs, "containerd", arch)[1] == ["/usr/local/bin/containerd", "/usr/local/bin/containerd-shim-runc-v2",
                                                      "/usr/local/bin/containerd-stress", "/usr/local/bin/ctr"]
    assert dests(installs, "runc", arch)[1] == ["/usr/local/sbin/runc"]
    cni, cni_dests = dests(installs, "cni-plugins", arch)
    assert cni_dests == ["/opt/cni/bin/%s" % p for p in CNI_PLUGINS]
    assert not {"/opt/cni/bin/LICENSE", "/opt/cni/bin/README.md"} & set(cni_dests)
    assert sorted(f["member"] for f in cni["files"]) == ["./%s" % p for p in CNI_PLUGINS]
    assert cni["check"] == []
    for name in ("crictl",) + KUBE_BINARIES:
        assert dests(installs, name, arch)[1] == ["/usr/local/bin/%s" % name]
    etcd = dests(installs, "etcd", arch)[0]
    top = "etcd-v%s-linux-%s/" % (etcd["version"], arch)
    assert sorted(f["member"] for f in etcd["files"]) == [top + n for n in ETCD_BINARIES]
    for entry in hi.select(installs, arch=arch):
        assert entry["arch"] == arch
        for f in entry["files"]:
            assert f["mode"] == "0755" and len(f["sha256"]) == 64 and f["size"] > 0
            if entry["kind"] == "binary":
                assert f["member"] is None


def test_versions_are_the_locks(world):
    real = world["real"]
    by_name = {(a["name"], a["arch"]): (addon, a) for addon, a in real_binaries_and_archives(real)}
    expected = {"etcd": real["addons"]["etcd"]["version"], "containerd": real["addons"]["containerd"]["version"],
                "kubeadm": real["addons"]["kubernetes"]["version"], "kubelet": real["addons"]["kubernetes"]["version"],
                "kubectl": real["addons"]["kubernetes"]["version"]}
    assert expected["etcd"].startswith("3.6.") and expected["containerd"].startswith("2.1.")
    for entry in world["summary"]["installs"]:
        addon, artifact = by_name[(entry["name"], entry["arch"])]
        # The version of the real upstream URL (runc, crictl and cni-plugins carry their own).
        assert entry["version"] == layout.artifact_version(artifact, real["addons"][addon]["version"])
        if entry["name"] in expected:
            assert entry["version"] == expected[entry["name"]]
        assert all(c["version"] == entry["version"] for c in entry["check"])
    runc = [a for (n, _arch), (_ad, a) in by_name.items() if n == "runc"][0]
    assert re.search(r"/v%s/runc\.(amd64|arm64)$" % re.escape(layout.artifact_version(runc)), runc["url"])
    versions = {e["name"]: e["version"] for e in hi.select(world["summary"]["installs"], arch="amd64")}
    assert versions["runc"] != versions["containerd"] and versions["crictl"] != versions["kubeadm"]
    assert re.match(r"^1\.\d+\.\d+$", versions["cni-plugins"])


# ------------------------------------------------------------------------------------ host install
@pytest.mark.parametrize("arch", ARCHES)
def test_install_on_a_fake_root(world, tmp_path, arch):
    entries = rooted(hi.select(world["summary"]["installs"], arch=arch), tmp_path)
    todo = hi.plan(entries)
    assert {s for _e, _f, s in todo} == {"content"}
    assert len(todo) == sum(len(e["files"]) for e in entries)
    written = hi.apply(todo)
    assert sorted(written) == sorted(f["dest"] for e in entries for f in e["files"])
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert files == sorted(["usr/local/bin/%s" % n for n in ETCD_BINARIES + CONTAINERD_BINARIES + ("crictl",) + KUBE_BINARIES]
                           + ["usr/local/sbin/runc"] + ["opt/cni/bin/%s" % p for p in CNI_PLUGINS])
    for entry in entries:
        for f in entry["files"]:
            assert os.stat(f["dest"]).st_mode & 0o7777 == 0o755
            assert digest.sha256_file(f["dest"])[0] == f["sha256"]
    etcdctl = (tmp_path / "usr/local/bin/etcdctl").read_bytes()
    assert b"linux/%s" % arch.encode() in etcdctl
    versions, problems = hi.check_versions(entries, run)
    assert problems == []
    lock = world["real"]["addons"]
    assert versions == {
        "etcd": lock["etcd"]["version"], "etcdctl": lock["etcd"]["version"], "etcdutl": lock["etcd"]["version"],
        "containerd": lock["containerd"]["version"], "ctr": lock["containerd"]["version"],
        "runc": layout.artifact_version([a for a in lock["containerd"]["artifacts"] if a["name"] == "runc"][0]),
        "crictl": layout.artifact_version([a for a in lock["kubernetes"]["artifacts"] if a["name"] == "crictl"][0]),
        "kubeadm": lock["kubernetes"]["version"], "kubelet": lock["kubernetes"]["version"],
        "kubectl": lock["kubernetes"]["version"]}
    # Idempotent: a second plan finds nothing to do.
    assert hi.plan(entries) == []
    # A mode-only drift is planned as such and repaired without rewriting content.
    (tmp_path / "usr/local/sbin/runc").chmod(0o700)
    todo = hi.plan(entries)
    assert [(e["name"], s) for e, _f, s in todo] == [("runc", "mode")]
    hi.apply(todo)
    assert hi.plan(entries) == []


# ------------------------------------------------------------------------------------ negative cases
def real_artifact(world, name, arch="amd64"):
    for addon, a in real_binaries_and_archives(world["real"]):
        if a["name"] == name and a["arch"] == arch:
            return addon, a
    raise AssertionError(name)


def standin(world, tmp_path, name, members, compress="gz"):
    """A release archive under the real artifact's upstream file name with the given members."""
    addon, art = real_artifact(world, name)
    path = tmp_path / posixpath.basename(art["url"])
    make_tar(path, members, compress)
    return art, str(path), world["real"]["addons"][addon]["version"]


def test_etcd_without_etcdctl_is_refused(world, tmp_path):
    art, path, version = standin(world, tmp_path, "etcd", etcd_members("3.6.14", "amd64", skip=("etcdctl",)))
    with pytest.raises(layout.LayoutError, match=r"etcd \(etcd-v3\.6\.\d+-linux-amd64\.tar\.gz\): no member matches "
                                                 r"\*/etcdctl"):
        layout.plan_install(art, path, addon_version=version)


def test_etcd_without_etcdutl_is_accepted(world, tmp_path):
    # Releases before 3.5 have no etcdutl: optional in LAYOUT.
    art, path, version = standin(world, tmp_path, "etcd", etcd_members("3.6.14", "amd64", skip=("etcdutl",)))
    record = layout.plan_install(art, path, addon_version=version)
    assert sorted(f["dest"] for f in record["files"]) == ["/usr/local/bin/etcd", "/usr/local/bin/etcdctl"]
    assert [c["binary"] for c in record["check"]] == ["/usr/local/bin/etcd", "/usr/local/bin/etcdctl"]


def test_containerd_binaries_at_the_top_level_are_refused(world, tmp_path):
    art, path, version = standin(world, tmp_path, "containerd", containerd_members("2.1.9", "amd64", prefix=""))
    with pytest.raises(layout.LayoutError, match=r"containerd \(containerd-2\.1\.\d+-linux-amd64\.tar\.gz\): member "
                                                 r"bin/containerd is missing.*members: containerd, "):
        layout.plan_install(art, path, addon_version=version)


def test_cni_plugins_without_bridge_are_refused(world, tmp_path):
    art, path, version = standin(world, tmp_path, "cni-plugins", cni_members("1.9.1", "amd64", skip=("bridge",)))
    assert path.endswith(".tgz")
    with pytest.raises(layout.LayoutError, match=r"cni-plugins \(cni-plugins-linux-amd64-v1\.9\.\d+\.tgz\): member "
                                                 r"bridge is missing"):
        layout.plan_install(art, path, addon_version=version)


def test_a_bare_binary_in_place_of_an_archive_is_refused(world, tmp_path):
    _addon, art = real_artifact(world, "crictl")
    path = tmp_path / posixpath.basename(art["url"])
    path.write_bytes(script("crictl", "1.35.0", "amd64"))
    with pytest.raises(layout.LayoutError, match=r"crictl \(crictl-v1\.35\.\d+-linux-amd64\.tar\.gz\): not a readable "
                                                 r"release archive"):
        layout.plan_install(art, str(path))


def test_tampered_member_is_refused_and_the_destination_untouched(world, tmp_path):
    installs = world["summary"]["installs"]
    (entry,) = rooted(hi.select(installs, names=["containerd"], arch="amd64"), tmp_path / "root")
    hi.apply(hi.plan([entry]))
    ctr = tmp_path / "root" / "usr/local/bin/ctr"
    before = ctr.read_bytes()
    ctr.write_bytes(b"#!/bin/sh\necho an older ctr\n")
    ctr.chmod(0o755)
    old = ctr.read_bytes()
    # The archive in the unpacked bundle is swapped for one whose bin/ctr differs from the signed record.
    tampered = tmp_path / posixpath.basename(entry["path"])
    members = [(n, (d + b"# tampered\n") if n == "bin/ctr" else d, m)
               for n, d, m in containerd_members(entry["version"], "amd64")]
    make_tar(tampered, members)
    entry = dict(entry, path=str(tampered))
    todo = hi.plan([entry])
    assert [(f["dest"], s) for _e, f, s in todo] == [(str(ctr), "content")]
    with pytest.raises(hi.InstallError, match=r"ctr: the bundle's content has sha256 [0-9a-f]{64}, the signed "
                                              r"manifest says %s; not installed" % todo[0][1]["sha256"]):
        hi.apply(todo)
    assert ctr.read_bytes() == old != before
    assert os.stat(str(ctr)).st_mode & 0o7777 == 0o755
    assert sorted(os.listdir(str(ctr.parent))) == sorted(CONTAINERD_BINARIES)  # no temporary file left


def test_tampered_member_missing_from_archive(world, tmp_path):
    (entry,) = rooted(hi.select(world["summary"]["installs"], names=["crictl"], arch="arm64"), tmp_path / "root")
    moved = tmp_path / posixpath.basename(entry["path"])
    make_tar(moved, [("bin/crictl", script("crictl", entry["version"], "arm64"), 0o755)])
    with pytest.raises(hi.InstallError, match=r"member crictl is not in the archive"):
        hi.apply(hi.plan([dict(entry, path=str(moved))]))
    assert not (tmp_path / "root" / "usr/local/bin/crictl").exists()


def test_a_binary_reporting_another_version_is_a_problem(world, tmp_path):
    addon, art = real_artifact(world, "runc")
    locked = layout.artifact_version(art)
    path = tmp_path / posixpath.basename(art["url"])
    path.write_bytes(script("runc", "1.2.0", "amd64"))
    data = path.read_bytes()
    record = layout.plan_install(art, str(path), sha(data), len(data), world["real"]["addons"][addon]["version"])
    record["path"] = str(path)
    entries = rooted([record], tmp_path / "root")
    hi.apply(hi.plan(entries))
    versions, problems = hi.check_versions(entries, run)
    assert versions == {"runc": "1.2.0"}
    assert problems == ["runc reports version 1.2.0, the lock says %s (runc version 1.2.0)" % locked]


def test_a_failing_binary_is_a_problem(world, tmp_path):
    (entry,) = rooted(hi.select(world["summary"]["installs"], names=["kubelet"], arch="amd64"), tmp_path)
    hi.apply(hi.plan([entry]))
    dest = entry["files"][0]["dest"]
    with open(dest, "w") as handle:
        handle.write("#!/bin/sh\necho 'kubelet: unknown flag' >&2\nexit 3\n")
    versions, problems = hi.check_versions([entry], run)
    assert versions == {"kubelet": None}
    assert problems == ["kubelet: `%s --version` exited 3: kubelet: unknown flag" % dest]
    # Its content no longer matches the record: the next plan reinstalls it.
    assert [s for _e, _f, s in hi.plan([entry])] == ["content"]


# ------------------------------------------------------------------------------------ manifest add-ons
def build_manifest_addons(world, lock, out):
    tmp = world["tmp"]
    b.build_bundle(lock, str(tmp / out), key_path=str(tmp / "key" / "signing.key"), cache_dir=str(tmp / "cache"),
                   addons=MANIFEST_ADDONS, apt_download=no_apt_for([]))
    summary, _changed = h.unpack_bundle(str(tmp / out), str(tmp / ("unpacked-" + out)),
                                        h.read_public_key(str(tmp / "key" / "signing.pub")))
    return summary


def test_manifest_addons_of_a_single_arch_lock_bundle(world, tmp_path):
    lock = resolve(tmp_path, [world["overlay"]], name="amd64.lock.yaml", arches=("amd64",))
    summary = build_manifest_addons(world, lock, "manifests-amd64.tar")
    manifests = {a: sorted(f for _d, _s, files in os.walk(summary["addons"][a]["dir"]) for f in files if f.endswith(".yaml"))
                 for a in MANIFEST_ADDONS}
    assert manifests == {"calico": ["calico.yaml"], "ingressNginx": ["ingress-nginx.yaml"],
                         "localPathProvisioner": ["local-path-storage.yaml"], "metricsServer": ["metrics-server.yaml"]}
    (calico,) = [os.path.join(d, f) for d, _s, files in os.walk(summary["addons"]["calico"]["dir"]) for f in files
                 if f == "calico.yaml"]
    with open(os.path.join(MANIFESTS, "calico.manifest"), "rb") as handle:
        assert digest.sha256_file(calico)[0] == sha(handle.read())
    assert sorted(i["ref"] for i in summary["images"]) == sorted(
        i["ref"] for a in MANIFEST_ADDONS for i in world["real"]["addons"][a]["images"])
    assert summary["installs"] == [] and summary["binaries"] == [] and summary["archives"] == []


def test_manifest_addons_of_a_multi_arch_lock_bundle(world):
    lock = world["lock"]
    assert lock["architectures"] == ["amd64", "arm64"]
    assert [a["arch"] for a in lock["addons"]["calico"]["artifacts"]] == ["amd64", "arm64"]
    summary = build_manifest_addons(world, lock, "manifests-multi.tar")
    for addon, dest in (("calico", "calico.yaml"), ("metricsServer", "metrics-server.yaml")):
        found = [f for _d, _s, files in os.walk(summary["addons"][addon]["dir"]) for f in files if f == dest]
        assert found, (addon, dest)
