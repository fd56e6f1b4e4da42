# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: solution archives (build, read, validate, export images).

A solution archive is an ISO 9660 image with Rock Ridge names (read and written with
``pycdlib``) or a tar (optionally gzip-compressed) holding::

    manifest.yaml            kind: Solution (apiVersion solutions.mooring.io/v1alpha1)
    images/<name>/<tag>/     one OCI image layout per image listed in spec.images
    operator/deploy/*.yaml   CRDs, RBAC and the operator Deployment
    SHA256SUMS               "<sha256>  <path>" for every other file
    SHA256SUMS.sig           base64 Ed25519 signature over SHA256SUMS (optional)

Everything here runs on the controller: hosts only ever receive what passed
:func:`validate_archive`. Every problem is reported with its path inside the archive;
nothing is extracted before validation succeeded.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import os
import posixpath
import re
import stat
import tarfile
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519
from ansible_collections.mooring.cluster.plugins.module_utils.common import images as image_refs
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import HashingWriter, sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

try:
    import yaml

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - depends on the environment
    HAS_YAML = False
    YAML_IMPORT_ERROR = _exc

try:
    import pycdlib

    HAS_PYCDLIB = True
    PYCDLIB_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - depends on the environment
    HAS_PYCDLIB = False
    PYCDLIB_IMPORT_ERROR = _exc

try:
    import jsonschema

    HAS_JSONSCHEMA = True
    JSONSCHEMA_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - depends on the environment
    HAS_JSONSCHEMA = False
    JSONSCHEMA_IMPORT_ERROR = _exc


API_VERSION = "solutions.mooring.io/v1alpha1"
KIND = "Solution"
DISPLAY_NAME_ANNOTATION = "solutions.mooring.io/display-name"
MANIFEST = "manifest.yaml"
SUMS = "SHA256SUMS"
SIGNATURE = "SHA256SUMS.sig"
TOP_LEVEL = frozenset([MANIFEST, SUMS, SIGNATURE, "images", "operator"])
OPERATOR_DIR = "operator/deploy"
# Cluster-scoped kinds an operator may not ship (CRDs, ClusterRoles and their bindings are fine).
CLUSTER_SCOPED_REFUSED = frozenset([
    "Namespace", "Node", "PersistentVolume", "StorageClass", "PriorityClass", "RuntimeClass", "CSIDriver",
    "CSINode", "IngressClass", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService",
    "PodSecurityPolicy", "VolumeAttachment", "CertificateSigningRequest", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "FlowSchema", "PriorityLevelConfiguration",
])

MAX_MANIFEST_BYTES = 64 * 1024
MAX_SUMS_BYTES = 8 * 1024 * 1024
MAX_JSON_BYTES = 4 * 1024 * 1024
MAX_OPERATOR_FILE_BYTES = 4 * 1024 * 1024
MAX_ENTRIES = 100000
MAX_INDEX_DEPTH = 3

OCI_LAYOUT_VERSION = "1.0.0"
MT_OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_OCI_INDEX = "application/vnd.oci.image.index.v1+json"
MT_OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
MT_DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
MT_DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
MANIFEST_TYPES = (MT_OCI_MANIFEST, MT_DOCKER_MANIFEST)
INDEX_TYPES = (MT_OCI_INDEX, MT_DOCKER_LIST)
CONFIG_TYPES = (MT_OCI_CONFIG, MT_DOCKER_CONFIG)
ANN_REF_NAME = "org.opencontainers.image.ref.name"
ANN_CONTAINERD_NAME = "io.containerd.image.name"

NAME_RE = r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$"
IMAGE_NAME_RE = r"^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$"
TAG_RE = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"
VERSION_RE = (
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)
_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")
_DIGEST = re.compile(r"^sha256:([0-9a-f]{64})$")

MANIFEST_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": API_VERSION},
        "kind": {"const": KIND},
        "metadata": {
            "type": "object",
            "required": ["name"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "pattern": NAME_RE},
                "annotations": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "properties": {DISPLAY_NAME_ANNOTATION: {"type": "string", "minLength": 1, "maxLength": 128}},
                },
            },
        },
        "spec": {
            "type": "object",
            "required": ["version", "images", "operator"],
            "additionalProperties": False,
            "properties": {
                "version": {"type": "string", "pattern": VERSION_RE},
                "images": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["name", "tag"],
                        "additionalProperties": False,
                        "properties": {
                            "name": {"type": "string", "pattern": IMAGE_NAME_RE, "maxLength": 128},
                            "tag": {"type": "string", "pattern": TAG_RE},
                        },
                    },
                },
                "operator": {
                    "type": "object",
                    "required": ["image"],
                    "additionalProperties": False,
                    "properties": {
                        "image": {
                            "type": "object",
                            "required": ["name", "tag"],
                            "additionalProperties": False,
                            "properties": {
                                "name": {"type": "string", "pattern": IMAGE_NAME_RE},
                                "tag": {"type": "string", "pattern": TAG_RE},
                            },
                        }
                    },
                },
            },
        },
    },
}


class SolutionError(MooringError):
    """A solution archive (or a request about one) is invalid; one problem per line."""


def require(flag, name, error):
    if not flag:
        raise SolutionError("Python library %s is required for solution archives: %s" % (name, error))


# ---------------------------------------------------------------------------------------
# Archive readers: one interface over tar and ISO 9660.
# ---------------------------------------------------------------------------------------


class Entry:
    """One member of an archive. ``kind``: file, dir, symlink, hardlink or other."""

    __slots__ = ("path", "kind", "size", "target", "raw")

    def __init__(self, path, kind, size=0, target=None, raw=None):
        self.path = path
        self.kind = kind
        self.size = size
        self.target = target
        self.raw = raw


class TarReader:
    format = "tar"

    def __init__(self, path):
        try:
            self._tar = tarfile.open(path, "r:*")  # noqa: SIM115 - closed by close()
            members = self._tar.getmembers()
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise SolutionError("%s: cannot read the tar archive: %s" % (path, exc)) from exc
        self.entries = []
        for m in members:
            if m.isreg():
                kind = "file"
            elif m.isdir():
                kind = "dir"
            elif m.issym():
                kind = "symlink"
            elif m.islnk():
                kind = "hardlink"
            else:
                kind = "other"
            self.entries.append(Entry(m.name, kind, m.size, m.linkname or None, m))

    def stream(self, entry, out):
        f = self._tar.extractfile(entry.raw)
        while True:
            chunk = f.read(1024 * 1024)
            if not chunk:
                break
            out.write(chunk)

    def close(self):
        self._tar.close()


class IsoReader:
    format = "iso"

    def __init__(self, path):
        require(HAS_PYCDLIB, "pycdlib", PYCDLIB_IMPORT_ERROR)
        self._iso = pycdlib.PyCdlib()
        try:
            self._iso.open(path)
        except Exception as exc:  # pycdlib raises several unrelated types on corrupt images
            raise SolutionError("%s: cannot read the ISO 9660 image: %s" % (path, exc)) from exc
        if not self._iso.has_rock_ridge():
            self._iso.close()
            raise SolutionError(
                "%s: the ISO 9660 image has no Rock Ridge names; build it with `mooring solution build`" % path
            )
        self.entries = []
        for dirpath, dirs, files in self._iso.walk(rr_path="/"):
            base = dirpath.strip("/")
            for d in dirs:
                self.entries.append(Entry(posixpath.join(base, d), "dir"))
            for f in files:
                rr = "/" + posixpath.join(base, f)
                rec = self._iso.get_record(rr_path=rr)
                rel = posixpath.join(base, f)
                if rec.is_symlink():
                    target = rec.rock_ridge.symlink_path().decode("utf-8", "replace")
                    self.entries.append(Entry(rel, "symlink", 0, target, rr))
                else:
                    self.entries.append(Entry(rel, "file", rec.get_data_length(), None, rr))

    def stream(self, entry, out):
        self._iso.get_file_from_iso_fp(out, rr_path=entry.raw)

    def close(self):
        self._iso.close()


def _is_iso(path):
    try:
        with open(path, "rb") as f:
            f.seek(0x8001)
            return f.read(5) == b"CD001"
    except OSError:
        return False


def open_archive(path):
    """A reader for the archive at ``path`` (ISO 9660 or tar, detected by content)."""
    if not os.path.isfile(path):
        raise SolutionError("%s: no such archive file" % path)
    if _is_iso(path):
        return IsoReader(path)
    if tarfile.is_tarfile(path):
        return TarReader(path)
    raise SolutionError("%s: not an ISO 9660 image or a tar archive" % path)


# ---------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------


def _safe_path(raw):
    """(normalised path, problem or None) for a member name."""
    if "\x00" in raw or "\\" in raw:
        return raw, "invalid character in the path"
    name = raw
    while name.startswith("./"):
        name = name[2:]
    name = name.rstrip("/")
    if raw.startswith("/"):
        return name, "absolute path (path traversal); members must be relative to the archive root"
    parts = name.split("/")
    if any(p == ".." for p in parts):
        return name, "'..' in the path (path traversal); members must stay inside the archive root"
    if name in ("", "."):
        return "", None
    return "/".join(p for p in parts if p not in ("", ".")), None


def _link_escapes(path, target, hard=False):
    if target.startswith("/"):
        return True
    base = "" if hard else posixpath.dirname(path)
    joined = posixpath.normpath(posixpath.join("/root", base, target))
    return not (joined == "/root" or joined.startswith("/root/"))


def _yaml_error(exc):
    mark = getattr(exc, "problem_mark", None)
    where = " (line %d, column %d)" % (mark.line + 1, mark.column + 1) if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return "not valid YAML%s: %s" % (where, problem)


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
            msg = "%r does not match %s" % (err.instance, err.validator_value)
        elif err.validator == "const":
            msg = "must be %r, got %r" % (err.validator_value, err.instance)
        elif err.validator == "additionalProperties":
            msg = err.message.replace("Additional properties are not allowed", "unknown field(s)")
        else:
            msg = err.message
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
    return problems


def parse_sums(text):
    """{path: sha256 hex} and a list of problems from SHA256SUMS content."""
    sums, problems = {}, []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _SUM_LINE.match(line)
        if not m:
            problems.append("%s: line %d: expected '<64 lowercase hex>  <path>'" % (SUMS, n))
            continue
        digest, raw = m.group(1), m.group(2)
        path, bad = _safe_path(raw)
        if bad or path != raw:
            problems.append("%s: line %d: %r: %s" % (SUMS, n, raw, bad or "path is not in normal form"))
            continue
        if path in sums:
            problems.append("%s: line %d: %s is listed twice" % (SUMS, n, path))
            continue
        sums[path] = digest
    return sums, problems


def load_public_key(path):
    """The raw Ed25519 public key in the PEM file ``path`` (common/ed25519.py; no cryptography needed)."""
    try:
        return ed25519.read_public_key(path)
    except ed25519.KeyFileError as exc:
        if getattr(exc, "strerror", None):
            raise SolutionError("%s: cannot load the Ed25519 public key (PEM): %s" % (path, exc)) from exc
        raise SolutionError("%s: the public key is not an Ed25519 key" % path) from exc


def load_private_key(path):
    require(ed25519.cryptography_error() is None, "cryptography", ed25519.cryptography_error())
    try:
        return ed25519.load_private_key(path)
    except ed25519.KeyFileError as exc:
        if str(exc) == "not an Ed25519 private key":
            raise SolutionError("%s: the private key is not an Ed25519 key" % path) from exc
        raise SolutionError("%s: cannot load the Ed25519 private key (unencrypted PEM): %s" % (path, exc)) from exc


def parse_image_ref(ref):
    """(name, tag) of an operator manifest image reference ``NAME:TAG``; None if not that form."""
    if not isinstance(ref, str) or "@" in ref or ":" not in ref:
        return None
    name, tag = ref.rsplit(":", 1)
    if image_refs.is_registry_host(name.split("/", 1)[0]):
        return None  # a registry host: the repository is decided at import, not in the archive
    if not re.match(IMAGE_NAME_RE, name) or not re.match(TAG_RE, tag):
        return None
    return name, tag


def pod_spec_of(obj):
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
        return ((spec.get("template") or {}).get("spec")) or {}
    if kind == "CronJob":
        return ((((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")) or {}
    return None


def containers_of(obj):
    pod = pod_spec_of(obj)
    if not isinstance(pod, dict):
        return []
    out = []
    for key in ("initContainers", "containers"):
        for c in pod.get(key) or []:
            if isinstance(c, dict):
                out.append(c)
    return out


class _Validation:
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
        self.problems.append("%s: %s" % (path, message))

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
                    self.bad(path, "symlink to %r escapes the archive root" % e.target)
                else:
                    self.bad(path, "symlinks are not allowed in a solution archive; store a regular file")
                continue
            if e.kind == "hardlink":
                if _link_escapes(path, e.target or "", hard=True):
                    self.bad(path, "hard link to %r escapes the archive root" % e.target)
                else:
                    self.bad(path, "hard links are not allowed in a solution archive; store a regular file")
                continue
            if e.kind == "other":
                self.bad(path, "devices, FIFOs and other special files are not allowed")
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

    # -- manifest ----------------------------------------------------------------------
    def manifest(self):
        if MANIFEST not in self.files:
            self.bad(MANIFEST, "missing; every solution archive has a manifest.yaml at its root")
            return None
        raw = self.read(MANIFEST, MAX_MANIFEST_BYTES)
        if raw is None:
            return None
        try:
            data = yaml.safe_load(raw.decode("utf-8"))
        except UnicodeDecodeError:
            self.bad(MANIFEST, "not UTF-8 text")
            return None
        except yaml.YAMLError as exc:
            self.bad(MANIFEST, _yaml_error(exc))
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
            self.bad(path, "not valid JSON: %s" % exc)
            return None

    def blob(self, root, desc, where, allowed_types):
        """Check a descriptor: its blob exists with that size and digest. Returns the blob path."""
        if not isinstance(desc, dict):
            self.bad(where[0], "%s: a descriptor must be a mapping" % where[1])
            return None
        mt, digest, size = desc.get("mediaType"), desc.get("digest"), desc.get("size")
        if allowed_types is not None and mt not in allowed_types:
            self.bad(where[0], "%s: mediaType %r is not one of %s" % (where[1], mt, ", ".join(allowed_types)))
            return None
        m = _DIGEST.match(digest) if isinstance(digest, str) else None
        if not m:
            self.bad(where[0], "%s: digest %r is not sha256:<64 hex>" % (where[1], digest))
            return None
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            self.bad(where[0], "%s: size %r is not a non-negative integer" % (where[1], size))
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
            try:
                loaded = [d for d in yaml.safe_load_all(raw.decode("utf-8")) if d is not None]
            except UnicodeDecodeError:
                self.bad(path, "not UTF-8 text")
                continue
            except yaml.YAMLError as exc:
                self.bad(path, _yaml_error(exc))
                continue
            for n, doc in enumerate(loaded):
                where = "%s: document %d" % (path, n + 1)
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
                where = "%s: document %d (%s %s), container %r" % (
                    path, n, doc["kind"], doc["metadata"]["name"], c.get("name"))
                if parsed is None:
                    self.problems.append(
                        "%s: image %r must be written NAME:TAG with no registry "
                        "(the repository is set when the archive is imported)" % (where, ref))
                elif parsed not in listed:
                    self.problems.append(
                        "%s: image %s is not listed in manifest.yaml spec.images" % (where, ref))
                elif parsed == (op["name"], op["tag"]):
                    used_operator = True
        if docs and not used_operator:
            self.bad(OPERATOR_DIR, "no container runs the operator image %s:%s from spec.operator.image"
                     % (op["name"], op["tag"]))
        return docs


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
        raise SolutionError(
            "%s: invalid solution archive (%d problem%s)" % (path, len(v.problems), "" if len(v.problems) == 1 else "s"),
            ["%s: %s" % (path, p) for p in v.problems],
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


def file_sha256(path):
    return sha256_file(path)[0]


# ---------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------


def _source_files(src):
    """Sorted relative paths of every regular file under ``src``; problems for anything else."""
    files, problems = [], []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for d in list(dirnames):
            if os.path.islink(os.path.join(dirpath, d)):
                problems.append("%s: symlinks are not allowed in a solution" % os.path.join(dirpath, d))
                dirnames.remove(d)
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, src).replace(os.sep, "/")
            st = os.lstat(full)
            if not stat.S_ISREG(st.st_mode):
                problems.append("%s: only regular files are allowed in a solution" % full)
                continue
            if rel in (SUMS, SIGNATURE):
                continue  # regenerated
            files.append(rel)
    return sorted(files), problems


def archive_format(out_path, fmt=None):
    if fmt:
        if fmt not in ("iso", "tar", "tar.gz"):
            raise SolutionError("format %r: choose iso, tar or tar.gz" % fmt)
        return fmt
    if out_path.endswith(".iso"):
        return "iso"
    if out_path.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if out_path.endswith(".tar"):
        return "tar"
    raise SolutionError("%s: cannot tell the archive format from the name; use .iso, .tar or .tar.gz" % out_path)


def sums_text(src, files):
    lines = []
    for rel in files:
        lines.append("%s  %s\n" % (file_sha256(os.path.join(src, rel)), rel))
    return "".join(lines).encode("utf-8")


def sign(private_key, data):
    return base64.b64encode(ed25519.sign(private_key, data)) + b"\n"


def _write_tar(out, src, files, extra, gz):
    with tarfile.open(fileobj=out, mode="w:gz" if gz else "w", format=tarfile.PAX_FORMAT) as tar:
        dirs = sorted({posixpath.dirname(f) for f in files if "/" in f} | set())
        all_dirs = set()
        for d in dirs:
            parts = d.split("/")
            for i in range(1, len(parts) + 1):
                all_dirs.add("/".join(parts[:i]))
        for d in sorted(all_dirs):
            ti = tarfile.TarInfo(d)
            ti.type = tarfile.DIRTYPE
            ti.mode = 0o755
            tar.addfile(ti)
        members = [(f, os.path.join(src, f)) for f in files] + sorted(extra.items())
        for rel, what in members:
            if isinstance(what, bytes):
                ti = tarfile.TarInfo(rel)
                ti.size = len(what)
                ti.mode = 0o644
                tar.addfile(ti, io.BytesIO(what))
            else:
                ti = tarfile.TarInfo(rel)
                ti.size = os.path.getsize(what)
                ti.mode = 0o644
                with open(what, "rb") as f:
                    tar.addfile(ti, f)


def _write_iso(out_path, src, files, extra, volume):
    require(HAS_PYCDLIB, "pycdlib", PYCDLIB_IMPORT_ERROR)
    iso = pycdlib.PyCdlib()
    iso.new(interchange_level=3, rock_ridge="1.09", vol_ident=volume[:32].upper().replace("-", "_"))
    iso_dirs = {"": "/"}
    counters = {}
    handles = []

    def iso_dir(rel):
        if rel in iso_dirs:
            return iso_dirs[rel]
        parent = iso_dir(posixpath.dirname(rel))
        counters[parent] = counters.get(parent, 0) + 1
        path = "%sD%06d" % ("/" if parent == "/" else parent + "/", counters[parent])
        iso.add_directory(path, rr_name=posixpath.basename(rel))
        iso_dirs[rel] = path
        return path

    try:
        members = [(f, os.path.join(src, f)) for f in files] + sorted(extra.items())
        for rel, what in members:
            parent = iso_dir(posixpath.dirname(rel))
            counters[parent] = counters.get(parent, 0) + 1
            path = "%sF%06d.;1" % ("/" if parent == "/" else parent + "/", counters[parent])
            if isinstance(what, bytes):
                fp = io.BytesIO(what)
                size = len(what)
            else:
                fp = open(what, "rb")  # noqa: SIM115 - pycdlib reads it at write time
                handles.append(fp)
                size = os.path.getsize(what)
            iso.add_fp(fp, size, path, rr_name=posixpath.basename(rel))
        iso.write(out_path)
    finally:
        iso.close()
        for h in handles:
            h.close()


def build_archive(src, out_path, key_path=None, fmt=None):
    """Build a solution archive from the directory ``src``; validate it; return the summary.

    Writes ``SHA256SUMS`` over every file (and ``SHA256SUMS.sig`` when ``key_path`` names
    an Ed25519 private key), then the archive, atomically. The result is validated before
    it replaces ``out_path``; an invalid source leaves ``out_path`` untouched.
    """
    require(HAS_YAML, "PyYAML", YAML_IMPORT_ERROR)
    if not os.path.isdir(src):
        raise SolutionError("%s: not a directory" % src)
    fmt = archive_format(out_path, fmt)
    key = load_private_key(key_path) if key_path else None
    files, problems = _source_files(src)
    if problems:
        raise SolutionError("%s: cannot build a solution archive" % src, problems)
    sums = sums_text(src, files)
    extra = {SUMS: sums}
    if key is not None:
        extra[SIGNATURE] = sign(key, sums)
    volume = "SOLUTION"
    try:
        with open(os.path.join(src, MANIFEST), "rb") as f:
            meta = yaml.safe_load(f) or {}
        volume = "%s_%s" % (meta["metadata"]["name"], meta["spec"]["version"])
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        pass  # validation below reports the manifest's problems
    volume = re.sub(r"[^A-Za-z0-9_]", "_", volume)
    out_dir = os.path.dirname(os.path.abspath(out_path))
    fd, tmp = tempfile.mkstemp(prefix=".solution-", dir=out_dir)
    try:
        if fmt == "iso":
            os.close(fd)
            _write_iso(tmp, src, files, extra, volume)
        else:
            with os.fdopen(fd, "wb") as out:
                _write_tar(out, src, files, extra, fmt == "tar.gz")
        pub_tmp = None
        if key is not None:
            fd2, pub_tmp = tempfile.mkstemp(prefix=".solution-pub-", dir=out_dir)
            with os.fdopen(fd2, "wb") as f:
                f.write(ed25519.public_pem(key))
        try:
            summary = validate_archive(tmp, pubkey_path=pub_tmp)
        except SolutionError as exc:
            raise SolutionError(
                "%s: not built, the result would be invalid" % out_path,
                [p.replace(tmp, out_path, 1) for p in exc.problems],
            ) from None
        finally:
            if pub_tmp:
                os.unlink(pub_tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out_path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    summary["archive_sha256"] = file_sha256(out_path)
    return summary


def generate_key(private_path, public_path):
    """Write a new Ed25519 key pair (private key 0600, PEM) for signing solution archives."""
    require(ed25519.cryptography_error() is None, "cryptography", ed25519.cryptography_error())
    if os.path.exists(private_path):
        raise SolutionError("%s: already exists; refusing to overwrite a private key" % private_path)
    key = ed25519.new_private_key()
    ed25519.write_private_key(private_path, key, exclusive=True)
    with open(public_path, "wb") as f:
        f.write(ed25519.public_pem(key))


# ---------------------------------------------------------------------------------------
# Export images for containerd (after validation)
# ---------------------------------------------------------------------------------------


def repository(prefix, name, version):
    """The repository of a solution version: ``<prefix>/<name>-<version>``."""
    return "%s/%s-%s" % (prefix.rstrip("/"), name, version)


def image_ref(prefix, name, version, image, tag):
    return "%s/%s:%s" % (repository(prefix, name, version), image, tag)


def export_images(archive_path, summary, prefix, dest, check_mode=False):
    """Write one OCI archive tar per image of a *validated* archive into ``dest``.

    Each tar is the image's OCI layout with ``index.json`` annotated so that
    ``ctr images import`` names the image ``<prefix>/<name>-<version>/<image>:<tag>``.
    Tars are deterministic; one already present with the same content is kept.
    Returns ``(images, changed)`` with images a list of dicts (ref, digest, file, sha256).
    In ``check_mode`` nothing is written; ``changed`` says whether something would be.
    """
    name, version = summary["name"], summary["version"]
    if not check_mode:
        os.makedirs(dest, exist_ok=True)
    reader = open_archive(archive_path)
    images, changed = [], False
    try:
        files = {}
        for e in reader.entries:
            path, problem = _safe_path(e.path)
            if not problem and e.kind == "file":
                files[path] = e
        for img in summary["images"]:
            root = "images/%s/%s/" % (img["name"], img["tag"])
            ref = image_ref(prefix, name, version, img["name"], img["tag"])
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for path in sorted(p for p in files if p.startswith(root)):
                    rel = path[len(root):]
                    data = io.BytesIO()
                    reader.stream(files[path], data)
                    content = data.getvalue()
                    if rel == "index.json":
                        index = json.loads(content.decode("utf-8"))
                        for m in index["manifests"]:
                            ann = dict(m.get("annotations") or {})
                            ann[ANN_CONTAINERD_NAME] = ref
                            ann[ANN_REF_NAME] = img["tag"]
                            m["annotations"] = ann
                        content = json.dumps(index, sort_keys=True, separators=(",", ":")).encode("utf-8")
                    ti = tarfile.TarInfo(rel)
                    ti.size = len(content)
                    ti.mode = 0o644
                    tar.addfile(ti, io.BytesIO(content))
            blob = buf.getvalue()
            digest = hashlib.sha256(blob).hexdigest()
            fname = "%s_%s.oci.tar" % (img["name"].replace("/", "_"), img["tag"])
            target = os.path.join(dest, fname)
            if not (os.path.isfile(target) and file_sha256(target) == digest):
                changed = True
                if not check_mode:
                    fd, tmp = tempfile.mkstemp(prefix=".image-", dir=dest)
                    with os.fdopen(fd, "wb") as f:
                        f.write(blob)
                    os.chmod(tmp, 0o644)
                    os.replace(tmp, target)
            images.append({"ref": ref, "digest": img["digest"], "file": target, "sha256": digest,
                           "name": img["name"], "tag": img["tag"]})
    finally:
        reader.close()
    return images, changed
