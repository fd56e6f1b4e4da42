# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: validating a solution archive before anything leaves the controller.

:func:`validate_archive` reads an archive through :mod:`solutions.archive`'s readers and checks
its layout, manifest, checksums and signature, every image's OCI layout and blobs, and the
operator's manifests. Every problem is reported with its path inside the archive; nothing is
extracted before validation succeeded.
"""


from __future__ import annotations

import base64
import binascii
import json
import posixpath
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio, yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common import images as image_refs
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import HashingWriter
from ansible_collections.mooring.cluster.plugins.module_utils.common.yamlio import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.archive import (
    _DIGEST,
    CLUSTER_SCOPED_REFUSED,
    CONFIG_TYPES,
    DISPLAY_NAME_ANNOTATION,
    HAS_JSONSCHEMA,
    HAS_YAML,
    IMAGE_NAME_RE,
    INDEX_TYPES,
    JSONSCHEMA_IMPORT_ERROR,
    MANIFEST,
    MANIFEST_SCHEMA,
    MANIFEST_TYPES,
    MAX_ENTRIES,
    MAX_INDEX_DEPTH,
    MAX_JSON_BYTES,
    MAX_MANIFEST_BYTES,
    MAX_OPERATOR_FILE_BYTES,
    MAX_PROBLEMS_SHOWN,
    MAX_SUMS_BYTES,
    OCI_LAYOUT_VERSION,
    OPERATOR_DIR,
    SIGNATURE,
    SUMS,
    TAG_RE,
    TOP_LEVEL,
    YAML_IMPORT_ERROR,
    SolutionError,
    _link_escapes,
    _safe_path,
    file_sha256,
    jsonschema,
    load_public_key,
    open_archive,
    parse_sums,
    require,
    shown,
)


def _schema_path(error):
    out = ""
    for p in error.absolute_path:
        out += "[%d]" % p if isinstance(p, int) else ("." if out else "") + str(p)
    return out or "(document)"


def check_manifest_data(data):
    """Problems (strings, each naming the field) in a parsed manifest.yaml."""
    require(HAS_JSONSCHEMA, "jsonschema", JSONSCHEMA_IMPORT_ERROR)
    if not isinstance(data, dict):
        return ["(document): must be a mapping with apiVersion, kind, metadata and spec"]
    validator = jsonschema.Draft7Validator(MANIFEST_SCHEMA)
    problems = []
    for err in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        if err.validator == "pattern":
            msg = "%s does not match %s" % (excerpt(err.instance), err.validator_value)
        elif err.validator == "const":
            msg = "must be %r, got %s" % (err.validator_value, excerpt(err.instance))
        elif err.validator == "additionalProperties":
            extra = sorted(str(k) for k in err.instance if k not in (err.schema.get("properties") or {}))
            msg = "unknown field(s) %s" % excerpt(", ".join(extra), 200)
        elif err.validator == "type":
            msg = "%s is not of type %r" % (excerpt(err.instance), err.validator_value)
        else:
            msg = err.message if len(err.message) <= 200 else err.message[:197] + "..."
        problems.append("%s: %s" % (_schema_path(err), msg))
    if problems:
        return problems
    spec = data["spec"]
    seen = set()
    for i, img in enumerate(spec["images"]):
        key = (img["name"], img["tag"])
        if key in seen:
            problems.append("spec.images[%d]: %s:%s is listed twice" % (i, key[0], key[1]))
        seen.add(key)
    op = spec["operator"]["image"]
    if (op["name"], op["tag"]) not in seen:
        problems.append(
            "spec.operator.image: %s:%s is not listed in spec.images; list it there too" % (op["name"], op["tag"])
        )
    try:  # what becomes a path: <name>-<version>, images/<name>/<tag>, <name>_<tag>.oci.tar
        fileio.safe_name("%s-%s" % (data["metadata"]["name"], spec["version"]), "solution name and version")
        for img in spec["images"]:
            for part in img["name"].split("/") + [img["tag"]]:
                fileio.safe_name(part, "image name or tag")
    except fileio.PathEscapeError as exc:
        problems.append("%s" % exc)
    return problems


def _dig(obj, *keys):
    """``obj[k1][k2]...`` when every level is a mapping; else None."""
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def parse_image_ref(ref):
    """(name, tag) of an operator manifest image reference ``NAME:TAG``; None if not that form."""
    if not isinstance(ref, str) or "@" in ref or ":" not in ref:
        return None
    name, tag = image_refs.split_tag(ref)
    if image_refs.is_registry_host(name.split("/", 1)[0]):
        return None  # a registry host: the repository is decided at import, not in the archive
    if not re.match(IMAGE_NAME_RE, name) or not re.match(TAG_RE, tag):
        return None
    return name, tag


def pod_spec_of(obj):
    """The pod spec of a workload object (a mapping), or None (also when a level is not a mapping)."""
    kind = _dig(obj, "kind")
    if kind == "Pod":
        pod = _dig(obj, "spec")
    elif kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
        pod = _dig(obj, "spec", "template", "spec")
    elif kind == "CronJob":
        pod = _dig(obj, "spec", "jobTemplate", "spec", "template", "spec")
    else:
        return None
    return pod if isinstance(pod, dict) else {}


def containers_of(obj):
    pod = pod_spec_of(obj)
    if not isinstance(pod, dict):
        return []
    out = []
    for key in ("initContainers", "containers"):
        listed = pod.get(key)
        for c in listed if isinstance(listed, list) else []:
            if isinstance(c, dict):
                out.append(c)
    return out


class _ArchiveFiles:
    """The archive's members: layout checks, bounded reads, digests; every problem with its path."""

    def __init__(self, reader, pubkey, require_signature):
        self.reader = reader
        self.pubkey = pubkey
        self.require_signature = require_signature
        self.problems = []
        self.warnings = []
        self.files = {}  # path -> Entry (regular files only, safe paths)
        self.dirs = set()
        self.digests = {}  # path -> sha256 hex (computed)
        self.cache = {}  # path -> bytes (small files read)

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
            path, problem = _safe_path(e.path)
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
                if _link_escapes(path, e.target or ""):
                    self.bad(path, "symlink to %s escapes the archive root" % excerpt(e.target))
                else:
                    self.bad(path, "symlinks are not allowed in a solution archive; store a regular file")
                continue
            if e.kind == "hardlink":
                if _link_escapes(path, e.target or "", hard=True):
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
            top = path.split("/", 1)[0]
            if top not in TOP_LEVEL:
                self.bad(path, "unexpected entry at the archive root (allowed: %s)" % ", ".join(sorted(TOP_LEVEL)))
                continue
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
        problems = check_manifest_data(data)
        for p in problems:
            self.bad(MANIFEST, p)
        return None if problems else data

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


class _ImageChecks:
    """Each image of spec.images is a complete OCI layout whose every blob matches its digest."""

    # -- images --------------------------------------------------------------------------
    def json_file(self, path):
        if path not in self.files:
            self.bad(path, "missing")
            return None
        raw = self.read(path, MAX_JSON_BYTES)
        if raw is None:
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self.bad(path, "not valid JSON: %s" % excerpt(str(exc), 200))
            return None
        except RecursionError:
            self.bad(path, "not valid JSON: nested too deeply")
            return None

    def blob(self, root, desc, where, allowed_types):
        """Check a descriptor: its blob exists with that size and digest. Returns the blob path."""
        if not isinstance(desc, dict):
            self.bad(where[0], "%s: a descriptor must be a mapping" % where[1])
            return None
        mt, digest, size = desc.get("mediaType"), desc.get("digest"), desc.get("size")
        if allowed_types is not None and mt not in allowed_types:
            self.bad(where[0], "%s: mediaType %s is not one of %s" % (where[1], excerpt(mt), ", ".join(allowed_types)))
            return None
        m = _DIGEST.match(digest) if isinstance(digest, str) else None
        if not m:
            self.bad(where[0], "%s: digest %s is not sha256:<64 hex>" % (where[1], excerpt(digest)))
            return None
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            self.bad(where[0], "%s: size %s is not a non-negative integer" % (where[1], excerpt(size)))
            return None
        path = "%s/blobs/sha256/%s" % (root, m.group(1))
        if path not in self.files:
            self.bad(path, "blob referenced by %s (%s) is missing" % (where[0], where[1]))
            return None
        if self.files[path].size != size:
            self.bad(path, "size is %d, the descriptor in %s says %d" % (self.files[path].size, where[0], size))
            return None
        if self.digest(path) != m.group(1):
            self.bad(path, "content does not match its digest (sha256 is %s)" % self.digest(path))
            return None
        return path

    def oci_manifest(self, root, desc, where, depth):
        mt = desc.get("mediaType") if isinstance(desc, dict) else None
        if mt in INDEX_TYPES:
            if depth >= MAX_INDEX_DEPTH:
                self.bad(where[0], "%s: image indexes nested deeper than %d" % (where[1], MAX_INDEX_DEPTH))
                return False
            path = self.blob(root, desc, where, INDEX_TYPES)
            if path is None:
                return False
            index = self.json_file(path)
            return self.oci_index(root, index, path, depth + 1)
        path = self.blob(root, desc, where, MANIFEST_TYPES)
        if path is None:
            return False
        man = self.json_file(path)
        if not isinstance(man, dict):
            if man is not None:
                self.bad(path, "an image manifest must be a JSON object")
            return False
        if man.get("schemaVersion") != 2:
            self.bad(path, "schemaVersion must be 2")
            return False
        ok = True
        cfg = self.blob(root, man.get("config"), (path, "config"), CONFIG_TYPES)
        if cfg is None:
            ok = False
        else:
            config = self.json_file(cfg)
            if not isinstance(config, dict) or not config.get("architecture") or not config.get("os"):
                self.bad(cfg, "an image config must be a JSON object with architecture and os")
                ok = False
        layers = man.get("layers")
        if not isinstance(layers, list):
            self.bad(path, "layers must be a list")
            return False
        for i, layer in enumerate(layers):
            if self.blob(root, layer, (path, "layers[%d]" % i), None) is None:
                ok = False
        return ok

    def oci_index(self, root, index, path, depth):
        if not isinstance(index, dict):
            if index is not None:
                self.bad(path, "must be a JSON object")
            return False
        if index.get("schemaVersion") != 2:
            self.bad(path, "schemaVersion must be 2")
            return False
        manifests = index.get("manifests")
        if not isinstance(manifests, list) or not manifests:
            self.bad(path, "manifests must be a non-empty list")
            return False
        ok = True
        for i, desc in enumerate(manifests):
            ok = self.oci_manifest(root, desc, (path, "manifests[%d]" % i), depth) and ok
        return ok

    def images(self, manifest):
        listed = set()
        if manifest is not None:
            for img in manifest["spec"]["images"]:
                listed.add((img["name"], img["tag"]))
        layouts = {}
        for path in self.files:
            if not path.startswith("images/"):
                continue
            rest = path[len("images/"):]
            marker = rest.find("/blobs/") if "/blobs/" in rest else None
            if marker is not None:
                key = rest[:marker]
            elif rest.endswith("/index.json") or rest.endswith("/oci-layout"):
                key = rest.rsplit("/", 1)[0]
            else:
                self.bad(path, "unexpected file under images/ (expected images/<name>/<tag>/ OCI layouts)")
                continue
            if "/" not in key:
                self.bad(path, "unexpected file under images/ (expected images/<name>/<tag>/ OCI layouts)")
                continue
            name, tag = key.rsplit("/", 1)
            layouts.setdefault((name, tag), []).append(path)
        for name, tag in sorted(layouts):
            if (name, tag) not in listed and manifest is not None:
                self.bad("images/%s/%s" % (name, tag), "image not listed in manifest.yaml spec.images")
        digests = {}
        for name, tag in sorted(listed):
            root = "images/%s/%s" % (name, tag)
            if (name, tag) not in layouts:
                self.bad(root, "image %s:%s listed in manifest.yaml spec.images is missing" % (name, tag))
                continue
            layout = self.json_file(root + "/oci-layout")
            if layout is not None and (
                not isinstance(layout, dict) or layout.get("imageLayoutVersion") != OCI_LAYOUT_VERSION
            ):
                self.bad(root + "/oci-layout", "imageLayoutVersion must be %r" % OCI_LAYOUT_VERSION)
            index = self.json_file(root + "/index.json")
            if index is None:
                continue
            if self.oci_index(root, index, root + "/index.json", 0):
                if len(index["manifests"]) != 1:
                    self.bad(root + "/index.json", "must describe exactly one image (one entry in manifests)")
                else:
                    digests[(name, tag)] = index["manifests"][0]["digest"]
        return digests


class _OperatorChecks:
    """The operator's manifests: kinds allowed, images from the archive only."""

    # -- operator ------------------------------------------------------------------------
    def operator(self, manifest):
        docs = []
        files = sorted(p for p in self.files if p.startswith("operator/"))
        if not files:
            self.bad(OPERATOR_DIR, "missing: the operator manifests (CRDs, RBAC, Deployment) go in operator/deploy/")
            return docs
        for path in files:
            if posixpath.dirname(path) != OPERATOR_DIR or not path.endswith((".yaml", ".yml")):
                self.bad(path, "unexpected file; only operator/deploy/*.yaml is allowed under operator/")
                continue
            raw = self.read(path, MAX_OPERATOR_FILE_BYTES)
            if raw is None:
                continue
            try:  # Kubernetes YAML may use anchors: bounded by the expanded-size budget
                loaded = yamlio.load(raw, path, multi=True, max_bytes=MAX_OPERATOR_FILE_BYTES, max_nodes=500000)
            except yamlio.YamlInputError as exc:
                self.problems.append(str(exc))
                continue
            for n, doc in enumerate(loaded):
                where = "%s: document %d" % (shown(path), n + 1)
                if not isinstance(doc, dict):
                    self.problems.append("%s: must be a Kubernetes object (a mapping)" % where)
                    continue
                missing = [k for k in ("apiVersion", "kind") if not isinstance(doc.get(k), str) or not doc.get(k)]
                name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
                if not isinstance(name, str) or not name:
                    missing.append("metadata.name")
                if missing:
                    self.problems.append("%s: missing %s" % (where, ", ".join(missing)))
                    continue
                if len(doc["kind"]) > 253 or len(name) > 253:
                    self.problems.append("%s: kind or metadata.name longer than 253 characters" % where)
                    continue
                if doc["kind"] in CLUSTER_SCOPED_REFUSED:
                    self.problems.append("%s: cluster-scoped %s objects are not allowed in operator manifests"
                                         % (where, doc["kind"]))
                    continue
                docs.append((path, n + 1, doc))
        if not any(d.get("kind") == "Deployment" for _p, _n, d in docs) and files:
            self.bad(OPERATOR_DIR, "no Deployment found: the operator must be deployed by a Deployment")
        if manifest is None:
            return docs
        listed = {(i["name"], i["tag"]) for i in manifest["spec"]["images"]}
        op = manifest["spec"]["operator"]["image"]
        used_operator = False
        for path, n, doc in docs:
            for c in containers_of(doc):
                ref = c.get("image")
                parsed = parse_image_ref(ref)
                where = "%s: document %d (%s %s), container %s" % (
                    shown(path), n, doc["kind"], doc["metadata"]["name"], excerpt(c.get("name")))
                if parsed is None:
                    self.problems.append(
                        "%s: image %s must be written NAME:TAG with no registry "
                        "(the repository is set when the archive is imported)" % (where, excerpt(ref)))
                elif parsed not in listed:
                    self.problems.append(
                        "%s: image %s is not listed in manifest.yaml spec.images" % (where, shown(ref)))
                elif parsed == (op["name"], op["tag"]):
                    used_operator = True
        if docs and not used_operator:
            self.bad(OPERATOR_DIR, "no container runs the operator image %s:%s from spec.operator.image"
                     % (op["name"], op["tag"]))
        return docs


class _Validation(_ArchiveFiles, _ManifestChecks, _ImageChecks, _OperatorChecks):
    """One archive's validation: the checks above over shared state (files, digests, problems)."""


def validate_archive(path, pubkey_path=None, require_signature=False):
    """Validate the archive at ``path``; return a summary dict, or raise :class:`SolutionError`.

    Checks the layout, manifest schema, checksums (every file listed, none extra, none
    missing), the Ed25519 signature (when ``pubkey_path`` is given, or required),
    every listed image as a valid OCI layout, and every image the operator manifests use.
    """
    require(HAS_YAML, "PyYAML", YAML_IMPORT_ERROR)
    pubkey = load_public_key(pubkey_path) if pubkey_path else None
    if require_signature and pubkey is None:
        raise SolutionError("a signed archive is required: give the public key to verify it with")
    reader = open_archive(path)
    if not reader.entries:
        reader.close()
        raise SolutionError("%s: the archive is empty; build it with `mooring solution build`" % path)
    try:
        v = _Validation(reader, pubkey, require_signature)
        v.structure()
        manifest = v.manifest()
        v.checksums()
        digests = v.images(manifest)
        docs = v.operator(manifest)
    finally:
        reader.close()
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
        "display_name": (meta.get("annotations") or {}).get(DISPLAY_NAME_ANNOTATION, meta["name"]),
        "format": reader.format,
        "signed": SIGNATURE in v.files,
        "signature_verified": pubkey is not None,
        "archive_sha256": file_sha256(path),
        "images": [
            {"name": i["name"], "tag": i["tag"], "digest": digests[(i["name"], i["tag"])]} for i in spec["images"]
        ],
        "operator": {"image": dict(spec["operator"]["image"]), "manifests": [d for _p, _n, d in docs]},
        "warnings": v.warnings,
        "files": len(v.files),
    }
