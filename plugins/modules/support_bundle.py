#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: support_bundle
short_description: Assemble a support bundle on the controller from every host's collected part
version_added: 0.2.0
description:
  - Action plugin (runs on the controller). Writes one C(tar.gz) archive (mode 0600, atomically) with
    C(index.md) at the top - what was collected per host and the findings (certificates expired or expiring
    within O(expiry_days), an etcd member down, a watched unit not active, a disk over O(disk_pct), a clock
    more than O(max_clock_offset) from the controller's, a host not reached, a part not read) - then
    C(hosts/HOST/...) (each host's M(mooring.cluster.support_collect) files) and C(controller/...) (the lock
    and the run reports, redacted here as the hosts' files were there).
  - A host that could not be reached is listed in the index, not fatal.
  - Each host's result is checked first - a file name that is not a relative path of safe names, or a field of
    the wrong type, is left out and named by one C(FAIL) finding for that host; the rest is still assembled. A
    host's text that the index shows is made one line (control characters escaped) and redacted here too.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: none
    description: Writes the archive in check mode too (it changes nothing on any host).
  diff_mode:
    support: none
    description: Nothing on a host is changed.
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  hosts:
    description: Every host's registered M(mooring.cluster.support_collect) result, by inventory name.
    type: dict
    required: true
  dest:
    description:
      - The archive's path; a directory gets C(mooring-support-YYYYmmddTHHMMSSZ.tar.gz) inside it.
    type: path
    required: true
  lock:
    description: The lock file the cluster was installed with (read with a size bound, redacted).
    type: path
  reports_dir:
    description: The run reports' directory (C(.mooring-reports)); its C(*-latest.*) files are included.
    type: path
  kubeconfig:
    description:
      - The admin kubeconfig on the controller; the cluster's nodes, pods, recent events, PVCs, the kubeadm and
        kubelet configuration and the API server's C(/readyz) and C(/livez) are read through it (never Secrets).
      - When it is not given or does not answer, the C(cluster/) files a control-plane host's
        M(mooring.cluster.support_collect) read there are used instead.
    type: path
  expiry_days:
    description: A certificate expiring within this many days is a finding.
    type: int
    default: 30
  disk_pct:
    description: A file system used above this percentage is a finding.
    type: int
    default: 80
  max_clock_offset:
    description: Seconds a host's clock may be from the controller's before it is a finding.
    type: float
    default: 2.0
notes:
  - Decisions live in C(plugins/module_utils/cluster/support/supportbundle.py); see docs/support-bundle.md.
"""

EXAMPLES = r"""
- name: Assemble the archive
  mooring.cluster.support_bundle:
    hosts: "{{ dict(ansible_play_hosts_all | zip(ansible_play_hosts_all | map('extract', hostvars, 'support_host'))) }}"
    dest: "{{ inventory_dir }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
path:
  description: The archive written.
  returned: always
  type: str
size:
  description: Its size in bytes.
  returned: always
  type: int
findings:
  description: C({severity, host, text}), failures first.
  returned: always
  type: list
  elements: dict
finding_lines:
  description: RV(findings) as lines, C(SEVERITY HOST - TEXT) (severity, host, colon, text).
  returned: always
  type: list
  elements: str
redacted:
  description: How many secrets of each kind were taken out (on the hosts, and here in the controller's files and the
    hosts' texts the index shows).
  returned: always
  type: dict
index_lines:
  description: C(index.md), line by line.
  returned: always
  type: list
  elements: str
"""
