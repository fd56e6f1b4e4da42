# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: how the host collectors reach the host - bounded file reads, bounded
programs, the interfaces' addresses - and the error a collector raises when it cannot measure.

Host side: Python 3 standard library only. File reads are bounded (4 MiB), command output too (1 MiB),
and every command has a timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, PathEscapeError
from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import (
    NotRegularFileError,
    TooLargeError,
    read_regular,
    under_root,
)

MIB = 1024 * 1024
MAX_READ = 4 * MIB              # any one file read
MAX_OUTPUT = MIB                # stdout / stderr of a command, kept
RUN_TIMEOUT = 30.0              # a command (and the run collector's default)


class CollectError(MooringError):
    """A collector could not measure (or a file was refused); ``files`` is what it still writes
    (troubleshoot's status files)."""

    def __init__(self, why, files=None):
        super().__init__(why)
        self.files = files or {}


def run_bounded(argv, timeout=RUN_TIMEOUT, env=None, cwd=None, limit=MAX_OUTPUT):
    """``(rc, stdout, stderr)`` of ``argv``: no shell, empty stdin, at most ``limit`` bytes of each output
    kept (the rest is read and dropped), killed with its process group after ``timeout`` seconds, which
    gives rc -1 and stderr "command timed out after ...". A program that cannot start raises its OSError."""
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=cwd, start_new_session=True)
    kept = (bytearray(), bytearray())

    def drain(pipe, buf):
        with pipe:
            while True:
                chunk = pipe.read1(65536)
                if not chunk:
                    return
                if len(buf) < limit:
                    buf.extend(chunk[:limit - len(buf)])

    readers = [threading.Thread(target=drain, args=pair, daemon=True) for pair in zip((proc.stdout, proc.stderr), kept)]
    for reader in readers:
        reader.start()
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        rc = None
    for reader in readers:
        reader.join(2.0)  # a daemon it started may hold the pipes open: do not wait for it
    out, err = (bytes(b).decode("utf-8", "replace") for b in kept)
    if rc is None:
        return -1, out, "command timed out after %gs" % timeout
    return rc, out, err


def read_file(path, limit=MAX_READ):
    """Text of the regular file ``path``, at most ``limit`` bytes (more is an error, never a partial parse).
    A FIFO or device is refused unopened-for-blocking (:class:`CollectError`); a missing file raises
    FileNotFoundError."""
    try:
        data = read_regular(path, limit, "file")
    except NotRegularFileError:
        raise CollectError("%s is not a regular file" % path) from None
    except TooLargeError:
        raise CollectError("%s is larger than %d bytes; not read" % (path, limit)) from None
    return data.decode("utf-8", "replace")


class Host:
    """What the collectors reach the host through: ``root``, ``run`` and the clock."""

    _MISSING = object()

    def __init__(self, root, run, now):
        self.root = os.path.abspath(root)
        self.run = run
        self.now = now
        self._ip = None

    def path(self, path):
        """``path`` under ``root``; below a root other than ``/`` it must stay there once links are resolved."""
        if self.root == "/":
            return os.path.join(self.root, str(path).lstrip("/"))
        try:
            return under_root(self.root, str(path).lstrip("/"))
        except PathEscapeError as exc:
            raise CollectError(str(exc)) from None

    def read(self, path, default=_MISSING, limit=MAX_READ):
        try:
            return read_file(self.path(path), limit)
        except (OSError, CollectError):
            if default is self._MISSING:
                raise
            return default

    def release(self):
        return self.read("/proc/sys/kernel/osrelease", "").strip() or os.uname().release

    def ip_addresses(self):
        """``ip -j -4 addr show up``, parsed (once per collect)."""
        if self._ip is None:
            rc, out, err = self.run(["ip", "-j", "-4", "addr", "show", "up"])
            if rc != 0:
                raise CollectError("ip -j -4 addr show up exited %d: %s" % (rc, err.strip()[:200]))
            try:
                self._ip = [e for e in json.loads(out or "[]") if isinstance(e, dict)]
            except ValueError:
                raise CollectError("ip -j -4 addr show up printed no JSON: %r" % out[:200]) from None
        return self._ip

    def interface_ipv4(self, name):
        for entry in self.ip_addresses():
            if entry.get("ifname") == name:
                addr = first_ipv4(entry)
                if addr:
                    return addr
        raise CollectError("interface %s is not up or has no IPv4 address" % name)

    def first_ipv4(self):
        """The first IPv4 of the first interface that is up and not loopback (troubleshoot's dial address)."""
        for entry in self.ip_addresses():
            flags = entry.get("flags") or []
            if "UP" in flags and "LOOPBACK" not in flags and first_ipv4(entry):
                return first_ipv4(entry)
        raise CollectError("no interface is up with an IPv4 address")


def first_ipv4(entry):
    """The first IPv4 address of one ``ip -j addr`` entry, or None."""
    return next((a.get("local") for a in entry.get("addr_info") or [] if a.get("family") == "inet" and a.get("local")), None)
