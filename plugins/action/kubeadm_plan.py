# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_plan: lifecycle decisions, made on the controller."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm, kubeadmconfig, kubeadmplan, skew
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        plan = kubeadmplan.plan_cluster(args["states"], args["control_plane"], args["workers"], only=args["only"])
        result = dict(plan)
        result["lines"] = kubeadmplan.plan_lines(plan)
        ignore = kubeadmconfig.preflight_errors_ignored([], args["kubelet"])
        result["commands"] = kubeadmplan.plan_commands(plan, args["bin_dir"], args["config_dir"], args["drain_timeout"],
                                                       upgrade_ignore=ignore)
        result["upgrade"] = None
        result["batches"] = []
        result["upgrade_hosts"] = []
        if args["target_version"]:
            current = args["current_version"] or args["target_version"]
            result["upgrade"] = kubeadmplan.upgrade_step(current, args["target_version"])
            result["batches"] = kubeadmplan.upgrade_batches(args["control_plane"], args["workers"],
                                                            args["batch_size"])
            problems = skew.violations(args["target_version"], skew.node_versions(args["node_versions"], args["control_plane"]),
                                       args["control_plane"],
                                       args["workers"], order=result["batches"], etcd=args["target_etcd_version"],
                                       etcd_range=args["etcd_kubernetes_range"])
            if problems:
                raise kubeadm.KubeadmError("version skew: the upgrade is refused, nothing was changed", problems)
            if result["upgrade"]["action"] == "upgrade":
                result["upgrade_hosts"] = kubeadmplan.hosts_behind(
                    args["node_versions"], args["target_version"],
                    [h for batch in result["batches"] for h in batch["hosts"]])
                first = args["control_plane"][0]
                result["commands"][first]["upgrade"] = kubeadm.upgrade_apply_argv(
                    result["upgrade"]["to"], kubeadm=args["bin_dir"] + "/kubeadm", ignore_preflight_errors=ignore)
            up = result["upgrade"]
            result["lines"].append("upgrade: %s -> %s (%s)" % (up["from"], up["to"], up["action"]))
        result["changed"] = False
        return result
