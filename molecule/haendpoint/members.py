# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A control plane leaves the cluster and joins it again behind the VIP, on the haendpoint lab (3 control planes, the
VIP, external etcd on all three), with the documented playbooks as separate processes:

    python FILE

1. ``mooring.cluster.remove_node -e remove_hosts=H3``: H3's keepalived stopped, disabled and its files gone, H1 and H2's
   keepalived without H3 among their unicast peers (reloaded: the same main PID), the node deleted, H3's external etcd
   member still serving; a re-run changes nothing.
2. ``mooring.cluster.join -e join_hosts=H3``: H3 a control plane again (node Ready, its kube-apiserver static pod
   running, keepalived active with H1 and H2 as peers), H1 and H2's keepalived with H3 again (reloaded), nothing on H1
   or H2 restarted (keepalived, the kubelet, containerd, etcd: systemd's start times; the API servers' containers:
   their start times from the API), the bootstrap token's secret not in the run's output; a re-run changes nothing.
The API is sampled through the VIP every 0.5 s throughout (molecule/shared/apisampler.py). Prints one JSON line per
step. Exits non-zero at the first failed expectation.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "molecule", "etcdroll"))
sys.path.insert(0, os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "molecule", "noderoll"))
sys.path.insert(0, os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "molecule", "shared"))

import apisampler  # noqa: E402  (the API sampler, lab-only)
import faults as lab  # noqa: E402  (SSH, runs of ansible-playbook, waiting)
import roll  # noqa: E402  (the noderoll scenario's kubectl and host-state helpers)
import yaml  # noqa: E402

H1, H2, H3 = lab.HOSTS
STAYING = (H1, H2)
LOCK = os.path.join(lab.EPH, "installer.lock.yaml")
KEEPALIVED_CONF = "/etc/keepalived/keepalived.conf"
expect = lab.expect


def peers(host):
    """The unicast peers in the host's keepalived configuration."""
    text = lab.ssh(host, "cat %s" % KEEPALIVED_CONF)
    block = text.split("unicast_peer {", 1)[1].split("}", 1)[0]
    return sorted(block.split())


def keepalived_pid(host):
    return lab.ssh(host, "systemctl show -p MainPID --value keepalived").strip()


def host_starts(host):
    """systemd's start times of the units a join or removal must not restart."""
    return {u: roll.unit_started(host, u + ".service") for u in ("keepalived", "kubelet", "containerd", "etcd")}


def apiserver_started(k):
    """{node: startedAt of its kube-apiserver container}, from the API."""
    out = {}
    for pod in k.json("get", "pods", "-n", "kube-system", "-l", "component=kube-apiserver")["items"]:
        running = (pod["status"].get("containerStatuses") or [{}])[0].get("state", {}).get("running") or {}
        out[pod["spec"]["nodeName"]] = running.get("startedAt")
    return out


def etcd_serves(host, test):
    """The host's external etcd member answers /version over a new TLS connection from the controller within 60 s;
    otherwise the failure shows what the host says about it."""
    lab.netguard.check(lab.ADDRESS[host])
    try:
        lab.wait_for("%s: %s's etcd member to answer" % (test, host),
                     lambda: (lab.SAMPLER.get(host, "/version", timeout=3) or {}).get("etcdserver"), 60)
    except lab.Failed as exc:
        seen = lab.ssh(host, "systemctl is-active etcd; ls -l /etc/kubernetes/pki /etc/kubernetes/pki/etcd; "
                             "journalctl -u etcd -n 15 --no-pager -o cat | cut -c1-300", check=False)
        others = {h: lab.SAMPLER.get(h, "/version", timeout=3) for h in lab.HOSTS}
        raise lab.Failed("%s; the members from here: %s; on %s: %s" % (exc, others, host, seen[-3000:])) from None


def report(test, run, since, api, **extra):
    print(json.dumps(dict(test=test, rc=run.proc.returncode, seconds=run.seconds, api=api.window(since), **extra)),
          flush=True)


def main():
    with open(LOCK) as f:
        k = roll.Kubectl(yaml.safe_load(f))
    address = {h: lab.ADDRESS[h] for h in lab.HOSTS}
    expect(peers(H1) == sorted([address[H2], address[H3]]), "before: %s's peers are %s" % (H1, peers(H1)))
    for h in lab.HOSTS:
        etcd_serves(h, "before")
    api = apisampler.ApiSampler(roll.KUBECONFIG)
    api.start()
    pids = {h: keepalived_pid(h) for h in STAYING}
    starts = {h: host_starts(h) for h in STAYING}

    # remove: the third control plane leaves
    remove = ["mooring.cluster.remove_node", "-e", "remove_hosts=%s" % H3]
    t = time.monotonic()
    run = lab.Run("cp-remove", remove)
    expect(run.wait(timeout=900) == 0, "cp-remove: %s" % run.why())
    nodes, _static = roll.cluster_state(k)
    expect(sorted(nodes) == sorted(STAYING), "cp-remove: the nodes are %s" % nodes)
    for h in STAYING:
        others = sorted(address[o] for o in STAYING if o != h)
        expect(peers(h) == others, "cp-remove: %s's keepalived peers are %s, not %s" % (h, peers(h), others))
        expect(keepalived_pid(h) == pids[h], "cp-remove: %s's keepalived was restarted, not reloaded" % h)
    left = lab.ssh(H3, "systemctl is-active keepalived; systemctl is-enabled keepalived; "
                       "test -e %s && echo config || echo no-config" % KEEPALIVED_CONF, check=False).split()
    expect(left == ["inactive", "disabled", "no-config"], "cp-remove: %s's keepalived: %s" % (H3, left))
    etcd_serves(H3, "cp-remove")
    report("cp-remove", run, t, api, removed=H3, peers={h: peers(h) for h in STAYING})
    t = time.monotonic()
    run = lab.Run("cp-remove-again", remove + ["-v"])  # -v: a changed task's result is in the failure message
    expect(run.wait(timeout=900) == 0, "cp-remove-again: %s" % run.why())
    try:
        roll.unchanged(run, "cp-remove-again", lab.HOSTS)
    except lab.Failed as exc:
        changed = [line[:700] for line in run.text.splitlines() if line.startswith("changed: [")]
        raise lab.Failed("%s; changed: %s" % (exc, changed)) from None
    report("cp-remove-again", run, t, api)

    # join: it comes back as a control plane
    join = ["mooring.cluster.join", "-e", "join_hosts=%s" % H3]
    apiservers = apiserver_started(k)
    t = time.monotonic()
    run = lab.Run("cp-join", join)
    expect(run.wait(timeout=1500) == 0, "cp-join: %s" % run.why())
    lab.wait_for("cp-join: node %s Ready" % H3, lambda: roll.cluster_state(k)[0].get(H3, {}).get("ready"), 240)
    lab.wait_for("cp-join: %s's kube-apiserver running" % H3, lambda: apiserver_started(k).get(H3), 240)
    for h in lab.HOSTS:
        others = sorted(address[o] for o in lab.HOSTS if o != h)
        expect(peers(h) == others, "cp-join: %s's keepalived peers are %s, not %s" % (h, peers(h), others))
    for h in STAYING:
        expect(keepalived_pid(h) == pids[h], "cp-join: %s's keepalived was restarted, not reloaded" % h)
        now = host_starts(h)
        expect(now == starts[h], "cp-join: %s restarted %s" % (h, [u for u in now if now[u] != starts[h][u]]))
        expect(apiserver_started(k).get(h) == apiservers.get(h), "cp-join: %s's kube-apiserver restarted" % h)
    expect(lab.ssh(H3, "systemctl is-active keepalived", check=False).strip() == "active", "cp-join: %s's keepalived" % H3)
    tokens = [base64.b64decode(i["data"]["token-secret"]).decode()
              for i in k.json("get", "secrets", "-n", "kube-system", "--field-selector",
                              "type=bootstrap.kubernetes.io/token")["items"]]
    expect(tokens and not any(s in run.text for s in tokens), "cp-join: a bootstrap token's secret is in the output "
           "(or no token: %d)" % len(tokens))
    report("cp-join", run, t, api, joined=H3, nodes=roll.cluster_state(k)[0])
    t = time.monotonic()
    run = lab.Run("cp-join-again", join)  # a joined host is refused by name, nothing changed
    expect(run.wait(timeout=1500) != 0 and "%s already joined" % H3 in run.text, "cp-join-again: not refused: %s" % run.why())
    recap = run.recap()  # the refused run reaches only some hosts: none of them changed
    expect(recap and all(r["changed"] == 0 for r in recap.values()), "cp-join-again: changed: %s" % recap)
    report("cp-join-again", run, t, api)
    api.stop.set()
    api.join()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lab.Failed as exc:
        print("FAILED %s" % exc, flush=True)
        sys.exit(1)
