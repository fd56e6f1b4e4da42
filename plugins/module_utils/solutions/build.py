# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: building a solution archive (ISO 9660 or tar) from a source tree.

The archive is written with its SHA256SUMS (and signature, given a key) and validated by
:func:`solutions.validate.validate_archive` before it is renamed into place.
"""


from __future__ import annotations

import base64
import io
import os
import posixpath
import re
import stat
import tarfile
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.archive import (
    HAS_PYCDLIB,
    HAS_YAML,
    MANIFEST,
    PYCDLIB_IMPORT_ERROR,
    SIGNATURE,
    SUMS,
    YAML_IMPORT_ERROR,
    SolutionError,
    file_sha256,
    load_private_key,
    pycdlib,
    require,
    yaml,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.validate import (
    validate_archive,
)

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
