#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_health
short_description: Health gates of a Kubernetes node from structured output
version_added: 0.1.0
description:
  - Read-only. Asks the local API server's C(/readyz) (HTTPS, verified with the cluster CA), reads
    C(kubectl get nodes -o json) for the nodes' Ready condition and kubelet versions, and on a control-plane
    host the control-plane static pods (kube-apiserver, kube-controller-manager, kube-scheduler, and etcd when
    stacked) as the API server sees them, C(kubectl get pods) of this node's mirror pods, Ready when their
    containers run and pass their probes.
  - C(healthy) is true when every asked gate passes; use it with C(until)/C(retries).
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.api_server
options:
  node:
    description: Node whose Ready condition is a gate (default - none).
    type: str
  static_pods:
    description: Gate on the control-plane static pods of this host (needs O(host_node)).
    type: bool
    default: false
  host_node:
    description: This host's node name, whose static pods O(static_pods) reads.
    type: str
  stacked_etcd:
    description: With O(static_pods), also require the etcd static pod.
    type: bool
    default: false
  version:
    description:
      - With O(static_pods), also require each control-plane static pod to run its image tagged C(v<version>)
        (the upgrade's gate - the node's static pods are at the new version).
    type: str
  api:
    description: Gate on the local API server's C(/readyz).
    type: bool
    default: true
  kubeconfig:
    description: Kubeconfig for kubectl.
    type: path
    default: /etc/kubernetes/admin.conf
"""

EXAMPLES = r"""
- name: Wait until this control-plane node is healthy
  mooring.cluster.k8s_health:
    node: "{{ inventory_hostname }}"
    static_pods: true
    host_node: "{{ inventory_hostname }}"
  register: health
  until: health.healthy
  retries: 60
  delay: 5
"""

RETURN = r"""
healthy:
  description: Every asked gate passed.
  returned: always
  type: bool
api_ready:
  description: C(/readyz) answered 200 (null when not asked).
  returned: always
  type: bool
nodes:
  description: Node name to C(ready), C(version), C(unschedulable) (empty when kubectl failed).
  returned: always
  type: dict
missing_static_pods:
  description: Control-plane static pods not ready on this host.
  returned: always
  type: list
  elements: str
problems:
  description: Why it is not healthy, one line per gate.
  returned: always
  type: list
  elements: str
"""

import os  # noqa: E402

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


def check(module, p):
    problems, nodes, missing = [], {}, []
    api = kubeadm.api_readyz(p["api_host"], p["api_port"], p["ca_file"]) if p["api"] else None
    if p["api"] and not api:
        problems.append("API server: /readyz does not answer 200 (or no CA file %s)" % p["ca_file"])
    if p["node"]:
        rc, out, err = module.run_command(kubeadm.nodes_json_argv(os.path.join(p["bin_dir"], "kubectl"),
                                                                  p["kubeconfig"]))
        try:
            nodes = kubeadm.node_conditions(out) if rc == 0 else {}
        except MooringError as exc:
            problems.append(str(exc))
        if rc != 0:
            problems.append("kubectl get nodes failed (rc=%d): %s" % (rc, err.strip()[:200]))
        elif not (nodes.get(p["node"]) or {}).get("ready"):
            problems.append("node %s: not Ready" % p["node"])
    if p["static_pods"]:
        rc, out, err = module.run_command(kubeadm.static_pods_argv(p["host_node"], os.path.join(p["bin_dir"], "kubectl"),
                                                                   p["kubeconfig"]))
        try:
            missing = (kubeadm.static_pods_running(out, p["stacked_etcd"], p["version"]) if rc == 0
                       else list(kubeadm.STATIC_PODS))
        except MooringError as exc:
            problems.append(str(exc))
        if rc != 0:
            problems.append("kubectl get pods failed (rc=%d): %s" % (rc, err.strip()[:200]))
        if missing:
            problems.append("static pods not ready%s: %s" % (" at v" + p["version"] if p["version"] else "", ", ".join(missing)))
    return {"healthy": not problems, "api_ready": api, "nodes": nodes, "missing_static_pods": missing,
            "problems": problems}


class K8sHealth(MooringModule):
    """Checks this host's kubelet, static pods and API server."""

    argument_spec = {
        "node": {"type": "str"},
        "static_pods": {"type": "bool", "default": False},
        "host_node": {"type": "str"},
        "stacked_etcd": {"type": "bool", "default": False},
        "version": {"type": "str"},
        "api": {"type": "bool", "default": True},
        "kubeconfig": {"type": "path", "default": "/etc/kubernetes/admin.conf"},
        **kubeadm.API_SERVER_OPTIONS,
    }

    module_kwargs = {"required_if": [("static_pods", True, ("host_node",))]}

    def run(self):
        return dict(changed=False, **check(self.module, self.params))


def main():
    K8sHealth().execute()


if __name__ == "__main__":
    main()
