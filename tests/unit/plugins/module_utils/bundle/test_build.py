# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bundle backend: real files, real tar streams, real Ed25519 keys, real http on 127.0.0.1."""

import functools
import hashlib
import http.server
import io
import json
import os
import shutil
import stat
import tarfile
import threading

import pytest
from bundle_testlib import Measured, make_deb, make_lock, sparse_header_bomb, tar_header
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as b
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import fetch as fetching
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import format as fmt
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import host as h
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import sign
from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import dump_lock, lock_digest
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main as cli_main

# RFC 8032 section 7.1, TEST 1 and TEST 2 (public key, message, signature).
RFC8032 = [
    ("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
]


def sha(data):
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("pub,msg,sig", RFC8032)
def test_ed25519_rfc8032_vectors(pub, msg, sig):
    pub, msg, sig = bytes.fromhex(pub), bytes.fromhex(msg), bytes.fromhex(sig)
    assert ed25519.verify(pub, msg, sig)
    assert not ed25519.verify(pub, msg + b"x", sig)
    bad = bytearray(sig)
    bad[10] ^= 1
    assert not ed25519.verify(pub, msg, bytes(bad))


# Public keys of small order (8A = identity): the identity itself (y = 1), the point of order 2 (y = -1), and
# one of order 4 (x = sqrt(-1), y = 0). With such a key, R = identity and s = 0 "sign" any message.
SMALL_ORDER_KEYS = [(1).to_bytes(32, "little"), (2 ** 255 - 20).to_bytes(32, "little"), bytes(32)]


@pytest.mark.parametrize("pub", SMALL_ORDER_KEYS, ids=["identity", "order-2", "order-4"])
def test_ed25519_small_order_public_key_verifies_nothing(pub):
    forged = (1).to_bytes(32, "little") + bytes(32)  # R = identity, s = 0
    for message in (b"", b"any manifest", b"x" * 1000):
        assert not ed25519.verify(pub, message, forged)
    pem = ("-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----\n"
           % __import__("base64").b64encode(bytes.fromhex("302a300506032b6570032100") + pub).decode())
    assert ed25519.public_key_from_pem(pem) is None


@settings(max_examples=25, deadline=None)
@given(message=st.binary(max_size=300), flip=st.integers(min_value=0, max_value=64 * 8 - 1))
def test_ed25519_matches_cryptography(message, flip):
    key = Ed25519PrivateKey.generate()
    pub = key.public_key().public_bytes_raw()
    sig = key.sign(message)
    assert ed25519.verify(pub, message, sig)
    bad = bytearray(sig)
    bad[flip // 8] ^= 1 << (flip % 8)
    assert not ed25519.verify(pub, message, bytes(bad))
    other = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    assert not ed25519.verify(other, message, sig)


def test_signing_key_created_once_0600(tmp_path):
    path = str(tmp_path / "keys" / "signing.key")
    _key, pem, created = sign.ensure_signing_key(path)
    assert created
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert (tmp_path / "keys" / "signing.pub").read_bytes() == pem
    _key2, pem2, created2 = sign.ensure_signing_key(path)
    assert not created2 and pem2 == pem
    assert len(fmt.public_key_from_pem(pem)) == 32
    with pytest.raises(b.SignatureError, match="not a PEM Ed25519 public key"):
        fmt.public_key_from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")


def test_fetch_file_and_mismatch(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"payload" * 1000)
    dest = str(tmp_path / "out.bin")
    digest, size = fetching.fetch("file://%s" % src, dest, sha(src.read_bytes()), "demo/tool")
    assert (digest, size) == (sha(src.read_bytes()), 7000)
    wrong = "0" * 64
    dest2 = str(tmp_path / "out2.bin")
    with pytest.raises(fmt.ChecksumError) as err:
        fetching.fetch("file://%s" % src, dest2, wrong, "demo/tool (amd64)")
    text = str(err.value)
    assert "demo/tool (amd64)" in text and wrong in text and sha(src.read_bytes()) in text
    assert not os.path.exists(dest2) and not os.path.exists(dest2 + ".part")
    with pytest.raises(b.BundleError, match="unsupported URL"):
        fetching.fetch("ftp://x/y", dest2, None, "demo/tool")


def test_fetch_http_loopback(tmp_path):
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "a.txt").write_bytes(b"over http")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "www"))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = "http://127.0.0.1:%d/a.txt" % server.server_address[1]
        dest = str(tmp_path / "a.txt")
        assert fetching.fetch(url, dest, sha(b"over http"), "http/a")[1] == 9
        with pytest.raises(fmt.ChecksumError):
            fetching.fetch(url, str(tmp_path / "b.txt"), sha(b"other"), "http/a")
    finally:
        server.shutdown()
        server.server_close()


def artifact(path, name, kind="binary", arch="amd64", digest=True):
    data = path.read_bytes()
    return {"name": name, "kind": kind, "arch": arch, "url": "file://%s" % path, "sha256": sha(data) if digest else None,
            "size": None, "dest": path.name}


@pytest.fixture
def sources(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "tool").write_bytes(b"\x7fELF tool v1" + os.urandom(200000))
    (src / "manifest.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    (src / "image.tar").write_bytes(b"not really an oci archive; the builder does not parse it" * 100)
    deb = make_deb(src, "mooring-test-pkg")
    addons = {
        "alpha": {"version": "1.0.0", "category": "cri", "artifacts": [artifact(src / "tool", "tool")],
                  "images": [{"ref": "localhost/test/hello:1.0", "digest": None,
                              "archive": {"url": "file://%s" % (src / "image.tar"),
                                          "sha256": sha((src / "image.tar").read_bytes()),
                                          "format": "oci-archive"}},
                             ],
                  "packages": {}},
        "beta": {"version": "2.0.0", "category": "cni",
                 "artifacts": [artifact(src / "manifest.yaml", "manifest", kind="manifest", arch="all"),
                               artifact(deb, "mooring-test-pkg", kind="deb")],
                 "images": [], "packages": {"debian": ["mooring-test-pkg"]}},
    }
    return src, addons


def no_apt(names, dest):
    raise AssertionError("apt-get download must not be needed: %s" % names)


def build(tmp_path, lock, out="out.bundle", **kw):
    kw.setdefault("apt_download", no_apt)
    return b.build_bundle(lock, str(tmp_path / out), key_path=str(tmp_path / "k" / "s.key"),
                          cache_dir=str(tmp_path / "cache"), **kw)


def test_build_verify_unpack(tmp_path, sources):
    src, addons = sources
    result = build(tmp_path, make_lock(addons))
    assert result["changed"] and all(not p["reused"] for p in result["packages"].values())
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    with tarfile.open(str(tmp_path / "out.bundle")) as tar:
        names = [m.name for m in tar]
    assert names[:2] == ["bundle.json", "bundle.json.sig"] and len(names) == 4
    summary = h.verify_bundle(str(tmp_path / "out.bundle"), pub)
    assert summary["id"] == result["id"] and summary["hash"] == "abcdef0"
    # An add-on's own bare binary (no upstream layout known) is an install record like every other binary.
    assert summary["addons"]["alpha"]["binaries"] == []
    (tool,) = summary["addons"]["alpha"]["installs"]
    assert tool["generic"] and tool["artifact"] == "alpha/bin/amd64/tool" and tool["check"] == []
    assert [(f["dest"], f["mode"], f["sha256"]) for f in tool["files"]] == [
        ("/usr/local/bin/tool", "0755", sha((src / "tool").read_bytes()))]
    root = tmp_path / "root"
    unpacked, changed = h.unpack_bundle(str(tmp_path / "out.bundle"), str(root), pub)
    assert changed
    base = root / result["id"]
    assert (base / "alpha" / "bin" / "amd64" / "tool").read_bytes() == (src / "tool").read_bytes()
    assert os.access(str(base / "alpha" / "bin" / "amd64" / "tool"), os.X_OK)
    assert (base / "alpha" / "images" / "localhost_test_hello_1.0.oci-archive.tar").read_bytes() == \
        (src / "image.tar").read_bytes()
    packages = (base / "beta" / "debs" / "Packages").read_text()
    assert "Package: mooring-test-pkg\n" in packages and "Filename: ./mooring-test-pkg_1.0-1_all.deb" in packages
    assert unpacked["addons"]["beta"]["repo"] == "beta/debs"
    assert [(x["name"], x["addon"], x["path"]) for x in unpacked["binaries"]] == [
        ("tool", "alpha", str(base / "alpha" / "bin" / "amd64" / "tool"))]
    manifest = json.loads((base / "bundle.json").read_text())
    assert manifest["lock"]["digest"] == make_lock(addons)["digest"]
    listed = {f["path"]: f for f in manifest["packages"]["alpha"]["files"]}
    assert listed["alpha/bin/amd64/tool"]["sha256"] == sha((src / "tool").read_bytes())
    # Second unpack of the same bundle: nothing to do.
    assert h.unpack_bundle(str(tmp_path / "out.bundle"), str(root), pub)[1] is False
    assert h.installed_bundle(str(root), result["id"], pub)["id"] == result["id"]


def test_named_package_without_deb_uses_apt_download(tmp_path, sources):
    src, addons = sources
    calls = []
    deb = make_deb(tmp_path, "mooring-test-pkg")

    def fake_apt(names, dest):  # stands in for `apt-get download` (no Debian archive in unit tests)
        calls.append(list(names))
        shutil.copy(str(deb), dest)

    addons["alpha"]["packages"] = {"debian": ["mooring-test-pkg"]}
    build(tmp_path, make_lock(addons), apt_download=fake_apt)
    assert calls == [["mooring-test-pkg"]]


def test_cache_reuse_and_one_addon_change(tmp_path, sources):
    src, addons = sources
    first = build(tmp_path, make_lock(addons))
    again = build(tmp_path, make_lock(addons))
    assert not again["changed"] and again["bytes_read"] == 0
    assert all(p["reused"] for p in again["packages"].values())
    assert again["id"] == first["id"]
    (src / "tool2").write_bytes(b"tool v2" * 1000)
    addons["alpha"]["artifacts"] = [artifact(src / "tool2", "tool")]
    addons["alpha"]["version"] = "1.0.1"
    third = build(tmp_path, make_lock(addons))
    assert third["changed"] and third["id"] != first["id"]
    assert third["packages"]["beta"]["reused"] and not third["packages"]["alpha"]["reused"]
    # Only alpha's new inputs went through Python (7000 bytes tool + image + apt index); beta was
    # neither fetched nor re-read.
    beta_size = third["packages"]["beta"]["size"]
    alpha_inputs = 7000 + len((src / "image.tar").read_bytes())
    # fetched+hashed once, read again when packing (plus package.json); beta not at all.
    assert alpha_inputs * 2 <= third["bytes_read"] < alpha_inputs * 2 + 8192
    assert third["bytes_copied"] >= beta_size


def test_bundle_is_reproducible(tmp_path, sources):
    _src, addons = sources
    first = build(tmp_path, make_lock(addons), out="one.bundle")
    shutil.rmtree(str(tmp_path / "cache"))
    second = build(tmp_path, make_lock(addons), out="two.bundle")
    assert not second["packages"]["alpha"]["reused"]
    assert first["id"] == second["id"]
    assert (tmp_path / "one.bundle").read_bytes() == (tmp_path / "two.bundle").read_bytes()


def test_checksum_mismatch_writes_nothing(tmp_path, sources):
    _src, addons = sources
    addons["beta"]["artifacts"][0]["sha256"] = "f" * 64
    with pytest.raises(fmt.ChecksumError) as err:
        build(tmp_path, make_lock(addons))
    assert "beta/manifest" in str(err.value) and "f" * 64 in str(err.value)
    assert not (tmp_path / "out.bundle").exists()
    cached = [n for n in os.listdir(str(tmp_path / "cache" / "packages")) if not n.startswith(".")]
    assert all(not n.startswith(b.plan_bundle(make_lock(addons), str(tmp_path / "cache"))[1][1]) for n in cached)
    assert not any(n.startswith(".build-") for n in os.listdir(str(tmp_path / "cache" / "packages")))


def flip(path, offset):
    with open(path, "r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([byte[0] ^ 0x01]))


@pytest.mark.parametrize("where", ["manifest", "signature", "package", "tail-of-package"])
def test_tampered_bundle_refused_and_nothing_unpacked(tmp_path, sources, where):
    _src, addons = sources
    build(tmp_path, make_lock(addons))
    path = str(tmp_path / "out.bundle")
    with tarfile.open(path) as tar:
        members = {m.name: m for m in tar}
    pkg = [m for n, m in members.items() if n.startswith("packages/")][0]
    offsets = {"manifest": members["bundle.json"].offset_data + 40,
               "signature": members["bundle.json.sig"].offset_data + 5,
               "package": pkg.offset_data + 700,
               "tail-of-package": pkg.offset_data + pkg.size - 3}
    flip(path, offsets[where])
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    with pytest.raises(b.BundleError):
        h.verify_bundle(path, pub)
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(b.BundleError):
        h.unpack_bundle(path, str(root), pub)
    assert os.listdir(str(root)) == []


def test_unsigned_extra_member_and_wrong_key_refused(tmp_path, sources):
    _src, addons = sources
    build(tmp_path, make_lock(addons))
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    good = str(tmp_path / "out.bundle")
    unsigned = str(tmp_path / "unsigned.bundle")
    extra = str(tmp_path / "extra.bundle")
    with tarfile.open(good) as src, tarfile.open(unsigned, "w") as u, tarfile.open(extra, "w") as e:
        for member in src:
            data = src.extractfile(member)
            if member.name != "bundle.json.sig":
                u.addfile(member, data)
            data = src.extractfile(member)
            e.addfile(member, data)
        evil = tarfile.TarInfo("packages/evil.tar")
        evil.size = 3
        e.addfile(evil, io.BytesIO(b"bad"))
    with pytest.raises(b.SignatureError, match="unsigned"):
        h.verify_bundle(unsigned, pub)
    with pytest.raises(b.BundleError, match="unexpected member 'packages/evil.tar'"):
        h.verify_bundle(extra, pub)
    other = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    with pytest.raises(b.SignatureError, match="does not verify"):
        h.verify_bundle(good, other)


def test_expected_id_mismatch_refused(tmp_path, sources):
    _src, addons = sources
    build(tmp_path, make_lock(addons))
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    with pytest.raises(b.BundleError, match="a different bundle"):
        h.unpack_bundle(str(tmp_path / "out.bundle"), str(tmp_path / "root"), pub, expected_id="1" * 64)


@pytest.mark.parametrize("ref,digest,fmt,expected", [
    ("registry.k8s.io/pause:3.10.1", None, "oci-archive",
     ["skopeo", "copy", "--quiet", "--retry-times", "2", "docker://registry.k8s.io/pause:3.10.1",
      "oci-archive:/d/p.tar:registry.k8s.io/pause:3.10.1"]),
    ("registry.k8s.io/pause:3.10.1", "sha256:" + "a" * 64, "docker-archive",
     ["skopeo", "copy", "--quiet", "--retry-times", "2", "docker://registry.k8s.io/pause@sha256:" + "a" * 64,
      "docker-archive:/d/p.tar:registry.k8s.io/pause:3.10.1"]),
    ("localhost:5000/x/y", "sha256:" + "b" * 64, "oci-archive",
     ["skopeo", "copy", "--quiet", "--retry-times", "2", "docker://localhost:5000/x/y@sha256:" + "b" * 64,
      "oci-archive:/d/p.tar:localhost:5000/x/y"]),
])
def test_skopeo_argv(ref, digest, fmt, expected):
    assert fetching.skopeo_copy_argv(ref, digest, "/d/p.tar", fmt) == expected


def test_skopeo_argv_bad_format():
    with pytest.raises(b.BundleError, match="format 'tar'"):
        fetching.skopeo_copy_argv("x/y:1", None, "/d", "tar")


def test_sandbox_image_and_unknown_addon():
    lock = make_lock({"kubernetes": {"version": "1.31.4", "images": [
        {"ref": "registry.k8s.io/kube-apiserver:v1.31.4"}, {"ref": "registry.k8s.io/pause:3.10.1"}]}})
    assert b.sandbox_image(lock) == "registry.k8s.io/pause:3.10.1"
    with pytest.raises(b.BundleError, match="nope not in the lock"):
        b.select_addons(lock, ["nope"])


def test_cli_build_and_verify(tmp_path, sources, capsys, monkeypatch):
    _src, addons = sources
    lock_path = tmp_path / "installer.lock.yaml"
    lock_path.write_text(dump_lock(make_lock(addons)))
    monkeypatch.setenv("MOORING_CACHE_DIR", str(tmp_path / "cc"))
    key = str(tmp_path / "cli" / "signing.key")
    out = str(tmp_path / "cli.bundle")
    assert cli_main(["bundle", "build", str(lock_path), "-o", out, "--key", key, "--addon", "beta", "-q"]) == 0
    assert "written" in capsys.readouterr().out
    assert cli_main(["bundle", "verify", out, "--pubkey", str(tmp_path / "cli" / "signing.pub"), "-q"]) == 0
    assert "OK" in capsys.readouterr().out
    flip(out, 2000)
    assert cli_main(["bundle", "verify", out, "--pubkey", str(tmp_path / "cli" / "signing.pub"), "-q"]) == 1
    assert "error:" in capsys.readouterr().err


def test_verify_signature_only_reads_head(tmp_path, sources):
    _src, addons = sources
    result = build(tmp_path, make_lock(addons))
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    path = str(tmp_path / "out.bundle")
    with tarfile.open(path) as tar:
        pkg = [m for m in tar if m.name.startswith("packages/")][0]
    flip(path, pkg.offset_data + 100)
    # The signature still verifies (the manifest is intact) but the full check refuses it.
    assert h.verify_signature(path, pub)["id"] == result["id"]
    with pytest.raises(fmt.ChecksumError):
        h.verify_bundle(path, pub)


def test_check_mode_predicts_without_writing(tmp_path, sources):
    _src, addons = sources
    assert build(tmp_path, make_lock(addons), check_mode=True)["changed"]
    assert not (tmp_path / "out.bundle").exists() and not (tmp_path / "cache").exists()
    assert "id" not in build(tmp_path, make_lock(addons), check_mode=True)
    real = build(tmp_path, make_lock(addons))
    checked = build(tmp_path, make_lock(addons), check_mode=True)
    assert not checked["changed"]
    # An unchanged bundle: the check run returns what the real run returned, so the play can go on with it.
    assert (checked["id"], checked["public_key_path"], checked["sandbox_image"]) == (
        real["id"], real["public_key_path"], real["sandbox_image"])
    lock = make_lock(addons)
    lock["hash"] = "fedcba9"  # same packages, different lock: bundle.json (and the id) would change
    lock["digest"] = lock_digest(lock)
    changed = build(tmp_path, lock, check_mode=True)
    assert changed["changed"] and "id" not in changed


def test_one_manifest_listed_per_architecture_is_stored_once_and_other_bytes_are_refused(tmp_path, sources):
    src, _addons = sources
    per_arch = [dict(artifact(src / "manifest.yaml", "cm", kind="manifest"), arch=arch) for arch in ("amd64", "arm64")]
    lock = make_lock({"cm": {"version": "1.0.0", "category": "other", "artifacts": per_arch, "images": [],
                             "packages": {}}})
    result = build(tmp_path, lock)
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    assert h.verify_bundle(str(tmp_path / "out.bundle"), pub)["id"] == result["id"]
    (src / "other.yaml").write_text("apiVersion: v1\nkind: Secret\n")
    other = dict(artifact(src / "other.yaml", "cm", kind="manifest"), arch="arm64", dest="manifest.yaml")
    lock = make_lock({"cm": {"version": "1.0.1", "category": "other", "artifacts": [per_arch[0], other], "images": [],
                             "packages": {}}})
    with pytest.raises(b.BundleError, match="would both be stored as cm/manifests/manifest.yaml"):
        build(tmp_path, lock, out="other.bundle")


@pytest.mark.parametrize("tail,why", [
    (os.urandom(3 * 1024 * 1024), "bytes after the end of the archive"),
    (b"\0" * 30 * 1024, "bytes after the end of the archive"),
    (b"x", "bytes after the end of the archive"),
], ids=["3MiB-random", "zeros-past-the-record", "one-byte"])
def test_bytes_after_the_end_of_the_archive_are_refused(tmp_path, sources, tail, why):
    _src, addons = sources
    build(tmp_path, make_lock(addons))
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    path = tmp_path / "out.bundle"
    h.verify_bundle(str(path), pub)  # as built: the end-of-archive blocks and the record's zero padding only
    with open(str(path), "ab") as handle:
        handle.write(tail)
    with pytest.raises(b.BundleError, match=why):
        h.verify_bundle(str(path), pub)
    with pytest.raises(b.BundleError, match=why):
        h.unpack_bundle(str(path), str(tmp_path / "root"), pub)
    assert not (tmp_path / "root").exists() or os.listdir(str(tmp_path / "root")) in ([], ["incoming"])


def test_data_hidden_in_the_end_of_archive_padding_is_refused(tmp_path, sources):
    _src, addons = sources
    build(tmp_path, make_lock(addons))
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    path = tmp_path / "out.bundle"
    data = bytearray(path.read_bytes())
    data[-100] = 0x41  # inside the zero padding after the end-of-archive blocks, same size
    path.write_bytes(bytes(data))
    with pytest.raises(b.BundleError, match="not zero after the end of the archive"):
        h.verify_bundle(str(path), pub)


def test_unpack_refuses_a_source_swapped_between_its_passes(tmp_path, sources, monkeypatch):
    """Bundles A and B signed by the same key: B put in A's place after pass 1 verified A must not land under A's id."""
    src, addons = sources
    first = build(tmp_path, make_lock(addons), out="a.bundle")
    (src / "tool").write_bytes(b"\x7fELF tool v2" + os.urandom(1000))
    addons["alpha"]["artifacts"] = [artifact(src / "tool", "tool")]
    second = build(tmp_path, make_lock(addons), out="b.bundle")
    assert first["id"] != second["id"]
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    target = tmp_path / "incoming.bundle"
    shutil.copyfile(str(tmp_path / "a.bundle"), str(target))
    passes = []
    original = h._verify_stream

    def swapping(path, *args, **kwargs):
        out = original(path, *args, **kwargs)
        passes.append(path)
        if len(passes) == 1:  # between the passes: someone replaces the file with bundle B
            shutil.copyfile(str(tmp_path / "b.bundle"), str(target))
        return out
    monkeypatch.setattr(h, "_verify_stream", swapping)
    root = tmp_path / "root"
    with pytest.raises(b.BundleError, match="changed between its verification and its unpacking"):
        h.unpack_bundle(str(target), str(root), pub, expected_id=first["id"])
    assert not (root / first["id"]).exists() and [p for p in os.listdir(str(root)) if p.startswith(".unpack")] == []


@pytest.mark.parametrize("kind,what", [(tarfile.XHDTYPE, "pax extended header"), (tarfile.XGLTYPE, "pax global header"),
                                       (tarfile.SOLARIS_XHDTYPE, "Solaris extended header"),
                                       (tarfile.GNUTYPE_LONGNAME, "GNU long name"),
                                       (tarfile.GNUTYPE_LONGLINK, "GNU long link name")],
                         ids=["pax", "pax-global", "solaris", "gnu-longname", "gnu-longlink"])
def test_a_header_bomb_is_refused_before_tarfile_reads_it(tmp_path, kind, what):
    """A 4 KiB-on-disk sparse file whose first header declares 2 GiB of pax data: measured, not read."""
    path = tmp_path / "bomb.bundle"
    sparse_header_bomb(path, 2 << 30, kind)
    key = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    with Measured() as took:
        for read in (h.verify_bundle, h.verify_signature):
            with pytest.raises(b.BundleError, match="a %s of 2147483648 bytes at offset 0 \\(at most 1048576\\); refusing it$"
                               % what):
                read(str(path), key)
        with pytest.raises(b.BundleError, match=what):
            h.unpack_bundle(str(path), str(tmp_path / "root"), key)
    assert took.seconds < 1.0
    assert took.rss < 100 * 1024  # KiB: under 100 MiB more


def test_a_header_bomb_in_a_package_is_refused_before_tarfile_reads_it(tmp_path):
    """The unpack pass reads each package's own tar: its headers are measured the same way."""
    path = tmp_path / "package.tar"
    sparse_header_bomb(path, 2 << 30)
    with Measured() as took, open(str(path), "rb") as package, \
            pytest.raises(b.BundleError, match="^package alpha: a pax extended header of 2147483648 bytes at offset 0 "
                                               "\\(at most 1048576\\); refusing the bundle$"):
        h._extract_package("alpha", {"files": []}, package, str(tmp_path / "out"))
    assert took.seconds < 1.0 and took.rss < 100 * 1024


def _pax_record(key, value):
    body = " %s=%s\n" % (key, value)
    length = len(body) + 1
    while len(str(length)) + len(body) != length:  # a pax record's length counts its own digits
        length = len(str(length)) + len(body)
    return ("%d%s" % (length, body)).encode()


def test_a_pax_header_at_the_limit_is_read_and_one_past_it_refused(tmp_path, sources):
    _src, addons = sources
    built = build(tmp_path, make_lock(addons))
    pub = h.read_public_key(str(tmp_path / "k" / "s.pub"))
    original = (tmp_path / "out.bundle").read_bytes()
    for length, refused in ((tarsafe.MAX_HEADER, False), (tarsafe.MAX_HEADER + 1, True)):
        record = _pax_record("comment", "x" * (length - len(" comment=\n") - len(str(length))))
        assert len(record) == length
        path = tmp_path / ("pax-%d.bundle" % length)
        path.write_bytes(tar_header("././@PaxHeader", length, tarfile.XHDTYPE) + record + b"\0" * (-length % 512) + original)
        if refused:
            with pytest.raises(b.BundleError, match="a pax extended header of %d bytes at offset 0" % length):
                h.verify_bundle(str(path), pub)
        else:  # a comment for the first member: read, and harmless
            assert h.verify_bundle(str(path), pub)["id"] == built["id"]


def test_the_lock_s_proxy_is_in_the_environment_only_while_the_build_runs(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://operator-proxy:8080")
    monkeypatch.delenv("HTTP_PROXY", raising=False)
    monkeypatch.delenv("http_proxy", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    lock = {"proxy": {"http": "http://10.89.0.11:8888", "noProxy": [".corp"]}}
    with fetching.proxy_environment(lock) as env:
        assert os.environ["HTTP_PROXY"] == os.environ["https_proxy"] == "http://10.89.0.11:8888"
        assert os.environ["NO_PROXY"] == "localhost,127.0.0.1,::1,.corp" == env["no_proxy"]
        # what the route guard checks: the proxy for a proxied URL, the URL itself for a bypassed one
        assert fetching.via_proxy("http://mirror.lab:8080/x.tar.gz") == "http://10.89.0.11:8888"
        assert fetching.via_proxy("https://files.corp/x") == "https://files.corp/x"
        assert fetching.via_proxy("http://127.0.0.1:9/x") == "http://127.0.0.1:9/x"
    assert os.environ["HTTPS_PROXY"] == "http://operator-proxy:8080"
    assert "HTTP_PROXY" not in os.environ and "no_proxy" not in os.environ
    with fetching.proxy_environment({}) as env:
        assert env == {} and os.environ["HTTPS_PROXY"] == "http://operator-proxy:8080"
