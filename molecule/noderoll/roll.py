# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole-node rolling upgrade as users run it, on a real Kubernetes cluster (the noderoll lab: real kubelet,
API servers, containerd, etcd, SSH, systemd; the real kubectl).

Each run is the documented command, a separate ``ansible-playbook`` process (molecule/etcdroll/faults.py's
``Run``, etcd sampler and helpers are reused, not copied):

    ansible-playbook -i INVENTORY mooring.cluster.upgrade -e mooring_lock=LOCK -e mooring_bundle_file=BUNDLE

The hosts run lock A (Kubernetes 1.35.5, etcd 3.5.33, containerd 2.1.8); lock B is the demo's versions (1.35.8,
3.6.14, 2.1.9); lock E is lock A with lock B's etcd. A workload runs throughout: Deployment ``web`` (3 replicas, one
per node, its own PodDisruptionBudget maxUnavailable 1). The API is sampled through the VIP every 0.5 s
(molecule/shared/apisampler.py: /readyz and a namespace list, plus the nodes' schedulability and versions) and etcd's
quorum every 0.2 s. Tests:
  etcd       mooring.cluster.etcd_upgrade with lock E: etcd 3.5 -> 3.6 one member at a time under the running API
             servers; every member serves 3.6.14, no kubelet or containerd restarted, no node cordoned; quorum held
             (some member serves a linearizable read in every sample); the API window of the run
  certs      mooring.cluster.certs_renew forcing the API server's certificate: each control plane's kube-apiserver
             restarted one at a time with the VIP handed to the other first, and serving a new certificate; keepalived
             running again on both; no node cordoned; the API window of the run
  skew       a lock of Kubernetes 1.34.4 (a downgrade): refused with the one-line message, changed=0, nothing on any
             host changed, no node cordoned
  pdb        lock B with Deployment ``pinned`` (1 replica on host 2, PodDisruptionBudget minAvailable 1) and
             kubeadm_drain_timeout=30: host 1 rolled (kubelet, static pods, containerd, etcd at lock B's versions);
             host 2's drain cannot finish: the run fails naming host 2 and the pod, host 2 schedulable again with
             nothing changed, host 3 untouched; quorum held; the lease given back
  killed     ``pinned`` removed, the same command, SIGKILLed (its whole process group) once host 2 is schedulable at
             1.35.8: host 2 done, host 1 not drained again
  resume     the same command: completes host 3 only (changed=0 on hosts 1 and 2 in the recap, their kubelet,
             containerd and etcd not restarted); every node at 1.35.8, every static pod at v1.35.8, every etcd member
             at 3.6.14, ``web`` 3 pods ready; the API window of this worker-only run
  noop       the same command again: changed=0 on every host, no restart, no node cordoned
  installguard  mooring.cluster.install with lock A on the rolled hosts: every host refuses before its containerd is
             installed or restarted, naming mooring.cluster.upgrade
  remove     mooring.cluster.remove_node of the worker: drained with the real kubectl (``web`` evicted under its
             PodDisruptionBudget, its 3 pods ready on the control planes), the node deleted, kubeadm reset there (kubelet
             stopped and disabled, its kubeconfig gone), its external etcd member still serving; the same command
             again: changed=0 on every host
  join       mooring.cluster.join of that worker into the running cluster (lock B): its node Ready at 1.35.8 and
             schedulable, no kubelet, containerd or etcd restarted on the control planes, the run's bootstrap token
             (read from the cluster's token Secrets) nowhere in the run's output; the same command again: changed=0
Prints one JSON line per test (with the API sampler's figures: samples, failed, longest gap in seconds, each
node's turn) and exits non-zero at the first failed expectation. Figures are reported, not asserted against a
clock: CI shares its cores.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "molecule", "etcdroll"))
sys.path.insert(0, os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "molecule", "shared"))
sys.path.insert(0, os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "tests", "lab"))

import apisampler  # noqa: E402  (the API sampler, lab-only)
import faults as lab  # noqa: E402  (the etcdroll scenario's etcd sampler, SSH and run helpers)
import labspec  # noqa: E402  (the lab's specs: versions pinned in the spec text)
import yaml  # noqa: E402

EPH = lab.EPH
HOSTS = lab.HOSTS
H1, H2, H3 = HOSTS
LOCK = {name: os.path.join(EPH, "lock-%s.yaml" % name) for name in ("a", "b", "e", "old")}
KUBECONFIG = os.path.join(EPH, "admin.conf")
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "shared", "traces.sh")) as _f:
    TRACES = _f.read()  # the lab's snapshot of Kubernetes' traces on a host, sent over SSH as the command
NAMESPACE = "noderoll"
# By the old names (deprecated until 0.4.0): this scenario is what proves they still work.
ARGS = {name: ["mooring.cluster.upgrade", "-e", "bundle_lock=%s" % LOCK[name], "-e", "bundle_file=%s/bundle-%s.tar" % (EPH, name)]
        for name in LOCK}
DRAIN_TIMEOUT = 30
expect = lab.expect


def read_lock(name):
    with open(LOCK[name]) as f:
        return yaml.safe_load(f)


def derived_lock(name, base, versions, overlay=True):
    """Lock ``name``: spec ``base`` with ``versions`` pinned, resolved (with the test mirror's overlay: the artifacts
    built from their modules) as a user resolves a changed spec."""
    spec = os.path.join(EPH, "installer-%s.yaml" % name)
    with open(os.path.join(EPH, "installer-%s.yaml" % base)) as f:
        text = labspec.pin_versions(f.read(), versions)
    with open(spec, "w") as f:
        f.write(text)
    argv = [os.path.join(lab.PROJECT, ".venv", "bin", "mooring"), "spec", "resolve", spec, "-o", LOCK[name]]
    if overlay:
        argv[4:4] = ["--catalog-overlay", os.path.join(os.environ["MOORING_MIRROR_DIR"], "upstream-overlay")]
    subprocess.run(argv, check=True, capture_output=True)


def served_cert(host):
    """sha256 of the certificate the host's kube-apiserver serves (read on the host)."""
    return lab.ssh(host, "python3 -c 'import hashlib, ssl; print(hashlib.sha256(ssl.PEM_cert_to_DER_cert("
                         "ssl.get_server_certificate((\"127.0.0.1\", 6443)))).hexdigest())'").strip()


def local_file(art):
    url = art["url"]
    expect(url.startswith("file://"), "the lock's %s is not a local file: %s" % (art["name"], url))
    return urlsplit(url).path


def containerd_sha(lock):
    """sha256 of bin/containerd inside the lock's containerd release archive (built from its Go module)."""
    art = next(a for a in lock["addons"]["containerd"]["artifacts"] if a["name"] == "containerd" and a["arch"] == "amd64")
    with tarfile.open(local_file(art)) as t:
        return hashlib.sha256(t.extractfile("bin/containerd").read()).hexdigest()


class Kubectl(object):
    """The lock's kubectl (its sha256 checked) with the admin kubeconfig the install wrote, through the VIP."""

    def __init__(self, lock):
        art = next(a for a in lock["addons"]["kubernetes"]["artifacts"] if a["name"] == "kubectl" and a["arch"] == "amd64")
        self.path = local_file(art)
        with open(self.path, "rb") as f:
            expect(hashlib.sha256(f.read()).hexdigest() == art["sha256"], "kubectl %s: sha256 differs from the lock" % self.path)

    def __call__(self, *args, stdin=None, check=True):
        proc = subprocess.run([self.path, "--kubeconfig", KUBECONFIG, "--request-timeout", "20s"] + list(args), input=stdin,
                              capture_output=True, text=True, timeout=120, check=False)
        if check and proc.returncode != 0:
            raise lab.Failed("kubectl %s: %s" % (" ".join(args), proc.stderr.strip()[-400:]))
        return proc.stdout

    def json(self, *args):
        return json.loads(self(*(list(args) + ["-o", "json"])))

    def apply(self, *docs):
        self("apply", "-f", "-", stdin="\n---\n".join(json.dumps(d) for d in docs))


def unit_started(host, unit):
    """ActiveEnterTimestamp (epoch seconds) of a systemd unit, from systemd's own property."""
    path = "/org/freedesktop/systemd1/unit/" + unit.replace(".", "_2e").replace("-", "_2d")
    out = lab.ssh(host, "busctl get-property org.freedesktop.systemd1 %s org.freedesktop.systemd1.Unit "
                        "ActiveEnterTimestamp" % path)
    return int(out.split()[1]) / 1e6


def host_state(host):
    out = lab.ssh(host, "sha256sum /usr/local/bin/containerd | cut -d' ' -f1; /usr/local/bin/etcd --version | head -n1; "
                        "/usr/local/bin/kubelet --version")
    sha, etcd_line, kubelet_line = out.splitlines()[:3]
    return {"sha": sha, "etcd_bin": etcd_line.split()[-1], "kubelet_bin": kubelet_line.split()[-1],
            "containerd_t": unit_started(host, "containerd.service"), "etcd_t": unit_started(host, "etcd.service"),
            "kubelet_t": unit_started(host, "kubelet.service")}


def cluster_state(k):
    """{node: {version, unschedulable, ready}} and each control plane's static pods' image tags, from the API."""
    nodes = {}
    for item in k.json("get", "nodes")["items"]:
        conds = {c["type"]: c["status"] for c in item["status"].get("conditions", [])}
        nodes[item["metadata"]["name"]] = {"version": item["status"]["nodeInfo"]["kubeletVersion"],
                                           "unschedulable": bool(item["spec"].get("unschedulable")),
                                           "ready": conds.get("Ready") == "True"}
    static = {}
    for pod in k.json("get", "pods", "-n", "kube-system", "-l", "tier=control-plane")["items"]:
        static.setdefault(pod["spec"]["nodeName"], {})[pod["metadata"]["labels"]["component"]] = (
            pod["spec"]["containers"][0]["image"].rsplit(":", 1)[-1])
    return nodes, static


def workload(image):
    """Deployment web (one pod per node, control planes tolerated) with its PodDisruptionBudget, busybox httpd."""
    labels = {"app": "web"}
    tolerate = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]
    container = {"name": "http", "image": image, "imagePullPolicy": "Never",
                 "command": ["/bin/sh", "-c", "mkdir -p /tmp/w && echo ok > /tmp/w/index.html && exec busybox httpd -f -p 8080 -h /tmp/w"],
                 "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 2}}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NAMESPACE},
         "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
             "tolerations": tolerate, "terminationGracePeriodSeconds": 2,
             "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                            "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": labels}}],
             "containers": [container]}}}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": NAMESPACE},
         "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}}}]


def pinned(image):
    """Deployment pinned: one pod on host 2, a PodDisruptionBudget that allows no eviction of it."""
    labels = {"app": "pinned"}
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "pinned", "namespace": NAMESPACE},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
             "nodeSelector": {"kubernetes.io/hostname": H2}, "terminationGracePeriodSeconds": 2,
             "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}],
             "containers": [{"name": "sleep", "image": image, "imagePullPolicy": "Never", "command": ["/bin/sh", "-c", "exec busybox sleep 100000"]}]}}}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pinned", "namespace": NAMESPACE},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}}}]


def pods(k, app):
    """[(name, node, ready)] of the app's pods."""
    out = []
    for pod in k.json("get", "pods", "-n", NAMESPACE, "-l", "app=" + app)["items"]:
        conds = {c["type"]: c["status"] for c in pod.get("status", {}).get("conditions", [])}
        if pod["metadata"].get("deletionTimestamp"):
            continue
        out.append((pod["metadata"]["name"], pod["spec"].get("nodeName"), conds.get("Ready") == "True"))
    return sorted(out)


def web_ready(k, test, want=3):
    lab.wait_for("%s: %d web pods ready" % (test, want), lambda: sum(1 for p in pods(k, "web") if p[2]) == want, 240)


def unchanged(run, test, hosts=HOSTS):
    recap = run.recap()
    expect(all(recap.get(h, {}).get("changed") == 0 for h in hosts), "%s: changed on some of %s: %s" % (test, hosts, recap))


def restarts(before, after, host):
    return [u for u in ("containerd_t", "etcd_t", "kubelet_t") if after[host][u] != before[host][u]]


def report(test, run, since, api, until=None, minimum=10, **extra):
    w = lab.quorum_held(since, test, until, minimum)
    turns = api.turns(since, NEW, until)
    print(json.dumps(dict(test=test, rc=run.proc.returncode, seconds=run.seconds, etcd=w, api=api.window(since, until),
                          turns={n: {"seconds": t["seconds"], "api": t["window"]} for n, t in turns.items()}, **extra)),
          flush=True)
    return turns


def check_rolled(test, k, hosts, new_sha):
    nodes, static = cluster_state(k)
    for h in hosts:
        s = host_state(h)
        expect(s["sha"] == new_sha and s["etcd_bin"] == NEW_ETCD and s["kubelet_bin"] == "v" + NEW,
               "%s: %s not on lock B: %s" % (test, h, s))
        expect(lab.SAMPLER.latest().get(h) == NEW_ETCD, "%s: %s serves etcd %s" % (test, h, lab.SAMPLER.latest().get(h)))
        expect(nodes[h]["version"] == "v" + NEW and nodes[h]["ready"] and not nodes[h]["unschedulable"],
               "%s: node %s: %s" % (test, h, nodes[h]))
        if h in (H1, H2):
            expect(set(static.get(h, {}).values()) == {"v" + NEW} and len(static.get(h, {})) == 3,
                   "%s: %s's static pods: %s" % (test, h, static.get(h)))


NEW = OLD = NEW_ETCD = OLD_ETCD = None


def main():
    global NEW, OLD, NEW_ETCD, OLD_ETCD
    a, b = read_lock("a"), read_lock("b")
    OLD, NEW = a["addons"]["kubernetes"]["version"], b["addons"]["kubernetes"]["version"]
    OLD_ETCD, NEW_ETCD = a["addons"]["etcd"]["version"], b["addons"]["etcd"]["version"]
    old_sha, new_sha = containerd_sha(a), containerd_sha(b)
    expect(OLD != NEW and OLD_ETCD != NEW_ETCD and old_sha != new_sha, "locks A and B do not differ: %s %s" % (OLD, NEW))
    k = Kubectl(b)
    image = next(i["ref"] for i in b["addons"]["flannel"]["images"] if i["ref"].endswith(":v" + b["addons"]["flannel"]["version"]))
    api = apisampler.ApiSampler(KUBECONFIG, NAMESPACE, nodes=True)
    api.start()
    lab.SAMPLER.start()
    lab.wait_for("every etcd member to serve", lambda: all(lab.SAMPLER.latest().get(h) for h in HOSTS), 60)
    lab.wait_for("the API through the VIP to answer", api.answering, 60)
    nodes, static = cluster_state(k)
    for h in HOSTS:
        expect(nodes[h]["version"] == "v" + OLD and nodes[h]["ready"], "before: node %s: %s" % (h, nodes[h]))
    expect(all(set(static[h].values()) == {"v" + OLD} for h in (H1, H2)), "before: static pods %s" % static)
    k.apply(*workload(image))
    web_ready(k, "before")
    s0 = {h: host_state(h) for h in HOSTS}
    for h in HOSTS:
        expect(s0[h]["sha"] == old_sha and s0[h]["etcd_bin"] == OLD_ETCD and lab.SAMPLER.latest().get(h) == OLD_ETCD,
               "before: %s is not on lock A: %s" % (h, s0[h]))

    # etcd: 3.5 -> 3.6 alone, the API servers running on top
    derived_lock("e", "a", {"etcd": NEW_ETCD})
    t = time.monotonic()
    run = lab.Run("etcd", ["mooring.cluster.etcd_upgrade", "-e", "bundle_lock=%s" % LOCK["e"],
                           "-e", "bundle_file=%s/bundle-e.tar" % EPH])
    expect(run.wait(timeout=1800) == 0, "etcd: %s" % run.why())
    until = time.monotonic()
    s1 = {h: host_state(h) for h in HOSTS}
    for h in HOSTS:
        expect(s1[h]["etcd_bin"] == NEW_ETCD and lab.SAMPLER.latest().get(h) == NEW_ETCD,
               "etcd: %s: etcd %s, serving %s" % (h, s1[h]["etcd_bin"], lab.SAMPLER.latest().get(h)))
        expect(s1[h]["etcd_t"] != s0[h]["etcd_t"], "etcd: %s's etcd was not restarted" % h)
        expect([u for u in ("containerd_t", "kubelet_t") if s1[h][u] != s0[h][u]] == [] and s1[h]["sha"] == old_sha,
               "etcd: %s: containerd or the kubelet changed: %s -> %s" % (h, s0[h], s1[h]))
    web_ready(k, "etcd")
    lab.lease_free("etcd")
    turns = report("etcd", run, t, api, until, upgraded="etcd %s -> %s" % (OLD_ETCD, NEW_ETCD))
    expect(not turns, "etcd: nodes cordoned: %s" % turns)

    # certs: the API server's certificate renewed; each kube-apiserver restarted with the VIP handed over first
    served = {h: served_cert(h) for h in (H1, H2)}
    keepalived = {h: unit_started(h, "keepalived.service") for h in (H1, H2)}
    t = time.monotonic()
    run = lab.Run("certs", ["mooring.cluster.certs_renew", "-e", "bundle_lock=%s" % LOCK["e"],
                            "-e", json.dumps({"force": ["apiserver"]})])
    expect(run.wait(timeout=1800) == 0, "certs: %s" % run.why())
    until = time.monotonic()
    for h in (H1, H2):
        expect(served_cert(h) != served[h], "certs: %s's kube-apiserver serves the old certificate" % h)
        expect(lab.ssh(h, "systemctl is-active keepalived", check=False).strip() == "active",
               "certs: keepalived is not running again on %s" % h)
        expect(unit_started(h, "keepalived.service") > keepalived[h],
               "certs: keepalived on %s was not stopped and started again (the VIP not handed over)" % h)
    web_ready(k, "certs")
    lab.lease_free("certs")
    turns = report("certs", run, t, api, until, restarted="kube-apiserver on %s, %s" % (H1, H2))
    expect(not turns, "certs: nodes cordoned: %s" % turns)
    s0 = {h: host_state(h) for h in HOSTS}

    # skew: a downgrade
    derived_lock("old", "a", {"kubernetes": "1.34.4"}, overlay=False)
    t = time.monotonic()
    run = lab.Run("skew", ARGS["old"])
    run.wait()
    expect(run.proc.returncode != 0, "skew: the run passed")
    want = "target 1.34.4 is older than the running %s; downgrades are not supported" % OLD
    expect(want in run.text, "skew: no line %r: %s" % (want, run.why()))
    unchanged(run, "skew")
    expect({h: host_state(h) for h in HOSTS} == s0, "skew: a host changed")
    expect(cluster_state(k)[0] == nodes, "skew: a node changed")
    deprecated = "the variable bundle_lock is now mooring_lock"
    expect(deprecated in run.text, "skew: the old input name was taken without its deprecation warning: %s" % run.why())
    report("skew", run, t, api, message=want)

    # pdb: host 2's drain cannot finish
    k.apply(*pinned(image))
    lab.wait_for("pdb: the pinned pod ready on %s" % H2, lambda: pods(k, "pinned") and pods(k, "pinned")[0][1:] == (H2, True), 240)
    blocker = pods(k, "pinned")[0][0]
    t = time.monotonic()
    run = lab.Run("pdb", ARGS["b"] + ["-e", "kubeadm_drain_timeout=%d" % DRAIN_TIMEOUT])
    run.wait(timeout=1800)
    until = time.monotonic()
    expect(run.proc.returncode != 0, "pdb: the run passed")
    recap = run.recap()
    expect(recap.get(H2, {}).get("failed") == 1, "pdb: %s not named as failed: %s: %s" % (H2, recap, run.why()))
    expect(re.search(r"drain: %s could not be drained .*%s/%s" % (re.escape(H2), NAMESPACE, re.escape(blocker)), run.text),
           "pdb: no drain failure naming %s/%s: %s" % (NAMESPACE, blocker, run.why()))
    check_rolled("pdb", k, [H1], new_sha)
    s1 = {h: host_state(h) for h in HOSTS}
    nodes, _static = cluster_state(k)
    expect(all(not n["unschedulable"] for n in nodes.values()), "pdb: a node left cordoned: %s" % nodes)
    for h in (H2, H3):
        expect(s1[h] == s0[h] and nodes[h]["version"] == "v" + OLD, "pdb: %s changed: %s -> %s (%s)" % (h, s0[h], s1[h], nodes[h]))
    expect(pods(k, "pinned")[0][0] == blocker, "pdb: the pinned pod was evicted")
    web_ready(k, "pdb")
    lab.lease_free("pdb")
    report("pdb", run, t, api, until, failed=H2, blocked_by="%s/%s" % (NAMESPACE, blocker))

    # killed: once host 2 is done
    k("delete", "-n", NAMESPACE, "deployment/pinned", "pdb/pinned", "--wait=true")
    t = time.monotonic()
    run = lab.Run("killed", ARGS["b"])

    def host2_done():
        n = (api.samples[-1][2] or {}).get(H2) if api.samples else None
        return n is not None and not n[0] and n[1] == "v" + NEW

    lab.wait_for("killed: %s schedulable at v%s" % (H2, NEW), host2_done, 1800, proc=run)
    run.kill()
    until = time.monotonic()
    check_rolled("killed", k, [H1, H2], new_sha)
    s2 = {h: host_state(h) for h in HOSTS}
    expect(not restarts(s1, s2, H1), "killed: %s restarted %s" % (H1, restarts(s1, s2, H1)))
    turns = report("killed", run, t, api, until, killed_after=H2)
    expect(H1 not in turns, "killed: %s was cordoned again: %s" % (H1, turns))

    # resume: the same command finishes the rest
    lab.lease_free("killed", within=60)
    t = time.monotonic()
    run = lab.Run("resume", ARGS["b"])
    expect(run.wait(timeout=1800) == 0, "resume: %s" % run.why())
    until = time.monotonic()
    check_rolled("resume", k, HOSTS, new_sha)
    s3 = {h: host_state(h) for h in HOSTS}
    unchanged(run, "resume", [H1, H2])
    for h in (H1, H2):
        expect(not restarts(s2, s3, h), "resume: %s restarted %s" % (h, restarts(s2, s3, h)))
    web_ready(k, "resume")
    lab.lease_free("resume")
    turns = report("resume", run, t, api, until, web=pods(k, "web"))
    expect(set(turns) <= {H3}, "resume: nodes other than %s cordoned: %s" % (H3, turns))

    # noop
    t = time.monotonic()
    run = lab.Run("noop", ARGS["b"])
    expect(run.wait() == 0, "noop: %s" % run.why())
    unchanged(run, "noop")
    expect({h: host_state(h) for h in HOSTS} == s3, "noop: a host changed")
    turns = report("noop", run, t, api)
    expect(not turns, "noop: nodes cordoned: %s" % turns)

    # installguard: the install path with lock A (the other containerd) never swaps a running containerd
    t = time.monotonic()
    run = lab.Run("installguard", ["mooring.cluster.install"])
    run.wait()
    expect(run.proc.returncode != 0, "installguard: the install passed")
    recap = run.recap()
    for h in HOSTS:
        expect(recap.get(h, {}).get("failed") == 1, "installguard: %s did not fail: %s" % (h, recap))
        expect(re.search(r"%s: containerd is running and the bundle has other binaries for it .*"
                         r"Run mooring.cluster.upgrade" % re.escape(h), run.text),
               "installguard: no refusal line for %s: %s" % (h, run.why()))
    expect({h: host_state(h) for h in HOSTS} == s3, "installguard: a host's containerd, etcd or kubelet changed")
    report("installguard", run, t, api)

    # remove: the worker leaves the cluster; its etcd member stays
    remove = ["mooring.cluster.remove_node", "-e", "remove_hosts=%s" % H3]
    t = time.monotonic()
    run = lab.Run("remove", remove)
    expect(run.wait(timeout=900) == 0, "remove: %s" % run.why())
    until = time.monotonic()
    nodes, _static = cluster_state(k)
    expect(sorted(nodes) == sorted([H1, H2]) and all(n["ready"] and not n["unschedulable"] for n in nodes.values()),
           "remove: the nodes are %s" % nodes)
    web_ready(k, "remove")
    placed = pods(k, "web")
    expect(len(placed) == 3 and all(p[1] in (H1, H2) for p in placed), "remove: web pods %s" % placed)
    kubelet = lab.ssh(H3, "systemctl is-active kubelet; test -e /etc/systemd/system/kubelet.service && echo unit || "
                          "echo no-unit; test -e /etc/kubernetes/kubelet.conf && echo kubeconfig || echo no-kubeconfig",
                      check=False)
    expect(kubelet.split() == ["inactive", "no-unit", "no-kubeconfig"], "remove: %s's kubelet: %s" % (H3, kubelet.split()))
    # kubeadm reset and the kubeadm role's reset leave the host as it was before the install (molecule/shared/traces.sh:
    # units, files, mounts, iptables chains and rules, links, containers), apart from what stays by design.
    with open(os.path.join(EPH, "traces-before-%s.txt" % H3)) as f:
        before_install = set(f.read().splitlines())
    after_reset = set(lab.ssh(H3, TRACES).splitlines())
    left = sorted(after_reset - before_install)
    expect(not left, "remove: %s keeps %d traces of Kubernetes it did not have before the install: %s"
           % (H3, len(left), left[:20]))
    # The external etcd member on the removed host stays, with its certificates (kubeadm reset empties the directory
    # it is given; etcd reads its certificates at every TLS handshake): it still answers new connections.
    pki = lab.ssh(H3, "ls /etc/kubernetes/pki/etcd", check=False).split()
    expect("ca.crt" in pki and len(pki) > 1, "remove: %s's etcd certificates are gone: %s" % (H3, pki))
    lab.wait_for("remove: %s's etcd member to answer /version" % H3, lambda: lab.SAMPLER.latest().get(H3) == NEW_ETCD, 60)
    report("remove", run, t, api, until, removed=H3, web=placed, traces_before=len(before_install),
           traces_after=len(after_reset))
    t = time.monotonic()
    run = lab.Run("remove-again", remove)
    expect(run.wait(timeout=900) == 0, "remove-again: %s" % run.why())
    unchanged(run, "remove-again")
    report("remove-again", run, t, api)

    # join: the removed worker joins the running cluster again
    join = ["mooring.cluster.join", "-e", "bundle_lock=%s" % LOCK["b"], "-e", "bundle_file=%s/bundle-b.tar" % EPH,
            "-e", "join_hosts=%s" % H3]
    before = {h: host_state(h) for h in (H1, H2)}
    t = time.monotonic()
    run = lab.Run("join", join)
    expect(run.wait(timeout=1200) == 0, "join: %s" % run.why())
    until = time.monotonic()
    lab.wait_for("join: node %s Ready" % H3, lambda: cluster_state(k)[0].get(H3, {}).get("ready"), 240)
    nodes, _static = cluster_state(k)
    expect(nodes[H3]["version"] == "v" + NEW and not nodes[H3]["unschedulable"], "join: node %s: %s" % (H3, nodes[H3]))
    after = {h: host_state(h) for h in (H1, H2)}
    for h in (H1, H2):
        expect(not restarts(before, after, h), "join: %s restarted %s" % (h, restarts(before, after, h)))
    tokens = [(base64.b64decode(i["data"]["token-id"]).decode(), base64.b64decode(i["data"]["token-secret"]).decode())
              for i in k.json("get", "secrets", "-n", "kube-system", "--field-selector",
                              "type=bootstrap.kubernetes.io/token")["items"]]
    expect(tokens, "join: no bootstrap token in the cluster")
    leaked = [tid for tid, secret in tokens if secret in run.text]
    expect(not leaked, "join: the secret of bootstrap token(s) %s is in the run's output" % leaked)
    report("join", run, t, api, until, joined=H3, tokens=len(tokens))
    t = time.monotonic()
    run = lab.Run("join-again", join)  # a joined host is refused by name, nothing changed
    expect(run.wait(timeout=1200) != 0 and "%s already joined" % H3 in run.text, "join-again: not refused: %s" % run.why())
    recap = run.recap()  # the refused run reaches only some hosts: none of them changed
    expect(recap and all(r["changed"] == 0 for r in recap.values()), "join-again: changed: %s" % recap)
    report("join-again", run, t, api, minimum=1)  # refused in a second or two: a few samples
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lab.Failed as exc:
        print("FAILED %s" % exc, flush=True)
        sys.exit(1)
