# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run report's data (plugin_utils/report.py), built from events without running Ansible.

The callback feeds a RunLog; these tests feed it the same calls with fixed clock readings, so every
count, duration and 'what is left' entry is checked exactly. tests/unit/plugins/callback/test_report.py
runs the real callback under ansible-playbook.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import re

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.layout import boundary
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import build_lock
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import parse_installer
from ansible_collections.mooring.cluster.plugins.plugin_utils import report, reporttext, runlog

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
START = datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.timezone.utc)
END = START + datetime.timedelta(seconds=100)
PRE = "mooring.cluster.preflight"
ETCD = "mooring.cluster.etcd"


def _stats(ok=0, changed=0, failures=0, skipped=0, unreachable=0, rescued=0, ignored=0):
    """What ansible's AggregateStats.summarize(host) returns."""
    return {"ok": ok, "changed": changed, "failures": failures, "skipped": skipped, "unreachable": unreachable,
            "rescued": rescued, "ignored": ignored}


def _run():
    """Two plays over cp1, w1 and e1: changes, a rescued failure, an ignored one, a failure, an unreachable host."""
    log = runlog.RunLog("install", "/c/playbooks/install.yml", START, 1000.0)
    log.play_start("p1", "Nodes", ["cp1", "w1", "e1"], ["cp1", "w1", "e1"], 1000.0)
    # t1 (role preflight): ok everywhere, changed on cp1 and w1.
    log.task_start(PRE, 1000.0)
    for host, at in (("cp1", 1000.0), ("w1", 1000.5), ("e1", 1001.0)):
        log.host_start(host, "t1", at)
    log.host_result("cp1", "t1", "%s : Check" % PRE, PRE, "mooring.cluster.preflight_check", "ok",
                    {"changed": True}, 1002.0)
    log.host_result("w1", "t1", "%s : Check" % PRE, PRE, "mooring.cluster.preflight_check", "ok",
                    {"changed": True}, 1003.0)
    log.host_result("e1", "t1", "%s : Check" % PRE, PRE, "mooring.cluster.preflight_check", "unreachable",
                    {"unreachable": True, "msg": "Failed to connect to the host via ssh:\n  Connection refused"}, 1001.5)
    # t2 (role etcd): bundle_install with versions on cp1; a failure on w1; the same changed task twice on cp1.
    log.task_start(ETCD, 1004.0)
    log.host_start("cp1", "t2", 1004.0)
    log.host_start("w1", "t2", 1004.0)
    log.host_result("cp1", "t2", "%s : Install etcd" % ETCD, ETCD, "mooring.cluster.bundle_install", "ok",
                    {"changed": True, "versions": {"etcd": "3.6.14", "etcdctl": "3.6.14"},
                     "artifacts": [{"name": "etcd", "version": "3.6.14", "files": []}]}, 1010.0)
    log.host_result("w1", "t2", "%s : Install etcd" % ETCD, ETCD, "mooring.cluster.bundle_install", "failed",
                    {"failed": True, "msg": "installed binaries do not match the lock: etcd 3.5.0"}, 1006.0)
    log.host_start("cp1", "t2b", 1010.0)
    log.host_result("cp1", "t2b", "%s : Install etcd" % ETCD, ETCD, "mooring.cluster.bundle_install", "ok",
                    {"changed": True, "versions": {}}, 1011.0)
    # t3 (no role): the lock, read on the controller; a declared remaining item; an ignored failure.
    log.task_start(None, 1012.0)
    log.host_start("cp1", "t3", 1012.0)
    log.host_result("cp1", "t3", "Read the lock (controller)", None, "mooring.cluster.lock_values", "ok",
                    {"changed": False, "ansible_facts": {runlog.REMAINING_FACT: ["the add-ons  are\nrendered only", ""]}},
                    1013.0, args={"path": "lab/installer.lock.yaml"})
    log.host_result("cp1", "t3i", "Optional probe", None, "ansible.builtin.command", "ignored",
                    {"failed": True, "msg": "ignored"}, 1013.5)
    # A rescued failure on cp1: recorded, but the stats say failed=0.
    log.host_result("cp1", "t4", "Try", None, "ansible.builtin.command", "failed", {"msg": "first try"}, 1014.0)
    # What ran: the callback calls execution() for each task without a loop and each loop item.
    log.execution("cp1", "mooring.cluster.preflight_check", "ok", "ansible.builtin.ssh")
    log.execution("w1", "mooring.cluster.preflight_check", "ok", "ssh")
    log.execution("e1", "mooring.cluster.preflight_check", "unreachable", "ssh")
    log.execution("cp1", "mooring.cluster.bundle_install", "ok", "ssh", retries=2)  # third attempt: 3
    log.execution("w1", "mooring.cluster.bundle_install", "failed", "ssh")
    log.execution("cp1", "mooring.cluster.lock_values", "ok", "ssh", needs_connection=False)
    log.execution("cp1", "ansible.builtin.command", "ignored", "ssh", delegate_to="localhost")
    log.execution("w1", "ansible.builtin.command", "ok", "ssh", delegate_to="cp1")  # ran on cp1
    log.play_start("p2", "Workers, one at a time", ["cp1"], ["cp1", "w1"], 1015.0)
    log.task_start(PRE, 1015.0)
    log.end(1020.0)
    log.declare_play("p1", "Nodes")
    log.declare_play("p2", "Workers, one at a time")
    log.declare_play("p3", "Add-ons", ["cp1"], "control_plane[0]")
    log.declare_play("p4", "Join", None, "{{ join_hosts }}")
    counts = {"cp1": _stats(ok=5, changed=3, rescued=1, ignored=1), "w1": _stats(ok=1, changed=1, failures=1),
              "e1": _stats(unreachable=1)}
    return log, counts


def test_report_playbook_by_file_name():
    assert report.report_playbook("/x/playbooks/install.yml") == "install"
    assert report.report_playbook("upgrade.yaml") == "upgrade"
    assert [report.report_playbook(p) for p in ("join.yml", "preflight.yml")] == ["join", "preflight"]
    for other in ("site.yml", "install.yml.orig", "install", "/x/install/site.yml", "bundle.yml", None, ""):
        assert report.report_playbook(other) is None


def test_shorten_and_failure_messages():
    assert runlog.shorten("a \n\t b  ") == "a b"
    assert runlog.shorten("x" * 400) == "x" * 297 + "..."
    assert len(runlog.shorten("word " * 100, 50)) == 50
    assert runlog.shorten({"b": 1, "a": [2]}) == '{"a": [2], "b": 1}'
    assert runlog.failure_message({"msg": "boom\n  twice"}) == "boom twice"
    assert runlog.failure_message({"stderr": "one\ntwo\n\n", "rc": 2}) == "two"
    assert runlog.failure_message({"rc": 3}) == "exit code 3"
    assert runlog.failure_message({"_ansible_no_log": True, "msg": "secret"}) == "(hidden: no_log)"
    loop = {"msg": "One or more items failed", "results": [
        {"item": "a", "failed": False}, {"item": "b", "failed": True, "msg": "no b"}]}
    assert runlog.failure_message(loop) == "item b: no b"
    hidden = {"results": [{"item": "k", "failed": True, "_ansible_no_log": True, "msg": "password"}]}
    assert runlog.failure_message(hidden) == "(hidden: no_log)"


def test_counts_changed_tasks_durations_and_versions():
    log, counts = _run()
    data = report.build_report(log, counts, END, inventory=["/inv/hosts.yml"], limit="cp1,w1,e1",
                               ansible_version="2.19.0")
    cp1, w1, e1 = data["hosts"]["cp1"], data["hosts"]["w1"], data["hosts"]["e1"]
    assert list(data["hosts"]) == ["cp1", "e1", "w1"]
    assert cp1["counts"] == {"ok": 5, "changed": 3, "failed": 0, "skipped": 0, "unreachable": 0, "rescued": 1,
                             "ignored": 1}
    assert w1["counts"]["failed"] == 1 and e1["counts"]["unreachable"] == 1
    # Changed task names once each, in order; a failed task is not a change.
    assert cp1["changed_tasks"] == ["%s : Check" % PRE, "%s : Install etcd" % ETCD]
    assert w1["changed_tasks"] == ["%s : Check" % PRE]
    # Wall time per host: first start to last result; per role: the host's task times.
    assert cp1["duration"] == 14.0 and w1["duration"] == 5.5 and e1["duration"] == 0.5
    assert cp1["roles"] == {PRE: 2.0, ETCD: 7.0}
    assert w1["roles"] == {PRE: 2.5, ETCD: 2.0}
    # Run-wide wall time per role: from each task start to the next (the last segment ends with the run).
    assert data["roles"] == {PRE: 9.0, ETCD: 8.0}
    assert data["duration"] == 20.0
    assert cp1["versions"] == {"etcd": "3.6.14", "etcdctl": "3.6.14"} and cp1["artifacts"] == {"etcd": "3.6.14"}
    assert w1["versions"] == {} and w1["artifacts"] == {}, "a failed install reports no version"
    assert log.lock_paths == ["lab/installer.lock.yaml"]
    assert data["started"] == "2026-03-04T05:06:07Z" and data["finished"] == "2026-03-04T05:07:47Z"
    assert data["totals"] == {"hosts": 3, "ok": 6, "changed": 4, "failed": 1, "skipped": 0, "unreachable": 1,
                              "rescued": 1, "ignored": 1, "modules": 7, "controller": 1}
    assert [(h["modules"], h["controller"]) for h in (cp1, w1, e1)] == [(5, 1), (2, 0), (0, 0)]
    assert (data["schema"], data["kind"], data["playbook"]) == (1, "MooringRunReport", "install")
    assert (data["inventory"], data["limit"], data["ansible_version"]) == (["/inv/hosts.yml"], "cp1,w1,e1", "2.19.0")
    assert data["check_mode"] is False and data["lock"] is None
    assert json.loads(report.report_json(data)) == data


def test_what_is_left():
    log, counts = _run()
    data = report.build_report(log, counts, END)
    cp1, w1, e1 = data["hosts"]["cp1"], data["hosts"]["w1"], data["hosts"]["e1"]
    assert (w1["status"], e1["status"]) == ("failed", "unreachable")
    assert w1["failure"] == {"task": "%s : Install etcd" % ETCD, "play": "Nodes",
                             "message": "installed binaries do not match the lock: etcd 3.5.0"}
    assert e1["unreachable"] == {"task": "%s : Check" % PRE, "play": "Nodes",
                                 "message": "Failed to connect to the host via ssh: Connection refused"}
    # cp1's failure was rescued (stats: failed=0) and its ignored error is no failure.
    assert cp1["failure"] is None and cp1["unreachable"] is None
    # cp1 ran the second play; w1 was in it but its batch never started; p3 never ran (cp1); p4's hosts unknown.
    assert cp1["not_reached"] == ["Add-ons"] and cp1["status"] == "incomplete"
    assert w1["not_reached"] == ["Workers, one at a time"]
    assert data["plays_not_run"] == [{"name": "Add-ons", "hosts": ["cp1"], "pattern": "control_plane[0]"},
                                     {"name": "Join", "hosts": None, "pattern": "{{ join_hosts }}"}]
    assert data["remaining"] == [
        {"kind": "unreachable", "hosts": ["e1"], "task": "%s : Check" % PRE,
         "what": "Failed to connect to the host via ssh: Connection refused"},
        {"kind": "failed", "hosts": ["w1"], "task": "%s : Install etcd" % ETCD,
         "what": "installed binaries do not match the lock: etcd 3.5.0"},
        {"kind": "not_reached", "hosts": ["cp1"], "task": None, "what": "play not run: Add-ons"},
        {"kind": "not_reached", "hosts": [], "task": None, "what": "play not run: Join (hosts: {{ join_hosts }})"},
        {"kind": "not_reached", "hosts": ["w1"], "task": None, "what": "not reached in: Workers, one at a time"},
        {"kind": "declared", "hosts": [], "task": None, "what": "the add-ons are rendered only"},
    ]
    assert data["outcome"] == "failed"


@pytest.mark.parametrize("counts, plays, outcome, status", [
    ({"h": _stats(ok=2)}, [], "success", "ok"),
    ({"h": _stats(ok=2, changed=1)}, [], "success", "changed"),
    ({"h": _stats(ok=2)}, [("q", "Later", ["h"], "h")], "incomplete", "incomplete"),
    ({"h": _stats(ok=1, failures=1)}, [], "failed", "failed"),
    ({"h": _stats(unreachable=1)}, [], "failed", "unreachable"),
    ({}, [("q", "Later", ["h"], "h")], "incomplete", "not_reached"),
])
def test_outcome_and_status(counts, plays, outcome, status):
    log = runlog.RunLog("preflight", "preflight.yml", START, 0.0)
    log.declare_play("p", "Checks")
    log.play_start("p", "Checks", sorted(counts), sorted(counts), 0.0)
    for uuid, name, hosts, pattern in plays:
        log.declare_play(uuid, name, hosts, pattern)
    log.end(1.0)
    data = report.build_report(log, counts, END, check_mode=True)
    assert data["outcome"] == outcome and data["hosts"]["h"]["status"] == status
    assert data["check_mode"] is True


CONTROLLER_ONLY = ["include_tasks", "ansible.builtin.include_role", "import_tasks", "ansible.builtin.import_role", "meta",
                   "ansible.builtin.meta", "set_fact", "ansible.legacy.set_fact", "ansible.builtin.debug", "assert",
                   "ansible.builtin.fail", "ansible.builtin.validate_argument_spec", "add_host", "ansible.builtin.group_by",
                   "include_vars", "ansible.builtin.set_stats", "ansible.builtin.pause"]


@pytest.mark.parametrize("action", CONTROLLER_ONLY)
def test_actions_that_never_reach_a_host_count_nothing(action):
    assert action in runlog.CONTROLLER_ACTIONS
    for connection, delegate_to in (("ssh", None), ("local", None), ("ssh", "localhost"), ("ssh", "cp1")):
        assert runlog.execution(action, "ok", connection, delegate_to) is None
    assert runlog.execution(action, "failed", "ssh", retries=3) is None


@pytest.mark.parametrize("args, kwargs, counted", [
    # A module on the host, whatever its result, once it ran; with the attempts before it.
    (("ansible.builtin.command", "ok", "ssh"), {}, ("modules", None, 1)),
    (("ansible.builtin.command", "ok", "ansible.builtin.ssh"), {}, ("modules", None, 1)),
    (("command", "failed", "paramiko_ssh"), {}, ("modules", None, 1)),
    (("mooring.cluster.bundle_install", "ignored", "ssh"), {}, ("modules", None, 1)),
    (("ansible.builtin.command", "ok", "ssh"), {"retries": 2}, ("modules", None, 3)),
    (("ansible.builtin.setup", "ok", None), {}, ("modules", None, 1)),
    # Not run: skipped or unreachable (but the attempts before an unreachable one ran).
    (("ansible.builtin.command", "skipped", "ssh"), {}, None),
    (("ansible.builtin.command", "unreachable", "ssh"), {}, None),
    (("ansible.builtin.command", "unreachable", "ssh"), {"retries": 2}, ("modules", None, 2)),
    # On the controller: the local connection, or delegated to localhost.
    (("ansible.builtin.command", "ok", "local"), {}, ("controller", None, 1)),
    (("ansible.builtin.command", "ok", "ansible.builtin.local"), {}, ("controller", None, 1)),
    (("ansible.builtin.command", "ok", "ansible.legacy.local"), {"retries": 1}, ("controller", None, 2)),
    (("ansible.builtin.command", "ok", "ssh"), {"delegate_to": "localhost"}, ("controller", None, 1)),
    (("ansible.builtin.command", "ok", "ssh"), {"delegate_to": "127.0.0.1"}, ("controller", None, 1)),
    (("ansible.builtin.command", "ok", "local"), {"delegate_to": "cp1"}, ("controller", None, 1)),
    # Delegated to another host: it ran there.
    (("ansible.builtin.command", "ok", "ssh"), {"delegate_to": "cp1"}, ("modules", "cp1", 1)),
    # A plugin that needs no connection (set_fact's kind, this collection's controller-side actions).
    (("mooring.cluster.lock_values", "ok", "ssh"), {"needs_connection": False}, None),
    (("mooring.cluster.pki", "ok", "local"), {"needs_connection": False}, None),
])
def test_what_one_execution_counts(args, kwargs, counted):
    assert runlog.execution(*args, **kwargs) == counted


def test_executions_per_host_and_a_host_only_delegated_to():
    log = runlog.RunLog("upgrade", "upgrade.yml", START, 0.0)
    log.play_start("p", "Workers", ["w1", "w2"], ["w1", "w2"], 0.0)
    for host in ("w1", "w2"):
        log.host_result(host, "t", "Drain", None, "ansible.builtin.command", "ok", {"changed": True}, 1.0)
        assert log.execution(host, "ansible.builtin.command", "ok", "ssh", delegate_to="cp1") == ("modules", "cp1", 1)
        log.execution(host, "ansible.builtin.set_fact", "ok", "ssh")
        log.execution(host, "ansible.builtin.command", "ok", "ssh")
    log.execution("w2", "ansible.builtin.get_url", "ok", "ssh", delegate_to="localhost")
    log.end(2.0)
    data = report.build_report(log, {"w1": _stats(ok=2, changed=1), "w2": _stats(ok=2, changed=1)}, END)
    assert {name: (h["modules"], h["controller"]) for name, h in data["hosts"].items()} == {
        "cp1": (2, 0), "w1": (1, 0), "w2": (1, 1)}
    # cp1 was not in the play: it ran what was delegated to it, nothing else; the run is complete.
    assert data["hosts"]["cp1"]["status"] == "ok" and data["hosts"]["cp1"]["counts"] == _stats_counts()
    assert data["outcome"] == "success" and data["remaining"] == []
    assert (data["totals"]["modules"], data["totals"]["controller"], data["totals"]["hosts"]) == (4, 1, 3)


def _stats_counts():
    return dict.fromkeys(report.COUNT_KEYS, 0)


def test_declared_remaining_as_a_string_and_no_log_or_probe_results_carry_no_version():
    log = runlog.RunLog("join", "join.yml", START, 0.0)
    log.host_result("h", "t", "Declare", None, "ansible.builtin.set_fact", "ok",
                    {"ansible_facts": {runlog.REMAINING_FACT: "kubeadm join not run"}}, 1.0)
    log.host_result("h", "t", "Declare again", None, "ansible.builtin.set_fact", "ok",
                    {"ansible_facts": {runlog.REMAINING_FACT: ["kubeadm join not run", 7]}}, 1.0)
    log.host_result("h", "u", "Secret install", None, "mooring.cluster.bundle_install", "ok",
                    {"_ansible_no_log": True, "versions": {"etcd": "1"}}, 2.0)
    # upgrade.yml's read-only look (check_mode: true in a real run) lists the bundle's artifacts: not installed.
    log.host_result("h", "v", "What differs", None, "mooring.cluster.bundle_install", "ok",
                    {"versions": {}, "artifacts": [{"name": "containerd", "version": "2.1.4"}]}, 2.0, probe=True)
    # A lock that could not be read is still the lock the run used (the report says why it was not read).
    log.host_result("h", "w", "Read the lock", None, "lock_values", "failed", {"msg": "no such file"}, 2.0,
                    args={"path": "missing.lock.yaml"})
    log.host_result("h", "x", "Skipped read", None, "lock_values", "skipped", {}, 2.0, args={"path": "other.lock.yaml"})
    assert log.lock_paths == ["missing.lock.yaml"]
    log.end(2.0)
    data = report.build_report(log, {"h": _stats(ok=3)}, END)
    assert [i["what"] for i in data["remaining"]] == ["kubeadm join not run"]
    assert data["hosts"]["h"]["versions"] == {} and data["hosts"]["h"]["artifacts"] == {}


def test_each_addon_is_reported_applied_or_rendered_and_nothing_else():
    log = runlog.RunLog("install", "install.yml", START, 0.0)
    for name, version, state in (("flannel", "0.27.4", "applied"), ("calico", "3.30.0", "rendered"),
                                 ("metricsServer", "0.8.0", "applied"), ("bogus", "1", "maybe")):
        log.host_result("cp1", name, "What the run did with it", "addons", "ansible.builtin.set_fact", "ok",
                        {"ansible_facts": {runlog.ADDON_FACT: {"name": name, "version": version, "state": state}}}, 1.0)
    log.host_result("cp1", "nolog", "Hidden", "addons", "ansible.builtin.set_fact", "ok",
                    {"_ansible_no_log": True, "ansible_facts": {runlog.ADDON_FACT: {"name": "x", "state": "applied"}}}, 1.0)
    log.end(2.0)
    data = report.build_report(log, {"cp1": _stats(ok=5)}, END)
    assert data["addons"] == {"calico": {"version": "3.30.0", "state": "rendered"},
                              "flannel": {"version": "0.27.4", "state": "applied"},
                              "metricsServer": {"version": "0.8.0", "state": "applied"}}
    text = reporttext.render_markdown(data)
    assert "| calico | 3.30.0 | rendered only (not applied) |" in text
    assert "| flannel | 0.27.4 | applied, and waited for until running |" in text
    assert "bogus" not in text
    empty = report.build_report(runlog.RunLog("install", "install.yml", START, 0.0), {}, END)
    assert empty["addons"] == {} and "## Add-ons" not in reporttext.render_markdown(empty)


CATALOG = load_catalog()
SPEC = {"kubernetes": {"version": "1.35.x"}, "etcd": {"version": "3.6.x"}, "containerd": {"version": "2.1.x"},
        "calico": {"version": "latest"}}


@pytest.fixture(scope="module")
def lock():
    document = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "Installer", "metadata": {"name": "lab"},
                "spec": SPEC}
    return build_lock(parse_installer(document), CATALOG, ("amd64",))


def test_lock_versions_and_the_kubeadm_boundary(lock):
    full = report.lock_summary(lock, "/l/installer.lock.yaml", boundary(lock))
    assert full["versions"] == {name: lock["addons"][name]["version"] for name in lock["addons"]}
    assert set(full["versions"]) >= {"kubernetes", "etcd", "containerd"}
    assert (full["name"], full["hash"], full["digest"]) == ("lab", lock["hash"], lock["digest"])
    assert full["boundary"] == {"artifacts": [], "images": []}
    cut = copy.deepcopy(lock)
    cut["addons"]["kubernetes"]["artifacts"] = [a for a in cut["addons"]["kubernetes"]["artifacts"]
                                                if a["name"] not in ("kubeadm", "kubelet")]
    short = report.lock_summary(cut, "/l/cut.lock.yaml", boundary(cut))
    assert short["boundary"]["artifacts"] == ["kubeadm", "kubelet"]
    for playbook, left in (("install", "kubeadm init and join"), ("upgrade", "Kubernetes upgrade"),
                           ("join", "kubeadm join of the new hosts")):
        log = runlog.RunLog(playbook, playbook + ".yml", START, 0.0)
        log.end(0.0)
        items = report.build_report(log, {}, END, lock=short)["remaining"]
        assert [i["kind"] for i in items] == ["kubeadm_boundary"]
        assert items[0]["what"].startswith("kubeadm boundary: the lock carries no kubeadm, kubelet: ") and left in items[0]["what"]
        assert report.build_report(log, {}, END, lock=full)["remaining"] == []
    log = runlog.RunLog("preflight", "preflight.yml", START, 0.0)
    assert report.build_report(log, {}, END, lock=short)["remaining"] == [], "preflight installs nothing"


def test_report_directory(tmp_path):
    inv_file = tmp_path / "site" / "hosts.yml"
    inv_file.parent.mkdir()
    inv_file.write_text("all: {}\n")
    inv_dir = tmp_path / "inventory"
    inv_dir.mkdir()
    cwd = str(tmp_path / "cwd")
    assert report.report_directory(None, [str(inv_file)], cwd) == str(inv_file.parent / report.INVENTORY_DIR_SUBDIR)
    assert report.report_directory(None, str(inv_file), cwd) == str(inv_file.parent / report.INVENTORY_DIR_SUBDIR)
    assert report.report_directory(None, [str(inv_dir)], cwd) == str(inv_dir / report.INVENTORY_DIR_SUBDIR)
    assert report.report_directory(None, ["localhost,", str(inv_dir), str(inv_file)], cwd) == str(
        inv_dir / report.INVENTORY_DIR_SUBDIR), "the first source that is a path"
    assert report.report_directory(None, ["localhost,"], cwd) == cwd
    assert report.report_directory(None, [str(tmp_path / "missing.yml")], cwd) == cwd
    assert report.report_directory(None, (), cwd) == cwd
    assert report.report_directory(str(tmp_path / "out"), [str(inv_file)], cwd) == str(tmp_path / "out")
    # Ansible reads every file of an inventory directory whose name does not start with a dot.
    assert report.INVENTORY_DIR_SUBDIR.startswith(".")


def test_write_report_files_and_latest_copies(tmp_path):
    log, counts = _run()
    data = report.build_report(log, counts, END)
    stamp = report.report_stamp(START)
    assert stamp == "20260304T050607Z"
    out = tmp_path / "new" / "dir"
    first = report.write_report(data, str(out), stamp)
    assert first == {key: str(out / name) for key, name in (
        ("json", "mooring-report-install-20260304T050607Z.json"), ("md", "mooring-report-install-20260304T050607Z.md"),
        ("latest_json", "mooring-report-install-latest.json"), ("latest_md", "mooring-report-install-latest.md"))}
    assert json.loads((out / "mooring-report-install-20260304T050607Z.json").read_text()) == data
    assert (out / "mooring-report-install-latest.json").read_text() == (
        out / "mooring-report-install-20260304T050607Z.json").read_text()
    assert (out / "mooring-report-install-latest.md").read_text() == reporttext.render_markdown(data)
    second = report.write_report(data, str(out), stamp)
    assert second["json"] == str(out / "mooring-report-install-20260304T050607Z-2.json"), "never overwrites a report"
    assert sorted(os.listdir(out)) == sorted(os.path.basename(p) for p in list(first.values()) + [second["json"], second["md"]])


def test_markdown_and_summary():
    log, counts = _run()
    log.hosts["w1"].failure["message"] = "a | b"
    data = report.build_report(log, counts, END, check_mode=True, inventory=["/inv/hosts.yml"])
    text = reporttext.render_markdown(data)
    assert text.startswith("# Run report: mooring.cluster.install (check mode: nothing was changed)\n")
    assert "| Host | Status | ok | changed | failed | skipped | unreachable | rescued | ignored | modules | controller | Time |" in text
    assert "| cp1 | incomplete | 5 | 3 | 0 | 0 | 0 | 1 | 1 | 5 | 1 | 14.0s |" in text
    assert "| w1 | failed | 1 | 1 | 1 | 0 | 0 | 0 | 0 | 2 | 0 | 5.5s |" in text
    assert "- **w1** (failed) at `%s : Install etcd`: a \\| b" % ETCD in text
    assert "  - %s : Install etcd" % ETCD in text
    assert "| %s | 8.0s |" % ETCD in text
    lines = reporttext.summary_lines(data, {"json": "/r/x.json", "md": "/r/x.md"})
    assert lines[0] == "MOORING REPORT mooring.cluster.install: failed (check mode)"
    assert re.match(r"^  HOST +CHANGED +MODULES +CONTROLLER +FAILED +TIME +LEFT$", lines[1])
    rows = {line.split()[0]: line for line in lines[2:5]}
    assert re.match(r"^  cp1 +3 +5 +1 +0 +14\.0s +not reached in: Add-ons$", rows["cp1"])
    assert re.match(r"^  w1 +1 +2 +0 +1 +5\.5s +failed at %s : Install etcd: a \| b$" % ETCD, rows["w1"])
    assert re.match(r"^  e1 +0 +0 +0 +1 +0\.5s +unreachable: Failed to connect", rows["e1"])
    # The columns line up: each value starts under its header.
    for header in ("CHANGED", "MODULES", "CONTROLLER", "FAILED", "TIME"):
        column = lines[1].index(header)
        assert all(row[column - 1] == " " and row[column] != " " for row in rows.values()), header
    assert "  left: play not run: Join (hosts: {{ join_hosts }})" in lines
    assert "  left: the add-ons are rendered only" in lines
    assert lines[-2:] == ["  report: /r/x.json", "          /r/x.md"]
    assert reporttext.duration_text(59.94) == "59.9s" and reporttext.duration_text(61) == "1m01s"
    assert reporttext.duration_text(3723) == "1h02m03s"


def test_one_report_when_two_callbacks_claim_the_same_run():
    class Playbook(object):
        pass

    run, other_run = Playbook(), Playbook()
    first, second = object(), object()
    assert report.claim(run, first) is True
    assert report.claim(run, second) is False
    assert report.claim(run, first) is True
    assert report.claim(other_run, second) is True


def test_every_field_is_documented():
    """docs/reports.md names every key of the JSON (top level, per host, counts, remaining, lock, plays_not_run)."""
    log, counts = _run()
    _judged(log)
    with open(os.path.join(ROOT, "docs", "reports.md"), encoding="utf-8") as handle:
        docs = handle.read()
    data = report.build_report(log, counts, END, lock=report.lock_summary({"addons": {}}, "/l"))
    keys = set(data["preflight"]) | set(data["preflight"]["hosts"]["cp1"][0])
    keys |= set(data) | set(data["hosts"]["cp1"]) | set(data["lock"]) | set(data["remaining"][0]) | set(
        data["plays_not_run"][0]) | set(data["totals"]) | set(data["hosts"]["w1"]["failure"]) | {"error"}
    missing = sorted(k for k in keys if "`%s`" % k not in docs)
    assert not missing, "docs/reports.md does not describe %s" % ", ".join(missing)
    for kind in ("failed", "unreachable", "not_reached", "kubeadm_boundary", "declared"):
        assert "`%s`" % kind in docs
    for status in ("ok", "changed", "failed", "unreachable", "incomplete", "not_reached"):
        assert "`%s`" % status in docs


def _judged(log):
    """The preflight's document check (spec scope), one host's own result and the inventory's judgement."""
    log.host_result("cp1", "s1", "%s : Documents" % PRE, PRE, "mooring.cluster.preflight_check", "ok",
                    {"changed": False, "unsupported": ["f.yaml: collector blockDevices is not supported"]}, 1016.0)
    log.host_result("w1", "h1", "%s : Gather" % PRE, PRE, "mooring.cluster.preflight_check", "ok",
                    {"changed": False, "checks": [{"check": "cpus", "status": "pass", "message": "2"}]}, 1016.0)
    log.host_result("cp1", "i1", "%s : Judge" % PRE, PRE, "mooring.cluster.preflight_check", "ok",
                    {"changed": False, "summary": "preflight: 2 host(s), 1 failure(s), 1 warning(s)", "passed": False,
                     "checks": {"w1": [{"check": "cpus", "status": "pass", "message": "2 CPUs"}],
                                "cp1": [{"check": "cpus", "status": "pass", "message": "4 CPUs"},
                                        {"check": "Port 22 free", "status": "fail", "message": "port 22 | in use"},
                                        {"check": "Key pair", "status": "warn", "message": "x" * 400}]}}, 1017.0)


def test_preflight_checks_per_host_in_json_and_markdown():
    log, counts = _run()
    assert report.build_report(log, counts, END)["preflight"] is None  # no inventory judgement: no section
    _judged(log)
    data = report.build_report(log, counts, END)
    pre = data["preflight"]
    assert pre["summary"] == "preflight: 2 host(s), 1 failure(s), 1 warning(s)" and pre["passed"] is False
    assert list(pre["hosts"]) == ["cp1", "w1"]  # the inventory's judgement, not w1's own list
    assert [(r["check"], r["status"]) for r in pre["hosts"]["cp1"]] == [
        ("cpus", "pass"), ("Port 22 free", "fail"), ("Key pair", "warn")]
    assert len(pre["hosts"]["cp1"][2]["message"]) <= runlog.MESSAGE_LIMIT
    assert pre["unsupported"] == ["f.yaml: collector blockDevices is not supported"]
    json.dumps(data)
    text = reporttext.render_markdown(data)
    section = text[text.index("## Preflight"):]
    assert "preflight: 2 host(s), 1 failure(s), 1 warning(s) (**failed**)" in section
    assert "- not run: f.yaml: collector blockDevices is not supported" in section
    rows = [line for line in section.splitlines() if line.startswith("| cp1 |")]
    assert rows[0] == "| cp1 | Port 22 free | fail | port 22 \\| in use |"
    assert rows[1].startswith("| cp1 | Key pair | warn | ") and rows[2] == "| cp1 | cpus | pass | 4 CPUs |"
    assert "| w1 | cpus | pass | 2 CPUs |" in section


def test_changed_items_item_by_item():
    log = runlog.RunLog("install", "/c/playbooks/install.yml", START, 1000.0)
    log.play_start("p1", "Nodes", ["cp1"], ["cp1"], 1000.0)
    log.task_start("mooring.cluster.kubeadm", 1000.0)
    state = {"changed": True, "changes": ["sysctl net.ipv4.ip_forward: 0 -> 1", "unit containerd: started"]}
    log.host_result("cp1", "t1", "kubeadm : Node", "mooring.cluster.kubeadm", "mooring.cluster.host_state", "ok",
                    state, 1001.0)
    log.host_result("cp1", "t1b", "kubeadm : Node again", "mooring.cluster.kubeadm", "mooring.cluster.host_state", "ok",
                    dict(state, changes=["unit containerd: started"]), 1001.5)  # once each
    log.host_result("cp1", "t2", "etcd : Install", "mooring.cluster.etcd", "mooring.cluster.bundle_install", "ok",
                    {"changed": True, "installed": ["/usr/local/bin/etcdctl"]}, 1002.0)
    log.host_result("cp1", "t2b", "bundle : Locate", "mooring.cluster.bundle", "mooring.cluster.bundle_unpack", "ok",
                    {"changed": True, "changes": ["file /etc/apt/sources.list.d/mooring-bundle.list: content"]}, 1002.5)
    log.host_result("cp1", "t3", "hidden", None, "mooring.cluster.host_state", "ok",
                    {"changed": True, "_ansible_no_log": True, "changes": ["file /secret: content"]}, 1003.0)
    log.host_result("cp1", "t4", "probe", None, "mooring.cluster.host_state", "ok",
                    {"changed": True, "changes": ["file /x: content"]}, 1004.0, probe=True)
    log.host_result("cp1", "t5", "not changed", None, "mooring.cluster.host_state", "ok",
                    {"changed": False, "changes": []}, 1005.0)
    log.end(1006.0)
    data = report.build_report(log, {"cp1": _stats(ok=7, changed=6)}, END, inventory=["/inv/hosts.yml"])
    assert data["hosts"]["cp1"]["changed_items"] == [
        "sysctl net.ipv4.ip_forward: 0 -> 1", "unit containerd: started", "file /usr/local/bin/etcdctl: installed",
        "file /etc/apt/sources.list.d/mooring-bundle.list: content"]
    assert "    - file /usr/local/bin/etcdctl: installed" in reporttext.render_markdown(data)


def test_host_states_install_option_reports_versions_and_artifacts_like_bundle_install():
    log = runlog.RunLog("install", "/c/playbooks/install.yml", START, 1000.0)
    log.host_result("cp1", "t1", "containerd : One pass", "mooring.cluster.containerd", "mooring.cluster.host_state", "ok",
                    {"changed": True, "changes": ["file /usr/local/sbin/runc: installed", "unit containerd: restarted"],
                     "versions": {"runc": "1.3.3"}, "artifacts": [{"name": "runc", "version": "1.3.3"}]}, 1001.0)
    log.end(1002.0)
    host = report.build_report(log, {"cp1": _stats(ok=1, changed=1)}, END, inventory=["/inv/hosts.yml"])["hosts"]["cp1"]
    assert host["versions"] == {"runc": "1.3.3"} and host["artifacts"] == {"runc": "1.3.3"}
    assert host["changed_items"] == ["file /usr/local/sbin/runc: installed", "unit containerd: restarted"]
