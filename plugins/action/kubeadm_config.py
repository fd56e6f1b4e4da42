# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_config: render a host's kubeadm configuration on the controller."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadmconfig
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        if args["role"] == "control_plane" and not args["pki_dir"]:
            raise AnsibleActionFail("pki_dir is empty on a control-plane host: set kubeadm_pki_dir to the directory "
                                    "of mooring.cluster.pki's certificates and keys")
        out = kubeadmconfig.render_node_config(args["cluster"], args["node"], args["role"])
        if out["problems"]:
            raise AnsibleActionFail("the kubeadm configuration does not match the bundle: %s"
                                    % "; ".join(out["problems"]))
        return {
            "changed": False,
            "api_version": out["api_version"],
            "init_config": kubeadmconfig.to_yaml_stream(out["init"]) if out["init"] else None,
            "join_config": kubeadmconfig.to_yaml_stream(out["join"]),
        }
