#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubeadm_state
short_description: Read a host's real Kubernetes state (binaries, kubeadm files, the API's answer)
version_added: 0.1.0
description:
  - Read-only. Reports whether the kubeadm, kubelet and kubectl binaries are installed (and their
    versions, from C(kubeadm version -o json) and C(kubectl version --client -o json)), whether
    C(/etc/kubernetes/admin.conf) and C(/etc/kubernetes/kubelet.conf) exist, whether the local API
    server answers C(/readyz) over HTTPS verified with the cluster CA, and what an earlier pod network left.
  - Feed the results of every host to M(mooring.cluster.kubeadm_plan), which decides who runs
    C(kubeadm init), who joins, and who is already a member. No human-readable text is parsed.
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
  timeout:
    description: Seconds to wait for the API's answer.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: What is on this host
  mooring.cluster.kubeadm_state:
  register: kubeadm_host_state
"""

RETURN = r"""
state:
  description: The host's state.
  returned: always
  type: dict
  contains:
    binaries:
      description: kubeadm, kubelet and kubectl are all installed and executable.
      type: bool
    missing_binaries:
      description: The ones that are not.
      type: list
      elements: str
    kubeadm_version:
      description: C(clientVersion.gitVersion) of C(kubeadm version -o json), or null.
      type: str
    kubectl_version:
      description: C(clientVersion.gitVersion) of C(kubectl version --client -o json), or null.
      type: str
    admin_conf:
      description: C(/etc/kubernetes/admin.conf) exists.
      type: bool
    kubelet_conf:
      description: C(/etc/kubernetes/kubelet.conf) exists (kubeadm init or join started here).
      type: bool
    member:
      description: C(/etc/kubernetes/mooring/member) exists - this host's kubeadm init or join finished (the kubeadm
        role writes it after the command succeeded).
      type: bool
    api_ready:
      description: The local API server answered C(/readyz) with 200 (null when no CA file to verify it with).
      type: bool
    pod_network_traces:
      description: The links (C(cni0), C(flannel.N), C(kube-ipvs0), ...) and directories (C(/var/lib/cni),
        C(/run/flannel)) a pod network left here. On a host that is not a member they are an earlier cluster's, which
        C(kubeadm reset) leaves; M(mooring.cluster.kubeadm_plan) has them removed before the host's init or join.
      type: list
      elements: str
  sample: {"binaries": false, "missing_binaries": ["kubeadm", "kubelet", "kubectl"], "kubeadm_version": null,
           "kubectl_version": null, "admin_conf": false, "kubelet_conf": false, "member": false,
           "api_ready": null, "pod_network_traces": ["cni0", "flannel.1", "/var/lib/cni"]}
"""

import json  # noqa: E402
import os  # noqa: E402

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402

BINARIES = ("kubeadm", "kubelet", "kubectl")


def _version(module, argv):
    rc, out, _err = module.run_command(argv)
    if rc != 0:
        return None
    try:
        return json.loads(out)["clientVersion"]["gitVersion"]
    except (ValueError, KeyError, TypeError):
        return None


def gather(module, p):
    paths = {b: os.path.join(p["bin_dir"], b) for b in BINARIES}
    missing = [b for b, path in paths.items() if not os.access(path, os.X_OK)]
    state = {
        "binaries": not missing,
        "missing_binaries": missing,
        "kubeadm_version": None if "kubeadm" in missing else _version(module, [paths["kubeadm"], "version", "-o", "json"]),
        "kubectl_version": None if "kubectl" in missing else _version(
            module, [paths["kubectl"], "version", "--client", "-o", "json"]),
        "admin_conf": os.path.exists("/etc/kubernetes/admin.conf"),
        "kubelet_conf": os.path.exists("/etc/kubernetes/kubelet.conf"),
        "member": os.path.exists(kubeadm.MEMBER_FILE),
        "api_ready": kubeadm.api_readyz(p["api_host"], p["api_port"], p["ca_file"], p["timeout"]),
        "pod_network_traces": kubeadm.pod_network_traces(),
    }
    return state


class KubeadmState(MooringModule):
    """Reads this host's kubeadm state."""

    argument_spec = {
        "timeout": {"type": "int", "default": 5},
        **kubeadm.API_SERVER_OPTIONS,
    }

    def run(self):
        return dict(changed=False, state=gather(self.module, self.params))


def main():
    KubeadmState().execute()


if __name__ == "__main__":
    main()
