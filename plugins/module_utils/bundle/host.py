# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: air-gap bundles on the host: verify and unpack (standard library only).

A bundle (built on the controller by :mod:`bundle.build`) is one uncompressed tar stream::

    bundle.json              manifest: spec hash, the lock, every package and every file in it
                             (path, size, sha256); canonical JSON, its SHA-256 is the bundle id
    bundle.json.sig          detached Ed25519 signature (64 raw bytes) of bundle.json
    packages/<addon>-<version>-<key12>.tar
                             one per add-on: binaries, image archives, debs (+ a flat apt repo
                             index), manifests and package.json

This module is what host modules import: it needs nothing beyond Python's standard library
(the signature is checked by the plain-integer verifier in ``common/ed25519.py``), so a host
without python3-cryptography verifies the signature itself before anything is unpacked.
Everything streams in fixed-size chunks.

Input that is refused with one line: a bundle path that is missing, a directory, a FIFO or
device (never opened for a blocking read), not a tar stream, or truncated; a bundle.json whose
signature verifies but whose shape is not the one :func:`check_manifest` describes (wrong
types, missing keys, names with '..', files outside their package); a package member whose
declared size differs from the signed one (checked on its header, before its data is read); a
pax or GNU long-name header over 1 MiB, in the bundle or a package in it (every header is
measured before tarfile reads what it announces: ``common/tarsafe.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
import time

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio, tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import CHUNK, HashingReader, HashingWriter
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

BUNDLE_FORMAT = 1
BUNDLE_KIND = "MooringBundle"
MANIFEST_NAME = "bundle.json"
SIGNATURE_NAME = "bundle.json.sig"
MAX_MANIFEST = 64 << 20
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MODE = re.compile(r"^0?[0-7]{3,4}$")
_SAFE_NAME = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9_.+:@-]{1,128}$")  # common/fileio.py's SAFE_NAME
key_fingerprint = ed25519.key_fingerprint


class BundleError(MooringError):
    """A bundle could not be built, verified or unpacked."""


class ChecksumError(BundleError):
    """Content does not match its recorded sha256 (names the artifact, expected and actual)."""


class SignatureError(BundleError):
    """The bundle signature is missing or does not verify with the trusted public key."""


_NOT_A_PUBLIC_KEY = ("public key: not a PEM Ed25519 public key (expected 'BEGIN PUBLIC KEY' with an Ed25519 "
                     "SubjectPublicKeyInfo); use the .pub file written next to the signing key")


def public_key_from_pem(text):
    """Raw 32-byte Ed25519 public key from PEM SubjectPublicKeyInfo text."""
    raw = ed25519.public_key_from_pem(text)
    if raw is None:
        raise SignatureError(_NOT_A_PUBLIC_KEY)
    return raw


def _excerpt(value, limit=80):
    """``repr(value)`` cut to ``limit`` characters (yamlio.excerpt; this module stays standard library only)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _reason(exc):
    """The first line of an exception's text, at most 200 characters (its type when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _regular_file(path, what, error=BundleError):
    """Refuse, without opening it, a path that is missing or is not a regular file."""
    try:
        kind = fileio.file_kind(path)[1]
    except OSError as exc:
        raise error("%s %s: cannot read it (%s)" % (what, path, exc.strerror or exc)) from None
    if kind == "directory":
        raise error("%s %s: is a directory, not a file" % (what, path))
    if kind == "special":
        raise error("%s %s: not a regular file" % (what, path))


def open_bundle(path):
    """The bundle file at ``path`` opened for reading: a regular file, checked on the open descriptor
    (a FIFO or device is refused without a blocking read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise BundleError("%s: cannot read the bundle (%s)" % (path, exc.strerror or exc)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise BundleError("%s: is a directory, not a bundle file" % path)
        if not stat.S_ISREG(st.st_mode):
            raise BundleError("%s: not a regular file; a bundle is a tar file" % path)
        if st.st_size == 0:
            raise BundleError("%s: empty file, not a bundle" % path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_public_key(path):
    _regular_file(path, "public key", SignatureError)
    try:
        return ed25519.read_public_key(path)
    except OSError as exc:
        raise SignatureError("public key %s: cannot read it (%s)" % (path, exc.strerror)) from exc
    except ed25519.NotEd25519Error as exc:
        raise SignatureError(_NOT_A_PUBLIC_KEY) from exc


def _human(num):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if num < 1024 or unit == "GiB":
            return "%.1f %s" % (num, unit) if unit != "B" else "%d B" % num
        num /= 1024.0
    return "%d B" % num


class _Progress(object):
    """Throttled progress lines (at most one per ``interval`` seconds per step)."""

    def __init__(self, sink, interval=2.0):
        self.sink = sink
        self.interval = interval
        self._last = 0.0

    def say(self, text):
        if self.sink:
            self.sink(text)

    def tick(self, what, done, total):
        if not self.sink:
            return
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        if total:
            self.sink("%s: %s / %s (%d%%)" % (what, _human(done), _human(total), done * 100 // max(total, 1)))
        else:
            self.sink("%s: %s" % (what, _human(done)))


def _check_member_name(name):
    norm = posixpath.normpath(name)
    if name.startswith("/") or norm.startswith("..") or norm != name or "\\" in name:
        raise BundleError("bundle member %r: unsafe path (absolute, '..' or not normalised); refusing the bundle"
                          % name)
    return norm


class _Ticking(object):
    def __init__(self, handle, sink, what, total):
        self.handle, self.sink, self.what, self.total, self.done = handle, sink, what, total, 0

    def read(self, size=-1):
        data = self.handle.read(size)
        self.done += len(data)
        self.sink.tick("write %s" % self.what, self.done, self.total)
        return data


def bundle_id_of(path):
    """The id (sha256 of bundle.json) of the bundle at ``path``, None when absent or unreadable."""
    try:
        data, _signature = read_head(path)
    except (BundleError, OSError):
        return None
    return hashlib.sha256(data).hexdigest()


def read_head(path):
    """(bundle.json bytes, signature bytes) from the first two members, reading nothing else."""
    try:
        with open_bundle(path) as handle:
            tar = tarsafe.open_tar(fileobj=handle, mode="r|")  # noqa: SIM115 - closed with the handle's block
            members = []
            for member in tar:
                if not member.isfile() or member.size > MAX_MANIFEST:
                    break
                members.append((member.name, tar.extractfile(member).read()))
                if len(members) == 2:
                    break
    except tarsafe.HeaderBoundError as exc:
        raise BundleError("%s: %s; refusing it" % (path, exc)) from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BundleError("%s: not a readable bundle (%s)" % (path, _reason(exc))) from exc
    names = [m[0] for m in members]
    if names[:1] != [MANIFEST_NAME]:
        raise BundleError("%s: not a mooring bundle (first member must be %s)" % (path, MANIFEST_NAME))
    if names[1:2] != [SIGNATURE_NAME]:
        raise SignatureError("%s: unsigned bundle (no %s after %s); refusing it"
                             % (path, SIGNATURE_NAME, MANIFEST_NAME))
    return members[0][1], members[1][1]


def verify_manifest(data, signature, public_raw, where="bundle"):
    """Check the signature, then parse bundle.json. Returns the manifest."""
    if not ed25519.verify(public_raw, data, signature):
        raise SignatureError("%s: signature of %s does not verify with the trusted key %s; refusing it"
                             % (where, MANIFEST_NAME, key_fingerprint(public_raw)))
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise BundleError("%s: %s is not JSON: %s" % (where, MANIFEST_NAME, _reason(exc))) from None
    return check_manifest(manifest, where)


class _ManifestShape(object):
    """The shape of bundle.json (what :func:`summarize`, unpacking and the host modules read)."""

    def __init__(self, where):
        self.where = where

    def fail(self, path, problem):
        raise BundleError("%s: %s: %s: %s; refusing it" % (self.where, MANIFEST_NAME, path, problem))

    def mapping(self, value, path):
        if not isinstance(value, dict):
            self.fail(path, "must be a mapping, not %s" % type(value).__name__)
        return value

    def listing(self, value, path, optional=False):
        if value is None and optional:
            return []
        if not isinstance(value, list):
            self.fail(path, "must be a list, not %s" % type(value).__name__)
        return value

    def text(self, value, path, optional=False):
        if value is None and optional:
            return None
        if not isinstance(value, str):
            self.fail(path, "must be a string, not %s" % type(value).__name__)
        return value

    def size(self, value, path, optional=False):
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.fail(path, "%s is not a size (a whole number >= 0)" % _excerpt(value))
        return value

    def sha256(self, value, path):
        if not isinstance(value, str) or not _HEX64.match(value):
            self.fail(path, "%s is not a sha256 (64 lowercase hex digits)" % _excerpt(value))
        return value

    def member(self, value, path, prefix):
        """A normalised relative member name under ``prefix``."""
        self.text(value, path)
        try:
            _check_member_name(value)
        except BundleError:
            self.fail(path, "%s is not a safe member name (absolute, '..' or not normalised)" % _excerpt(value))
        if not value.startswith(prefix) or value == prefix:
            self.fail(path, "%s is outside %s" % (_excerpt(value), prefix))
        return value

    def absolute(self, value, path):
        self.text(value, path)
        if not value.startswith("/") or posixpath.normpath(value) != value or "\x00" in value or value == "/":
            self.fail(path, "%s is not a normalised absolute path" % _excerpt(value))
        return value

    def install(self, item, path, files):
        self.mapping(item, path)
        if self.text(item.get("artifact"), path + ".artifact") not in files:
            self.fail(path + ".artifact", "%s is not a file of the package" % _excerpt(item.get("artifact")))
        for key in ("name", "kind", "arch", "version"):
            self.text(item.get(key), "%s.%s" % (path, key), optional=key in ("arch", "version"))
        for i, f in enumerate(self.listing(item.get("files"), path + ".files")):
            where = "%s.files[%d]" % (path, i)
            self.mapping(f, where)
            self.text(f.get("member"), where + ".member", optional=True)
            self.absolute(f.get("dest"), where + ".dest")
            if f.get("mode") is not None and not (isinstance(f["mode"], str) and _MODE.match(f["mode"])):
                self.fail(where + ".mode", "%s is not an octal mode" % _excerpt(f["mode"]))
            self.sha256(f.get("sha256"), where + ".sha256")
            self.size(f.get("size"), where + ".size", optional=True)
        for i, check in enumerate(self.listing(item.get("check"), path + ".check", optional=True)):
            where = "%s.check[%d]" % (path, i)
            self.mapping(check, where)
            self.absolute(check.get("binary"), where + ".binary")
            for j, arg in enumerate(self.listing(check.get("argv"), where + ".argv")):
                self.text(arg, "%s.argv[%d]" % (where, j))
            self.text(check.get("version"), where + ".version", optional=True)

    def package(self, name, pkg, path):
        self.mapping(pkg, path)
        for key in ("key", "version", "file", "size", "sha256", "files"):
            if key not in pkg:
                self.fail(path, "%r is missing" % key)
        self.sha256(pkg["key"], path + ".key")
        self.text(pkg["version"], path + ".version")
        self.member(pkg["file"], path + ".file", "packages/")
        self.size(pkg["size"], path + ".size")
        self.sha256(pkg["sha256"], path + ".sha256")
        files = set()
        for i, entry in enumerate(self.listing(pkg["files"], path + ".files")):
            where = "%s.files[%d]" % (path, i)
            self.mapping(entry, where)
            rel = self.member(entry.get("path"), where + ".path", name + "/")
            if rel in files:
                self.fail(where + ".path", "%s is listed twice" % _excerpt(rel))
            files.add(rel)
            self.size(entry.get("size"), where + ".size")
            self.sha256(entry.get("sha256"), where + ".sha256")
        if pkg.get("repo") is not None:
            self.member(pkg["repo"], path + ".repo", name + "/")
        for i, package in enumerate(self.listing(pkg.get("packages"), path + ".packages", optional=True)):
            self.text(package, "%s.packages[%d]" % (path, i))
        for i, item in enumerate(self.listing(pkg.get("trustedOnFirstUse"), path + ".trustedOnFirstUse", optional=True)):
            self.text(item, "%s.trustedOnFirstUse[%d]" % (path, i))
        for i, image in enumerate(self.listing(pkg.get("images"), path + ".images", optional=True)):
            where = "%s.images[%d]" % (path, i)
            self.mapping(image, where)
            self.text(image.get("ref"), where + ".ref")
            if self.member(image.get("path"), where + ".path", name + "/") not in files:
                self.fail(where + ".path", "%s is not a file of the package" % _excerpt(image.get("path")))
            self.text(image.get("format"), where + ".format", optional=True)
            self.text(image.get("digest"), where + ".digest", optional=True)
        for i, item in enumerate(self.listing(pkg.get("installs"), path + ".installs", optional=True)):
            self.install(item, "%s.installs[%d]" % (path, i), files)

    def manifest(self, manifest):
        if not isinstance(manifest, dict):
            raise BundleError("%s: %s is not a JSON object; refusing it" % (self.where, MANIFEST_NAME))
        fmt = manifest.get("bundleFormat")
        if manifest.get("kind") != BUNDLE_KIND or isinstance(fmt, bool) or fmt != BUNDLE_FORMAT:
            raise BundleError("%s: unsupported bundle (kind %s, format %s)"
                              % (self.where, _excerpt(manifest.get("kind")), _excerpt(fmt)))
        for key in ("hash", "specDigest", "lockDigest", "distro", "signer", "sandboxImage"):
            self.text(manifest.get(key), key, optional=True)
        if manifest.get("lock") is not None:
            self.mapping(manifest["lock"], "lock")
        packages = self.mapping(manifest.get("packages"), "packages")
        seen = {}
        for name in sorted(packages, key=str):
            if not isinstance(name, str) or not _SAFE_NAME.match(name):
                self.fail("packages.%s" % _excerpt(name, 60), "%s is not a safe add-on name" % _excerpt(name))
            path = "packages.%s" % name
            self.package(name, packages[name], path)
            member = packages[name]["file"]
            if member in seen or member in (MANIFEST_NAME, SIGNATURE_NAME):
                self.fail(path + ".file", "%s is also %s's" % (_excerpt(member), seen.get(member, "the manifest")))
            seen[member] = name
        return manifest


def check_manifest(manifest, where="bundle"):
    """``manifest`` (parsed bundle.json) when it has the shape this module and the host modules read:
    kind and format, every package with a safe name, a sha256 key, a version, a member file under
    ``packages/`` (each its own), a size, a sha256 and a list of files under ``<add-on>/`` (path,
    size, sha256, none twice); images, installs and repo pointing at those files. Else one line."""
    return _ManifestShape(where).manifest(manifest)


def _check_end(handle, end, path):
    """After the last member: from the end-of-archive block at ``end`` to the end of the file there are only
    zeros - the two end blocks and the padding to the next full record - and no more; nothing else rides along
    with a signed bundle."""
    size = os.fstat(handle.fileno()).st_size
    allowed = -(-(end + 2 * tarfile.BLOCKSIZE) // tarfile.RECORDSIZE) * tarfile.RECORDSIZE
    if size > allowed:
        raise BundleError("%s: %d bytes after the end of the archive (at most %d of zero padding); refusing it"
                          % (path, size - end, allowed - end))
    if size < end + 2 * tarfile.BLOCKSIZE:
        raise BundleError("%s: cut off in the end-of-archive blocks (%d bytes from offset %d, 1024 expected); copy "
                          "it again" % (path, size - end, end))
    handle.seek(end)
    if handle.read(size - end).strip(b"\0"):
        raise BundleError("%s: not zero after the end of the archive (%d bytes from offset %d); refusing it"
                          % (path, size - end, end))


def _verify_stream(path, public_raw, on_package=None, progress=None):
    """One pass over the bundle: signature first, then every package's size and sha256.

    ``on_package(name, pkg, reader)`` may consume the member (e.g. to unpack it); the member is
    drained and its digest checked afterwards either way.
    """
    sink = _Progress(progress)
    try:
        with open_bundle(path) as handle:
            tar = tarsafe.open_tar(fileobj=handle, mode="r|")  # noqa: SIM115 - closed with the handle's block
            members = iter(tar)
            heads = []
            for _index in range(2):
                member = next(members, None)
                if member is None or not member.isfile() or member.size > MAX_MANIFEST:
                    break
                heads.append((member.name, tar.extractfile(member).read()))
            if [h[0] for h in heads[:1]] != [MANIFEST_NAME]:
                raise BundleError("%s: not a mooring bundle (first member must be %s)" % (path, MANIFEST_NAME))
            if [h[0] for h in heads[1:2]] != [SIGNATURE_NAME]:
                raise SignatureError("%s: unsigned bundle (no %s); refusing it" % (path, SIGNATURE_NAME))
            data, signature = heads[0][1], heads[1][1]
            manifest = verify_manifest(data, signature, public_raw, path)
            expected = {pkg["file"]: (name, pkg) for name, pkg in manifest["packages"].items()}
            seen = set()
            for member in members:
                if member.name not in expected or member.name in seen:
                    raise BundleError("%s: unexpected member %r (not listed in the signed %s); refusing it"
                                      % (path, member.name, MANIFEST_NAME))
                if not member.isfile():
                    raise BundleError("%s: member %r is not a regular file; refusing it" % (path, member.name))
                name, pkg = expected[member.name]
                if member.size != pkg["size"]:
                    raise ChecksumError("%s: package %s: size %d, the signed manifest says %d; refusing it"
                                        % (path, name, member.size, pkg["size"]))
                reader = HashingReader(tar.extractfile(member))
                ticking = _Ticking(reader, sink, "verify %s" % name, pkg["size"])
                if on_package is not None:
                    on_package(name, pkg, ticking)
                reader.drain()
                actual = reader.digest.hexdigest()
                if actual != pkg["sha256"]:
                    raise ChecksumError("%s: package %s (%s): sha256 mismatch: expected %s, got %s; refusing it"
                                        % (path, name, member.name, pkg["sha256"], actual))
                seen.add(member.name)
            missing = sorted(set(expected) - seen)
            if missing:
                raise BundleError("%s: incomplete bundle, missing %s; copy it again" % (path, ", ".join(missing)))
            _check_end(handle, tar.offset, path)
    except tarsafe.HeaderBoundError as exc:
        raise BundleError("%s: %s; refusing it" % (path, exc)) from None
    except (tarfile.TarError, EOFError) as exc:
        raise BundleError("%s: damaged bundle (%s); refusing it" % (path, _reason(exc))) from exc
    return manifest, data, signature


def verify_bundle(path, public_raw, progress=None):
    """Verify signature and every checksum without writing anything. Returns the summary."""
    manifest, data, _sig = _verify_stream(path, public_raw, progress=progress)
    return summarize(manifest, hashlib.sha256(data).hexdigest())


def verify_signature(path, public_raw):
    """Check only the signature of bundle.json (reads the first members). Returns the summary."""
    data, signature = read_head(path)
    manifest = verify_manifest(data, signature, public_raw, path)
    return summarize(manifest, hashlib.sha256(data).hexdigest())


def summarize(manifest, bundle_id, root=None):
    """What roles need: per add-on directory, apt repo, host packages, binaries and images."""
    base = posixpath.join(root, bundle_id) if root else None
    addons = {}
    for name, pkg in sorted(manifest["packages"].items()):
        binaries = []
        archives = []
        installed_by_record = {i.get("artifact") for i in pkg.get("installs") or []}
        for entry in pkg["files"]:
            parts = entry["path"].split("/")
            if entry["path"] in installed_by_record:
                continue  # installed where its upstream layout says, by bundle_install (layout.py)
            if len(parts) == 4 and parts[1] in ("bin", "archives"):
                (binaries if parts[1] == "bin" else archives).append(
                    {"name": parts[3], "arch": parts[2], "path": entry["path"]})
        addons[name] = {
            "version": pkg["version"],
            "key": pkg["key"],
            "repo": pkg.get("repo"),
            "packages": pkg.get("packages") or [],
            "binaries": binaries,
            "archives": archives,
            "images": pkg.get("images") or [],
            "installs": pkg.get("installs") or [],
        }
        if base:
            addons[name]["dir"] = posixpath.join(base, name)
    summary = {"id": bundle_id, "hash": manifest.get("hash"), "lock_digest": manifest.get("lockDigest"),
               "signer": manifest.get("signer"), "sandbox_image": manifest.get("sandboxImage"),
               "distro": manifest.get("distro"), "path": base, "addons": addons,
               "packages": sorted({p for a in addons.values() for p in a["packages"]})}
    if base:
        # Flat lists with absolute paths, so roles need no Jinja to find things.
        summary["repos"] = [posixpath.join(base, a["repo"]) for a in (addons[n] for n in sorted(addons)) if a["repo"]]
        # The add-ons' own bare binaries (no upstream layout known): install records like every other.
        summary["binaries"] = [dict(i, addon=n, path=posixpath.join(base, i["artifact"]))
                               for n, a in sorted(addons.items()) for i in a["installs"] if i.get("generic")]
        summary["images"] = [dict(i, addon=n, path=posixpath.join(base, i["path"]))
                             for n, a in sorted(addons.items()) for i in a["images"]]
        summary["archives"] = [dict(x, addon=n, path=posixpath.join(base, x["path"]))
                               for n, a in sorted(addons.items()) for x in a["archives"]]
        # How each upstream artifact lands on the host (layout.py), with the artifact's path here.
        summary["installs"] = [dict(i, addon=n, path=posixpath.join(base, i["artifact"]))
                               for n, a in sorted(addons.items()) for i in a["installs"]]
    return summary


def _extract_package(name, pkg, fileobj, dest):
    """Unpack one package (a tar) into ``dest``, checking every file against the manifest."""
    wanted = {f["path"]: f for f in pkg["files"]}
    done = set()
    try:
        with tarsafe.open_tar(fileobj=fileobj, mode="r|") as inner:
            for member in inner:
                if member.name not in wanted or member.name in done or not member.isfile():
                    raise BundleError("package %s: unexpected entry %r; refusing the bundle" % (name, member.name))
                entry = wanted[member.name]
                if member.size != entry["size"]:
                    raise ChecksumError("package %s: file %s: size %d, the signed manifest says %d; refusing the bundle"
                                        % (name, member.name, member.size, entry["size"]))
                target = os.path.join(dest, *member.name.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as out:
                    writer = HashingWriter(out)
                    shutil.copyfileobj(inner.extractfile(member), writer, CHUNK)
                os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)
                if writer.size != entry["size"] or writer.hexdigest() != entry["sha256"]:
                    raise ChecksumError("package %s: file %s: sha256 mismatch: expected %s, got %s; refusing the bundle"
                                        % (name, member.name, entry["sha256"], writer.hexdigest()))
                done.add(member.name)
    except tarsafe.HeaderBoundError as exc:
        raise BundleError("package %s: %s; refusing the bundle" % (name, exc)) from None
    missing = sorted(set(wanted) - done)
    if missing:
        raise BundleError("package %s: missing %s; refusing the bundle" % (name, ", ".join(missing)))


def installed_bundle(root, bundle_id, public_raw):
    """The summary of an already unpacked bundle, or None when it is absent or does not verify."""
    base = os.path.join(root, bundle_id)
    try:
        with open(os.path.join(base, MANIFEST_NAME), "rb") as handle:
            data = handle.read()
        with open(os.path.join(base, SIGNATURE_NAME), "rb") as handle:
            signature = handle.read()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != bundle_id:
        return None
    try:
        manifest = verify_manifest(data, signature, public_raw, base)
    except BundleError:
        return None
    return summarize(manifest, bundle_id, root)


def unpack_bundle(path, root, public_raw, expected_id=None, progress=None):
    """Verify everything (pass 1), then unpack (pass 2, re-checking every digest) atomically.

    Nothing is written under ``root`` until pass 1 has verified the signature and every
    package checksum; pass 2 unpacks into a temporary directory renamed into place only when
    every file matched the manifest pass 1 verified. Returns ``(summary, changed)``.
    """
    manifest, data, _sig = _verify_stream(path, public_raw, progress=progress)
    bundle_id = hashlib.sha256(data).hexdigest()
    if expected_id and bundle_id != expected_id:
        raise BundleError("%s: bundle id %s, expected %s (a different bundle was copied); refusing it"
                          % (path, bundle_id, expected_id))
    existing = installed_bundle(root, bundle_id, public_raw)
    if existing is not None:
        return existing, False
    os.makedirs(root, mode=0o755, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".unpack-%s-" % bundle_id[:12], dir=root)
    try:
        _manifest, again, _again_sig = _verify_stream(
            path, public_raw, on_package=lambda name, pkg, reader: _extract_package(name, pkg, reader, tmp),
            progress=progress)
        # Pass 2 checked every file against the manifest it read; that must be the one pass 1 verified, or
        # another signed bundle put in the file's place between the passes would land under this id.
        if again != data:
            raise BundleError("%s: the bundle changed between its verification and its unpacking (bundle id %s, "
                              "then %s); nothing was unpacked; refusing it"
                              % (path, bundle_id, hashlib.sha256(again).hexdigest()))
        for fname, payload in ((MANIFEST_NAME, data), (SIGNATURE_NAME, _sig)):
            with open(os.path.join(tmp, fname), "wb") as handle:
                handle.write(payload)
        os.chmod(tmp, 0o755)  # noqa: S103 - bundle content is public (no secrets), root-owned
        final = os.path.join(root, bundle_id)
        if os.path.exists(final):
            shutil.rmtree(final)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return summarize(manifest, bundle_id, root), True
