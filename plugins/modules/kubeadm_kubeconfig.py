# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: kubeadm_kubeconfig
short_description: Write an admin kubeconfig on the controller from the cluster PKI
version_added: 0.1.0
description:
  - Runs on the controller. Builds a kubeconfig from the PKI made by M(mooring.cluster.pki) - C(ca.crt) and the
    C(kubeconfig/admin) client certificate (O=kubeadm:cluster-admins) - for the controller's
    M(kubernetes.core.k8s) and M(kubernetes.core.helm) tasks. Written 0600, atomically; unchanged content is
    not rewritten.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  pki_dir:
    description: The PKI directory on the controller.
    type: path
    required: true
  server:
    description: API endpoint (C(HOST:PORT) or an C(https://) URL).
    type: str
    required: true
  dest:
    description: Where to write the kubeconfig on the controller.
    type: path
    required: true
  cluster_name:
    description: Cluster name in the kubeconfig.
    type: str
    default: kubernetes
"""

EXAMPLES = r"""
- name: Admin kubeconfig for the add-ons
  mooring.cluster.kubeadm_kubeconfig:
    pki_dir: "{{ inventory_dir }}/pki"
    server: 10.0.0.10:6443
    dest: "{{ inventory_dir }}/admin.conf"
  run_once: true
"""

RETURN = r"""
dest:
  description: The kubeconfig written.
  returned: always
  type: str
"""
