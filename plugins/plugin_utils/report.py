# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the run report of install, upgrade, join and preflight (plain data, no Ansible objects).

The callback ``mooring.cluster.report`` only turns Ansible's events into calls on a :class:`RunLog`
(plain names, numbers and result mappings) and, at the end of the playbook, calls
:func:`build_report`, :func:`render_markdown`, :func:`write_report` and :func:`summary_lines`.
Everything the report says is decided here, so it is tested without running Ansible. (The lists of
actions ansible-core runs on the controller are ansible-core's own, from ``ansible.constants``.)

Times given to :class:`RunLog` are seconds of one monotonic clock; wall-clock times
(``started``/``finished``) are timezone-aware UTC datetimes. The JSON schema is documented in
``docs/reports.md`` (:data:`SCHEMA_VERSION`).
"""

from __future__ import annotations

import json
import os
import re
import weakref

from ansible import constants as C

from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import write_atomic

SCHEMA_VERSION = 1
REPORT_KIND = "MooringRunReport"
# The playbooks (by file name) that write a report; any other playbook writes nothing.
PLAYBOOKS = ("install", "upgrade", "join", "preflight")
# Inside a directory inventory source the report goes into this hidden directory: Ansible parses every
# other file of an inventory directory as inventory (a .json file with the YAML plugin), never a dot-name.
INVENTORY_DIR_SUBDIR = ".mooring-reports"
MESSAGE_LIMIT = 300
SUMMARY_LEFT_LIMIT = 110
COUNT_KEYS = ("ok", "changed", "failed", "skipped", "unreachable", "rescued", "ignored")
# What really ran, per host (see execution()): module executions on the host, and on the controller for it.
EXECUTION_KEYS = ("modules", "controller")
# A fact a playbook sets (set_fact) to declare what the run leaves to do: a string or a list of strings.
REMAINING_FACT = "mooring_report_remaining"
_BUNDLE_INSTALL = ("mooring.cluster.bundle_install", "bundle_install")
_LOCK_VALUES = ("mooring.cluster.lock_values", "lock_values")
_HOST_STATE = ("mooring.cluster.host_state", "host_state")
_BUNDLE_UNPACK = ("mooring.cluster.bundle_unpack", "bundle_unpack")
_PREFLIGHT = ("mooring.cluster.preflight_check", "preflight_check")


def changed_items(action, result):
    """What a changed task changed, item by item: host_state's and bundle_unpack's ``changes`` lines (the same
    shape), the files bundle_install wrote."""
    if action in _HOST_STATE + _BUNDLE_UNPACK:
        return [str(line) for line in result.get("changes") or () if isinstance(line, str)]
    if action in _BUNDLE_INSTALL:
        return ["file %s: installed" % dest for dest in result.get("installed") or () if isinstance(dest, str)]
    return []


# What each playbook does not do when the lock stops at the kubeadm boundary (install.yml, upgrade.yml, join.yml).
_BOUNDARY_LEFT = {
    "install": "kubeadm init and join, and applying the add-ons, were not run",
    "upgrade": "the Kubernetes upgrade (kubeadm upgrade apply / node, kubelets) was not run",
    "join": "kubeadm join of the new hosts was not run",
}
_NO_LOG = "(hidden: no_log)"


def _builtin(*names):
    return tuple(names) + tuple("ansible.%s.%s" % (ns, name) for ns in ("builtin", "legacy") for name in names)


def _core(constant, *names):
    """ansible-core's own list of these actions (``ansible.constants``), or the names when it has none."""
    return tuple(getattr(C, constant, None) or _builtin(*names))


# Actions that never reach a host: the executor or an action plugin does them on the controller, no
# connection to the host is made and no module is sent to it. Not counted in ``modules`` nor ``controller``.
# (Besides these, any action whose plugin declares it needs no connection, _requires_connection = False:
# the callback looks that up and passes ``needs_connection``.)
CONTROLLER_ACTIONS = frozenset(
    _core("_ACTION_ALL_INCLUDES", "include_tasks", "include_role")
    + _core("_ACTION_IMPORT_TASKS", "import_tasks") + _core("_ACTION_IMPORT_ROLE", "import_role")
    + _core("_ACTION_IMPORT_PLAYBOOK", "import_playbook") + _core("_ACTION_META", "meta")
    + _core("_ACTION_SET_FACT", "set_fact") + _core("_ACTION_DEBUG", "debug")
    + _core("_ACTION_INVENTORY_TASKS", "add_host", "group_by") + _core("_ACTION_INCLUDE_VARS", "include_vars")
    + _builtin("assert", "fail", "validate_argument_spec", "set_stats", "pause"))
# The connection plugin that runs modules on the controller itself, and the names of the controller.
LOCAL_CONNECTIONS = _builtin("local")
CONTROLLER_NAMES = tuple(getattr(C, "LOCALHOST", None) or ("127.0.0.1", "localhost", "::1"))
# The results of an execution that ran (a failed one too); skipped and unreachable ones did not.
_RAN = ("ok", "failed", "ignored")


def execution(action, status, connection=None, delegate_to=None, retries=0, needs_connection=True):
    """What one execution counts - one task without a loop, or one item of a loop, with the attempts
    ``until``/``retries`` made before it - as ``(key, host, times)``, or None when it counts nothing.

    ``key`` is ``modules`` (it ran on a managed host: ``host`` is the host it was delegated to, None for
    the host it ran for) or ``controller`` (its connection is ``local`` or it was delegated to localhost,
    127.0.0.1 or ::1: it ran on the controller, counted for the host it ran for; ``host`` None).
    ``times`` is ``retries`` (the failed attempts before this result, each ran) plus one unless ``status``
    is skipped or unreachable (it did not run). Nothing for an action in :data:`CONTROLLER_ACTIONS` or one
    whose plugin needs no connection (``needs_connection`` False). ``connection``: the connection plugin
    that ran it (``local``, ``ansible.builtin.ssh``...); ``delegate_to``: the (templated) host it was
    delegated to, or None.
    """
    times = (1 if status in _RAN else 0) + max(int(retries or 0), 0)
    if not times or action in CONTROLLER_ACTIONS or not needs_connection:
        return None
    if connection in LOCAL_CONNECTIONS or (delegate_to and str(delegate_to) in CONTROLLER_NAMES):
        return "controller", None, times
    return "modules", str(delegate_to) if delegate_to else None, times


_SPACE = re.compile(r"\s+")

_CLAIMS = weakref.WeakKeyDictionary()


def claim(playbook, owner):
    """True for the first ``owner`` that claims ``playbook`` (any weak-referenceable object): when both
    the collection's callback and the shim next to the playbooks are active, one report is written."""
    return _CLAIMS.setdefault(playbook, owner) is owner


def report_playbook(path):
    """``install``, ``upgrade``, ``join`` or ``preflight`` when ``path`` is such a playbook file; else None."""
    name, ext = os.path.splitext(os.path.basename(str(path or "")))
    return name if ext in (".yml", ".yaml") and name in PLAYBOOKS else None


def shorten(value, limit=MESSAGE_LIMIT):
    """``value`` as one line of at most ``limit`` characters (whitespace collapsed, '...' when cut)."""
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True, default=str)
    text = _SPACE.sub(" ", value).strip()
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def failure_message(result):
    """The one-line reason of a failed or unreachable result (``msg``, a failed loop item's, stderr, ...)."""
    if not isinstance(result, dict):
        return shorten(result)
    if result.get("_ansible_no_log"):
        return _NO_LOG
    for item in result.get("results") or ():
        if isinstance(item, dict) and (item.get("failed") or item.get("unreachable")):
            if item.get("_ansible_no_log"):
                return _NO_LOG
            label = item.get("_ansible_item_label", item.get("item"))
            return shorten("item %s: %s" % (shorten(label, 60), failure_message(item)))
    for key in ("msg", "reason", "message"):
        if result.get(key):
            return shorten(result[key])
    stderr = [line for line in str(result.get("stderr") or "").splitlines() if line.strip()]
    if stderr:
        return shorten(stderr[-1])
    exception = [line for line in str(result.get("exception") or "").splitlines() if line.strip()]
    if exception:
        return shorten(exception[-1])
    if result.get("rc") is not None:
        return "exit code %s" % result["rc"]
    return "failed"


def _seconds(value):
    return round(max(float(value), 0.0), 3)


def _add(table, key, value):
    table[key] = table.get(key, 0.0) + value


class _HostLog(object):
    """What one host did: its events, changed tasks, role time, versions, last failure."""

    def __init__(self):
        self.first = None
        self.last = None
        self.starts = {}
        self.events = dict.fromkeys(("ok", "failed", "ignored", "unreachable", "skipped"), 0)
        self.changed_tasks = []
        self.changed_items = []
        self.roles = {}
        self.versions = {}
        self.artifacts = {}
        self.failure = None
        self.unreachable = None
        self.modules = 0
        self.controller = 0

    def seen(self, now):
        self.first = now if self.first is None else min(self.first, now)
        self.last = now if self.last is None else max(self.last, now)


class RunLog(object):
    """The events of one playbook run, as plain data (the callback feeds it; :func:`build_report` reads it)."""

    def __init__(self, playbook, path, started, now):
        self.playbook = playbook
        self.path = path
        self.started = started
        self.start = now
        self.finish = None
        self.plays = []
        self.started_plays = {}
        self.hosts = {}
        self.role_time = {}
        self.remaining = []
        self.lock_paths = []
        self.preflight = None
        self.unsupported = []
        self._play = None
        self._segment = None

    def host(self, name):
        return self.hosts.setdefault(name, _HostLog())

    def _close_segment(self, now):
        if self._segment is not None:
            role, since = self._segment
            if role:
                _add(self.role_time, role, max(now - since, 0.0))
            self._segment = None

    def play_start(self, uuid, name, batch, targeted, now):
        """A play (or one ``serial`` batch of it) starts on ``batch``; ``targeted``: all hosts of the play."""
        self._close_segment(now)
        entry = self.started_plays.setdefault(uuid, {"name": name, "targeted": [], "reached": []})
        for host in list(targeted) + list(batch):
            if host not in entry["targeted"]:
                entry["targeted"].append(host)
        for host in batch:
            if host not in entry["reached"]:
                entry["reached"].append(host)
        self._play = name

    def declare_play(self, uuid, name, hosts=None, pattern=""):
        """A play of the playbook, in order; ``hosts`` (when known) for a play that never started."""
        self.plays.append({"uuid": uuid, "name": name, "hosts": list(hosts) if hosts is not None else None,
                           "pattern": pattern})

    def task_start(self, role, now):
        """A task (or handler) starts; its wall time until the next one counts for ``role``."""
        self._close_segment(now)
        self._segment = (role, now)

    def host_start(self, host, task_uuid, now):
        entry = self.host(host)
        entry.starts[task_uuid] = now
        entry.seen(now)

    def host_result(self, host, task_uuid, task_name, role, action, status, result, now, args=None, probe=False):
        """The result of a task on ``host``: ``status`` is ok, failed, ignored (ignore_errors), unreachable
        or skipped; ``result`` the task's result mapping; ``args`` its (templated) arguments; ``probe``: the
        task ran in check mode in a run that is not (``check_mode: true``, a read-only look: installs nothing)."""
        entry = self.host(host)
        result = result if isinstance(result, dict) else {}
        since = entry.starts.pop(task_uuid, None)
        if since is not None and role:
            _add(entry.roles, role, max(now - since, 0.0))
        entry.seen(now)
        entry.events[status] = entry.events.get(status, 0) + 1
        where = {"task": task_name, "play": self._play}
        if status == "ok" and result.get("changed") and task_name not in entry.changed_tasks:
            entry.changed_tasks.append(task_name)
        elif status == "failed":
            entry.failure = dict(where, message=failure_message(result))
        elif status == "unreachable":
            entry.unreachable = dict(where, message=failure_message(result))
        path = (args or {}).get("path") if action in _LOCK_VALUES and status in ("ok", "failed") else None
        if isinstance(path, str) and path and path not in self.lock_paths:
            self.lock_paths.append(path)  # the lock the run used, also when it could not be read
        if status != "ok" or result.get("_ansible_no_log"):
            return
        if action in _PREFLIGHT and not probe:
            self._preflight(result)
        if result.get("changed") and not probe:
            entry.changed_items.extend(i for i in changed_items(action, result) if i not in entry.changed_items)
        if action in _BUNDLE_INSTALL + _HOST_STATE and not probe:  # host_state's install option: the same fields
            entry.versions.update((str(k), str(v)) for k, v in (result.get("versions") or {}).items())
            for artifact in result.get("artifacts") or ():
                if isinstance(artifact, dict) and artifact.get("name") and artifact.get("version") is not None:
                    entry.artifacts[str(artifact["name"])] = str(artifact["version"])
        declared = (result.get("ansible_facts") or {}).get(REMAINING_FACT)
        for line in [declared] if isinstance(declared, str) else declared or ():
            if isinstance(line, str) and line.strip() and shorten(line) not in self.remaining:
                self.remaining.append(shorten(line))

    def _preflight(self, result):
        """The preflight's judgement of the whole inventory (its C(checks) per host) and the document types not run."""
        for line in result.get("unsupported") or ():
            if isinstance(line, str) and line not in self.unsupported:
                self.unsupported.append(line)
        checks = result.get("checks")
        if not isinstance(checks, dict):
            return  # one host's own result: the inventory's judgement (run once) carries every host
        hosts = {}
        for host, rows in sorted(checks.items()):
            hosts[str(host)] = [{"check": str(row.get("check")), "status": str(row.get("status")),
                                 "message": shorten(str(row.get("message") or ""))}
                                for row in rows or () if isinstance(row, dict)]
        self.preflight = {"summary": str(result.get("summary") or ""), "passed": bool(result.get("passed")),
                          "hosts": hosts}

    def execution(self, host, action, status, connection=None, delegate_to=None, retries=0, needs_connection=True):
        """One execution for ``host`` (a task without a loop, or one loop item; never a loop's final result,
        whose items were counted): counted as :func:`execution` says, in ``modules`` of the host it was
        delegated to (else ``host``) or in ``controller`` of ``host``. Returns what it counted."""
        counted = execution(action, status, connection, delegate_to, retries, needs_connection)
        if counted is not None:
            key, on, times = counted
            entry = self.host(on or host)
            setattr(entry, key, getattr(entry, key) + times)
        return counted

    def end(self, now):
        self._close_segment(now)
        self.finish = now


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
    hosts = {}
    for name in sorted(set(counts) | set(log.hosts) | set(not_reached)):
        entry = log.hosts.get(name) or _HostLog()
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
        elif not_reached.get(name):
            status = "incomplete"
        else:
            status = "changed" if count["changed"] else "ok"
        hosts[name] = {
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
            "not_reached": not_reached.get(name, []),
        }
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
        "preflight": dict(log.preflight, unsupported=list(log.unsupported)) if log.preflight else None,
    }


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


# --------------------------------------------------------------------------------------------
# For people: the Markdown file and the summary at the end of the run
# --------------------------------------------------------------------------------------------
def duration_text(seconds):
    seconds = float(seconds or 0)
    if seconds < 60:
        return "%.1fs" % seconds
    minutes, rest = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return "%dm%02ds" % (minutes, rest)
    return "%dh%02dm%02ds" % (minutes // 60, minutes % 60, rest)


def _cell(value):
    text = "-" if value in (None, "", [], {}) else str(value)
    return _SPACE.sub(" ", text).replace("|", "\\|").strip()


def _left(host):
    """What is left on one host, one line (the summary's last column)."""
    if host["unreachable"]:
        return "unreachable: %s" % host["unreachable"]["message"]
    if host["failure"]:
        return "failed at %s: %s" % (host["failure"]["task"] or "?", host["failure"]["message"])
    if host["status"] == "not_reached":
        return "not reached"
    if host["not_reached"]:
        return "not reached in: %s" % "; ".join(host["not_reached"])
    return "-"


def render_markdown(report):
    title = "mooring.cluster.%s" % report["playbook"]
    lines = ["# Run report: %s%s" % (title, " (check mode: nothing was changed)" if report["check_mode"] else ""), ""]
    lock = report.get("lock") or {}
    lock_text = "-"
    if lock.get("error"):
        lock_text = "%s (not read: %s)" % (lock.get("path"), lock["error"])
    elif lock:
        lock_text = "%s (%s, hash %s)" % (lock.get("path"), lock.get("name") or "unnamed", lock.get("hash"))
    lines += ["| | |", "|---|---|"]
    for label, value in (("Outcome", "**%s**" % report["outcome"]), ("Check mode", "yes" if report["check_mode"] else "no"),
                         ("Started (UTC)", report["started"]), ("Finished (UTC)", report["finished"]),
                         ("Duration", duration_text(report["duration"])),
                         ("Inventory", ", ".join(report["inventory"])), ("Limit", report["limit"]),
                         ("Lock", lock_text), ("Playbook", report["playbook_path"]),
                         ("Schema", "%s %s" % (report["kind"], report["schema"]))):
        lines.append("| %s | %s |" % (label, _cell(value)))
    lines += ["", "## Hosts", "", "| Host | Status | ok | changed | failed | skipped | unreachable | rescued | ignored "
              "| modules | controller | Time |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, host in report["hosts"].items():
        c = host["counts"]
        lines.append("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s |" % (
            _cell(name), host["status"], c["ok"], c["changed"], c["failed"], c["skipped"], c["unreachable"],
            c["rescued"], c["ignored"], host["modules"], host["controller"], duration_text(host["duration"])))
    lines += ["", "ok ... ignored: the PLAY RECAP's task counts. modules: module executions on the host (each loop item "
              "and retry; tasks delegated to it too). controller: executions on the controller for the host (delegated "
              "to localhost, or the local connection). set_fact, debug, include_role and other actions that never "
              "reach a host count in neither."]
    lines += ["", "## What is left", ""]
    if report["remaining"]:
        for item in report["remaining"]:
            who = ", ".join(item["hosts"]) if item["hosts"] else "run"
            task = " at `%s`" % item["task"].replace("`", "'") if item.get("task") else ""
            lines.append("- **%s** (%s)%s: %s" % (_cell(who), item["kind"], task, _cell(item["what"])))
    else:
        lines.append("Nothing: every host ran every play.")
    lines += ["", "## Changed tasks", ""]
    changed = [(name, host) for name, host in report["hosts"].items() if host["changed_tasks"]]
    for name, host in changed:
        lines.append("- **%s**" % _cell(name))
        lines.extend("  - %s" % _cell(task) for task in host["changed_tasks"])
        lines.extend("    - %s" % _cell(item) for item in host.get("changed_items") or ())
    if not changed:
        lines.append("None.")
    versions = lock.get("versions") or {}
    host_versions = [(name, host) for name, host in report["hosts"].items() if host["versions"] or host["artifacts"]]
    if versions or host_versions:
        lines += ["", "## Versions", ""]
    if versions:
        lines += ["From the lock:", "", "| Component | Version |", "|---|---|"]
        lines.extend("| %s | %s |" % (_cell(k), _cell(v)) for k, v in versions.items())
        lines.append("")
    if host_versions:
        lines += ["Installed on the hosts (the binaries' own report; the bundle's artifact versions):", "",
                  "| Host | Binaries | Artifacts |", "|---|---|---|"]
        for name, host in host_versions:
            lines.append("| %s | %s | %s |" % (
                _cell(name), _cell(", ".join("%s %s" % kv for kv in host["versions"].items())),
                _cell(", ".join("%s %s" % kv for kv in host["artifacts"].items()))))
    lines.extend(_preflight_markdown(report.get("preflight")))
    if report["roles"]:
        lines += ["", "## Time per role", "", "| Role | Time (wall) |", "|---|---|"]
        lines.extend("| %s | %s |" % (_cell(role), duration_text(t)) for role, t in report["roles"].items())
    return "\n".join(lines).rstrip("\n") + "\n"


def _preflight_markdown(preflight):
    """The preflight's checks, one row per host and check (failures and warnings first on each host)."""
    if not preflight:
        return []
    verdict = "passed" if preflight["passed"] else "**failed**"
    lines = ["", "## Preflight", "", "%s (%s)" % (_cell(preflight["summary"]), verdict), ""]
    for line in preflight.get("unsupported") or ():
        lines.append("- not run: %s" % _cell(line))
    if preflight.get("unsupported"):
        lines.append("")
    lines += ["| Host | Check | Outcome | Message |", "|---|---|---|---|"]
    order = {"fail": 0, "warn": 1}
    for host, rows in preflight["hosts"].items():
        for row in sorted(rows, key=lambda r: order.get(r["status"], 2)):
            lines.append("| %s | %s | %s | %s |" % (_cell(host), _cell(row["check"]), row["status"], _cell(row["message"])))
    return lines


def summary_lines(report, paths=None):
    """The compact table printed at the end of the run, and the report's paths."""
    mode = " (check mode)" if report["check_mode"] else ""
    head = "MOORING REPORT mooring.cluster.%s: %s%s" % (report["playbook"], report["outcome"], mode)
    rows = [("HOST", "CHANGED", "MODULES", "CONTROLLER", "FAILED", "TIME", "LEFT")]
    for name, host in report["hosts"].items():
        rows.append((name, str(host["counts"]["changed"]), str(host["modules"]), str(host["controller"]),
                     str(host["counts"]["failed"] + host["counts"]["unreachable"]),
                     duration_text(host["duration"]), shorten(_left(host), SUMMARY_LEFT_LIMIT)))
    last = len(rows[0]) - 1
    widths = [max(len(row[i]) for row in rows) for i in range(last)]
    lines = [head]
    lines.extend("  " + "  ".join(row[i].ljust(widths[i]) for i in range(last)) + "  " + row[last] for row in rows)
    for item in report["remaining"]:
        if item["kind"] in ("kubeadm_boundary", "declared") or (item["kind"] == "not_reached" and not item["hosts"]):
            lines.append("  left: %s" % shorten(item["what"], SUMMARY_LEFT_LIMIT))
    if paths:
        lines.append("  report: %s" % paths["json"])
        lines.append("          %s" % paths["md"])
    return [line.rstrip() for line in lines]
