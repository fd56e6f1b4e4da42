# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: add-on rendering (upstream manifest or Helm values + our patches).

Each add-on version in the catalog names its upstream artifact (a manifest or a Helm chart).
:func:`render_addon` takes the upstream objects as parsed from that manifest (or nothing for a
chart) and returns what is applied: the upstream objects with our small, data-driven patches
(CIDRs, image references pinned to the lock, options of the spec), or the Helm values for a
chart. Objects are found by the kind/namespace/name upstream gives them; a patch whose target
is missing is a problem (reported by name), never silently skipped.

Image references are rewritten to the lock's (matched by image name, the registry may differ:
calico's manifest says docker.io, the catalog quay.io) and set to ``imagePullPolicy:
IfNotPresent``, so every image comes from the bundle, no registry needed. An image a workload
uses that the lock does not carry is a problem.
"""

from __future__ import annotations

import copy
import json
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common import images as image_refs
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


class AddonError(MooringError):
    """An add-on cannot be rendered (unknown add-on, option or missing upstream object)."""


WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job")
CNI = ("calico", "cilium", "flannel")
CHART_ADDONS = ("cilium", "openebs")
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"


def _pod_spec(obj):
    kind = obj.get("kind")
    if kind in WORKLOAD_KINDS:
        return obj.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
    if kind == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    if kind == "Pod":
        return obj.setdefault("spec", {})
    return None


def _containers(obj):
    spec = _pod_spec(obj)
    if spec is None:
        return []
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


def lock_image_index(images):
    """``{image name: pinned ref}`` from the lock's images (``ref@digest`` when the digest is known)."""
    index = {}
    for image in images or []:
        if isinstance(image, str):
            image = {"ref": image}
        ref = image["ref"]
        if image.get("digest"):
            ref = "%s@%s" % (ref, image["digest"])
        index[image_refs.name_of(image["ref"])] = ref
    return index


def pin_images(objects, images):
    """Rewrite every container image to the lock's ref; return the problems (images not in the lock)."""
    index = lock_image_index(images)
    problems = []
    for obj in objects:
        for c in _containers(obj):
            name = image_refs.name_of(c.get("image", ""))
            if name in index:
                c["image"] = index[name]
                c["imagePullPolicy"] = "IfNotPresent"
            else:
                problems.append("%s/%s container %s: image %s is not in the lock (it would need a registry)"
                                % (obj.get("kind"), _meta(obj)["name"], c.get("name"), c.get("image")))
    return problems


# Every object of a manifest add-on carries it (value: the add-on's name): what an add-on applied can be listed, and
# each object gives the server-side applier a field of its own (an object applied with none - upstream's bare
# Namespace or ServiceAccount - has no managed fields, and the API server adds them at the next apply: a change).
ADDON_LABEL = "cluster.mooring.io/addon"


def _meta(obj):
    return obj.get("metadata") or {}


def find(objects, kind, name, namespace=None):
    """The upstream object ``kind``/``name`` (in ``namespace`` when given) or an AddonError."""
    for obj in objects:
        m = _meta(obj)
        if obj.get("kind") == kind and m.get("name") == name and (namespace is None or m.get("namespace") == namespace):
            return obj
    raise AddonError("upstream manifest: no %s %s%s; is this the upstream manifest of the catalog's version?"
                     % (kind, (namespace + "/") if namespace else "", name))


def container(obj, name):
    for c in _containers(obj):
        if c.get("name") == name:
            return c
    raise AddonError("upstream manifest: %s %s has no container %s" % (obj.get("kind"), _meta(obj).get("name"), name))


def set_env(c, name, value):
    env = c.setdefault("env", [])
    for item in env:
        if item.get("name") == name:
            item.pop("valueFrom", None)
            item["value"] = str(value)
            return
    env.append({"name": name, "value": str(value)})


def _set_default_class(obj, default):
    ann = obj.setdefault("metadata", {}).setdefault("annotations", {})
    ann[DEFAULT_CLASS] = "true" if default else "false"


# ----------------------------------------------------------------------------- decisions

def calico_encapsulation(requested, ipip_available):
    """Calico IPIP needs the ipip kernel module on every host: fall back to VXLAN where it is
    missing (preflight reports it). Returns ``(mode, note or None)``."""
    requested = requested or "VXLAN"
    if requested == "IPIP" and not ipip_available:
        return "VXLAN", "calico: IPIP asked but the ipip kernel module is missing on some host; using VXLAN"
    return requested, None


def one_cni(addon_names):
    """Exactly one CNI add-on: return its name."""
    cnis = [a for a in addon_names if a in CNI]
    if len(cnis) != 1:
        raise AddonError("add-ons: exactly one CNI (calico, cilium or flannel) is needed, found %s"
                         % (", ".join(cnis) or "none"))
    return cnis[0]


# ----------------------------------------------------------------------------- per add-on patches

def _calico(objects, o, cluster, notes):
    mode, note = calico_encapsulation(o.get("encapsulation"), cluster.get("ipip_available", True))
    if note:
        notes.append(note)
    node = find(objects, "DaemonSet", "calico-node", "kube-system")
    c = container(node, "calico-node")
    set_env(c, "CALICO_IPV4POOL_CIDR", cluster["pod_cidr"])
    set_env(c, "CALICO_IPV4POOL_IPIP", "Always" if mode == "IPIP" else "Never")
    set_env(c, "CALICO_IPV4POOL_VXLAN", "Always" if mode == "VXLAN" else "Never")
    cfg = find(objects, "ConfigMap", "calico-config", "kube-system")
    data = cfg.setdefault("data", {})
    # VXLAN needs no BGP: calico_backend vxlan and no BIRD health checks.
    data["calico_backend"] = "vxlan" if mode == "VXLAN" else "bird"
    if o.get("mtu"):
        data["veth_mtu"] = str(o["mtu"])
    if mode == "VXLAN":
        for probe in ("livenessProbe", "readinessProbe"):
            cmd = ((c.get(probe) or {}).get("exec") or {}).get("command")
            if cmd:
                c[probe]["exec"]["command"] = [a for a in cmd if a not in ("-bird-live", "-bird-ready")]
    return {"encapsulation": mode}


def _flannel(objects, o, cluster, notes):
    cfg = find(objects, "ConfigMap", "kube-flannel-cfg", "kube-flannel")
    data = cfg.setdefault("data", {})
    try:
        net = json.loads(data.get("net-conf.json") or "{}")
    except ValueError as exc:
        raise AddonError("upstream manifest: ConfigMap kube-flannel-cfg net-conf.json is not JSON (%s)" % exc) from None
    net["Network"] = cluster["pod_cidr"]
    net.setdefault("Backend", {})["Type"] = o.get("backend") or "vxlan"
    data["net-conf.json"] = json.dumps(net, indent=2, sort_keys=True) + "\n"
    return {"backend": net["Backend"]["Type"]}


def _local_path(objects, o, cluster, notes):
    cfg = find(objects, "ConfigMap", "local-path-config", "local-path-storage")
    data = cfg.setdefault("data", {})
    path = o.get("path") or "/opt/local-path-provisioner"
    try:
        conf = json.loads(data.get("config.json") or "{}")
    except ValueError as exc:
        raise AddonError("upstream manifest: ConfigMap local-path-config config.json is not JSON (%s)" % exc) from None
    conf["nodePathMap"] = [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": [path]}]
    data["config.json"] = json.dumps(conf, indent=2, sort_keys=True) + "\n"
    _set_default_class(find(objects, "StorageClass", "local-path"), o.get("default", True))
    helper = lock_image_index(cluster.get("images")).get("library/busybox")
    if helper and data.get("helperPod.yaml"):
        data["helperPod.yaml"] = re.sub(r"(?m)^(\s*image:\s*)\S+\s*$", r"\g<1>" + helper, data["helperPod.yaml"])
    return {"path": path}


def _longhorn(objects, o, cluster, notes):
    cm = find(objects, "ConfigMap", "longhorn-storageclass", "longhorn-system")
    text = cm.setdefault("data", {}).get("storageclass.yaml", "")
    replicas = int(o.get("replicas") or 3)
    text, n = re.subn(r'(numberOfReplicas:\s*)"?\d+"?', r'\g<1>"%d"' % replicas, text)
    if not n:
        raise AddonError("upstream manifest: longhorn-storageclass has no numberOfReplicas to set")
    default = "true" if o.get("default", True) else "false"
    text = re.sub(r'(%s:\s*)"?(true|false)"?' % re.escape(DEFAULT_CLASS), r'\g<1>"%s"' % default, text)
    cm["data"]["storageclass.yaml"] = text
    return {"replicas": replicas}


def _node_ports(svc, http, https):
    spec = svc.setdefault("spec", {})
    spec["type"] = "NodePort"
    for port in spec.get("ports") or []:
        if port.get("name") == "http" and http:
            port["nodePort"] = int(http)
        elif port.get("name") == "https" and https:
            port["nodePort"] = int(https)


def _ingress_nginx(objects, o, cluster, notes):
    svc = find(objects, "Service", "ingress-nginx-controller", "ingress-nginx")
    _node_ports(svc, o.get("httpNodePort"), o.get("httpsNodePort"))
    return {}


def _contour(objects, o, cluster, notes):
    svc = find(objects, "Service", "envoy", "projectcontour")
    _node_ports(svc, o.get("httpNodePort"), o.get("httpsNodePort"))
    # A NodePort service has no load balancer to keep client addresses for.
    svc["spec"].pop("loadBalancerIP", None)
    return {}


def _metrics_server(objects, o, cluster, notes):
    dep = find(objects, "Deployment", "metrics-server", "kube-system")
    c = container(dep, "metrics-server")
    args = [a for a in c.get("args") or [] if a != "--kubelet-insecure-tls"]
    if o.get("insecureKubeletTLS"):
        args.append("--kubelet-insecure-tls")
    c["args"] = args
    return {}


def _cilium_values(o, cluster, images, notes):
    index = lock_image_index(images)
    agent = index.get("cilium/cilium")
    operator = index.get("cilium/operator-generic")
    if not agent or not operator:
        raise AddonError("cilium: the lock has no quay.io/cilium/cilium and operator-generic images")
    a_repo, a_tag = image_refs.split_tag(agent)
    op_repo, op_tag = image_refs.split_tag(operator)
    values = {
        "image": {"repository": a_repo, "tag": a_tag, "useDigest": False, "pullPolicy": "IfNotPresent"},
        # The chart appends "-generic" to the operator repository.
        "operator": {"image": {"repository": op_repo[:-len("-generic")], "tag": op_tag, "useDigest": False,
                               "pullPolicy": "IfNotPresent"}},
        "ipam": {"mode": "cluster-pool", "operator": {"clusterPoolIPv4PodCIDRList": [cluster["pod_cidr"]]}},
        "kubeProxyReplacement": bool(o.get("kubeProxyReplacement", False)),
    }
    tunnel = o.get("tunnel") or "vxlan"
    if tunnel == "disabled":
        values.update({"routingMode": "native", "ipv4NativeRoutingCIDR": cluster["pod_cidr"],
                       "autoDirectNodeRoutes": True})
    else:
        values.update({"routingMode": "tunnel", "tunnelProtocol": tunnel})
    if values["kubeProxyReplacement"]:
        host, _sep, port = cluster["control_plane_endpoint"].rpartition(":")
        values.update({"k8sServiceHost": host, "k8sServicePort": int(port or 6443)})
    return values


def _openebs_values(o, cluster, images, notes):
    return {
        "localpv-provisioner": {"hostpathClass": {"enabled": True, "basePath": o.get("path") or "/var/openebs/local",
                                                  "isDefaultClass": bool(o.get("default", True))}},
        # Only LocalPV hostpath is bundled: the other engines and the logging stack stay off.
        "engines": {"local": {"lvm": {"enabled": False}, "zfs": {"enabled": False}},
                    "replicated": {"mayastor": {"enabled": False}}},
        "mayastor": {"enabled": False},
        "lvm-localpv": {"enabled": False},
        "zfs-localpv": {"enabled": False},
        "loki": {"enabled": False},
        "alloy": {"enabled": False},
    }


MANIFEST_PATCHES = {
    "calico": _calico,
    "flannel": _flannel,
    "localPathProvisioner": _local_path,
    "longhorn": _longhorn,
    "ingressNginx": _ingress_nginx,
    "contour": _contour,
    "metricsServer": _metrics_server,
}
CHART_VALUES = {"cilium": _cilium_values, "openebs": _openebs_values}
NAMESPACES = {"cilium": "kube-system", "openebs": "openebs"}


def render_addon(name, objects=None, options=None, images=None, cluster=None):
    """Render one add-on.

    ``objects``: the upstream manifest's objects (manifest add-ons); ``options``: the lock's
    ``addons.<name>.options``; ``images``: the lock's images of the add-on; ``cluster``:
    ``{pod_cidr, service_cidr, control_plane_endpoint, ipip_available}``.
    Returns ``{"name", "kind": "manifest"|"chart", "objects", "values", "namespace", "facts",
    "notes", "problems"}``; raises :class:`AddonError` when a patch target is missing."""
    options = dict(options or {})
    cluster = dict({"pod_cidr": "10.32.0.0/16", "service_cidr": "10.96.0.0/16", "control_plane_endpoint": "",
                    "ipip_available": True}, **(cluster or {}))
    notes = []
    if name in CHART_VALUES:
        values = CHART_VALUES[name](options, cluster, images, notes)
        return {"name": name, "kind": "chart", "objects": [], "values": values, "namespace": NAMESPACES[name],
                "facts": {}, "notes": notes, "problems": []}
    if name not in MANIFEST_PATCHES:
        raise AddonError("add-on %r: no renderer (known: %s)"
                         % (name, ", ".join(sorted(list(MANIFEST_PATCHES) + list(CHART_VALUES)))))
    objs = [copy.deepcopy(o) for o in (objects or []) if o]
    if not objs:
        raise AddonError("add-on %s: the upstream manifest is empty" % name)
    facts = MANIFEST_PATCHES[name](objs, options, dict(cluster, images=images), notes)
    problems = pin_images(objs, images)
    for obj in objs:
        obj.setdefault("metadata", {}).setdefault("labels", {})[ADDON_LABEL] = name
    return {"name": name, "kind": "manifest", "objects": objs, "values": {}, "namespace": None, "facts": facts,
            "notes": notes, "problems": problems}


# Apply ranks by kind: what a workload needs comes before it (namespaces, CRDs, its account and RBAC, its
# configuration, then any other kind - Services, storage, custom resources), the workloads next, and last what sends
# the API's own traffic to them (APIServices, admission webhooks: registered before their pods serve, they fail
# requests). Equal ranks keep the manifest's order.
_APPLY_RANK = {"Namespace": 0, "CustomResourceDefinition": 1, "ServiceAccount": 2, "ClusterRole": 3, "Role": 3,
               "ClusterRoleBinding": 4, "RoleBinding": 4, "ConfigMap": 5, "Secret": 5}
_APPLY_RANK.update(dict.fromkeys(("DaemonSet", "Deployment", "StatefulSet", "ReplicaSet", "ReplicationController",
                                  "Pod", "Job", "CronJob"), 7))
_APPLY_RANK.update(dict.fromkeys(("APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"), 8))
_APPLY_OTHER = 6


def apply_order(objects):
    """Objects in a safe apply order (stable): namespaces and CRDs, RBAC and configuration, other kinds, the
    workloads, then the API's registrations that point at them (:data:`_APPLY_RANK`)."""
    return sorted(objects, key=lambda o: _APPLY_RANK.get(o.get("kind"), _APPLY_OTHER))


def custom_resource_problems(objects):
    """Custom resources validated against the openAPIV3Schema of the CRDs shipped in the same
    set of objects (needs jsonschema; the caller checks it is importable)."""
    import jsonschema  # controller/test-side only; not imported on managed hosts

    crds = {}
    for o in objects:
        if o.get("kind") == "CustomResourceDefinition":
            spec = o["spec"]
            for v in spec.get("versions") or []:
                schema = (v.get("schema") or {}).get("openAPIV3Schema")
                if schema:
                    crds[("%s/%s" % (spec["group"], v["name"]), spec["names"]["kind"])] = schema
    problems = []
    for o in objects:
        key = (o.get("apiVersion"), o.get("kind"))
        if key in crds:
            body = {k: v for k, v in o.items() if k not in ("apiVersion", "kind", "metadata")}
            schema = copy.deepcopy(crds[key])
            schema.get("properties", {}).pop("metadata", None)
            schema.get("properties", {}).pop("apiVersion", None)
            schema.get("properties", {}).pop("kind", None)
            for err in jsonschema.Draft7Validator(schema).iter_errors(body):
                problems.append("%s %s: %s at %s" % (o["kind"], _meta(o).get("name"), err.message,
                                                     "/".join(str(p) for p in err.absolute_path)))
    return problems
