# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What really ran (``modules``, ``controller``): the report callback fed fake events, without ansible-playbook.

The callback is loaded through Ansible's callback loader (its options from its DOCUMENTATION) and gets
the events ansible-core 2.19 sends, in that order, with results shaped as the task executor shapes them
(a loop's items, then its final result with ``results``; ``_ansible_delegated_vars``; the task fields
with the templated ``delegate_to`` and, for a loop item, the connection plugin that ran it). Only the
action plugins' ``_requires_connection`` is looked up for real. test_report.py runs the real thing.
"""

from __future__ import annotations

import itertools
import json
import re

import pytest
from ansible.plugins.loader import callback_loader

_UUIDS = itertools.count(1)


class Host(object):
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


class Task(object):
    def __init__(self, name, action, loop=None, delegate_to=None):
        self._uuid = "task-%d" % next(_UUIDS)
        self.name, self.action, self.resolved_action = name, action, action
        self.loop, self.loop_with, self.delegate_to = loop, None, delegate_to
        self.collections, self._role = [], None

    def get_name(self):
        return self.name


class Result(object):
    """ansible-core 2.19's CallbackTaskResult: host, task, result, task_fields."""

    def __init__(self, host, task, result, **fields):
        self.host, self.task, self.result = host, task, result
        self.task_fields = dict({"action": task.action, "connection": "ssh", "delegate_to": None}, **fields)


class Inventory(object):
    def __init__(self, hosts):
        self.hosts = hosts

    def get_hosts(self, pattern, ignore_restrictions=False):
        return list(self.hosts.values())


class VariableManager(object):
    """get_vars() as the strategy's: here only ``ansible_connection`` matters (per host)."""

    def __init__(self, hosts, connections):
        self._inventory = Inventory(hosts)
        self.connections = connections
        self.extra_vars = {}
        self.calls = []

    def get_vars(self, play=None, host=None, task=None, **kwargs):
        self.calls.append((host.get_name(), task.get_name()))
        return dict({"inventory_hostname": host.get_name()}, **self.connections.get(host.get_name(), {}))


class Play(object):
    def __init__(self, manager):
        self._uuid, self.hosts, self.manager = "play-1", "all", manager

    def get_name(self):
        return "Nodes"

    def get_variable_manager(self):
        return self.manager


class Playbook(object):
    def __init__(self, path, play):
        self._file_name, self.play = path, play

    def get_plays(self):
        return [self.play]


class Stats(object):
    def __init__(self, hosts):
        self.processed = dict.fromkeys(hosts, 1)

    def summarize(self, host):
        return {"ok": 1, "changed": 0, "failures": 0, "skipped": 0, "unreachable": 0, "rescued": 0, "ignored": 0}


class Run(object):
    """One playbook run into the callback: ``task()`` sends a task's events for each host."""

    def __init__(self, callback, hosts, connections):
        self.callback = callback
        self.hosts = {name: Host(name) for name in hosts}
        self.manager = VariableManager(self.hosts, connections)
        self.play = Play(self.manager)

    def start(self, tmp_path):
        self.callback.v2_playbook_on_start(Playbook(str(tmp_path / "playbooks" / "preflight.yml"), self.play))
        self.callback.v2_playbook_on_play_start(self.play)

    def task(self, task, *events):
        """``events``: (host, callback name, result mapping, task fields) in the order Ansible sends them."""
        self.callback.v2_playbook_on_task_start(task, False)
        started = []
        for host, event, data, fields in events:
            if host not in started:
                started.append(host)
                self.callback.v2_runner_on_start(self.hosts[host], task)
            result = Result(self.hosts[host], task, dict(data), **fields)
            if event == "ignored":
                self.callback.v2_runner_on_failed(result, ignore_errors=True)
            else:
                getattr(self.callback, event)(result)


def _callback(tmp_path, monkeypatch):
    monkeypatch.setenv("MOORING_REPORT_DIR", str(tmp_path / "reports"))
    callback = callback_loader.get("mooring.cluster.report")
    callback.set_options()
    return callback


def _loop(host, items, final_event, connection="ansible.builtin.ssh", **fields):
    """A loop's events: each item (item callback, result), then the final result repeating them."""
    events = [(host, "v2_runner_item_on_" + kind, dict(item, _ansible_item_label=i), dict(fields, connection=connection))
              for i, (kind, item) in enumerate(items)]
    events.append((host, final_event, {"changed": True, "results": [dict(item) for _kind, item in items]}, fields))
    return events


OK, SKIPPED, FAILED = ("ok", {"changed": True}), ("skipped", {"skipped": True}), ("failed", {"failed": True, "rc": 1})


@pytest.fixture()
def run(tmp_path, monkeypatch):
    """cp1 and w1 over ssh (w1's ansible_connection says so, cp1 has none), lab with ansible_connection=local."""
    run = Run(_callback(tmp_path, monkeypatch), ["cp1", "w1", "lab"],
              {"w1": {"ansible_connection": "ssh"}, "lab": {"ansible_connection": "local"}})
    run.start(tmp_path)
    return run


def _report(run, tmp_path, capsys):
    run.callback.v2_playbook_on_stats(Stats(["cp1", "w1", "lab"]))
    with open(str(tmp_path / "reports" / "mooring-report-preflight-latest.json"), encoding="utf-8") as handle:
        data = json.load(handle)
    return data, capsys.readouterr().out


def _ran(data):
    return {name: (host["modules"], host["controller"]) for name, host in data["hosts"].items()}


def test_a_loop_counts_its_items_that_ran_once(run, tmp_path, capsys):
    run.task(Task("Install", "ansible.builtin.command", loop=[1, 2, 3, 4, 5]),
             *_loop("cp1", [OK, OK, SKIPPED, OK, OK], "v2_runner_on_ok"))
    # Every item skipped: the final result is a skip, nothing ran.
    run.task(Task("Nothing to do", "ansible.builtin.command", loop=[1, 2]),
             *_loop("w1", [SKIPPED, SKIPPED], "v2_runner_on_skipped"))
    # A failed item ran; an item that could not reach the host (sent as a failed item) did not.
    run.task(Task("Some fail", "ansible.builtin.command", loop=["a", "b", "c"]),
             *_loop("w1", [OK, FAILED, ("failed", {"unreachable": True, "msg": "gone"})], "ignored"))
    # The local connection that ran lab's items (the task fields of an item name it).
    run.task(Task("Local items", "ansible.builtin.command", loop=[1, 2]),
             *_loop("lab", [OK, OK], "v2_runner_on_ok", connection="ansible.builtin.local"))
    data, out = _report(run, tmp_path, capsys)
    assert _ran(data) == {"cp1": (4, 0), "w1": (2, 0), "lab": (0, 2)}
    assert (data["totals"]["modules"], data["totals"]["controller"]) == (6, 2)
    # No connection was looked up for a loop: its items carry the one that ran them.
    assert run.manager.calls == []
    assert re.search(r"^  cp1 +0 +4 +0 +0 +\S+s +-$", out, re.M), out


def test_retries_each_attempt_ran(run, tmp_path, capsys):
    task = Task("Wait for it", "ansible.builtin.command")
    retry = {"failed": True, "attempts": 1, "retries": 3, "_ansible_retry": True}
    run.task(task, ("w1", "v2_runner_retry", retry, {}), ("w1", "v2_runner_retry", dict(retry, attempts=2), {}),
             ("w1", "v2_runner_on_ok", {"attempts": 3, "changed": False}, {}))
    # In a loop, each item's attempts come before its result.
    looped = Task("Each, until", "ansible.builtin.command", loop=["a", "b"])
    run.task(looped, ("cp1", "v2_runner_retry", retry, {}), *_loop("cp1", [OK, OK], "v2_runner_on_ok"))
    data, _printed = _report(run, tmp_path, capsys)
    assert _ran(data) == {"cp1": (3, 0), "w1": (3, 0), "lab": (0, 0)}


def test_delegated_tasks(run, tmp_path, capsys):
    local = {"_ansible_delegated_vars": {"ansible_host": "localhost", "ansible_port": None, "ansible_user": None,
                                         "ansible_connection": "local"}, "changed": False}
    run.task(Task("Fetch on the controller", "ansible.builtin.get_url", delegate_to="localhost"),
             *[(h, "v2_runner_on_ok", local, {"delegate_to": "localhost"}) for h in ("cp1", "w1")])
    # Delegated to the first control plane, for each worker: it ran on cp1.
    remote = {"_ansible_delegated_vars": {"ansible_host": "10.0.0.1", "ansible_port": None, "ansible_user": "root"}}
    run.task(Task("Drain", "ansible.builtin.command", delegate_to="{{ groups.control_plane[0] }}"),
             ("w1", "v2_runner_on_ok", remote, {"delegate_to": "cp1"}), ("lab", "v2_runner_on_ok", remote, {"delegate_to": "cp1"}))
    # A delegated loop: each item's own (templated) delegate_to.
    run.task(Task("Each", "ansible.builtin.command", loop=["localhost", "bastion"], delegate_to="{{ item }}"),
             ("w1", "v2_runner_item_on_ok", local, {"delegate_to": "localhost", "connection": "ansible.builtin.local"}),
             ("w1", "v2_runner_item_on_ok", remote, {"delegate_to": "bastion", "connection": "ansible.builtin.ssh"}),
             ("w1", "v2_runner_on_ok", {"changed": False, "results": [{}, {}]}, {"delegate_to": "{{ item }}"}))
    data, out = _report(run, tmp_path, capsys)
    assert _ran(data) == {"cp1": (2, 1), "w1": (0, 2), "lab": (0, 0), "bastion": (1, 0)}
    # bastion only ran what was delegated to it: it is in the report, and the run is complete.
    assert data["hosts"]["bastion"]["status"] == "ok" and data["outcome"] == "success"
    assert run.manager.calls == [], "a delegated task's connection comes with its result"
    assert re.search(r"^  bastion +0 +1 +0 +0 +\S+s +-$", out, re.M), out


def test_the_host_connection_is_its_variable_else_the_task_keyword(run, tmp_path, capsys):
    # Task fields carry the connection keyword ('ssh', the default): lab's ansible_connection=local wins.
    run.task(Task("Look", "ansible.builtin.command"),
             *[(h, "v2_runner_on_ok", {"changed": False}, {}) for h in ("cp1", "w1", "lab")])
    # connection: local on the task: cp1 has no ansible_connection, so local; w1's variable says ssh, which wins.
    run.task(Task("Local by keyword", "ansible.builtin.command"),
             *[(h, "v2_runner_on_ok", {"changed": False}, {"connection": "local"}) for h in ("cp1", "w1")])
    # A failed or ignored module ran; a skipped or unreachable one did not.
    run.task(Task("Probe", "ansible.builtin.command"), ("cp1", "v2_runner_on_failed", {"failed": True}, {}),
             ("w1", "ignored", {"failed": True}, {}), ("lab", "v2_runner_on_skipped", {"skipped": True}, {}))
    run.task(Task("Reach", "ansible.builtin.ping"), ("w1", "v2_runner_on_unreachable", {"unreachable": True, "msg": "x"}, {}))
    data, _printed = _report(run, tmp_path, capsys)
    assert _ran(data) == {"cp1": (2, 1), "w1": (3, 0), "lab": (0, 1)}
    assert sorted(set(run.manager.calls)) == [("cp1", "Local by keyword"), ("cp1", "Look"), ("cp1", "Probe"),
                                              ("lab", "Look"), ("lab", "Probe"), ("w1", "Local by keyword"),
                                              ("w1", "Look"), ("w1", "Probe"), ("w1", "Reach")]


def test_actions_that_never_reach_a_host(run, tmp_path, capsys):
    for action in ("ansible.builtin.set_fact", "ansible.builtin.debug", "ansible.builtin.assert", "ansible.builtin.fail",
                   "ansible.builtin.validate_argument_spec", "ansible.builtin.include_vars", "ansible.builtin.set_stats",
                   "ansible.builtin.pause", "ansible.builtin.add_host", "ansible.builtin.group_by", "ansible.builtin.include_role",
                   "mooring.cluster.lock_values", "mooring.cluster.pki"):
        run.task(Task(action, action), *[(h, "v2_runner_on_ok", {"changed": False}, {}) for h in ("cp1", "lab")])
    # include_tasks in a loop: its items are include results too.
    run.task(Task("Each file", "ansible.builtin.include_tasks", loop=["a.yml", "b.yml"]),
             *_loop("w1", [("ok", {"include": "a.yml"}), ("ok", {"include": "b.yml"})], "v2_runner_on_ok"))
    # set_fact delegated to localhost, and in a loop, is no controller execution either.
    run.task(Task("Fact", "ansible.builtin.set_fact", delegate_to="localhost"),
             ("w1", "v2_runner_on_ok", {"ansible_facts": {"x": 1}}, {"delegate_to": "localhost", "connection": "local"}))
    # ... while a module of this collection does reach the host.
    run.task(Task("Install", "mooring.cluster.bundle_install"), ("w1", "v2_runner_on_ok", {"changed": True}, {}))
    data, _printed = _report(run, tmp_path, capsys)
    assert _ran(data) == {"cp1": (0, 0), "w1": (1, 0), "lab": (0, 0)}
    # No variables were read for them: only for the module.
    assert run.manager.calls == [("w1", "Install")]
