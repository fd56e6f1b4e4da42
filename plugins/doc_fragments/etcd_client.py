# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options of the modules that talk to etcd as a TLS client (module_utils.etcd.client_argument_spec)."""

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  etcdctl:
    description: The etcdctl program.
    type: path
    default: etcdctl
  endpoints:
    description: Client URLs (C(https://) only).
    type: list
    elements: str
    default: ['https://127.0.0.1:2379']
  cacert:
    description: CA certificate of etcd (on the managed host).
    type: path
    required: true
  cert:
    description: Client certificate (on the managed host).
    type: path
    required: true
  key:
    description: Client private key (on the managed host).
    type: path
    required: true
"""
