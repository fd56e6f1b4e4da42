# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: validating a solution archive before anything leaves the controller.

:func:`validate_archive` reads an archive through :func:`solutions.archive.open_archive` and checks
its layout, manifest (:mod:`solutions.manifest`), checksums and signature, every image's OCI
layout and blobs (:mod:`solutions.oci`), and the operator's manifests
(:mod:`solutions.operatordeploy`). Every problem is reported with its path inside the archive;
nothing is extracted before validation succeeded.
"""


from __future__ import annotations

import base64
import binascii

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import HashingWriter
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, shown
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import metalk8s, trust
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.archive import open_archive
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.checksums import file_sha256, parse_sums
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.keys import load_public_key
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    HAS_YAML,
    MANIFEST,
    MAX_ENTRIES,
    MAX_MANIFEST_BYTES,
    MAX_PROBLEMS_SHOWN,
    MAX_SUMS_BYTES,
    SIGNATURE,
    SUMS,
    TOP_LEVEL,
    YAML_IMPORT_ERROR,
    SolutionError,
    link_escapes,
    require,
    safe_path,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.manifest import check_listing, check_manifest_data, normalised
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.oci import ImageChecks
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.operatordeploy import OperatorChecks
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.skopeodir import image_dirs


class _ArchiveFiles:
    """The archive's members: layout checks, bounded reads, digests; every problem with its path."""

    def __init__(self, reader, pubkey, require_signature, allow_broad_rbac=()):
        self.reader = reader
        self.pubkey = pubkey
        self.require_signature = require_signature
        self.allow_broad_rbac = allow_broad_rbac  # archives (<name>-<version>) whose broad RBAC is allowed, or True
        self.broad_rbac = []  # the broad grants allowed (operatordeploy.OperatorChecks.operator_rbac)
        self.problems = []
        self.warnings = []
        self.files = {}  # path -> Entry (regular files only, safe paths)
        self.dirs = set()
        self.digests = {}  # path -> sha256 hex (computed)
        self.cache = {}  # path -> bytes (small files read)
        self.members = []  # safe paths of files and directories, in archive order
        self.flavour = "mooring"  # or "metalk8s", from manifest.yaml's apiVersion

    def bad(self, path, message):
        self.problems.append("%s: %s" % (shown(path), message))

    # -- structure ---------------------------------------------------------------------
    def structure(self):
        entries = self.reader.entries
        if len(entries) > MAX_ENTRIES:
            self.bad("(archive)", "%d members, more than the limit of %d" % (len(entries), MAX_ENTRIES))
            return
        seen = set()
        for e in entries:
            path, problem = safe_path(e.path)
            if problem:
                self.bad(e.path, problem)
                continue
            if not path:
                continue
            if path in seen and e.kind != "dir":
                self.bad(path, "appears more than once in the archive")
                continue
            seen.add(path)
            if e.kind == "symlink":
                if link_escapes(path, e.target or ""):
                    self.bad(path, "symlink to %s escapes the archive root" % excerpt(e.target))
                else:
                    self.bad(path, "symlinks are not allowed in a solution archive; store a regular file")
                continue
            if e.kind == "hardlink":
                if link_escapes(path, e.target or "", hard=True):
                    self.bad(path, "hard link to %s escapes the archive root" % excerpt(e.target))
                else:
                    self.bad(path, "hard links are not allowed in a solution archive; store a regular file")
                continue
            if e.kind == "other":
                self.bad(path, "devices, FIFOs and other special files are not allowed")
                continue
            if e.kind == "sparse":
                self.bad(path, "sparse files are not allowed in a solution archive; store a regular file")
                continue
            self.members.append(path)
            parts = path.split("/")
            for i in range(1, len(parts)):
                self.dirs.add("/".join(parts[:i]))
            if e.kind == "dir":
                self.dirs.add(path)
            else:
                e.path = path
                self.files[path] = e
        for name in (MANIFEST, SUMS, SIGNATURE):
            if name in self.dirs:
                self.bad(name, "must be a file, not a directory")

    def top_level(self):
        """Nothing at the root but the flavour's entries (known once the manifest was read)."""
        allowed = metalk8s.TOP_LEVEL if self.flavour == "metalk8s" else TOP_LEVEL
        for path in self.members:
            if path.split("/", 1)[0] not in allowed:
                self.bad(path, "unexpected entry at the archive root (allowed: %s)" % ", ".join(sorted(allowed)))
                self.files.pop(path, None)

    def read(self, path, limit):
        if path in self.cache:
            return self.cache[path]
        e = self.files[path]
        if e.size > limit:
            self.bad(path, "%d bytes, more than the limit of %d" % (e.size, limit))
            return None
        w = HashingWriter(limit=limit)
        self.reader.stream(e, w)
        if w.size > limit:
            self.bad(path, "%d bytes, more than the limit of %d" % (w.size, limit))
            return None
        data = w.buf.getvalue()
        self.digests[path] = w.hexdigest()
        self.cache[path] = data
        return data

    def digest(self, path):
        if path not in self.digests:
            w = HashingWriter()
            self.reader.stream(self.files[path], w)
            self.digests[path] = w.hexdigest()
        return self.digests[path]


class _ManifestChecks:
    """manifest.yaml against its schema; SHA256SUMS against every file; the signature over it."""

    # -- manifest ----------------------------------------------------------------------
    def manifest(self):
        if MANIFEST not in self.files:
            self.bad(MANIFEST, "missing; every solution archive has a manifest.yaml at its root")
            return None
        raw = self.read(MANIFEST, MAX_MANIFEST_BYTES)
        if raw is None:
            return None
        try:  # bounded, and no aliases: the manifest is read before its signature is checked
            data = yamlio.load(raw, MANIFEST, max_bytes=MAX_MANIFEST_BYTES, max_aliases=0)
        except yamlio.YamlInputError as exc:
            self.problems.append(str(exc))
            return None
        if metalk8s.is_metalk8s(data):
            self.flavour = "metalk8s"
            return self.metalk8s_manifest(data)
        problems = check_manifest_data(data)  # each "manifest.yaml: FIELD: ..."
        self.problems.extend(problems)
        return None if problems else normalised(data)

    def metalk8s_manifest(self, data):
        """MetalK8s's manifest, normalised with MetalK8s's defaults (None when it is invalid)."""
        shape = metalk8s.MetalK8sManifestShape()
        problems = shape.problems(data, self.warnings)
        if not problems:
            manifest = metalk8s.normalise(data, image_dirs(self.files))
            check_listing(shape, problems, manifest["metadata"]["name"], manifest["spec"])
        self.problems.extend(problems)
        return None if problems else manifest

    def product(self, manifest):
        """product.txt of a MetalK8s archive, for display (``{KEY: VALUE}``; warnings when it disagrees)."""
        if metalk8s.PRODUCT not in self.files:
            return {}
        raw = self.read(metalk8s.PRODUCT, metalk8s.MAX_PRODUCT_BYTES)
        if raw is None:
            return {}
        info, warnings = metalk8s.parse_product(raw)
        self.warnings.extend(warnings)
        if manifest is not None and info.get("VERSION") not in (None, manifest["spec"]["version"]):
            self.warnings.append("%s: VERSION=%s, manifest.yaml says %s (the manifest is used)"
                                 % (metalk8s.PRODUCT, excerpt(info["VERSION"]), manifest["spec"]["version"]))
        return info

    # -- checksums and signature -------------------------------------------------------
    def checksums(self):
        if SUMS not in self.files:
            self.bad(SUMS, "missing; it must list the SHA-256 of every file in the archive")
            return
        raw = self.read(SUMS, MAX_SUMS_BYTES)
        if raw is None:
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.bad(SUMS, "not UTF-8 text")
            return
        self.signature(raw)
        sums, problems = parse_sums(text)
        self.problems.extend(problems)
        for path in sorted(sums):
            if path in (SUMS, SIGNATURE):
                self.bad(SUMS, "must not list %s itself" % path)
            elif path not in self.files:
                self.bad(path, "listed in %s but missing from the archive" % SUMS)
        for path in sorted(self.files):
            if path in (SUMS, SIGNATURE):
                continue
            if path not in sums:
                self.bad(path, "file not listed in %s (extra file); rebuild the archive" % SUMS)
            elif self.digest(path) != sums[path]:
                self.bad(path, "checksum mismatch: %s says %s, content is %s" % (SUMS, sums[path], self.digest(path)))

    def signature(self, sums_raw):
        if SIGNATURE not in self.files:
            if self.pubkey is not None or self.require_signature:
                self.bad(SIGNATURE, "missing: the archive is unsigned but a signature is required")
            return
        raw = self.read(SIGNATURE, 1024)
        if raw is None:
            return
        try:
            sig = base64.b64decode(raw.strip(), validate=True)
        except (binascii.Error, ValueError):
            self.bad(SIGNATURE, "not a base64-encoded Ed25519 signature")
            return
        if len(sig) != 64:
            self.bad(SIGNATURE, "an Ed25519 signature is 64 bytes, this one is %d" % len(sig))
            return
        if self.pubkey is None:
            if self.require_signature:
                self.bad(SIGNATURE, "a signature is required but no public key was given to verify it")
            else:
                self.warnings.append("%s: present but not verified (no public key given)" % SIGNATURE)
            return
        if not ed25519.verify(self.pubkey, sums_raw, sig):
            self.bad(SIGNATURE, "the signature over %s does not verify with the given public key" % SUMS)


class _Validation(_ArchiveFiles, _ManifestChecks, ImageChecks, OperatorChecks):
    """One archive's validation: the checks above over shared state (files, digests, problems)."""


def _anchor(v, path, archive_sha256, pubkey, sha256sum, trusted_sha256, required):
    """The trust anchor of a validated archive (a problem when one is required and none holds).

    Checksum files are read only when an anchor is required or named (``mooring solution build``
    validates its own output without one)."""
    verified = pubkey is not None and SIGNATURE in v.files
    if not (required or sha256sum or trusted_sha256):
        return trust.decide(path, archive_sha256, verified, sums_path=None, trusted_sha256=None,
                            sidecar=False)
    try:
        anchor = trust.decide(path, archive_sha256, verified, sums_path=sha256sum, trusted_sha256=trusted_sha256)
    except SolutionError as exc:
        v.problems.append(str(exc))
        return None
    if anchor is None and required and not v.problems:
        v.problems.append(trust.NO_ANCHOR % archive_sha256)
    return anchor


def allowed_archives(value):
    """``allow_broad_rbac`` as validation reads it: a set of ``<name>-<version>`` strings (None or
    empty: none), or True (every archive: ``mooring solution build`` checking its own output, which
    warns). SolutionError for anything else."""
    if value is True:
        return True
    if value is None:
        return frozenset()
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)) or \
            not all(isinstance(v, str) and v and len(v) <= 200 and v.isprintable() for v in value):
        raise SolutionError("allow_broad_rbac: must be a list of archives named <name>-<version> (e.g. example-1.0.0), not %s"
                            % excerpt(value))
    return frozenset(value)


def validate_archive(path, pubkey_path=None, require_signature=False, sha256sum=None, trusted_sha256=None,
                     require_trust=False, allow_broad_rbac=None):
    """Validate the archive at ``path``; return a summary dict, or raise :class:`SolutionError`.

    Checks the layout, manifest schema, checksums (every file listed, none extra, none
    missing), the Ed25519 signature (when ``pubkey_path`` is given, or required),
    every listed image as a valid OCI layout, and every image the operator manifests use.
    A MetalK8s archive (:mod:`solutions.metalk8s`) has no checksums or signature inside: it needs
    a trust anchor (:mod:`solutions.trust`: a ``SHA256SUM`` beside it or ``sha256sum``, or
    ``trusted_sha256``), as every archive does with ``require_trust``. The summary's ``trust``
    says which anchor trusted it (None: none did, allowed for a mooring archive without
    ``require_trust``).

    A RoleBinding or ClusterRoleBinding of the operator that binds the ClusterRole ``cluster-admin``,
    or binds any role to every user, every anonymous request or every service account
    (:func:`solutions.operatordeploy.broad_grant`), is refused unless ``allow_broad_rbac`` (see
    :func:`allowed_archives`) names this archive as ``<name>-<version>``; the grants allowed are the
    summary's ``broad_rbac`` (and warnings).
    """
    require(HAS_YAML, "PyYAML", YAML_IMPORT_ERROR)
    allow_broad_rbac = allowed_archives(allow_broad_rbac)
    pubkey = load_public_key(pubkey_path) if pubkey_path else None
    if require_signature and pubkey is None:
        raise SolutionError("a signed archive is required: give the public key to verify it with")
    reader = open_archive(path)
    if not reader.entries:
        reader.close()
        raise SolutionError("%s: the archive is empty; build it with `mooring solution build`" % path)
    try:
        v = _Validation(reader, pubkey, require_signature, allow_broad_rbac)
        v.structure()
        manifest = v.manifest()
        v.top_level()
        if v.flavour == "mooring":
            v.checksums()
        elif require_signature:
            v.bad(SIGNATURE, "missing: a MetalK8s archive carries no signature; trust it by its SHA256SUM "
                  "or name its sha256 as trusted")
        product = v.product(manifest) if v.flavour == "metalk8s" else {}
        digests = v.images(manifest)
        docs = v.operator(manifest)
    finally:
        reader.close()
    archive_sha256 = file_sha256(path)
    anchor = _anchor(v, path, archive_sha256, pubkey, sha256sum, trusted_sha256,
                     require_trust or v.flavour == "metalk8s")
    if v.problems:
        listed = ["%s: %s" % (path, p) for p in v.problems[:MAX_PROBLEMS_SHOWN]]
        if len(v.problems) > MAX_PROBLEMS_SHOWN:
            listed.append("%s: %d more problems not shown" % (path, len(v.problems) - MAX_PROBLEMS_SHOWN))
        raise SolutionError(
            "%s: invalid solution archive (%d problem%s)" % (path, len(v.problems), "" if len(v.problems) == 1 else "s"),
            listed,
        )
    meta = manifest["metadata"]
    spec = manifest["spec"]
    return {
        "name": meta["name"],
        "version": spec["version"],
        "display_name": meta["display_name"],
        "flavour": v.flavour,
        "labels": meta["labels"],
        "format": reader.format,
        "signed": SIGNATURE in v.files,
        "signature_verified": pubkey is not None and SIGNATURE in v.files,
        "trust": anchor,
        "archive_sha256": archive_sha256,
        "images": [
            {"name": i["name"], "tag": i["tag"], "digest": digests[(i["name"], i["tag"])]} for i in spec["images"]
        ],
        "operator": {"image": dict(spec["operator"]["image"]), "manifests": [d for _p, _n, d in docs]},
        "broad_rbac": list(v.broad_rbac),
        "product": product,
        "ui": sorted(p for p in v.files if p.startswith("ui/")),
        "warnings": v.warnings,
        "files": len(v.files),
    }
