# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: air-gap bundles on the host: verify and unpack (standard library only).

A bundle is built on the controller by :mod:`bundle.build`; its format (one tar stream: bundle.json,
its signature, one package per add-on) and the manifest's shape are :mod:`bundle.format`.

This module is what host modules import: it needs nothing beyond Python's standard library
(the signature is checked by the plain-integer verifier in ``common/ed25519.py``), so a host
without python3-cryptography verifies the signature itself before anything is unpacked.
Everything streams in fixed-size chunks.

Input that is refused with one line: a bundle path that is missing, a directory, a FIFO or
device (never opened for a blocking read), not a tar stream, or truncated; a bundle.json whose
signature verifies but whose shape is not the one ``bundle.format.check_manifest`` describes (wrong
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
import shutil
import tarfile
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.format import (
    MANIFEST_NAME,
    MAX_MANIFEST,
    SIGNATURE_NAME,
    BundleError,
    ChecksumError,
    SignatureError,
    check_manifest,
    key_fingerprint,
    public_key_from_pem,
)
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.progress import Progress, Ticking
from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio, tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import CHUNK, HashingReader, HashingWriter
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import reason

MAX_PUBLIC_KEY = 64 << 10  # a PEM public key is a few hundred bytes


def open_bundle(path):
    """The bundle file at ``path`` opened for reading: a regular file, checked on the open descriptor
    (fileio.open_input: a FIFO or device is refused without a blocking read)."""
    return fileio.open_input(path, "bundle", BundleError, allow_empty=False)[0]


def read_public_key(path):
    """The raw Ed25519 public key in the PEM file at ``path`` (a regular file); else SignatureError."""
    try:
        data = fileio.read_regular(path, MAX_PUBLIC_KEY, "public key")
    except fileio.NotRegularFileError as exc:
        raise SignatureError(str(exc)) from None
    except OSError as exc:
        raise SignatureError("public key %s: cannot read it (%s)" % (path, exc.strerror or exc)) from None
    return public_key_from_pem(data)


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
        raise BundleError("%s: not a readable bundle (%s)" % (path, reason(exc))) from exc
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
        raise BundleError("%s: %s is not JSON: %s" % (where, MANIFEST_NAME, reason(exc))) from None
    return check_manifest(manifest, where)


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
    sink = Progress(progress)
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
                ticking = Ticking(reader, sink, "verify %s" % name, pkg["size"])
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
        raise BundleError("%s: damaged bundle (%s); refusing it" % (path, reason(exc))) from exc
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
