# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the solution archive format, and reading it.

A solution archive is an ISO 9660 image with Rock Ridge names (read and written with
``pycdlib``) or a tar (optionally gzip-compressed) holding::

    manifest.yaml            kind: Solution (apiVersion solutions.mooring.io/v1alpha1)
    images/<name>/<tag>/     one OCI image layout per image listed in spec.images
    operator/deploy/*.yaml   CRDs, RBAC and the operator Deployment
    SHA256SUMS               "<sha256>  <path>" for every other file
    SHA256SUMS.sig           base64 Ed25519 signature over SHA256SUMS (optional)

This module holds the format (names, limits, the manifest schema), one reader interface over
tar and ISO 9660, safe member paths and the signing keys. Validation is in
:mod:`solutions.validate`, building in :mod:`solutions.build`, image export in
:mod:`solutions.images`. Everything here runs on the controller: hosts only ever receive
what passed validation.
"""


from __future__ import annotations

import os
import posixpath
import re
import tarfile

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

# The optional libraries of solutions/, guarded once here (the other modules import them from here).
try:
    import yaml  # pylint: disable=unused-import

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - depends on the environment
    yaml = None
    HAS_YAML = False
    YAML_IMPORT_ERROR = _exc

try:
    import pycdlib

    HAS_PYCDLIB = True
    PYCDLIB_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - depends on the environment
    pycdlib = None
    HAS_PYCDLIB = False
    PYCDLIB_IMPORT_ERROR = _exc

try:
    import jsonschema  # pylint: disable=unused-import

    HAS_JSONSCHEMA = True
    JSONSCHEMA_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - depends on the environment
    jsonschema = None
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
    except OSError as exc:
        raise SolutionError("%s: cannot load the Ed25519 public key (PEM): %s" % (path, exc)) from exc
    except ed25519.NotEd25519Error as exc:
        raise SolutionError("%s: the public key is not an Ed25519 key" % path) from exc


def load_private_key(path):
    require(ed25519.cryptography_error() is None, "cryptography", ed25519.cryptography_error())
    try:
        return ed25519.load_private_key(path)
    except ed25519.NotEd25519Error as exc:
        raise SolutionError("%s: the private key is not an Ed25519 key" % path) from exc
    except ed25519.KeyFileError as exc:
        raise SolutionError("%s: cannot load the Ed25519 private key (unencrypted PEM): %s" % (path, exc)) from exc


def file_sha256(path):
    return sha256_file(path)[0]
