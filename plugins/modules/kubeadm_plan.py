# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: kubeadm_plan
short_description: Decide who runs kubeadm init, who joins, and the upgrade order, from real state
version_added: 0.1.0
description:
  - Runs on the controller. From the state of every host (M(mooring.cluster.kubeadm_state)) decides,
    per host, C(init) (the first control-plane host, only when no control plane answers), C(join_control_plane),
    C(join_worker), C(member) (already joined), C(untouched) (not in O(only)) or C(blocked) (binaries missing).
  - Refuses a contradictory state, for example an C(admin.conf) whose API server does not answer while no
    other control plane does, instead of running C(kubeadm init) over it.
  - With O(target_version), also decides the upgrade (one minor at a time; downgrades refused) and its host
    order - first control plane C(apply), the others C(node) one by one, workers in batches of O(batch_size).
  - Changes nothing; the result is the check-mode plan of the lifecycle playbooks.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  states:
    description: Host name to the C(state) returned by M(mooring.cluster.kubeadm_state).
    type: dict
    required: true
  control_plane:
    description: Control-plane hosts, in order (the first creates the cluster).
    type: list
    elements: str
    required: true
  workers:
    description: Worker hosts.
    type: list
    elements: str
    default: []
  only:
    description:
      - Limit changes to these hosts (the others are reported as C(untouched) or C(member)).
      - With O(only), O(states) may leave out hosts outside it (the join playbook reads only the new hosts and the
        first control plane); they are reported C(untouched), not contacted, and no cluster is created from such a
        partial view.
    type: list
    elements: str
  current_version:
    description: Kubernetes version the cluster runs (for the upgrade decision).
    type: str
  target_version:
    description: Kubernetes version to upgrade to (the lock's).
    type: str
  node_versions:
    description:
      - With O(target_version), what every host runs now, for the version-skew rules (every broken rule is one line of
        the failure) - host name to its node as M(mooring.cluster.k8s_health) reports it (C(version), the kubelet's;
        on a control plane the API server is taken to run it too, as kubeadm upgrades them together), or to explicit
        C(apiserver) and C(kubelet) versions (null when not running). Empty (the kubeadm boundary) - only the etcd rule applies.
      - The rules (checked before anything changes) - Kubernetes one minor at a time and no downgrade, per host;
        every control plane before any worker; a kubelet never newer than the oldest API server nor more than three
        minors older, before, during and after the roll; O(target_etcd_version) supported by O(target_version).
    type: dict
    default: {}
  target_etcd_version:
    description: The lock's etcd version, checked against O(target_version) (the catalog's range in
      O(etcd_kubernetes_range), otherwise the etcd series kubeadm runs for that minor or the one before).
    type: str
  etcd_kubernetes_range:
    description: The catalog's Kubernetes range for that etcd version (for example V(>=1.31.0,<1.37.0)), when it has one.
    type: str
  batch_size:
    description: Workers upgraded at once.
    type: int
    default: 1
  bin_dir:
    description: Where kubeadm and kubectl are on the hosts (for the command lines).
    type: str
    default: /usr/local/bin
  config_dir:
    description: Where the kubeadm configuration files are on the hosts.
    type: str
    default: /etc/kubernetes/mooring
  drain_timeout:
    description: Seconds C(kubectl drain) may take.
    type: int
    default: 300
  kubelet:
    description:
      - The lock's kubelet options (C(kubernetes.kubelet) of the spec). With C(failCgroupV1=false) the upgrade commands
        ignore kubeadm's C(SystemVerification) preflight check, as the cluster's init and join configuration does
        (kubeadm upgrade reads neither).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Decide init / join / member for every host
  mooring.cluster.kubeadm_plan:
    states: "{{ dict(groups['k8s_cluster'] | zip(groups['k8s_cluster'] | map('extract', hostvars, ['__state', 'state']))) }}"
    control_plane: "{{ groups['control_plane'] }}"
    workers: "{{ groups['workers'] | default([]) }}"
  run_once: true
  register: kubeadm_plan
"""

RETURN = r"""
cluster_exists:
  description: A control-plane host has C(admin.conf) and its API answers C(/readyz).
  returned: always
  type: bool
init_host:
  description: The host that runs C(kubeadm init), or null.
  returned: always
  type: str
token_host:
  description: Where the join token is made - the init host, or the first control plane that answers; null when none.
  returned: always
  type: str
hosts:
  description: Host name to C(action) and C(reason).
  returned: always
  type: dict
  sample: {"cp1": {"action": "init", "reason": "no control plane answers: this host creates the cluster"}}
lines:
  description: The plan, one line per host.
  returned: always
  type: list
  elements: str
commands:
  description: Per host, the exact argv of each step - C(kubeadm) (init or join, when planned), C(drain),
    C(uncordon), C(delete), C(reset), C(upgrade) (C(kubeadm upgrade apply) on the first control plane when an
    upgrade is planned, C(kubeadm upgrade node) elsewhere).
  returned: always
  type: dict
upgrade:
  description: C(action) (C(upgrade) or C(none)), C(from), C(to); null without O(target_version).
  returned: always
  type: dict
batches:
  description: Upgrade order, each C(hosts) and C(command) (C(apply) or C(node)).
  returned: always
  type: list
  elements: dict
upgrade_hosts:
  description:
    - The hosts of the upgrade's order whose node the API does not report at O(target_version) yet (from
      O(node_versions)); their turn runs kubeadm upgrade. Empty when no upgrade is planned. A host already at the
      target (a resumed roll) is left out, so it is not drained or restarted again.
  returned: always
  type: list
  elements: str
"""
