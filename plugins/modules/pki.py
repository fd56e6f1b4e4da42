# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: pki
short_description: Make the whole cluster PKI on the controller, idempotently
version_added: 0.1.0
description:
  - Generates, in one call on the Ansible controller, every key and certificate a kubeadm cluster
    with an external etcd needs, in kubeadm's file layout under O(path) - C(ca), C(etcd/ca),
    C(front-proxy-ca), C(sa.key)/C(sa.pub), C(apiserver), C(apiserver-kubelet-client),
    C(apiserver-etcd-client), C(front-proxy-client), C(etcd/healthcheck-client), per etcd member
    C(etcd/members/<name>/server) and C(etcd/members/<name>/peer), and the client certificates behind
    the kubeconfig files C(kubeconfig/admin), C(kubeconfig/super-admin), C(kubeconfig/controller-manager),
    C(kubeconfig/scheduler) and C(kubeconfig/kubelet-<node>).
  - A leaf certificate is kept unless it is missing, expires within O(renew_before_days), its subject, SANs,
    key usages or key type no longer match the request, or it was not issued by the current CA. The result
    says what was created or renewed and why.
  - What is on disk is judged before anything is written or chmod-ed. A CA (C(ca), C(etcd/ca),
    C(front-proxy-ca)) or the service-account key pair that is present but broken - unreadable, half there
    (certificate without key or the reverse), not a CA, its key not matching, CA files swapped, or expiring
    within O(renew_before_days) - fails the task, naming the file, unless named in O(new_ca). Missing CA
    files (both absent) are created, as on a first run.
  - A leaf certificate or key that is present but broken (unreadable, its key not matching, a CA certificate
    where a leaf belongs) fails the task, naming the file, unless named in O(force) or O(reissue_broken) is set.
  - Symbolic links and special files (FIFOs, sockets, devices) inside O(path) fail the task before anything
    is read there; O(path) itself may be a symbolic link to a directory.
  - Directories are created 0700, private keys 0600, certificates 0644; wrong modes are fixed and reported.
  - Only the Python C(cryptography) library is used, no C(openssl) commands. Nothing secret is returned;
    push the files to hosts with M(ansible.builtin.copy) and C(no_log=true), never through cloud user_data.
  - Subjects follow kubeadm 1.29 and later (C(admin) in O=kubeadm:cluster-admins, C(super-admin) in
    O=system:masters, kubelets CN=system:node:<name> O=system:nodes).
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: the diff lists, per created or renewed certificate, its subject and SANs before and after.
requirements:
  - cryptography >= 41 (on the controller)
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  path:
    description: PKI directory on the controller; created 0700 when missing.
    type: path
    required: true
  lock:
    description:
      - Installer lock file (C(installer.lock.yaml)). O(control_plane_endpoint), O(cluster_domain) and
        O(service_cidr) not given are taken from its C(kubernetes) options, so every playbook that passes the
        same lock makes the same API server certificate.
    type: path
  kubernetes_options:
    description:
      - The lock's Kubernetes options as M(mooring.cluster.lock_values) returns them (RV(mooring.cluster.lock_values#module:kubernetes_options)),
        instead of O(lock), so that a run reads the lock file once. The same values as O(lock) gives.
    type: dict
  control_plane_endpoint:
    description:
      - The API endpoint (C(host), C(host:port) or C([v6]:port)); its host goes into the API server SANs.
      - Default - the lock's C(controlPlaneEndpoint), else none.
    type: str
  cluster_domain:
    description:
      - Cluster DNS domain; C(kubernetes.default.svc.<cluster_domain>) is an API server SAN.
      - Default - the lock's C(clusterDomain), else C(cluster.local).
    type: str
  service_cidr:
    description:
      - Service network; its first address (the C(kubernetes) service IP) is an API server SAN.
      - Default - the lock's C(serviceCIDR), else C(10.96.0.0/16) (the installer spec's default).
    type: str
  control_plane:
    description: Control-plane hosts; each name and address is an API server SAN.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Node name (DNS-1123).
        type: str
        required: true
      addresses:
        description: IP addresses of the host.
        type: list
        elements: str
        default: []
      names:
        description: Further DNS names of the host.
        type: list
        elements: str
        default: []
  etcd:
    description:
      - etcd members; each gets a server and a peer certificate, CN=<name>, SANs its name, names, addresses,
        C(localhost), C(127.0.0.1) and C(::1).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Member name (DNS-1123), also the etcd C(--name).
        type: str
        required: true
      addresses:
        description: IP addresses of the member.
        type: list
        elements: str
        default: []
      names:
        description: Further DNS names of the member.
        type: list
        elements: str
        default: []
  kubelets:
    description: Node names that get a kubelet client certificate.
    type: list
    elements: str
    default: []
  key_type:
    description: Key algorithm for new keys (ECDSA P-256 or RSA 2048). Changing it renews the leaf certificates.
    type: str
    default: ecdsa
    choices: [ecdsa, rsa]
  ca_validity_days:
    description: Lifetime of new CA certificates, in days.
    type: int
    default: 3650
  validity_days:
    description: Lifetime of new leaf certificates, in days.
    type: int
    default: 365
  renew_before_days:
    description: Renew a certificate that expires within this many days.
    type: int
    default: 30
  force:
    description:
      - Names of leaf certificates (as in RV(files)) to renew regardless, broken or not; C(all) renews every leaf.
      - A CA or C(sa) here fails the task; a new CA or key pair is asked for with O(new_ca).
    type: list
    elements: str
    default: []
  new_ca:
    description:
      - CAs to make anew - C(ca), C(etcd/ca), C(front-proxy-ca), or C(sa) for the service-account key pair -
        whatever their state, re-issuing every certificate each one signed.
      - On a running cluster this is the first step of a CA rotation, not a repair - every kubeconfig and
        kubelet must get the new CA and every node be restarted (docs/pki.md, "A new CA"); a new C(sa)
        invalidates every service-account token signed with the old key.
    type: list
    elements: str
    default: []
    version_added: 0.1.0
  reissue_broken:
    description:
      - Re-issue every broken leaf certificate (unreadable, its key not matching, a CA where a leaf belongs)
        instead of failing; each is reported in RV(renewed), its reason starting with C(broken).
      - A broken CA or service-account key pair still fails; see O(new_ca).
    type: bool
    default: false
    version_added: 0.1.0
  from_inventory:
    description:
      - Fill O(control_plane), O(etcd) and O(kubelets), where not given, from the inventory - the hosts of the
        groups C(control_plane), C(etcd) and C(workers) (kubelets - control plane and workers); a host's
        address is its C(mooring_address), else its C(ansible_host). Every playbook of the collection
        makes the PKI this way, so they all agree on the SANs.
    type: bool
    default: false
seealso:
  - module: community.crypto.x509_certificate
"""

EXAMPLES = r"""
- name: Make the cluster PKI on the controller
  mooring.cluster.pki:
    path: "{{ inventory_dir }}/pki"
    control_plane_endpoint: 10.0.0.10:6443
    control_plane:
      - {name: cp1, addresses: [10.0.0.11]}
    etcd:
      - {name: e1, addresses: [10.0.0.21]}
      - {name: e2, addresses: [10.0.0.22]}
      - {name: e3, addresses: [10.0.0.23]}
    kubelets: [cp1, w1]
  run_once: true

- name: Make it for the hosts of the inventory (groups control_plane, etcd, workers)
  mooring.cluster.pki:
    path: "{{ inventory_dir }}/pki"
    from_inventory: true
  run_once: true
  register: pki

- name: Renew what expires within 60 days, and re-issue leaf certificates whose files are broken
  mooring.cluster.pki:
    path: "{{ inventory_dir }}/pki"
    etcd:
      - {name: e1, addresses: [10.0.0.21]}
    renew_before_days: 60
    reissue_broken: true
  run_once: true

- name: First step of rotating the etcd CA (docs/pki.md) - a new CA and every certificate under it
  mooring.cluster.pki:
    path: "{{ inventory_dir }}/pki"
    from_inventory: true
    new_ca: [etcd/ca]
  run_once: true
"""

RETURN = r"""
created:
  description: Certificates (and C(sa)) that did not exist and were created.
  returned: always
  type: list
  elements: str
  sample: [ca, etcd/ca, apiserver]
renewed:
  description: Certificates that were re-issued, with the reason.
  returned: always
  type: list
  elements: dict
  sample: [{name: apiserver, reason: SANs changed}, {name: kubeconfig/admin, reason: "expiring 2026-01-02T03:04:05Z"},
           {name: kubeconfig/scheduler, reason: "broken: kubeconfig/scheduler.key is not a PEM private key"}]
kept:
  description: Certificates left as they were.
  returned: always
  type: list
  elements: str
modes_fixed:
  description: Files and directories whose mode was wrong and was set back (0700/0600/0644).
  returned: always
  type: list
  elements: str
stale:
  description: Files of etcd members or kubelets no longer in the request (never deleted).
  returned: always
  type: list
  elements: str
  sample: [etcd/members/e4]
files:
  description: Absolute paths, per certificate name, of its C(cert) and C(key) (C(key) and C(pub) for C(sa)).
  returned: always
  type: dict
  sample: {apiserver: {cert: /srv/pki/apiserver.crt, key: /srv/pki/apiserver.key}}
path:
  description: The PKI directory, absolute.
  returned: always
  type: str
etcd:
  description: The etcd members as certified (C(name), C(addresses), C(names)); feed it to the etcd role.
  returned: always
  type: list
  elements: dict
control_plane:
  description: The control-plane hosts as certified.
  returned: always
  type: list
  elements: dict
kubelets:
  description: The nodes that got a kubelet client certificate.
  returned: always
  type: list
  elements: str
"""
