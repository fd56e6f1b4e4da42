# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: kubeadm_config
short_description: Render a host's kubeadm configuration from data, in the API version its Kubernetes expects
version_added: 0.1.0
description:
  - Runs on the controller and only renders; write the result with M(ansible.builtin.copy).
  - C(kubeadm.k8s.io/v1beta4) from Kubernetes 1.31, C(v1beta3) before (extra arguments as C({name, value}) lists
    in v1beta4, maps in v1beta3; timeouts under C(timeouts) in v1beta4).
  - Control-plane hosts get InitConfiguration, ClusterConfiguration, KubeletConfiguration and
    KubeProxyConfiguration (O(role=control_plane)); every host gets a JoinConfiguration whose discovery is a
    kubeconfig file (CA pinned, written only while joining), so the rendered files hold no secret.
  - Image repository and tags are taken from the lock's images (the ones the bundle loaded), so no registry
    is needed; a mismatch fails naming the image.
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
  cluster:
    description:
      - Cluster-wide settings - C(kubernetes_version), C(cluster_name), C(control_plane_endpoint), C(pod_cidr),
        C(service_cidr), C(cluster_domain), C(certificates_dir), C(images) (the lock's image refs),
        C(etcd_topology) (C(external) or C(stacked)), C(etcd_endpoints), C(etcd_ca_file), C(etcd_cert_file),
        C(etcd_key_file), C(api_server_extra_args), C(controller_manager_extra_args), C(scheduler_extra_args),
        C(api_server_cert_sans), C(kubelet) (the spec's C(kubelet) fields), C(kube_proxy) (the spec's C(kubeProxy)
        fields; its C(mode) wins over C(kube_proxy_mode)), C(kube_proxy_mode), C(skip_kube_proxy),
        C(control_plane_timeout), C(discovery_timeout).
      - The kubelet's C(failCgroupV1=false) also adds C(SystemVerification) to every host's
        C(ignorePreflightErrors) (kubeadm's check fails on cgroup v1).
    type: dict
    required: true
  node:
    description: This host - C(name), C(advertise_address), C(bind_port), C(cri_socket), C(kubelet_extra_args),
      C(taints), C(ignore_preflight_errors).
    type: dict
    required: true
  role:
    description: C(control_plane) or C(worker).
    type: str
    required: true
    choices: [control_plane, worker]
  pki_dir:
    description:
      - The controller directory holding the cluster's certificates and keys (mooring.cluster.pki's). Required
        for O(role=control_plane), where those files are copied from it; not read here.
    type: str
    default: ''
"""

EXAMPLES = r"""
- name: Render
  mooring.cluster.kubeadm_config:
    cluster:
      kubernetes_version: 1.34.3
      control_plane_endpoint: 10.0.0.10:6443
      etcd_endpoints: [https://10.0.0.21:2379]
      images: [registry.k8s.io/kube-apiserver:v1.34.3]
    node: {name: cp1, advertise_address: 10.0.0.11}
    role: control_plane
  register: rendered

- name: Write it
  ansible.builtin.copy:
    content: "{{ rendered.init_config }}"
    dest: /etc/kubernetes/mooring/kubeadm-init.yaml
    mode: "0600"
"""

RETURN = r"""
api_version:
  description: The kubeadm API version used.
  returned: always
  type: str
  sample: kubeadm.k8s.io/v1beta4
init_config:
  description: The C(kubeadm init) configuration (YAML stream), null for workers.
  returned: always
  type: str
join_config:
  description: The C(kubeadm join) configuration (YAML stream).
  returned: always
  type: str
"""
