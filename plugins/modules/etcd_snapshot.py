#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: etcd_snapshot
short_description: Save an etcd snapshot, or restore one into a new data directory
version_added: 0.1.0
description:
  - O(state=saved) takes a snapshot from one member (C(etcdctl snapshot save)), written 0600 through a
    temporary file, and returns its sha256, size and revision. Every run makes a new snapshot, so it always
    reports a change.
  - O(state=restored) restores O(path) into O(data_dir), which must not exist or be empty, as member O(name)
    of a new cluster (O(initial_cluster), O(token)). Stop etcd and move the old data directory away first.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
options:
  state:
    description: Save a snapshot or restore one.
    type: str
    default: saved
    choices: [saved, restored]
  path:
    description: Snapshot file on the managed host.
    type: path
    required: true
  etcdctl:
    description: The etcdctl program.
    type: path
    default: etcdctl
  restore_tool:
    description:
      - Program that reads a snapshot's status and restores it (C(etcdctl) for etcd 3.4, C(etcdutl) for 3.5 and
        later); default C(etcdutl) beside O(etcdctl) when there is one, else O(etcdctl) (etcdctl 3.6 has no
        C(snapshot status) or C(snapshot restore)).
    type: path
  endpoint:
    description: Client URL of the member to snapshot (C(https://) only).
    type: str
    default: https://127.0.0.1:2379
  cacert:
    description: CA certificate of etcd; required to save.
    type: path
  cert:
    description: Client certificate; required to save.
    type: path
  key:
    description: Client private key; required to save.
    type: path
  name:
    description: Member name to restore as.
    type: str
  initial_cluster:
    description: C(name=peerURL,...) of every member of the restored cluster; or give O(members).
    type: str
  members:
    description: Members of the restored cluster (C(name), C(addresses)) to build O(initial_cluster) from.
    type: list
    elements: dict
  peer_port:
    description: Peer port used with O(members).
    type: int
    default: 2380
  token:
    description: Initial cluster token of the restored cluster (use a new one for every restore).
    type: str
  peer_urls:
    description: Peer URLs of this member.
    type: list
    elements: str
  data_dir:
    description: Data directory to restore into.
    type: path
    default: /var/lib/etcd
"""

EXAMPLES = r"""
- name: Snapshot one healthy member
  mooring.cluster.etcd_snapshot:
    path: /var/backups/etcd/snapshot.db
    cacert: /etc/kubernetes/pki/etcd/ca.crt
    cert: /etc/kubernetes/pki/etcd/healthcheck-client.crt
    key: /etc/kubernetes/pki/etcd/healthcheck-client.key
  register: snap

- name: Restore it as member e1 of a new cluster
  mooring.cluster.etcd_snapshot:
    state: restored
    path: /var/backups/etcd/snapshot.db
    name: e1
    initial_cluster: e1=https://10.0.0.21:2380,e2=https://10.0.0.22:2380,e3=https://10.0.0.23:2380
    token: restore-20260102
    peer_urls: [https://10.0.0.21:2380]
    data_dir: /var/lib/etcd
"""

RETURN = r"""
sha256:
  description: SHA-256 of the saved snapshot.
  returned: when O(state=saved) and not in check mode
  type: str
size:
  description: Size in bytes of the saved snapshot.
  returned: when O(state=saved) and not in check mode
  type: int
revision:
  description: Store revision in the snapshot.
  returned: when O(state=saved) and not in check mode
  type: int
total_keys:
  description: Keys in the snapshot.
  returned: when O(state=saved) and not in check mode
  type: int
command:
  description: The restore command line.
  returned: when O(state=restored)
  type: list
  elements: str
"""

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdctl import client_args, members_initial_cluster  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdsnapshot import (  # noqa: E402
    offline_tool,
    restore_snapshot,
    save_snapshot,
)
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


class EtcdSnapshot(MooringModule):
    """Saves an etcd snapshot, or restores one into a new data directory."""

    argument_spec = {
        "state": {"type": "str", "default": "saved", "choices": ["saved", "restored"]},
        "path": {"type": "path", "required": True},
        "etcdctl": {"type": "path", "default": "etcdctl"},
        "restore_tool": {"type": "path"},
        "endpoint": {"type": "str", "default": "https://127.0.0.1:2379"},
        "cacert": {"type": "path"},
        "cert": {"type": "path"},
        "key": {"type": "path"},
        "name": {"type": "str"},
        "initial_cluster": {"type": "str"},
        "members": {"type": "list", "elements": "dict"},
        "peer_port": {"type": "int", "default": 2380},
        "token": {"type": "str", "no_log": False},
        "peer_urls": {"type": "list", "elements": "str"},
        "data_dir": {"type": "path", "default": "/var/lib/etcd"},
    }
    module_kwargs = dict(
        required_if=[
            ("state", "saved", ("cacert", "cert", "key")),
            ("state", "restored", ("name", "token", "peer_urls")),
            ("state", "restored", ("initial_cluster", "members"), True),
        ],
        mutually_exclusive=[("initial_cluster", "members")],
    )

    def run(self):
        p = self.params
        if p["state"] == "saved":
            if self.check_mode:
                return dict(changed=True)
            base = client_args([p["endpoint"]], p["cacert"], p["cert"], p["key"], etcdctl=p["etcdctl"], dial_timeout=10)
            info = save_snapshot(self.module.run_command, base, p["path"], tool=p["restore_tool"])
            return dict(changed=True, **info)
        cluster = p["initial_cluster"] or members_initial_cluster(p["members"], p["peer_port"])
        return restore_snapshot(self.module.run_command, p["restore_tool"] or offline_tool(p["etcdctl"]), p["path"], p["name"],
                                cluster, p["token"], p["peer_urls"], p["data_dir"], check_mode=self.check_mode)


def main():
    EtcdSnapshot().execute()


if __name__ == "__main__":
    main()
