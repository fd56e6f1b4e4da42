#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: etcd_health
short_description: Health gate for an etcd cluster, from etcdctl's JSON output
version_added: 0.1.0
description:
  - Runs C(etcdctl member list -w json) and C(etcdctl endpoint health --cluster -w json) over mutual TLS
    and reports how many members are healthy, the quorum size and whether one more member could be taken
    down without losing quorum.
  - With O(timeout), polls until the requirement holds and fails when it does not within that time.
  - Changes nothing but, with O(checks) > 1 (and not in check mode), the probe key C(/mooring/health/gate)
    each look writes so that every member's raft index must advance.
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
  - mooring.cluster.etcd_gate
options:
  endpoints:
    description: Client URLs to ask (C(https://) only); with C(--cluster) every member is then checked.
    type: list
    elements: str
    default: ['https://127.0.0.1:2379']
  require:
    description: C(all) - every member healthy; C(quorum) - a majority healthy.
    type: str
    default: all
    choices: [all, quorum]
  expected_members:
    description: Also require exactly this many members in the member list.
    type: int
  exclude:
    description:
      - The member (name) about to be restarted. It may be down; every other member must be healthy and hold
        quorum without it.
    type: str
"""

EXAMPLES = r"""
- name: Wait until every member is healthy
  mooring.cluster.etcd_health:
    cacert: /etc/kubernetes/pki/etcd/ca.crt
    cert: /etc/kubernetes/pki/etcd/healthcheck-client.crt
    key: /etc/kubernetes/pki/etcd/healthcheck-client.key
    timeout: 120
"""

RETURN = r"""
total:
  description: Members in the member list (0 when it could not be read, i.e. no quorum).
  returned: always
  type: int
healthy:
  description: Members whose endpoint answered healthy.
  returned: always
  type: int
quorum:
  description: Members needed for a majority.
  returned: always
  type: int
has_quorum:
  description: Whether at least RV(quorum) members are healthy.
  returned: always
  type: bool
all_healthy:
  description: Whether every member is healthy.
  returned: always
  type: bool
can_lose_one:
  description: Whether one more member could go down without losing quorum.
  returned: always
  type: bool
unhealthy:
  description: Client URLs of the unhealthy members.
  returned: always
  type: list
  elements: str
members:
  description: The member list (id, id_hex, name, peer_urls, client_urls, started, learner).
  returned: always
  type: list
  elements: dict
health:
  description: Per endpoint, C(endpoint), C(health), C(error).
  returned: always
  type: list
  elements: dict
healthy_members:
  description: Names of the members whose endpoint answered healthy.
  returned: always
  type: list
  elements: str
raft_indexes:
  description: Raft index per client URL.
  returned: always
  type: dict
incidents:
  description:
    - >-
      What the gate waited out before it passed (members that were down or restarted), for example
      C(etcd-3 flapped: down 2 of the last 5 checks); empty when every look was good.
  returned: always
  type: str
looks:
  description: The latest looks (C(problems) and, per member, C(up), C(raft_index), C(start)).
  returned: always
  type: list
  elements: dict
revisions:
  description: Store revision per client URL.
  returned: always
  type: dict
versions:
  description: etcd server version per client URL (from C(endpoint status -w json)).
  returned: always
  type: dict
  sample: {"https://10.0.0.21:2379": "3.5.1"}
"""

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdgate import gate_client, gate_kwargs, wait_health  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdoptions import client_argument_spec, gate_argument_spec  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


class EtcdHealth(MooringModule):
    """Waits until the etcd members are healthy; fails with why they are not."""

    def spec(self):
        return dict(
            client_argument_spec(),
            require={"type": "str", "default": "all", "choices": ["all", "quorum"]},
            expected_members={"type": "int"},
            **gate_argument_spec(),
            exclude={"type": "str"},
        )

    def run(self):
        p = self.params
        base = gate_client(p)
        state = wait_health(self.module.run_command, base, require=p["require"], expected=p["expected_members"],
                            exclude=p["exclude"], **gate_kwargs(p, self.check_mode))
        return dict(changed=False, **state)


def main():
    EtcdHealth().execute()


if __name__ == "__main__":
    main()
