#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: etcd_scheduled_snapshots
short_description: List an etcd host's scheduled snapshots, each checksum checked again, and the last run's result
version_added: 0.2.0
description:
  - Reads what the etcd role's scheduled snapshots (C(etcd_scheduled_snapshots), the spec's C(etcd.backup)) left on
    the host - every C(etcd-MEMBER-TIME.db) with the sha256 computed now and compared with its C(.sha256), the
    revision and key count its C(.status.json) recorded - and the state of C(mooring-etcd-snapshot.service) and
    C(.timer) from systemd.
  - Nothing is written. The module does not fail on bad backups; it reports them in RV(problems), so a playbook
    lists every host before it stops (M(mooring.cluster.etcd_scheduled_snapshots) playbook).
author:
  - Mooring maintainers (@mooring)
extends_documentation_fragment:
  - mooring.cluster.attributes.read_only
options:
  directory:
    description: Where the snapshots are (the role's C(etcd_scheduled_snapshots_dir)).
    type: path
    default: /var/backups/mooring-etcd-scheduled
seealso:
  - module: mooring.cluster.etcd_snapshot
"""

EXAMPLES = r"""
- name: The scheduled snapshots on every etcd host
  mooring.cluster.etcd_scheduled_snapshots:
  register: backups
"""

RETURN = r"""
snapshots:
  description: The snapshots, oldest first.
  returned: success
  type: list
  elements: dict
  contains:
    name: {description: File name., type: str}
    path: {description: Full path., type: str}
    time: {description: 'When it was taken (UTC, from its name).', type: str}
    size: {description: Bytes., type: int}
    sha256: {description: The sha256 computed now., type: str}
    revision: {description: 'The etcd revision the snapshot holds (from its recorded status).', type: int}
    total_keys: {description: 'Keys in the snapshot (from its recorded status).', type: int}
    problems: {description: 'What is wrong with this snapshot (empty when it is good).', type: list, elements: str}
service:
  description: The snapshot service's last run (C(state), C(result), C(exit_status), C(last_exit)).
  returned: success
  type: dict
timer:
  description: The timer (C(state), C(enabled), C(last_trigger), C(next)).
  returned: success
  type: dict
problems:
  description: Why these backups cannot be trusted - the last run failed, the timer is not active, no snapshot yet,
    a checksum or status that does not match. Empty when all is well.
  returned: success
  type: list
  elements: str
lines:
  description: One line per snapshot (name, revision, keys, bytes, C(sha256 ok) or what is wrong), then the last and next run.
  returned: success
  type: list
  elements: str
failed_backups:
  description: True when RV(problems) is not empty.
  returned: success
  type: bool
"""

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import etcdbackup  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


class EtcdBackups(MooringModule):
    """Reads the scheduled etcd backups of this host."""

    argument_spec = dict(directory=dict(type="path", default="/var/backups/mooring-etcd-scheduled"))
    errors = (MooringError, OSError)

    def failure(self, exc):
        return {"msg": "etcd backups in %s: %s" % (self.params["directory"], exc)}

    def run(self):
        found = etcdbackup.read_backups(self.params["directory"], self.command)
        failed = found.pop("failed")
        return dict(changed=False, failed_backups=failed, **found)


def main():
    EtcdBackups().execute()


if __name__ == "__main__":
    main()
