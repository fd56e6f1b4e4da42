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
tar and ISO 9660, safe member paths and the signing keys.

The readers trust nothing in the file: only a regular file is opened (once, never a FIFO or a
directory); the compression is told by its magic bytes; every header is measured before tarfile
reads what it announces (``common/tarsafe.py``: no pax header or GNU long name over 1 MiB); no
read goes past the unpacked-size budget, and a member whose declared size would take the archive
past that budget (:data:`MAX_UNPACKED_BYTES`, and for a compressed tar :data:`MAX_RATIO` times
the file's size, at least :data:`RATIO_FLOOR`) is refused from its header, before a byte of it is
decompressed. So a small compressed file that unpacks to gigabytes is refused at once.
Validation is in :mod:`solutions.validate`, building in :mod:`solutions.build`, image export in
:mod:`solutions.images`. Everything here runs on the controller: hosts only ever receive
what passed validation.
"""


from __future__ import annotations

import bz2
import gzip
import os
import posixpath
import re
import stat
import tarfile
import zlib

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio, tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.yamlio import excerpt

try:
    import lzma

    _LZMA_ERRORS = (lzma.LZMAError,)
except ImportError:  # pragma: no cover - a Python built without lzma
    lzma = None
    _LZMA_ERRORS = ()

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
MAX_KEY_BYTES = 64 * 1024
# Unpacked-size budget of an archive: never more than MAX_UNPACKED_BYTES; for a compressed tar
# also at most MAX_RATIO times the compressed file (image layers are compressed already, so a
# real solution is close to 1:1), but never less than RATIO_FLOOR.
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

# Patterns end with \Z, not $: jsonschema searches with Python's re, where $ also matches
# before a final newline ("example\n" would pass and become part of a path).
NAME_RE = r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?\Z"
IMAGE_NAME_RE = r"^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*\Z"
TAG_RE = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z"
VERSION_RE = (
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?\Z"
)
_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")
_DIGEST = re.compile(r"^sha256:([0-9a-f]{64})\Z")

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
        raise missing_library(name, "for solution archives", error, SolutionError)


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


class _TooLarge(Exception):
    """Raised by :class:`_Bounded` inside tarfile; turned into a SolutionError by the reader."""


class _Bounded(object):
    """A file object for tarfile that refuses an unbounded read and anything past ``limit`` (the
    headers themselves are measured by common/tarsafe.py before tarfile reads them)."""

    def __init__(self, fp, limit):
        self._fp = fp
        self.limit = limit
        self.last_block = (None, b"")  # (offset, bytes) of the last block-sized read: the end marker

    def read(self, size=-1):
        if size is None or size < 0:
            raise _TooLarge("an unbounded read of the tar stream")
        where = self._fp.tell()
        if where + size > self.limit + 512 * 1024:  # a bit of slack for the end-of-archive blocks
            raise _TooLarge("the members unpack to more than %d bytes" % self.limit)
        data = self._fp.read(size)
        if size == tarfile.BLOCKSIZE:
            self.last_block = (where, data)
        return data

    def seek(self, pos, whence=0):
        if whence == 0 and pos > self.limit:
            raise _TooLarge("the members unpack to more than %d bytes" % self.limit)
        return self._fp.seek(pos, whence)

    def tell(self):
        return self._fp.tell()


_READ_ERRORS = (tarfile.TarError, OSError, EOFError, ValueError, OverflowError, zlib.error, UnicodeError,
                _TooLarge, tarsafe.HeaderBoundError) + _LZMA_ERRORS
_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


class TarReader:
    """A tar (plain, gzip, bzip2 or xz), read through :class:`_Bounded` with its headers measured
    (common/tarsafe.py): members are listed from their headers only, and one whose size goes past
    the budget is refused from its header."""

    format = "tar"

    def __init__(self, fp, path, size, compression=None):
        self.path = path
        self._fp = fp
        if compression is None:
            limit = size
            inner = fp
        else:
            limit = min(MAX_UNPACKED_BYTES, max(MAX_RATIO * size, RATIO_FLOOR))
            if compression == "gzip":
                inner = gzip.GzipFile(fileobj=fp, mode="rb")
            elif compression == "bzip2":
                inner = bz2.BZ2File(fp, mode="rb")
            elif lzma is not None:
                inner = lzma.LZMAFile(fp, mode="rb")
            else:  # pragma: no cover
                fp.close()
                raise SolutionError("%s: an xz-compressed file, and this Python has no lzma module" % path)
        self._inner = inner
        self._bounded = _Bounded(inner, limit)
        self.entries = []
        try:
            self._tar = tarsafe.open_tar(fileobj=self._bounded, mode="r:")  # noqa: SIM115 - closed by close()
            self._list(limit)
        except tarfile.ReadError as exc:
            self.close()
            if not self.entries and str(exc) != "unexpected end of data" and not str(exc).startswith("zlib error"):
                what = "not an ISO 9660 image or a tar archive" if compression is None else \
                    "%s-compressed, but not a tar archive" % compression
                raise SolutionError("%s: %s" % (path, what)) from None
            raise SolutionError("%s: cannot read the tar archive: %s" % (path, excerpt(str(exc), 200))) from None
        except tarsafe.HeaderBoundError as exc:
            self.close()
            raise SolutionError("%s: refused: %s" % (path, exc)) from None
        except _TooLarge as exc:
            self.close()
            raise SolutionError("%s: refused: %s%s" % (path, exc, "" if compression is None else
                                                       " (a compressed tar may unpack to %d times its size, at least %d MiB)"
                                                       % (MAX_RATIO, RATIO_FLOOR >> 20))) from None
        except SolutionError:
            self.close()
            raise
        except _READ_ERRORS as exc:
            self.close()
            raise SolutionError("%s: cannot read the tar archive: %s" % (path, excerpt(str(exc) or type(exc).__name__, 200))) from None

    def _list(self, limit):
        total = 0
        while True:
            m = self._tar.next()
            if m is None:
                break
            if len(self.entries) >= MAX_ENTRIES:
                raise SolutionError("%s: more than %d members, the limit" % (self.path, MAX_ENTRIES))
            if m.isreg() and m.issparse():
                kind = "sparse"
            elif m.isreg():
                kind = "file"
            elif m.isdir():
                kind = "dir"
            elif m.issym():
                kind = "symlink"
            elif m.islnk():
                kind = "hardlink"
            else:
                kind = "other"
            size = m.size if kind == "file" else 0
            total += size
            if m.offset_data + m.size > limit or total > limit:
                raise _TooLarge("member %s declares %d bytes, past the budget of %d bytes for this archive"
                                % (excerpt(m.name, 120), m.size, limit))
            self.entries.append(Entry(m.name, kind, size, m.linkname or None, m))
        self._check_end()

    def _check_end(self):
        """A tar must end with an end-of-archive block (tarfile stops quietly at a cut-off or
        corrupt header: that is refused here), and a compressed one where its compression says:
        what follows (the record's padding) is read to the end of the stream, so that a cut-off
        file is refused, and more than MAX_TRAILER bytes there are refused."""
        # the block tarfile read where it stopped (seeking back would make gzip start over)
        where, block = self._bounded.last_block
        if where != self._tar.offset or len(block) < tarfile.BLOCKSIZE or block.strip(b"\0"):
            raise SolutionError("%s: cut off or corrupt after %d members: no end-of-archive block at offset %d"
                                % (self.path, len(self.entries), self._tar.offset))
        if self._inner is self._fp:
            return
        left = MAX_TRAILER
        while True:
            chunk = self._inner.read(min(left + 1, 64 * 1024))
            if not chunk:
                return
            left -= len(chunk)
            if left < 0:
                raise SolutionError("%s: more than %d bytes after the end of the tar archive" % (self.path, MAX_TRAILER))

    def stream(self, entry, out):
        try:
            f = self._tar.extractfile(entry.raw)
            while True:
                chunk = f.read(1024 * 1024)
                if not chunk:
                    break
                out.write(chunk)
        except _READ_ERRORS as exc:
            raise SolutionError("%s: %s: cannot read the member: %s"
                                % (self.path, excerpt(entry.path, 120), excerpt(str(exc) or type(exc).__name__, 200))) from None

    def close(self):
        tar = getattr(self, "_tar", None)
        try:
            if tar is not None:
                tar.close()
            if self._inner is not self._fp:
                self._inner.close()
        except _READ_ERRORS:
            pass
        finally:
            self._fp.close()


class IsoReader:
    """An ISO 9660 image with Rock Ridge names (pycdlib); every file's data lies inside the image."""

    format = "iso"

    def __init__(self, fp, path, size):
        require(HAS_PYCDLIB, "pycdlib", PYCDLIB_IMPORT_ERROR)
        self.path = path
        self._fp = fp
        self._iso = pycdlib.PyCdlib()
        try:
            self._iso.open_fp(fp)
        except Exception as exc:  # pycdlib raises several unrelated types on corrupt images
            fp.close()
            raise SolutionError("%s: cannot read the ISO 9660 image: %s" % (path, excerpt(str(exc), 200))) from None
        try:
            if not self._iso.has_rock_ridge():
                raise SolutionError(
                    "%s: the ISO 9660 image has no Rock Ridge names; build it with `mooring solution build`" % path
                )
            self.entries = []
            total = 0
            for dirpath, dirs, files in self._iso.walk(rr_path="/"):
                base = dirpath.strip("/")
                if len(self.entries) + len(dirs) + len(files) > MAX_ENTRIES:
                    raise SolutionError("%s: more than %d members, the limit" % (path, MAX_ENTRIES))
                for d in dirs:
                    self.entries.append(Entry(posixpath.join(base, d), "dir"))
                for f in files:
                    rr = "/" + posixpath.join(base, f)
                    rec = self._iso.get_record(rr_path=rr)
                    rel = posixpath.join(base, f)
                    if rec.is_symlink():
                        target = rec.rock_ridge.symlink_path().decode("utf-8", "replace")
                        self.entries.append(Entry(rel, "symlink", 0, target, rr))
                        continue
                    length = rec.get_data_length()
                    total += length
                    if length > size or total > size:
                        raise SolutionError("%s: %s: declares %d bytes of data, more than the image holds"
                                            % (path, excerpt(rel, 120), length))
                    self.entries.append(Entry(rel, "file", length, None, rr))
        except SolutionError:
            self.close()
            raise
        except Exception as exc:  # pycdlib: several unrelated types on corrupt images
            self.close()
            raise SolutionError("%s: cannot read the ISO 9660 image: %s" % (path, excerpt(str(exc), 200))) from None

    def stream(self, entry, out):
        try:
            self._iso.get_file_from_iso_fp(out, rr_path=entry.raw)
        except SolutionError:
            raise
        except Exception as exc:  # pycdlib: several unrelated types on corrupt images
            raise SolutionError("%s: %s: cannot read the member: %s"
                                % (self.path, excerpt(entry.path, 120), excerpt(str(exc), 200))) from None

    def close(self):
        try:
            self._iso.close()
        except Exception:  # noqa: BLE001, S110 - closing a half-open image; nothing to report
            pass
        finally:
            self._fp.close()


def open_archive(path):
    """A reader for the archive at ``path`` (ISO 9660 or tar, detected by content).

    Only a regular file is opened (a directory, FIFO, device or socket is refused without
    reading from it); it is opened once and read through that descriptor."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise SolutionError("%s: no such archive file" % path) from None
    except OSError as exc:
        raise SolutionError("%s: cannot open the archive: %s" % (path, exc.strerror or exc)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise SolutionError("%s: is a directory, not an archive file" % path)
        if not stat.S_ISREG(st.st_mode):
            raise SolutionError("%s: not a regular file (a FIFO, device or socket); give the archive file" % path)
        fp = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    try:
        head = fp.read(6)
        fp.seek(0x8001)
        iso = fp.read(5) == b"CD001"
        fp.seek(0)
    except OSError as exc:
        fp.close()
        raise SolutionError("%s: cannot read the archive: %s" % (path, exc.strerror or exc)) from None
    if iso:
        return IsoReader(fp, path, st.st_size)
    for magic, name in _COMPRESSED:
        if head.startswith(magic):
            return TarReader(fp, path, st.st_size, name)
    return TarReader(fp, path, st.st_size)


# ---------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------


MAX_PATH = 512


def shown(path):
    """A member path as a message may show it: as it is when short and printable, else an excerpt."""
    if len(path) <= 200 and path.isprintable():
        try:
            path.encode("utf-8")
            return path
        except UnicodeEncodeError:
            pass
    return excerpt(path, 200)


def _safe_path(raw):
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
            problems.append("%s: line %d: %s: %s" % (SUMS, n, excerpt(raw, 200), bad or "path is not in normal form"))
            continue
        if path in sums:
            problems.append("%s: line %d: %s is listed twice" % (SUMS, n, shown(path)))
            continue
        sums[path] = digest
    return sums, problems


def _key_file(path, what):
    """Refuse a key path that is not a small regular file before anything reads it (a FIFO would block)."""
    try:
        st, kind = fileio.file_kind(path)
    except OSError as exc:
        raise SolutionError("%s: cannot load the Ed25519 %s key: %s" % (path, what, exc.strerror or exc)) from None
    if kind == "directory":
        raise SolutionError("%s: is a directory, not an Ed25519 %s key file" % (path, what))
    if kind == "special":
        raise SolutionError("%s: not a regular file; give the Ed25519 %s key file (PEM)" % (path, what))
    if st.st_size > MAX_KEY_BYTES:
        raise SolutionError("%s: %d bytes, too large for an Ed25519 %s key (PEM)" % (path, st.st_size, what))


def load_public_key(path):
    """The raw Ed25519 public key in the PEM file ``path`` (common/ed25519.py; no cryptography needed)."""
    _key_file(path, "public")
    try:
        return ed25519.read_public_key(path)
    except OSError as exc:
        raise SolutionError("%s: cannot load the Ed25519 public key (PEM): %s" % (path, exc.strerror or exc)) from None
    except ed25519.NotEd25519Error as exc:
        raise SolutionError("%s: the public key is not an Ed25519 key" % path) from exc


def load_private_key(path):
    require(ed25519.cryptography_error() is None, "cryptography", ed25519.cryptography_error())
    _key_file(path, "private")
    try:
        return ed25519.load_private_key(path)
    except ed25519.NotEd25519Error as exc:
        raise SolutionError("%s: the private key is not an Ed25519 key" % path) from exc
    except ed25519.KeyFileError as exc:
        raise SolutionError("%s: cannot load the Ed25519 private key (unencrypted PEM): %s"
                            % (path, excerpt(str(exc).splitlines()[0] if str(exc) else "", 200))) from None


def file_sha256(path):
    return sha256_file(path)[0]
