# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run-shape rule of docs/DEVELOPING.md: a playbook is the order of its run, at most 100 lines, without YAML
anchors; what several plays pass to one role is a file of playbooks/vars/ that exists and is a mapping."""

from __future__ import annotations

import os

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOKS = os.path.join(ROOT, "playbooks")
NAMES = sorted(n for n in os.listdir(PLAYBOOKS) if n.endswith(".yml"))
MAX_LINES = 100


class _Events(yaml.SafeLoader):
    pass


def _anchors(text):
    """The anchors and aliases in ``text``, from the YAML parser's own events (a ``&`` in a string is not one)."""
    found = []
    for event in yaml.parse(text, Loader=_Events):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            found.append(event.anchor)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_a_playbook_is_short_and_has_no_anchors(name):
    with open(os.path.join(PLAYBOOKS, name), encoding="utf-8") as handle:
        text = handle.read()
    assert len(text.splitlines()) <= MAX_LINES, "%s: %d lines" % (name, len(text.splitlines()))
    assert not _anchors(text), "%s: YAML anchors or aliases %s" % (name, _anchors(text))
    for play in yaml.safe_load(text):
        for path in play.get("vars_files", []):
            full = os.path.join(PLAYBOOKS, path)
            assert os.path.dirname(os.path.abspath(full)) == os.path.join(PLAYBOOKS, "vars"), (name, path)
            with open(full, encoding="utf-8") as handle:
                assert isinstance(yaml.safe_load(handle), dict), (name, path)


def test_the_rule_sees_an_anchor():
    assert _anchors("a: &x {b: 1}\nc: *x\n") == ["x", "x"]
    assert not _anchors("a: 'b & c'\n")


# The run's state (playbooks/vars/run.yml, the mooring.cluster.run_state filter): read from the controller in a few
# commented places, and loaded by every play that reads it or runs a role that does.
CONTROLLER_READ = "hostvars['localhost']"
MAX_CONTROLLER_READS = 5
STATE_ROLES = ("lock", "bundle", "preflight", "roll", "cluster")


def _file_lines(root, *tops):
    """``(path relative to root, lines)`` of every file under the folders ``tops`` of ``root``."""
    for top in tops:
        for folder, _dirs, names in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(names):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    yield os.path.relpath(path, root), handle.read().splitlines()


def _controller_reads(root=ROOT):
    """``(path, line number, commented)`` of every line of playbooks/ and roles/ that reads the controller's variables."""
    found = []
    for path, lines in _file_lines(root, "playbooks", "roles"):
        for number, line in enumerate(lines):
            if CONTROLLER_READ in line:
                commented = any("#" in before for before in lines[max(0, number - 3):number + 1])
                found.append((path, number + 1, commented))
    return found


def test_the_controller_is_read_in_few_commented_places():
    reads = _controller_reads()
    assert 0 < len(reads) <= MAX_CONTROLLER_READS, reads
    assert all(commented for _path, _line, commented in reads), reads


def _reads_the_run_state(play):
    text = yaml.safe_dump(play)
    return "mooring_run" in text or any("mooring.cluster.%s" % role in text.replace("mooring.cluster.%s_" % role, "")
                                        for role in STATE_ROLES)


def _plays_without_the_run_state(text):
    return [play.get("name") for play in yaml.safe_load(text) or []
            if "hosts" in play and _reads_the_run_state(play) and "vars/run.yml" not in play.get("vars_files", [])]


@pytest.mark.parametrize("name", NAMES)
def test_a_play_that_reads_the_run_state_loads_it(name):
    with open(os.path.join(PLAYBOOKS, name), encoding="utf-8") as handle:
        assert _plays_without_the_run_state(handle.read()) == [], name


def test_the_run_state_rules_see_a_missing_file_and_an_extra_read(tmp_path):
    play = "- name: P\n  hosts: all\n  tasks:\n    - {name: T, ansible.builtin.debug: {msg: '{{ mooring_run.plan_only }}'}}\n"
    assert _plays_without_the_run_state(play) == ["P"]
    assert _plays_without_the_run_state(play.replace("  hosts: all\n", "  hosts: all\n  vars_files: [vars/run.yml]\n")) == []
    assert _plays_without_the_run_state("- name: R\n  hosts: all\n  roles: [mooring.cluster.preflight]\n") == ["R"]
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "roles").mkdir()
    (tmp_path / "playbooks" / "p.yml").write_text("x: \"{{ hostvars['localhost'].a }}\"\n# why\ny: \"{{ hostvars['localhost'].b }}\"\n")
    assert [commented for _p, _l, commented in _controller_reads(str(tmp_path))] == [False, True]


# A role a user includes from a playbook of their own (preflight, say) has no run state there: it reads mooring_run
# only behind "mooring_run is defined". The library roles run by the collection's playbooks alone, and the bundle's
# build step (the bundle and etcd_cluster playbooks), read it as they are.
LIBRARY_ROLES = ("lock", "roll", "cluster")
LIBRARY_FILES = (os.path.join("roles", "bundle", "tasks", "build.yml"),)
GUARD = "mooring_run is defined"


def _unguarded_run_state_reads(root=ROOT):
    found = []
    for path, lines in _file_lines(root, "roles"):
        if path.split(os.sep)[1] in LIBRARY_ROLES or path in LIBRARY_FILES or not path.endswith((".yml", ".yaml", ".j2")):
            continue
        if any("mooring_run" in line and GUARD not in line for line in lines if not line.lstrip().startswith("#")):
            found.append(path)
    return found


def test_a_role_users_include_reads_the_run_state_only_when_given():
    assert _unguarded_run_state_reads() == []


def test_the_guard_rule_sees_an_unguarded_read(tmp_path):
    tasks = tmp_path / "roles" / "preflight" / "tasks"
    tasks.mkdir(parents=True)
    (tmp_path / "roles" / "cluster").mkdir()
    (tasks / "main.yml").write_text("x: \"{{ mooring_run.lock_values if mooring_run is defined else none }}\"\n")
    (tmp_path / "roles" / "cluster" / "main.yml").write_text("y: \"{{ mooring_run.plan_only }}\"\n")
    assert _unguarded_run_state_reads(str(tmp_path)) == []
    (tasks / "extra.yml").write_text("z: \"{{ mooring_run.plan_only }}\"\n")
    assert _unguarded_run_state_reads(str(tmp_path)) == [os.path.join("roles", "preflight", "tasks", "extra.yml")]
