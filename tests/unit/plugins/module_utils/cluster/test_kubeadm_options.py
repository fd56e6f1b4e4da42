# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The installer spec's kubelet and kube-proxy options in kubeadm's configuration (kubeadmconfig):
failCgroupV1 (and kubeadm's ignorePreflightErrors with it), evictionHard, imageGCHighThresholdPercent,
kubeProxy.mode and kubeProxy.conntrackMaxPerCore."""

from __future__ import annotations

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm as k
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadmconfig as kc

KIND_NODE = {"failCgroupV1": False, "imageGCHighThresholdPercent": 100,
             "evictionHard": {"nodefs.available": "0%", "imagefs.available": "0%", "nodefs.inodesFree": "0%"}}


def cluster(version="1.35.8", kubelet=None, kube_proxy=None, **kw):
    c = {"kubernetes_version": version, "control_plane_endpoint": "10.0.0.10:6443",
         "etcd_endpoints": ["https://10.0.0.21:2379"], "kubelet": kubelet or {}, "kube_proxy": kube_proxy or {}}
    c.update(kw)
    return c


def rendered(c, node=None):
    """{control-plane init/join, worker join, kubelet and kube-proxy documents} of one cluster."""
    cp = kc.render_node_config(c, dict({"name": "cp1"}, **(node or {})), "control_plane")
    worker = kc.render_node_config(c, dict({"name": "w1"}, **(node or {})), "worker")
    return {"init": cp["init"][0], "cp_join": cp["join"][0], "worker_join": worker["join"][0],
            "kubelet": cp["init"][2], "worker_kubelet": worker["join"][1], "proxy": cp["init"][3]}


def registrations(docs):
    return [docs[name]["nodeRegistration"] for name in ("init", "cp_join", "worker_join")]


# ---------------------------------------------------------------- kubelet

@pytest.mark.parametrize("kubelet, expected", [
    ({}, {}),
    ({"failCgroupV1": True}, {}),  # true or absent: nothing changes
    ({"failCgroupV1": False}, {"failCgroupV1": False}),
    ({"evictionHard": {"nodefs.available": "0%", "imagefs.available": "0%"}},
     {"evictionHard": {"imagefs.available": "0%", "nodefs.available": "0%"}}),
    ({"imageGCHighThresholdPercent": 100}, {"imageGCHighThresholdPercent": 100}),
    ({"imageGCHighThresholdPercent": 81}, {"imageGCHighThresholdPercent": 81}),
    (KIND_NODE, KIND_NODE),
])
def test_kubelet_options_are_rendered_on_every_host(kubelet, expected):
    docs = rendered(cluster(kubelet=kubelet))
    for doc in (docs["kubelet"], docs["worker_kubelet"]):
        got = {key: doc[key] for key in ("failCgroupV1", "evictionHard", "imageGCHighThresholdPercent") if key in doc}
        assert got == expected
        assert doc["failSwapOn"] is True and doc["cgroupDriver"] == "systemd"


@pytest.mark.parametrize("version, written", [("1.35.8", True), ("1.34.3", True), ("1.31.0", True),
                                              ("1.30.6", False), ("1.27.0", False)])
def test_fail_cgroup_v1_false_is_written_for_the_kubelets_that_know_it(version, written):
    docs = rendered(cluster(version, kubelet={"failCgroupV1": False}))
    assert ("failCgroupV1" in docs["kubelet"]) is written
    # kubeadm is told to ignore SystemVerification whatever the version: harmless where it only warns.
    assert all(reg["ignorePreflightErrors"] == ["SystemVerification"] for reg in registrations(docs))


@pytest.mark.parametrize("kubelet", [{}, {"failCgroupV1": True}])
def test_no_preflight_error_is_ignored_unless_cgroup_v1_is_allowed(kubelet):
    assert all("ignorePreflightErrors" not in reg for reg in registrations(rendered(cluster(kubelet=kubelet))))


@pytest.mark.parametrize("given, allows, expected", [
    ([], False, []),
    ([], True, ["SystemVerification"]),
    (["Swap"], False, ["Swap"]),
    (["Swap", "NumCPU"], True, ["NumCPU", "Swap", "SystemVerification"]),
    (["SystemVerification"], True, ["SystemVerification"]),
    (["systemverification", "Swap"], True, ["Swap", "systemverification"]),  # kubeadm compares in lower case
    (["Swap", "Swap"], False, ["Swap"]),
])
def test_ignore_preflight_errors_are_merged_sorted_and_once(given, allows, expected):
    kubelet = {"failCgroupV1": False} if allows else {}
    assert kc.preflight_errors_ignored(given, kubelet) == expected
    docs = rendered(cluster(kubelet=kubelet), {"ignore_preflight_errors": given})
    for reg in registrations(docs):
        assert reg.get("ignorePreflightErrors", []) == expected


# ---------------------------------------------------------------- kube-proxy

@pytest.mark.parametrize("kube_proxy, mode, expected", [
    ({}, None, {"mode": "iptables"}),
    ({}, "ipvs", {"mode": "ipvs"}),
    ({"mode": "nftables"}, None, {"mode": "nftables"}),
    ({"mode": "nftables"}, "ipvs", {"mode": "nftables"}),  # the spec's mode wins over the role's
    ({"conntrackMaxPerCore": 0}, None, {"mode": "iptables", "conntrack": {"maxPerCore": 0}}),
    ({"conntrackMaxPerCore": 65536, "mode": "ipvs"}, None, {"mode": "ipvs", "conntrack": {"maxPerCore": 65536}}),
])
def test_kube_proxy_options(kube_proxy, mode, expected):
    extra = {"kube_proxy_mode": mode} if mode else {}
    doc = rendered(cluster(kube_proxy=kube_proxy, **extra))["proxy"]
    assert doc["apiVersion"] == k.KUBEPROXY_API and doc["clusterCIDR"] == "10.32.0.0/16"
    assert {key: doc[key] for key in ("mode", "conntrack") if key in doc} == expected


# ---------------------------------------------------------------- bad input names the field and the value

@pytest.mark.parametrize("kubelet, kube_proxy, problem", [
    ({"failCgroupV1": "false"}, {}, "kubernetes.kubelet.failCgroupV1: 'false' is not true or false"),
    ({"evictionHard": ["nodefs.available<10%"]}, {},
     "kubernetes.kubelet.evictionHard: ['nodefs.available<10%'] is not a mapping"),
    ({"evictionHard": {"nodefs.available": 0}}, {}, "kubernetes.kubelet.evictionHard: {'nodefs.available': 0} is not"),
    ({"imageGCHighThresholdPercent": 80}, {}, "kubernetes.kubelet.imageGCHighThresholdPercent: 80 is not a whole number "
                                              "from 81 to 100"),
    ({"imageGCHighThresholdPercent": True}, {}, "kubernetes.kubelet.imageGCHighThresholdPercent: True is not"),
    ({"cgroupDriver": "openrc"}, {}, "kubernetes.kubelet.cgroupDriver: 'openrc' is not systemd or cgroupfs"),
    ({}, {"conntrackMaxPerCore": -1}, "kubernetes.kubeProxy.conntrackMaxPerCore: -1 is not a whole number from 0"),
    ({}, {"conntrackMaxPerCore": "0"}, "kubernetes.kubeProxy.conntrackMaxPerCore: '0' is not a whole number"),
    ({}, {"mode": "userspace"}, "kubernetes.kubeProxy.mode: 'userspace' is not iptables, ipvs or nftables"),
    ("yes", {}, "kubernetes.kubelet: 'yes' is not a mapping"),
])
def test_bad_options_are_refused_naming_the_field_and_value(kubelet, kube_proxy, problem):
    with pytest.raises(k.KubeadmError) as err:
        kc.normalize(cluster(kubelet=kubelet, kube_proxy=kube_proxy), {"name": "cp1"})
    assert any(p.startswith(problem) for p in err.value.problems), err.value.problems
    assert len(err.value.problems) == 1, err.value.problems
