# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options of an etcd health gate's settle window (module_utils.etcd.gate_argument_spec)."""

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  checks:
    description:
      - Good looks in a row the gate needs. With more than one, every look also writes the key
        C(/mooring/health/gate) and every member's raft index must advance from the look before, and a
        member whose process restarted between looks (its C(process_start_time_seconds) metric changed)
        breaks the run - a flapping member cannot pass in a lucky moment.
    type: int
    default: 1
  interval:
    description: Seconds between looks.
    type: int
    default: 2
  min_uptime:
    description: A member whose process has been up for less than this many seconds does not count as settled.
    type: int
    default: 0
  timeout:
    description:
      - Seconds to keep looking before failing; C(0) looks until the first bad look (or O(checks) good ones).
      - >-
        The failure names each member that was down or restarted in the latest looks, for example
        C(etcd-3 flapped: down 4 of the last 6 checks).
    type: int
    default: 0
"""
