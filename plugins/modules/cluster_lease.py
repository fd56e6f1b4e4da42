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
    The keeper needs C(/proc) on the controller to watch the run (Linux); where there is none, O(state=acquired)
    refuses to take the lease (naming why) rather than let it lapse unnoticed after O(ttl) seconds mid-run,
    unless O(keep_alive=false).
  - Fencing. The keeper writes its state to a status file of the run on the controller (a private directory,
    C(~/.ansible/tmp/mooring-leases), 0700; the file 0600) - C(keeping) with the time of the last renewal, or why
    it stopped - C(run ended), C(not held) (the lease was lost - released, broken, or expired, also after etcd did
    not answer for longer than the TTL) or C(keeper failed) with the error. A taken lease's fencing token is the etcd
    lease id and the key's create revision (returned, and kept in that file).
  - O(state=held) is the check a rolling playbook makes before each host. It fails the task, in one line
    naming the lease, its holder now (or nobody) and that the run stops before the next host, unless the key
    still holds this run with the same lease id and create revision, etcd gives that lease a TTL above 0, and
    the keeper is still keeping (renewed within the TTL). It changes nothing; in check mode, where no lease is
    taken, it passes.
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
  platform:
    details: runs on the controller only; the certificate paths are controller paths.
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
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
    description:
      - C(acquired) - held by this run; C(released) - not held by it; C(query) - only show who holds it;
        C(held) - fail unless this run still holds the lease it took (the fencing check before each host).
    type: str
    default: acquired
    choices: [acquired, released, query, held]
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
    description:
      - Start the keeper for a newly taken lease. Without it the lease lasts O(ttl) seconds, after which
        O(state=held) fails.
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

- name: Before this host's turn - fail unless this run still holds the lease it took
  mooring.cluster.cluster_lease:
    state: held
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
    - Holder of the lease after the call (acquired, query, held), or the holder it was released from (null when it
      was free). When O(state=acquired) or O(state=held) fails because another run holds the lease, that holder
      (null when nobody does).
  returned: always
  type: str
run_holder:
  description: This run's holder id.
  returned: always
  type: str
lease:
  description: etcd lease id bound to the cluster lease's key (not in check mode); part of the fencing token.
  returned: when O(state=acquired), O(state=query) or O(state=held)
  type: str
create_revision:
  description:
    - The etcd revision at which the lease key was created, as etcd reports it (C(kvs[0].create_revision)); with
      RV(lease), the run's fencing token. A key taken again, even by the same holder, has another one.
  returned: when O(state=acquired) or O(state=held) (null in check mode)
  type: str
mod_revision:
  description: The etcd revision of the lease key's last change (C(kvs[0].mod_revision)).
  returned: when O(state=acquired) or O(state=held) (null in check mode)
  type: str
ttl:
  description: Seconds the holder's lease has left.
  returned: when O(state=query) or O(state=held)
  type: int
held:
  description: True when this run still holds the lease; null in check mode when no lease was taken.
  returned: when O(state=held)
  type: bool
keeper:
  description:
    - The keeper's state from the run's status file - C(keeping), or C(no keeper) with O(keep_alive=false) (a
      stopped keeper fails the check).
  returned: when O(state=held)
  type: str
last_keepalive:
  description: When the keeper last renewed the lease (epoch seconds).
  returned: when O(state=held)
  type: float
keeper_status:
  description: The run's keeper status file on the controller.
  returned: when O(state=acquired) or O(state=held)
  type: str
waited:
  description: Seconds spent waiting for the lease.
  returned: when O(state=acquired)
  type: float
"""
