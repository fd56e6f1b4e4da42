# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_state on a directory tree standing in for the host's root; systemctl's answers given as data.
The real module runs on the lab hosts (molecule/install, including the drift scenario)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common import host_state
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

SHOW = ("ActiveState=%s\nSubState=running\nMainPID=0\nNeedDaemonReload=no\n"
        "ExecMainStartTimestamp=Mon 2026-11-23 12:00:00.250000 UTC\nNRestarts=0\n")


class Systemd:
    def __init__(self, active="active", enabled="enabled"):
        self.active, self.enabled, self.calls = active, enabled, []

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[:2] == ["systemctl", "show"]:
            return 0, SHOW % self.active, ""
        if argv[:2] == ["systemctl", "is-enabled"]:
            return 0, self.enabled + "\n", ""
        return 0, "", ""

    def acts(self):
        return [c[1] for c in self.calls if c[0] == "systemctl" and c[1] not in ("show", "is-enabled")]


@pytest.fixture
def root(tmp_path):
    (tmp_path / "proc/sys/net/ipv4").mkdir(parents=True)
    (tmp_path / "proc/sys/net/ipv4/ip_forward").write_text("0\n")
    (tmp_path / "proc/swaps").write_text("Filename\tType\tSize\tUsed\tPriority\n")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/fstab").write_text("/dev/sda1 / ext4 defaults 0 1\n/dev/sda2 none swap sw 0 0\n")
    return tmp_path


def params(**kw):
    base = dict(groups=[], users=[], directories=[], files=[], secrets=[], sysctl={}, sysctl_file=None,
                kernel_modules=[], swap_off=False, units=[], exists=[])
    base.update(kw)
    return base


def test_files_directories_sysctl_swap_converge_then_nothing(root):
    want = params(
        directories=[{"path": "/etc/app", "mode": "0750", "owner": "root", "group": "root"}],
        files=[{"path": "/etc/app/app.conf", "content": "a = 1\n", "mode": "0644", "owner": "root", "group": "root"}],
        secrets=[{"path": "/etc/app/app.key", "content": "SECRET\n", "mode": "0600", "owner": "root", "group": "root"}],
        sysctl={"net.ipv4.ip_forward": "1"}, sysctl_file="/etc/sysctl.d/90-app.conf", swap_off=True,
        exists=["/etc/app"])
    out = host_state.converge(want, Systemd(), diff=True, root=str(root))
    changes, diffs, exists = out["changes"], out["diffs"], out["exists"]
    assert exists == {"/etc/app": False}
    assert changes == ["directory /etc/app: created", "file /etc/app/app.conf: created",
                       "file /etc/app/app.key: created", "file /etc/sysctl.d/90-app.conf: created",
                       "sysctl net.ipv4.ip_forward: 0 -> 1", "file /etc/fstab: swap entries commented out"]
    assert [d["after_header"] for d in diffs] == ["/etc/app/app.conf", "/etc/sysctl.d/90-app.conf"]  # no secret
    assert (root / "etc/app/app.key").read_text() == "SECRET\n"
    assert os.stat(root / "etc/app/app.key").st_mode & 0o777 == 0o600
    assert (root / "proc/sys/net/ipv4/ip_forward").read_text() == "1"
    assert "# /dev/sda2 none swap sw 0 0" in (root / "etc/fstab").read_text()
    # The second pass reads everything again and changes nothing.
    assert host_state.converge(want, Systemd(), root=str(root))["changes"] == []


def test_drift_is_found_item_by_item(root):
    want = params(files=[{"path": "/etc/a", "content": "x\n", "mode": "0644", "owner": "root", "group": "root"}],
                  secrets=[{"path": "/etc/k", "content": "K\n", "mode": "0600", "owner": "root", "group": "root"}],
                  sysctl={"net.ipv4.ip_forward": "1"})
    host_state.converge(want, Systemd(), root=str(root))
    (root / "etc/a").write_text("edited\n")
    os.chmod(root / "etc/k", 0o644)
    (root / "proc/sys/net/ipv4/ip_forward").write_text("0\n")
    check = host_state.converge(want, Systemd(), check_mode=True, root=str(root))["changes"]
    assert check == ["file /etc/a: content", "file /etc/k: mode 0644 -> 0600", "sysctl net.ipv4.ip_forward: 0 -> 1"]
    assert (root / "etc/a").read_text() == "edited\n"  # check mode wrote nothing
    assert host_state.converge(want, Systemd(), root=str(root))["changes"] == check
    assert (root / "etc/a").read_text() == "x\n" and os.stat(root / "etc/k").st_mode & 0o777 == 0o600


def test_validate_refuses_bad_content_and_leaves_the_file(root):
    (root / "etc/c").write_text("old\n")
    want = params(files=[{"path": "/etc/c", "content": "new\n", "mode": "0644", "owner": "root", "group": "root",
                          "validate": ["false-validator", "%s"]}])

    def run(argv):
        return (1, "", "bad config") if argv[0] == "false-validator" else (0, "", "")
    with pytest.raises(MooringError, match="does not validate"):
        host_state.converge(want, run, root=str(root))
    assert (root / "etc/c").read_text() == "old\n"
    assert [p.name for p in (root / "etc").iterdir() if p.name.startswith(".c-")] == []


def test_units_start_enable_and_reload_after_a_unit_file_changed(root):
    systemd = Systemd(active="inactive", enabled="disabled")
    want = params(files=[{"path": "/etc/systemd/system/app.service", "content": "[Service]\n", "mode": "0644",
                          "owner": "root", "group": "root"}],
                  units=[{"name": "app", "enabled": True, "state": "started", "restart": "stale", "files": []}])
    changes = host_state.converge(want, systemd, root=str(root))["changes"]
    assert changes[-2:] == ["systemd: daemon-reload", "unit app: enabled, started"]
    assert systemd.acts() == ["daemon-reload", "enable", "start"]
    # Running and enabled, nothing changed: nothing but reads.
    systemd = Systemd()
    assert host_state.converge(want, systemd, root=str(root))["changes"] == []
    assert systemd.acts() == []


def test_a_stale_unit_is_restarted_and_check_mode_says_so(root):
    conf = root / "etc/app.conf"
    want = params(files=[{"path": "/etc/app.conf", "content": "v2\n", "mode": "0644", "owner": "root", "group": "root"}],
                  units=[{"name": "app", "state": "started", "restart": "stale", "files": [str(conf)]}])
    conf.write_text("v1\n")
    os.utime(conf, (0, 0))  # ctime cannot be set back: check mode reports from what it would write
    systemd = Systemd()
    changes = host_state.converge(dict(want, units=[dict(want["units"][0], files=["/etc/app.conf"])]), systemd,
                                  check_mode=True, root=str(root))["changes"]
    assert changes[-1].startswith("unit app: restarted (") and "/etc/app.conf would change" in changes[-1]
    assert systemd.acts() == []
    systemd = Systemd()  # for real: the file is written now, after the process started (2026-11-23) -> restart
    changes = host_state.converge(want, systemd, root=str(root))["changes"]
    assert changes[0] == "file /etc/app.conf: content" and systemd.acts() == ["restart"]


def test_an_absent_drop_in_is_removed_and_its_unit_restarted_then_nothing(root):
    dropin = root / "etc/systemd/system/app.service.d/http-proxy.conf"
    dropin.parent.mkdir(parents=True)
    dropin.write_text("[Service]\nEnvironment=HTTP_PROXY=http://p:3128\n")
    path = "/etc/systemd/system/app.service.d/http-proxy.conf"
    want = params(files=[{"path": path, "state": "absent"}],
                  units=[{"name": "app", "state": "started", "restart": "stale", "files": [path]}])
    systemd = Systemd()
    changes = host_state.converge(want, systemd, check_mode=True, root=str(root))["changes"]
    assert changes[0] == "file %s: removed" % path and dropin.exists()
    changes = host_state.converge(want, systemd, root=str(root))["changes"]
    assert changes == ["file %s: removed" % path, "systemd: daemon-reload",
                       "unit app: restarted (%s was removed)" % path]
    assert not dropin.exists() and systemd.acts()[-2:] == ["daemon-reload", "restart"]
    systemd = Systemd()
    assert host_state.converge(want, systemd, root=str(root))["changes"] == [] and systemd.acts() == []


def test_something_else_in_the_way_is_refused(root):
    (root / "etc/d").write_text("a file\n")
    with pytest.raises(MooringError, match="directory /etc/d: something else is there"):
        host_state.converge(params(directories=[{"path": "/etc/d", "mode": "0755", "owner": "root", "group": "root"}]),
                            Systemd(), root=str(root))


def test_packages_missing_reads_dpkg_and_changes_nothing(root):
    seen = []

    def run(argv):
        seen.append(argv)
        return 0, "socat\t1.7.4.4-2\tii \nconntrack\t1:1.4.7-1+b2\trc \nebtables\t2.0.11-5\tii \n", ""
    out = host_state.converge(params(packages=["socat", "conntrack", "ebtables=2.0.11-4", "ethtool"]), run,
                              root=str(root))
    assert out["packages_missing"] == ["conntrack", "ebtables=2.0.11-4", "ethtool"]
    assert out["changes"] == [] and seen[0][:2] == ["dpkg-query", "-W"]
