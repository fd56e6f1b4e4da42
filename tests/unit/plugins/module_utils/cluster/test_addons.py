# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Add-on rendering: every add-on, every catalog version, validated objects.

The manifests under tests/unit/data/addons/ are SYNTHETIC, written in the shape of the upstream
ones (upstream files are not reachable from the test machines): these tests prove our patches
find their targets by upstream kind/namespace/name, pin every image to the lock, and produce
objects that Kubernetes' OpenAPI schemas (kubernetes-validate, for the Kubernetes minors the
catalog supports) and the CRDs shipped alongside accept.
"""

from __future__ import annotations

import json
import os

import kubernetes_validate
import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.addons.addons import (
    AddonError,
    apply_order,
    calico_encapsulation,
    custom_resource_problems,
    one_cni,
    render_addon,
)
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import addon_contents, load_catalog

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "data", "addons")
CATALOG = load_catalog()
MANIFEST_ADDONS = ["calico", "flannel", "localPathProvisioner", "longhorn", "ingressNginx", "contour", "metricsServer"]
CLUSTER = {"pod_cidr": "10.44.0.0/16", "service_cidr": "10.96.0.0/16", "control_plane_endpoint": "10.0.0.10:6443"}
# The newest schema version kubernetes-validate ships at or below each catalog minor.
K8S_SCHEMA = "1.34"


def _synthetic(name):
    with open(os.path.join(DATA, name + ".manifest")) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def _images(name, version):
    return addon_contents(CATALOG, name, version, ["amd64"])["images"]


def _cases(names):
    return [(n, v) for n in names for v in CATALOG.versions(n)]


def _validate_core(objects):
    for obj in objects:
        if "." in obj["apiVersion"].split("/")[0] and obj["kind"] not in ("StorageClass", "CustomResourceDefinition",
                                                                          "APIService"):
            continue  # custom resources: checked against their CRDs below
        if obj["apiVersion"].startswith("crd."):
            continue
        kubernetes_validate.validate(obj, K8S_SCHEMA, strict=True)


@pytest.mark.parametrize("name,version", _cases(MANIFEST_ADDONS))
def test_every_manifest_addon_version_renders_to_valid_objects(name, version):
    images = _images(name, version)
    out = render_addon(name, _synthetic(name), options={}, images=images, cluster=CLUSTER)
    assert out["problems"] == [], out["problems"]
    _validate_core(out["objects"])
    assert custom_resource_problems(out["objects"]) == []
    lock_refs = {i["ref"] for i in images}
    for obj in out["objects"]:
        spec = (obj.get("spec") or {}).get("template", {}).get("spec") or {}
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            assert c["image"] in lock_refs, (c["image"], lock_refs)
            assert c["imagePullPolicy"] == "IfNotPresent"


def test_input_objects_are_not_modified():
    objs = _synthetic("calico")
    before = json.dumps(objs, sort_keys=True)
    render_addon("calico", objs, images=_images("calico", "3.31.7"), cluster=CLUSTER)
    assert json.dumps(objs, sort_keys=True) == before


def _env(obj, container):
    for c in obj["spec"]["template"]["spec"]["containers"]:
        if c["name"] == container:
            return {e["name"]: e.get("value") for e in c.get("env", [])}, c
    raise AssertionError(container)


def _get(objects, kind, name):
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


@pytest.mark.parametrize("requested,ipip,mode,backend,probe_has_bird", [
    ("VXLAN", True, "VXLAN", "vxlan", False),
    ("IPIP", True, "IPIP", "bird", True),
    ("IPIP", False, "VXLAN", "vxlan", False),   # preflight: no ipip module -> VXLAN
    ("None", True, "None", "bird", True),
])
def test_calico_encapsulation_and_cidr(requested, ipip, mode, backend, probe_has_bird):
    out = render_addon("calico", _synthetic("calico"), options={"encapsulation": requested, "mtu": 1400},
                       images=_images("calico", "3.31.7"), cluster=dict(CLUSTER, ipip_available=ipip))
    env, c = _env(_get(out["objects"], "DaemonSet", "calico-node"), "calico-node")
    assert env["CALICO_IPV4POOL_CIDR"] == "10.44.0.0/16"
    assert env["CALICO_IPV4POOL_IPIP"] == ("Always" if mode == "IPIP" else "Never")
    assert env["CALICO_IPV4POOL_VXLAN"] == ("Always" if mode == "VXLAN" else "Never")
    cfg = _get(out["objects"], "ConfigMap", "calico-config")["data"]
    assert cfg["calico_backend"] == backend and cfg["veth_mtu"] == "1400"
    assert ("-bird-ready" in c["readinessProbe"]["exec"]["command"]) is probe_has_bird
    assert out["facts"]["encapsulation"] == mode
    assert bool(out["notes"]) is (requested == "IPIP" and not ipip)


def test_calico_encapsulation_decision_table():
    assert calico_encapsulation("IPIP", False)[0] == "VXLAN"
    assert calico_encapsulation("IPIP", True) == ("IPIP", None)
    assert calico_encapsulation(None, False) == ("VXLAN", None)


def test_flannel_network_and_backend():
    out = render_addon("flannel", _synthetic("flannel"), options={"backend": "host-gw"},
                       images=_images("flannel", "0.27.4"), cluster=CLUSTER)
    net = json.loads(_get(out["objects"], "ConfigMap", "kube-flannel-cfg")["data"]["net-conf.json"])
    assert net == {"Network": "10.44.0.0/16", "EnableNFTables": False, "Backend": {"Type": "host-gw"}}


def test_local_path_path_and_default_class():
    out = render_addon("localPathProvisioner", _synthetic("localPathProvisioner"),
                       options={"path": "/data/lp", "default": False},
                       images=_images("localPathProvisioner", "0.0.32"), cluster=CLUSTER)
    conf = json.loads(_get(out["objects"], "ConfigMap", "local-path-config")["data"]["config.json"])
    assert conf["nodePathMap"][0]["paths"] == ["/data/lp"]
    sc = _get(out["objects"], "StorageClass", "local-path")
    assert sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "false"
    helper = _get(out["objects"], "ConfigMap", "local-path-config")["data"]["helperPod.yaml"]
    assert "image: docker.io/library/busybox:1.37.0" in helper


def test_longhorn_replicas():
    out = render_addon("longhorn", _synthetic("longhorn"), options={"replicas": 2, "default": False},
                       images=_images("longhorn", "1.10.1"), cluster=CLUSTER)
    sc = yaml.safe_load(_get(out["objects"], "ConfigMap", "longhorn-storageclass")["data"]["storageclass.yaml"])
    assert sc["parameters"]["numberOfReplicas"] == "2"
    assert sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "false"
    kubernetes_validate.validate(sc, K8S_SCHEMA, strict=True)


@pytest.mark.parametrize("name,service", [("ingressNginx", "ingress-nginx-controller"), ("contour", "envoy")])
def test_ingress_node_ports(name, service):
    version = CATALOG.versions(name)[0]
    out = render_addon(name, _synthetic(name), options={"httpNodePort": 30080, "httpsNodePort": 30443},
                       images=_images(name, version), cluster=CLUSTER)
    svc = _get(out["objects"], "Service", service)
    assert svc["spec"]["type"] == "NodePort"
    assert {p["name"]: p["nodePort"] for p in svc["spec"]["ports"]} == {"http": 30080, "https": 30443}


def test_metrics_server_insecure_tls_is_an_option():
    imgs = _images("metricsServer", "0.8.0")
    on = render_addon("metricsServer", _synthetic("metricsServer"), {"insecureKubeletTLS": True}, imgs, CLUSTER)
    off = render_addon("metricsServer", _synthetic("metricsServer"), {}, imgs, CLUSTER)
    assert "--kubelet-insecure-tls" in _env(_get(on["objects"], "Deployment", "metrics-server"), "metrics-server")[1]["args"]
    assert "--kubelet-insecure-tls" not in _env(_get(off["objects"], "Deployment", "metrics-server"),
                                                "metrics-server")[1]["args"]


@pytest.mark.parametrize("version", CATALOG.versions("cilium"))
@pytest.mark.parametrize("tunnel", ["vxlan", "geneve", "disabled"])
def test_cilium_values(version, tunnel):
    out = render_addon("cilium", options={"tunnel": tunnel, "kubeProxyReplacement": True},
                       images=_images("cilium", version), cluster=CLUSTER)
    v = out["values"]
    assert out["kind"] == "chart" and out["namespace"] == "kube-system"
    assert v["image"] == {"repository": "quay.io/cilium/cilium", "tag": "v" + version, "useDigest": False,
                          "pullPolicy": "IfNotPresent"}
    assert v["operator"]["image"]["repository"] == "quay.io/cilium/operator"
    assert v["ipam"]["operator"]["clusterPoolIPv4PodCIDRList"] == ["10.44.0.0/16"]
    assert (v["k8sServiceHost"], v["k8sServicePort"]) == ("10.0.0.10", 6443)
    if tunnel == "disabled":
        assert v["routingMode"] == "native" and v["ipv4NativeRoutingCIDR"] == "10.44.0.0/16"
    else:
        assert v["routingMode"] == "tunnel" and v["tunnelProtocol"] == tunnel


@pytest.mark.parametrize("version", CATALOG.versions("openebs"))
def test_openebs_values(version):
    out = render_addon("openebs", options={"path": "/srv/openebs"}, images=_images("openebs", version),
                       cluster=CLUSTER)
    assert out["values"]["localpv-provisioner"]["hostpathClass"]["basePath"] == "/srv/openebs"
    assert out["values"]["engines"]["replicated"]["mayastor"]["enabled"] is False


def test_missing_upstream_object_is_an_error_naming_it():
    objs = [o for o in _synthetic("calico") if o["kind"] != "ConfigMap"]
    with pytest.raises(AddonError, match="ConfigMap kube-system/calico-config"):
        render_addon("calico", objs, images=_images("calico", "3.31.7"), cluster=CLUSTER)


def test_image_missing_from_lock_is_a_problem():
    out = render_addon("metricsServer", _synthetic("metricsServer"), images=[], cluster=CLUSTER)
    assert out["problems"] and "not in the lock" in out["problems"][0]


def test_digest_pins_when_known():
    imgs = [{"ref": "registry.k8s.io/metrics-server/metrics-server:v0.8.0", "digest": "sha256:" + "a" * 64}]
    out = render_addon("metricsServer", _synthetic("metricsServer"), images=imgs, cluster=CLUSTER)
    c = _env(_get(out["objects"], "Deployment", "metrics-server"), "metrics-server")[1]
    assert c["image"] == "registry.k8s.io/metrics-server/metrics-server:v0.8.0@sha256:" + "a" * 64


def test_custom_resource_against_crd_schema_fails_when_wrong():
    objs = _synthetic("calico")
    pool = _get(objs, "IPPool", "test-pool")
    pool["spec"]["ipipMode"] = "Sometimes"
    assert any("Sometimes" in p for p in custom_resource_problems(objs))


def test_exactly_one_cni():
    assert one_cni(["kubernetes", "calico", "metricsServer"]) == "calico"
    with pytest.raises(AddonError, match="exactly one CNI"):
        one_cni(["calico", "flannel"])
    with pytest.raises(AddonError, match="none"):
        one_cni(["kubernetes"])


def test_unknown_addon():
    with pytest.raises(AddonError, match="no renderer"):
        render_addon("weave", [{"kind": "x"}])


def test_apply_order_puts_workloads_after_what_they_need_and_api_registrations_last():
    kinds = ["APIService", "Deployment", "PersistentVolumeClaim", "ValidatingWebhookConfiguration", "DaemonSet",
             "Service", "ConfigMap", "ClusterRoleBinding", "ClusterRole", "ServiceAccount", "StorageClass",
             "CustomResourceDefinition", "Namespace", "Job"]
    objs = [{"kind": k, "metadata": {"name": "%s-%d" % (k.lower(), i)}} for i, k in enumerate(kinds)]
    assert [o["kind"] for o in apply_order(objs)] == [
        "Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap",
        # other kinds keep the manifest's order among themselves
        "PersistentVolumeClaim", "Service", "StorageClass",
        "Deployment", "DaemonSet", "Job",
        "APIService", "ValidatingWebhookConfiguration"]
