# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_config: render a host's kubeadm configuration on the controller."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import kubeadm
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

ARGUMENT_SPEC = {
    "cluster": {"type": "dict", "required": True},
    "node": {"type": "dict", "required": True},
    "role": {"type": "str", "required": True, "choices": ["control_plane", "worker"]},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            out = kubeadm.render_node_config(args["cluster"], args["node"], args["role"])
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
        if out["problems"]:
            raise AnsibleActionFail("the kubeadm configuration does not match the bundle: %s"
                                    % "; ".join(out["problems"]))
        result.update({
            "changed": False,
            "api_version": out["api_version"],
            "init_config": kubeadm.to_yaml_stream(out["init"]) if out["init"] else None,
            "join_config": kubeadm.to_yaml_stream(out["join"]),
        })
        return result
