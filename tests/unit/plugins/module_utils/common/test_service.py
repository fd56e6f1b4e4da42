# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the running process the installed one? systemctl's output as systemd 252 prints it, /proc and file
times given as data. The real check runs on the lab hosts in molecule/etcd_upgrade."""

from __future__ import annotations

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common import service

SHOW = """ActiveState=active
SubState=running
MainPID=4242
NeedDaemonReload=no
ExecMainStartTimestamp=Mon 2026-11-23 12:00:00.250000 UTC
NRestarts=0
"""
STARTED = 1795435200.25  # 2026-11-23 12:00:00.25 UTC


def test_show_command_and_parse():
    assert service.show_cmd("etcd") == [
        "systemctl", "show", "--timestamp=us+utc", "--property=ActiveState", "--property=SubState",
        "--property=MainPID", "--property=NeedDaemonReload", "--property=ExecMainStartTimestamp",
        "--property=NRestarts", "etcd"]
    props = service.unit_state(lambda argv: (0, SHOW, ""), "etcd")
    assert props["MainPID"] == "4242" and props["started"] == STARTED


@pytest.mark.parametrize("value", ["", "n/a", "yesterday"])
def test_unreadable_timestamps_are_none(value):
    assert service.parse_timestamp(value) is None


def _reasons(show=SHOW, exe="/usr/local/bin/etcd", mtimes=None):
    props = service.parse_show(show)
    props["started"] = service.parse_timestamp(props.get("ExecMainStartTimestamp"))
    mtimes = mtimes or {}

    def mtime(path):
        if path not in mtimes:
            raise FileNotFoundError(path)
        return mtimes[path]

    return service.stale_reasons(props, binary="/usr/local/bin/etcd", files=["/etc/etcd/etcd.env", "/gone"],
                                 readlink=lambda p: exe, mtime=mtime)


def test_the_installed_process_is_not_stale():
    assert _reasons(mtimes={"/etc/etcd/etcd.env": STARTED - 0.001}) == []


@pytest.mark.parametrize("kwargs,reason", [
    ({"exe": "/usr/local/bin/etcd (deleted)"}, "/usr/local/bin/etcd was replaced after the process started"),
    ({"show": SHOW.replace("NeedDaemonReload=no", "NeedDaemonReload=yes")}, "the unit file changed since systemd"),
    ({"mtimes": {"/etc/etcd/etcd.env": STARTED + 0.001}}, "/etc/etcd/etcd.env changed after the process started"),
    ({"show": SHOW.replace("ActiveState=active", "ActiveState=failed")}, "not running (failed/running)"),
])
def test_what_makes_a_process_stale(kwargs, reason):
    assert any(r.startswith(reason) for r in _reasons(**kwargs)), _reasons(**kwargs)


def test_a_replaced_binary_is_seen_without_reading_proc_exe():
    # Root without CAP_SYS_PTRACE (an unprivileged container) may not read another user's /proc/PID/exe.
    props = service.parse_show(SHOW)
    props["started"] = STARTED

    def readlink(path):
        raise PermissionError(path)

    times = {"/usr/local/bin/etcd": STARTED + 5}
    assert service.stale_reasons(props, binary="/usr/local/bin/etcd", readlink=readlink, mtime=times.__getitem__) == [
        "/usr/local/bin/etcd was replaced after the process started"]
    times["/usr/local/bin/etcd"] = STARTED - 5
    assert service.stale_reasons(props, binary="/usr/local/bin/etcd", readlink=readlink, mtime=times.__getitem__) == []
