# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run report callback under real ansible-playbook runs, with no ansible.cfg.

Each run starts in an empty working directory with every ANSIBLE_* and MOORING_REPORT_* variable
removed, as a user runs an installed collection: the callback is loaded only because the shim
(playbooks/callback_plugins/mooring_report.py, copied unchanged next to a test playbook, or the
collection's own next to its playbooks) sits in a ``callback_plugins/`` directory beside the playbook.
Hosts are localhost (connection local) and, for unreachability, 127.0.0.1 on a closed port.
"""

from __future__ import annotations

import glob
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import textwrap

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import build_lock, dump_lock, lock_digest
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import parse_installer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
SHIM = os.path.join(ROOT, "playbooks", "callback_plugins", "mooring_report.py")
pytestmark = pytest.mark.slow

PLAY = """
- name: Checks
  hosts: all
  gather_facts: false
  tasks:
    - name: Look around
      ansible.builtin.command: "true"
      changed_when: false
    - name: Write a marker
      ansible.builtin.copy:
        content: "{{ inventory_hostname }}\\n"
        dest: "{{ out }}/{{ inventory_hostname }}.txt"
        mode: "0644"
    - name: Only on node-b
      ansible.builtin.debug:
        msg: skipped elsewhere
      when: inventory_hostname == 'node-b'
    - name: Break node-b
      ansible.builtin.fail:
        msg: "node-b   is broken\\n  on purpose"
      when: inventory_hostname == 'node-b'
- name: Afterwards
  hosts: all
  gather_facts: false
  tasks:
    - name: Touch a second marker
      ansible.builtin.file:
        path: "{{ out }}/{{ inventory_hostname }}.done"
        state: touch
        mode: "0644"
"""

INSTALL = """
- name: The lock
  hosts: all
  gather_facts: false
  tasks:
    - name: Read the lock (controller)
      mooring.cluster.lock_values:
        path: "{{ mooring_lock }}"
      run_once: true
      register: mooring_lock_values
    - name: Declare what is left
      ansible.builtin.set_fact:
        mooring_report_remaining: ["the add-ons are rendered, not applied"]
      run_once: true
    - name: A change
      ansible.builtin.debug:
        msg: a change (check mode runs it)
      changed_when: true
"""


# A connection plugin that is not 'local' (the local one under another name): hosts that use it count in
# `modules`, as hosts reached over ssh do, without an ssh server.
STUB_CONNECTION = '''
from __future__ import annotations

DOCUMENTATION = """
name: stub_remote
short_description: The local connection under another name, for a test
description: [Runs modules like the local connection; its name is not local.]
author: [Mooring maintainers (@mooring)]
options: {}
"""

from ansible.plugins.connection.local import Connection as _Local


class Connection(_Local):
    transport = "stub_remote"
'''

WHAT_RAN = """
- name: What ran
  hosts: all
  gather_facts: false
  tasks:
    - name: Plain
      ansible.builtin.command: "true"
      changed_when: false
    - name: A loop, item 3 skipped
      ansible.builtin.command: "true"
      loop: [1, 2, 3, 4, 5]
      when: item != 3
      changed_when: false
    - name: A loop, every item skipped
      ansible.builtin.command: "true"
      loop: [1, 2]
      when: false
    - name: On the controller
      ansible.builtin.command: "true"
      delegate_to: localhost
      changed_when: false
    - name: On node-b, once
      ansible.builtin.command: "true"
      delegate_to: node-b
      run_once: true
      changed_when: false
    - name: A delegated loop
      ansible.builtin.command: "true"
      delegate_to: "{{ item }}"
      loop: [localhost, node-b]
      run_once: true
      changed_when: false
    - name: A fact
      ansible.builtin.set_fact:
        seen: true
    - name: Say
      ansible.builtin.debug:
        msg: hello
    - name: A role, with its argument spec
      ansible.builtin.include_role:
        name: probe
    - name: Included twice
      ansible.builtin.include_tasks: included.yml
      loop: [1, 2]
    - name: A controller-side action of the collection
      mooring.cluster.lock_values:
        path: /nonexistent/installer.lock.yaml
      ignore_errors: true
    - name: Three attempts
      ansible.builtin.command: "false"
      register: attempt
      until: attempt.rc == 0
      retries: 2
      delay: 0
      ignore_errors: true
      changed_when: false
    - name: The keyword says local, the host's variable wins (node-b)
      ansible.builtin.command: "true"
      connection: local
      when: inventory_hostname == 'node-b'
      changed_when: false
    - name: Local by a task variable (node-a)
      ansible.builtin.command: "true"
      vars:
        ansible_connection: local
      when: inventory_hostname == 'node-a'
      changed_when: false
"""


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "MOORING_REPORT"))}
    env.update(extra)
    return env


def _run(args, cwd, **env):
    run = subprocess.run([os.path.join(BIN, "ansible-playbook")] + list(args), capture_output=True, text=True,
                         cwd=str(cwd), env=_env(**env), check=False, timeout=300)
    return run, run.stdout + run.stderr


def _recap(stdout):
    """``{host: {ok, changed, unreachable, failed, skipped, rescued, ignored}}`` from the PLAY RECAP."""
    recap = {}
    for host, fields in re.findall(r"^(\S+)\s+: (ok=.*)$", stdout.split("PLAY RECAP", 1)[-1], re.M):
        recap[host] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", fields)}
    return recap


def _reports(*dirs):
    found = []
    for directory in dirs:
        found += glob.glob(os.path.join(str(directory), "**", "mooring-report-*"), recursive=True)
        found += glob.glob(os.path.join(str(directory), "**", ".mooring-reports", "*"), recursive=True)
    return sorted(set(found))


@pytest.fixture()
def lab(tmp_path):
    """A playbook directory with the shim beside it, an inventory elsewhere, an empty working directory."""
    playbooks, inventory, cwd, out = (tmp_path / name for name in ("playbooks", "inventory", "cwd", "out"))
    for directory in (playbooks, inventory, cwd, out):
        directory.mkdir()
    (playbooks / "callback_plugins").mkdir()
    shutil.copy(SHIM, playbooks / "callback_plugins" / "mooring_report.py")
    # No ".ini": ansible-core before 2.19 skips that extension in a directory inventory (INVENTORY_IGNORE_EXTS).
    hosts = inventory / "hosts"
    hosts.write_text("".join("%s ansible_connection=local ansible_python_interpreter=%s\n" % (h, sys.executable)
                             for h in ("node-a", "node-b")))
    return {"playbooks": playbooks, "inventory": inventory, "hosts": hosts, "cwd": cwd, "out": out, "tmp": tmp_path}


def test_a_preflight_playbook_reports_next_to_its_inventory(lab):
    (lab["playbooks"] / "preflight.yml").write_text(textwrap.dedent(PLAY))
    run, output = _run([str(lab["playbooks"] / "preflight.yml"), "-i", str(lab["hosts"]), "-e", "out=%s" % lab["out"]],
                       lab["cwd"])
    assert run.returncode == 2, output  # node-b failed
    # The tasks really ran (and so did the recap this report is compared with).
    assert sorted(os.listdir(lab["out"])) == ["node-a.done", "node-a.txt", "node-b.txt"]
    files = sorted(os.path.basename(p) for p in _reports(lab["tmp"]))
    stamped = [f for f in files if re.match(r"^mooring-report-preflight-\d{8}T\d{6}Z\.(json|md)$", f)]
    assert len(stamped) == 2 and sorted(files) == sorted(
        stamped + ["mooring-report-preflight-latest.json", "mooring-report-preflight-latest.md"]), files
    # Beside the inventory, in the hidden directory a directory inventory skips, nowhere else.
    assert sorted(os.listdir(lab["inventory"])) == [".mooring-reports", "hosts"]
    reports = lab["inventory"] / ".mooring-reports"
    assert sorted(os.listdir(reports)) == sorted(files)
    data = json.loads((reports / stamped[0]).read_text())
    assert (reports / "mooring-report-preflight-latest.json").read_text() == (reports / stamped[0]).read_text()
    # The inventory's directory used as the inventory still lists only its hosts (molecule does both).
    listed = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-inventory"), "-i", str(lab["inventory"]),
                             "--list"], capture_output=True, text=True, cwd=str(lab["cwd"]), check=False)
    assert listed.returncode == 0 and "mooring-report" not in listed.stdout + listed.stderr, listed.stderr
    assert sorted(json.loads(listed.stdout)["_meta"]["hostvars"]) == ["node-a", "node-b"]
    assert data["schema"] == 1 and data["playbook"] == "preflight" and data["check_mode"] is False
    assert data["playbook_path"] == str(lab["playbooks"] / "preflight.yml")
    assert data["inventory"] == [str(lab["hosts"])]
    a, b = data["hosts"]["node-a"], data["hosts"]["node-b"]
    assert sorted(data["hosts"]) == ["node-a", "node-b"]
    assert a["counts"] == {"ok": 3, "changed": 2, "failed": 0, "skipped": 2, "unreachable": 0, "rescued": 0, "ignored": 0}
    assert b["counts"] == {"ok": 3, "changed": 1, "failed": 1, "skipped": 0, "unreachable": 0, "rescued": 0, "ignored": 0}
    recap = _recap(run.stdout)
    assert {host: data["hosts"][host]["counts"] for host in recap} == recap, "the report's counts are the PLAY RECAP's"
    assert a["changed_tasks"] == ["Write a marker", "Touch a second marker"]
    assert b["changed_tasks"] == ["Write a marker"]
    assert (a["status"], b["status"]) == ("changed", "failed")
    assert b["failure"] == {"task": "Break node-b", "play": "Checks", "message": "node-b is broken on purpose"}
    assert a["failure"] is None and a["not_reached"] == []
    # What ran: hosts with ansible_connection=local run their modules on the controller (command, copy,
    # file on node-a; command, copy on node-b); debug and fail never reach a host, skipped tasks did not run.
    assert (a["modules"], a["controller"], b["modules"], b["controller"]) == (0, 3, 0, 2)
    assert 0 < a["duration"] <= data["duration"] and 0 < b["duration"] <= data["duration"]
    assert data["outcome"] == "failed"
    assert data["remaining"] == [{"kind": "failed", "hosts": ["node-b"], "task": "Break node-b",
                                  "what": "node-b is broken on purpose"}]
    markdown = (reports / stamped[1]).read_text()
    assert markdown == (reports / "mooring-report-preflight-latest.md").read_text()
    assert "| node-a | changed | 3 | 2 | 0 | 2 | 0 | 0 | 0 | 0 | 3 |" in markdown
    assert "| node-b | failed | 3 | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 2 |" in markdown
    assert "- **node-b** (failed) at `Break node-b`: node-b is broken on purpose" in markdown
    # The summary, once, after the recap, with both paths.
    assert run.stdout.count("MOORING REPORT mooring.cluster.preflight: failed") == 1
    summary = run.stdout.split("MOORING REPORT", 1)[1]
    assert re.search(r"^  HOST +CHANGED +MODULES +CONTROLLER +FAILED +TIME +LEFT$", summary, re.M)
    assert re.search(r"^  node-a +2 +0 +3 +0 +\S+s +-$", summary, re.M)
    assert re.search(r"^  node-b +1 +0 +2 +1 +\S+s +failed at Break node-b: node-b is broken on purpose$", summary, re.M)
    assert "  report: %s" % (reports / stamped[0]) in summary
    assert "          %s" % (reports / stamped[0].replace(".json", ".md")) in summary


def test_what_ran_per_host_under_ansible_playbook(lab):
    """modules and controller from a real run: loops, skips, retries, delegation, includes, set_fact and
    a controller-side action, on hosts whose connection is not local."""
    (lab["playbooks"] / "connection_plugins").mkdir()
    (lab["playbooks"] / "connection_plugins" / "stub_remote.py").write_text(STUB_CONNECTION)
    (lab["playbooks"] / "roles" / "probe" / "tasks").mkdir(parents=True)
    (lab["playbooks"] / "roles" / "probe" / "meta").mkdir()
    (lab["playbooks"] / "roles" / "probe" / "tasks" / "main.yml").write_text(
        "- name: The role's command\n  ansible.builtin.command: \"true\"\n  changed_when: false\n")
    (lab["playbooks"] / "roles" / "probe" / "meta" / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    options:\n      word: {type: str, default: x}\n")
    (lab["playbooks"] / "included.yml").write_text(
        "- name: The included command\n  ansible.builtin.command: \"true\"\n  changed_when: false\n")
    (lab["playbooks"] / "preflight.yml").write_text(textwrap.dedent(WHAT_RAN))
    lab["hosts"].write_text("".join("%s ansible_connection=stub_remote ansible_python_interpreter=%s\n" % (h, sys.executable)
                                    for h in ("node-a", "node-b")))
    run, output = _run([str(lab["playbooks"] / "preflight.yml"), "-i", str(lab["hosts"])], lab["cwd"])
    assert run.returncode == 0, output
    data = json.loads((lab["inventory"] / ".mooring-reports" / "mooring-report-preflight-latest.json").read_text())
    a, b = data["hosts"]["node-a"], data["hosts"]["node-b"]
    # Each host: Plain 1, the loop's 4 items that ran, the role's command 1 (not include_role nor its
    # argument validation), the included command twice, 3 attempts = 11. node-b also ran the keyword-local
    # task (its host variable says stub_remote, and wins), the task delegated to it and the delegated
    # loop's node-b item, both for node-a (run_once) = 14. set_fact, debug, include_tasks, lock_values and
    # skipped tasks: nothing. The controller: the task delegated to localhost on each host; for node-a
    # also the delegated loop's localhost item and the task with ansible_connection=local.
    assert (a["modules"], a["controller"]) == (11, 3), a
    assert (b["modules"], b["controller"]) == (14, 1), b
    assert (data["totals"]["modules"], data["totals"]["controller"]) == (25, 4)
    summary = run.stdout.split("MOORING REPORT", 1)[1]
    assert re.search(r"^  node-a +0 +11 +3 +0 +\S+s +-$", summary, re.M), summary
    assert re.search(r"^  node-b +0 +14 +1 +0 +\S+s +-$", summary, re.M), summary
    markdown = (lab["inventory"] / ".mooring-reports" / "mooring-report-preflight-latest.md").read_text()
    assert re.search(r"^\| node-a \| ok \| (\d+ \| ){7}11 \| 3 \| ", markdown, re.M), markdown


def test_other_playbooks_and_a_disabled_report_write_nothing(lab):
    (lab["playbooks"] / "site.yml").write_text(textwrap.dedent(PLAY))
    (lab["playbooks"] / "preflight.yml").write_text(textwrap.dedent(PLAY))
    args = ["-i", str(lab["hosts"]), "-e", "out=%s" % lab["out"]]
    run, output = _run([str(lab["playbooks"] / "site.yml")] + args, lab["cwd"])
    assert run.returncode == 2 and "node-a.done" in os.listdir(lab["out"]), output
    assert "MOORING REPORT" not in output
    run, output = _run([str(lab["playbooks"] / "preflight.yml")] + args, lab["cwd"], MOORING_REPORT_ENABLED="false")
    assert run.returncode == 2 and "PLAY RECAP" in run.stdout, output
    assert "MOORING REPORT" not in output
    assert _reports(lab["tmp"]) == []
    # The same playbook reports when not disabled (the shim does: the first test), and so does the collection's
    # callback alone when enabled in the configuration (no shim here), into MOORING_REPORT_DIR.
    os.unlink(lab["playbooks"] / "callback_plugins" / "mooring_report.py")
    run, output = _run([str(lab["playbooks"] / "preflight.yml")] + args, lab["cwd"],
                       MOORING_REPORT_DIR=str(lab["tmp"] / "tickets" / "CHG-1"),
                       ANSIBLE_CALLBACKS_ENABLED="mooring.cluster.report")
    assert "MOORING REPORT mooring.cluster.preflight: failed" in run.stdout, output
    assert sorted(os.listdir(lab["tmp"] / "tickets" / "CHG-1"))[-2:] == [
        "mooring-report-preflight-latest.json", "mooring-report-preflight-latest.md"]
    assert os.listdir(lab["inventory"]) == ["hosts"], "MOORING_REPORT_DIR replaces the inventory's directory"


def _boundary_lock(path):
    spec = {"kubernetes": {"version": "1.35.x"}, "etcd": {"version": "3.6.x"}, "containerd": {"version": "2.1.x"},
            "calico": {"version": "latest"}}
    document = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "Installer", "metadata": {"name": "lab"}, "spec": spec}
    lock = build_lock(parse_installer(document), load_catalog(), ("amd64",))
    k8s = lock["addons"]["kubernetes"]
    k8s["artifacts"] = [a for a in k8s["artifacts"] if a["name"] not in ("kubeadm", "kubelet", "crictl")]
    lock["digest"] = lock_digest(lock)
    path.write_text(dump_lock(lock))
    return lock


def test_install_check_mode_with_a_lock_an_inventory_directory_and_both_callbacks(lab):
    lock = _boundary_lock(lab["tmp"] / "installer.lock.yaml")
    (lab["playbooks"] / "install.yml").write_text(textwrap.dedent(INSTALL))
    inventory_dir = lab["tmp"] / "inv.d"
    inventory_dir.mkdir()
    shutil.copy(lab["hosts"], inventory_dir / "hosts")
    # The lock path relative to the working directory, as a user gives it; the collection's callback enabled too.
    shutil.copy(lab["tmp"] / "installer.lock.yaml", lab["cwd"] / "installer.lock.yaml")
    run, output = _run([str(lab["playbooks"] / "install.yml"), "-i", str(inventory_dir), "--check",
                        "-e", "mooring_lock=installer.lock.yaml"], lab["cwd"],
                       ANSIBLE_CALLBACKS_ENABLED="mooring.cluster.report")
    assert run.returncode == 0, output
    assert run.stdout.count("MOORING REPORT mooring.cluster.install: success (check mode)") == 1, output
    reports = inventory_dir / ".mooring-reports"
    files = sorted(os.listdir(reports))
    assert len(files) == 4 and files[2:] == ["mooring-report-install-latest.json", "mooring-report-install-latest.md"], files
    assert sorted(os.listdir(inventory_dir)) == [".mooring-reports", "hosts"]
    data = json.loads((reports / files[0]).read_text())
    assert data["check_mode"] is True and data["outcome"] == "success"
    assert data["lock"]["path"] == str(lab["cwd"] / "installer.lock.yaml")
    assert data["lock"]["versions"] == {name: lock["addons"][name]["version"] for name in lock["addons"]}
    assert data["lock"]["versions"]["kubernetes"].startswith("1.35.")
    assert (data["lock"]["digest"], data["lock"]["name"]) == (lock["digest"], "lab")
    assert data["lock"]["boundary"]["artifacts"] == ["kubeadm", "kubelet"]
    assert [(i["kind"], i["what"]) for i in data["remaining"]] == [
        ("kubeadm_boundary", "kubeadm boundary: the lock carries no kubeadm, kubelet: "
                             "kubeadm init and join, and applying the add-ons, were not run"),
        ("declared", "the add-ons are rendered, not applied")]
    assert data["hosts"]["node-a"]["changed_tasks"] == ["A change"] == data["hosts"]["node-b"]["changed_tasks"]
    summary = run.stdout.split("MOORING REPORT", 1)[1]
    assert "  left: kubeadm boundary: the lock carries no kubeadm, kubelet" in summary
    # The next run's inventory is the same: Ansible skips the dot-directory of an inventory directory.
    listed = subprocess.run([os.path.join(BIN, "ansible-inventory"), "-i", str(inventory_dir), "--list"],
                            capture_output=True, text=True, cwd=str(lab["cwd"]), env=_env(), check=False)
    assert listed.returncode == 0 and ".mooring-reports" not in listed.stdout + listed.stderr, listed.stderr
    assert sorted(json.loads(listed.stdout)["ungrouped"]["hosts"]) == ["node-a", "node-b"]


def test_the_collection_preflight_playbook_reports_an_unreachable_host(tmp_path):
    """ansible-playbook mooring.cluster.preflight: the shim next to the collection's playbooks is what reports."""
    inventory, cwd = tmp_path / "inventory", tmp_path / "cwd"
    inventory.mkdir()
    cwd.mkdir()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections to it are refused, nobody else gets it
        port = closed.getsockname()[1]
        (inventory / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": {"ghost": {
            "ansible_host": "127.0.0.1", "ansible_port": port, "ansible_user": "nobody",
            "ansible_ssh_common_args": "-o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=no "
                                       "-o UserKnownHostsFile=/dev/null"}}}}))
        run, output = _run(["mooring.cluster.preflight", "-i", str(inventory / "hosts.yml")], cwd)
    assert run.returncode != 0, output
    assert "callback_plugins" not in os.listdir(cwd) and os.listdir(cwd) == []
    assert sorted(os.listdir(inventory)) == [".mooring-reports", "hosts.yml"]
    files = sorted(os.listdir(inventory / ".mooring-reports"))
    assert len(files) == 4 and files[-2:] == ["mooring-report-preflight-latest.json", "mooring-report-preflight-latest.md"], files
    data = json.loads((inventory / ".mooring-reports" / files[0]).read_text())
    assert data["playbook_path"].endswith(os.path.join("ansible_collections", "mooring", "cluster", "playbooks",
                                                       "preflight.yml"))
    ghost = data["hosts"]["ghost"]
    assert ghost["status"] == "unreachable" and data["outcome"] == "failed"
    assert ghost["unreachable"]["task"] == "mooring.cluster.preflight : Gather and judge this host (read-only)"
    assert "port %d" % port in ghost["unreachable"]["message"] and "refused" in ghost["unreachable"]["message"]
    assert [i["kind"] for i in data["remaining"]][:1] == ["unreachable"] and data["remaining"][0]["hosts"] == ["ghost"]
    assert ghost["roles"].get("mooring.cluster.preflight", 0) > 0
    # Nothing ran on the host; the inventory-wide judgement ran once, delegated to localhost, for it.
    assert (ghost["modules"], ghost["controller"]) == (0, 1)
    assert re.search(r"^  ghost +0 +0 +1 +1 +\S+s +unreachable: ", run.stdout, re.M), output


def test_under_ansible_runner_beside_awx_display(tmp_path):
    """ansible-runner: its stdout callback awx_display; the inventory is the directory PRIVATE_DATA_DIR/inventory."""
    project, inventory = tmp_path / "project", tmp_path / "inventory"
    (project / "callback_plugins").mkdir(parents=True)
    inventory.mkdir()
    shutil.copy(SHIM, project / "callback_plugins" / "mooring_report.py")
    (project / "preflight.yml").write_text(textwrap.dedent(INSTALL.replace("path: \"{{ mooring_lock }}\"",
                                                                           "path: \"{{ playbook_dir }}/none.lock\"")))
    (inventory / "hosts").write_text("node-a ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    run = subprocess.run([os.path.join(BIN, "ansible-runner"), "run", str(tmp_path), "-p", "preflight.yml"],
                         capture_output=True, text=True, cwd=str(tmp_path), check=False, timeout=300,
                         env=_env(PATH=BIN + os.pathsep + os.environ.get("PATH", "")))
    output = run.stdout + run.stderr
    assert run.returncode == 2, output  # the lock does not exist: the first task fails
    reports = inventory / ".mooring-reports"
    data = json.loads((reports / "mooring-report-preflight-latest.json").read_text())
    assert data["hosts"]["node-a"]["failure"]["task"] == "Read the lock (controller)"
    assert "none.lock" in data["hosts"]["node-a"]["failure"]["message"]
    assert data["remaining"][0]["kind"] == "failed" and data["outcome"] == "failed"
    assert "lock" in data and data["lock"]["path"].endswith("none.lock") and "error" in data["lock"]
    # awx_display wrote the run's events; the summary is in them (the job output AWX shows).
    events = [json.loads(pathlib.Path(p).read_text(encoding="utf-8"))
              for p in glob.glob(str(tmp_path / "artifacts" / "*" / "job_events" / "*.json"))]
    assert any(e.get("event") == "playbook_on_stats" for e in events), "awx_display was the stdout callback"
    assert any("MOORING REPORT mooring.cluster.preflight: failed" in (e.get("stdout") or "") for e in events)
    assert sorted(os.listdir(inventory)) == [".mooring-reports", "hosts"]
