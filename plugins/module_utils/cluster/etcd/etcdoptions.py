# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the Ansible argument specs the etcd modules share.

Documented by the ``mooring.cluster.etcd_client`` and ``mooring.cluster.etcd_gate`` doc fragments.
"""

from __future__ import annotations


def client_argument_spec():
    """Module options of an etcd client (documented by the mooring.cluster.etcd_client fragment)."""
    return {
        "etcdctl": {"type": "path", "default": "etcdctl"},
        "endpoints": {"type": "list", "elements": "str", "default": ["https://127.0.0.1:2379"]},
        "cacert": {"type": "path", "required": True},
        "cert": {"type": "path", "required": True},
        "key": {"type": "path", "required": True},
    }


def gate_argument_spec():
    """Module options of a health gate's settle window (documented by the mooring.cluster.etcd_gate fragment)."""
    return {
        "checks": {"type": "int", "default": 1},
        "interval": {"type": "int", "default": 2},
        "min_uptime": {"type": "int", "default": 0},
        "timeout": {"type": "int", "default": 0},
    }
