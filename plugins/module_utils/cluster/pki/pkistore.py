# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the PKI directory on the controller, read and written safely.

Symbolic links and special files inside the directory are refused (:func:`check_tree`; the
directory itself may be a link); files are read without following links, without blocking and
at most :data:`MAX_PEM_BYTES` each (:func:`read_pem`). Directories are 0700, private keys 0600,
certificates 0644 (:func:`fix_modes`); every write is atomic (:func:`write_atomic`).
"""

from __future__ import annotations

import errno
import os
import stat

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import PKIError
from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt

# A PEM certificate or key is a few KiB; a file larger than this is not one (and is not read).
MAX_PEM_BYTES = 1 << 20

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

_MAX_PROBLEMS = 20


def shown(path):
    """A path as a message may show it: bounded, non-printable characters escaped."""
    if not path.isprintable():
        return excerpt(path, 300)
    return path if len(path) <= 300 else "..." + path[-297:]


def capped(lines, limit=_MAX_PROBLEMS):
    more = len(lines) - limit
    return lines[:limit] + (["... and %d more" % more] if more > 0 else [])


def check_tree(path):
    """Refuse symbolic links, hard links (a file with another name, maybe outside) and special files (FIFOs,
    sockets, devices) anywhere inside the directory ``path`` (``path`` itself may be a link to a directory): one
    problem per entry, before anything reads, writes or chmods there. A missing ``path`` passes."""
    if not os.path.isdir(path):
        return
    bad = []
    pending = [path]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            raise PKIError("cannot read %s: %s" % (shown(directory), exc.strerror or exc)) from None
        for entry in entries:
            if entry.is_symlink():
                bad.append("%s is a symbolic link" % shown(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif not entry.is_file(follow_symlinks=False):
                bad.append("%s is a special file (FIFO, socket or device)" % shown(entry.path))
            elif entry.stat(follow_symlinks=False).st_nlink > 1:
                bad.append("%s is a hard link (%d names)" % (shown(entry.path), entry.stat(follow_symlinks=False).st_nlink))
    if bad:
        bad.sort()
        raise PKIError("the PKI directory %s holds links or special files" % shown(path), problems=capped(
            ["%s; the PKI directory holds only regular files and directories (nothing is read, written or "
             "chmod-ed through a link): replace it with the file itself or remove it" % b for b in bad]))


def _refused(path, exc):
    """The :class:`PKIError` for a path that cannot hold a PEM file, or None when ``exc`` is only unreadable."""
    if exc.errno == errno.ELOOP:
        return PKIError("%s is a symbolic link; the PKI directory holds only regular files and directories" % shown(path))
    if exc.errno == errno.ENOTDIR:
        head = os.path.dirname(path)
        while not os.path.exists(head) and os.path.dirname(head) != head:
            head = os.path.dirname(head)
        return PKIError("%s is a file where a directory of the PKI belongs (it should hold %s)"
                        % (shown(head), os.path.relpath(path, head)))
    if isinstance(exc, fileio.NotRegularFileError):
        if exc.errno == errno.EISDIR:
            return PKIError("%s is a directory where a certificate or key file belongs" % shown(path))
        return PKIError("%s is a special file (FIFO, socket or device); the PKI directory holds only regular "
                        "files and directories" % shown(path))
    return None


def read_pem(path):
    """``(data, None)`` for a regular file, ``(None, None)`` when there is none, ``(None, why)``
    when it cannot be taken (unreadable, larger than :data:`MAX_PEM_BYTES`). A link is not
    followed and a FIFO does not block (:func:`fileio.open_regular`); a link, a directory or a
    special file where a file belongs is a :class:`PKIError`."""
    try:
        handle, st = fileio.open_regular(path, "PEM file", _O_NOFOLLOW)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        refused = _refused(path, exc)
        if refused is not None:
            raise refused from None
        return None, "cannot be read (%s)" % (exc.strerror or exc)
    with handle:
        if st.st_size > MAX_PEM_BYTES:
            return None, "is %d bytes, more than a PEM file holds (at most %d)" % (st.st_size, MAX_PEM_BYTES)
        try:
            data = handle.read(MAX_PEM_BYTES + 1)
        except OSError as exc:
            return None, "cannot be read (%s)" % (exc.strerror or exc)
    if len(data) > MAX_PEM_BYTES:
        return None, "is more than %d bytes, more than a PEM file holds" % MAX_PEM_BYTES
    return data, None


def mkdirs(path):
    """Create ``path`` and any missing parents, every one it creates 0700."""
    try:
        missing = []
        head = path
        while head and not os.path.isdir(head):
            missing.append(head)
            head = os.path.dirname(head)
        for d in reversed(missing):
            os.mkdir(d, 0o700)
            os.chmod(d, 0o700)
    except OSError as exc:
        raise PKIError("cannot create PKI directory %s: %s" % (shown(path), exc.strerror or exc)) from None


def write_atomic(path, data, mode):
    """Write ``data`` to ``path`` through a temporary file in the same directory, ``mode`` set
    before any byte is written."""
    mkdirs(os.path.dirname(path))
    try:
        fileio.write_atomic(path, data, mode)
    except OSError as exc:
        raise PKIError("cannot write %s: %s" % (shown(path), exc.strerror or exc)) from None


def pki_dir(path, check_mode):
    """The PKI directory, absolute, after checking it is one (or can be made one)."""
    if not path or not isinstance(path, str):
        raise PKIError("path: give the PKI directory on the controller, got %s" % excerpt(path))
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.islink(path) and not os.path.exists(path):
        raise PKIError("path: %s is a symbolic link to nothing; point it at a directory or remove it" % shown(path))
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise PKIError("path: %s exists and is not a directory" % shown(path))
        if not check_mode and not os.access(path, os.W_OK | os.X_OK):
            raise PKIError("path: %s is not writable" % shown(path))
        return path
    head = os.path.dirname(path)
    while not os.path.exists(head) and os.path.dirname(head) != head:
        head = os.path.dirname(head)
    if not os.path.isdir(head):
        raise PKIError("path: %s is below %s, which is not a directory" % (shown(path), shown(head)))
    if not check_mode and not os.access(head, os.W_OK | os.X_OK):
        raise PKIError("path: cannot create %s: %s is not writable" % (shown(path), shown(head)))
    return path


def existing_dir(path):
    if not path or not isinstance(path, str):
        raise PKIError("path: give the PKI directory, got %s" % excerpt(path))
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(path):
        raise PKIError("path: %s is not a directory; create the PKI first with 'mooring pki generate'" % shown(path))
    return path


def stale(path, spec):
    """Member/kubelet certificate files on disk for hosts no longer in the request."""
    out = []
    members = os.path.join(path, "etcd", "members")
    wanted = {m["name"] for m in spec["etcd"]}
    if os.path.isdir(members):
        out += ["etcd/members/%s" % d for d in sorted(os.listdir(members)) if d not in wanted]
    kube = os.path.join(path, "kubeconfig")
    wanted_k = {"kubelet-%s.crt" % n for n in spec["kubelets"]}
    if os.path.isdir(kube):
        out += ["kubeconfig/%s" % f[:-4] for f in sorted(os.listdir(kube))
                if f.startswith("kubelet-") and f.endswith(".crt") and f not in wanted_k]
    return out


def fix_modes(path, actions, check_mode):
    """Kept files and the directory tree back to 0700 (dirs), 0600 (keys), 0644 (certs).

    Every file is opened without following links (``path`` itself may be one) and its mode
    read and set through that descriptor, so no chmod lands outside the directory."""
    wanted = []
    if not os.path.isdir(path):
        return wanted
    for root, dirs, _files in os.walk(path):
        dirs.sort()
        wanted.append((root, 0o700, True))
    for act in actions:
        if act["action"] != "keep" or act["reason"]:
            continue
        if act["name"] == "sa":
            wanted += [(os.path.join(path, "sa.key"), 0o600, False), (os.path.join(path, "sa.pub"), 0o644, False)]
        else:
            base = os.path.join(path, act["name"])
            wanted += [(base + ".key", 0o600, False), (base + ".crt", 0o644, False)]
    out = []
    for f, want, is_dir in wanted:
        try:
            _fix_mode(path, f, want, is_dir, check_mode, out)
        except OSError as exc:
            raise PKIError("cannot set the mode of %s: %s" % (shown(f), exc.strerror or exc)) from None
    return out


def _fix_mode(path, f, want, is_dir, check_mode, out):
    """Set the mode of ``f`` (a directory when ``is_dir``, else a regular file, opened without
    following a link or blocking) to ``want`` through its descriptor; ``(name, have, want)`` appended to ``out``."""
    nofollow = _O_NOFOLLOW if f != path else 0
    if is_dir:
        fd = os.open(f, os.O_RDONLY | _O_DIRECTORY | nofollow)
        try:
            _set_mode(path, f, fd, want, check_mode, out)
        finally:
            os.close(fd)
        return
    handle, _st = fileio.open_regular(f, "PKI file", nofollow)
    with handle:
        _set_mode(path, f, handle.fileno(), want, check_mode, out)


def _set_mode(path, f, fd, want, check_mode, out):
    have = stat.S_IMODE(os.fstat(fd).st_mode)
    if have != want:
        out.append((os.path.relpath(f, path), "%04o" % have, "%04o" % want))
        if not check_mode:
            os.fchmod(fd, want)
