# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Scheduled etcd snapshots: the host script (roles/etcd/files/mooring-etcd-snapshot) run for real with a FAKE
etcdctl that writes a file instead of talking to etcd (the real one runs on lab hosts in molecule/etcd), and the
listing (etcdbackup.read_backups) over what it wrote, with a FAKE systemctl."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import etcdbackup

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 5))
SCRIPT = os.path.join(ROOT, "roles", "etcd", "files", "mooring-etcd-snapshot")
FAKE_ETCDCTL = """#!/bin/sh
# FAKE etcdctl: `snapshot save PATH` writes PATH (content from FAKE_DATA); `snapshot status` prints JSON.
case "$*" in
  *"snapshot save"*) for last; do :; done; [ -n "${FAKE_FAIL:-}" ] && exit 1; printf '%s' "$FAKE_DATA" > "$last" ;;
  *"snapshot status"*) echo '{"hash":1,"revision":42,"totalKey":7,"totalSize":100}' ;;
esac
"""


def _show(service="ActiveState=inactive\nResult=success\nExecMainStatus=0\nLoadState=loaded\n",
          timer="ActiveState=active\nLoadState=loaded\nUnitFileState=enabled\nNextElapseUSecRealtime=Sat 2026-11-28 05:00:00 UTC\n"):
    def run(argv):
        return 0, service if argv[-1] == etcdbackup.SERVICE else timer, ""
    return run


@pytest.fixture()
def bindir(tmp_path):
    path = tmp_path / "bin"
    path.mkdir()
    (path / "etcdctl").write_text(FAKE_ETCDCTL)
    (path / "etcdctl").chmod(0o755)
    return path


def _snapshot(bindir, directory, keep=2, data="snap", fail=False):
    env = dict(os.environ, MOORING_SNAPSHOT_DIR=str(directory), MOORING_SNAPSHOT_KEEP=str(keep),
               MOORING_SNAPSHOT_MEMBER="etcd-1", ETCDCTL_ENDPOINTS="https://10.0.0.1:2379", ETCDCTL_CACERT="ca",
               ETCDCTL_CERT="c", ETCDCTL_KEY="k", MOORING_ETCD_BIN_DIR=str(bindir), FAKE_DATA=data)
    if fail:
        env["FAKE_FAIL"] = "1"
    return subprocess.run(["sh", SCRIPT], env=env, capture_output=True, text=True, check=False)


def test_the_script_writes_checksum_and_status_keeps_the_newest(bindir, tmp_path):
    directory = tmp_path / "snaps"
    directory.mkdir()
    names = []
    for index in range(3):
        done = _snapshot(bindir, directory, data="snap%d" % index)
        assert done.returncode == 0, done.stderr
        names.append(done.stdout.split()[1].rsplit("/", 1)[1])
        time.sleep(1.05)  # names carry the second
    left = sorted(os.listdir(directory))
    assert left == sorted(n + s for n in names[1:] for s in ("", ".sha256", ".status.json"))
    for name in names[1:]:
        data = (directory / name).read_bytes()
        assert (directory / (name + ".sha256")).read_text() == "%s  %s\n" % (hashlib.sha256(data).hexdigest(), name)
        assert json.loads((directory / (name + ".status.json")).read_text())["revision"] == 42
        assert oct((directory / name).stat().st_mode & 0o777) == "0o600"

    found = etcdbackup.read_backups(str(directory), _show())
    assert found["failed"] is False and found["problems"] == []
    assert [s["name"] for s in found["snapshots"]] == names[1:]
    assert found["snapshots"][0]["revision"] == 42 and found["snapshots"][0]["total_keys"] == 7
    assert found["lines"][0] == "%s revision 42, 7 keys, 5 bytes, sha256 ok" % names[1]
    assert found["lines"][-1].startswith("last run: success at never; next: Sat 2026-11-28 05:00:00 UTC")


def test_a_failed_snapshot_leaves_nothing_and_exits_non_zero(bindir, tmp_path):
    directory = tmp_path / "snaps"
    directory.mkdir()
    done = _snapshot(bindir, directory, fail=True)
    assert done.returncode != 0
    assert os.listdir(directory) == []


def test_the_listing_names_a_failed_run_a_bad_checksum_and_a_stopped_timer(bindir, tmp_path):
    directory = tmp_path / "snaps"
    directory.mkdir()
    assert _snapshot(bindir, directory).returncode == 0
    name = next(n for n in os.listdir(directory) if n.endswith(".db"))
    (directory / name).write_bytes(b"changed")
    found = etcdbackup.read_backups(str(directory), _show(
        service="ActiveState=failed\nResult=exit-code\nExecMainStatus=1\nLoadState=loaded\n",
        timer="ActiveState=inactive\nLoadState=loaded\n"))
    assert found["failed"] is True
    assert found["problems"][0] == "mooring-etcd-snapshot.timer is inactive, not active"
    assert found["problems"][1].startswith("the last snapshot failed: mooring-etcd-snapshot.service is failed "
                                           "(result exit-code, exit status 1)")
    assert found["problems"][2].startswith("sha256 %s does not match %s.sha256" % (hashlib.sha256(b"changed").hexdigest(), name))


def test_no_snapshot_and_no_timer_are_problems(tmp_path):
    found = etcdbackup.read_backups(str(tmp_path / "missing"), _show(timer="LoadState=not-found\nActiveState=inactive\n"))
    assert found["problems"] == ["%s does not exist" % (tmp_path / "missing"),
                                 "mooring-etcd-snapshot.timer is not installed (spec.etcd.backup not set?)"]
    found = etcdbackup.read_backups(str(tmp_path), _show())
    assert found["problems"] == ["no snapshot in %s yet" % tmp_path]
