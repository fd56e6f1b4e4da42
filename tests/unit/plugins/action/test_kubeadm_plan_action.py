# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CONTRACT TEST of the per-host command lines the kubeadm_plan action hands to the roles."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.action.kubeadm_plan import _commands
from ansible_collections.mooring.cluster.plugins.module_utils import kubeadm

ARGS = {"bin_dir": "/opt/bin", "config_dir": "/etc/kubernetes/mooring", "drain_timeout": 60}


def test_contract_commands_follow_the_plan():
    states = {"cp1": {"binaries": True}, "cp2": {"binaries": True}, "w1": {"binaries": True, "kubelet_conf": True}}
    plan = kubeadm.plan_cluster(states, ["cp1", "cp2"], ["w1"])
    cmds = _commands(ARGS, plan)
    assert cmds["cp1"]["kubeadm"] == ["/opt/bin/kubeadm", "init", "--config", "/etc/kubernetes/mooring/kubeadm-init.yaml",
                                      "--skip-token-print"]
    assert cmds["cp2"]["kubeadm"] == ["/opt/bin/kubeadm", "join", "--config", "/etc/kubernetes/mooring/kubeadm-join.yaml"]
    assert "kubeadm" not in cmds["w1"]  # a member runs neither init nor join
    assert cmds["w1"]["drain"] == kubeadm.drain_argv("w1", 60, kubectl="/opt/bin/kubectl")
    assert cmds["w1"]["upgrade"] == ["/opt/bin/kubeadm", "upgrade", "node", "--certificate-renewal=false"]
