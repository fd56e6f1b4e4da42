# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: building a solution archive (ISO 9660 or tar) from a source tree.

The archive is written with its SHA256SUMS (and signature, given a key) to a temporary file
next to the output, validated by :func:`solutions.validate.validate_archive`, and only then
renamed into place; an output in a missing directory, below a file, onto a directory or onto
anything but a regular file is refused before anything is written. :func:`generate_key` writes
a key pair all or nothing, never over an existing file, never both keys to one path.
"""


from __future__ import annotations

import base64
import errno
import io
import os
import posixpath
import re
import stat
import tarfile
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio, yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.checksums import file_sha256
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.keys import load_private_key
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    HAS_PYCDLIB,
    HAS_YAML,
    MANIFEST,
    MAX_MANIFEST_BYTES,
    PYCDLIB_IMPORT_ERROR,
    SIGNATURE,
    SUMS,
    YAML_IMPORT_ERROR,
    SolutionError,
    pycdlib,
    require,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.validate import validate_archive

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
        for d in list(dirnames):
            if not _utf8(d) or not d.isprintable():
                problems.append("%s: the directory name %s is not printable UTF-8" % (dirpath, excerpt(d)))
                dirnames.remove(d)
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, src).replace(os.sep, "/")
            if not _utf8(f) or not f.isprintable():
                problems.append("%s: the file name %s is not printable UTF-8" % (dirpath, excerpt(f)))
                continue
            st = os.lstat(full)
            if not stat.S_ISREG(st.st_mode):
                problems.append("%s: only regular files are allowed in a solution" % full)
                continue
            if rel in (SUMS, SIGNATURE):
                continue  # regenerated
            files.append(rel)
    return sorted(files), problems


def _utf8(name):
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def check_output(out_path):
    """Refuse an output path that cannot take a new file: its directory missing or not a
    directory, or the path itself a directory or anything but a regular file."""
    out_dir = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(out_dir):
        state = "is not a directory" if os.path.lexists(out_dir) else "does not exist"
        raise SolutionError("%s: the directory %s %s" % (out_path, out_dir, state))
    if os.path.isdir(out_path):
        raise SolutionError("%s: is a directory; give the archive's file name" % out_path)
    if os.path.lexists(out_path) and not os.path.isfile(out_path) and not os.path.islink(out_path):
        raise SolutionError("%s: exists and is not a regular file; refusing to replace it" % out_path)
    return out_dir


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


def _write_iso(out, src, files, extra, volume):
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
        iso.write_fp(out)
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
    out_dir = check_output(out_path)
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
        meta = yamlio.load_file(os.path.join(src, MANIFEST), max_bytes=MAX_MANIFEST_BYTES, max_aliases=0)
        volume = "%s_%s" % (meta["metadata"]["name"], meta["spec"]["version"])
    except (yamlio.YamlInputError, KeyError, TypeError, IndexError):
        pass  # validation below reports the manifest's problems
    volume = re.sub(r"[^A-Za-z0-9_]", "_", str(volume))
    summary = {}

    def validated(tmp):  # the complete temporary file, before it gets its name
        summary.update(_validate_built(tmp, out_path, out_dir, key))

    with fileio.atomic_output(out_path, 0o644, check=validated) as out:
        if fmt == "iso":
            _write_iso(out, src, files, extra, volume)
        else:
            _write_tar(out, src, files, extra, fmt == "tar.gz")
    summary["archive_sha256"] = file_sha256(out_path)
    return summary


def _validate_built(tmp, out_path, out_dir, key):
    """The summary of the archive just written to ``tmp``; its problems named as ``out_path``'s."""
    pub_tmp = None
    if key is not None:
        fd, pub_tmp = tempfile.mkstemp(prefix=".solution-pub-", dir=out_dir)
        with os.fdopen(fd, "wb") as f:
            f.write(ed25519.public_pem(key))
    try:
        # a broad RBAC grant is the operator's to allow at import: here it is a warning
        return validate_archive(tmp, pubkey_path=pub_tmp, allow_broad_rbac=True)
    except SolutionError as exc:
        raise SolutionError(
            "%s: not built, the result would be invalid" % out_path,
            [p.replace(tmp, out_path, 1) for p in exc.problems],
        ) from None
    finally:
        if pub_tmp:
            os.unlink(pub_tmp)


def _same_file(a, b):
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _place_new(tmp, path):
    """Give the complete temporary file ``tmp`` also the name ``path``, which must not exist.

    A hard link never replaces an existing file (EEXIST instead); where a file system has no
    hard links, a rename after one more look. The caller removes ``tmp`` when it is left."""
    try:
        os.link(tmp, path)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "File exists", path) from None
        os.rename(tmp, path)


def generate_key(private_path, public_path):
    """Write a new Ed25519 key pair (private key 0600, PEM) for signing solution archives.

    All or nothing: refused when the two paths name one file, when either exists, or when a
    directory is missing; both keys are written to temporary files in their directories and
    then given their names, and when anything fails neither file exists afterwards."""
    require(ed25519.cryptography_error() is None, "cryptography", ed25519.cryptography_error())
    if _same_file(private_path, public_path):
        raise SolutionError("%s and %s are the same file; the private and the public key need two paths"
                            % (private_path, public_path))
    for path, what in ((private_path, "private"), (public_path, "public")):
        if os.path.lexists(path):
            raise SolutionError("%s: already exists; refusing to overwrite it with a new %s key" % (path, what))
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            state = "is not a directory" if os.path.lexists(directory) else "does not exist"
            raise SolutionError("%s: the directory %s %s" % (path, directory, state))
    key = ed25519.new_private_key()
    temps, placed = [], []
    try:
        for path, data, mode in ((private_path, ed25519.private_pem(key), 0o600),
                                 (public_path, ed25519.public_pem(key), 0o644)):
            fd, tmp = tempfile.mkstemp(prefix=".%s-" % os.path.basename(path), dir=os.path.dirname(os.path.abspath(path)))
            temps.append(tmp)
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        for tmp, path in zip(temps, (private_path, public_path)):
            _place_new(tmp, path)
            placed.append(path)
    except BaseException:
        for path in placed:
            os.unlink(path)
        raise
    finally:
        for tmp in temps:
            if os.path.lexists(tmp):
                os.unlink(tmp)
