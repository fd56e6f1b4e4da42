# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Version-skew rules of the rolling upgrade (module_utils/cluster/kubeadm/skew.py): table-driven, plus a property."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import skew

CP = ["cp1", "cp2"]
W = ["w1"]


def at(api=None, kubelet=None):
    return {"apiserver": api, "kubelet": kubelet}


def cluster(cp_api, cp_kubelet, w_kubelet):
    nodes = {h: at(cp_api, cp_kubelet) for h in CP}
    nodes.update({h: at(None, w_kubelet) for h in W})
    return nodes


CASES = [
    # id, target, nodes, order, etcd, expected substrings (empty: allowed)
    ("patch", "1.33.9", cluster("1.33.2", "1.33.2", "1.33.2"), None, "3.5.21", []),
    ("one-minor", "1.33.9", cluster("1.32.4", "1.32.4", "1.32.4"), None, "3.5.16", []),
    ("same", "1.33.9", cluster("1.33.9", "1.33.9", "1.33.9"), None, "3.5.1", []),
    ("boundary-nothing-runs", "1.33.9", {}, None, "3.5.1", []),
    ("two-minors", "1.35.1", cluster("1.33.9", "1.33.9", "1.33.9"), None, None,
     ["cp1: kube-apiserver 1.33.9 -> 1.35.1 skips a minor", "1.34.x -> 1.35.x", "w1: kubelet 1.33.9 -> 1.35.1 skips"]),
    ("downgrade", "1.32.0", cluster("1.33.9", "1.33.9", "1.33.9"), None, None,
     ["cp1: kube-apiserver 1.33.9 -> 1.32.0 is a downgrade"]),
    ("worker-first", "1.33.9", cluster("1.32.4", "1.32.4", "1.32.4"), ["cp1", "w1", "cp2"], None,
     ["order: worker w1 is planned before control plane cp2",
      "w1: kubelet 1.33.9 would be newer than the oldest API server 1.32.4 (after w1)"]),
    ("worker-first-batches", "1.33.9", cluster("1.32.4", "1.32.4", "1.32.4"),
     [{"hosts": ["w1"]}, {"hosts": ["cp1"]}, {"hosts": ["cp2"]}], None, ["order: worker w1 is planned before control plane cp1"]),
    ("kubelet-newer-now", "1.33.9", cluster("1.32.4", "1.32.4", "1.33.0"), None, None,
     ["w1: kubelet 1.33.0 would be newer than the oldest API server 1.32.4 (now)"]),
    ("kubelet-too-old", "1.33.9", cluster("1.32.4", "1.32.4", "1.29.3"), None, None,
     ["w1: kubelet 1.29.3 would be more than 3 minors older than the API server 1.33.9 (after cp2)"]),
    # three minors behind is within the kubelet skew, but the kubelet itself still moves one minor per step
    ("kubelet-three-behind", "1.33.9",
     {"cp1": at("1.33.1", "1.33.1"), "cp2": at("1.33.1", "1.33.1"), "w1": at(None, "1.30.2")}, None, None,
     ["w1: kubelet 1.30.2 -> 1.33.9 skips a minor"]),
    ("etcd-3.4-on-1.33", "1.33.9", {}, None, "3.4.23",
     ["etcd 3.4.23 is not supported by Kubernetes 1.33.9 (kubeadm 1.33 runs etcd 3.5.x)"]),
    ("etcd-3.5-on-1.34", "1.34.2", {}, None, "3.5.21", []),
    ("etcd-3.6-on-1.34", "1.34.2", {}, None, "3.6.5", []),
    ("etcd-3.6-on-1.33", "1.33.9", {}, None, "3.6.5", ["etcd 3.6.5 is not supported by Kubernetes 1.33.9"]),
    # kubeadm 1.35 supports the etcd of 1.33 (3.5.x, from 3.5.24 by its own external-etcd preflight) to 1.35
    ("etcd-3.5-on-1.35", "1.35.0", {}, None, "3.5.33", []),
    ("etcd-3.5-on-1.36", "1.36.0", {}, None, "3.5.33", ["kubeadm 1.36 runs etcd 3.6.x"]),
    ("etcd-3.4-on-1.35", "1.35.0", {}, None, "3.4.23", ["kubeadm 1.35 runs etcd 3.5.x or 3.6.x"]),
    ("bad-version", "1.33.9", {"cp1": at("one.two", None)}, None, None, ["cp1 apiserver version: 'one.two' is not"]),
]


@pytest.mark.parametrize("target,nodes,order,etcd,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_violations_table(target, nodes, order, etcd, expected):
    got = skew.violations(target, nodes, CP, W, order=order, etcd=etcd)
    if not expected:
        assert got == []
    for want in expected:
        assert any(want in line for line in got), (want, got)
    # one line per problem: no line carries a newline
    assert all("\n" not in line for line in got)


def test_catalog_range_wins_over_the_table():
    assert skew.violations("1.33.9", {}, CP, W, etcd="3.4.23", etcd_range=">=1.30.0,<1.34.0") == []
    got = skew.violations("1.35.0", {}, CP, W, etcd="3.5.21", etcd_range=">=1.30.0,<1.34.0")
    assert got == ["etcd 3.5.21 is not supported by Kubernetes 1.35.0 (the catalog's etcd 3.5.21 supports Kubernetes "
                   ">=1.30.0,<1.34.0); choose a supported etcd in the spec"]


@pytest.mark.parametrize("minor,series", [(21, (3, 4)), (22, (3, 5)), (33, (3, 5)), (34, (3, 6)), (18, None)])
def test_kubeadm_etcd_series(minor, series):
    assert skew.kubeadm_etcd_series("1.%d.0" % minor) == series


versions = st.tuples(st.integers(27, 36), st.integers(0, 12)).map(lambda t: "1.%d.%d" % t)


@settings(max_examples=300, deadline=None)
@given(cp=versions, worker=versions, target=versions, worker_first=st.booleans())
def test_property_allowed_iff_rules_hold(cp, worker, target, worker_first):
    """Whatever the versions, a roll is allowed exactly when the rules written independently here hold."""
    nodes = {"cp1": at(cp, cp), "cp2": at(cp, cp), "w1": at(None, worker)}
    order = ["w1", "cp1", "cp2"] if worker_first else None
    got = skew.violations(target, nodes, CP, W, order=order)

    def key(v):
        return tuple(int(x) for x in v.split("."))

    def step_ok(cur, tgt):
        return key(tgt) >= key(cur) and key(tgt)[1] - key(cur)[1] <= 1

    ok = step_ok(cp, target) and step_ok(worker, target) and not worker_first
    ok = ok and key(worker)[1] <= key(cp)[1] and key(cp)[1] - key(worker)[1] <= 3
    ok = ok and key(target)[1] - key(worker)[1] <= 3
    assert (got == []) == ok, (cp, worker, target, worker_first, got)


def test_node_versions_from_the_api_shape():
    nodes = {"cp1": {"version": "v1.32.4", "ready": True}, "w1": {"version": "v1.31.0"}, "x": {"apiserver": None, "kubelet": "1.30.1"}}
    assert skew.node_versions(nodes, CP) == {"cp1": {"apiserver": "v1.32.4", "kubelet": "v1.32.4"},
                                             "w1": {"apiserver": None, "kubelet": "v1.31.0"},
                                             "x": {"apiserver": None, "kubelet": "1.30.1"}}
    got = skew.violations("1.33.9", skew.node_versions(nodes, CP), CP, W)
    assert "w1: kubelet 1.31.0 -> 1.33.9 skips a minor; upgrade one minor at a time (1.32.x -> 1.33.x), a lock and bundle per step" in got


@pytest.mark.parametrize("current,target,expected", [
    ({"m1": "3.5.33", "m2": "3.5.33"}, "3.6.14", []),
    ({"m1": "3.5.20"}, "3.6.0", []),
    ({"m1": "3.6.14", "m2": "3.5.33"}, "3.6.14", []),                       # a resumed upgrade
    ({"m1": "3.6.14"}, "3.6.11", []),                                       # within a minor, either way
    ({"m1": "3.5.33", "m2": ""}, "3.6.14", []),                             # not answering: the gates judge it
    ({"m1": "3.5.19", "m2": "3.5.33"}, "3.6.14",
     ["m1: etcd 3.5.19 -> 3.6.14: etcd 3.6 is reached only from 3.5.20 or later; upgrade to the newest 3.5 release first"]),
    ({"m1": "3.4.23"}, "3.6.14", ["m1: etcd 3.4.23 -> 3.6.14 skips a minor; upgrade one minor at a time (3.5.x first)"]),
    ({"m1": "3.6.14"}, "3.5.33", ["m1: etcd 3.6.14 -> 3.5.33 goes back a minor; etcd is not downgraded by a release swap"]),
    ({"m1": "three"}, "3.6.14", ["m1 etcd version: 'three' is not"]),
])
def test_etcd_path(current, target, expected):
    got = skew.etcd_path(current, target)
    assert len(got) == len(expected), got
    for want, line in zip(expected, got):
        assert line.startswith(want), (want, line)


@settings(max_examples=300, deadline=None)
@given(cur=st.tuples(st.integers(3, 3), st.integers(3, 7), st.integers(0, 40)),
       tgt=st.tuples(st.integers(3, 3), st.integers(3, 7), st.integers(0, 40)))
def test_etcd_path_property(cur, tgt):
    """Allowed exactly when: the same minor, or the next one (into 3.6 from 3.5.20 on) - written independently here."""
    got = skew.etcd_path({"m": "%d.%d.%d" % cur}, "%d.%d.%d" % tgt)
    ok = cur[:2] == tgt[:2] or (tgt[1] == cur[1] + 1 and not (tgt[:2] == (3, 6) and cur < (3, 5, 20)))
    assert (got == []) == ok, (cur, tgt, got)


def test_etcd_upgrade_problems_filter_names_members_by_url():
    from ansible.errors import AnsibleFilterError

    from ansible_collections.mooring.cluster.plugins.filter.etcd import etcd_upgrade_problems
    members = [{"name": "cp1", "addresses": ["10.0.0.11"]}, {"name": "cp2", "addresses": ["10.0.0.12"]}]
    versions = {"https://10.0.0.11:2379": "3.5.19", "https://10.0.0.12:2379": "3.5.33", "https://10.0.0.13:2379": "3.4.9"}
    got = etcd_upgrade_problems(versions, "3.6.14", members=members)
    assert [line.split(":", 1)[0] for line in got] == ["cp1", "https"]  # an unknown URL keeps its URL
    assert etcd_upgrade_problems({}, "3.6.14") == []
    with pytest.raises(AnsibleFilterError, match="mapping"):
        etcd_upgrade_problems(["3.5.1"], "3.6.14")
    with pytest.raises(AnsibleFilterError, match="target etcd version"):
        etcd_upgrade_problems({"m": "3.5.33"}, "latest")
