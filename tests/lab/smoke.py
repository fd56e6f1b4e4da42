# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The demo's cluster check (lab tooling): what an operator looks at after an install, then a smoke workload.

    smoke.py --inventory inventories/lab/demo/hosts.yml --lock .work/demo/installer.lock.yaml

- prints ``kubectl get nodes -o wide`` and ``kubectl -n kube-system get pods -o wide`` through the kubectl
  the bundle carries (the lock's artifact, its sha256 checked) and the admin kubeconfig the install wrote
  beside the inventory;
- checks every node Ready at the lock's Kubernetes version and every kube-system pod Running and ready;
- deploys one pod per node (required anti-affinity, the control-plane taint tolerated) serving its pod's name,
  with a ClusterIP Service, from an image the bundle carries (the CNI's, whose busybox serves http);
- asks the Service's ClusterIP from every node (an Ansible ``uri`` task on each host) and by its DNS name from
  inside a pod; every answer names a smoke pod, and together they name pods on every node;
- asks every other smoke pod's IP directly from the first one (pod to pod across nodes, through the CNI alone):
  each answers with its own name;
- every Deployment and DaemonSet of the add-ons the lock applies (kube-proxy, CoreDNS, the CNI, storage, metrics)
  runs exactly the image references the lock names, and each is available;
- storage (when the lock has localPathProvisioner): a PVC bound by the provisioner under the spec's ``path``, a
  pod writing a new token to it, the pod deleted and made again, the token still there;
- metrics (when the lock has metricsServer): ``kubectl top nodes`` answers for every node.

Exit 0 when all hold; otherwise 1 with what did not. Bounded: every wait has a limit in polls, not seconds of
a quiet machine (a busy one only polls longer, up to the limit).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import sha256_file

NAMESPACE = "mooring-smoke"
PORT = 8080
POLLS = 120  # 2 s apart: 4 minutes at most for the rollout


def lock_facts(path):
    with open(path) as f:
        lock = yaml.safe_load(f)
    k8s = lock["addons"]["kubernetes"]
    art = next(a for a in k8s["artifacts"] if a["name"] == "kubectl" and a["arch"] == "amd64")
    if not art["url"].startswith("file://"):
        raise SystemExit("smoke: the lock's kubectl is not a local file (%s)" % art["url"])
    kubectl = art["url"][len("file://"):]
    if sha256_file(kubectl)[0] != art["sha256"]:
        raise SystemExit("smoke: %s does not match the lock's sha256" % kubectl)
    cni = next(a for a in ("flannel", "calico", "cilium") if a in lock["addons"])
    image = next(i["ref"] for i in lock["addons"][cni]["images"] if i["ref"].endswith(":v" + lock["addons"][cni]["version"]))
    return kubectl, k8s["version"], image


class Cluster(object):
    def __init__(self, kubectl, kubeconfig):
        self.argv = [kubectl, "--kubeconfig", kubeconfig, "--request-timeout", "20s"]

    def run(self, *args, stdin=None, check=True):
        proc = subprocess.run(self.argv + list(args), input=stdin, capture_output=True, text=True, check=False)
        if check and proc.returncode != 0:
            raise SystemExit("smoke: kubectl %s failed: %s" % (" ".join(args), proc.stderr.strip()[-400:]))
        return proc

    def json(self, *args):
        return json.loads(self.run(*(list(args) + ["-o", "json"])).stdout)


def manifest(image, replicas):
    labels = {"app": "smoke"}
    serve = "mkdir -p /tmp/www && echo \"$POD\" > /tmp/www/index.html && exec busybox httpd -f -p %d -h /tmp/www" % PORT
    deploy = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "smoke", "namespace": NAMESPACE},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {
                "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                                 "effect": "NoSchedule"}],
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]}},
                "containers": [{
                    "name": "http", "image": image, "imagePullPolicy": "Never", "command": ["/bin/sh", "-c", serve],
                    "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "ports": [{"containerPort": PORT}],
                    "readinessProbe": {"tcpSocket": {"port": PORT}, "periodSeconds": 2}}]}}}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "smoke", "namespace": NAMESPACE},
               "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": PORT}]}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    return namespace, deploy, service


# The add-ons' workloads, by the repository their image comes from: {add-on: [(namespace, kind, name)]}.
WORKLOADS = {
    "kubernetes": [("kube-system", "daemonset", "kube-proxy"), ("kube-system", "deployment", "coredns")],
    "flannel": [("kube-flannel", "daemonset", "kube-flannel-ds")],
    "localPathProvisioner": [("local-path-storage", "deployment", "local-path-provisioner")],
    "metricsServer": [("kube-system", "deployment", "metrics-server")],
}


# What the smoke test shows of each add-on it exercises (the summary line).
ADDON_CHECKS = (("localPathProvisioner", "a volume kept its data"), ("metricsServer", "kubectl top nodes answered"))


def addon_images(k, lock):
    """Problems: an add-on's workload that is not available or runs an image the lock does not name."""
    problems = []
    for addon, workloads in sorted(WORKLOADS.items()):
        if addon not in lock["addons"]:
            continue
        refs = {i["ref"] for i in lock["addons"][addon]["images"]}
        for namespace, kind, name in workloads:
            obj = k.json("-n", namespace, "get", kind, name)
            spec = obj["spec"]["template"]["spec"]
            images = sorted({c["image"] for c in spec.get("containers", []) + spec.get("initContainers", [])})
            status = obj.get("status") or {}
            ready = (status.get("numberReady") == status.get("desiredNumberScheduled") if kind == "daemonset"
                     else status.get("availableReplicas") == obj["spec"].get("replicas"))
            state = "available" if ready else "NOT available"
            print("%s %s/%s (%s %s): %s, %s" % (kind, namespace, name, addon, lock["addons"][addon]["version"],
                                                ", ".join(images), state))
            stray = [i for i in images if i not in refs]
            if stray or not ready:
                problems.append("%s %s/%s: images %s (not in the lock: %s), available: %s"
                                % (kind, namespace, name, images, stray, ready))
    return problems


def storage(k, lock, image):
    """Problems of a local-path volume: bound under the spec's path, written, its pod deleted and made again, read."""
    options = lock["addons"]["localPathProvisioner"].get("options") or {}
    root = options.get("path") or "/opt/local-path-provisioner"
    token = os.urandom(8).hex()
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "smoke-data", "namespace": NAMESPACE},
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-path",
                    "resources": {"requests": {"storage": "16Mi"}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "smoke-storage", "namespace": NAMESPACE},
           "spec": {"tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                                     "effect": "NoSchedule"}],
                    "containers": [{"name": "app", "image": image, "imagePullPolicy": "Never",
                                    "command": ["/bin/sh", "-c", "exec busybox sleep 3600"],
                                    "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                    "terminationGracePeriodSeconds": 1,
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "smoke-data"}}]}}

    def fresh_pod():
        k.run("-n", NAMESPACE, "delete", "pod", "smoke-storage", "--ignore-not-found", "--wait=true")
        k.run("apply", "--server-side", "-f", "-", stdin=json.dumps(pod))
        wait("pod smoke-storage running with its volume",
             lambda: k.json("-n", NAMESPACE, "get", "pod", "smoke-storage")["status"].get("phase") == "Running")

    k.run("apply", "--server-side", "-f", "-", stdin=json.dumps(pvc))
    fresh_pod()
    claim = k.json("-n", NAMESPACE, "get", "pvc", "smoke-data")
    volume = k.json("get", "pv", claim["spec"]["volumeName"])
    where = (volume["spec"].get("hostPath") or volume["spec"].get("local") or {}).get("path", "")
    node = k.json("-n", NAMESPACE, "get", "pod", "smoke-storage")["spec"]["nodeName"]
    print("storage: PVC smoke-data %s, volume %s at %s on %s (provisioner %s)" % (
        claim["status"].get("phase"), volume["metadata"]["name"], where, node,
        (claim["metadata"].get("annotations") or {}).get("volume.kubernetes.io/storage-provisioner")))
    problems = []
    if claim["status"].get("phase") != "Bound" or not where.startswith(root + "/"):
        problems.append("PVC smoke-data: %s, volume at %r (the spec's path: %s)" % (claim["status"].get("phase"), where, root))
    k.run("-n", NAMESPACE, "exec", "smoke-storage", "--", "/bin/sh", "-c", "echo %s > /data/token" % token)
    fresh_pod()
    again = k.run("-n", NAMESPACE, "exec", "smoke-storage", "--", "cat", "/data/token", check=False).stdout.strip()
    print("storage: wrote %s, pod deleted and made again (on %s), read %r" % (
        token, k.json("-n", NAMESPACE, "get", "pod", "smoke-storage")["spec"]["nodeName"], again))
    if again != token:
        problems.append("the volume lost what a pod wrote: wrote %s, read %r after the pod was made again" % (token, again))
    return problems


def metrics(k, nodes):
    """Problems of ``kubectl top nodes``: it must answer for every node (metrics-server scrapes every kubelet)."""
    names = {n["metadata"]["name"] for n in nodes}

    def top():
        proc = k.run("top", "nodes", "--no-headers", check=False)
        return proc.stdout if proc.returncode == 0 and {row.split()[0] for row in proc.stdout.splitlines() if row} >= names else None

    try:
        out = wait("kubectl top nodes answering for every node", top)
    except SystemExit as e:
        return [str(e)]
    print("$ kubectl top nodes\n" + out)
    return []


def wait(what, probe):
    for _poll in range(POLLS):
        result = probe()
        if result:
            return result
        time.sleep(2)
    raise SystemExit("smoke: %s did not happen within %d polls" % (what, POLLS))


def from_every_node(inventory, url):
    """{host: body} of ``url`` asked on each host of the inventory (Ansible's uri module, over SSH)."""
    env = dict(os.environ, ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible"), "-i", inventory, "all", "-m", "ansible.builtin.uri", "-a",
                           "url=%s return_content=true timeout=10" % url], capture_output=True, text=True, env=env, check=False,
                          stdin=subprocess.DEVNULL)
    try:
        hosts = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]
    except (ValueError, LookupError):
        raise SystemExit("smoke: ansible uri on every node failed: %s" % (proc.stderr or proc.stdout)[-400:]) from None
    return {h: (r.get("content") or "").strip() if r.get("status") == 200 else "FAILED: %s" % r.get("msg")
            for h, r in sorted(hosts.items())}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inventory", required=True)
    p.add_argument("--lock", required=True)
    p.add_argument("--kubeconfig", help="default: admin.conf beside the inventory")
    args = p.parse_args(argv)
    kubeconfig = args.kubeconfig or os.path.join(os.path.dirname(os.path.abspath(args.inventory)), "admin.conf")
    kubectl, version, image = lock_facts(args.lock)
    with open(args.lock) as f:
        lock = yaml.safe_load(f)
    k = Cluster(kubectl, kubeconfig)
    problems = []
    print("$ kubectl get nodes -o wide\n" + k.run("get", "nodes", "-o", "wide").stdout)
    print("$ kubectl -n kube-system get pods -o wide\n" + k.run("-n", "kube-system", "get", "pods", "-o", "wide").stdout)
    nodes = k.json("get", "nodes")["items"]
    for node in nodes:
        name = node["metadata"]["name"]
        ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}.get("Ready")
        kubelet = node["status"]["nodeInfo"]["kubeletVersion"]
        if ready != "True" or kubelet != "v" + version:
            problems.append("node %s: Ready=%s, kubelet %s (the lock's: v%s)" % (name, ready, kubelet, version))
    for pod in k.json("-n", "kube-system", "get", "pods")["items"]:
        statuses = pod["status"].get("containerStatuses") or []
        if pod["status"].get("phase") != "Running" or not statuses or not all(s.get("ready") for s in statuses):
            phase = pod["status"].get("phase")
            problems.append("pod kube-system/%s: %s, not every container ready" % (pod["metadata"]["name"], phase))
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        yaml.safe_dump_all(manifest(image, len(nodes)), f)
        f.flush()
        k.run("apply", "--server-side", "-f", f.name)
    wait("the smoke Deployment's %d pods ready" % len(nodes),
         lambda: k.json("-n", NAMESPACE, "get", "deployment", "smoke")["status"].get("readyReplicas") == len(nodes))
    running = [p for p in k.json("-n", NAMESPACE, "get", "pods")["items"] if p["status"].get("phase") == "Running"]
    pods = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in running}
    ips = {p["metadata"]["name"]: p["status"].get("podIP") for p in running}
    print("smoke pods: %s" % ", ".join("%s on %s" % kv for kv in sorted(pods.items())))
    if sorted(set(pods.values())) != sorted(n["metadata"]["name"] for n in nodes):
        problems.append("smoke pods are not on every node: %s" % pods)
    ip = k.json("-n", NAMESPACE, "get", "service", "smoke")["spec"]["clusterIP"]
    answers = from_every_node(args.inventory, "http://%s:80/" % ip)
    for host, body in answers.items():
        print("from node %s: http://%s:80/ answered %r" % (host, ip, body))
        if body not in pods:
            problems.append("node %s: the Service's ClusterIP %s answered %r" % (host, ip, body))
    name = "smoke.%s.svc.cluster.local" % NAMESPACE
    pod = sorted(pods)[0]
    # Resolved in the pod through the cluster's DNS (its resolv.conf). No wget -T: Debian's busybox 1.35 crashes
    # with it; kubectl's --request-timeout bounds the call.
    dns = k.run("-n", NAMESPACE, "exec", pod, "--", "busybox", "wget", "-q", "-O", "-", "http://%s/" % name, check=False)
    print("from pod %s: http://%s/ answered %r" % (pod, name, dns.stdout.strip() or dns.stderr.strip()[-200:]))
    if dns.stdout.strip() not in pods:
        problems.append("pod %s: %s by DNS name did not answer with a smoke pod's name" % (pod, name))
    # Pod to pod across nodes (the CNI's overlay, no Service in between): the first pod asks every other pod's IP.
    for other in sorted(pods)[1:]:
        url = "http://%s:%d/" % (ips[other], PORT)  # the lab's pod network is IPv4
        direct = k.run("-n", NAMESPACE, "exec", pod, "--", "busybox", "wget", "-q", "-O", "-", url, check=False)
        answer = direct.stdout.strip()
        print("from pod %s on %s to pod %s on %s, %s answered %r"
              % (pod, pods[pod], other, pods[other], url, answer or direct.stderr.strip()[-200:]))
        if answer != other:
            problems.append("pod %s on %s did not reach pod %s on %s at %s" % (pod, pods[pod], other, pods[other], url))
    problems += addon_images(k, lock)
    if "localPathProvisioner" in lock["addons"]:
        problems += storage(k, lock, image)
    if "metricsServer" in lock["addons"]:
        problems += metrics(k, nodes)
    if problems:
        print("smoke: FAILED\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print("smoke: %d nodes Ready at v%s, every kube-system pod running, the Service answered from every node and "
          "by DNS name, every pod reached from a pod on another node; add-ons at the lock's images%s"
          % (len(nodes), version, "".join(", " + w for a, w in ADDON_CHECKS if a in lock["addons"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
