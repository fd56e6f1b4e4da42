#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: cluster_lease
short_description: Acquire, release, show or break a named cluster lease held in etcd
version_added: 0.1.0
description:
  - The cluster lease makes sure only one run changes the cluster at a time. It is the key C(<prefix><name>)
    holding the holder id, bound to an etcd lease with a TTL, taken with one compare-and-swap transaction
    through etcd's v3 gRPC-JSON gateway over mutual TLS. Runs on the controller.
  - The holder names one run (O(per_run)) - C(USER@CONTROLLER run PID-START), where PID and START identify the
    controller's C(ansible-playbook) process - so every task of that run re-enters the lease and any other run,
    even by the same user on the same controller with the same settings, waits up to O(timeout) seconds and is
    refused, naming the holder.
  - A newly taken lease gets a keeper, a detached process on the controller that keeps it alive while that
    C(ansible-playbook) process lives and gives it back as soon as it ends - released or not, failed or
    killed. Only a dead controller leaves the lease to its TTL, which then expires within O(ttl) seconds.
  - O(state=query) shows the holder and the seconds its lease has left; O(state=released) with O(force) breaks
    another run's lease, only when O(confirm) repeats that exact holder.
  - Formerly C(mooring.cluster.cluster_lock) (that name still works, deprecated, until 2.0.0); its key prefix
    was C(/mooring/locks/).
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  async:
    description: Supports being used with the C(async) keyword.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    platforms: all
    support: full
    details: runs on the controller only; the certificate paths are controller paths.
extends_documentation_fragment:
  - mooring.cluster.attributes
options:
  name:
    description: Lease name (no C(/)).
    type: str
    default: cluster
  holder:
    description:
      - A label for who takes the lease (for example an AWX job name). With O(per_run) the lease is held as
        C(USER@CONTROLLER run PID-START), prefixed by the label when given, as in
        C(LABEL (USER@CONTROLLER run PID-START)).
    type: str
    default: ""
  per_run:
    description: Add the run id to the holder. Without it, two runs with the same holder share the lease.
    type: bool
    default: true
  state:
    description: C(acquired) - held by this run; C(released) - not held by it; C(query) - only show who holds it.
    type: str
    default: acquired
    choices: [acquired, released, query]
  ttl:
    description: Lease time-to-live in seconds (at least 5); the keeper renews it every third of that.
    type: int
    default: 60
  timeout:
    description: Seconds to wait for another holder to release the lease before failing.
    type: int
    default: 0
  poll:
    description: Seconds between attempts while waiting.
    type: int
    default: 2
  force:
    description: With O(state=released), release the lease even when another run holds it (needs O(confirm)).
    type: bool
    default: false
  confirm:
    description: With O(force), the exact holder being broken (as O(state=query) shows it).
    type: str
  keep_alive:
    description: Start the keeper for a newly taken lease.
    type: bool
    default: true
  prefix:
    description: Key prefix of the cluster leases.
    type: str
    default: /mooring/leases/
  endpoints:
    description: etcd client URLs (C(https://) only).
    type: list
    elements: str
    default: ['https://127.0.0.1:2379']
  cacert:
    description: CA certificate of etcd (on the controller).
    type: path
    required: true
  cert:
    description: Client certificate (on the controller).
    type: path
    required: true
  key:
    description: Client private key (on the controller).
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Take the cluster lease for this run (kept alive while the run lives, given back when it ends)
  mooring.cluster.cluster_lease:
    timeout: 300
    endpoints: [https://10.0.0.21:2379]
    cacert: pki/etcd/ca.crt
    cert: pki/etcd/healthcheck-client.crt
    key: pki/etcd/healthcheck-client.key
  run_once: true

- name: Who holds it?
  mooring.cluster.cluster_lease:
    state: query
    endpoints: [https://10.0.0.21:2379]
    cacert: pki/etcd/ca.crt
    cert: pki/etcd/healthcheck-client.crt
    key: pki/etcd/healthcheck-client.key
  run_once: true
  register: lease

- name: Break a dead run's lease, naming it
  mooring.cluster.cluster_lease:
    state: released
    force: true
    confirm: "{{ lease.holder }}"
    endpoints: [https://10.0.0.21:2379]
    cacert: pki/etcd/ca.crt
    cert: pki/etcd/healthcheck-client.crt
    key: pki/etcd/healthcheck-client.key
  run_once: true
"""

RETURN = r"""
holder:
  description:
    - Holder of the lease after the call (acquired, query), or the holder it was released from (null when it was free).
  returned: always
  type: str
run_holder:
  description: This run's holder id.
  returned: always
  type: str
lease:
  description: etcd lease id bound to the cluster lease's key (not in check mode).
  returned: when O(state=acquired) or O(state=query)
  type: str
ttl:
  description: Seconds the holder's lease has left.
  returned: when O(state=query)
  type: int
waited:
  description: Seconds spent waiting for the lease.
  returned: when O(state=acquired)
  type: float
"""
