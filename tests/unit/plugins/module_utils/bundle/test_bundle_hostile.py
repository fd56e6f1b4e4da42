# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile input to the bundle backend: locks whose names would leave the cache (refused before
anything is written), sources that are not regular files, archives that expand without bound or
carry special members, and signed bundle.json files of the wrong shape."""

import gzip
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import signal
import subprocess
import tarfile
import time

import pytest
from bundle_testlib import Measured, pax_header_bomb, sparse_header_bomb, zero_bomb_tgz
from bundle_testlib import make_lock as lock_of

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import assemble, debs, layout, package
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as b
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import fetch as fetching
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import format as fmt
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import host as h
from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import LockError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import lock_digest


def sha(data):
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def alarm():
    """Fail instead of hanging when something blocks (a FIFO opened for a blocking read)."""
    def expired(signum, frame):
        raise AssertionError("blocked for 5 s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def make_lock(tmp_path, **edit):
    tool = tmp_path / "src" / "tool"
    tool.parent.mkdir(exist_ok=True)
    tool.write_bytes(b"\x7fELF tool" * 100)
    addon = {"version": "1.0.0", "category": "cri",
             "artifacts": [{"name": "tool", "kind": "binary", "arch": "amd64", "url": "file://%s" % tool,
                            "sha256": sha(tool.read_bytes()), "size": None, "dest": "tool"}],
             "images": [{"ref": "localhost/t/hello:1.0", "digest": None, "archive": None}],
             "packages": {"debian": ["socat"]}}
    lock = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "InstallerLock", "metadata": {"name": "t"},
            "spec": {}, "hash": "abcdef0", "specDigest": "0" * 64, "architectures": ["amd64"],
            "addons": {"alpha": addon}}
    for path, value in edit.items():
        target = lock
        keys = path.split(".")
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target[key]
        target[keys[-1]] = value
    if "rename" in edit:
        lock.pop("rename")
        lock["addons"][edit["rename"]] = lock["addons"].pop("alpha")
    lock["digest"] = lock_digest(lock)  # an edited lock can always be given a matching digest
    return lock


TRAVERSALS = [
    ({"rename": "../../../../outside/ADDON"}, r"addons\.'\.\./\.\./\.\./\.\./outside/ADDON': must be a safe name"),
    ({"rename": "/tmp/mooring-unit-escape"}, r"addons\.'/tmp/mooring-unit-escape': must be a safe name"),
    ({"addons.alpha.artifacts.0.arch": "../../../ESCAPED"}, r"artifacts\[0\]\.arch: must be a safe name .*, not '\.\./\.\./\.\./ESCAPED'"),
    ({"addons.alpha.artifacts.0.dest": "../../../../x"}, r"artifacts\[0\]\.dest: must be a relative path of safe file names .*\('\.\.'\)"),
    ({"addons.alpha.artifacts.0.dest": "/tmp/mooring-unit-escape"}, r"artifacts\[0\]\.dest: .*must be a relative path"),
    ({"addons.alpha.artifacts.0.dest": None, "addons.alpha.artifacts.0.url": "file:///x/.."},
     r"artifacts\[0\]\.url: must be a URL ending in a safe file name"),
    ({"addons.alpha.artifacts.0.name": "../x"}, r"artifacts\[0\]\.name: must be a safe name .*, not '\.\./x'"),
    ({"addons.alpha.images.0.ref": "../../../outside/img:1"}, r"images\[0\]\.ref: must be an image reference"),
    ({"addons.alpha.packages": {"debian": ["-oDir::Cache=/tmp/x"]}}, r"packages\.debian\[0\]: must be a Debian package name"),
    ({"addons.alpha.packages": {"../x": []}}, r"packages\.'\.\./x': must be a safe name"),
    ({"addons.alpha.version": "../v"}, r"addons\.alpha\.version: must be a safe name .*, not '\.\./v'"),
    ({"architectures": ["../x"]}, r"architectures\[0\]: must be a safe name .*, not '\.\./x'"),
    ({"addons.alpha.artifacts.0.url": "ftp://x/tool"}, r"artifacts\[0\]\.url: must be a URL the bundle builder fetches \(https://.*, not 'ftp://x/tool'"),
    ({"addons": ["alpha"]}, r"addons: must be a mapping, not a list"),
    ({"addons.alpha.artifacts": "tool"}, r"addons\.alpha\.artifacts: must be a list, not a string"),
]


@pytest.mark.parametrize("edit,message", TRAVERSALS, ids=[str(i) for i in range(len(TRAVERSALS))])
def test_unsafe_lock_refused_before_anything_is_written(tmp_path, edit, message):
    lock = make_lock(tmp_path, **edit)
    before = sorted(os.listdir(str(tmp_path)))
    with pytest.raises(LockError, match=message):
        b.build_bundle(lock, str(tmp_path / "out" / "b.tar"), key_path=str(tmp_path / "k" / "s.key"),
                       cache_dir=str(tmp_path / "cache"))
    assert sorted(os.listdir(str(tmp_path))) == before  # no cache, no key, no output directory
    assert not (tmp_path / "outside").exists() and not os.path.exists("/tmp/mooring-unit-escape")


def test_artifact_relpath_checks_every_component():
    art = {"name": "t", "kind": "binary", "arch": "amd64", "url": "file:///x/t", "dest": "t"}
    assert package._artifact_relpath("alpha", art) == "alpha/bin/amd64/t"
    assert package._artifact_relpath("alpha", dict(art, dest="containerd_1.6.20~ds1-1_amd64.deb", kind="deb")) == \
        "alpha/debs/containerd_1.6.20~ds1-1_amd64.deb"
    for name, change in [("../x", {}), ("alpha", {"arch": "../x"}), ("alpha", {"dest": ".."}),
                         ("alpha", {"dest": "a/b"}), ("alpha", {"dest": None, "url": "file:///x/.."})]:
        with pytest.raises(b.BundleError):
            package._artifact_relpath(name, dict(art, **change))


def test_writes_stay_under_the_build_directory(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "link").symlink_to(str(tmp_path))  # a symlink out of the build directory
    with pytest.raises(b.BundleError, match="resolves outside"):
        package._under(str(tmp_path / "work"), "link/escaped")
    assert package._under(str(tmp_path / "work"), "alpha/bin/x") == str(tmp_path / "work" / "alpha" / "bin" / "x")


def test_output_and_cache_checked_before_building(tmp_path):
    lock = make_lock(tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    os.mkfifo(str(tmp_path / "pipe"))
    for output, message in [(tmp_path / "adir", "is a directory"), (tmp_path / "afile" / "b.tar", "is not a directory"),
                            (tmp_path / "pipe", "not a regular file")]:
        with pytest.raises(b.BundleError, match=message):
            b.build_bundle(lock, str(output), key_path=str(tmp_path / "k" / "s.key"), cache_dir=str(tmp_path / "c"))
    with pytest.raises(b.BundleError, match="cache directory .* is not a directory"):
        b.build_bundle(lock, str(tmp_path / "b.tar"), key_path=str(tmp_path / "k" / "s.key"),
                       cache_dir=str(tmp_path / "afile"))
    assert not (tmp_path / "k").exists() and not (tmp_path / "c").exists()


# ------------------------------------------------------------------------------------ fetching
def test_fetch_refuses_fifo_directory_and_device_without_blocking(tmp_path, alarm):
    os.mkfifo(str(tmp_path / "fifo"))
    (tmp_path / "dir").mkdir()
    for url, message in [("file://%s" % (tmp_path / "fifo"), "a special file"),
                         ("file://%s" % (tmp_path / "dir"), "a directory"),
                         ("file:///dev/zero", "a special file"),
                         ("file://relative/x", "needs an absolute path"),
                         ("gopher://x/y", "unsupported URL")]:
        with pytest.raises(b.BundleError, match=message):
            fetching.fetch(url, str(tmp_path / "out"), None, "t")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.part").exists()


def test_fetch_refuses_more_than_the_locked_size(tmp_path):
    (tmp_path / "src").write_bytes(b"x" * 5000)
    with pytest.raises(b.BundleError, match="has 5000 bytes; at most 100 are allowed"):
        fetching.fetch("file://%s" % (tmp_path / "src"), str(tmp_path / "out"), None, "t", expected_size=100)
    assert fetching.fetch("file://%s" % (tmp_path / "src"), str(tmp_path / "out"), None, "t", expected_size=5000)[1] == 5000


# ------------------------------------------------------------------------------------ archives
def test_zero_bomb_is_a_valid_archive(tmp_path):
    path = str(tmp_path / "bomb.tar.gz")
    zero_bomb_tgz(path, size=8 << 20)
    with tarfile.open(path, "r:gz") as tar:
        (only,) = tar.getmembers()
        assert only.size == 8 << 20 and tar.extractfile(only).read() == bytes(8 << 20)


def test_archive_declaring_1gib_refused_in_well_under_a_second(tmp_path):
    path = str(tmp_path / "containerd-1.0.0-linux-amd64.tar.gz")
    zero_bomb_tgz(path)
    assert os.path.getsize(path) < 2 << 20
    started = time.process_time()
    with pytest.raises(layout.LayoutError, match="members declare more than"):
        layout.plan_install({"name": "containerd", "kind": "archive", "url": "file:///x/containerd-1.0.0.tar.gz"},
                            path)
    assert time.process_time() - started < 2


PAX_BOMB_REFUSED = r"a pax extended header of 2147483648 bytes at offset 0 \(at most 1048576\); refusing the archive$"


@pytest.mark.parametrize("compression", ["tar", "gz", "xz", "bz2"])
def test_a_release_archive_with_a_2gib_pax_header_is_refused_from_the_header(tmp_path, compression):
    """tarfile reads a pax header whole before anything sees it (2 GiB: 51 s and 2.1 GiB in `bundle build`);
    layout's reader measures it first: refused at once, with the archive named."""
    path = pax_header_bomb(tmp_path / ("containerd-1.0.0-linux-amd64.tar." + compression), compression)
    with Measured() as took, pytest.raises(layout.LayoutError) as info:
        layout.plan_install({"name": "containerd", "kind": "archive", "url": "file:///x/c.tar.gz"}, path)
    assert took.seconds < 5 and took.rss < 100 * 1024  # KiB: under 100 MiB more
    assert re.match(r"containerd \(containerd-1\.0\.0-linux-amd64\.tar\.%s\): " % compression + PAX_BOMB_REFUSED,
                    str(info.value)), str(info.value)


def test_bundle_build_refuses_a_release_archive_with_a_2gib_pax_header_at_once(tmp_path):
    """The build fetches the archive (2 MiB) and plans its install from its headers: refused there."""
    source = pax_header_bomb(tmp_path / "containerd-1.0.0-linux-amd64.tar.gz", "gz")
    with open(source, "rb") as handle:
        digest = sha(handle.read())
    addon = {"version": "1.0.0", "category": "cri", "images": [], "packages": {},
             "artifacts": [{"name": "containerd", "kind": "archive", "arch": "amd64", "url": "file://" + source,
                            "sha256": digest, "size": None, "dest": os.path.basename(source)}]}
    with Measured() as took, pytest.raises(layout.LayoutError, match=r"^containerd \(containerd-1\.0\.0-linux-amd64"
                                           r"\.tar\.gz\): " + PAX_BOMB_REFUSED):
        b.build_bundle(lock_of({"containerd": addon}), str(tmp_path / "out.bundle"),
                       key_path=str(tmp_path / "k" / "s.key"), cache_dir=str(tmp_path / "cache"))
    assert took.seconds < 5 and took.rss < 100 * 1024
    assert not (tmp_path / "out.bundle").exists()


def test_a_cached_package_with_a_2gib_pax_header_is_refused_from_the_header(tmp_path):
    cache = package.PackageCache(str(tmp_path))
    os.makedirs(cache.root)
    meta = {"key": "a" * 64, "addon": "alpha"}
    sparse_header_bomb(cache.paths(meta["key"])[0])
    with Measured() as took, pytest.raises(b.BundleError, match=r"^cached package alpha \(.*\.tar\): cannot read its "
                                           r"package\.json \(a pax extended header of 2147483648 bytes at offset 0 "
                                           r"\(at most 1048576\)\); delete it"):
        package.package_record(cache, meta)
    assert took.seconds < 5 and took.rss < 100 * 1024


def tgz(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for name, kind, data, link in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mode = kind, link or "", 0o755
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data) if data else None)


GOOD = [("bin/containerd", tarfile.REGTYPE, b"x", None), ("bin/containerd-shim-runc-v2", tarfile.REGTYPE, b"x", None),
        ("bin/ctr", tarfile.REGTYPE, b"x", None)]


@pytest.mark.parametrize("extra,message", [
    (("/etc/x", tarfile.REGTYPE, b"x", None), "absolute name or a '..' component"),
    (("bin/../../x", tarfile.REGTYPE, b"x", None), "absolute name or a '..' component"),
    (("bin/fifo", tarfile.FIFOTYPE, None, None), "is a device or FIFO"),
    (("bin/tty", tarfile.CHRTYPE, None, None), "is a device or FIFO"),
    (("bin/l", tarfile.SYMTYPE, None, "../../etc/passwd"), "is a link to '../../etc/passwd', outside the archive"),
    (("bin/l", tarfile.SYMTYPE, None, "/etc/passwd"), "outside the archive"),
    (("bin/h", tarfile.LNKTYPE, None, "../x"), "outside the archive"),
])
def test_archive_special_members_refused(tmp_path, extra, message):
    path = str(tmp_path / "c.tar.gz")
    tgz(path, GOOD + [extra])
    with pytest.raises(layout.LayoutError, match=message):
        layout.plan_install({"name": "containerd", "kind": "archive", "url": "file:///x/c.tar.gz"}, path)


def test_archive_links_inside_and_directories_are_fine(tmp_path):
    path = str(tmp_path / "c.tar.gz")
    tgz(path, [("bin", tarfile.DIRTYPE, None, None)] + GOOD + [("bin/alias", tarfile.SYMTYPE, None, "ctr")])
    plan = layout.plan_install({"name": "containerd", "kind": "archive", "url": "file:///x/c.tar.gz"}, path)
    assert sorted(f["dest"] for f in plan["files"]) == ["/usr/local/bin/containerd",
                                                        "/usr/local/bin/containerd-shim-runc-v2", "/usr/local/bin/ctr"]


def _compress(suffix, data):
    if suffix == "gz":
        return gzip.compress(data)
    if suffix == "xz":
        return lzma.compress(data, preset=1)
    return subprocess.run(["zstd", "-c", "-3"], input=data, capture_output=True, check=True).stdout


def ar(name, data):
    """A Debian package's ar container holding one member."""
    return b"!<arch>\n" + ("%-16s%-12s%-6s%-6s%-8s%-10d`\n" % (name, 0, 0, 0, "100644", len(data))).encode() + \
        data + (b"\n" if len(data) & 1 else b"")


@pytest.mark.parametrize("suffix", ["gz", "xz", "zst"])
def test_deb_control_bounded(tmp_path, suffix):
    if suffix == "zst" and not shutil.which("zstd"):
        pytest.skip("no zstd on this machine")
    bomb = tmp_path / "bomb.deb"
    bomb.write_bytes(ar("control.tar." + suffix, _compress(suffix, bytes(32 << 20))))
    started = time.process_time()
    with pytest.raises(b.BundleError, match="more than 16777216 bytes decompressed"):
        debs.deb_control(str(bomb), "bomb.deb")
    assert time.process_time() - started < 2
    bad = tmp_path / "bad.deb"
    bad.write_bytes(b"!<arch>\n" + b"debian-binary   0           0     0     100644  xx        `\n")
    with pytest.raises(b.BundleError, match="bad ar member size"):
        debs.deb_control(str(bad))


def test_a_deb_whose_control_archive_has_a_pax_header_over_1mib_is_refused(tmp_path):
    control = tmp_path / "control.tar.gz"
    zero_bomb_tgz(control, "././@PaxHeader", 2 << 20, tarfile.XHDTYPE)  # 2 MiB: within the 16 MiB of a control archive
    deb = tmp_path / "pax.deb"
    deb.write_bytes(ar("control.tar.gz", control.read_bytes()))
    with pytest.raises(b.BundleError, match=r"^pax\.deb: control archive: a pax extended header of 2097152 bytes at "
                                            r"offset 0 \(at most 1048576\); refusing the package$"):
        debs.deb_control(str(deb), "pax.deb")


def test_cache_record_of_the_wrong_shape_is_rebuilt(tmp_path):
    cache = package.PackageCache(str(tmp_path))
    key = "a" * 64
    os.makedirs(cache.root)
    tar_path, meta_path = cache.paths(key)
    open(tar_path, "wb").close()
    for meta in ([], {"key": key, "size": "0"}, {"key": key, "size": 0, "file": "../../x.tar", "sha256": "0" * 64},
                 "x", {"key": "b" * 64}):
        with open(meta_path, "w") as handle:
            json.dump(meta, handle)
        assert cache.get(key) is None
    with pytest.raises(b.BundleError):
        cache.paths("../x")


# ------------------------------------------------------------------------------------ verify
@pytest.mark.parametrize("kind", ["missing", "directory", "fifo", "empty", "text", "truncated"])
def test_verify_broken_paths(tmp_path, kind, alarm):
    path = tmp_path / "b.tar"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(str(path))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("not a tar\n" * 100)
    elif kind == "truncated":
        signed_bundle(tmp_path, str(path))
        path.write_bytes(path.read_bytes()[:700])
    with pytest.raises(h.BundleError):
        h.verify_bundle(str(path), b"\0" * 32)
    assert h.bundle_id_of(str(path)) is None


def signed_bundle(tmp_path, path, mutate=None):
    """A bundle signed with a fresh key: one package with one file. Returns the raw public key."""
    key = ed25519.new_private_key()
    files = {"alpha/tool": b"tool" * 100}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    package = buf.getvalue()
    manifest = {"bundleFormat": 1, "kind": "MooringBundle", "hash": "abcdef0", "packages": {"alpha": {
        "key": "a" * 64, "version": "1.0.0", "file": "packages/alpha.tar", "size": len(package), "sha256": sha(package),
        "files": [{"path": n, "size": len(d), "sha256": sha(d)} for n, d in files.items()]}}}
    if mutate:
        mutate(manifest)
    data = fmt.manifest_bytes(manifest)
    with open(path, "wb") as out:
        assemble._write_member(out, "bundle.json", len(data), io.BytesIO(data))
        sig = ed25519.sign(key, data)
        assemble._write_member(out, "bundle.json.sig", len(sig), io.BytesIO(sig))
        assemble._write_member(out, "packages/alpha.tar", len(package), io.BytesIO(package))
        out.write(bytes(1024))
    return ed25519.public_raw(key)


def _pkg(m):
    return m["packages"]["alpha"]


@pytest.mark.parametrize("mutate,message", [
    (lambda m: _pkg(m).update(files="alpha/tool"), r"packages\.alpha\.files: must be a list"),
    (lambda m: _pkg(m)["files"][0].update(size="400"), r"files\[0\]\.size: must be a size .*, not '400'"),
    (lambda m: _pkg(m).pop("key"), r"packages\.alpha\.key: is missing"),
    (lambda m: _pkg(m)["files"][0].update(path="alpha/../../etc/x"), r"files\[0\]\.path: .*must be a safe member name"),
    (lambda m: _pkg(m).update(file="/etc/passwd"), r"packages\.alpha\.file: .*must be a safe member name"),
    (lambda m: m.update(packages=[]), r"packages: must be a mapping"),
    (lambda m: m["packages"].update({"a/b": m["packages"].pop("alpha")}), r"must be a safe add-on name, not 'a/b'"),
    (lambda m: _pkg(m).update(installs=[{"artifact": "alpha/tool", "name": "x", "kind": "binary",
                                         "files": [{"dest": "etc/x", "sha256": "0" * 64}]}]),
     r"installs\[0\]\.files\[0\]\.dest: must be a normalised absolute path, not 'etc/x'"),
])
def test_signed_manifest_of_the_wrong_shape_refused(tmp_path, mutate, message):
    path = str(tmp_path / "b.tar")
    pub = signed_bundle(tmp_path, path, mutate)
    with pytest.raises(h.BundleError, match=message):
        h.verify_bundle(path, pub)
    root = tmp_path / "root"
    with pytest.raises(h.BundleError, match=message):
        h.unpack_bundle(path, str(root), pub)
    assert not root.exists()


def test_signed_bundle_of_the_right_shape_verifies(tmp_path):
    path = str(tmp_path / "b.tar")
    pub = signed_bundle(tmp_path, path)
    assert h.verify_bundle(path, pub)["addons"]["alpha"]["version"] == "1.0.0"
    summary, changed = h.unpack_bundle(path, str(tmp_path / "root"), pub)
    assert changed and (tmp_path / "root" / summary["id"] / "alpha" / "tool").read_bytes() == b"tool" * 100


def test_extract_checks_member_size_before_copying(tmp_path):
    data = b"tool" * 100
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("alpha/tool")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    pkg = {"files": [{"path": "alpha/tool", "size": 10, "sha256": sha(data)}]}
    with pytest.raises(h.ChecksumError, match="size 400, the signed manifest says 10"):
        h._extract_package("alpha", pkg, buf, str(tmp_path))
    assert not (tmp_path / "alpha").exists()


def test_public_key_fifo_refused_without_blocking(tmp_path, alarm):
    os.mkfifo(str(tmp_path / "k.pub"))
    with pytest.raises(h.BundleError, match="not a regular file"):
        h.read_public_key(str(tmp_path / "k.pub"))
