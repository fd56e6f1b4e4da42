# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter client_kubeconfig: a kubeconfig in kubeadm's shape from the cluster CA and one client certificate."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.kubeadm import client_kubeconfig


def client_kubeconfig_filter(ca_pem, cert_pem, key_pem, server, user, cluster_name="kubernetes"):
    """The kubeconfig text (JSON, deterministic) for ``user`` at ``server``."""
    for name, pem in (("ca", ca_pem), ("certificate", cert_pem)):
        if not str(pem).startswith("-----BEGIN CERTIFICATE-----"):
            raise AnsibleFilterError("client_kubeconfig: the %s is not a PEM certificate" % name)
    if "PRIVATE KEY-----" not in str(key_pem):
        raise AnsibleFilterError("client_kubeconfig: the key is not a PEM private key")
    return client_kubeconfig(server, ca_pem, cert_pem, key_pem, user=user, cluster_name=cluster_name)


class FilterModule(object):
    def filters(self):
        return {"client_kubeconfig": client_kubeconfig_filter}
