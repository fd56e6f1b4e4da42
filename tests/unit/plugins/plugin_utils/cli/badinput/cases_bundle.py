# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad artifacts for ``mooring bundle build`` and bad bundles for ``mooring bundle verify``
(ids ``bundle-``).

Build: a small valid lock (one add-on, ``file://`` artifacts under the case's tree) whose
artifact is hostile: a FIFO, a device, a directory, more bytes than the lock says, a release
archive that expands to 1 GiB or carries absolute, '..', device or escaping link members, a
.deb whose control archive is a bomb. These fail after the signing key and the cache directory
were made (the fetch comes after them), so those are the writes allowed; the output never is.

Verify: bundles made here with the project's own signing code (common/ed25519.py) and format
(bundle.json, bundle.json.sig, packages/...): broken files, broken tar streams, bad signatures,
and bundle.json files whose signature VERIFIES but whose shape is wrong. Verifying writes nothing.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import lzma
import os
import struct
import tarfile
import zlib

from .harness import Case

BUILD = ["bundle", "build", "{work}/lock.yaml", "-o", "{work}/out/bundle.tar", "--cache-dir", "{work}/cache",
         "--key", "{work}/k.key", "-q"]
BUILT = ("{work}/cache", "{work}/k.key", "{work}/k.pub")  # made before anything is fetched
VERIFY = ["bundle", "verify", "{work}/b.tar", "--pubkey", "{work}/k.pub", "-q"]


def sha(data):
    return hashlib.sha256(data).hexdigest()


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


# --------------------------------------------------------------------------------------------
# Build: a valid lock around one hostile artifact
# --------------------------------------------------------------------------------------------
def write_small_lock(work, artifacts=(), images=(), packages=None):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import dump_lock, lock_digest

    addon = {"version": "1.0.0", "requested": "1.0.0", "category": "cri", "options": {},
             "artifacts": list(artifacts), "images": list(images), "packages": packages or {}}
    lock = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "InstallerLock", "metadata": {"name": "t"},
            "spec": {}, "hash": "abcdef0", "specDigest": "0" * 64, "architectures": ["amd64"],
            "addons": {"alpha": addon}}
    lock["digest"] = lock_digest(lock)
    _write(os.path.join(work, "lock.yaml"), dump_lock(lock).encode("utf-8"))


def artifact(work, rel, name="tool", kind="binary", size=None, digest=True):
    path = os.path.join(work, rel)
    sha256 = None
    if digest and os.path.isfile(path):
        with open(path, "rb") as handle:
            sha256 = sha(handle.read())
    return {"name": name, "kind": kind, "arch": "amd64", "url": "file://" + path, "sha256": sha256, "size": size,
            "dest": os.path.basename(rel) or "x"}


def zero_bomb_tgz(member="bin/containerd", size=1 << 30):
    """A single gzip stream of a tar whose one member is ``size`` zero bytes, made without ever holding
    or compressing that much: after a full flush, deflate's output for 1 MiB of zeros is the same
    block every time, so it is computed once and repeated (the CRC is computed over the zeros)."""
    raw = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    info = tarfile.TarInfo(member)
    info.size, info.mode = size, 0o755
    header = info.tobuf(tarfile.GNU_FORMAT)
    chunk = bytes(1 << 20)
    parts = [raw.compress(header) + raw.flush(zlib.Z_FULL_FLUSH)]
    block = raw.compress(chunk) + raw.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(header)
    for _count in range(size // len(chunk)):
        crc = zlib.crc32(chunk, crc)
    parts.append(block * (size // len(chunk)))
    tail = bytes(2 * tarfile.BLOCKSIZE)
    crc = zlib.crc32(tail, crc)
    parts.append(raw.compress(tail) + raw.flush(zlib.Z_FINISH))
    total = len(header) + size + len(tail)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + b"".join(parts)
            + struct.pack("<II", crc & 0xffffffff, total & 0xffffffff))


def tgz(members):
    """A tar.gz of ``members``: (TarInfo fields as a dict, data bytes or None)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
        for fields, data in members:
            info = tarfile.TarInfo(fields["name"])
            for k, v in fields.items():
                setattr(info, k, v)
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


GOOD_MEMBERS = [({"name": "bin/containerd", "mode": 0o755}, b"#!/bin/sh\necho containerd 1.0.0\n"),
                ({"name": "bin/containerd-shim-runc-v2", "mode": 0o755}, b"#!/bin/sh\n"),
                ({"name": "bin/ctr", "mode": 0o755}, b"#!/bin/sh\n")]


def with_archive(data_fn):
    """A lock whose containerd release archive (``kind: archive``) is ``data_fn()``."""
    def setup(work):
        _write(os.path.join(work, "src", "containerd-1.0.0-linux-amd64.tar.gz"), data_fn())
        write_small_lock(work, [artifact(work, "src/containerd-1.0.0-linux-amd64.tar.gz", "containerd", "archive")])
    return setup


def with_deb(data_fn):
    def setup(work):
        _write(os.path.join(work, "src", "pkg_1.0_amd64.deb"), data_fn())
        write_small_lock(work, [artifact(work, "src/pkg_1.0_amd64.deb", "pkg", "deb")])
    return setup


def ar(members):
    """A Debian package's ar container of (name, data)."""
    out = [b"!<arch>\n"]
    for name, data, size in members:
        size = len(data) if size is None else size
        out.append(("%-16s%-12s%-6s%-6s%-8s%-10s`\n" % (name, "0", "0", "0", "100644", size)).encode("ascii"))
        out.append(data + (b"\n" if len(data) & 1 else b""))
    return b"".join(out)


def _source(kind):
    """A lock whose one binary artifact is a FIFO, a directory, missing, or /dev/zero."""
    def setup(work):
        path = os.path.join(work, "src", "tool")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dir":
            os.makedirs(path)
        art = artifact(work, "src/tool", digest=False)
        if kind == "dev-zero":
            art["url"] = "file:///dev/zero"
        write_small_lock(work, [art])
    return setup


def _image_fifo(work):
    os.makedirs(os.path.join(work, "src"))
    os.mkfifo(os.path.join(work, "src", "image.tar"))
    write_small_lock(work, images=[{"ref": "localhost/t/hello:1.0", "digest": None,
                                    "archive": {"url": "file://%s/src/image.tar" % work, "sha256": None,
                                                "format": "oci-archive"}}])


def _oversized(work):
    _write(os.path.join(work, "src", "tool"), b"x" * 5000)
    write_small_lock(work, [artifact(work, "src/tool", size=100)])


def _mismatch(work):
    _write(os.path.join(work, "src", "tool"), b"tool v1")
    art = artifact(work, "src/tool")
    art["sha256"] = "f" * 64
    write_small_lock(work, [art])


def _good(work):
    _write(os.path.join(work, "src", "tool"), b"\x7fELF tool" * 100)
    write_small_lock(work, [artifact(work, "src/tool")])


def _many_members():
    return tgz(GOOD_MEMBERS + [({"name": "doc/%05d" % i}, b"") for i in range(10001)])


def _truncated_tgz():
    data = tgz([({"name": "bin/containerd", "mode": 0o755}, os.urandom(200000))] + GOOD_MEMBERS[1:])
    return data[:len(data) // 2]


def _control_bomb(suffix):
    def make():
        zeros = bytes(32 << 20)
        packed = gzip.compress(zeros, 9) if suffix == "gz" else lzma.compress(zeros, preset=1)
        return ar([("debian-binary", b"2.0\n", None), ("control.tar." + suffix, packed, None)])
    return make


S = r"error: artifact alpha/tool \(amd64\): "
BUILD_CASES = [
    ("url-fifo", _source("fifo"), S + r".*/src/tool' is a special file, not a regular file"),
    ("url-directory", _source("dir"), S + r".*/src/tool' is a directory, not a regular file"),
    ("url-dev-zero", _source("dev-zero"), S + r"'/dev/zero' is a special file, not a regular file"),
    ("url-missing", _source("missing"), S + r"cannot read .*/src/tool': No such file or directory"),
    ("image-archive-fifo", _image_fifo, r"error: artifact image localhost/t/hello:1\.0: .* is a special file"),
    ("larger-than-locked-size", _oversized, S + r"'file://.*/src/tool' has 5000 bytes; at most 100 are allowed \(the lock's size for it"),
    ("sha256-mismatch", _mismatch,
     r"error: artifact alpha/tool \(amd64\) \('file://.*'\): sha256 mismatch: expected f{64}, got [0-9a-f]{64}"),
    ("archive-bomb-1gib", with_archive(zero_bomb_tgz),
     r"error: containerd \(containerd-1\.0\.0-linux-amd64\.tar\.gz\): members declare more than \d+ bytes in all"),
    ("archive-member-absolute", with_archive(lambda: tgz(GOOD_MEMBERS + [({"name": "/etc/cron.d/x"}, b"x")])),
     r"member '/etc/cron\.d/x' has an absolute name or a '\.\.' component; refusing the archive"),
    ("archive-member-dotdot", with_archive(lambda: tgz(GOOD_MEMBERS + [({"name": "bin/../../etc/x"}, b"x")])),
     r"member 'bin/\.\./\.\./etc/x' has an absolute name or a '\.\.' component"),
    ("archive-member-fifo", with_archive(lambda: tgz(GOOD_MEMBERS + [({"name": "bin/fifo", "type": tarfile.FIFOTYPE},
                                                                      None)])),
     r"member 'bin/fifo' is a device or FIFO; refusing the archive"),
    ("archive-member-device", with_archive(lambda: tgz([({"name": "bin/sda", "type": tarfile.BLKTYPE, "devmajor": 8},
                                                         None)] + GOOD_MEMBERS)),
     r"member 'bin/sda' is a device or FIFO"),
    ("archive-symlink-outside", with_archive(lambda: tgz(GOOD_MEMBERS + [(
        {"name": "bin/evil", "type": tarfile.SYMTYPE, "linkname": "../../../../etc/passwd"}, None)])),
     r"member 'bin/evil' is a link to '\.\./\.\./\.\./\.\./etc/passwd', outside the archive"),
    ("archive-symlink-absolute", with_archive(lambda: tgz(GOOD_MEMBERS + [(
        {"name": "bin/evil", "type": tarfile.SYMTYPE, "linkname": "/etc/shadow"}, None)])),
     r"member 'bin/evil' is a link to '/etc/shadow', outside the archive"),
    ("archive-hardlink-absolute", with_archive(lambda: tgz(GOOD_MEMBERS + [(
        {"name": "bin/hard", "type": tarfile.LNKTYPE, "linkname": "/etc/shadow"}, None)])),
     r"member 'bin/hard' is a link to '/etc/shadow', outside the archive"),
    ("archive-too-many-members", with_archive(_many_members), r"more than 10000 members; refusing the archive"),
    ("archive-not-a-tar", with_archive(lambda: gzip.compress(b"just some text, not a tar\n" * 50)),
     r"containerd \(containerd-1\.0\.0-linux-amd64\.tar\.gz\): not a readable release archive"),
    ("archive-random-bytes", with_archive(lambda: os.urandom(4096)), r"not a readable release archive"),
    ("archive-truncated", with_archive(_truncated_tgz), r"not a readable release archive"),
    ("archive-missing-member", with_archive(lambda: tgz(GOOD_MEMBERS[:1])),
     r"member bin/containerd-shim-runc-v2 is missing; this is not the upstream release layout"),
    ("deb-not-a-deb", with_deb(lambda: b"just text\n"), r"error: add-on alpha: alpha/debs/pkg_1\.0_amd64\.deb: not a Debian package \(no ar header\)"),
    ("deb-bad-member-size", with_deb(lambda: ar([("debian-binary", b"2.0\n", "-5")])),
     r"not a Debian package \(bad ar member size '-5'\)"),
    ("deb-control-gzip-bomb", with_deb(_control_bomb("gz")),
     r"not a readable Debian package \(more than 16777216 bytes decompressed\)"),
    ("deb-control-xz-bomb", with_deb(_control_bomb("xz")),
     r"not a readable Debian package \(more than 16777216 bytes decompressed\)"),
    ("deb-control-short-not-a-tar", with_deb(lambda: ar([("control.tar.gz", gzip.compress(b"x" * 100), 4000)])),
     r"add-on alpha: alpha/debs/pkg_1\.0_amd64\.deb: not a readable Debian package \(.*\)$"),
    ("deb-control-huge-declared", with_deb(lambda: ar([("control.tar.gz", b"", 1 << 30)])),
     r"control archive of 1073741824 bytes; the limit is 16777216"),
]

CASES = [Case("bundle-build-" + _id, BUILD, setup=_setup, writes=BUILT, stderr=_stderr)
         for _id, _setup, _stderr in BUILD_CASES]
CASES.append(Case("bundle-build-output-into-new-directory", BUILD[:4] + ["{work}/new/dir/bundle.tar"] + BUILD[5:],
                  setup=_good, exit=(0,), writes=BUILT + ("{work}/new",), stderr=r"^$"))


# --------------------------------------------------------------------------------------------
# Verify: bundles signed with the project's own code
# --------------------------------------------------------------------------------------------
def _key(work, name="k"):
    from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519

    key = ed25519.new_private_key()
    _write(os.path.join(work, name + ".pub"), ed25519.public_pem(key))
    return key


def _package():
    """A package tar (alpha/tool + alpha/package.json) and its file list."""
    files = {"alpha/tool": b"\x7fELF tool" * 50, "alpha/package.json": b"{}\n"}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size = len(files[name])
            tar.addfile(info, io.BytesIO(files[name]))
    listed = [{"path": n, "size": len(files[n]), "sha256": sha(files[n])} for n in sorted(files)]
    return buf.getvalue(), listed


PACKAGE_FILE = "packages/alpha-1.0.0-%s.tar" % ("a" * 12)


def manifest_for(key, package, listed):
    from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519

    return {
        "bundleFormat": 1, "kind": "MooringBundle", "hash": "abcdef0", "specDigest": "0" * 64,
        "lockDigest": "1" * 64, "distro": "debian", "signer": ed25519.key_fingerprint(ed25519.public_raw(key)),
        "sandboxImage": None, "lock": {"kind": "InstallerLock"},
        "packages": {"alpha": {
            "key": "a" * 64, "version": "1.0.0", "file": PACKAGE_FILE, "size": len(package), "sha256": sha(package),
            "images": [], "packages": [], "repo": None, "trustedOnFirstUse": [],
            "installs": [{"artifact": "alpha/tool", "name": "runc", "kind": "binary", "arch": "amd64",
                          "version": "1.0.0", "files": [{"member": None, "dest": "/usr/local/sbin/runc",
                                                         "mode": "0755", "sha256": listed[1]["sha256"],
                                                         "size": listed[1]["size"]}],
                          "check": [{"binary": "/usr/local/sbin/runc", "argv": ["/usr/local/sbin/runc", "--version"],
                                     "version": "1.0.0"}]}],
            "files": listed}},
    }


def member(name, data, kind=tarfile.REGTYPE):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, data


def after_head(rest):
    """Members: bundle.json and its signature, then ``rest(package bytes)``."""
    return lambda data, sig, package: [member("bundle.json", data), member("bundle.json.sig", sig)] + rest(package)


def signed(mutate=None, raw=None, members=None, sign_with=None, post=None):
    """A setup writing ``{work}/b.tar``: bundle.json (the valid manifest after ``mutate(manifest)``, or
    ``raw`` bytes) signed with the key whose .pub is ``{work}/k.pub``, its signature, and the package.
    ``members(data, sig, package) -> [(TarInfo, bytes)]`` replaces the member list; ``post(path)``
    edits the written file."""
    def setup(work):
        from ansible_collections.mooring.cluster.plugins.module_utils.bundle.format import manifest_bytes
        from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519

        key = _key(work)
        package, listed = _package()
        manifest = manifest_for(key, package, listed)
        if mutate is not None:
            mutate(manifest)
        data = raw if raw is not None else manifest_bytes(manifest)
        signer = _key(work, "other") if sign_with == "other" else key
        sig = ed25519.sign(signer, data)
        if members is None:
            items = [member("bundle.json", data), member("bundle.json.sig", sig), member(PACKAGE_FILE, package)]
        else:
            items = members(data, sig, package)
        path = os.path.join(work, "b.tar")
        with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
            for info, payload in items:
                tar.addfile(info, io.BytesIO(payload) if info.isfile() else None)
        if post is not None:
            post(path)
    return setup


def pkg_set(key, value):
    def mutate(m):
        m["packages"]["alpha"][key] = value
    return mutate


def file_set(index, key, value):
    def mutate(m):
        m["packages"]["alpha"]["files"][index][key] = value
    return mutate


def install_set(key, value, file_key=None):
    def mutate(m):
        item = m["packages"]["alpha"]["installs"][0]
        if file_key:
            item["files"][0][file_key] = value
        else:
            item[key] = value
    return mutate


def _truncate(keep):
    """Cut the file at ``keep({member name: TarInfo})`` bytes."""
    def post(path):
        with tarfile.open(path) as tar:
            offset = keep({m.name: m for m in tar})
        with open(path, "r+b") as handle:
            handle.truncate(offset)
    return post


def _flip(offset_of):
    def post(path):
        with tarfile.open(path) as tar:
            offset = offset_of({m.name: m for m in tar})
        with open(path, "r+b") as handle:
            handle.seek(offset)
            byte = handle.read(1)
            handle.seek(offset)
            handle.write(bytes([byte[0] ^ 1]))
    return post


def _gzip_it(path):
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:
        handle.write(gzip.compress(data))


def _rename_alpha(new):
    def mutate(m):
        m["packages"][new] = m["packages"].pop("alpha")
    return mutate


def _two_packages_one_file(m):
    m["packages"]["beta"] = json.loads(json.dumps(m["packages"]["alpha"]))
    for f in m["packages"]["beta"]["files"]:
        f["path"] = "beta/" + f["path"].split("/", 1)[1]
    m["packages"]["beta"]["installs"] = []


def _plain(work, content, pub=True):
    if pub:
        _key(work)
    if content is not None:
        _write(os.path.join(work, "b.tar"), content)


M = r"error: .*/b\.tar: bundle\.json: (packages\.alpha\.)?"
VERIFY_CASES = [
    # ---- the path
    ("missing", lambda w: _plain(w, None), r"error: .*/b\.tar: no such bundle file"),
    ("directory", lambda w: (_plain(w, None), os.makedirs(os.path.join(w, "b.tar"))),
     r"error: .*/b\.tar: is a directory, not the bundle file"),
    ("fifo", lambda w: (_plain(w, None), os.mkfifo(os.path.join(w, "b.tar"))),
     r"error: .*/b\.tar: not a regular file \(a FIFO, device or socket\); give the bundle file"),
    ("empty", lambda w: _plain(w, b""), r"error: .*/b\.tar: an empty file, not the bundle"),
    ("not-a-tar", lambda w: _plain(w, b"this is not a tar file\n" * 100), r"error: .*/b\.tar: damaged bundle"),
    ("random-bytes", lambda w: _plain(w, os.urandom(10240)), r"error: .*/b\.tar: (damaged|not a mooring) bundle"),
    ("gzipped", signed(post=_gzip_it), r"error: .*/b\.tar: damaged bundle"),
    ("truncated-in-package", signed(post=_truncate(lambda m: m[PACKAGE_FILE].offset_data + 100)),
     r"error: .*/b\.tar: damaged bundle"),
    ("truncated-in-manifest", signed(post=_truncate(lambda m: 700)),
     r"error: .*/b\.tar: (damaged bundle|not a mooring bundle)"),
    ("first-member-not-manifest", signed(members=lambda d, s, p: [member("README", b"hi"), member("bundle.json", d)]),
     r"not a mooring bundle \(first member must be bundle\.json\)"),
    ("unsigned", signed(members=lambda d, s, p: [member("bundle.json", d), member(PACKAGE_FILE, p)]),
     r"unsigned bundle \(no bundle\.json\.sig\); refusing it"),
    ("signature-of-other-key", signed(sign_with="other"), r"signature of bundle\.json does not verify with the trusted"),
    ("manifest-flipped", signed(post=_flip(lambda m: m["bundle.json"].offset_data + 30)),
     r"signature of bundle\.json does not verify"),
    ("package-flipped", signed(post=_flip(lambda m: m[PACKAGE_FILE].offset_data + 600)),
     r"package alpha \(packages/alpha-1\.0\.0-a{12}\.tar\): sha256 mismatch"),
    ("extra-member", signed(members=after_head(lambda p: [member(PACKAGE_FILE, p), member("packages/evil.tar", b"x")])),
     r"unexpected member 'packages/evil\.tar' \(not listed in the signed bundle\.json\)"),
    ("member-escape", signed(members=after_head(lambda p: [member("../../outside/x", b"x")])),
     r"unexpected member '\.\./\.\./outside/x'"),
    ("package-missing", signed(members=after_head(lambda p: [])),
     r"incomplete bundle, missing packages/alpha-1\.0\.0-a{12}\.tar"),
    ("package-twice", signed(members=after_head(lambda p: [member(PACKAGE_FILE, p), member(PACKAGE_FILE, p)])),
     r"unexpected member 'packages/alpha-1\.0\.0-a{12}\.tar'"),
    ("package-is-symlink", signed(members=after_head(lambda p: [member(PACKAGE_FILE, b"", tarfile.SYMTYPE)])),
     r"member 'packages/alpha-1\.0\.0-a{12}\.tar' is not a regular file"),
    ("package-size-differs", signed(members=after_head(lambda p: [member(PACKAGE_FILE, p + bytes(512))])),
     r"package alpha: size \d+, the signed manifest says \d+; refusing it"),
    # ---- the public key
    ("pubkey-missing", signed(post=lambda p: os.unlink(os.path.join(os.path.dirname(p), "k.pub"))),
     r"public key .*/k\.pub: cannot read it \(No such file or directory\)"),
    ("pubkey-directory", signed(post=lambda p: (os.unlink(os.path.join(os.path.dirname(p), "k.pub")),
                                                os.makedirs(os.path.join(os.path.dirname(p), "k.pub")))),
     r"public key .*/k\.pub: is a directory, not a file"),
    ("pubkey-fifo", signed(post=lambda p: (os.unlink(os.path.join(os.path.dirname(p), "k.pub")),
                                           os.mkfifo(os.path.join(os.path.dirname(p), "k.pub")))),
     r"public key .*/k\.pub: not a regular file"),
    ("pubkey-not-pem", signed(post=lambda p: _write(os.path.join(os.path.dirname(p), "k.pub"), b"\xff\xfe junk")),
     r"public key: not a PEM Ed25519 public key"),
    # ---- bundle.json whose signature verifies, with the wrong shape
    ("manifest-not-json", signed(raw=b"{not json"), r"error: .*/b\.tar: " + r"bundle\.json is not JSON"),
    ("manifest-not-utf8", signed(raw=b'{"kind": "caf\xe9"}'), r"bundle\.json is not JSON"),
    ("manifest-deep-nesting", signed(raw=b"[" * 200000 + b"]" * 200000), r"bundle\.json is not JSON"),
    ("manifest-list", signed(raw=b"[1, 2]\n"), r"bundle\.json is not a JSON object; refusing it"),
    ("manifest-string", signed(raw=b'"MooringBundle"\n'), r"bundle\.json is not a JSON object"),
    ("kind-wrong", signed(lambda m: m.update(kind="Other")), r"unsupported bundle \(kind 'Other', format 1\)"),
    ("format-true", signed(lambda m: m.update(bundleFormat=True)), r"unsupported bundle \(kind 'MooringBundle', format True\)"),
    ("format-string", signed(lambda m: m.update(bundleFormat="1")), r"unsupported bundle .*format '1'"),
    ("hash-list", signed(lambda m: m.update(hash=["x"])), M + r"hash: must be a string, not a list"),
    ("lock-list", signed(lambda m: m.update(lock=[])), M + r"lock: must be a mapping, not a list"),
    ("packages-list", signed(lambda m: m.update(packages=[])), M + r"packages: must be a mapping, not a list"),
    ("packages-missing", signed(lambda m: m.pop("packages")), M + r"packages: must be a mapping, not nothing \(null\)"),
    ("package-string", signed(lambda m: m["packages"].update(alpha="x")), M + r"packages\.alpha: must be a mapping"),
    ("package-no-files", signed(lambda m: m["packages"]["alpha"].pop("files")), M + r"packages\.alpha\.files: is missing"),
    ("package-no-sha256", signed(lambda m: m["packages"]["alpha"].pop("sha256")),
     M + r"packages\.alpha\.sha256: is missing"),
    ("files-string", signed(pkg_set("files", "alpha/tool")), M + r"packages\.alpha\.files: must be a list, not a string"),
    ("files-entry-string", signed(pkg_set("files", ["alpha/tool"])),
     M + r"packages\.alpha\.files\[0\]: must be a mapping, not a string"),
    ("file-size-string", signed(file_set(0, "size", "3")), M + r"packages\.alpha\.files\[0\]\.size: must be a size .*, not '3'"),
    ("file-size-negative", signed(file_set(0, "size", -3)), M + r"files\[0\]\.size: must be a size .*, not -3"),
    ("file-size-bool", signed(file_set(0, "size", False)), M + r"files\[0\]\.size: must be a size .*, not False"),
    ("file-sha256-short", signed(file_set(0, "sha256", "abc")), M + r"files\[0\]\.sha256: must be a sha256 .*, not 'abc'"),
    ("file-path-dotdot", signed(file_set(0, "path", "alpha/../../../etc/passwd")),
     M + r"files\[0\]\.path: must be a safe member name .*, not 'alpha/\.\./\.\./\.\./etc/passwd'"),
    ("file-path-absolute", signed(file_set(0, "path", "/etc/passwd")), M + r"files\[0\]\.path: must be a safe member name .*, not '/etc/passwd'"),
    ("file-path-other-package", signed(file_set(0, "path", "beta/tool")),
     M + r"files\[0\]\.path: must be a member under alpha/, not 'beta/tool'"),
    ("file-path-twice", signed(file_set(1, "path", "alpha/package.json")),
     M + r"files\[1\]\.path: 'alpha/package\.json' is listed twice"),
    ("file-path-int", signed(file_set(0, "path", 7)), M + r"files\[0\]\.path: must be a string, not a number"),
    ("package-size-string", signed(pkg_set("size", "1024")), M + r"packages\.alpha\.size: must be a size .*, not '1024'"),
    ("package-key-not-hex", signed(pkg_set("key", "../x")), M + r"packages\.alpha\.key: must be a sha256 .*, not '\.\./x'"),
    ("package-version-int", signed(pkg_set("version", 1)), M + r"packages\.alpha\.version: must be a string, not a number"),
    ("package-file-absolute", signed(pkg_set("file", "/etc/passwd")),
     M + r"packages\.alpha\.file: must be a safe member name .*, not '/etc/passwd'"),
    ("package-file-escape", signed(pkg_set("file", "packages/../../x.tar")),
     M + r"packages\.alpha\.file: must be a safe member name .*, not 'packages/\.\./\.\./x\.tar'"),
    ("package-file-outside-packages", signed(pkg_set("file", "other/x.tar")),
     M + r"packages\.alpha\.file: must be a member under packages/, not 'other/x\.tar'"),
    ("two-packages-one-file", signed(_two_packages_one_file), M + r"packages\.beta\.file: .* is also alpha's"),
    ("addon-name-slash", signed(_rename_alpha("al/pha")), M + r"packages\.'al/pha': must be a safe add-on name, not 'al/pha'"),
    ("addon-name-dotdot", signed(_rename_alpha("..")), M + r"packages\.'\.\.': must be a safe add-on name, not '\.\.'"),
    ("repo-escape", signed(pkg_set("repo", "alpha/../../etc/apt")), M + r"packages\.alpha\.repo: .*must be a safe member"),
    ("packages-names-string", signed(pkg_set("packages", "socat")), M + r"packages\.alpha\.packages: must be a list"),
    ("images-path-not-a-file", signed(pkg_set("images", [{"ref": "x:1", "path": "alpha/images/x.tar",
                                                          "format": "oci-archive"}])),
     M + r"images\[0\]\.path: 'alpha/images/x\.tar' is not a file of the package"),
    ("installs-mapping", signed(pkg_set("installs", {"a": 1})), M + r"packages\.alpha\.installs: must be a list"),
    ("install-artifact-unknown", signed(install_set("artifact", "alpha/nope")),
     M + r"installs\[0\]\.artifact: 'alpha/nope' is not a file of the package"),
    ("install-dest-relative", signed(install_set(None, "usr/local/sbin/runc", "dest")),
     M + r"installs\[0\]\.files\[0\]\.dest: must be a normalised absolute path, not 'usr/local/sbin/runc'"),
    ("install-dest-dotdot", signed(install_set(None, "/usr/local/sbin/../../../etc/shadow", "dest")),
     M + r"installs\[0\]\.files\[0\]\.dest: must be a normalised absolute path, not .*"),
    ("install-mode-word", signed(install_set(None, "rwxr-xr-x", "mode")),
     M + r"installs\[0\]\.files\[0\]\.mode: must be an octal mode, not 'rwxr-xr-x'"),
    ("install-check-argv-string", signed(lambda m: m["packages"]["alpha"]["installs"][0]["check"][0].update(argv="x")),
     M + r"installs\[0\]\.check\[0\]\.argv: must be a list, not a string"),
]

CASES += [Case("bundle-verify-" + _id, VERIFY, setup=_setup, stderr=_stderr) for _id, _setup, _stderr in VERIFY_CASES]
