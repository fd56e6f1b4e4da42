# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: kubeadm's versions, tokens, kubeconfigs, command lines and host probes.

Standard library only (host modules import it): :func:`parse_version` / :func:`api_version` (which
``kubeadm.k8s.io`` API a Kubernetes minor reads), bootstrap tokens and the discovery/admin
kubeconfigs, the ``*_argv`` helpers that build the exact command lines (argv lists) the roles run
(the unit tests pin them: kubeadm/kubelet/kubectl cannot run in the test lab), and what a host
reports (``/readyz``, node conditions, static pods).

The stage's other modules: :mod:`.kubeadmconfig` (the kubeadm configuration documents of one host)
and :mod:`.kubeadmplan` (init/join/upgrade decisions from the real state of every host).
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import string

from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard, semver
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt


class KubeadmError(MooringError):
    """A kubeadm request is invalid, or the cluster's real state forbids the asked change."""


KUBEADM_GROUP = "kubeadm.k8s.io"
KUBELET_API = "kubelet.config.k8s.io/v1beta1"
KUBEPROXY_API = "kubeproxy.config.k8s.io/v1alpha1"
CONFIG_DIR = "/etc/kubernetes/mooring"
# Written by the kubeadm role once this host's kubeadm init or join has finished: kubeadm writes kubelet.conf
# early (before it waits for the control plane), so kubelet.conf alone does not say a host is a member.
MEMBER_FILE = CONFIG_DIR + "/member"
ADMIN_CONF = "/etc/kubernetes/admin.conf"
KUBELET_CONF = "/etc/kubernetes/kubelet.conf"
DISCOVERY_FILE = CONFIG_DIR + "/discovery.conf"
DEFAULT_CRI_SOCKET = "unix:///run/containerd/containerd.sock"
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
MIN_MINOR = (1, 27)  # kubeadm 1.27+ reads v1beta3; v1beta4 from 1.31
V1BETA4_FROM = (1, 31)
# The argument spec of "this host's API server" (k8s_health, kubeadm_state; the api_server doc fragment).
API_SERVER_OPTIONS = {
    "api_host": {"type": "str", "default": "127.0.0.1"},
    "api_port": {"type": "int", "default": 6443},
    "ca_file": {"type": "path", "default": "/etc/kubernetes/pki/ca.crt"},
    "bin_dir": {"type": "path", "default": "/usr/local/bin"},
}
_TOKEN = re.compile(r"^[a-z0-9]{6}\.[a-z0-9]{16}$")
# What a pod network leaves on a host after kubeadm reset (which says it leaves them to the user): its links and its
# state directories. The shell of roles/kubeadm/tasks/pod_network.yml removes the same (pinned by the unit tests).
POD_NETWORK_LINKS = re.compile(r"^(cni0|flannel[.][0-9]+|flannel-v6[.][0-9]+|kube-ipvs0|nodelocaldns)$")
POD_NETWORK_DIRS = ("/var/lib/cni", "/run/flannel")


def parse_version(text, field="kubernetes.version"):
    """``'1.31.4'`` or ``'v1.31.4'`` (a prerelease or build after it) -> ``(1, 31, 4)``."""
    try:
        return semver.parse(str(text or "").strip())[:3]
    except ValueError:
        raise KubeadmError("%s: %s is not a Kubernetes version like 1.31.4" % (field, excerpt(text))) from None


def api_version(kubernetes_version):
    """The kubeadm configuration API the given Kubernetes version expects."""
    v = parse_version(kubernetes_version)
    if v[:2] < MIN_MINOR:
        raise KubeadmError("kubernetes.version: %s is older than 1.27, which mooring.cluster does not support"
                           % kubernetes_version)
    return "%s/%s" % (KUBEADM_GROUP, "v1beta4" if v[:2] >= V1BETA4_FROM else "v1beta3")


# ----------------------------------------------------------------------------- tokens, discovery

def new_token():
    """A fresh bootstrap token ``[a-z0-9]{6}.[a-z0-9]{16}`` (kubeadm's format)."""
    alphabet = string.ascii_lowercase + string.digits
    return "%s.%s" % ("".join(secrets.choice(alphabet) for _i in range(6)),
                      "".join(secrets.choice(alphabet) for _i in range(16)))


def check_token(token):
    if not _TOKEN.match(str(token or "")):
        raise KubeadmError("token: not a bootstrap token of the form [a-z0-9]{6}.[a-z0-9]{16}")
    return token


def discovery_kubeconfig(server, ca_pem, token, cluster_name="kubernetes"):
    """The discovery kubeconfig a joining host uses: the cluster CA (pinned, from our PKI), the
    API endpoint and this run's bootstrap token. A secret (holds the token): write it 0600."""
    check_token(token)
    if not str(ca_pem).startswith("-----BEGIN CERTIFICATE-----"):
        raise KubeadmError("ca: the cluster CA certificate (PEM) is needed to pin discovery")
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {
            "server": "https://%s" % server if not str(server).startswith("https://") else server,
            "certificate-authority-data": base64.b64encode(str(ca_pem).encode()).decode()}}],
        "users": [{"name": "tls-bootstrap-token-user", "user": {"token": token}}],
        "contexts": [{"name": "tls-bootstrap", "context": {"cluster": cluster_name, "user": "tls-bootstrap-token-user"}}],
        "current-context": "tls-bootstrap",
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def client_kubeconfig(server, ca_pem, cert_pem, key_pem, user="kubernetes-admin", cluster_name="kubernetes"):
    """A kubeconfig in kubeadm's shape from the PKI: the cluster CA and one client certificate (``user`` names
    it: kubernetes-admin, system:kube-controller-manager, ...). The same inputs give the same bytes.
    A secret: write it 0600."""
    b64 = base64.b64encode
    context = "%s@%s" % (user, cluster_name)
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {
            "server": "https://%s" % server if not str(server).startswith("https://") else server,
            "certificate-authority-data": b64(str(ca_pem).encode()).decode()}}],
        "users": [{"name": user, "user": {
            "client-certificate-data": b64(str(cert_pem).encode()).decode(),
            "client-key-data": b64(str(key_pem).encode()).decode()}}],
        "contexts": [{"name": context, "context": {"cluster": cluster_name, "user": user}}],
        "current-context": context,
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def api_readyz(host="127.0.0.1", port=6443, ca_file="/etc/kubernetes/pki/ca.crt", timeout=5):
    """Does the API server at ``host`` answer ``/readyz`` with 200? TLS verified against the
    cluster CA, host name included (use an address in the API server certificate, e.g. the
    advertise address). None when there is no CA file."""
    from ansible.module_utils.urls import open_url  # host side only

    if not os.path.exists(ca_file):
        return None
    addr = "[%s]" % host if ":" in str(host) else str(host)
    try:
        netguard.check(host)
        resp = open_url("https://%s:%d/readyz" % (addr, int(port)), ca_path=ca_file, validate_certs=True,
                        timeout=timeout)
        return resp.getcode() == 200
    except netguard.RouteRefused as exc:  # the lab's route guard: say so, never "not ready"
        raise MooringError(str(exc)) from None
    except Exception:  # any failure to answer is "not ready"
        return False


def pod_network_traces(net_dir="/sys/class/net", dirs=POD_NETWORK_DIRS):
    """The links (:data:`POD_NETWORK_LINKS`) and state directories an earlier pod network left on this host, sorted:
    on a host that is about to run kubeadm init or join they belong to a cluster it is no longer part of (a bridge
    that keeps its old subnet makes the host's new pods unreachable from other nodes)."""
    try:
        links = [n for n in os.listdir(net_dir) if POD_NETWORK_LINKS.match(n)]
    except OSError:
        links = []
    return sorted(links) + [d for d in dirs if os.path.isdir(d)]


# ----------------------------------------------------------------------------- command lines

def init_argv(config_path, kubeadm="kubeadm"):
    # Images are loaded from the bundle: never pull. Certificates already in place are used.
    return [kubeadm, "init", "--config", config_path, "--skip-token-print"]


def join_argv(config_path, kubeadm="kubeadm"):
    return [kubeadm, "join", "--config", config_path]


def token_create_argv(token, ttl="1h", kubeadm="kubeadm", kubeconfig=ADMIN_CONF):
    check_token(token)
    return [kubeadm, "token", "create", token, "--ttl", ttl, "--kubeconfig", kubeconfig,
            "--description", "mooring.cluster join run", "--usages", "signing,authentication",
            "--groups", "system:bootstrappers:kubeadm:default-node-token"]


def _ignored(names):
    return ["--ignore-preflight-errors=" + ",".join(names)] if names else []


def upgrade_apply_argv(version, kubeadm="kubeadm", ignore_preflight_errors=()):
    """``ignore_preflight_errors``: the preflight checks the cluster's own configuration ignores (SystemVerification
    where the kubelet may run on cgroup v1: kubeadm's upgrade reads no ignorePreflightErrors of init or join)."""
    return [kubeadm, "upgrade", "apply", "v%d.%d.%d" % parse_version(version), "--yes",
            "--certificate-renewal=false"] + _ignored(ignore_preflight_errors)


def upgrade_node_argv(kubeadm="kubeadm", ignore_preflight_errors=()):
    return [kubeadm, "upgrade", "node", "--certificate-renewal=false"] + _ignored(ignore_preflight_errors)


def drain_argv(node, timeout=300, kubectl="kubectl", kubeconfig=ADMIN_CONF):
    return [kubectl, "--kubeconfig", kubeconfig, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data",
            "--force", "--timeout=%ds" % int(timeout)]


def uncordon_argv(node, kubectl="kubectl", kubeconfig=ADMIN_CONF):
    return [kubectl, "--kubeconfig", kubeconfig, "uncordon", node]


def delete_node_argv(node, kubectl="kubectl", kubeconfig=ADMIN_CONF):
    return [kubectl, "--kubeconfig", kubeconfig, "delete", "node", node, "--ignore-not-found", "--wait=true"]


# kubeadm reset, on a host with an external etcd member, would break that member twice: it empties the certificates
# directory it is given, etcd/ included (the member reads its certificates at every TLS handshake, so it stops taking new
# connections), and its remove-etcd-member phase, finding no etcd manifest, takes kubeadm's default data directory
# (/var/lib/etcd) and empties it under the running member. Unless the host runs a stacked member (which both are for),
# kubeadm reset gets a certificates directory that does not exist and skips that phase; the kubeadm role removes
# kubeadm's own certificates itself.
RESET_NO_CERT_DIR = "/etc/kubernetes/tmp/mooring-reset-keeps-pki"
RESET_KEEPS_ETCD = ["--cert-dir", RESET_NO_CERT_DIR, "--skip-phases", "remove-etcd-member"]


def reset_argv(kubeadm="kubeadm", stacked_etcd_cert_dir=None):
    """``stacked_etcd_cert_dir``: the host runs a stacked etcd member; kubeadm removes it and empties this directory."""
    argv = [kubeadm, "reset", "--force", "--cleanup-tmp-dir"]
    return argv + (["--cert-dir", stacked_etcd_cert_dir] if stacked_etcd_cert_dir else RESET_KEEPS_ETCD)


def nodes_json_argv(kubectl="kubectl", kubeconfig=ADMIN_CONF):
    return [kubectl, "--kubeconfig", kubeconfig, "get", "nodes", "-o", "json"]


# ----------------------------------------------------------------------------- what a host reports


def node_conditions(nodes_json, name=None):
    """From ``kubectl get nodes -o json``: ``{node: {"ready": bool, "version": str,
    "unschedulable": bool}}`` (only ``name`` when given)."""
    try:
        data = json.loads(nodes_json) if isinstance(nodes_json, str) else nodes_json
        items = data["items"]
    except (ValueError, KeyError, TypeError) as exc:
        raise KubeadmError("nodes: not the JSON of 'kubectl get nodes -o json' (%s)" % exc) from None
    out = {}
    for item in items:
        node = item.get("metadata", {}).get("name", "")
        if name and node != name:
            continue
        conds = {c.get("type"): c.get("status") for c in item.get("status", {}).get("conditions", [])}
        out[node] = {"ready": conds.get("Ready") == "True",
                     "version": item.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", ""),
                     "unschedulable": bool(item.get("spec", {}).get("unschedulable", False))}
    return out


STATIC_PODS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


def static_pods_argv(node, kubectl="kubectl", kubeconfig=ADMIN_CONF):
    """This node's control-plane static pods as the API server sees them (their mirror pods)."""
    return [kubectl, "--kubeconfig", kubeconfig, "get", "pods", "--namespace", "kube-system", "--selector",
            "tier=control-plane", "--field-selector", "spec.nodeName=" + node, "--output", "json"]


def static_pods_running(pods_json, stacked_etcd=False, version=None):
    """From :func:`static_pods_argv`'s JSON: which control-plane static pods are missing (not Ready, or with
    ``version`` not running the image tagged ``v<version>``).

    The mirror pods are what the kubelet reported to the API server: a pod there is Ready only when its
    containers run and pass their probes (kubeadm 1.35 needs no crictl, so neither does this gate)."""
    try:
        data = json.loads(pods_json) if isinstance(pods_json, str) else pods_json
        items = data.get("items") or []
    except (ValueError, AttributeError) as exc:
        raise KubeadmError("pods: not the JSON of 'kubectl get pods -o json' (%s)" % exc) from None
    wanted = list(STATIC_PODS) + (["etcd"] if stacked_etcd else [])
    ready = set()
    for pod in items:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        conditions = {c.get("type"): c.get("status") for c in (pod.get("status") or {}).get("conditions") or []}
        images = [c.get("image") or "" for c in (pod.get("spec") or {}).get("containers") or []]
        current = version is None or labels.get("component") == "etcd" or (
            images and all(i.endswith(":v%d.%d.%d" % parse_version(version)) for i in images))
        if labels.get("tier") == "control-plane" and conditions.get("Ready") == "True" and current:
            ready.add(labels.get("component"))
    return [c for c in wanted if c not in ready]
