# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options of the host modules that reach this host's API server (module_utils.cluster.kubeadm.kubeadm.API_SERVER_OPTIONS)."""

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  api_host:
    description: Address of this host's API server; TLS is verified including the host name, so use an address in
      the API server certificate (the advertise address).
    type: str
    default: 127.0.0.1
  api_port:
    description: Port of the local API server.
    type: int
    default: 6443
  ca_file:
    description: Cluster CA used to verify the API server.
    type: path
    default: /etc/kubernetes/pki/ca.crt
  bin_dir:
    description: Where the Kubernetes binaries (C(kubectl), C(kubeadm)) are installed.
    type: path
    default: /usr/local/bin
"""
