# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: writing a bundle file (one tar stream, bundle.format) from its signed manifest
and the cached packages, copied in the kernel when it can (copy_file_range).
"""

from __future__ import annotations

import io
import os
import tarfile

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import sbom
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.format import MANIFEST_NAME, SIGNATURE_NAME, BundleError, ChecksumError, tarinfo
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.progress import human
from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import CHUNK, sha256_file


def check_output(output):
    """Refuse, before anything is built, a bundle path that cannot be written as a file: a directory,
    an existing special file, or a path below something that is not a directory (missing
    directories are created)."""
    if not isinstance(output, str) or not output:
        raise BundleError("output: a bundle file path is required")
    if os.path.isdir(output):
        raise BundleError("output %s: is a directory; name the bundle file to write" % output)
    if os.path.lexists(output) and not os.path.isfile(output):
        raise BundleError("output %s: exists and is not a regular file" % output)
    sbom_file = sbom.sbom_path(output)
    if os.path.lexists(sbom_file) and not os.path.isfile(sbom_file):
        raise BundleError("output %s: its SBOM path %s exists and is not a regular file" % (output, sbom_file))
    check_directory(os.path.dirname(os.path.abspath(output)), "output %s:" % output)


def check_directory(path, what):
    """``path`` is a directory, or can be made one: its nearest existing ancestor is a directory."""
    path = os.path.abspath(path)
    if os.path.lexists(path) and not os.path.isdir(path):
        raise BundleError("%s %s is not a directory" % (what, path))
    parent = path
    while not os.path.lexists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise BundleError("%s %s is not a directory" % (what, parent))


def _write_member(out, name, size, src, counter=None):
    """Append one tar member. File sources are copied in the kernel (copy_file_range) when possible,
    so assembling a bundle from cached packages does not read them through Python."""
    out.write(tarinfo(name, size).tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))
    out.flush()
    copied = 0
    fileno = getattr(src, "fileno", None)
    if fileno is not None and hasattr(os, "copy_file_range"):
        try:
            in_fd, out_fd = src.fileno(), out.fileno()
            while copied < size:
                n = os.copy_file_range(in_fd, out_fd, min(size - copied, 1 << 30))
                if n == 0:
                    break
                copied += n
        except (OSError, io.UnsupportedOperation):
            copied = 0
            src.seek(0)
            out.seek(0, os.SEEK_END)
    if copied == 0 and size:
        while copied < size:
            chunk = src.read(min(CHUNK, size - copied))
            if not chunk:
                break
            out.write(chunk)
            copied += len(chunk)
        if counter is not None and fileno is not None:
            counter["bytes_read"] += copied
    if copied != size:
        raise BundleError("bundle member %s: expected %d bytes, copied %d" % (name, size, copied))
    out.write(b"\0" * (-size % tarfile.BLOCKSIZE))
    return copied


def bundle_size(data, signature, metas):
    """The size of the bundle file :func:`write_bundle` writes for bundle.json ``data``, its ``signature`` and ``metas``."""
    def member(size):
        return 512 + (size + 511) // 512 * 512
    total = member(len(data)) + member(len(signature)) + sum(member(m["size"]) for m in metas)
    total += 1024
    return (total + tarfile.RECORDSIZE - 1) // tarfile.RECORDSIZE * tarfile.RECORDSIZE


def _add_package(out, cache, meta, sink, counter, verify_cache):
    """Append the cached package ``meta`` (re-hashed first when ``verify_cache``)."""
    tar_path = cache.paths(meta["key"])[0]
    sink.say("adding %s (%s)" % (meta["file"], human(meta["size"])))
    with open(tar_path, "rb") as src:
        if verify_cache:
            actual, _size = sha256_file(tar_path, counter)
            if actual != meta["sha256"]:
                raise ChecksumError("cached package %s (%s): sha256 mismatch: expected %s, got %s; delete "
                                    "it from %s and build again" % (meta["addon"], tar_path, meta["sha256"],
                                                                    actual, cache.root))
        counter["bytes_copied"] += _write_member(out, meta["file"], meta["size"], src, counter)


def write_bundle(output, data, signature, metas, cache, sink, counter, verify_cache=False):
    """Write the bundle to ``output`` in one rename (fileio.atomic_output, mode 0644): bundle.json, its
    signature, every cached package of ``metas``, then the end-of-archive blocks padded to a full record."""
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with fileio.atomic_output(output, 0o644) as out:
        _write_member(out, MANIFEST_NAME, len(data), io.BytesIO(data))
        _write_member(out, SIGNATURE_NAME, len(signature), io.BytesIO(signature))
        for meta in metas:
            _add_package(out, cache, meta, sink, counter, verify_cache)
        out.write(b"\0" * (2 * tarfile.BLOCKSIZE))
        pad = -out.tell() % tarfile.RECORDSIZE
        out.write(b"\0" * pad)
        out.flush()
        os.fsync(out.fileno())
