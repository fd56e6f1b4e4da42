# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: writing files atomically, and only when their content changes.

Standard library only. Every file the collection writes on the controller (locks, keys,
certificates, kubeconfigs, inventories, stack files) goes through :func:`write_atomic`: a
temporary file in the same directory whose mode is set before any byte is written, then a
rename, so a reader never sees half a file and a secret is never readable by others.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import PathEscapeError  # noqa: F401 - re-exported

# A name that becomes one path component: letters, digits, ".", "_", "-", "+", "~", ":" and "@";
# not '.' or '..', no separator, at most 128 characters.
SAFE_NAME = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9_.+~:@-]{1,128}$")


def safe_name(value, what):
    """``value`` when it is a safe single path component (:data:`SAFE_NAME`); else PathEscapeError."""
    if not isinstance(value, str) or not SAFE_NAME.match(value):
        shown = repr(value)
        raise PathEscapeError("%s %s is not a safe name (letters, digits and . _ - + ~ : @; no '/' or '..')"
                              % (what, shown if len(shown) <= 80 else shown[:77] + "..."))
    return value


def file_kind(path):
    """``(os.stat result, kind)`` of ``path`` without opening it (a FIFO would block a reader):
    kind is ``"file"``, ``"directory"`` or ``"special"``. A path that cannot be stat-ed raises its OSError."""
    st = os.stat(path)
    if stat.S_ISREG(st.st_mode):
        return st, "file"
    return st, "directory" if stat.S_ISDIR(st.st_mode) else "special"


def under_root(root, *parts):
    """``os.path.join(root, *parts)`` after checking it stays under ``root`` once symlinks are
    resolved (for what exists of it); else PathEscapeError. The path need not exist."""
    real_root = os.path.realpath(root)
    path = os.path.join(root, *parts)
    real = os.path.realpath(path)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise PathEscapeError("%s resolves outside %s" % (os.path.join(*parts) if parts else path, root))
    return path


def _as_bytes(data):
    return data.encode("utf-8") if isinstance(data, str) else data


def write_atomic(path, data, mode=0o644, owner=None, check=None):
    """Write ``data`` (bytes or text, UTF-8) to ``path`` through a temporary file and a rename.

    The directory must exist. ``mode`` (and ``owner``, a ``(uid, gid)`` pair) is set on the temporary
    file before anything is written. ``check(tmp_path)``, when given, runs on the complete temporary
    file before the rename; if it raises, the temporary file is removed and ``path`` is untouched.
    """
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s-" % os.path.basename(path), dir=directory)
    try:
        os.fchmod(fd, mode)
        if owner is not None:
            os.fchown(fd, *owner)
        with os.fdopen(fd, "wb") as handle:
            handle.write(_as_bytes(data))
        if check is not None:
            check(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_if_exists(path):
    """The bytes of ``path``, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def write_if_changed(path, data, mode=0o644, dir_mode=0o755, check_mode=False):
    """Write ``data`` to ``path`` (atomically) unless it already holds exactly that; True when it changed.

    The directory is created (``dir_mode``) when missing. In ``check_mode`` nothing is written;
    the return value says whether something would be.
    """
    data = _as_bytes(data)
    if read_if_exists(path) == data:
        return False
    if not check_mode:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=dir_mode, exist_ok=True)
        write_atomic(path, data, mode)
    return True
