# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the air-gap bundle FORMAT, shared by its writer (bundle.build) and reader (bundle.host).

A bundle is one uncompressed tar stream::

    bundle.json              manifest: spec hash, the lock, every package and every file in it
                             (path, size, sha256); canonical JSON, its SHA-256 is the bundle id
    bundle.json.sig          detached Ed25519 signature (64 raw bytes) of bundle.json
    packages/<addon>-<version>-<key12>.tar
                             one per add-on: binaries, image archives, debs (+ a flat apt repo
                             index), manifests and package.json

This module owns what both sides agree on: the kind and format version, the member names, the
rule for a member's name, the exact bytes of bundle.json, the manifest's shape
(:func:`check_manifest`) and the stage's errors. Standard library only: host modules import it.
"""

from __future__ import annotations

import json
import posixpath
import re
import tarfile

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field

BUNDLE_FORMAT = 1
BUNDLE_KIND = "MooringBundle"
MANIFEST_NAME = "bundle.json"
SIGNATURE_NAME = "bundle.json.sig"
MAX_MANIFEST = 64 << 20
_MODE = re.compile(r"^0?[0-7]{3,4}$")
_SAFE_NAME = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9_.+:@-]{1,128}$")  # common/fileio.py's SAFE_NAME
key_fingerprint = ed25519.key_fingerprint


class BundleError(MooringError):
    """A bundle could not be built, verified or unpacked."""


class ChecksumError(BundleError):
    """Content does not match its recorded sha256 (names the artifact, expected and actual)."""


class SignatureError(BundleError):
    """The bundle signature is missing or does not verify with the trusted public key."""


NOT_A_PUBLIC_KEY = ("public key: not a PEM Ed25519 public key (expected 'BEGIN PUBLIC KEY' with an Ed25519 "
                    "SubjectPublicKeyInfo); use the .pub file written next to the signing key")


def public_key_from_pem(text):
    """Raw 32-byte Ed25519 public key from PEM SubjectPublicKeyInfo text."""
    raw = ed25519.public_key_from_pem(text)
    if raw is None:
        raise SignatureError(NOT_A_PUBLIC_KEY)
    return raw


def check_member_name(name):
    norm = posixpath.normpath(name)
    if name.startswith("/") or norm.startswith("..") or norm != name or "\\" in name:
        raise BundleError("bundle member %r: unsafe path (absolute, '..' or not normalised); refusing the bundle"
                          % name)
    return norm


def manifest_bytes(manifest):
    """The exact bytes of bundle.json: sorted keys, one level of indentation, trailing newline."""
    return (json.dumps(manifest, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def tarinfo(name, size, mode=0o644):
    """The header of one member of a bundle or of a package in it: no time, owned by root."""
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = mode
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


class ManifestShape(Shape):
    """The shape of bundle.json (what bundle.host's summarize, unpacking and the host modules read), checked
    field by field (common/shape.py): ``WHERE: bundle.json: PATH: must be EXPECTED, not FOUND``."""

    error = BundleError

    def __init__(self, where):
        super().__init__("%s: %s" % (where, MANIFEST_NAME))
        self.bundle = where

    def text(self, value, path, optional=False, limit=MAX_MANIFEST, empty=True):
        """A string (empty allowed), bounded only by the manifest's own size."""
        return super().text(value, path, optional, limit, empty)

    def size(self, value, path, optional=False):
        return self.count(value, path, optional, "a size (a whole number >= 0)")

    def member(self, value, path, prefix):
        """A normalised relative member name under ``prefix``."""
        self.text(value, path)
        try:
            check_member_name(value)
        except BundleError:
            self.expected(path, "a safe member name (relative, normalised, no '..')", value, show_value=True)
        if not value.startswith(prefix) or value == prefix:
            self.expected(path, "a member under %s" % prefix, value, show_value=True)
        return value

    def absolute(self, value, path):
        self.text(value, path)
        if not value.startswith("/") or posixpath.normpath(value) != value or "\x00" in value or value == "/":
            self.expected(path, "a normalised absolute path", value, show_value=True)
        return value

    def install_files(self, files, path):
        for i, f in enumerate(self.listing(files, path)):
            where = field(path, i)
            self.mapping(f, where)
            self.text(f.get("member"), where + ".member", optional=True)
            self.absolute(f.get("dest"), where + ".dest")
            if f.get("mode") is not None:
                self.pattern(f["mode"], where + ".mode", _MODE, "an octal mode")
            self.sha256(f.get("sha256"), where + ".sha256")
            self.size(f.get("size"), where + ".size", optional=True)

    def install(self, item, path, files):
        self.mapping(item, path)
        if self.text(item.get("artifact"), path + ".artifact") not in files:
            self.fail(path + ".artifact", "%s is not a file of the package" % excerpt(item.get("artifact")))
        for key in ("name", "kind", "arch", "version"):
            self.text(item.get(key), field(path, key), optional=key in ("arch", "version"))
        self.install_files(item.get("files"), path + ".files")
        for i, check in enumerate(self.listing(item.get("check"), path + ".check", optional=True)):
            where = field(path + ".check", i)
            self.mapping(check, where)
            self.absolute(check.get("binary"), where + ".binary")
            for j, arg in enumerate(self.listing(check.get("argv"), where + ".argv")):
                self.text(arg, field(where + ".argv", j))
            self.text(check.get("version"), where + ".version", optional=True)

    def package_files(self, name, entries, path):
        """The package's files (each under ``<name>/``, none twice): the set of their paths."""
        files = set()
        for i, entry in enumerate(self.listing(entries, path)):
            where = field(path, i)
            self.mapping(entry, where)
            rel = self.member(entry.get("path"), where + ".path", name + "/")
            if rel in files:
                self.fail(where + ".path", "%s is listed twice" % excerpt(rel))
            files.add(rel)
            self.size(entry.get("size"), where + ".size")
            self.sha256(entry.get("sha256"), where + ".sha256")
        return files

    def package(self, name, pkg, path):
        self.keys(pkg, path, required=("key", "version", "file", "size", "sha256", "files"))
        self.sha256(pkg["key"], path + ".key")
        self.text(pkg["version"], path + ".version")
        self.member(pkg["file"], path + ".file", "packages/")
        self.size(pkg["size"], path + ".size")
        self.sha256(pkg["sha256"], path + ".sha256")
        files = self.package_files(name, pkg["files"], path + ".files")
        if pkg.get("repo") is not None:
            self.member(pkg["repo"], path + ".repo", name + "/")
        for key in ("packages", "trustedOnFirstUse"):
            for i, item in enumerate(self.listing(pkg.get(key), field(path, key), optional=True)):
                self.text(item, field(field(path, key), i))
        for i, image in enumerate(self.listing(pkg.get("images"), path + ".images", optional=True)):
            where = field(path + ".images", i)
            self.mapping(image, where)
            self.text(image.get("ref"), where + ".ref")
            if self.member(image.get("path"), where + ".path", name + "/") not in files:
                self.fail(where + ".path", "%s is not a file of the package" % excerpt(image.get("path")))
            self.text(image.get("format"), where + ".format", optional=True)
            self.text(image.get("digest"), where + ".digest", optional=True)
        for i, item in enumerate(self.listing(pkg.get("installs"), path + ".installs", optional=True)):
            self.install(item, field(path + ".installs", i), files)

    def manifest(self, manifest):
        if not isinstance(manifest, dict):
            raise BundleError("%s: %s is not a JSON object; refusing it" % (self.bundle, MANIFEST_NAME))
        fmt = manifest.get("bundleFormat")
        if manifest.get("kind") != BUNDLE_KIND or isinstance(fmt, bool) or fmt != BUNDLE_FORMAT:
            raise BundleError("%s: unsupported bundle (kind %s, format %s)"
                              % (self.bundle, excerpt(manifest.get("kind")), excerpt(fmt)))
        for key in ("hash", "specDigest", "lockDigest", "distro", "signer", "sandboxImage"):
            self.text(manifest.get(key), key, optional=True)
        if manifest.get("lock") is not None:
            self.mapping(manifest["lock"], "lock")
        packages = self.mapping(manifest.get("packages"), "packages")
        seen = {}
        for name in sorted(packages, key=str):
            self.pattern(name, field("packages", name), _SAFE_NAME, "a safe add-on name")
            path = field("packages", name)
            self.package(name, packages[name], path)
            member = packages[name]["file"]
            if member in seen or member in (MANIFEST_NAME, SIGNATURE_NAME):
                self.fail(path + ".file", "%s is also %s's" % (excerpt(member), seen.get(member, "the manifest")))
            seen[member] = name
        return manifest


def check_manifest(manifest, where="bundle"):
    """``manifest`` (parsed bundle.json) when it has the shape this module and the host modules read:
    kind and format, every package with a safe name, a sha256 key, a version, a member file under
    ``packages/`` (each its own), a size, a sha256 and a list of files under ``<add-on>/`` (path,
    size, sha256, none twice); images, installs and repo pointing at those files. Else one line."""
    return ManifestShape(where).manifest(manifest)
