# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_token: the bootstrap token is made here, on the controller
(kubeadm.new_token, Python's secrets), unless the task gives one, and sent to the module over the connection; the
control-plane host only registers it with kubeadm and reads the cluster CA for the discovery kubeconfig."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import kubeadm
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    _requires_connection = True

    def act(self, args, task_vars):
        args = dict(args, token=kubeadm.check_token(args.get("token") or kubeadm.new_token()))
        return self.execute_timed("mooring.cluster.kubeadm_token", args, task_vars)
