# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: a host's disks, as preflight and the host collectors measure them.

Free space at a path (its nearest existing parent: nothing is created) and etcd's write pattern - small
writes, each followed by fdatasync - timed in a temporary file. Standard library only (runs on the host).
"""

from __future__ import annotations

import decimal
import os
import tempfile
import time

MIB = 1024 * 1024


def free_mb(path, root="/"):
    """(free MiB, the existing directory measured) at PATH or its nearest existing parent."""
    p = existing_parent(path, root)
    st = os.statvfs(p)
    return st.f_bavail * st.f_frsize // MIB, "/" + os.path.relpath(p, root).lstrip(".")


def fdatasync_latencies(directory, operation_bytes, total_bytes, timeout, clock=time.monotonic):
    """fdatasync latencies (ns) of writing ``total_bytes``, ``operation_bytes`` at a time, to a new temporary
    file in ``directory`` (deleted after), each write followed by fdatasync - etcd's write-ahead log pattern,
    as fio's ``--rw=write --ioengine=sync --fdatasync=1`` measures it. Stops at ``timeout`` seconds with the
    latencies measured so far."""
    fd, temp = tempfile.mkstemp(prefix=".mooring-fsperf-", dir=directory)
    latencies = []
    try:
        block, written, deadline = os.urandom(operation_bytes), 0, clock() + timeout
        while written < total_bytes and clock() < deadline:
            view = memoryview(block)[:min(operation_bytes, total_bytes - written)]
            while view:
                view = view[os.write(fd, view):]
            started = time.perf_counter_ns()
            os.fdatasync(fd)
            latencies.append(time.perf_counter_ns() - started)
            written += min(operation_bytes, total_bytes - written)
    finally:
        os.close(fd)
        os.unlink(temp)
    return latencies


def nearest_rank(ordered, percent):
    """The nearest-rank percentile (``percent``: a number or its text, as fio's "99.000000") of an ascending list."""
    rank = int((decimal.Decimal(str(percent)) * len(ordered) / 100).to_integral_value(rounding=decimal.ROUND_CEILING))
    return ordered[min(len(ordered), max(rank, 1)) - 1]


def existing_parent(path, root="/"):
    """PATH, or its nearest parent that exists, below ``root``."""
    p = os.path.join(root, path.lstrip("/"))
    while not os.path.exists(p) and p not in ("/", root):
        p = os.path.dirname(p)
    return p


def measure_disk(spec, root="/"):
    """etcd's disk: fdatasync latencies in ``spec["path"]`` (its nearest existing parent: preflight creates
    nothing) -> ``{p99_ms, p50_ms, writes, measured}`` or ``{error}``."""
    where = existing_parent(spec["path"], root)
    try:
        latencies = sorted(fdatasync_latencies(where, int(spec["operation_bytes"]), int(spec["bytes"]),
                                               float(spec["timeout_s"])))
    except OSError as exc:
        return {"error": "%s: %s" % (where, exc.strerror or exc)}
    if not latencies:
        return {"error": "%s: no write completed within %ss" % (where, spec["timeout_s"])}
    return {"p99_ms": round(nearest_rank(latencies, 99) / 1e6, 3), "p50_ms": round(nearest_rank(latencies, 50) / 1e6, 3),
            "writes": len(latencies), "measured": "/" + os.path.relpath(where, root).lstrip(".")}
