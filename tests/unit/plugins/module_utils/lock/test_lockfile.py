# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lock file: determinism, digest, independence from key order and YAML formatting; the shape
check that stops an edited lock whose digest was recomputed, and lock files that are not YAML."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import addon_contents, load_catalog
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import LockError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import (
    build_lock,
    check_shape,
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


# ------------------------------------------------------------------------------------ hostile input
def _lock():
    return build_lock(parse_installer(_doc(SPEC)), CATALOG)


def _write(path, lock, recompute=True):
    if recompute:
        lock["digest"] = lock_digest(lock)
    path.write_text(dump_lock(lock))
    return str(path)


def test_every_catalog_version_has_a_safe_shape():
    """The shape check refuses nothing the collection's catalog resolves to (every add-on, version, arch)."""
    for name in CATALOG.names():
        arches = CATALOG.addons[name]["architectures"]
        for version in CATALOG.versions(name):
            addon = dict(addon_contents(CATALOG, name, version, arches), version=version, requested=version,
                         category=CATALOG.category(name), options={})
            check_shape({"kind": "InstallerLock", "hash": "x", "digest": "0" * 64, "architectures": list(arches),
                         "addons": {name: addon}}, "t")


@pytest.mark.parametrize("edit,message", [
    (lambda lk: lk["addons"].update({"../../x": lk["addons"].pop("etcd")}), r"addons\.'\.\./\.\./x': must be a safe name"),
    (lambda lk: lk["addons"]["kubernetes"]["artifacts"][0].update(arch="../../../ESCAPED"),
     r"addons\.kubernetes\.artifacts\[0\]\.arch: must be a safe name .*, not '\.\./\.\./\.\./ESCAPED'"),
    (lambda lk: lk["addons"]["kubernetes"]["artifacts"][0].update(dest="../x"),
     r"artifacts\[0\]\.dest: must be a relative path of safe file names .*, not '\.\./x' \('\.\.'\)"),
    (lambda lk: lk["addons"]["kubernetes"]["images"][0].update(ref="/abs/x:1"), r"images\[0\]\.ref: must be an image reference"),
    (lambda lk: lk["addons"]["kubernetes"]["packages"].update(debian=["-oX=y"]), r"packages\.debian\[0\]: must be a Debian package name, not '-oX=y'"),
    (lambda lk: lk.update(addons=["etcd"]), r"addons: must be a mapping, not a list"),
    (lambda lk: lk["addons"]["etcd"].update(artifacts="x"), r"addons\.etcd\.artifacts: must be a list, not a string"),
    (lambda lk: lk.update(architectures="amd64"), r"architectures: must be a list, not a string"),
    (lambda lk: lk["addons"]["etcd"]["artifacts"][0].update(url="ftp://x/etcd.tgz"), r"url: must be a URL the bundle builder fetches"),
])
def test_recomputed_digest_does_not_pass_a_bad_shape(tmp_path, edit, message):
    lock = _lock()
    edit(lock)
    path = _write(tmp_path / "lock.yaml", lock)
    with pytest.raises(LockError, match=r"lock\.yaml: .*" + message):
        load_lock(path)


@pytest.mark.parametrize("content,message", [
    ("caf\xe9: 1\n".encode("latin-1"), r"not UTF-8 \(byte 0xe9"),
    ("\ufeffkind: InstallerLock\n".encode("utf-16"), r"UTF-16/32"),
    (b"kind: InstallerLock\x00\n", r"NUL byte"),
    (b"kind: InstallerLock\nmetadata: " + b"[" * 10000 + b"]" * 10000 + b"\n", r"nested deeper than 64"),
    (b"a: &a [1]\nkind: InstallerLock\nmetadata: {x: *a}\n", r"aliases \(\*name\) are not allowed"),
    (b"", r"not an installer lock"),
    (b"- 1\n", r"not an installer lock"),
    (b"kind: InstallerLock\nhash: x\naddons: {}\narchitectures: []\ndigest: 2024-01-01\n",
     r"digest: must be a sha256 \(64 hex digits\), not '2024-01-01'"),
    (b"kind: InstallerLock\nhash: x\naddons: {1: {}}\narchitectures: []\ndigest: x\n",
     r"addons\[1\]: must be a key that is a string, not a number"),
    (b"kind: InstallerLock\nhash: !!binary aGVsbG8=\naddons: {}\narchitectures: []\ndigest: x\n",
     r"hash: must be a JSON value, not a bytes"),
])
def test_load_lock_bad_files_one_line(tmp_path, content, message):
    path = tmp_path / "lock.yaml"
    path.write_bytes(content)
    with pytest.raises(LockError, match=message) as err:
        load_lock(str(path))
    assert "\n" not in str(err.value) and "lock.yaml" in str(err.value)


def test_load_lock_not_a_regular_file(tmp_path):
    os.mkfifo(str(tmp_path / "fifo"))
    (tmp_path / "dir").mkdir()
    for name, message in [("fifo", "not a regular file"), ("dir", "Is a directory"), ("missing", "No such file")]:
        with pytest.raises(LockError, match=message):
            load_lock(str(tmp_path / name))
