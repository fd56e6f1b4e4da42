# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm configuration per API version, the command lines and decisions, the kubeconfigs from the PKI.

The roles run these for real on the lab's cluster (molecule/install, make demo); here every version and
every branch is pinned without one.
"""

from __future__ import annotations

import base64
import json

import kubernetes_validate
import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm as k
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadmconfig as kc
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadmplan as kp
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import addon_contents, load_catalog

CATALOG = load_catalog()
CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _cluster(version="1.34.3", **kw):
    images = [i["ref"] for i in addon_contents(CATALOG, "kubernetes", version, ["amd64"])["images"]]
    c = {"kubernetes_version": version, "control_plane_endpoint": "10.0.0.10:6443", "pod_cidr": "10.32.0.0/16",
         "service_cidr": "10.96.0.0/16", "images": images,
         "etcd_endpoints": ["https://10.0.0.21:2379", "https://10.0.0.22:2379"],
         "api_server_extra_args": {"audit-log-maxage": "30", "anonymous-auth": "true"},
         "kubelet": {"cgroupDriver": "systemd", "maxPods": 200, "failSwapOn": True}}
    c.update(kw)
    return c


NODE = {"name": "cp1", "advertise_address": "10.0.0.11"}


@pytest.mark.parametrize("version,api", [("1.27.0", "v1beta3"), ("1.30.9", "v1beta3"), ("v1.31.0", "v1beta4"),
                                         ("1.36.4", "v1beta4")])
def test_api_version_by_minor(version, api):
    assert k.api_version(version) == "kubeadm.k8s.io/" + api


@pytest.mark.parametrize("bad", ["1.26.3", "1.31", "latest", ""])
def test_api_version_refuses(bad):
    with pytest.raises(k.KubeadmError):
        k.api_version(bad)


def test_extra_args_shape_differs_between_v1beta3_and_v1beta4():
    args = {"b": "2", "a": 1}
    assert kc.extra_args(args, "kubeadm.k8s.io/v1beta3") == {"a": "1", "b": "2"}
    assert kc.extra_args(args, "kubeadm.k8s.io/v1beta4") == [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}]


@pytest.mark.parametrize("version", list(CATALOG.versions("kubernetes")))
def test_every_catalog_version_renders_v1beta4_matching_the_bundle_images(version):
    out = kc.render_node_config(_cluster(version), NODE, "control_plane")
    assert out["problems"] == []
    init, cluster = out["init"][0], out["init"][1]
    assert init["apiVersion"] == cluster["apiVersion"] == "kubeadm.k8s.io/v1beta4"
    assert cluster["kubernetesVersion"] == "v" + version
    assert cluster["imageRepository"] == "registry.k8s.io"
    coredns = [i for i in _cluster(version)["images"] if "/coredns/" in i][0]
    assert "%s/coredns:%s" % (cluster["dns"]["imageRepository"], cluster["dns"]["imageTag"]) == coredns
    assert cluster["apiServer"]["extraArgs"] == [{"name": "anonymous-auth", "value": "true"},
                                                 {"name": "audit-log-maxage", "value": "30"}]
    assert "timeoutForControlPlane" not in cluster["apiServer"]
    assert init["timeouts"] == {"controlPlaneComponentHealthCheck": "4m0s"}
    assert init["nodeRegistration"]["kubeletExtraArgs"] == [{"name": "node-ip", "value": "10.0.0.11"}]


def test_v1beta3_shape_for_older_minor():
    c = _cluster("1.34.3", kubernetes_version="1.30.6", images=[])
    out = kc.render_node_config(c, NODE, "control_plane")
    init, cluster = out["init"][:2]
    assert cluster["apiVersion"] == "kubeadm.k8s.io/v1beta3"
    assert cluster["apiServer"]["extraArgs"] == {"anonymous-auth": "true", "audit-log-maxage": "30"}
    assert cluster["apiServer"]["timeoutForControlPlane"] == "4m0s"
    assert "timeouts" not in init
    assert init["nodeRegistration"]["kubeletExtraArgs"] == {"node-ip": "10.0.0.11"}
    join = out["join"][0]
    assert join["discovery"]["timeout"] == "5m0s" and "timeouts" not in join


def test_external_etcd_uses_pki_client_certificates():
    cluster = kc.render_node_config(_cluster(), NODE, "control_plane")["init"][1]
    assert cluster["etcd"] == {"external": {
        "endpoints": ["https://10.0.0.21:2379", "https://10.0.0.22:2379"],
        "caFile": "/etc/kubernetes/pki/etcd/ca.crt",
        "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
        "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key"}}
    assert cluster["certificatesDir"] == "/etc/kubernetes/pki"
    assert cluster["networking"] == {"podSubnet": "10.32.0.0/16", "serviceSubnet": "10.96.0.0/16",
                                     "dnsDomain": "cluster.local"}


def test_stacked_etcd():
    c = _cluster(etcd_topology="stacked", etcd_endpoints=[])
    c["images"] = c["images"] + ["registry.k8s.io/etcd:3.6.4-0"]
    cluster = kc.render_node_config(c, NODE, "control_plane")["init"][1]
    assert cluster["etcd"] == {"local": {"dataDir": "/var/lib/etcd", "imageTag": "3.6.4-0"}}


def test_join_configuration_has_no_secret_and_pins_discovery_file():
    out = kc.render_node_config(_cluster(), {"name": "w1", "advertise_address": "10.0.0.31"}, "worker")
    assert out["init"] is None
    join, kubelet = out["join"]
    assert join["discovery"] == {"file": {"kubeConfigPath": "/etc/kubernetes/mooring/discovery.conf"}}
    assert join["nodeRegistration"]["taints"] == []
    assert "controlPlane" not in join
    assert "token" not in json.dumps(join)
    assert kubelet["maxPods"] == 200 and kubelet["cgroupDriver"] == "systemd"
    cp_join = kc.render_node_config(_cluster(), NODE, "control_plane")["join"][0]
    assert cp_join["controlPlane"] == {"localAPIEndpoint": {"bindPort": 6443, "advertiseAddress": "10.0.0.11"}}
    assert cp_join["nodeRegistration"]["taints"] == [k.CONTROL_PLANE_TAINT]


def test_bad_input_lists_every_problem():
    with pytest.raises(k.KubeadmError) as exc:
        kc.render_node_config(_cluster(kubernetes_version="1.31", etcd_endpoints=["http://x:2379"],
                                       control_plane_endpoint=""), NODE, "control_plane")
    text = str(exc.value)
    assert "1.31" in text and "https://" in text and "controlPlaneEndpoint" in text


def test_image_tag_mismatch_is_reported():
    c = _cluster()
    c["images"] = ["registry.k8s.io/kube-apiserver:v1.34.0"]
    assert "does not match" in kc.render_node_config(c, NODE, "control_plane")["problems"][0]


def test_yaml_stream_is_deterministic_and_parses():
    docs = kc.render_node_config(_cluster(), NODE, "control_plane")["init"]
    text = kc.to_yaml_stream(docs)
    assert text == kc.to_yaml_stream(docs)
    # Every document has its kind: no empty one (kubeadm refuses it, "kind and apiVersion is mandatory").
    assert list(yaml.safe_load_all(text)) == docs


def test_kubelet_configuration_is_valid_component_config():
    kubelet = kc.render_node_config(_cluster(), NODE, "control_plane")["init"][2]
    assert kubelet["apiVersion"] == "kubelet.config.k8s.io/v1beta1"
    assert kubelet["failSwapOn"] is True


def test_discovery_kubeconfig():
    tok = k.new_token()
    text = k.discovery_kubeconfig("10.0.0.10:6443", CA, tok)
    doc = json.loads(text)
    assert doc["clusters"][0]["cluster"]["server"] == "https://10.0.0.10:6443"
    assert base64.b64decode(doc["clusters"][0]["cluster"]["certificate-authority-data"]).decode() == CA
    assert doc["users"][0]["user"]["token"] == tok
    with pytest.raises(k.KubeadmError):
        k.discovery_kubeconfig("h:6443", CA, "not-a-token")
    with pytest.raises(k.KubeadmError):
        k.discovery_kubeconfig("h:6443", "garbage", tok)


def test_new_tokens_are_fresh_and_well_formed():
    tokens = {k.new_token() for _i in range(50)}
    assert len(tokens) == 50
    assert all(k.check_token(t) for t in tokens)


# ---------------------------------------------------------------- contract tests: argv

def test_contract_init_and_join_argv():
    assert k.init_argv("/etc/kubernetes/mooring/kubeadm-init.yaml") == [
        "kubeadm", "init", "--config", "/etc/kubernetes/mooring/kubeadm-init.yaml", "--skip-token-print"]
    assert k.join_argv("/etc/kubernetes/mooring/kubeadm-join.yaml", kubeadm="/usr/local/bin/kubeadm") == [
        "/usr/local/bin/kubeadm", "join", "--config", "/etc/kubernetes/mooring/kubeadm-join.yaml"]


def test_contract_token_create_argv():
    assert k.token_create_argv("abcdef.0123456789abcdef", ttl="30m") == [
        "kubeadm", "token", "create", "abcdef.0123456789abcdef", "--ttl", "30m",
        "--kubeconfig", "/etc/kubernetes/admin.conf", "--description", "mooring.cluster join run",
        "--usages", "signing,authentication", "--groups", "system:bootstrappers:kubeadm:default-node-token"]


def test_contract_upgrade_argv():
    assert k.upgrade_apply_argv("1.35.2") == ["kubeadm", "upgrade", "apply", "v1.35.2", "--yes",
                                              "--certificate-renewal=false"]
    assert k.upgrade_node_argv() == ["kubeadm", "upgrade", "node", "--certificate-renewal=false"]
    assert k.upgrade_node_argv(ignore_preflight_errors=["SystemVerification"])[-1] == \
        "--ignore-preflight-errors=SystemVerification"
    assert k.upgrade_apply_argv("1.35.2", ignore_preflight_errors=["A", "B"])[-1] == "--ignore-preflight-errors=A,B"


def test_contract_drain_uncordon_delete_reset_argv():
    assert k.drain_argv("w1", timeout=120) == [
        "kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "drain", "w1", "--ignore-daemonsets",
        "--delete-emptydir-data", "--force", "--timeout=120s"]
    assert k.uncordon_argv("w1") == ["kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "uncordon", "w1"]
    assert k.delete_node_argv("w1") == ["kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "delete", "node",
                                        "w1", "--ignore-not-found", "--wait=true"]
    assert k.reset_argv() == ["kubeadm", "reset", "--force", "--cleanup-tmp-dir", "--cert-dir", k.RESET_NO_CERT_DIR,
                              "--skip-phases", "remove-etcd-member"]
    assert k.reset_argv(stacked_etcd_cert_dir="/etc/kubernetes/pki") == [
        "kubeadm", "reset", "--force", "--cleanup-tmp-dir", "--cert-dir", "/etc/kubernetes/pki"]


# ---------------------------------------------------------------- contract tests: decisions

def S(binaries=True, admin=False, kubelet=False, ready=None):
    return {"binaries": binaries, "admin_conf": admin, "kubelet_conf": kubelet, "api_ready": ready}


CP = ["cp1", "cp2", "cp3"]
W = ["w1", "w2"]


@pytest.mark.parametrize("name,states,only,expected", [
    ("fresh cluster: first cp inits, others join",
     {"cp1": S(), "cp2": S(), "cp3": S(), "w1": S(), "w2": S()}, None,
     {"cp1": "init", "cp2": "join_control_plane", "cp3": "join_control_plane", "w1": "join_worker",
      "w2": "join_worker"}),
    ("re-run on a complete cluster: nothing to do",
     {h: S(admin=h in CP, kubelet=True, ready=h in CP) for h in CP + W}, None,
     {h: "member" for h in CP + W}),
    ("first cp lost its state, cluster alive on cp2: cp1 joins, no second init",
     {"cp1": S(), "cp2": S(admin=True, kubelet=True, ready=True), "cp3": S(admin=True, kubelet=True, ready=True),
      "w1": S(kubelet=True), "w2": S()}, None,
     {"cp1": "join_control_plane", "cp2": "member", "cp3": "member", "w1": "member", "w2": "join_worker"}),
    ("join playbook limited to w2: others untouched",
     {"cp1": S(admin=True, kubelet=True, ready=True), "cp2": S(), "cp3": S(), "w1": S(), "w2": S()}, ["w2"],
     {"cp1": "member", "cp2": "untouched", "cp3": "untouched", "w1": "untouched", "w2": "join_worker"}),
    ("no binaries: blocked, not pretended",
     {"cp1": S(binaries=False), "cp2": S(binaries=False), "cp3": S(binaries=False), "w1": S(binaries=False),
      "w2": S(binaries=False)}, None,
     {h: "blocked" for h in CP + W}),
])
def test_contract_plan_cluster(name, states, only, expected):
    plan = kp.plan_cluster(states, CP, W, only=only)
    assert {h: p["action"] for h, p in plan["hosts"].items()} == expected, name
    assert len([p for p in plan["hosts"].values() if p["action"] == "init"]) <= 1
    assert len(kp.plan_lines(plan)) == len(CP + W)
    if plan["init_host"]:
        assert plan["token_host"] == plan["init_host"]
    elif plan["cluster_exists"]:
        assert plan["hosts"][plan["token_host"]]["action"] == "member" and plan["token_host"] in CP


def test_contract_join_partial_view():
    """The join playbook reads only the new host and the first control plane: the others are listed, not read."""
    cp1 = S(admin=True, kubelet=True, ready=True)
    plan = kp.plan_cluster({"cp1": cp1, "w2": S()}, CP, W, only=["w2"])
    assert {h: p["action"] for h, p in plan["hosts"].items()} == {
        "cp1": "member", "cp2": "untouched", "cp3": "untouched", "w1": "untouched", "w2": "join_worker"}
    assert [plan["token_host"]] == ["cp1"] and "not contacted" in plan["hosts"]["w1"]["reason"]
    assert "not contacted" not in plan["hosts"]["cp1"]["reason"]
    # A new control plane never creates a second cluster when the contacted control plane does not answer.
    plan = kp.plan_cluster({"cp1": S(), "cp3": S()}, CP, W, only=["cp3"])
    assert plan["init_host"] is None and plan["hosts"]["cp3"]["action"] == "blocked"
    assert "a join needs a running cluster" in plan["hosts"]["cp3"]["reason"]
    # The join hosts themselves must have been read, and be in the inventory's groups.
    with pytest.raises(k.KubeadmError, match="no state gathered for w2"):
        kp.plan_cluster({"cp1": cp1}, CP, W, only=["w2"])
    with pytest.raises(k.KubeadmError, match="join_hosts: w9 not in the inventory groups"):
        kp.plan_cluster({"cp1": cp1, "w9": S()}, CP, W, only=["w9"])
    # Without only (install) a missing state is still an error.
    with pytest.raises(k.KubeadmError, match="no state gathered for cp2"):
        kp.plan_cluster({"cp1": cp1, "w2": S()}, CP, W)


def test_contract_refuses_init_over_stale_admin_conf():
    states = {"cp1": S(admin=True, kubelet=True, ready=False), "cp2": S(), "cp3": S(), "w1": S(), "w2": S()}
    with pytest.raises(k.KubeadmError, match="admin.conf exists but the API server does not answer"):
        kp.plan_cluster(states, CP, W)


def test_contract_missing_state_or_empty_control_plane():
    with pytest.raises(k.KubeadmError, match="no state gathered for w2"):
        kp.plan_cluster({"cp1": S(), "w1": S()}, ["cp1"], ["w1", "w2"])
    with pytest.raises(k.KubeadmError, match="control_plane"):
        kp.plan_cluster({}, [], [])


def test_contract_workers_cannot_join_nothing():
    states = {"cp1": S(binaries=False), "w1": S()}
    with pytest.raises(k.KubeadmError, match="w1 cannot join"):
        kp.plan_cluster(states, ["cp1"], ["w1"])


def test_an_earlier_pod_networks_traces_go_before_a_fresh_init_or_join_only():
    traces = ["cni0", "flannel.1", "/var/lib/cni"]
    cp1 = S(admin=True, kubelet=True, ready=True)
    states = {"cp1": dict(cp1, pod_network_traces=traces), "cp2": dict(S(), pod_network_traces=traces),
              "cp3": dict(S(kubelet=True), member=False, pod_network_traces=traces), "w1": dict(S(), pod_network_traces=traces),
              "w2": S()}
    plan = kp.plan_cluster(states, CP, W)
    got = {h: (p["action"], p["pod_network_traces"]) for h, p in plan["hosts"].items()}
    assert got == {
        "cp1": ("member", []),                   # a member's network is this cluster's
        "cp2": ("join_control_plane", traces),
        "cp3": ("join_control_plane", []),       # a resumed join: its kubelet may run this cluster's pods already
        "w1": ("join_worker", traces),
        "w2": ("join_worker", [])}
    assert plan["hosts"]["w1"]["reason"] == ("joins as a worker; first removes what an earlier pod network left: "
                                             "cni0, flannel.1, /var/lib/cni")
    assert "earlier pod network" not in plan["hosts"]["cp3"]["reason"]
    # the host that creates the cluster too
    plan = kp.plan_cluster({"cp1": dict(S(), pod_network_traces=["cni0"]), "w1": S()}, ["cp1"], ["w1"])
    assert plan["hosts"]["cp1"]["action"] == "init" and plan["hosts"]["cp1"]["pod_network_traces"] == ["cni0"]
    # the join playbook does not touch hosts outside its limit, whatever they carry
    plan = kp.plan_cluster({"cp1": cp1, "w1": dict(S(), pod_network_traces=traces), "w2": S()}, CP, W, only=["w2"])
    assert plan["hosts"]["w1"]["pod_network_traces"] == []


def test_pod_network_traces_are_read_from_the_hosts_links_and_directories(tmp_path):
    net = tmp_path / "net"
    for name in ("lo", "eth0", "cni0", "flannel.1", "flannel-v6.1", "kube-ipvs0", "nodelocaldns", "cni-podman0",
                 "flannel", "cni0x", "veth1234"):
        (net / name).mkdir(parents=True)
    state = tmp_path / "cni"
    state.mkdir()
    assert k.pod_network_traces(str(net), (str(state), str(tmp_path / "flannel"))) == [
        "cni0", "flannel-v6.1", "flannel.1", "kube-ipvs0", "nodelocaldns", str(state)]
    assert k.pod_network_traces(str(tmp_path / "no-such"), ()) == []


def _role_tasks(*parts):
    import os

    with open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles", "kubeadm", "tasks",
                           *parts)) as f:
        return yaml.safe_load(f)


def test_contract_the_roles_removal_removes_what_the_state_reads():
    """pod_network.yml's shell deletes the links kubeadm.POD_NETWORK_LINKS matches and the directories the state
    reads; the kubelet's unit only for reset. Reset and a fresh init or join run that one task."""
    from jinja2 import Environment

    task = _role_tasks("pod_network.yml")[0]
    cmd = task["ansible.builtin.shell"]["cmd"]
    assert "grep -E '%s'" % k.POD_NETWORK_LINKS.pattern in cmd
    for d in k.POD_NETWORK_DIRS:
        assert " %s " % d in cmd
    env = Environment(autoescape=False)  # noqa: S701 (a shell script, not HTML)
    env.filters["bool"] = bool
    for unit, present in ((True, True), (False, False)):
        got = env.from_string(cmd).render(__kubeadm_traces_kubelet_unit=unit)
        assert ("systemctl disable --now kubelet" in got) is present
    reset = next(t for t in _role_tasks("reset.yml") if t.get("ansible.builtin.import_tasks") == "pod_network.yml")
    assert reset["vars"] == {"__kubeadm_traces_kubelet_unit": True}
    run = next(t for t in _role_tasks("run.yml") if t.get("ansible.builtin.import_tasks") == "pod_network.yml")
    assert "vars" not in run and "pod_network_traces" in run["when"]


@pytest.mark.parametrize("cur,tgt,action", [("1.34.3", "1.34.3", "none"), ("1.34.3", "1.34.5", "upgrade"),
                                            ("1.34.11", "1.35.0", "upgrade")])
def test_contract_upgrade_step(cur, tgt, action):
    assert kp.upgrade_step(cur, tgt)["action"] == action


def test_contract_upgrade_refuses_skip_and_downgrade():
    with pytest.raises(k.KubeadmError, match="1.35.x -> 1.36.x"):
        kp.upgrade_step("1.34.3", "1.36.1")
    with pytest.raises(k.KubeadmError, match="downgrades"):
        kp.upgrade_step("1.35.1", "1.34.9")


def test_contract_upgrade_order():
    batches = kp.upgrade_batches(["cp1", "cp2", "cp3"], ["w1", "w2", "w3", "cp1"], batch_size=2)
    assert batches == [{"hosts": ["cp1"], "command": "apply"}, {"hosts": ["cp2"], "command": "node"},
                       {"hosts": ["cp3"], "command": "node"}, {"hosts": ["w1", "w2"], "command": "node"},
                       {"hosts": ["w3"], "command": "node"}]
    with pytest.raises(k.KubeadmError):
        kp.upgrade_batches(["cp1"], [], batch_size=0)


def test_hosts_behind_the_target_are_the_ones_upgraded():
    nodes = {"cp1": {"version": "v1.35.8"}, "cp2": {"version": "v1.35.5"}, "w1": {"version": "1.35.5"}, "w2": {}}
    # cp1 done by an earlier (killed) run; w3 not listed by the API: behind
    assert kp.hosts_behind(nodes, "1.35.8", ["cp1", "cp2", "w1", "w2", "w3"]) == ["cp2", "w1", "w2", "w3"]
    assert kp.hosts_behind(nodes, "v1.35.5", ["cp1", "cp2", "w1"]) == ["cp1"]
    assert kp.hosts_behind({}, "1.35.8", []) == []
    with pytest.raises(k.KubeadmError, match="target version"):
        kp.hosts_behind(nodes, "latest", ["cp1"])


def test_node_conditions_from_structured_output():
    nodes = {"items": [
        {"metadata": {"name": "cp1"}, "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}],
                                                             "nodeInfo": {"kubeletVersion": "v1.34.3"}}},
        {"metadata": {"name": "w1"}, "spec": {"unschedulable": True},
         "status": {"conditions": [{"type": "Ready", "status": "False"}], "nodeInfo": {"kubeletVersion": "v1.34.3"}}}]}
    assert k.node_conditions(json.dumps(nodes)) == {
        "cp1": {"ready": True, "version": "v1.34.3", "unschedulable": False},
        "w1": {"ready": False, "version": "v1.34.3", "unschedulable": True}}
    assert list(k.node_conditions(nodes, "w1")) == ["w1"]
    with pytest.raises(k.KubeadmError):
        k.node_conditions("not json")


def _mirror_pod(component, ready, tier="control-plane", tag="v1.35.8"):
    return {"metadata": {"name": "%s-cp1" % component, "labels": {"component": component, "tier": tier}},
            "spec": {"containers": [{"name": component, "image": "registry.k8s.io/%s:%s" % (component, tag)}]},
            "status": {"conditions": [{"type": "PodScheduled", "status": "True"},
                                      {"type": "Ready", "status": "True" if ready else "False"}]}}


def test_static_pods_from_the_apis_mirror_pods():
    pods = {"items": [_mirror_pod("kube-apiserver", True), _mirror_pod("kube-scheduler", False),
                      _mirror_pod("kube-controller-manager", True, tier="node")]}
    assert k.static_pods_running(pods) == ["kube-controller-manager", "kube-scheduler"]
    assert k.static_pods_running(json.dumps(pods), stacked_etcd=True) == ["kube-controller-manager", "kube-scheduler",
                                                                          "etcd"]
    assert k.static_pods_running({"items": []}) == list(k.STATIC_PODS)
    with pytest.raises(k.KubeadmError, match="kubectl get pods"):
        k.static_pods_running("not json")


def test_static_pods_at_a_version_during_an_upgrade():
    pods = {"items": [_mirror_pod("kube-apiserver", True), _mirror_pod("kube-scheduler", True, tag="v1.35.5"),
                      _mirror_pod("kube-controller-manager", True)]}
    assert k.static_pods_running(pods) == []
    assert k.static_pods_running(pods, version="1.35.8") == ["kube-scheduler"]
    assert k.static_pods_running(pods, version="1.35.5") == ["kube-apiserver", "kube-controller-manager"]


def test_static_pods_argv_reads_this_nodes_mirror_pods():
    assert k.static_pods_argv("cp1", kubectl="/usr/local/bin/kubectl") == [
        "/usr/local/bin/kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "get", "pods", "--namespace",
        "kube-system", "--selector", "tier=control-plane", "--field-selector", "spec.nodeName=cp1", "--output", "json"]


def test_kubernetes_validate_is_not_a_no_op():
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
                                      "spec": {"ports": [{"port": "eighty"}]}}, "1.34", strict=True)


def test_contract_role_reset_argv_matches_the_backend():
    """roles/kubeadm/tasks/reset.yml runs kubeadm reset without a plan (reset must work when the
    cluster state is broken); its argv must stay the backend's."""
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles", "kubeadm", "tasks", "reset.yml")
    with open(path) as f:
        tasks = yaml.safe_load(f)
    argv = next(t for t in tasks if t.get("name") == "Kubeadm reset")["ansible.builtin.command"]["argv"]
    from jinja2 import Environment

    for stacked in (False, True):
        got = Environment(autoescape=False).from_string(argv).render(  # noqa: S701 (an argv, not HTML)
            kubeadm_bin_dir="/usr/local/bin", kubeadm_certificates_dir="/etc/kubernetes/pki",
            __kubeadm_stacked_etcd={"stat": {"exists": stacked}})
        assert yaml.safe_load(got) == k.reset_argv(kubeadm="/usr/local/bin/kubeadm",
                                                   stacked_etcd_cert_dir="/etc/kubernetes/pki" if stacked else None)


def test_contract_plan_commands_follow_the_plan():
    states = {"cp1": {"binaries": True}, "cp2": {"binaries": True}, "w1": {"binaries": True, "kubelet_conf": True}}
    plan = kp.plan_cluster(states, ["cp1", "cp2"], ["w1"])
    cmds = kp.plan_commands(plan, "/opt/bin", "/etc/kubernetes/mooring", 60)
    assert cmds["cp1"]["kubeadm"] == ["/opt/bin/kubeadm", "init", "--config", "/etc/kubernetes/mooring/kubeadm-init.yaml",
                                      "--skip-token-print"]
    assert cmds["cp2"]["kubeadm"] == ["/opt/bin/kubeadm", "join", "--config", "/etc/kubernetes/mooring/kubeadm-join.yaml"]
    assert "kubeadm" not in cmds["w1"]  # a member runs neither init nor join
    assert cmds["w1"]["drain"] == k.drain_argv("w1", 60, kubectl="/opt/bin/kubectl")
    assert cmds["w1"]["upgrade"] == ["/opt/bin/kubeadm", "upgrade", "node", "--certificate-renewal=false"]


def test_client_kubeconfig_is_kubeadm_shaped_and_deterministic():
    from ansible.errors import AnsibleFilterError

    from ansible_collections.mooring.cluster.plugins.filter.kubeconfig import client_kubeconfig_filter

    key = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n"
    text = client_kubeconfig_filter(CA, CA, key, "10.0.0.11:6443", "system:kube-scheduler", "lab")
    assert text == client_kubeconfig_filter(CA, CA, key, "10.0.0.11:6443", "system:kube-scheduler", "lab")
    doc = yaml.safe_load(text)
    assert doc["current-context"] == "system:kube-scheduler@lab"
    assert doc["clusters"] == [{"name": "lab", "cluster": {"server": "https://10.0.0.11:6443",
                                                           "certificate-authority-data": base64.b64encode(CA.encode()).decode()}}]
    assert doc["users"][0]["name"] == "system:kube-scheduler"
    assert base64.b64decode(doc["users"][0]["user"]["client-key-data"]).decode() == key
    assert doc["contexts"] == [{"name": "system:kube-scheduler@lab", "context": {"cluster": "lab", "user": "system:kube-scheduler"}}]
    with pytest.raises(AnsibleFilterError, match="not a PEM private key"):
        client_kubeconfig_filter(CA, CA, "nope", "h:6443", "u")
    with pytest.raises(AnsibleFilterError, match="the ca is not a PEM certificate"):
        client_kubeconfig_filter("nope", CA, key, "h:6443", "u")
