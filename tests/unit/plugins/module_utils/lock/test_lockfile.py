# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lock file: determinism, digest, independence from key order and YAML formatting."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import (
    LockError,
    build_lock,
    dump_lock,
    load_lock,
    lock_digest,
)
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import parse_installer

SPEC = {
    "kubernetes": {"version": "1.35.x", "podCIDR": "10.32.0.0/16", "serviceCIDR": "10.96.0.0/16"},
    "etcd": {"version": "3.6.x", "topology": "external"},
    "containerd": {"version": "2.1.x"},
    "calico": {"version": "latest"},
    "metricsServer": {"version": "latest"},
}
CATALOG = load_catalog()


def _doc(spec):
    return {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "Installer", "metadata": {"name": "demo"}, "spec": spec}


def _lock_text(document):
    return dump_lock(build_lock(parse_installer(document), CATALOG))


def test_lock_contents():
    lock = build_lock(parse_installer(_doc(SPEC)), CATALOG)
    assert lock["addons"]["kubernetes"]["version"] == "1.35.8"
    assert lock["addons"]["kubernetes"]["requested"] == "1.35.x"
    assert lock["addons"]["etcd"]["options"] == {"topology": "external"}
    names = {a["name"] for a in lock["addons"]["kubernetes"]["artifacts"]}
    assert names == {"kubeadm", "kubelet", "kubectl", "crictl", "cni-plugins"}
    refs = [i["ref"] for i in lock["addons"]["kubernetes"]["images"]]
    assert "registry.k8s.io/kube-apiserver:v1.35.8" in refs
    assert lock["digest"] == lock_digest(lock)
    assert len(lock["digest"]) == 64 and len(lock["hash"]) == 7


def test_same_spec_same_catalog_byte_identical():
    assert _lock_text(_doc(SPEC)) == _lock_text(_doc(SPEC))


def _reorder(value, rnd):
    if isinstance(value, dict):
        keys = list(value)
        rnd.shuffle(keys)
        return {k: _reorder(value[k], rnd) for k in keys}
    return value


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(["block", "flow", "json"]))
def test_lock_independent_of_key_order_and_yaml_formatting(rnd, style):
    document = _reorder(_doc(SPEC), rnd)
    if style == "json":
        text = json.dumps(document, indent=1)
    else:
        text = yaml.safe_dump(document, default_flow_style=(style == "flow"), sort_keys=False)
    assert _lock_text(text) == _lock_text(_doc(SPEC))


def test_load_lock_roundtrip_and_tamper(tmp_path):
    path = tmp_path / "installer.lock.yaml"
    path.write_text(_lock_text(_doc(SPEC)))
    lock = load_lock(str(path))
    assert lock["addons"]["calico"]["version"] == "3.31.7"
    path.write_text(path.read_text().replace("1.35.8", "1.35.7", 1))
    with pytest.raises(LockError) as err:
        load_lock(str(path))
    assert "digest mismatch" in str(err.value)
