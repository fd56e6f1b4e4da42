# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: kubeadm configuration, command lines and lifecycle decisions.

Everything here is plain data in, plain data out, decided on the controller:

* :func:`render_node_config` builds the kubeadm configuration documents of one host
  (InitConfiguration + ClusterConfiguration + KubeletConfiguration + KubeProxyConfiguration on
  the control plane; JoinConfiguration on every host that joins) in the ``kubeadm.k8s.io`` API
  version the Kubernetes minor expects: ``v1beta4`` from 1.31, ``v1beta3`` before. The
  differences handled: v1beta4 extra arguments are lists of ``{name, value}`` (maps in
  v1beta3), and the discovery/control-plane timeouts live in ``timeouts`` (v1beta4) instead of
  ``discovery.timeout`` / ``apiServer.timeoutForControlPlane`` (v1beta3).
* :func:`plan_cluster` decides, from the real state gathered on every host (files and the API's
  ``/readyz`` answer, never human text), which host runs ``kubeadm init``, which join, which
  are already members, and refuses when the state is contradictory.
* The ``*_argv`` helpers build the exact command lines (argv lists) the roles run; the unit
  tests pin them (contract tests: kubeadm/kubelet/kubectl cannot run in the test lab).
* :func:`upgrade_step` / :func:`upgrade_batches` decide the one-minor-at-a-time upgrade and its
  host order.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import string

from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.common.images import split_tag


class KubeadmError(MooringError):
    """A kubeadm request is invalid, or the cluster's real state forbids the asked change."""


KUBEADM_GROUP = "kubeadm.k8s.io"
KUBELET_API = "kubelet.config.k8s.io/v1beta1"
KUBEPROXY_API = "kubeproxy.config.k8s.io/v1alpha1"
CONFIG_DIR = "/etc/kubernetes/mooring"
ADMIN_CONF = "/etc/kubernetes/admin.conf"
KUBELET_CONF = "/etc/kubernetes/kubelet.conf"
DISCOVERY_FILE = CONFIG_DIR + "/discovery.conf"
DEFAULT_CRI_SOCKET = "unix:///run/containerd/containerd.sock"
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
MIN_MINOR = (1, 27)  # kubeadm 1.27+ reads v1beta3; v1beta4 from 1.31
V1BETA4_FROM = (1, 31)
_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$")
_TOKEN = re.compile(r"^[a-z0-9]{6}\.[a-z0-9]{16}$")


def parse_version(text, field="kubernetes.version"):
    """``'1.31.4'`` or ``'v1.31.4'`` -> ``(1, 31, 4)``."""
    m = _VERSION.match(str(text or "").strip())
    if not m:
        raise KubeadmError("%s: %r is not a Kubernetes version like 1.31.4" % (field, text))
    return tuple(int(x) for x in m.groups())


def api_version(kubernetes_version):
    """The kubeadm configuration API the given Kubernetes version expects."""
    v = parse_version(kubernetes_version)
    if v[:2] < MIN_MINOR:
        raise KubeadmError("kubernetes.version: %s is older than 1.27, which mooring.cluster does not support"
                           % kubernetes_version)
    return "%s/%s" % (KUBEADM_GROUP, "v1beta4" if v[:2] >= V1BETA4_FROM else "v1beta3")


def extra_args(args, api):
    """Component extra arguments in the shape of ``api``: a map (v1beta3) or a list of
    ``{name, value}`` sorted by name (v1beta4)."""
    args = {str(k): str(v) for k, v in (args or {}).items()}
    if api.endswith("v1beta3"):
        return dict(sorted(args.items()))
    return [{"name": k, "value": args[k]} for k in sorted(args)]


def images_from_lock(kubernetes_version, image_refs):
    """kubeadm's image settings matching the images the bundle loaded (no registry needed).

    Returns ``{image_repository, dns_repository, dns_tag, etcd_tag, problems}``: the control-plane
    images must all come from one repository with the tag ``v<kubernetes_version>``; CoreDNS and
    (for stacked etcd) the etcd image are found by name."""
    want = "v%d.%d.%d" % parse_version(kubernetes_version)
    repos = set()
    out = {"image_repository": "registry.k8s.io", "dns_repository": None, "dns_tag": None,
           "etcd_tag": None, "problems": []}
    for ref in image_refs or []:
        repo, tag = split_tag(str(ref))
        base, _sep, name = repo.rpartition("/")
        if name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"):
            repos.add(base)
            if tag != want:
                out["problems"].append("image %s: tag %s does not match Kubernetes %s" % (ref, tag, want))
        elif name == "coredns":
            out["dns_repository"], out["dns_tag"] = base, tag
        elif name == "etcd":
            out["etcd_tag"] = tag
    if len(repos) > 1:
        out["problems"].append("control-plane images come from several repositories: %s" % ", ".join(sorted(repos)))
    if repos:
        out["image_repository"] = sorted(repos)[0]
    return out


NODE_DEFAULTS = {
    "name": "",
    "advertise_address": "",
    "bind_port": 6443,
    "cri_socket": DEFAULT_CRI_SOCKET,
    "kubelet_extra_args": {},
    "taints": None,
    "ignore_preflight_errors": [],
}

CLUSTER_DEFAULTS = {
    "kubernetes_version": "",
    "cluster_name": "kubernetes",
    "control_plane_endpoint": "",
    "pod_cidr": "10.32.0.0/16",
    "service_cidr": "10.96.0.0/16",
    "cluster_domain": "cluster.local",
    "certificates_dir": "/etc/kubernetes/pki",
    "images": [],
    "etcd_topology": "external",
    "etcd_endpoints": [],
    "etcd_ca_file": "/etc/kubernetes/pki/etcd/ca.crt",
    "etcd_cert_file": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
    "etcd_key_file": "/etc/kubernetes/pki/apiserver-etcd-client.key",
    "api_server_extra_args": {},
    "controller_manager_extra_args": {},
    "scheduler_extra_args": {},
    "api_server_cert_sans": [],
    "kubelet": {},
    "kube_proxy_mode": "iptables",
    "skip_kube_proxy": False,
    "control_plane_timeout": "4m0s",
    "discovery_timeout": "5m0s",
}


def normalize(cluster, node=None):
    """Fill defaults and check the fields; raise :class:`KubeadmError` listing every problem."""
    c = dict(CLUSTER_DEFAULTS)
    c.update({k: v for k, v in (cluster or {}).items() if v is not None})
    n = dict(NODE_DEFAULTS)
    n.update({k: v for k, v in (node or {}).items() if v is not None})
    problems = []
    try:
        c["api_version"] = api_version(c["kubernetes_version"])
        c["kubernetes_version"] = "%d.%d.%d" % parse_version(c["kubernetes_version"])
    except KubeadmError as exc:
        problems.append(str(exc))
    if c["etcd_topology"] not in ("external", "stacked"):
        problems.append("etcd.topology: %r is not 'external' or 'stacked'" % c["etcd_topology"])
    if c["etcd_topology"] == "external" and not c["etcd_endpoints"]:
        problems.append("etcd endpoints: external etcd needs at least one endpoint (https://HOST:2379); "
                        "is the inventory group 'etcd' empty?")
    for ep in c["etcd_endpoints"]:
        if not str(ep).startswith("https://"):
            problems.append("etcd endpoints: %r must start with https:// (etcd runs with mutual TLS)" % ep)
    if not c["control_plane_endpoint"]:
        problems.append("kubernetes.controlPlaneEndpoint: empty; set it (HOST:PORT) or let the playbook derive it "
                        "from the first control-plane host")
    if c["kube_proxy_mode"] not in ("iptables", "ipvs", "nftables"):
        problems.append("kube-proxy mode: %r is not iptables, ipvs or nftables" % c["kube_proxy_mode"])
    cgroup = (c["kubelet"] or {}).get("cgroupDriver", "systemd")
    if cgroup not in ("systemd", "cgroupfs"):
        problems.append("kubernetes.kubelet.cgroupDriver: %r is not systemd or cgroupfs" % cgroup)
    if node is not None and not n["name"]:
        problems.append("node name: empty (the inventory host name is used by default)")
    if problems:
        raise KubeadmError("the kubeadm configuration cannot be rendered", problems)
    return c, n


def _node_registration(c, n, control_plane):
    reg = {"name": n["name"], "criSocket": n["cri_socket"]}
    if n["taints"] is not None:
        reg["taints"] = list(n["taints"])
    elif control_plane:
        reg["taints"] = [dict(CONTROL_PLANE_TAINT)]
    else:
        reg["taints"] = []
    kubelet_args = dict(n["kubelet_extra_args"] or {})
    kubelet_args.update((c["kubelet"] or {}).get("extraArgs") or {})
    if n["advertise_address"]:
        kubelet_args.setdefault("node-ip", n["advertise_address"])
    if kubelet_args:
        reg["kubeletExtraArgs"] = extra_args(kubelet_args, c["api_version"])
    if n["ignore_preflight_errors"]:
        reg["ignorePreflightErrors"] = sorted(n["ignore_preflight_errors"])
    return reg


def cluster_configuration(c):
    """The ClusterConfiguration document (shared by every control-plane host)."""
    api = c["api_version"]
    img = images_from_lock(c["kubernetes_version"], c["images"])
    doc = {
        "apiVersion": api,
        "kind": "ClusterConfiguration",
        "clusterName": c["cluster_name"],
        "kubernetesVersion": "v" + c["kubernetes_version"],
        "controlPlaneEndpoint": c["control_plane_endpoint"],
        "certificatesDir": c["certificates_dir"],
        "imageRepository": img["image_repository"],
        "networking": {"podSubnet": c["pod_cidr"], "serviceSubnet": c["service_cidr"],
                       "dnsDomain": c["cluster_domain"]},
        "apiServer": {},
        "controllerManager": {},
        "scheduler": {},
    }
    if img["dns_repository"]:
        # kubeadm's CoreDNS image is <dns.imageRepository>/coredns:<dns.imageTag>.
        doc["dns"] = {"imageRepository": img["dns_repository"], "imageTag": img["dns_tag"]}
    if c["etcd_topology"] == "external":
        doc["etcd"] = {"external": {"endpoints": list(c["etcd_endpoints"]), "caFile": c["etcd_ca_file"],
                                    "certFile": c["etcd_cert_file"], "keyFile": c["etcd_key_file"]}}
    else:
        local = {"dataDir": "/var/lib/etcd"}
        if img["etcd_tag"]:
            local["imageTag"] = img["etcd_tag"]
        doc["etcd"] = {"local": local}
    for key, field in (("apiServer", "api_server_extra_args"), ("controllerManager", "controller_manager_extra_args"),
                       ("scheduler", "scheduler_extra_args")):
        if c[field]:
            doc[key]["extraArgs"] = extra_args(c[field], api)
    if c["api_server_cert_sans"]:
        doc["apiServer"]["certSANs"] = sorted(set(c["api_server_cert_sans"]))
    if api.endswith("v1beta3"):
        doc["apiServer"]["timeoutForControlPlane"] = c["control_plane_timeout"]
    if c["skip_kube_proxy"] and api.endswith("v1beta4"):
        doc["proxy"] = {"disabled": True}
    return doc


def kubelet_configuration(c):
    k = c["kubelet"] or {}
    doc = {
        "apiVersion": KUBELET_API,
        "kind": "KubeletConfiguration",
        "cgroupDriver": k.get("cgroupDriver", "systemd"),
        "clusterDomain": c["cluster_domain"],
        "failSwapOn": bool(k.get("failSwapOn", True)),
        "rotateCertificates": True,
        "serverTLSBootstrap": False,
    }
    if k.get("maxPods"):
        doc["maxPods"] = int(k["maxPods"])
    return doc


def kube_proxy_configuration(c):
    return {"apiVersion": KUBEPROXY_API, "kind": "KubeProxyConfiguration", "mode": c["kube_proxy_mode"],
            "clusterCIDR": c["pod_cidr"]}


def init_configuration(c, n):
    doc = {
        "apiVersion": c["api_version"],
        "kind": "InitConfiguration",
        # No bootstrap token at init: joins use a token created for their run (kubeadm_token).
        "bootstrapTokens": [],
        "nodeRegistration": _node_registration(c, n, True),
        "localAPIEndpoint": {"bindPort": int(n["bind_port"])},
        # Certificates come from our PKI and are kept as given: only a missing file is generated.
    }
    if n["advertise_address"]:
        doc["localAPIEndpoint"]["advertiseAddress"] = n["advertise_address"]
    if c["api_version"].endswith("v1beta4"):
        doc["timeouts"] = {"controlPlaneComponentHealthCheck": c["control_plane_timeout"]}
    if c["skip_kube_proxy"] and c["api_version"].endswith("v1beta3"):
        doc["skipPhases"] = ["addon/kube-proxy"]
    return doc


def join_configuration(c, n, control_plane):
    """JoinConfiguration; discovery through a kubeconfig file holding the CA and the run's token
    (written only for the join, see :func:`discovery_kubeconfig`), so this document has no secret."""
    doc = {
        "apiVersion": c["api_version"],
        "kind": "JoinConfiguration",
        "discovery": {"file": {"kubeConfigPath": DISCOVERY_FILE}},
        "nodeRegistration": _node_registration(c, n, control_plane),
    }
    if c["api_version"].endswith("v1beta4"):
        doc["timeouts"] = {"discovery": c["discovery_timeout"]}
    else:
        doc["discovery"]["timeout"] = c["discovery_timeout"]
    if control_plane:
        cp = {"localAPIEndpoint": {"bindPort": int(n["bind_port"])}}
        if n["advertise_address"]:
            cp["localAPIEndpoint"]["advertiseAddress"] = n["advertise_address"]
        doc["controlPlane"] = cp
    return doc


def render_node_config(cluster, node, role):
    """The kubeadm configuration documents of one host.

    ``role`` is ``control_plane`` (Init + Cluster + Kubelet + KubeProxy, and a JoinConfiguration
    for when this host joins an existing cluster) or ``worker`` (JoinConfiguration only).
    Returns ``{"api_version", "init": [docs] or None, "join": [docs], "problems": [...]}``."""
    if role not in ("control_plane", "worker"):
        raise KubeadmError("role: %r is not control_plane or worker" % role)
    c, n = normalize(cluster, node)
    problems = images_from_lock(c["kubernetes_version"], c["images"])["problems"]
    out = {"api_version": c["api_version"], "init": None, "problems": problems}
    if role == "control_plane":
        out["init"] = [init_configuration(c, n), cluster_configuration(c), kubelet_configuration(c),
                       kube_proxy_configuration(c)]
    out["join"] = [join_configuration(c, n, role == "control_plane")]
    if role == "worker":
        out["join"].append(kubelet_configuration(c))
    return out


def to_yaml_stream(docs, header="# Managed by mooring.cluster; rendered from the lock. Do not edit."):
    """Documents as a YAML stream. Each document is emitted as JSON (a subset of YAML that
    kubeadm reads), with sorted keys: the same input gives the same bytes."""
    parts = [header] if header else []
    for doc in docs:
        parts.append("---")
        parts.append(json.dumps(doc, indent=2, sort_keys=True))
    return "\n".join(parts) + "\n"


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


def admin_kubeconfig(server, ca_pem, cert_pem, key_pem, cluster_name="kubernetes"):
    """An admin kubeconfig built from the PKI's ``kubeconfig/admin`` client certificate (for the
    controller's kubernetes.core tasks). A secret: write it 0600."""
    b64 = base64.b64encode
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {
            "server": "https://%s" % server if not str(server).startswith("https://") else server,
            "certificate-authority-data": b64(str(ca_pem).encode()).decode()}}],
        "users": [{"name": "kubernetes-admin", "user": {
            "client-certificate-data": b64(str(cert_pem).encode()).decode(),
            "client-key-data": b64(str(key_pem).encode()).decode()}}],
        "contexts": [{"name": "kubernetes-admin@" + cluster_name,
                      "context": {"cluster": cluster_name, "user": "kubernetes-admin"}}],
        "current-context": "kubernetes-admin@" + cluster_name,
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


def upgrade_apply_argv(version, kubeadm="kubeadm"):
    return [kubeadm, "upgrade", "apply", "v%d.%d.%d" % parse_version(version), "--yes",
            "--certificate-renewal=false"]


def upgrade_node_argv(kubeadm="kubeadm"):
    return [kubeadm, "upgrade", "node", "--certificate-renewal=false"]


def drain_argv(node, timeout=300, kubectl="kubectl", kubeconfig=ADMIN_CONF):
    return [kubectl, "--kubeconfig", kubeconfig, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data",
            "--force", "--timeout=%ds" % int(timeout)]


def uncordon_argv(node, kubectl="kubectl", kubeconfig=ADMIN_CONF):
    return [kubectl, "--kubeconfig", kubeconfig, "uncordon", node]


def delete_node_argv(node, kubectl="kubectl", kubeconfig=ADMIN_CONF):
    return [kubectl, "--kubeconfig", kubeconfig, "delete", "node", node, "--ignore-not-found", "--wait=true"]


def reset_argv(kubeadm="kubeadm"):
    return [kubeadm, "reset", "--force", "--cleanup-tmp-dir"]


def nodes_json_argv(kubectl="kubectl", kubeconfig=ADMIN_CONF):
    return [kubectl, "--kubeconfig", kubeconfig, "get", "nodes", "-o", "json"]


# ----------------------------------------------------------------------------- decisions

def plan_cluster(states, control_plane, workers, only=None):
    """Who runs ``kubeadm init``, who joins, who is already a member — from real state.

    ``states`` maps host -> ``{binaries: bool, admin_conf: bool, kubelet_conf: bool,
    api_ready: bool|None}`` (gathered by ``kubeadm_state``). ``only`` limits the changes to
    these hosts (the ``join`` playbook: others are never touched). Returns
    ``{"cluster_exists", "init_host", "token_host", "hosts": {host: {"action", "reason"}}}`` (``token_host``:
    where the join token is made - the init host or the first control plane that answers) with actions
    ``init``, ``join_control_plane``, ``join_worker``, ``member``, ``blocked`` or ``untouched``.

    With ``only``, hosts outside it may have no state (the join playbook contacts only the new hosts
    and the first control plane): they are ``untouched``, ``not contacted``, and such a partial view
    never creates a cluster (a join host is ``blocked`` when no contacted control plane answers)."""
    control_plane = list(control_plane or [])
    workers = [h for h in (workers or []) if h not in control_plane]
    if not control_plane:
        raise KubeadmError("inventory: the group 'control_plane' is empty; at least one host is needed")
    if only is not None:
        strangers = [h for h in only if h not in control_plane + workers]
        if strangers:
            raise KubeadmError("join_hosts: %s not in the inventory groups 'control_plane' or 'workers'"
                               % ", ".join(strangers))
    missing = [h for h in control_plane + workers if h not in states and (only is None or h in only)]
    if missing:
        raise KubeadmError("state: no state gathered for %s (unreachable?)" % ", ".join(missing))
    partial = [h for h in control_plane + workers if h not in states]
    seen_cp = [h for h in control_plane if h in states]
    ready_cp = [h for h in seen_cp if states[h].get("admin_conf") and states[h].get("api_ready")]
    stale = [h for h in seen_cp if states[h].get("admin_conf") and not states[h].get("api_ready")]
    cluster_exists = bool(ready_cp)
    if not cluster_exists and stale:
        raise KubeadmError("the cluster state is contradictory", [
            "%s: /etc/kubernetes/admin.conf exists but the API server does not answer /readyz; refusing to run "
            "kubeadm init over it. Start the control plane again, or run mooring.cluster.reset on it first" % h
            for h in stale])
    plan = {"cluster_exists": cluster_exists, "init_host": None, "token_host": ready_cp[0] if ready_cp else None,
            "hosts": {}}
    for host in control_plane + workers:
        if host not in states:
            plan["hosts"][host] = {"action": "untouched", "reason": "not contacted: not in this run's hosts, "
                                   "listed from the inventory without reading its state"}
            continue
        s = states[host]
        cp = host in control_plane
        if s.get("kubelet_conf"):
            action, reason = "member", "already joined (/etc/kubernetes/kubelet.conf present)"
        elif only is not None and host not in only:
            action, reason = "untouched", "not in this run's hosts"
        elif not s.get("binaries"):
            action, reason = "blocked", "kubeadm/kubelet binaries are not installed (bundle without Kubernetes?)"
        elif partial and not cluster_exists:
            action, reason = "blocked", ("no contacted control plane (%s) answers: a join needs a running cluster"
                                         % ", ".join(seen_cp))
        elif cp and not cluster_exists and plan["init_host"] is None:
            action, reason = "init", "no control plane answers: this host creates the cluster"
            plan["init_host"] = plan["token_host"] = host
        elif cp:
            action, reason = "join_control_plane", "joins the existing control plane"
        else:
            action, reason = "join_worker", "joins as a worker"
        plan["hosts"][host] = {"action": action, "reason": reason}
    if not cluster_exists and plan["init_host"] is None:
        joining = [h for h, p in plan["hosts"].items() if p["action"].startswith("join")]
        if joining:
            raise KubeadmError("no cluster exists and no control-plane host can create it; %s cannot join"
                               % ", ".join(joining))
    return plan


def plan_commands(plan, bin_dir="/usr/local/bin", config_dir=CONFIG_DIR, drain_timeout=300):
    """The exact command lines each host's steps run: ``{host: {drain, uncordon, delete, reset,
    upgrade, kubeadm (init or join, only when planned)}}``."""
    kadm = bin_dir + "/kubeadm"
    kctl = bin_dir + "/kubectl"
    out = {}
    for host, entry in plan["hosts"].items():
        cmds = {
            "drain": drain_argv(host, drain_timeout, kubectl=kctl),
            "uncordon": uncordon_argv(host, kubectl=kctl),
            "delete": delete_node_argv(host, kubectl=kctl),
            "reset": reset_argv(kubeadm=kadm),
            "upgrade": upgrade_node_argv(kubeadm=kadm),
        }
        if entry["action"] == "init":
            cmds["kubeadm"] = init_argv(config_dir + "/kubeadm-init.yaml", kubeadm=kadm)
        elif entry["action"].startswith("join"):
            cmds["kubeadm"] = join_argv(config_dir + "/kubeadm-join.yaml", kubeadm=kadm)
        out[host] = cmds
    return out


def plan_lines(plan):
    """Human summary of :func:`plan_cluster`: one line per host (the check-mode plan)."""
    return ["%s: %s (%s)" % (h, p["action"], p["reason"]) for h, p in plan["hosts"].items()]


def upgrade_step(current, target):
    """Decide one upgrade: ``{"action": "upgrade"|"none", "from", "to"}``; refuses downgrades and
    jumps of more than one minor (kubeadm supports one minor at a time), naming the steps."""
    cur = parse_version(current, "current version")
    tgt = parse_version(target, "target version")
    fmt = "%d.%d.%d"
    if tgt == cur:
        return {"action": "none", "from": fmt % cur, "to": fmt % tgt}
    if tgt < cur:
        raise KubeadmError("upgrade: target %s is older than the running %s; downgrades are not supported"
                           % (fmt % tgt, fmt % cur))
    if tgt[0] != cur[0] or tgt[1] - cur[1] > 1:
        steps = ["1.%d.x" % m for m in range(cur[1] + 1, tgt[1] + 1)]
        raise KubeadmError("upgrade: %s -> %s skips a minor; upgrade one minor at a time: %s (a lock and bundle "
                           "per step)" % (fmt % cur, fmt % tgt, " -> ".join(steps)))
    return {"action": "upgrade", "from": fmt % cur, "to": fmt % tgt}


def upgrade_batches(control_plane, workers, batch_size=1):
    """Host order of an upgrade: first control plane (``apply``), the other control-plane hosts
    one at a time (``node``), then workers in batches of ``batch_size`` (``node``)."""
    if int(batch_size) < 1:
        raise KubeadmError("upgrade batch size: %r must be at least 1" % batch_size)
    control_plane = list(control_plane or [])
    if not control_plane:
        raise KubeadmError("inventory: the group 'control_plane' is empty")
    workers = [h for h in (workers or []) if h not in control_plane]
    batches = [{"hosts": [control_plane[0]], "command": "apply"}]
    batches += [{"hosts": [h], "command": "node"} for h in control_plane[1:]]
    for i in range(0, len(workers), int(batch_size)):
        batches.append({"hosts": workers[i:i + int(batch_size)], "command": "node"})
    return batches


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


def static_pods_running(crictl_pods_json, stacked_etcd=False):
    """From ``crictl pods -o json``: which control-plane static pods are missing (not Ready)."""
    try:
        data = json.loads(crictl_pods_json) if isinstance(crictl_pods_json, str) else crictl_pods_json
        items = data.get("items") or []
    except (ValueError, AttributeError) as exc:
        raise KubeadmError("pods: not the JSON of 'crictl pods -o json' (%s)" % exc) from None
    wanted = list(STATIC_PODS) + (["etcd"] if stacked_etcd else [])
    ready = set()
    for pod in items:
        labels = pod.get("labels") or {}
        component = labels.get("component") or pod.get("metadata", {}).get("name", "")
        if pod.get("state") == "SANDBOX_READY" and labels.get("tier") == "control-plane":
            ready.add(component)
    return [c for c in wanted if c not in ready]
