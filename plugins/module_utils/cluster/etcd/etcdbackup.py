# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the scheduled etcd snapshots on one host, read back.

The etcd role's timer (``mooring-etcd-snapshot.timer``) runs ``mooring-etcd-snapshot``, which writes
``etcd-MEMBER-YYYYMMDDTHHMMSSZ.db`` with ``.sha256`` (sha256sum format) and ``.status.json`` (``snapshot
status -w json``) beside it. :func:`read_backups` lists them with each checksum computed again, and the
service's last result from systemd, so a listing shows what a restore would find, not what was meant.
"""

from __future__ import annotations

import json
import os
import re

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts.hostio import read_file
from ansible_collections.mooring.cluster.plugins.module_utils.common import service
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import sha256_file

SERVICE = "mooring-etcd-snapshot.service"
TIMER = "mooring-etcd-snapshot.timer"
SNAPSHOT = re.compile(r"^etcd-(?P<member>.+)-(?P<time>[0-9]{8}T[0-9]{6}Z)\.db$")
SIDE_LIMIT = 64 * 1024  # a .sha256 or .status.json larger than this is not one the script wrote
SERVICE_PROPS = ("Result", "ExecMainStatus", "ExecMainExitTimestamp", "LoadState")
TIMER_PROPS = ("LastTriggerUSec", "NextElapseUSecRealtime", "UnitFileState", "LoadState")


def _side(path):
    try:
        return read_file(path, limit=SIDE_LIMIT)
    except FileNotFoundError:
        return None
    except Exception as exc:  # pylint: disable=broad-except  # a side file it cannot read is a problem, named
        return exc


def snapshot_entry(directory, name):
    """One snapshot: ``{name, time, size, sha256, problems, revision, total_keys}`` (``problems`` empty when good)."""
    path = os.path.join(directory, name)
    entry = {"name": name, "path": path, "time": SNAPSHOT.match(name).group("time"), "problems": []}
    digest, entry["size"] = sha256_file(path)
    entry["sha256"] = digest
    recorded = _side(path + ".sha256")
    if recorded is None:
        entry["problems"].append("no %s.sha256" % name)
    elif isinstance(recorded, Exception):
        entry["problems"].append("%s.sha256: %s" % (name, recorded))
    elif recorded.split()[:2] != [digest, name]:
        entry["problems"].append("sha256 %s does not match %s.sha256 (%s)" % (digest, name, recorded.strip()[:100]))
    status = _side(path + ".status.json")
    try:
        if status is None or isinstance(status, Exception):
            raise ValueError(status or "missing")
        status = json.loads(status)
        entry["revision"] = int(status["revision"])
        entry["total_keys"] = int(status.get("totalKey", 0))
        entry["hash"] = status.get("hash")
    except (ValueError, KeyError, TypeError) as exc:
        entry["problems"].append("no snapshot status recorded in %s.status.json (%s)" % (name, exc))
    return entry


def read_backups(directory, run):
    """Every scheduled snapshot in ``directory`` (oldest first) and the units' state.

    Returns ``{directory, snapshots, service, timer, problems, failed}``: ``problems`` lists why the backups
    cannot be trusted (the last run failed, the timer is not active, no snapshot, a checksum that does not
    match), ``failed`` is true when there is any."""
    problems = []
    svc = service.unit_state(run, SERVICE, SERVICE_PROPS)
    timer = service.unit_state(run, TIMER, TIMER_PROPS)
    try:
        names = sorted(n for n in os.listdir(directory) if SNAPSHOT.match(n))
    except FileNotFoundError:
        names = []
        problems.append("%s does not exist" % directory)
    snapshots = [snapshot_entry(directory, n) for n in names]
    if timer.get("LoadState") != "loaded":
        problems.append("%s is not installed (spec.etcd.backup not set?)" % TIMER)
    elif timer.get("ActiveState") != "active":
        problems.append("%s is %s, not active" % (TIMER, timer.get("ActiveState") or "?"))
    if svc.get("ActiveState") == "failed" or svc.get("Result") not in (None, "", "success"):
        problems.append("the last snapshot failed: %s is %s (result %s, exit status %s); see journalctl -u %s"
                        % (SERVICE, svc.get("ActiveState"), svc.get("Result"), svc.get("ExecMainStatus"), SERVICE))
    if not snapshots and not problems:
        problems.append("no snapshot in %s yet" % directory)
    for entry in snapshots:
        problems.extend(entry["problems"])
    result = {
        "directory": directory,
        "snapshots": snapshots,
        "service": {"state": svc.get("ActiveState"), "result": svc.get("Result"),
                    "exit_status": svc.get("ExecMainStatus"), "last_exit": svc.get("ExecMainExitTimestamp") or None},
        "timer": {"state": timer.get("ActiveState"), "enabled": timer.get("UnitFileState"),
                  "last_trigger": timer.get("LastTriggerUSec") or None, "next": timer.get("NextElapseUSecRealtime") or None},
        "problems": problems,
        "failed": bool(problems),
    }
    result["lines"] = listing_lines(result)
    return result


def listing_lines(found):
    """What an operator reads: one line per snapshot, then the last and next run."""
    lines = []
    for entry in found["snapshots"]:
        what = "%s revision %s, %s keys, %d bytes, " % (entry["name"], entry.get("revision", "?"),
                                                        entry.get("total_keys", "?"), entry["size"])
        lines.append(what + ("; ".join(entry["problems"]) if entry["problems"] else "sha256 ok"))
    svc, timer = found["service"], found["timer"]
    last = (svc["result"] or "none", svc["last_exit"] or "never", timer["next"] or "not scheduled")
    lines.append("last run: %s at %s; next: %s" % last)
    return lines
