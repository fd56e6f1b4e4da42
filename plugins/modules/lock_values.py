# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: lock_values
short_description: The values the playbooks take from an installer lock, read on the controller
version_added: 0.1.0
description:
  - Runs on the controller. Reads the lock file (C(installer.lock.yaml)), checks its digest as every other reader
    of the lock does, and returns the values the lifecycle playbooks pass to the roles - the Kubernetes version,
    image refs and options, the API endpoint, the etcd topology, containerd's config.toml version, the cluster name,
    the add-ons, the kubeadm boundary and, with O(groups), what the install does on each host.
  - A malformed lock fails the task with one line naming the field.
  - Changes nothing.
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
  path:
    description: The lock file on the controller.
    type: path
    required: true
  control_plane_address:
    description:
      - Address of the first control-plane host. The API endpoint is C(ADDRESS:6443) when the lock's Kubernetes
        options set no C(controlPlaneEndpoint).
    type: str
  groups:
    description:
      - The inventory's groups (group name to host names, as the magic variable C(groups)). With it, RV(plans)
        holds what the install does on each host; the first host of C(control_plane) runs C(kubeadm init).
    type: dict
  addresses:
    description:
      - Every host's address, added to the proxy's C(NO_PROXY) (RV(proxy)). Default - each inventory host's
        C(mooring_address), else its C(ansible_host), else its name.
    type: list
    elements: str
  arch:
    description: Architecture in the catalog's terms (for the kubeadm boundary and the plans).
    type: str
    default: amd64
  with_lock:
    description:
      - Return the lock itself (RV(lock)) too, so that the run reads the file once and hands the lock to
        M(mooring.cluster.bundle_build) (O(mooring.cluster.bundle_build#module:lock_data)) as data.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Read the lock (controller)
  mooring.cluster.lock_values:
    path: "{{ mooring_lock }}"
    control_plane_address: "{{ hostvars[groups['control_plane'][0]].ansible_host }}"
  run_once: true
  register: mooring_lock_values

- name: Node configuration from the lock's values
  ansible.builtin.include_role:
    name: mooring.cluster.kubeadm
  vars:
    kubeadm_kubernetes_version: "{{ mooring_lock_values.kubernetes_version }}"
    kubeadm_images: "{{ mooring_lock_values.kubernetes_images }}"
    kubeadm_options: "{{ mooring_lock_values.kubernetes_options }}"
    kubeadm_etcd_topology: "{{ mooring_lock_values.etcd_topology }}"
    kubeadm_control_plane_endpoint: "{{ mooring_lock_values.api_endpoint }}"

- name: What the install does on each host
  mooring.cluster.lock_values:
    path: "{{ mooring_lock }}"
    groups: "{{ groups }}"
  run_once: true
  register: mooring_lock_plan
"""

RETURN = r"""
lock:
  description: The lock as read (shape and digest checked), with O(with_lock).
  returned: when O(with_lock)
  type: dict
digest:
  description: The lock's digest (SHA-256 of its canonical JSON), checked against its content.
  returned: always
  type: str
kubernetes_version:
  description: The lock's C(addons.kubernetes.version).
  returned: always
  type: str
  sample: 1.35.8
kubernetes_images:
  description: The refs of the lock's C(addons.kubernetes.images), in the lock's order.
  returned: always
  type: list
  elements: str
  sample: [registry.k8s.io/kube-apiserver:v1.35.8, registry.k8s.io/pause:3.10.1]
kubernetes_options:
  description: The lock's C(addons.kubernetes.options) (podCIDR, serviceCIDR, clusterDomain, clusterName, kubelet ...).
  returned: always
  type: dict
  sample: {podCIDR: 10.32.0.0/16, serviceCIDR: 10.96.0.0/16, clusterDomain: cluster.local, clusterName: kubernetes}
cluster_name:
  description: The Kubernetes option C(clusterName), C(kubernetes) when the lock sets none.
  returned: always
  type: str
  sample: kubernetes
api_endpoint:
  description:
    - The API endpoint (C(HOST:PORT)) - the Kubernetes option C(controlPlaneEndpoint), else O(control_plane_address)
      on port 6443; null when the lock sets none and no address is given.
  returned: always
  type: str
  sample: 10.0.0.11:6443
ha_endpoint:
  description:
    - The Kubernetes option C(haEndpoint) (docs/ha-endpoint.md) - C(mode), the virtual IP C(vip) and C(port) (from
      C(controlPlaneEndpoint)), C(interface) (null = the one on the VIP's subnet), C(router_id) (default 51) and
      C(packages) (per distro, for the control-plane hosts); null when the lock has none.
  returned: always
  type: dict
  sample: {mode: vip, vip: 10.0.0.100, port: 6443, interface: null, router_id: 51, packages: {debian: [keepalived]}}
host_preflights:
  description:
    - The spec's host preflights (kURL's C(spec.kurl.hostPreflights) and C(hostPreflightEnforceWarnings), or
      C(spec.hostPreflights)) - C(documents), troubleshoot.sh C(HostPreflight) documents, and C(enforceWarnings);
      empty when the lock has none. The preflight stage runs them.
  returned: always
  type: dict
  sample: {documents: [{apiVersion: troubleshoot.sh/v1beta2, kind: HostPreflight, spec: {collectors: [], analyzers: []}}],
           enforceWarnings: false}
installer_spec:
  description:
    - The lock's C(spec), the installer spec it was resolved from (kURL's host preflight templates read it as
      C(.Installer.Spec)).
  returned: always
  type: dict
  sample: {kubernetes: {version: 1.33.9, podCIDR: 10.32.0.0/16}, containerd: {version: 1.6.20}}
etcd_topology:
  description: The etcd add-on's C(topology) option, C(external) when the lock has no etcd add-on or no topology.
  returned: always
  type: str
  sample: external
containerd_config_version:
  description:
    - The C(version) of containerd's C(config.toml) for the lock's containerd (the containerd role's
      C(containerd_config_version)) - 3 from containerd 2.1 on; 2 for 1.x, for 2.0 (which migrates it at start) and
      when the lock has no containerd add-on.
  returned: always
  type: int
  sample: 3
cgroup_driver:
  description:
    - The spec's C(kubernetes.kubelet.cgroupDriver) (systemd or cgroupfs), else C(auto) - containerd's and the
      kubelet's, which must agree (the containerd role's C(containerd_cgroup_driver)).
  returned: always
  type: str
  sample: auto
containerd_restrict_oom_score_adj:
  description:
    - The spec's C(containerd.restrictOOMScoreAdj) (false when absent), the containerd role's
      C(containerd_restrict_oom_score_adj).
  returned: always
  type: bool
  sample: false
proxy:
  description:
    - The lock's HTTP proxy (null without one) - C(http), C(https), C(no_proxy) (loopback, the spec's C(noProxy), the pod
      and service networks, C(.svc) and the cluster domain, the API endpoint's host and every host's address) and
      C(env) (C(HTTP_PROXY), C(HTTPS_PROXY), C(NO_PROXY) and their lower-case twins) and C(files) - C(env_file)
      (C(/etc/mooring/proxy.env), C({path, content}), written 0600 by the roles) and C(dropin), the systemd drop-in that
      reads it.
  returned: always
  type: dict
  sample: {http: "http://proxy.example:3128", https: "http://proxy.example:3128", no_proxy: [localhost, 10.32.0.0/16]}
etcd_backup:
  description: The etcd add-on's C(backup) option - scheduled snapshots on the etcd hosts, C(schedule) and C(keep)
    (default 5) - or null when the lock asks for none.
  returned: always
  type: dict
  sample: {schedule: daily, keep: 5}
addons:
  description: The lock's C(addons) mapping (add-on name to version, options, artifacts, images, packages).
  returned: always
  type: dict
boundary:
  description:
    - What a Kubernetes node needs before kubeadm can run that the lock does not carry for O(arch) - C(artifacts)
      (of kubeadm, kubelet, crictl, cni-plugins) and control-plane C(images). Empty lists for a lock of the real catalog.
  returned: always
  type: dict
  sample: {artifacts: [kubeadm, kubelet, crictl], images: [kube-apiserver, kube-controller-manager, kube-scheduler]}
boundary_missing:
  description: RV(boundary)'s C(artifacts) followed by its C(images), as one list.
  returned: always
  type: list
  elements: str
  sample: [kubeadm, kubelet, crictl, kube-apiserver, kube-controller-manager, kube-scheduler]
kubeadm_ready:
  description: The lock carries everything kubeadm needs (RV(boundary_missing) is empty).
  returned: always
  type: bool
plans:
  description:
    - Host name to what the install does on that host, from the lock alone - each artifact installed with its version,
      file and destinations, the etcd member, the kernel settings, and C(kubeadm init), C(join --control-plane),
      C(join) or the kubeadm boundary. Empty without O(groups).
  returned: always
  type: dict
  sample:
    cp1:
      - install etcd 3.5.21 (etcd-v3.5.21-linux-amd64.tar.gz) -> /usr/local/bin/etcd, /usr/local/bin/etcdctl
      - etcd 3.5.21 member with mutual TLS (unit etcd.service, data /var/lib/etcd)
      - kubeadm init
"""
