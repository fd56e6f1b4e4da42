# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the run log of a playbook run, as plain data (no Ansible objects).

The callback ``mooring.cluster.report`` turns Ansible's events into calls on a :class:`RunLog`
(plain names, numbers and result mappings): what each host did, which executions really ran
(:func:`execution`), what failed (:func:`failure_message`) and what a changed task changed.
:mod:`plugin_utils.report` builds the report from it. (The lists of actions ansible-core runs on
the controller are ansible-core's own, from ``ansible.constants``.)

Times given to :class:`RunLog` are seconds of one monotonic clock; wall-clock times
(``started``) are timezone-aware UTC datetimes.
"""

from __future__ import annotations

import json
import re

from ansible import constants as C

MESSAGE_LIMIT = 300
# A fact a playbook sets (set_fact) to declare what the run leaves to do: a string or a list of strings.
REMAINING_FACT = "mooring_report_remaining"
# A fact the addons role sets for each add-on it handled: {name, version, state: applied | rendered}.
ADDON_FACT = "mooring_report_addon"
ADDON_STATES = ("applied", "rendered")
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


def _add(table, key, value):
    table[key] = table.get(key, 0.0) + value


class HostLog(object):
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
        self.addons = {}
        self.lock_paths = []
        self.preflight = None
        self.unsupported = []
        self._play = None
        self._segment = None

    def host(self, name):
        return self.hosts.setdefault(name, HostLog())

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
        addon = (result.get("ansible_facts") or {}).get(ADDON_FACT)
        if isinstance(addon, dict) and addon.get("name") and addon.get("state") in ADDON_STATES:
            self.addons[str(addon["name"])] = {"version": str(addon.get("version") or ""), "state": addon["state"]}
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
