# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the kubeadm configuration documents of one host.

:func:`render_node_config` builds them (InitConfiguration + ClusterConfiguration +
KubeletConfiguration + KubeProxyConfiguration on the control plane; JoinConfiguration on every
host that joins) in the ``kubeadm.k8s.io`` API version the Kubernetes minor expects: ``v1beta4``
from 1.31, ``v1beta3`` before. The differences handled: v1beta4 extra arguments are lists of
``{name, value}`` (maps in v1beta3), and the discovery/control-plane timeouts live in ``timeouts``
(v1beta4) instead of ``discovery.timeout`` / ``apiServer.timeoutForControlPlane`` (v1beta3).
:func:`normalize` fills the cluster and node settings in; :func:`to_yaml_stream` writes the documents.
"""

from __future__ import annotations

import json

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.kubeadm import (
    CONTROL_PLANE_TAINT,
    DEFAULT_CRI_SOCKET,
    DISCOVERY_FILE,
    KUBELET_API,
    KUBEPROXY_API,
    KubeadmError,
    api_version,
    parse_version,
)
from ansible_collections.mooring.cluster.plugins.module_utils.common.images import split_tag


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
    "kube_proxy": {},
    "kube_proxy_mode": "iptables",
    "skip_kube_proxy": False,
    "control_plane_timeout": "4m0s",
    "discovery_timeout": "5m0s",
}


PROXY_MODES = ("iptables", "ipvs", "nftables")
# The kubelet refuses cgroup v1 unless its configuration says failCgroupV1: false (the option exists from
# Kubernetes 1.31, its default is true from 1.35), and kubeadm's SystemVerification preflight fails there.
FAIL_CGROUP_V1_FROM = (1, 31)
CGROUP_V1_PREFLIGHT_ERROR = "SystemVerification"
# The kubelet's imageGCLowThresholdPercent (its default, which the spec does not change): the high threshold
# must be above it or the kubelet refuses its configuration.
IMAGE_GC_LOW_THRESHOLD = 80


def _is_int(value, low, high):
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _is_string_map(value):
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


# The spec's fields checked here (the installer spec's schema checks them first; this module is also
# called with plain data): field -> (test, what the value must be).
KUBELET_FIELDS = {
    "cgroupDriver": (lambda v: v in ("systemd", "cgroupfs"), "systemd or cgroupfs"),
    "failCgroupV1": (lambda v: isinstance(v, bool), "true or false"),
    "evictionHard": (_is_string_map, "a mapping of eviction signal to threshold (strings)"),
    "imageGCHighThresholdPercent": (lambda v: _is_int(v, IMAGE_GC_LOW_THRESHOLD + 1, 100),
                                    "a whole number from %d to 100 (above the kubelet's imageGCLowThresholdPercent, "
                                    "%d)" % (IMAGE_GC_LOW_THRESHOLD + 1, IMAGE_GC_LOW_THRESHOLD)),
}
KUBE_PROXY_FIELDS = {
    "mode": (lambda v: v in PROXY_MODES, "iptables, ipvs or nftables"),
    "conntrackMaxPerCore": (lambda v: _is_int(v, 0, 2 ** 31 - 1),
                            "a whole number from 0 (0: leave nf_conntrack_max as it is)"),
}


def field_problems(values, fields, path):
    """One line per field of ``values`` (a mapping, or nothing) that ``fields`` refuses, naming its path and value."""
    if not isinstance(values or {}, dict):
        return ["%s: %r is not a mapping" % (path, values)]
    return ["%s.%s: %r is not %s" % (path, name, (values or {})[name], want)
            for name, (test, want) in sorted(fields.items()) if name in (values or {}) and not test(values[name])]


def allows_cgroup_v1(kubelet):
    """Whether the spec's kubelet settings say it may run on cgroup v1 (``failCgroupV1: false``)."""
    return (kubelet or {}).get("failCgroupV1") is False


def preflight_errors_ignored(given, kubelet):
    """kubeadm's ``ignorePreflightErrors``: ``given``, plus SystemVerification when the kubelet may run on
    cgroup v1 (that check fails there); sorted, each once (kubeadm compares them in lower case)."""
    out = {}
    for name in list(given or []) + ([CGROUP_V1_PREFLIGHT_ERROR] if allows_cgroup_v1(kubelet) else []):
        out.setdefault(str(name).lower(), str(name))
    return sorted(out.values())


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
    # The spec's kubeProxy.mode, else the caller's kube_proxy_mode (the kubeadm role's kubeadm_kube_proxy_mode).
    if isinstance(c["kube_proxy"], dict) and c["kube_proxy"].get("mode") in PROXY_MODES:
        c["kube_proxy_mode"] = c["kube_proxy"]["mode"]
    if c["kube_proxy_mode"] not in PROXY_MODES:
        problems.append("kube-proxy mode: %r is not iptables, ipvs or nftables" % c["kube_proxy_mode"])
    problems.extend(field_problems(c["kubelet"], KUBELET_FIELDS, "kubernetes.kubelet"))
    problems.extend(field_problems(c["kube_proxy"], KUBE_PROXY_FIELDS, "kubernetes.kubeProxy"))
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
    ignored = preflight_errors_ignored(n["ignore_preflight_errors"], c["kubelet"])
    if ignored:
        reg["ignorePreflightErrors"] = ignored
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
    if k.get("evictionHard"):
        doc["evictionHard"] = dict(sorted(k["evictionHard"].items()))
    if k.get("imageGCHighThresholdPercent") is not None:
        doc["imageGCHighThresholdPercent"] = int(k["imageGCHighThresholdPercent"])
    # Only false is written: true is the kubelet's own default from 1.35, and older kubelets lack the option.
    if allows_cgroup_v1(k) and parse_version(c["kubernetes_version"])[:2] >= FAIL_CGROUP_V1_FROM:
        doc["failCgroupV1"] = False
    return doc


def kube_proxy_configuration(c):
    doc = {"apiVersion": KUBEPROXY_API, "kind": "KubeProxyConfiguration", "mode": c["kube_proxy_mode"],
           "clusterCIDR": c["pod_cidr"]}
    per_core = (c["kube_proxy"] or {}).get("conntrackMaxPerCore")
    if per_core is not None:  # 0: kube-proxy leaves nf_conntrack_max as it is (a container cannot set it)
        doc["conntrack"] = {"maxPerCore": int(per_core)}
    return doc


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
    kubeadm reads), with sorted keys: the same input gives the same bytes. The header is a comment of
    the first document: kubeadm refuses an empty document (one without kind and apiVersion)."""
    parts = [header] if header else []
    for i, doc in enumerate(docs):
        if i:
            parts.append("---")
        parts.append(json.dumps(doc, indent=2, sort_keys=True))
    return "\n".join(parts) + "\n"
