# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: writing files atomically, and only when their content changes.

Standard library only. Every file the collection writes on the controller (locks, keys,
certificates, kubeconfigs, inventories, stack files) goes through :func:`write_atomic`: a
temporary file in the same directory whose mode is set before any byte is written, then a
rename, so a reader never sees half a file and a secret is never readable by others.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, PathEscapeError  # noqa: F401 - re-exported


class _Refused(MooringError, OSError):
    """A file refused before or while it is read: a MooringError (one line) and an OSError (``errno``)."""

    def __init__(self, code, message):
        MooringError.__init__(self, message)
        self.errno = code
        self.strerror = message


class NotRegularFileError(_Refused):
    """A path names a directory, FIFO, device or socket where a regular file was expected."""


class TooLargeError(_Refused):
    """A file (or what was read of it) is over the bound its reader set."""


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


def _named(what, path):
    return "%s %s" % (what, path) if what else str(path)


def open_regular(path, what="file", flags=0, allow_empty=True):
    """``(file object, os.stat result)`` for the regular file at ``path``, opened for reading in binary.

    The file is opened without blocking (a FIFO or device never stalls the reader) and checked on the
    open descriptor, so nothing can be swapped in between the check and the read. A directory or
    special file is :class:`NotRegularFileError` (``what``, when not empty, names it in the message), an empty file
    when not ``allow_empty`` too; a path that cannot be opened raises its own OSError. ``flags`` are
    added to the open (``os.O_NOFOLLOW`` refuses a symbolic link).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | flags)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise NotRegularFileError(errno.EISDIR, "%s: is a directory, not a file" % _named(what, path))
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(errno.EINVAL, "%s: not a regular file (a FIFO, device or socket)" % _named(what, path))
        if not allow_empty and st.st_size == 0:
            raise NotRegularFileError(errno.EINVAL, "%s: empty file" % _named(what, path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


def open_input(path, what, error, allow_empty=True):
    """``(file object, os.stat result)`` of the input file ``path`` (a bundle, an archive: :func:`open_regular`),
    every refusal one ``error`` (a MooringError class) worded the same way whatever the input: a directory, a
    FIFO, device or socket, a missing file, an empty one (unless ``allow_empty``), one that cannot be opened."""
    try:
        handle, st = open_regular(path, what)
    except NotRegularFileError as exc:
        if exc.errno == errno.EISDIR:
            raise error("%s: is a directory, not the %s file" % (path, what)) from None
        raise error("%s: not a regular file (a FIFO, device or socket); give the %s file" % (path, what)) from None
    except FileNotFoundError:
        raise error("%s: no such %s file" % (path, what)) from None
    except OSError as exc:
        raise error("%s: cannot open the %s: %s" % (path, what, exc.strerror or exc)) from None
    if st.st_size == 0 and not allow_empty:
        handle.close()
        raise error("%s: an empty file, not the %s" % (path, what))
    return handle, st


def read_regular(path, limit, what="file", flags=0):
    """The bytes of the regular file ``path`` (:func:`open_regular`), at most ``limit``: a larger file,
    or one that grows past ``limit`` while read, is :class:`TooLargeError` (never a partial read)."""
    handle, st = open_regular(path, what, flags)
    with handle:
        if st.st_size > limit:
            raise TooLargeError(errno.EFBIG, "%s: %d bytes; the limit is %d" % (_named(what, path), st.st_size, limit))
        data = handle.read(min(st.st_size, limit) + 1)  # read(n) reserves n bytes: never the whole limit at once
        if st.st_size < len(data) <= limit:  # it grew while read: the rest, up to the limit
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise TooLargeError(errno.EFBIG, "%s: more than %d bytes; the limit is %d" % (_named(what, path), limit, limit))
    return data


def _as_bytes(data):
    return data.encode("utf-8") if isinstance(data, str) else data


@contextlib.contextmanager
def atomic_output(path, mode=0o644, check=None, owner=None):
    """A binary file object whose content replaces ``path`` in one rename when the block ends.

    The temporary file is in ``path``'s directory (which must exist), named ``.<name>-XXXX``; its
    ``mode`` (and ``owner``, a ``(uid, gid)`` pair) is set before anything is written.
    ``check(tmp_path)``, when given, runs on the complete temporary file before the rename. If the
    block or the check raises, the temporary file is removed and ``path`` is untouched.
    """
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s-" % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(fd, mode)
            if owner is not None:
                os.fchown(fd, *owner)
            yield handle
        if check is not None:
            check(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_atomic(path, data, mode=0o644, owner=None, check=None):
    """Write ``data`` (bytes or text, UTF-8) to ``path`` through :func:`atomic_output`."""
    with atomic_output(path, mode, check, owner) as handle:
        handle.write(_as_bytes(data))


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
