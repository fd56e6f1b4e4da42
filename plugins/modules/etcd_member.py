#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: etcd_member
short_description: Add or remove an etcd cluster member (etcdctl member add/remove)
version_added: 0.1.0
description:
  - Makes O(name) with O(peer_urls) a member of the etcd cluster reached through O(endpoints), or removes
    it. A member is found by its name or by any of its peer URLs (a member added but never started has no
    name yet).
  - For O(state=present) returns the C(--initial-cluster) value the joining member must start with
    (every started member plus itself), to be used with C(--initial-cluster-state=existing).
  - Run it against a healthy member, never against the member being added.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.etcd_client
options:
  endpoints:
    description: Client URLs of healthy members (C(https://) only).
    type: list
    elements: str
    default: ['https://127.0.0.1:2379']
  name:
    description: Member name.
    type: str
    required: true
  peer_urls:
    description: Peer URLs of the member (C(https://ADDRESS:2380)); required to add.
    type: list
    elements: str
    default: []
  state:
    description: Whether the member should be in the cluster.
    type: str
    default: present
    choices: [present, absent]
"""

EXAMPLES = r"""
- name: Add e4 to the cluster, from a healthy member
  mooring.cluster.etcd_member:
    cacert: /etc/kubernetes/pki/etcd/ca.crt
    cert: /etc/kubernetes/pki/etcd/healthcheck-client.crt
    key: /etc/kubernetes/pki/etcd/healthcheck-client.key
    name: e4
    peer_urls: [https://10.0.0.24:2380]
  delegate_to: e1
  register: join

- name: Remove a dead member
  mooring.cluster.etcd_member:
    cacert: /etc/kubernetes/pki/etcd/ca.crt
    cert: /etc/kubernetes/pki/etcd/healthcheck-client.crt
    key: /etc/kubernetes/pki/etcd/healthcheck-client.key
    name: e2
    state: absent
"""

RETURN = r"""
initial_cluster:
  description: For O(state=present), the C(--initial-cluster) value for the joining member.
  returned: always
  type: str
  sample: e1=https://10.0.0.21:2380,e2=https://10.0.0.22:2380,e4=https://10.0.0.24:2380
member:
  description: The member as found before the change (or as added), null when absent.
  returned: always
  type: dict
members:
  description: The member list after the change.
  returned: always
  type: list
  elements: dict
"""

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdctl import client_args  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdmember import ensure_member  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdoptions import client_argument_spec  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


class EtcdMember(MooringModule):
    """Adds or removes an etcd member."""

    def spec(self):
        return dict(
            client_argument_spec(),
            name={"type": "str", "required": True},
            peer_urls={"type": "list", "elements": "str", "default": []},
            state={"type": "str", "default": "present", "choices": ["present", "absent"]},
        )

    def run(self):
        p = self.params
        base = client_args(p["endpoints"], p["cacert"], p["cert"], p["key"], etcdctl=p["etcdctl"],
                           command_timeout=15, dial_timeout=10)
        return ensure_member(self.module.run_command, base, p["name"], p["peer_urls"], state=p["state"],
                             check_mode=self.check_mode)


def main():
    EtcdMember().execute()


if __name__ == "__main__":
    main()
