# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_plan: lifecycle decisions, made on the controller."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import kubeadm
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

ARGUMENT_SPEC = {
    "states": {"type": "dict", "required": True},
    "control_plane": {"type": "list", "elements": "str", "required": True},
    "workers": {"type": "list", "elements": "str", "default": []},
    "only": {"type": "list", "elements": "str"},
    "current_version": {"type": "str"},
    "target_version": {"type": "str"},
    "batch_size": {"type": "int", "default": 1},
    "bin_dir": {"type": "str", "default": "/usr/local/bin"},
    "config_dir": {"type": "str", "default": kubeadm.CONFIG_DIR},
    "drain_timeout": {"type": "int", "default": 300},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            plan = kubeadm.plan_cluster(args["states"], args["control_plane"], args["workers"], only=args["only"])
            result.update(plan)
            result["lines"] = kubeadm.plan_lines(plan)
            result["commands"] = kubeadm.plan_commands(plan, args["bin_dir"], args["config_dir"], args["drain_timeout"])
            result["upgrade"] = None
            result["batches"] = []
            if args["target_version"]:
                current = args["current_version"] or args["target_version"]
                result["upgrade"] = kubeadm.upgrade_step(current, args["target_version"])
                result["batches"] = kubeadm.upgrade_batches(args["control_plane"], args["workers"],
                                                            args["batch_size"])
                if result["upgrade"]["action"] == "upgrade":
                    first = args["control_plane"][0]
                    result["commands"][first]["upgrade"] = kubeadm.upgrade_apply_argv(
                        result["upgrade"]["to"], kubeadm=args["bin_dir"] + "/kubeadm")
                up = result["upgrade"]
                result["lines"].append("upgrade: %s -> %s (%s)" % (up["from"], up["to"], up["action"]))
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
        result["changed"] = False
        return result
