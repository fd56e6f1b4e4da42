# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The VIP as a client sees it, and failover MEASURED, on the haendpoint lab (real keepalived, real kube-apiserver).

    python FILE VIP PORT CA KUBECONFIG NAME=ADDRESS...   (the control-plane hosts)

Every connection from here to a lab address goes through the route guard first (netguard.check), and to the
hosts through the lab's ssh ProxyCommand (tests/lab/lab.py connect). Behind the VIP: the cluster's kube-apiserver
static pods. The API is also sampled through the VIP every 0.5 s with the admin kubeconfig
(molecule/shared/apisampler.py: /readyz and a namespace list) for the whole test.

1. exactly one host holds the VIP (`ip -j addr` on every host) and the API answers through it;
2. TLS to VIP:PORT verifies against the cluster CA with the VIP as server name (the VIP is in the SANs); a server
   name outside the SANs is refused;
3. keepalived stopped on the holder: the VIP polled until another host holds it and /readyz answers through it
   again; prints `FAILOVER keepalived-stop: S s OLD -> NEW` (S counts from just before the ssh that stops it);
4. keepalived started again there, the VIP back on the preferred host; then the holder's kube-apiserver stopped
   (its static pod manifest moved out of /etc/kubernetes/manifests: the kubelet stops the pod) with keepalived
   still running: its health check must move the VIP - `FAILOVER apiserver-stop: ...`;
5. the manifest put back: the API server runs again there, the VIP back on it, one holder.
Prints the sampler's window (samples, failed, longest gap) per failover. Exits non-zero at the first failed
expectation or a failover slower than BOUND seconds.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.environ["ANSIBLE_COLLECTIONS_PATH"].split(os.pathsep)[0])
sys.path.insert(0, os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "molecule", "shared"))

import apisampler  # noqa: E402  (the API sampler, lab-only)

from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard  # noqa: E402

BOUND = 30.0  # a failover slower than this fails the test (keepalived's check runs every few seconds)
MANIFEST = "/etc/kubernetes/manifests/kube-apiserver.yaml"
ASIDE = "/etc/kubernetes/kube-apiserver.yaml.haendpoint-aside"
PROJECT = os.environ["MOLECULE_PROJECT_DIRECTORY"]
KEY = os.environ["MOORING_LAB_KEY"]
KNOWN_HOSTS = os.environ["MOORING_LAB_KNOWN_HOSTS"]  # written by tests/lab/lab.py create
CONTROL = tempfile.mkdtemp(prefix="mooring-haendpoint-ssh-")


def ssh(address, command):
    netguard.check(address)
    argv = ["ssh", "-i", KEY, "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=" + KNOWN_HOSTS,
            "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=10", "-o", "ProxyUseFdpass=yes",
            # One connection per host for the whole run: the command that causes a failover starts at once.
            "-o", "ControlMaster=auto", "-o", "ControlPath=%s/%%C" % CONTROL, "-o", "ControlPersist=30",
            "-o", "ProxyCommand=python3 %s/tests/lab/lab.py connect %%h %%p" % PROJECT, "root@%s" % address, command]
    return subprocess.run(argv, check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL).stdout


def holders(hosts, vip):
    out = []
    for host in hosts:
        links = json.loads(ssh(host["address"], "ip -j addr"))
        if any(a.get("local") == vip for link in links for a in link.get("addr_info") or []):
            out.append(host["name"])
    return out


def ask(vip, port, context, timeout=0.5):
    """Whether the API server behind the VIP answers GET /readyz with 200."""
    conn = http.client.HTTPSConnection(vip, port, timeout=timeout, context=context)
    try:
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        response.read(4096)
        return response.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def expect(condition, message):
    if not condition:
        print("FAILED: %s" % message, flush=True)
        sys.exit(1)


def one_holder(hosts, vip, port, context, expected=None, wait=180.0):
    """The one host that holds the VIP, the API answering through it (``expected``, when given: wait for that one)."""
    deadline = time.monotonic() + wait
    while True:
        found = holders(hosts, vip)
        answer = ask(vip, port, context, timeout=2)
        if len(found) == 1 and answer and expected in (None, found[0]):
            return found[0]
        if time.monotonic() > deadline:
            expect(False, "exactly one holder of %s with the API answering through it%s; holders %s, answers %s"
                   % (vip, " (%s)" % expected if expected else "", found, answer))
        time.sleep(0.5)


def failover(label, hosts, vip, port, context, old, command, sampler):
    """Run ``command`` on the holder ``old``; the seconds until another host holds the VIP and the API answers."""
    address = next(h["address"] for h in hosts if h["name"] == old)
    t0 = time.monotonic()
    ssh(address, command)
    new = None
    while True:
        elapsed = time.monotonic() - t0
        expect(elapsed < 120, "%s: the VIP did not move with the API answering through it within 120 s (holders %s)"
               % (label, holders(hosts, vip)))
        if new is None:
            found = holders(hosts, vip)
            new = found[0] if len(found) == 1 and found[0] != old else None
        if new is not None and ask(vip, port, context, timeout=0.3):
            break
        time.sleep(0.1)
    window = sampler.window(t0)
    print("FAILOVER %s: %.1f s %s -> %s; API sampled through the VIP: %s" % (label, elapsed, old, new, json.dumps(window)),
          flush=True)
    expect(elapsed < BOUND, "%s: failover took %.1f s (bound %.0f s)" % (label, elapsed, BOUND))
    expect(holders(hosts, vip) == [new], "%s: %s holds the VIP alone afterwards" % (label, new))
    return elapsed, window


def main():
    vip, port, ca, kubeconfig = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    hosts = [dict(zip(("name", "address"), pair.split("=", 1))) for pair in sys.argv[5:]]
    netguard.check(vip)  # refuse before the first packet if the VIP is not routed through the lab bridge
    context = ssl.create_default_context(cafile=ca)  # verifies the chain and the VIP as the server name
    context.check_hostname = True
    first = one_holder(hosts, vip, port, context)
    print("HOLDER %s: the API answers through %s:%d, certificate verified for %s" % (first, vip, port, vip), flush=True)
    # The VIP as server name is what is verified: a name the certificate does not carry is refused.
    raw = socket.create_connection((vip, port), timeout=3)
    try:
        context.wrap_socket(raw, server_hostname="not-in-the-sans.example").close()
        expect(False, "a server name outside the SANs was accepted")
    except ssl.SSLCertVerificationError:
        pass
    finally:
        raw.close()

    sampler = apisampler.ApiSampler(kubeconfig)
    sampler.start()
    first_address = next(h["address"] for h in hosts if h["name"] == first)
    times, windows = {}, {}
    times["keepalived-stop"], windows["keepalived-stop"] = failover(
        "keepalived-stop", hosts, vip, port, context, first, "systemctl stop keepalived", sampler)
    ssh(first_address, "systemctl start keepalived")
    # The preferred host takes the VIP back (keepalived preempts) once it runs again.
    one_holder(hosts, vip, port, context, expected=first)

    times["apiserver-stop"], windows["apiserver-stop"] = failover(
        "apiserver-stop", hosts, vip, port, context, first, "mv %s %s" % (MANIFEST, ASIDE), sampler)
    ssh(first_address, "mv %s %s" % (ASIDE, MANIFEST))
    # ... and once its API server answers again.
    back = one_holder(hosts, vip, port, context, expected=first)
    sampler.stop.set()
    sampler.join()
    for host in hosts:
        state = ssh(host["address"], "systemctl is-active keepalived kubelet; test -f %s && echo manifest" % MANIFEST).split()
        expect(state == ["active", "active", "manifest"], "%s: keepalived, the kubelet and the API server's manifest "
               "restored (%s)" % (host["name"], state))
    for host in hosts:  # close the shared connections
        subprocess.run(["ssh", "-o", "ControlPath=%s/%%C" % CONTROL, "-O", "exit", "root@%s" % host["address"]],
                       capture_output=True, check=False, stdin=subprocess.DEVNULL)
    shutil.rmtree(CONTROL, ignore_errors=True)
    print(json.dumps({"failover_seconds": {k: round(v, 2) for k, v in times.items()}, "api": windows, "holder": back}),
          flush=True)


if __name__ == "__main__":
    main()
