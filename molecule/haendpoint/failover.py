# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The VIP as a client sees it, and failover MEASURED, on the haendpoint lab (real keepalived, real SSH).

    python3 failover.py VIP PORT CA NAME=ADDRESS...   (the control-plane hosts)

Every connection from here to a lab address goes through the route guard first (netguard.check), and to the
hosts through the lab's ssh ProxyCommand (tests/lab/lab.py connect). The API server behind the VIP is the
scenario's STAND-IN (mooring-test-apiserver-standin.service, prepare.yml): it answers GET /readyz with
`ok <hostname>`.

1. exactly one host holds the VIP (`ip -j addr` on every host);
2. TLS to VIP:PORT verifies against the cluster CA with the VIP as server name (the VIP is in the SANs) and the
   answer names the holder;
3. keepalived stopped on the holder: the VIP polled every 0.1 s until another host answers; prints
   `FAILOVER keepalived-stop: S s OLD -> NEW` (S counts from just before the ssh that stops it);
4. keepalived started again there, the VIP back on the preferred host; then the holder's STAND-IN apiserver
   stopped (keepalived still running): the check must move the VIP - `FAILOVER apiserver-stop: ...`;
5. everything restored, one holder again.
Exits non-zero at the first failed expectation or a failover slower than BOUND seconds.
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

from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard  # noqa: E402

BOUND = 10.0
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
    """The stand-in's answer through the VIP (`ok <hostname>`), None when nothing answers."""
    conn = http.client.HTTPSConnection(vip, port, timeout=timeout, context=context)
    try:
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        body = response.read().decode()
        return body.split()[1] if response.status == 200 and body.startswith("ok ") else None
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def expect(condition, message):
    if not condition:
        print("FAILED: %s" % message, flush=True)
        sys.exit(1)


def one_holder(hosts, vip, port, context, expected=None, wait=20.0):
    """The one host that holds the VIP and answers through it (``expected``, when given: wait for that one)."""
    deadline = time.monotonic() + wait
    while True:
        found = holders(hosts, vip)
        answer = ask(vip, port, context, timeout=2)
        if len(found) == 1 and answer == found[0] and expected in (None, answer):
            return found[0]
        if time.monotonic() > deadline:
            expect(False, "exactly one holder of %s answering through it%s; holders %s, answer %s"
                   % (vip, " (%s)" % expected if expected else "", found, answer))
        time.sleep(0.5)


def failover(label, hosts, vip, port, context, old, command):
    address = next(h["address"] for h in hosts if h["name"] == old)
    t0 = time.monotonic()
    ssh(address, command)
    while True:
        answer = ask(vip, port, context, timeout=0.3)
        elapsed = time.monotonic() - t0
        if answer and answer != old:
            break
        expect(elapsed < 60, "%s: no other host answered through the VIP within 60 s" % label)
        time.sleep(0.1)
    print("FAILOVER %s: %.1f s %s -> %s" % (label, elapsed, old, answer), flush=True)
    expect(elapsed < BOUND, "%s: failover took %.1f s (bound %.0f s)" % (label, elapsed, BOUND))
    expect(holders(hosts, vip) == [answer], "%s: %s holds the VIP alone afterwards" % (label, answer))
    return elapsed


def main():
    vip, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    hosts = [dict(zip(("name", "address"), pair.split("=", 1))) for pair in sys.argv[4:]]
    netguard.check(vip)  # refuse before the first packet if the VIP is not routed through the lab bridge
    context = ssl.create_default_context(cafile=ca)  # verifies the chain and the VIP as the server name
    context.check_hostname = True
    first = one_holder(hosts, vip, port, context)
    print("HOLDER %s answers through %s:%d, certificate verified for %s" % (first, vip, port, vip), flush=True)
    # The VIP as server name is what is verified: a name the certificate does not carry is refused.
    raw = socket.create_connection((vip, port), timeout=3)
    try:
        context.wrap_socket(raw, server_hostname="not-in-the-sans.example").close()
        expect(False, "a server name outside the SANs was accepted")
    except ssl.SSLCertVerificationError:
        pass
    finally:
        raw.close()

    times = {}
    times["keepalived-stop"] = failover("keepalived-stop", hosts, vip, port, context, first, "systemctl stop keepalived")
    ssh(next(h["address"] for h in hosts if h["name"] == first), "systemctl start keepalived")
    # The preferred host takes the VIP back (keepalived preempts) once it runs again.
    back = one_holder(hosts, vip, port, context, expected=first)

    times["apiserver-stop"] = failover("apiserver-stop", hosts, vip, port, context, first,
                                       "systemctl stop mooring-test-apiserver-standin")
    ssh(next(h["address"] for h in hosts if h["name"] == first), "systemctl start mooring-test-apiserver-standin")
    # ... and once its apiserver answers again.
    back = one_holder(hosts, vip, port, context, expected=first)
    for host in hosts:
        state = ssh(host["address"], "systemctl is-active keepalived mooring-test-apiserver-standin").split()
        expect(state == ["active", "active"], "%s: keepalived and the stand-in restored (%s)" % (host["name"], state))
    for host in hosts:  # close the shared connections
        subprocess.run(["ssh", "-o", "ControlPath=%s/%%C" % CONTROL, "-O", "exit", "root@%s" % host["address"]],
                       capture_output=True, check=False, stdin=subprocess.DEVNULL)
    shutil.rmtree(CONTROL, ignore_errors=True)
    print(json.dumps({"failover_seconds": {k: round(v, 2) for k, v in times.items()}, "holder": back}), flush=True)


if __name__ == "__main__":
    main()
