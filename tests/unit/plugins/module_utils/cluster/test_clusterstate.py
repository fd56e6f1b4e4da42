# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The support bundle's cluster part: what is read, what is kept, what is judged, where it comes from.

The API server's answers here are canned JSON in the shape the API returns (a FAKE reader); the molecule
`install` scenario's support test reads a real API server (molecule/install/support.yml)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.support import clusterstate, support, supportbundle

NOW = 1800000000


def node(name, ready="True", message=""):
    return {"metadata": {"name": name, "managedFields": [{"manager": "kubelet"}]},
            "status": {"conditions": [{"type": "Ready", "status": ready, "message": message}],
                       "nodeInfo": {"kubeletVersion": "v1.35.8"}}}


def pod(name, waiting=None, restarts=0):
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
    return {"metadata": {"name": name, "namespace": "apps",
                         "annotations": {clusterstate.LAST_APPLIED: '{"env": "DB_PASSWORD=planted-env-1"}'}},
            "spec": {"nodeName": "n1", "containers": [{"name": "app", "env": [
                {"name": "DB_PASSWORD", "value": "planted-env-2"},
                {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "app", "state": state, "restartCount": restarts}]}}


def answers(**over):
    data = {
        "nodes": json.dumps({"kind": "NodeList", "items": [node("n1"), node("n2", "Unknown", "Kubelet stopped posting node status.")]}),
        "pods": json.dumps({"kind": "PodList", "items": [pod("ok"), pod("crash", "CrashLoopBackOff", 7)]}),
        "events": json.dumps({"kind": "EventList", "items": [
            {"metadata": {"namespace": "apps", "name": "e%d" % i}, "type": "Normal", "reason": "R%d" % i,
             "lastTimestamp": "2026-12-04T10:%02d:%02dZ" % (i // 60, i % 60), "involvedObject": {"kind": "Pod", "name": "p"},
             "message": "m%d" % i} for i in range(clusterstate.MAX_EVENTS + 20)]}),
        "pvcs": json.dumps({"kind": "PersistentVolumeClaimList", "items": [
            {"metadata": {"name": "data", "namespace": "apps"}, "spec": {"storageClassName": "local-path"},
             "status": {"phase": "Pending"}},
            {"metadata": {"name": "bound", "namespace": "apps"}, "spec": {"volumeName": "pv1"}, "status": {"phase": "Bound"}}]}),
        "kubeadm-config": json.dumps({"kind": "ConfigMap", "metadata": {"name": "kubeadm-config"},
                                      "data": {"ClusterConfiguration": "kubernetesVersion: v1.35.8\n"}}),
        "readyz": "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n",
        "livez": "[+]ping ok\nlivez check passed\n",
    }
    data.update(over)
    return data


def test_the_kept_objects_lose_managed_fields_the_last_applied_configuration_and_env_values():
    files = clusterstate.cluster_files(answers())
    text = "".join(files.values())
    assert "planted-env-1" not in text and "planted-env-2" not in text and "managedFields" not in text
    pods = json.loads(files["cluster/pods.json"])
    assert pods[0]["spec"]["containers"][0]["env"] == [
        {"name": "DB_PASSWORD", "value": clusterstate.HIDDEN},
        {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
    events = json.loads(files["cluster/events.json"])
    assert len(events) == clusterstate.MAX_EVENTS and events[-1]["reason"] == "R%d" % (clusterstate.MAX_EVENTS + 19)
    assert "apps/crash node=n1 phase=Running restarts=7 app:CrashLoopBackOff" in files["cluster/pods.txt"]
    assert "n2 Ready=Unknown kubelet=v1.35.8" in files["cluster/nodes.txt"]
    assert sorted(files) == ["cluster/events.json", "cluster/events.txt", "cluster/kubeadm-config.json",
                             "cluster/livez.txt", "cluster/nodes.json", "cluster/nodes.txt", "cluster/pods.json",
                             "cluster/pods.txt", "cluster/pvcs.json", "cluster/pvcs.txt", "cluster/readyz.txt"]


def test_findings_name_the_notready_node_the_crashlooping_pod_the_pending_claim_and_a_failed_check():
    found = clusterstate.cluster_findings(clusterstate.cluster_files(answers()))
    assert found == [
        ("fail", "node n2 NotReady (Ready=Unknown: Kubelet stopped posting node status.)"),
        ("fail", "pod apps/crash: container app in CrashLoopBackOff (restarts 7)"),
        ("warn", "PVC apps/data Pending (storage class local-path)"),
        ("fail", "/readyz: [-]etcd failed: reason withheld")]


def test_a_container_shown_terminated_between_its_restarts_is_crash_looping_too():
    def status(restarts, exit_code, ready=False):
        return {"name": "app", "ready": ready, "restartCount": restarts,
                "state": {"terminated": {"exitCode": exit_code, "reason": "Error"}}}

    pods = [dict(pod("looping"), status={"containerStatuses": [status(5, 3)]}),
            dict(pod("young"), status={"containerStatuses": [status(2, 3)]}),
            dict(pod("done"), status={"containerStatuses": [status(7, 0)]}),
            dict(pod("earlier"), status={"containerStatuses": [
                {"name": "app", "ready": False, "restartCount": 4, "state": {"running": {}},
                 "lastState": {"terminated": {"exitCode": 137}}}]})]
    found = clusterstate.cluster_findings(clusterstate.cluster_files(answers(pods=json.dumps({"items": pods}))))
    assert [t for s, t in found if t.startswith("pod ")] == [
        "pod apps/looping: container app in CrashLoopBackOff (restarts 5)",
        "pod apps/earlier: container app in CrashLoopBackOff (restarts 4)"]


def test_a_healthy_cluster_has_no_finding_and_a_bad_answer_is_kept_as_a_note():
    healthy = answers(nodes=json.dumps({"items": [node("n1")]}), pods=json.dumps({"items": [pod("ok")]}),
                      pvcs=json.dumps({"items": []}), readyz="[+]ping ok\nreadyz check passed\n")
    assert clusterstate.cluster_findings(clusterstate.cluster_files(healthy)) == []
    files = clusterstate.cluster_files({"nodes": "<html>proxy error</html>", "pods": "[1, 2]"})
    assert files["cluster/nodes.txt"].startswith("[not JSON: <html>proxy error</html>]")
    assert clusterstate.cluster_findings(files) == []
    # A host's file that is not what cluster_files writes is judged as nothing, not a crash.
    assert clusterstate.cluster_findings({"cluster/nodes.json": '{"a": 1}', "cluster/pods.json": "[1, null]"}) == []


def test_each_path_is_read_once_and_one_that_fails_is_one_error_line():
    seen = []

    def read(path):
        seen.append(path)
        if path.startswith("/api/v1/events"):
            raise ValueError("HTTP 403\nForbidden")
        return "{}"

    got, errors = clusterstate.read_all(read)
    assert seen == [path for _name, path in clusterstate.READS]
    assert "events" not in got and errors == ["/api/v1/events?limit=2000: HTTP 403 Forbidden"]
    assert not [p for p in seen if "secret" in p.lower()]


def test_both_readers_answer_by_one_rule_a_failed_health_check_kept_anything_else_refused():
    failed = "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n"
    assert clusterstate.answer("/readyz?verbose", failed, "HTTP 500") == failed
    assert clusterstate.answer("/livez", failed, "rc 1") == failed
    with pytest.raises(ValueError, match="HTTP 500"):
        clusterstate.answer("/api/v1/nodes", failed, "HTTP 500")  # only the health paths keep a failure
    with pytest.raises(ValueError, match="HTTP 503"):
        clusterstate.answer("/readyz?verbose", "<html>unavailable</html>", "HTTP 503")  # no checks named
    assert clusterstate.answer("/api/v1/nodes", "x" * clusterstate.MAX_READ) == "x" * clusterstate.MAX_READ
    with pytest.raises(ValueError, match="passed %d bytes" % clusterstate.MAX_READ):
        clusterstate.answer("/api/v1/nodes", "x" * (clusterstate.MAX_READ + 1))


def test_read_cluster_judges_what_it_read():
    canned = answers(nodes=json.dumps({"items": [node("n1", "False")]}))
    files, findings, errors = clusterstate.read_cluster(lambda path: canned.get(
        next(n for n, p in clusterstate.READS if p == path), "{}"))
    assert files["cluster/nodes.json"] and errors == []
    assert findings == clusterstate.cluster_findings(files) and findings[0][1].startswith("node n1 NotReady")


class KubectlRun:
    """FAKE runner: ``kubectl get --raw PATH`` answers from :func:`answers`; a failed /readyz prints to stderr."""

    def __init__(self):
        self.calls = []
        self.answers = answers()

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[0] != "/bin/kubectl":
            return 127, "", "not found"
        path = argv[-1]
        if path == "/readyz?verbose":
            return 1, "", self.answers["readyz"]
        name = next(n for n, p in clusterstate.READS if p == path)
        return (0, self.answers[name], "") if name in self.answers else (1, "", 'Error from server (NotFound): "%s"' % name)


def test_a_control_plane_host_reads_the_cluster_with_its_kubectl_and_redacts_it(tmp_path):
    run = KubectlRun()
    got = support.collect(run, {"units": [], "since_hours": 1, "journal_max_bytes": 4096, "pki_dirs": [],
                                "etcd_env": str(tmp_path / "absent"), "etcd_pki_dir": str(tmp_path), "etcdctl": "/absent",
                                "bundle_dir": str(tmp_path), "roles": [], "kubeconfig": "/etc/kubernetes/admin.conf",
                                "kubectl": "/bin/kubectl"}, now=lambda: NOW)
    assert ["/bin/kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "--request-timeout=20s", "get", "--raw",
            "/api/v1/nodes"] in run.calls
    assert "[-]etcd failed" in got["files"]["cluster/readyz.txt"]
    assert [e for e in got["errors"] if e.startswith("cluster ")] == [
        'cluster /api/v1/namespaces/kube-system/configmaps/kubelet-config: kubectl get --raw '
        '/api/v1/namespaces/kube-system/configmaps/kubelet-config: rc 1: Error from server (NotFound): "kubelet-config"']
    assert "planted-env-2" not in "".join(got["files"].values())


def _host(files, findings=()):
    return {"files": dict({"units.txt": "Id=etcd.service\n"}, **files), "redacted": {}, "errors": [],
            "facts": {"certificates": [], "units": {}, "etcd": None, "disks": [], "bundles": [],
                      "cluster_findings": [list(f) for f in findings]}}


def test_the_controllers_reading_wins_and_a_hosts_copy_is_used_only_when_it_did_not_answer():
    mine = clusterstate.cluster_files(answers())
    theirs = {"cluster/nodes.json": json.dumps([node("from-host", "False")])}
    host_found = clusterstate.cluster_findings(theirs)
    meta = {"now": NOW, "controller": "ctl"}
    entries, found, _red = supportbundle.assemble(
        {"cp1": _host(theirs, host_found)}, {}, meta,
        cluster={"files": mine, "source": "the controller's kubeconfig k", "findings": clusterstate.cluster_findings(mine)})
    assert "hosts/cp1/cluster/nodes.json" not in entries and "from-host" not in entries["cluster/nodes.json"]
    assert "Read through the controller's kubeconfig k." in entries["index.md"]
    assert ("fail", "cluster", "pod apps/crash: container app in CrashLoopBackOff (restarts 7)") in found
    assert found.index(("warn", "cluster", "PVC apps/data Pending (storage class local-path)")) > max(
        i for i, f in enumerate(found) if f[0] == "fail")
    entries, found, _red = supportbundle.assemble({"cp1": _host(theirs, host_found)}, {}, meta,
                                                  cluster={"files": {}, "error": "k: connection refused"})
    assert "from-host" in entries["cluster/nodes.json"] and "hosts/cp1/cluster/nodes.json" not in entries
    assert "Read through kubectl on cp1 (the controller's kubeconfig: k: connection refused)." in entries["index.md"]
    assert ("fail", "cluster", "node from-host NotReady (Ready=False)") in found
    assert not [f for f in found if "crash" in f[2]]  # the controller's findings went with its reading
    entries, found, _red = supportbundle.assemble({"cp1": _host({})}, {}, meta)
    assert "Read through not read: the controller's kubeconfig: no kubeconfig given; no control-plane host read it." \
        in entries["index.md"] and not [e for e in entries if e.startswith("cluster/")]


# A real kube-apiserver static pod: redaction cuts --kubelet-client-key's value to the line's end, so the redacted
# pods.json does not parse; what is judged is judged before (the lab's support test found the crash loop missing).
APISERVER = {"metadata": {"name": "kube-apiserver-n1", "namespace": "kube-system"},
             "spec": {"containers": [{"name": "kube-apiserver", "command": [
                 "kube-apiserver", "--kubelet-client-key=/etc/kubernetes/pki/apiserver-kubelet-client.key"]}]},
             "status": {"phase": "Running", "containerStatuses": [{"name": "kube-apiserver", "ready": True,
                                                                   "state": {"running": {}}, "restartCount": 0}]}}


def test_what_is_judged_is_judged_before_redaction_on_the_host():
    run = KubectlRun()
    with_apiserver = json.dumps({"items": [APISERVER, pod("crash", "CrashLoopBackOff", 4)]})
    run.answers = answers(pods=with_apiserver)
    params = {"units": [], "since_hours": 1, "journal_max_bytes": 4096, "pki_dirs": [], "etcd_env": "/absent",
              "etcd_pki_dir": "/absent", "etcdctl": "/absent", "bundle_dir": "/absent", "roles": [], "kubeconfig": "/k",
              "kubectl": "/bin/kubectl"}
    got = support.collect(run, params, now=lambda: NOW)
    assert ["fail", "pod apps/crash: container app in CrashLoopBackOff (restarts 4)"] in got["facts"]["cluster_findings"]
    assert clusterstate.cluster_findings(got["files"]) != clusterstate.cluster_findings(
        clusterstate.cluster_files(run.answers))  # the redacted text alone would not tell


def test_a_hosts_cluster_findings_of_the_wrong_shape_are_left_out_and_named():
    bad = _host({"cluster/nodes.json": "[]"}, [("fail", "node x NotReady")])
    bad["facts"]["cluster_findings"] = [["fail", "node x NotReady"], ["pass", "forged"]]
    _entries, found, _red = supportbundle.assemble({"cp1": bad}, {}, {"now": NOW, "controller": "ctl"})
    assert [f for f in found if "forged" in f[2] and f[1] == "cluster"] == []
    assert [f for f in found if f[1] == "cp1" and "cluster_findings" in f[2]]


def test_a_token_in_what_the_cluster_answers_is_redacted_on_the_controller():
    planted = answers(**{"kubeadm-config": json.dumps({"kind": "ConfigMap", "metadata": {"name": "kubeadm-config"},
                                                       "data": {"x": "token: q2w3e4.r5t6y7u8i9o0p1a2"}})})
    entries, _found, redacted = supportbundle.assemble(
        {}, {}, {"now": NOW, "controller": "ctl"},
        cluster={"files": clusterstate.cluster_files(planted), "source": "k", "findings": [("warn", "token: q2w3e4.r5t6y7u8i9o0p1a2")]})
    assert "q2w3e4.r5t6y7u8i9o0p1a2" not in "".join(entries.values()) and redacted
