#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubeadm_token
short_description: Create a bootstrap token for this run and the discovery kubeconfig joining hosts use
version_added: 0.1.0
description:
  - Runs on a control-plane host. The controller makes a fresh bootstrap token (or takes O(token)) and sends it over
    the connection; the host registers it with C(kubeadm token create TOKEN --ttl TTL), so a join never uses an
    expired or reused token.
  - Returns the discovery kubeconfig for C(kubeadm join) - API endpoint, the cluster CA read from O(ca_file)
    (discovery is pinned to it) and the token. Both are secrets - use C(no_log) on the task and write the file 0600.
  - Always creates a new token (C(changed=true)); in check mode nothing is created.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.flow
options:
  server:
    description: The API endpoint joining hosts use (C(HOST:PORT), the control-plane endpoint).
    type: str
    required: true
  ttl:
    description: Token lifetime (kubeadm duration).
    type: str
    default: 1h
  ca_file:
    description: Cluster CA certificate on this host.
    type: path
    default: /etc/kubernetes/pki/ca.crt
  kubeadm:
    description: The kubeadm binary.
    type: path
    default: /usr/local/bin/kubeadm
  kubeconfig:
    description: Admin kubeconfig on this host.
    type: path
    default: /etc/kubernetes/admin.conf
  cluster_name:
    description: Cluster name in the discovery kubeconfig.
    type: str
    default: kubernetes
  token:
    description:
      - The bootstrap token to register (C([a-z0-9]{6}.[a-z0-9]{16})), a secret. Left out, the controller makes a fresh
        one for each run.
    type: str
"""

EXAMPLES = r"""
- name: A token for the hosts joining in this run
  mooring.cluster.kubeadm_token:
    server: 10.0.0.10:6443
  register: join_token
  no_log: true
"""

RETURN = r"""
token:
  description: The new bootstrap token (secret), added on the controller.
  returned: success and not check mode
  type: str
discovery_kubeconfig:
  description: The discovery kubeconfig (secret), built on the controller from the token and O(ca_file)'s CA.
  returned: success and not check mode
  type: str
ca_pem:
  description: The cluster CA certificate read from O(ca_file) (public).
  returned: success and not check mode
  type: str
argv:
  description: The command run, with the token replaced by C(<token>).
  returned: always
  type: list
  elements: str
"""

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


class KubeadmToken(MooringModule):
    """Creates a bootstrap token and the discovery kubeconfig."""

    argument_spec = {
        "server": {"type": "str", "required": True},
        "ttl": {"type": "str", "default": "1h"},
        "ca_file": {"type": "path", "default": "/etc/kubernetes/pki/ca.crt"},
        "kubeadm": {"type": "path", "default": "/usr/local/bin/kubeadm"},
        "kubeconfig": {"type": "path", "default": "/etc/kubernetes/admin.conf"},
        "cluster_name": {"type": "str", "default": "kubernetes"},
        "token": {"type": "str", "no_log": True},
    }

    def run(self):
        p = self.params
        token = kubeadm.check_token(p["token"])  # the action plugin makes it on the controller when the task has none
        argv = kubeadm.token_create_argv(token, ttl=p["ttl"], kubeadm=p["kubeadm"], kubeconfig=p["kubeconfig"])
        shown = ["<token>" if a == token else a for a in argv]
        if self.check_mode:
            return dict(changed=True, argv=shown)
        try:
            with open(p["ca_file"]) as f:
                ca = f.read(1024 * 1024)
            kubeadm.discovery_kubeconfig(p["server"], ca, token, p["cluster_name"])  # the CA checked before the token is made
        except (OSError, MooringError) as exc:
            self.fail("cannot build the discovery kubeconfig: %s" % exc, argv=shown)
        rc, _out, err = self.module.run_command(argv)
        if rc != 0:
            self.fail("kubeadm token create failed (rc=%d): %s" % (rc, err.replace(token, "<token>")), argv=shown)
        # The token goes back in no value of this result: Ansible would mask it (a no_log option). The action plugin
        # builds the discovery kubeconfig on the controller, from this CA and the token it made.
        return dict(changed=True, ca_pem=ca, argv=shown)


def main():
    KubeadmToken().execute()


if __name__ == "__main__":
    main()
