# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The values the playbooks take from a lock (lock_values), and the action that returns them."""

from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import layout
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.run.values import LockValuesError, lock_values
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import LockError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import (
    build_lock,
    dump_lock,
    load_lock,
    lock_digest,
)
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import parse_installer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
CATALOG = load_catalog()
SPEC = {
    "kubernetes": {"version": "1.35.x", "podCIDR": "10.32.0.0/16", "serviceCIDR": "10.96.0.0/16"},
    "etcd": {"version": "3.6.x", "topology": "external"},
    "containerd": {"version": "2.1.x"},
    "calico": {"version": "latest"},
    "metricsServer": {"version": "latest"},
}
GROUPS = {
    "all": ["cp1", "cp2", "w1", "e1", "x1"],
    "ungrouped": ["x1"],
    "control_plane": ["cp1", "cp2"],
    "etcd": ["cp1", "e1"],
    "workers": ["w1"],
}


def _lock(spec=None, architectures=("amd64",)):
    document = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "Installer", "metadata": {"name": "t"},
                "spec": spec or SPEC}
    return build_lock(parse_installer(document), CATALOG, architectures)


@pytest.fixture(scope="module")
def lock():
    return _lock()


# ------------------------------------------------------------------------------------------ fields
def test_every_field_of_a_real_catalog_lock(lock):
    values = lock_values(lock, control_plane_address="10.0.0.11")
    k8s = lock["addons"]["kubernetes"]
    assert values["digest"] == lock["digest"] == lock_digest(lock)
    assert values["kubernetes_version"] == k8s["version"] == "1.35.8"
    assert values["kubernetes_images"] == [image["ref"] for image in k8s["images"]]
    assert "registry.k8s.io/kube-apiserver:v1.35.8" in values["kubernetes_images"]
    assert values["kubernetes_options"] == k8s["options"] == {
        "podCIDR": "10.32.0.0/16", "serviceCIDR": "10.96.0.0/16", "clusterDomain": "cluster.local", "clusterName": "kubernetes"}
    assert values["cluster_name"] == "kubernetes"
    assert values["api_endpoint"] == "10.0.0.11:6443"
    assert values["etcd_topology"] == "external"
    assert values["etcd_backup"] is None
    assert values["containerd_config_version"] == 3  # containerd 2.1.9
    assert values["proxy"] is None
    assert values["addons"] == lock["addons"]
    assert values["boundary"] == {"artifacts": [], "images": []}
    assert values["boundary_missing"] == []
    assert values["kubeadm_ready"] is True
    assert values["plans"] == {}
    assert values["host_preflights"] == {}
    assert sorted(values) == sorted(["digest", "kubernetes_version", "kubernetes_images", "kubernetes_options",
                                     "cluster_name", "api_endpoint", "ha_endpoint", "etcd_topology", "etcd_backup",
                                     "containerd_config_version", "containerd_restrict_oom_score_adj", "cgroup_driver", "proxy", "addons",
                                     "boundary", "boundary_missing", "kubeadm_ready", "plans", "host_preflights",
                                     "installer_spec"])
    assert values["ha_endpoint"] is None
    assert json.loads(json.dumps(values)) == values  # plain data


def test_endpoint_name_and_topology_from_the_lock():
    spec = dict(SPEC, kubernetes=dict(SPEC["kubernetes"], controlPlaneEndpoint="api.example.test:6443", clusterName="prod-1"),
                etcd={"version": "3.6.x", "topology": "stacked"})
    values = lock_values(_lock(spec), control_plane_address="10.0.0.11")
    assert values["api_endpoint"] == "api.example.test:6443"  # the lock's wins over the address
    assert values["cluster_name"] == "prod-1"
    assert values["etcd_topology"] == "stacked"
    assert values["kubernetes_options"]["controlPlaneEndpoint"] == "api.example.test:6443"


def test_api_endpoint_without_the_lock_s_nor_an_address_is_none(lock):
    assert lock_values(lock)["api_endpoint"] is None
    assert lock_values(lock, control_plane_address="cp1.example.test")["api_endpoint"] == "cp1.example.test:6443"


def test_etcd_topology_defaults_to_external():
    spec = {k: v for k, v in SPEC.items() if k != "etcd"}
    lock = _lock(spec)
    assert "etcd" not in lock["addons"]
    assert lock_values(lock)["etcd_topology"] == "external"
    lock = _lock()
    del lock["addons"]["etcd"]["options"]
    assert lock_values(lock)["etcd_topology"] == "external"
    lock["addons"]["etcd"]["options"] = {}
    assert lock_values(lock)["etcd_topology"] == "external"


def test_etcd_backup_from_the_spec_with_keep_defaulted():
    spec = dict(SPEC, etcd={"version": "3.6.x", "backup": {"schedule": "*-*-* 00/12:00:00"}})
    assert lock_values(_lock(spec))["etcd_backup"] == {"schedule": "*-*-* 00/12:00:00", "keep": 5}
    spec = dict(SPEC, etcd={"version": "3.6.x", "backup": {"schedule": "minutely", "keep": 2}})
    assert lock_values(_lock(spec))["etcd_backup"] == {"schedule": "minutely", "keep": 2}


@pytest.mark.parametrize("backup, message", [
    ("daily", r"addons\.etcd\.options\.backup is not a mapping"),
    ({"keep": 3}, r"addons\.etcd\.options\.backup\.schedule is not a non-empty string"),
    ({"schedule": "daily\nExecStart=/bin/sh"}, r"backup\.schedule: .* is not a systemd calendar expression"),
    ({"schedule": "daily", "keep": 0}, r"backup\.keep: 0 is not a positive integer"),
    ({"schedule": "daily", "keep": True}, r"backup\.keep: True is not a positive integer"),
])
def test_a_lock_with_a_bad_etcd_backup_is_refused_naming_the_field(backup, message):
    lock = _lock(dict(SPEC, etcd={"version": "3.6.x"}))
    lock["addons"]["etcd"]["options"]["backup"] = backup
    with pytest.raises(LockError, match=message):
        lock_values(lock)


@pytest.mark.parametrize("requested, config_version", [
    ("1.7.x", 2),
    ("2.0.x", 2),  # 2.0's version 3 has no cni.bin_dirs; it reads version 2
    ("2.1.x", 3),
    ("2.3.x", 3),
])
def test_containerd_config_version_from_the_locked_containerd(requested, config_version):
    lock = _lock(dict(SPEC, containerd={"version": requested}))
    assert lock["addons"]["containerd"]["version"].startswith(requested[:-1])  # the catalog's newest of that minor
    assert lock_values(lock)["containerd_config_version"] == config_version


@pytest.mark.parametrize("version, config_version", [("1.6.20", 2), ("v2.1.0", 3), ("2.10", 3), ("3.0.0-rc.1", 3)])
def test_containerd_config_version_of_any_version_string(lock, version, config_version):
    lock = copy.deepcopy(lock)
    lock["addons"]["containerd"]["version"] = version  # the lab's overlay pins Debian's 1.6.20
    assert lock_values(lock)["containerd_config_version"] == config_version


def test_containerd_config_version_without_containerd_is_2():
    lock = _lock({k: v for k, v in SPEC.items() if k != "containerd"})
    assert "containerd" not in lock["addons"]
    assert lock_values(lock)["containerd_config_version"] == 2


def test_the_proxy_with_the_cluster_s_own_addresses_never_proxied():
    spec = dict(SPEC, proxy={"http": "http://proxy.example:3128", "noProxy": [".corp"]},
                kubernetes=dict(SPEC["kubernetes"], controlPlaneEndpoint="api.example.test:6443"))
    lock = _lock(spec)
    assert lock["proxy"] == {"http": "http://proxy.example:3128", "noProxy": [".corp"]}
    proxy = lock_values(lock, addresses=["10.0.0.11", "10.0.0.12", "10.0.0.11"])["proxy"]
    assert proxy["http"] == proxy["https"] == "http://proxy.example:3128"
    assert proxy["no_proxy"] == ["localhost", "127.0.0.1", "::1", ".corp", "10.32.0.0/16", "10.96.0.0/16", ".svc",
                                 ".cluster.local", "api.example.test", "10.0.0.11", "10.0.0.12"]
    assert proxy["env"]["NO_PROXY"] == proxy["env"]["no_proxy"] == ",".join(proxy["no_proxy"])
    assert proxy["env"]["HTTPS_PROXY"] == proxy["env"]["https_proxy"] == "http://proxy.example:3128"
    env_file, dropin = proxy["files"]["env_file"], proxy["files"]["dropin"]
    assert env_file["path"] == "/etc/mooring/proxy.env"
    lines = env_file["content"].splitlines()
    assert 'HTTP_PROXY="http://proxy.example:3128"' in lines and 'no_proxy="%s"' % proxy["env"]["NO_PROXY"] in lines
    assert len(lines) == 7
    assert dropin.splitlines()[1:] == ["[Service]", "EnvironmentFile=/etc/mooring/proxy.env"]


def test_the_environment_file_escapes_quotes_and_backslashes():
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.run.values import proxy_files
    text = proxy_files({"HTTP_PROXY": 'http://u:p"x\\@h:1'})["env_file"]["content"]
    assert text.splitlines()[1] == 'HTTP_PROXY="http://u:p\\"x\\\\@h:1"'


def test_cluster_name_defaults_to_kubernetes(lock):
    lock = copy.deepcopy(lock)
    del lock["addons"]["kubernetes"]["options"]["clusterName"]
    assert lock_values(lock)["cluster_name"] == "kubernetes"


def test_boundary_names_what_kubeadm_lacks(lock):
    lock = copy.deepcopy(lock)
    k8s = lock["addons"]["kubernetes"]
    k8s["artifacts"] = [a for a in k8s["artifacts"] if a["name"] in ("cni-plugins", "kubectl")]
    k8s["images"] = [i for i in k8s["images"] if "pause" in i["ref"]]
    values = lock_values(lock)
    assert values["boundary"] == layout.boundary(lock) == {
        "artifacts": ["kubeadm", "kubelet"], "images": ["kube-apiserver", "kube-controller-manager", "kube-scheduler"]}
    assert values["boundary_missing"] == ["kubeadm", "kubelet", "kube-apiserver", "kube-controller-manager",
                                          "kube-scheduler"]
    assert values["kubeadm_ready"] is False


def test_boundary_is_per_architecture():
    lock = _lock(architectures=("arm64",))
    assert lock_values(lock, arch="arm64")["kubeadm_ready"] is True
    values = lock_values(lock)  # amd64: the lock has no amd64 artifacts
    assert values["boundary"] == {"artifacts": ["kubeadm", "kubelet", "cni-plugins"], "images": []}
    assert values["kubeadm_ready"] is False


def test_plans_per_host_as_the_install_plan_filter(lock):
    plans = lock_values(lock, groups=GROUPS)["plans"]
    assert sorted(plans) == ["cp1", "cp2", "e1", "w1", "x1"]
    assert plans["cp1"] == layout.install_plan(lock, ["control_plane", "etcd"], first_control_plane=True)
    assert plans["cp1"][-1] == "kubeadm init"
    assert plans["cp2"] == layout.install_plan(lock, ["control_plane"])
    assert plans["cp2"][-1] == "kubeadm join --control-plane"
    assert plans["w1"][-1] == "kubeadm join"
    assert plans["e1"] == layout.install_plan(lock, ["etcd"])
    assert plans["e1"][-1].startswith("etcd 3.6.")
    assert plans["x1"] == layout.install_plan(lock, ["ungrouped"])
    assert not any("kubeadm" in line for line in plans["x1"])


def test_plans_without_a_control_plane_group_init_nowhere(lock):
    plans = lock_values(lock, groups={"all": ["w1"], "workers": ["w1"]})["plans"]
    assert plans == {"w1": layout.install_plan(lock, ["workers"])}


@pytest.mark.parametrize("groups, message", [
    ({"all": ["w1"], "control_plane": [], "workers": ["w1"]}, "groups: control_plane is empty"),
    ({"all": "w1"}, "groups.all: not a list of host names"),
])
def test_plans_refuse_bad_groups(lock, groups, message):
    with pytest.raises(LockValuesError, match=message):
        lock_values(lock, groups=groups)


def test_the_lock_is_not_changed(lock):
    before = copy.deepcopy(lock)
    values = lock_values(lock, control_plane_address="10.0.0.11", groups=GROUPS)
    assert lock == before
    assert values["kubernetes_options"] == before["addons"]["kubernetes"]["options"]


# ------------------------------------------------------------------------------------ malformed
def _set(path, value):
    def change(lock):
        *parents, last = path
        node = lock
        for key in parents:
            node = node[key]
        node[last] = value
    return change


def _delete(path):
    def change(lock):
        *parents, last = path
        node = lock
        for key in parents:
            node = node[key]
        del node[last]
    return change


K8S = ("addons", "kubernetes")


@pytest.mark.parametrize("change, message", [
    (_delete(("addons",)), "addons is missing"),
    (_set(("addons",), []), "addons is not a mapping"),
    (_delete(("digest",)), "digest is missing"),
    (_set(("digest",), ""), "digest is not a non-empty string"),
    (_delete(K8S), "addons.kubernetes is missing"),
    (_set(K8S, "1.35.8"), "addons.kubernetes is not a mapping"),
    (_delete(K8S + ("version",)), "addons.kubernetes.version is missing"),
    (_set(K8S + ("version",), 1.35), "addons.kubernetes.version is not a non-empty string"),
    (_set(K8S + ("version",), "latest"), "addons.kubernetes.version: 'latest' is not a Kubernetes version"),
    (_delete(K8S + ("options",)), "addons.kubernetes.options is missing"),
    (_set(K8S + ("options",), None), "addons.kubernetes.options is not a mapping"),
    (_delete(K8S + ("images",)), "addons.kubernetes.images is missing"),
    (_set(K8S + ("images",), None), "addons.kubernetes.images is not a list"),
    (_set(K8S + ("images",), "registry.k8s.io/pause:3.10.1"), "addons.kubernetes.images is not a list"),
    (_set(K8S + ("images",), ["registry.k8s.io/pause:3.10.1"]), r"addons.kubernetes.images\[0\] is not a mapping"),
    (_set(K8S + ("images",), [{"digest": None}]), r"addons.kubernetes.images\[0\].ref is missing"),
    (_set(K8S + ("images",), [{"ref": None}]), r"addons.kubernetes.images\[0\].ref is not a non-empty string"),
    (_set(K8S + ("options", "controlPlaneEndpoint"), ""),
     "addons.kubernetes.options.controlPlaneEndpoint is not a non-empty string"),
    (_set(K8S + ("options", "clusterName"), None), "addons.kubernetes.options.clusterName is not a non-empty string"),
    (_set(("addons", "etcd"), None), "addons.etcd is not a mapping"),
    (_set(("addons", "etcd", "options"), "stacked"), "addons.etcd.options is not a mapping"),
    (_set(("addons", "etcd", "options", "topology"), "hybrid"), "addons.etcd.options.topology: 'hybrid' is not external or stacked"),
    (_set(("addons", "containerd", "version"), None), "addons.containerd.version is not a non-empty string"),
    (_set(("addons", "containerd", "version"), "latest"), "addons.containerd.version: 'latest' is not a containerd version"),
    (_set(("addons", "calico", "artifacts"), {}), "addons.calico.artifacts is not a list"),
    (_set(("addons", "calico", "artifacts"), ["calico.yaml"]), r"addons.calico.artifacts\[0\] is not a mapping"),
    (_set(K8S + ("artifacts",), [None]), r"addons.kubernetes.artifacts\[0\] is not a mapping"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_a_malformed_lock_is_refused_naming_the_field(lock, change, message):
    lock = copy.deepcopy(lock)
    change(lock)
    with pytest.raises(LockError, match="^installer.lock.yaml: " + message) as info:
        lock_values(lock, control_plane_address="10.0.0.11", groups=GROUPS, where="installer.lock.yaml")
    assert isinstance(info.value, MooringError)
    assert "\n" not in str(info.value)
    assert len(info.value.problems) == 1


@pytest.mark.parametrize("value", [None, [], "kind: InstallerLock"])
def test_not_a_lock(value):
    with pytest.raises(LockError, match="^lock: the lock is not a mapping$"):
        lock_values(value)


# -------------------------------------------------------------------------------------- action
def test_the_stub_documents_every_returned_key(lock):
    path = os.path.join(ROOT, "plugins", "modules", "lock_values.py")
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    text = next(node.value.value for node in tree.body
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "RETURN")
    # `lock` is the action's (with_lock: the lock itself), not lock_values()'s.
    assert sorted(yaml.safe_load(text)) == sorted(list(lock_values(lock)) + ["lock"])


PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: The values of the lock
      mooring.cluster.lock_values:
        path: "{{ lock }}"
        control_plane_address: 10.0.0.11
        groups: {all: [cp1, w1], control_plane: [cp1], workers: [w1]}
      register: values
    - name: The same in check mode
      mooring.cluster.lock_values:
        path: "{{ lock }}"
      check_mode: true
      register: checked
    - name: A tampered lock
      mooring.cluster.lock_values:
        path: "{{ tampered }}"
      register: tampered_result
      ignore_errors: true
    - name: Write what the action returned
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'values': values, 'checked': checked, 'tampered': tampered_result} | to_json }}"
        mode: "0600"
"""


@pytest.mark.slow
def test_the_action_returns_what_lock_values_returns(tmp_path, lock):
    path = tmp_path / "installer.lock.yaml"
    path.write_text(dump_lock(lock))
    tampered = tmp_path / "tampered.lock.yaml"
    tampered.write_text(dump_lock(lock).replace("10.32.0.0/16", "10.33.0.0/16"))
    (tmp_path / "play.yml").write_text(textwrap.dedent(PLAY))
    run = subprocess.run(
        [os.path.join(BIN, "ansible-playbook"), str(tmp_path / "play.yml"), "-e", "lock=%s" % path,
         "-e", "tampered=%s" % tampered, "-e", "out=%s" % (tmp_path / "out.json")],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = json.loads((tmp_path / "out.json").read_text())
    expected = lock_values(load_lock(str(path)), control_plane_address="10.0.0.11",
                           groups={"all": ["cp1", "w1"], "control_plane": ["cp1"], "workers": ["w1"]})
    assert {k: out["values"][k] for k in expected} == expected
    assert out["values"]["changed"] is False
    assert {k: out["checked"][k] for k in expected} == lock_values(load_lock(str(path)))
    assert out["checked"]["changed"] is False
    assert out["tampered"]["failed"] is True
    assert "digest mismatch" in out["tampered"]["msg"] and "\n" not in out["tampered"]["msg"]


HOST_PREFLIGHT = {"apiVersion": "troubleshoot.sh/v1beta2", "kind": "HostPreflight", "metadata": {"name": "x"},
                  "spec": {"collectors": [{"cpu": {}}],
                           "analyzers": [{"cpu": {"outcomes": [{"fail": {"when": "count < 2", "message": "two"}}]}}]}}


def test_a_kurl_specs_host_preflights_reach_the_lock_and_its_values(tmp_path):
    """kURL's spec.kurl.hostPreflights (one HostPreflight) and hostPreflightEnforceWarnings: carried in the lock
    (hostPreflights, survives a dump and a load with its digest) and returned by lock_values for the preflight
    stage; a lock without them has none and an unchanged shape."""
    document = {"apiVersion": "cluster.kurl.sh/v1beta1", "kind": "Installer", "metadata": {"name": "k"},
                "spec": {"kubernetes": {"version": "1.35.x"}, "containerd": {"version": "2.1.x"}, "calico": {"version": "latest"},
                         "kurl": {"hostPreflights": HOST_PREFLIGHT, "hostPreflightEnforceWarnings": True}}}
    installer = parse_installer(document)
    assert installer.host_preflights == {"documents": [HOST_PREFLIGHT], "enforceWarnings": True}
    assert not [w for w in installer.warnings if "spec.kurl" in w]
    lock = build_lock(installer, CATALOG, ("amd64",))
    path = tmp_path / "installer.lock.yaml"
    path.write_text(dump_lock(lock))
    again = load_lock(str(path))
    assert again["hostPreflights"] == {"documents": [HOST_PREFLIGHT], "enforceWarnings": True}
    assert lock_values(again)["host_preflights"] == again["hostPreflights"]
    plain = _lock()
    assert "hostPreflights" not in plain and lock_values(plain)["host_preflights"] == {}
    mooring = parse_installer({"apiVersion": "cluster.mooring.io/v1beta1", "kind": "Installer",
                               "spec": dict(SPEC, hostPreflights={"documents": [HOST_PREFLIGHT, HOST_PREFLIGHT]})})
    assert mooring.host_preflights == {"documents": [HOST_PREFLIGHT, HOST_PREFLIGHT], "enforceWarnings": False}
    assert "hostPreflights" not in mooring.addons
