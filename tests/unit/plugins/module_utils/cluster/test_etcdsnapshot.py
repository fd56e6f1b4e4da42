# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which program reads a snapshot's status: etcdctl 3.6 has no `snapshot status`, etcdutl (3.5+) has."""

import json
import os

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import etcdsnapshot


def _program(path):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(path, 0o700)
    return str(path)


def test_status_read_by_etcdutl_beside_etcdctl(tmp_path):
    etcdctl = _program(tmp_path / "etcdctl")
    assert etcdsnapshot.offline_tool(etcdctl) == etcdctl  # 3.4: etcdctl alone
    etcdutl = _program(tmp_path / "etcdutl")
    assert etcdsnapshot.offline_tool(etcdctl) == etcdutl


def test_save_reads_the_status_with_etcdutl(tmp_path):
    etcdctl, etcdutl = _program(tmp_path / "etcdctl"), _program(tmp_path / "etcdutl")
    calls = []

    def run(argv):
        calls.append(argv)
        if argv[1:3] == ["snapshot", "save"]:
            with open(argv[3], "wb") as f:
                f.write(b"snapshot")
            return 0, "", ""
        return 0, json.dumps({"revision": 7, "totalKey": 3, "hash": 42}), ""

    info = etcdsnapshot.save_snapshot(run, [etcdctl, "--endpoints=https://10.0.0.1:2379"], str(tmp_path / "s.db"))
    assert calls[-1][:3] == [etcdutl, "snapshot", "status"]
    assert (info["revision"], info["total_keys"]) == (7, 3)
