# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the run report of install, upgrade, join and preflight (plain data, no Ansible objects).

The callback ``mooring.cluster.report`` feeds a :class:`plugin_utils.runlog.RunLog` and, at the end
of the playbook, calls :func:`build_report`, :func:`write_report` and
:func:`plugin_utils.reporttext.summary_lines`. Everything the report says is decided here, so it is
tested without running Ansible.

Wall-clock times (``started``/``finished``) are timezone-aware UTC datetimes. The JSON schema is
documented in ``docs/reports.md`` (:data:`SCHEMA_VERSION`).
"""

from __future__ import annotations

import json
import os
import weakref

from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import write_atomic
from ansible_collections.mooring.cluster.plugins.plugin_utils.reporttext import render_markdown
from ansible_collections.mooring.cluster.plugins.plugin_utils.runlog import HostLog

SCHEMA_VERSION = 1
REPORT_KIND = "MooringRunReport"
# The playbooks (by file name) that write a report; any other playbook writes nothing.
PLAYBOOKS = ("install", "upgrade", "join", "preflight")
# Inside a directory inventory source the report goes into this hidden directory: Ansible parses every
# other file of an inventory directory as inventory (a .json file with the YAML plugin), never a dot-name.
INVENTORY_DIR_SUBDIR = ".mooring-reports"
COUNT_KEYS = ("ok", "changed", "failed", "skipped", "unreachable", "rescued", "ignored")
# What really ran, per host (see execution()): module executions on the host, and on the controller for it.
EXECUTION_KEYS = ("modules", "controller")

# What each playbook does not do when the lock stops at the kubeadm boundary (install.yml, upgrade.yml, join.yml).
_BOUNDARY_LEFT = {
    "install": "kubeadm init and join, and applying the add-ons, were not run",
    "upgrade": "the Kubernetes upgrade (kubeadm upgrade apply / node, kubelets) was not run",
    "join": "kubeadm join of the new hosts was not run",
}

_CLAIMS = weakref.WeakKeyDictionary()


def claim(playbook, owner):
    """True for the first ``owner`` that claims ``playbook`` (any weak-referenceable object): when both
    the collection's callback and the shim next to the playbooks are active, one report is written."""
    return _CLAIMS.setdefault(playbook, owner) is owner


def report_playbook(path):
    """``install``, ``upgrade``, ``join`` or ``preflight`` when ``path`` is such a playbook file; else None."""
    name, ext = os.path.splitext(os.path.basename(str(path or "")))
    return name if ext in (".yml", ".yaml") and name in PLAYBOOKS else None


def _seconds(value):
    return round(max(float(value), 0.0), 3)


def lock_summary(lock, path, boundary=None):
    """What the report says of the lock the run used: its identity and every add-on's version."""
    addons = lock.get("addons") or {}
    return {
        "path": path,
        "name": (lock.get("metadata") or {}).get("name"),
        "hash": lock.get("hash"),
        "digest": lock.get("digest"),
        "versions": {name: addons[name].get("version") for name in sorted(addons) if isinstance(addons[name], dict)},
        "boundary": boundary or {"artifacts": [], "images": []},
    }


def _counts(raw):
    raw = raw or {}
    return {key: int(raw.get(key, raw.get("failures", 0) if key == "failed" else 0) or 0) for key in COUNT_KEYS}


def _iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else None


def build_report(log, counts, finished, check_mode=False, inventory=(), limit=None, lock=None,
                 ansible_version=None):
    """The report (a JSON-ready mapping, schema :data:`SCHEMA_VERSION`) of ``log``.

    ``counts``: ``{host: {ok, changed, failures|failed, skipped, unreachable, rescued, ignored}}`` as
    Ansible's stats summarise them (the PLAY RECAP); ``finished``: UTC datetime; ``lock``: a
    :func:`lock_summary` or ``{"path": ..., "error": ...}``, or None when the run used no lock.
    """
    finish = log.finish if log.finish is not None else log.start
    not_reached, plays_not_run = _not_reached(log)
    hosts = {}
    for name in sorted(set(counts) | set(log.hosts) | set(not_reached)):
        hosts[name] = _host_report(name, log.hosts.get(name) or HostLog(), counts, not_reached.get(name, []))
    remaining = _remaining(log, hosts, plays_not_run, not_reached, lock)
    if any(h["status"] in ("failed", "unreachable") for h in hosts.values()):
        outcome = "failed"
    elif any(h["status"] in ("not_reached", "incomplete") for h in hosts.values()) or plays_not_run:
        outcome = "incomplete"
    else:
        outcome = "success"
    totals = {key: sum(h["counts"][key] for h in hosts.values()) for key in COUNT_KEYS}
    totals.update((key, sum(h[key] for h in hosts.values())) for key in EXECUTION_KEYS)
    totals["hosts"] = len(hosts)
    return {
        "schema": SCHEMA_VERSION,
        "kind": REPORT_KIND,
        "playbook": log.playbook,
        "playbook_path": log.path,
        "check_mode": bool(check_mode),
        "outcome": outcome,
        "started": _iso(log.started),
        "finished": _iso(finished),
        "duration": _seconds(finish - log.start),
        "inventory": [str(s) for s in inventory or ()],
        "limit": limit or None,
        "ansible_version": ansible_version,
        "lock": lock,
        "totals": totals,
        "roles": {role: _seconds(log.role_time[role]) for role in sorted(log.role_time)},
        "hosts": hosts,
        "plays_not_run": plays_not_run,
        "remaining": remaining,
        "addons": {name: dict(log.addons[name]) for name in sorted(log.addons)},
        "preflight": dict(log.preflight, unsupported=list(log.unsupported)) if log.preflight else None,
    }


def _not_reached(log):
    """``({host: [plays it was not reached in]}, [plays that never started])`` of ``log``."""
    not_reached = {}
    plays_not_run = []
    for play in log.plays:
        started = log.started_plays.get(play["uuid"])
        if started is None:
            plays_not_run.append({"name": play["name"], "hosts": play["hosts"], "pattern": play["pattern"]})
            missed = play["hosts"] or []
        else:
            missed = [h for h in started["targeted"] if h not in started["reached"]]
        for host in missed:
            names = not_reached.setdefault(host, [])
            if play["name"] not in names:
                names.append(play["name"])
    return not_reached, plays_not_run


def _host_report(name, entry, counts, not_reached):
    """One host's part of the report: its status, counts, changes, times, versions and what went wrong."""
    count = _counts(counts.get(name))
    unreachable = entry.unreachable if (entry.unreachable or count["unreachable"]) else None
    failure = entry.failure if count["failed"] else None
    if count["unreachable"] and unreachable is None:
        unreachable = {"task": None, "play": None, "message": "unreachable"}
    if count["failed"] and failure is None:
        failure = {"task": None, "play": None, "message": "failed"}
    reached_any = name in counts or any(entry.events.values()) or entry.modules or entry.controller
    if unreachable:
        status = "unreachable"
    elif failure:
        status = "failed"
    elif not reached_any:
        status = "not_reached"
    elif not_reached:
        status = "incomplete"
    else:
        status = "changed" if count["changed"] else "ok"
    return {
        "status": status,
        "counts": count,
        "modules": entry.modules,
        "controller": entry.controller,
        "changed_tasks": list(entry.changed_tasks),
        "changed_items": list(entry.changed_items),
        "duration": _seconds(entry.last - entry.first) if entry.first is not None else 0.0,
        "roles": {role: _seconds(entry.roles[role]) for role in sorted(entry.roles)},
        "versions": dict(sorted(entry.versions.items())),
        "artifacts": dict(sorted(entry.artifacts.items())),
        "failure": failure,
        "unreachable": unreachable,
        "not_reached": not_reached,
    }


def _remaining(log, hosts, plays_not_run, not_reached, lock):
    """What the run leaves to do: unreachable and failed hosts, plays not run or not reached, the kubeadm
    boundary of the lock, and what the playbook declared (:data:`runlog.REMAINING_FACT`)."""
    remaining = []
    for name, host in hosts.items():
        if host["unreachable"]:
            remaining.append({"kind": "unreachable", "hosts": [name], "task": host["unreachable"]["task"],
                              "what": host["unreachable"]["message"]})
        if host["failure"]:
            remaining.append({"kind": "failed", "hosts": [name], "task": host["failure"]["task"],
                              "what": host["failure"]["message"]})
    for play in plays_not_run:
        remaining.append({"kind": "not_reached", "hosts": play["hosts"] if play["hosts"] is not None else [],
                          "task": None, "what": "play not run: %s%s" % (
                              play["name"], "" if play["hosts"] is not None else " (hosts: %s)" % play["pattern"])})
    for name in sorted(not_reached):
        started_missed = [p for p in not_reached[name] if p not in [q["name"] for q in plays_not_run]]
        if started_missed:
            remaining.append({"kind": "not_reached", "hosts": [name], "task": None,
                              "what": "not reached in: %s" % "; ".join(started_missed)})
    boundary = (lock or {}).get("boundary") or {}
    missing = list(boundary.get("artifacts") or []) + list(boundary.get("images") or [])
    if missing and log.playbook in _BOUNDARY_LEFT:
        remaining.append({"kind": "kubeadm_boundary", "hosts": [], "task": None,
                          "what": "kubeadm boundary: the lock carries no %s: %s"
                                  % (", ".join(missing), _BOUNDARY_LEFT[log.playbook])})
    for line in log.remaining:
        remaining.append({"kind": "declared", "hosts": [], "task": None, "what": line})
    return remaining


# --------------------------------------------------------------------------------------------
# Where, and the files
# --------------------------------------------------------------------------------------------
def report_directory(override, inventory_sources, cwd):
    """Where the report goes: ``override`` (the option/MOORING_REPORT_DIR) if set; else
    :data:`INVENTORY_DIR_SUBDIR` beside the first inventory source that is a path (inside it for a
    directory, in the file's directory for a file); else ``cwd`` (``-i localhost,``, implicit localhost).

    Never a visible file in an inventory's directory: Ansible reads every file of an inventory
    directory as inventory, and a file inventory's directory is often also used as one (molecule
    does both), so a report there would be parsed as hosts on the next run. Names starting with a
    dot are skipped by Ansible's directory inventory."""
    if override:
        return os.path.abspath(os.path.expanduser(str(override)))
    if isinstance(inventory_sources, str):
        inventory_sources = [inventory_sources]
    for source in inventory_sources or ():
        if not source:
            continue
        path = os.path.abspath(os.path.expanduser(str(source)))
        if os.path.isdir(path):
            return os.path.join(path, INVENTORY_DIR_SUBDIR)
        if os.path.exists(path):
            return os.path.join(os.path.dirname(path), INVENTORY_DIR_SUBDIR)
    return os.path.abspath(cwd)


def report_stamp(moment):
    """``YYYYmmddTHHMMSSZ`` of a UTC datetime."""
    return moment.strftime("%Y%m%dT%H%M%SZ")


def report_paths(directory, playbook, stamp):
    """``{json, md, latest_json, latest_md}``; a second report in the same second gets ``-2``, ``-3``..."""
    base = "mooring-report-%s-%s" % (playbook, stamp)
    name, n = base, 1
    while os.path.exists(os.path.join(directory, name + ".json")) or os.path.exists(os.path.join(directory, name + ".md")):
        n += 1
        name = "%s-%d" % (base, n)
    latest = "mooring-report-%s-latest" % playbook
    return {"json": os.path.join(directory, name + ".json"), "md": os.path.join(directory, name + ".md"),
            "latest_json": os.path.join(directory, latest + ".json"), "latest_md": os.path.join(directory, latest + ".md")}


def report_json(report):
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_report(report, directory, stamp):
    """Write the JSON and the Markdown (each atomically) and their ``-latest`` copies; returns the paths."""
    os.makedirs(directory, mode=0o755, exist_ok=True)
    paths = report_paths(directory, report["playbook"], stamp)
    text, markdown = report_json(report), render_markdown(report)
    write_atomic(paths["json"], text)
    write_atomic(paths["md"], markdown)
    write_atomic(paths["latest_json"], text)
    write_atomic(paths["latest_md"], markdown)
    return paths
