# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Callback plugin mooring.cluster.report: the run report of install, upgrade, join and preflight."""

from __future__ import annotations

DOCUMENTATION = r"""
name: report
type: aggregate
short_description: A run report of install, upgrade, join and preflight, next to the inventory
version_added: 0.1.0
description:
  - At the end of the playbooks C(mooring.cluster.install), C(mooring.cluster.upgrade), C(mooring.cluster.join)
    and C(mooring.cluster.preflight) (recognised by the playbook's file name; any other playbook writes
    nothing), prints a compact table per host (changed, modules, controller, failed, time, what is left) and writes a report a user
    can keep or attach to a change ticket - JSON for scripts, Markdown for people.
  - Per host the report has the task counts of the PLAY RECAP; what really ran - C(modules), the module
    executions on the host (each loop item and each retry counts; a task delegated to another host counts
    there), and C(controller), the executions on the controller for the host (delegated to localhost, or
    with the local connection), while actions that never reach a host (set_fact, debug, assert, include_role
    and the like) count in neither; the names of the changed tasks, the versions
    installed (from the lock the run used and from the hosts' own C(mooring.cluster.bundle_install) and
    C(mooring.cluster.host_state) install results),
    the wall time and the time per role, and what is left - the failing task and its message, the
    unreachable task, the plays the host was not reached in, the kubeadm boundary of the lock, and whatever
    the playbook declares in the fact C(mooring_report_remaining).
  - The files are C(mooring-report-PLAYBOOK-YYYYmmddTHHMMSSZ.json) and C(.md) (the UTC start of the run),
    plus copies named C(mooring-report-PLAYBOOK-latest.json) and C(.md), each written atomically. They go
    to the hidden directory C(.mooring-reports) beside the first inventory source that is a path (inside
    it for a directory, in its directory for a file; Ansible would read a visible file there as
    inventory); with no inventory file (C(-i localhost,)) into the current directory.
  - A check run (C(--check)) writes the report too, marked C(check_mode=true).
  - The collection's playbooks load this callback without any configuration through the shim
    C(playbooks/callback_plugins/mooring_report.py) next to them. Enabling C(mooring.cluster.report) in
    C(callbacks_enabled) as well still writes one report. It works with any stdout callback, including
    ansible-runner's C(awx_display).
  - The JSON schema is described in the collection's C(docs/reports.md).
requirements:
  - PyYAML (an ansible-core requirement), to read the lock
options:
  report_dir:
    description:
      - The directory to write the reports to instead of the inventory's (created when missing).
    type: path
    env:
      - name: MOORING_REPORT_DIR
    ini:
      - section: mooring_report
        key: dir
  enabled:
    description:
      - Set to false to write no report and print no summary.
    type: bool
    default: true
    env:
      - name: MOORING_REPORT_ENABLED
    ini:
      - section: mooring_report
        key: enabled
author:
  - Mooring maintainers (@mooring)
"""

EXAMPLES = r"""
# Nothing to configure for the collection's playbooks; to write the reports elsewhere:
#   MOORING_REPORT_DIR=/srv/change-tickets/CHG-1234 ansible-playbook mooring.cluster.install -i lab/hosts.yml ...
# to write none:
#   MOORING_REPORT_ENABLED=false ansible-playbook mooring.cluster.upgrade -i lab/hosts.yml ...
# or in ansible.cfg:
#   [mooring_report]
#   dir = /srv/reports
#   enabled = true
"""

import datetime
import os
import time

from ansible import context
from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import action_loader, module_loader
from ansible.template import Templar

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.layout import boundary
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import load_lock
from ansible_collections.mooring.cluster.plugins.plugin_utils import report, reporttext, runlog

try:
    from ansible.release import __version__ as ANSIBLE_VERSION
except ImportError:  # pragma: no cover - ansible-core always has it
    ANSIBLE_VERSION = None


def _part(result, name):
    """``result.host``/``.task``/``.result``/``.task_fields`` (ansible-core 2.19), ``result._host``... before."""
    try:
        return getattr(result, name)
    except AttributeError:
        return getattr(result, "_" + name)


def _task_info(task):
    role = getattr(task, "_role", None)
    action = getattr(task, "resolved_action", None) or getattr(task, "action", None)
    return task.get_name(), role.get_name() if role is not None else None, action


def _is_loop(task):
    """The task has a loop (``loop:`` or ``with_*``): its items are counted, not its final result."""
    return getattr(task, "loop", None) is not None or bool(getattr(task, "loop_with", None))


def _needs_connection(action, collections):
    """False when the action's plugin declares it needs no connection to the host (ansible-core's set_fact,
    debug, assert..., this collection's controller-side actions), as the task executor finds the plugin."""
    try:
        found = module_loader.find_plugin_with_context(action, collection_list=collections)
        if found.resolved and found.action_plugin:
            handler = found.action_plugin
        elif action_loader.has_plugin(action, collection_list=collections):
            handler = action
        else:
            return True  # a module run by the 'normal' action: it goes to the host
        plugin = action_loader.get(handler, class_only=True, collection_list=collections)
    except Exception:  # an action that cannot be looked up here ran anyway: count it as reaching the host
        return True
    return bool(getattr(plugin, "_requires_connection", True))


def _pattern_text(hosts):
    return ",".join(str(h) for h in hosts) if isinstance(hosts, (list, tuple)) else str(hosts or "")


class CallbackModule(CallbackBase):
    """Collects the run's events into a :class:`runlog.RunLog`; the report is built and written at the end."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "mooring.cluster.report"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._log = None
        self._plays = []
        self._play = None
        self._batch = []
        self._connections = {}
        self._retries = {}
        self._needs_cache = {}

    # ---------------------------------------------------------------- the run
    def v2_playbook_on_start(self, playbook):
        self._log, self._plays, self._play = None, [], None
        if not self.get_option("enabled"):
            return
        path = os.path.abspath(getattr(playbook, "_file_name", "") or "")
        name = report.report_playbook(path)
        if name is None or not report.claim(playbook, self):
            return
        self._log = runlog.RunLog(name, path, datetime.datetime.now(datetime.timezone.utc), time.monotonic())
        self._plays = list(playbook.get_plays())

    def v2_playbook_on_play_start(self, play):
        if self._log is None:
            return
        self._play = play
        inventory = getattr(play.get_variable_manager(), "_inventory", None)
        batch, targeted = [], []
        if inventory is not None:
            batch = [h.get_name() for h in inventory.get_hosts(play.hosts)]
            targeted = [h.get_name() for h in inventory.get_hosts(play.hosts, ignore_restrictions=True)]
        self._batch = batch
        self._log.play_start(play._uuid, play.get_name(), batch, targeted, time.monotonic())

    def v2_playbook_on_task_start(self, task, is_conditional):
        if self._log is not None:
            self._log.task_start(_task_info(task)[1], time.monotonic())

    def v2_playbook_on_handler_task_start(self, task):
        self.v2_playbook_on_task_start(task, False)

    def v2_runner_on_start(self, host, task):
        if self._log is not None:
            self._log.host_start(host.get_name(), task._uuid, time.monotonic())
            # Only a task that may run a module on this host itself needs its connection looked up here.
            if not (_is_loop(task) or task.delegate_to or task.action in runlog.CONTROLLER_ACTIONS
                    or not self._needs_host(task.action, task)):
                self._connections[(host.get_name(), task._uuid)] = self._host_connection(host, task)

    def _host_connection(self, host, task):
        """The connection the task will use on ``host``: its ``ansible_connection`` variable (with the
        task's variables, as the task executor reads it), else None (the task's ``connection`` keyword,
        which the result's task fields carry). Only a loop item's task fields name the connection used."""
        play = self._play
        try:
            variables = play.get_variable_manager().get_vars(play=play, host=host, task=task, include_hostvars=False,
                                                             _hosts=self._batch, _hosts_all=self._batch)
            value = variables.get("ansible_connection")
            if isinstance(value, str) and "{{" in value:
                value = Templar(loader=getattr(play, "_loader", None), variables=variables).template(value)
        except Exception:  # variables that cannot be read here: the task's connection keyword
            return None
        return str(value) if value is not None else None

    def _needs_host(self, action, task):
        """:func:`_needs_connection` of the action, once per action and collection list."""
        key = (action, tuple(getattr(task, "collections", None) or ()))
        if key not in self._needs_cache:
            self._needs_cache[key] = _needs_connection(action, list(key[1]) or None)
        return self._needs_cache[key]

    def _execution(self, result, status, item):
        """Count one execution (a task without a loop, or one loop item) for :meth:`runlog.RunLog.execution`."""
        task = _part(result, "task")
        host = _part(result, "host").get_name()
        data = _part(result, "result") or {}
        fields = _part(result, "task_fields") or {}
        known = self._connections.pop((host, task._uuid), None)
        retries = self._retries.pop((host, task._uuid), 0)  # this execution's (this item's) earlier attempts
        if not item and _is_loop(task):
            return  # a loop's final result: its items were counted as they ran
        if status != "unreachable" and data.get("unreachable"):
            status = "unreachable"  # an item that could not reach the host comes as a failed item
        action = _task_info(task)[2]
        delegated = data.get("_ansible_delegated_vars") or {}
        delegate_to = fields.get("delegate_to")  # templated (per item for a loop) by the task executor
        if item:
            connection = fields.get("connection")  # the connection plugin that ran this item
        elif delegate_to:
            connection = delegated.get("ansible_connection") or fields.get("connection")
        else:
            connection = known or fields.get("connection")
        self._log.execution(host, action, status, connection=connection, delegate_to=delegate_to or None,
                            retries=retries, needs_connection=self._needs_host(action, task))

    def _result(self, result, status):
        if self._log is None:
            return
        task = _part(result, "task")
        name, role, action = _task_info(task)
        fields = _part(result, "task_fields") or {}
        probe = bool(fields.get("check_mode")) and not context.CLIARGS.get("check", False)
        self._log.host_result(_part(result, "host").get_name(), task._uuid, name, role, action, status,
                              dict(_part(result, "result") or {}), time.monotonic(), args=fields.get("args"), probe=probe)
        self._execution(result, status, item=False)

    def _item(self, result, status):
        if self._log is not None:
            self._execution(result, status, item=True)

    def v2_runner_retry(self, result):
        """An attempt of ``until``/``retries`` that will be retried: it ran; counted with the task's (item's) result."""
        if self._log is not None:
            key = (_part(result, "host").get_name(), _part(result, "task")._uuid)
            self._retries[key] = self._retries.get(key, 0) + 1

    def v2_runner_on_ok(self, result):
        self._result(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result(result, "ignored" if ignore_errors else "failed")

    def v2_runner_on_unreachable(self, result):
        self._result(result, "unreachable")

    def v2_runner_on_skipped(self, result):
        self._result(result, "skipped")

    def v2_runner_item_on_ok(self, result):
        self._item(result, "ok")

    def v2_runner_item_on_failed(self, result):
        self._item(result, "failed")

    def v2_runner_item_on_skipped(self, result):
        self._item(result, "skipped")

    # ---------------------------------------------------------------- the end
    def _declare_plays(self):
        """The playbook's plays in order; the hosts of those that never started, from the inventory."""
        for play in self._plays:
            hosts = None
            if play._uuid not in self._log.started_plays:
                hosts = self._play_hosts(play)
            self._log.declare_play(play._uuid, play.get_name(), hosts, _pattern_text(play.hosts))

    def _play_hosts(self, play):
        """The hosts a play that never started would have run on (None when its pattern cannot be resolved)."""
        manager = play.get_variable_manager()
        inventory = getattr(manager, "_inventory", None)
        if inventory is None:
            return None
        pattern = play.hosts
        try:
            if "{{" in _pattern_text(pattern):
                pattern = Templar(loader=getattr(play, "_loader", None), variables=manager.get_vars(play=play)).template(pattern)
            return [h.get_name() for h in inventory.get_hosts(pattern, ignore_restrictions=True)]
        except Exception:  # a template that needs host variables or a pattern that does not resolve: say so
            return None

    def _lock(self):
        """The lock the run used (the lock_values task's path, else -e mooring_lock), read with the lock reader."""
        path = self._log.lock_paths[0] if self._log.lock_paths else None
        if path is None and self._play is not None:
            extra = getattr(self._play.get_variable_manager(), "extra_vars", None) or {}
            candidate = extra.get("mooring_lock") or extra.get("bundle_lock")  # the old name until 0.4.0
            path = str(candidate) if isinstance(candidate, str) and candidate and "{{" not in candidate else None
        if path is None:
            return None
        try:
            lock = load_lock(path)
            return report.lock_summary(lock, os.path.abspath(path), boundary(lock))
        except (MooringError, OSError, ValueError) as exc:
            return {"path": os.path.abspath(path), "error": runlog.shorten(str(exc))}

    def v2_playbook_on_stats(self, stats):
        log = self._log
        if log is None:
            return
        try:
            log.end(time.monotonic())
            self._declare_plays()
            finished = datetime.datetime.now(datetime.timezone.utc)
            counts = {host: stats.summarize(host) for host in sorted(stats.processed)}
            sources = context.CLIARGS.get("inventory") or ()
            data = report.build_report(log, counts, finished, check_mode=context.CLIARGS.get("check", False),
                                       inventory=sources, limit=context.CLIARGS.get("subset"), lock=self._lock(),
                                       ansible_version=ANSIBLE_VERSION)
            paths = None
            try:
                directory = report.report_directory(self.get_option("report_dir"), sources, os.getcwd())
                paths = report.write_report(data, directory, report.report_stamp(log.started))
            except OSError as exc:
                self._display.warning("mooring.cluster.report: the run report was not written: %s" % exc)
            self._display.display("")
            for line in reporttext.summary_lines(data, paths):
                self._display.display(line)
        finally:
            self._log = None
            self._connections, self._retries = {}, {}
