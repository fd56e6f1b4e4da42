# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: is the process a systemd unit runs the one that is installed?

A restart that an earlier run meant to do but never did (it failed, or was killed, between
replacing a binary or a file and restarting) is still visible on the host: the running
process's executable was replaced (``/proc/PID/exe`` ends in `` (deleted)``, or the binary's
inode changed after the process started), the unit file changed since systemd loaded it
(``NeedDaemonReload``), or a file the service reads changed after the process started. :func:`stale_reasons` reads exactly that, so a re-run finishes the job
instead of trusting what the previous run remembered.
"""

from __future__ import annotations

import datetime
import os

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

PROPERTIES = ("ActiveState", "SubState", "MainPID", "NeedDaemonReload", "ExecMainStartTimestamp", "NRestarts")


def show_cmd(unit, extra=()):
    """``systemctl show`` of the properties :func:`stale_reasons` reads (and ``extra`` ones), timestamps in UTC
    with microseconds."""
    return ["systemctl", "show", "--timestamp=us+utc"] + ["--property=" + p for p in PROPERTIES + tuple(extra)] + [unit]


def parse_show(stdout):
    """``KEY=VALUE`` lines -> dict."""
    out = {}
    for line in (stdout or "").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key] = value
    return out


def parse_timestamp(value):
    """systemd's ``Mon 2026-11-23 12:00:00.123456 UTC`` -> epoch seconds (None when empty or unreadable)."""
    value = (value or "").strip()
    if not value or value == "n/a":
        return None
    try:
        when = datetime.datetime.strptime(value.split(" ", 1)[1], "%Y-%m-%d %H:%M:%S.%f UTC")
    except (IndexError, ValueError):
        return None
    return when.replace(tzinfo=datetime.timezone.utc).timestamp()


def unit_state(run, unit, extra=()):
    """The unit's properties (``parse_show``; ``extra`` names more) plus ``started`` (epoch seconds of the main
    process's start)."""
    rc, out, err = run(show_cmd(unit, extra))
    if rc != 0:
        raise MooringError("systemctl show %s failed: %s" % (unit, (err or out).strip()[:300]))
    props = parse_show(out)
    props["started"] = parse_timestamp(props.get("ExecMainStartTimestamp"))
    return props


def stale_reasons(props, binary=None, files=(), readlink=os.readlink, mtime=os.path.getctime):
    """Why the running process is not what is installed (empty list: it is). ``props``: :func:`unit_state`.

    A file counts as changed when its inode changed (ctime: a write, a rename into place, a chmod) after the
    process started; that also covers the binary when ``/proc/PID/exe`` cannot be read (root without
    CAP_SYS_PTRACE, as in unprivileged containers, may not read another user's process links)."""
    if props.get("ActiveState") != "active":
        return ["not running (%s/%s)" % (props.get("ActiveState") or "?", props.get("SubState") or "?")]
    reasons = []
    if props.get("NeedDaemonReload") == "yes":
        reasons.append("the unit file changed since systemd loaded it")
    pid = props.get("MainPID") or "0"
    if binary and pid != "0":
        try:
            exe = readlink("/proc/%s/exe" % pid)
        except OSError:
            exe = None
        if exe is not None and (exe.endswith(" (deleted)") or os.path.realpath(binary) != exe):
            reasons.append("%s was replaced after the process started" % binary)
    started = props.get("started")
    if started is not None:
        for path in ([binary] if binary and not reasons_for(binary, reasons) else []) + list(files):
            try:
                changed = mtime(path)
            except OSError:
                continue
            if changed > started:
                reasons.append("%s %s after the process started" % (path, "was replaced" if path == binary else "changed"))
    return reasons


def reasons_for(path, reasons):
    return any(r.startswith(path + " ") for r in reasons)
