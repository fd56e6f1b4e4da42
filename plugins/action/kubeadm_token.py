# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_token: the bootstrap token is made here, on the controller
(kubeadm.new_token, Python's secrets), unless the task gives one, and sent to the module over the connection; the
control-plane host only registers it with kubeadm and returns the cluster CA; the discovery kubeconfig is built here.
A module's result cannot carry the token: Ansible masks the value of a no_log option wherever it appears in it."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    _requires_connection = True

    def act(self, args, task_vars):
        token = kubeadm.check_token(args.get("token") or kubeadm.new_token())
        result = self.execute_timed("mooring.cluster.kubeadm_token", dict(args, token=token), task_vars)
        if result.get("failed") or "ca_pem" not in result:
            return result
        # Built here: the module's result cannot carry the token (Ansible masks a no_log option's value in it).
        result.update(token=token, discovery_kubeconfig=kubeadm.discovery_kubeconfig(
            args["server"], result["ca_pem"], token, args.get("cluster_name") or "kubernetes"))
        return result
