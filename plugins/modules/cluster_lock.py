#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: cluster_lock
short_description: Acquire or release a named cluster lock held in etcd
version_added: 0.1.0
description:
  - The lock is the key C(<prefix><name>) holding the O(holder) id, bound to an etcd lease with a TTL, taken
    with one compare-and-swap transaction through etcd's v3 gRPC-JSON gateway over mutual TLS. A crashed
    holder's lock expires with its lease.
  - Every rolling playbook of this collection takes it first, so two operators cannot roll the cluster at
    once. A second acquirer waits up to O(timeout) seconds, then fails naming the holder.
  - Acquiring a lock already held by the same O(holder) keeps its lease alive and reports no change.
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
  name:
    description: Lock name (no C(/)).
    type: str
    default: cluster
  holder:
    description: Who holds the lock (for example C(user@controller:playbook)).
    type: str
    required: true
  state:
    description: Whether the lock should be held by O(holder).
    type: str
    default: acquired
    choices: [acquired, released]
  ttl:
    description: Lease time-to-live in seconds (at least 5); the lock disappears this long after its holder died.
    type: int
    default: 3600
  timeout:
    description: Seconds to wait for another holder to release the lock before failing.
    type: int
    default: 0
  poll:
    description: Seconds between attempts while waiting.
    type: int
    default: 2
  force:
    description: With O(state=released), release the lock even when another holder has it.
    type: bool
    default: false
  prefix:
    description: Key prefix of the locks.
    type: str
    default: /mooring/locks/
  endpoints:
    description: etcd client URLs (C(https://) only).
    type: list
    elements: str
    default: ['https://127.0.0.1:2379']
  cacert:
    description: CA certificate of etcd (on the host the module runs on).
    type: path
    required: true
  cert:
    description: Client certificate.
    type: path
    required: true
  key:
    description: Client private key.
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Take the cluster lock for this run
  mooring.cluster.cluster_lock:
    name: cluster
    holder: "{{ lookup('env', 'USER') }}@{{ ansible_play_name }}"
    timeout: 300
    cacert: /etc/kubernetes/pki/etcd/ca.crt
    cert: /etc/kubernetes/pki/etcd/healthcheck-client.crt
    key: /etc/kubernetes/pki/etcd/healthcheck-client.key
  run_once: true

- name: Give it back
  mooring.cluster.cluster_lock:
    name: cluster
    holder: "{{ lookup('env', 'USER') }}@{{ ansible_play_name }}"
    state: released
    cacert: /etc/kubernetes/pki/etcd/ca.crt
    cert: /etc/kubernetes/pki/etcd/healthcheck-client.crt
    key: /etc/kubernetes/pki/etcd/healthcheck-client.key
  run_once: true
"""

RETURN = r"""
holder:
  description: Holder of the lock after the call (acquired), or the holder it was released from (null when it was free).
  returned: always
  type: str
lease:
  description: etcd lease id bound to the lock (acquired, not in check mode).
  returned: when O(state=acquired)
  type: str
waited:
  description: Seconds spent waiting for the lock.
  returned: when O(state=acquired)
  type: float
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.mooring.cluster.plugins.module_utils.errors import MooringError  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.etcd import (  # noqa: E402
    GatewayClient,
    LockHeldError,
    acquire_lock,
    release_lock,
)


def main():
    module = AnsibleModule(
        argument_spec={
            "name": {"type": "str", "default": "cluster"},
            "holder": {"type": "str", "required": True},
            "state": {"type": "str", "default": "acquired", "choices": ["acquired", "released"]},
            "ttl": {"type": "int", "default": 3600},
            "timeout": {"type": "int", "default": 0},
            "poll": {"type": "int", "default": 2},
            "force": {"type": "bool", "default": False},
            "prefix": {"type": "str", "default": "/mooring/locks/"},
            "endpoints": {"type": "list", "elements": "str", "default": ["https://127.0.0.1:2379"]},
            "cacert": {"type": "path", "required": True},
            "cert": {"type": "path", "required": True},
            "key": {"type": "path", "required": True},
        },
        supports_check_mode=True,
    )
    p = module.params
    try:
        client = GatewayClient(p["endpoints"], p["cacert"], p["cert"], p["key"])
        if p["state"] == "acquired":
            result = acquire_lock(client, p["name"], p["holder"], ttl=p["ttl"], timeout=p["timeout"], poll=p["poll"],
                                  prefix=p["prefix"], check_mode=module.check_mode)
        else:
            result = release_lock(client, p["name"], p["holder"], force=p["force"], prefix=p["prefix"],
                                  check_mode=module.check_mode)
    except LockHeldError as exc:
        module.fail_json(msg=str(exc), holder=exc.holder)
    except MooringError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
