# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the solution archive's layout, its limits, and safe member paths.

A solution archive is an ISO 9660 image with Rock Ridge names (read and written with
``pycdlib``) or a tar (optionally gzip-compressed) holding::

    manifest.yaml            kind: Solution (apiVersion solutions.mooring.io/v1alpha1)
    images/<name>/<tag>/     one OCI image layout per image listed in spec.images
    operator/deploy/*.yaml   CRDs, RBAC and the operator Deployment
    SHA256SUMS               "<sha256>  <path>" for every other file
    SHA256SUMS.sig           base64 Ed25519 signature over SHA256SUMS (optional)

This module holds those names and the limits of every read, the optional libraries of
solutions/, :class:`SolutionError`, one archive member (:class:`Entry`) and what makes a member
path safe. The manifest's shape is in :mod:`solutions.manifest`, reading an archive in
:mod:`solutions.archive` (:mod:`solutions.tarread`, :mod:`solutions.isoread`), validation in
:mod:`solutions.validate`, building in :mod:`solutions.build`, image export in
:mod:`solutions.images`. Everything here runs on the controller: hosts only ever receive
what passed validation.
"""


from __future__ import annotations

import posixpath
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, missing_library

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
    # isoread and build take pycdlib from here
    import pycdlib  # pylint: disable=unused-import

    HAS_PYCDLIB = True
    PYCDLIB_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - depends on the environment
    pycdlib = None
    HAS_PYCDLIB = False
    PYCDLIB_IMPORT_ERROR = _exc


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
# What a RoleBinding or ClusterRoleBinding of an operator may not grant unless the operator allows it
# for that archive (allow_broad_rbac): the ClusterRole cluster-admin to anyone, or any role to one
# of these subjects ((kind, name): who that is).
BROAD_ROLES = frozenset(["cluster-admin"])
BROAD_SUBJECTS = {
    ("Group", "system:authenticated"): "every signed-in user",
    ("Group", "system:unauthenticated"): "every anonymous request",
    ("Group", "system:anonymous"): "anonymous requests",
    ("User", "system:anonymous"): "anonymous requests",
    ("Group", "system:serviceaccounts"): "every service account of the cluster",
}

MAX_MANIFEST_BYTES = 64 * 1024
MAX_SUMS_BYTES = 8 * 1024 * 1024
MAX_JSON_BYTES = 4 * 1024 * 1024
MAX_OPERATOR_FILE_BYTES = 4 * 1024 * 1024
MAX_ENTRIES = 100000
MAX_INDEX_DEPTH = 3
MAX_KEY_BYTES = 64 * 1024
# Unpacked-size budget of an archive: never more than MAX_UNPACKED_BYTES; for a compressed tar
# (and for the files of an ISO, a hard-linked file counted once per name) also at most MAX_RATIO
# times the archive file (image layers are compressed already, so a real solution is close to
# 1:1), but never less than RATIO_FLOOR: unpacked_budget().
MAX_UNPACKED_BYTES = 64 * 1024 ** 3
MAX_RATIO = 100
RATIO_FLOOR = 64 * 1024 * 1024
# What may follow the last member of a compressed tar (end-of-archive blocks, record padding).
MAX_TRAILER = 1024 * 1024
MAX_PROBLEMS_SHOWN = 30

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
# A descriptor's digest; group 1 is the bare hex, the name of the blob's file.
DIGEST = re.compile(r"^sha256:([0-9a-f]{64})\Z")


def unpacked_budget(size):
    """How many bytes the members of an archive file of ``size`` bytes may hold in all (see MAX_RATIO)."""
    return min(MAX_UNPACKED_BYTES, max(MAX_RATIO * size, RATIO_FLOOR))


class SolutionError(MooringError):
    """A solution archive (or a request about one) is invalid; one problem per line."""


def require(flag, name, error):
    """Raise the SolutionError naming the pip package ``name`` when ``flag`` (its HAS_ guard) is false."""
    if not flag:
        raise missing_library(name, "for solution archives", error, SolutionError)


class Entry:
    """One member of an archive. ``kind``: file, dir, symlink, hardlink or other."""

    __slots__ = ("path", "kind", "size", "target", "raw")

    def __init__(self, path, kind, size=0, target=None, raw=None):
        self.path = path
        self.kind = kind
        self.size = size
        self.target = target
        self.raw = raw


MAX_PATH = 512


def safe_path(raw):
    """(normalised path, problem or None) for a member name."""
    if "\x00" in raw or "\\" in raw:
        return raw, "invalid character in the path"
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        return raw, "the name is not UTF-8"
    if not raw.isprintable():
        return raw, "control or other non-printable character in the path"
    if len(raw) > MAX_PATH:
        return raw, "path longer than %d characters" % MAX_PATH
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


def link_escapes(path, target, hard=False):
    """True when a link at ``path`` to ``target`` (a hard link's target is from the root) leaves the archive root."""
    if target.startswith("/"):
        return True
    base = "" if hard else posixpath.dirname(path)
    joined = posixpath.normpath(posixpath.join("/root", base, target))
    return not (joined == "/root" or joined.startswith("/root/"))
