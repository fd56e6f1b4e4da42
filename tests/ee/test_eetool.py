# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure parts of tests/ee/eetool.py (no podman): .venv/bin/python -m pytest -q tests/ee"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

_spec = importlib.util.spec_from_file_location("mooring_eetool", Path(__file__).with_name("eetool.py"))
eetool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(eetool)

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_requirements_cover_every_stage(monkeypatch):
    monkeypatch.chdir(ROOT)
    lines = eetool.wheel_requirements("ee/execution-environment.yml").splitlines()
    names = {ln.split(">")[0].split("<")[0].split("=")[0].strip().lower() for ln in lines if not ln.startswith("#")}
    ee = yaml.safe_load((ROOT / "ee/execution-environment.yml").read_text())
    assert ee["dependencies"]["ansible_core"]["package_pip"] in lines
    assert ee["dependencies"]["ansible_runner"]["package_pip"] in lines
    # the collection's runtime list, `ansible` (introspection drops it) and the builder stage's tools
    for line in eetool._req_lines(ROOT / "requirements.txt"):
        assert line in lines
    assert {"ansible", "bindep", "pyyaml", "packaging"} <= names


LAB_INVENTORY = (
    "all:\n  vars:\n    ansible_user: root\n    ansible_ssh_private_key_file: /var/cache/k\n"
    "    ansible_ssh_common_args: -o StrictHostKeyChecking=yes -o UserKnownHostsFile=/x/known_hosts"
    " -o ProxyUseFdpass=yes -o 'ProxyCommand=python3 /x/lab.py connect %h %p'\n"
    "    mooring_lab: ee1\n"
    "  hosts:\n    ee1-1:\n      ansible_host: 10.89.74.11\n    ee1-2:\n      ansible_host: 10.89.74.12\n"
    "  children:\n    etcd:\n      hosts:\n        ee1-1: {}\n")
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKeyOfTheLabHostReadThroughPodmanXXXXXX"


def _lab(tmp_path):
    lab = tmp_path / "hosts.yml"
    lab.write_text(LAB_INVENTORY)
    return lab


def test_inventory_drops_proxy_command_and_key_path(tmp_path):
    text = eetool.ee_inventory(str(_lab(tmp_path)), "/runner/env/known_hosts")
    inv = yaml.safe_load(text)["all"]
    assert "Proxy" not in inv["vars"]["ansible_ssh_common_args"] and "/var/cache/k" not in text
    assert "/x/known_hosts" not in text  # the host-side path does not exist in the EE
    assert inv["hosts"] == {"ee1-1": {"ansible_host": "10.89.74.11"}, "ee1-2": {"ansible_host": "10.89.74.12"}}
    assert inv["vars"]["ansible_user"] == "root" and inv["vars"]["mooring_lab"] == "ee1"
    assert inv["children"] == {"etcd": {"hosts": {"ee1-1": {}}}}


def test_inventory_checks_host_keys_against_the_given_file(tmp_path):
    text = eetool.ee_inventory(str(_lab(tmp_path)), "/runner/env/known_hosts")
    args = yaml.safe_load(text)["all"]["vars"]["ansible_ssh_common_args"]
    assert args == "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=/runner/env/known_hosts"
    assert "StrictHostKeyChecking=no" not in text and "/dev/null" not in text


@pytest.mark.parametrize("path", ["", "known_hosts", "/dev/null", "/runner/env/known hosts", "/a'b"])
def test_inventory_refuses_a_bad_known_hosts_path(tmp_path, path):
    with pytest.raises(eetool.EEError, match="known_hosts path"):
        eetool.ee_inventory(str(_lab(tmp_path)), path)


def test_known_hosts_with_every_host_key(tmp_path):
    kh = tmp_path / "known_hosts"
    kh.write_text("# Written by tests/lab/lab.py for lab ee1\n10.89.74.11 %s\n10.89.74.12 %s\n" % (KEY, KEY))
    eetool.check_known_hosts(str(_lab(tmp_path)), str(kh))


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    ("", "holds no host key"),
    ("# Written by tests/lab/lab.py for lab ee1\n\n", "holds no host key"),
    ("10.89.74.11 %s\n" % KEY, r"no host key for ee1-2 \(10.89.74.12\)"),
    ("10.89.74.111 %s\n10.89.74.12 %s\n" % (KEY, KEY), r"no host key for ee1-1 \(10.89.74.11\)"),
])
def test_known_hosts_refused(tmp_path, content, message):
    kh = tmp_path / "known_hosts"
    if content is not None:
        kh.write_text(content)
    with pytest.raises(eetool.EEError, match=message):
        eetool.check_known_hosts(str(_lab(tmp_path)), str(kh))


def test_known_hosts_cli_exits_non_zero(tmp_path, capsys):
    assert eetool.main(["known-hosts", str(_lab(tmp_path)), str(tmp_path / "known_hosts")]) == 1
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("options, nets, rest", [
    (["--network=a", "--user=0"], ["a"], ["--user=0"]),
    (["--network", "a", "--net=b"], ["a", "b"], []),
    (["--user=0"], [], ["--user=0"]),
])
def test_network_options(options, nets, rest):
    assert eetool._network_options(options) == (nets, rest)


@pytest.mark.parametrize("option, forbidden", [
    ("--user=0", False), ("--ipc=host", False), ("--pids-limit=10", False),
    ("--privileged", True), ("--pod=x", True), ("--add-host=a:192.0.2.1", True), ("--dns=192.0.2.1", True),
    ("-p", True), ("--publish=80:80", True), ("--uts=host", True),
])
def test_forbidden_options(option, forbidden):
    assert bool(eetool.FORBIDDEN.match(option.split("=", 1)[0])) is forbidden


def test_settings_keep_one_network(tmp_path):
    s = tmp_path / "settings"
    s.write_text("container_image: old\ncontainer_options: ['--network=other', '--user=0']\n")
    eetool.set_settings(str(s), "localhost/mooring/ee:9.9.9", "mooring-ee1")
    got = yaml.safe_load(s.read_text())
    assert got["container_image"] == "localhost/mooring/ee:9.9.9"
    assert got["container_options"] == ["--network=mooring-ee1", "--user=0"]


def test_netcheck_refuses_before_podman(tmp_path):
    s = tmp_path / "settings"
    s.write_text("container_image: x\ncontainer_options: ['--network=host']\n")
    with pytest.raises(eetool.EEError, match="only"):
        eetool.netcheck(str(s), "mooring-ee1")
    s.write_text("container_image: x\ncontainer_options: ['--network=mooring-ee1', '--privileged']\n")
    with pytest.raises(eetool.EEError, match="not allowed"):
        eetool.netcheck(str(s), "mooring-ee1")


def _artifacts(tmp_path, status, rc, stats):
    art = tmp_path / "ee1"
    (art / "job_events").mkdir(parents=True)
    (art / "status").write_text(status)
    (art / "rc").write_text(rc)
    (art / "job_events" / "9-stats.json").write_text(json.dumps({"event": "playbook_on_stats", "event_data": stats}))
    return art


def test_result_success(tmp_path, capsys):
    art = _artifacts(tmp_path, "successful", "0", {"processed": {"h": 1}, "ok": {"h": 4}})
    eetool.result(str(art), "h")
    assert "status=successful rc=0; h: ok=4" in capsys.readouterr().out


@pytest.mark.parametrize("status, rc, stats, message", [
    ("failed", "2", {"processed": {"h": 1}, "failures": {"h": 1}}, "status failed"),
    ("successful", "0", {"processed": {}}, "h was not processed"),
    ("successful", "0", {"processed": {"h": 1}, "dark": {"h": 1}}, "1 unreachable"),
])
def test_result_failures(tmp_path, status, rc, stats, message):
    with pytest.raises(eetool.EEError, match=message):
        eetool.result(str(_artifacts(tmp_path, status, rc, stats)), "h")
