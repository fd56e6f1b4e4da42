# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling etcd upgrade as users run it, then under faults, on the etcdroll lab (real etcd, real SSH).

Each run is the documented command, a separate ``ansible-playbook`` process with ``USER`` unset (as in
CI, AWX and containers):

    ansible-playbook -i INVENTORY mooring.cluster.etcd_upgrade -e mooring_lock=NEW.lock -e mooring_bundle_file=NEW.tar

A sampler thread asks every member for ``/version`` every 0.2 s over mutual TLS (through the lab's route
guard): a member that answers is serving. Quorum is never lost while at least 2 of the 3 answer; each
test asserts that over its whole window, and that the 100 keys written before are all readable after.

Tests, in order (the cluster is reinstalled fresh at 3.4.23 before the first and the fourth):
  documented  3.4 -> 3.5 on a fresh cluster; then the same command again: changed=0, no member restarted
  crashloop   a member crash-looping after the first member is upgraded: the run stops, naming it, before a
              second member goes down; the members after it untouched
  killed      a run SIGKILLed (its whole process group) mid-way: the lease is given back at once; the re-run
              finishes the job (including what the crash-loop run left half done)
  sigkill     one SIGKILL of a member mid-roll: absorbed, reported as a warning naming it, run rc 0
  concurrent  a second run with default settings while the first holds the lease: refused naming the
              holder, changed=0 on every host (it waits the default etcd_lease_timeout, 30 s, and gives up
              while the first run still holds the lease)
Then faults beyond a kill (netfilter rules inside a lab host's network namespace, set from the controller
with nsenter; a size-limited tmpfs as a member's data directory). The gate timeout is 30 s in these runs
(-e etcd_gate_timeout=30, default 120) so a refusal comes sooner; everything else is as users run it.
  renewpart   certs_renew forcing the three members' server certificates; once the first member has
              restarted and settled (8 s), the third (a follower: its leadership is moved to the
              first if it leads) is partitioned from its peers (its peer port 2380 dropped both ways; the
              controller still reaches it): the run stops at its next gate (the first member's settle gate
              or the second member's gate) naming the third, the second not restarted; healed, a plain
              re-run rolls the second and third
  cutoff      run A (etcd_lease_ttl=20) holds the lease; once its first member is upgraded, the controller
              is cut off from every member's client port (the controller's own address dropped in every
              host) for 45 s, past A's TTL; run B is started 3 s into the cut (etcd_lease_timeout=180).
              A stops before its next host naming the lease; B waits out the cut, takes the lease once A's
              has expired and upgrades the rest; A changed nothing in the roll after its first member
  partition   on a fresh 3.4 cluster, once the first member is upgraded and settled (8 s) the third (a follower) is partitioned from its
              peers: the run stops at its next gate naming the third, the second not restarted
  diskfull    the third member's data directory is a 320 MiB tmpfs; once the second member is upgraded, a
              file fills it to 16 MiB free: the run stops before restarting the third, naming its free space,
              the third still serving the old version; with the file removed, a re-run finishes the job
In the partition tests quorum is counted twice: over the whole run from /version (as above), and while the
partition lasts from linearizable reads - a member serves when it answers one within 4 s (a member partitioned
from its peers still answers /version, but cannot serve a linearizable read). The cutoff and diskfull tests count
linearizable reads over the whole run.
The sampler asks from a second address of the controller on the lab bridge, which the cut leaves alone.
Prints one JSON line per test and exits non-zero at the first failed expectation.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

sys.path.insert(0, os.environ["ANSIBLE_COLLECTIONS_PATH"].split(os.pathsep)[0])

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import etcdhttp, etcdlease  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard  # noqa: E402

EPH = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
INVENTORY = os.environ["MOLECULE_INVENTORY_FILE"]
PROJECT = os.environ["MOLECULE_PROJECT_DIRECTORY"]
LAB = os.environ["MOORING_LAB"]
NET = os.environ["MOORING_LAB_NET"]
KEY = os.environ["MOORING_LAB_KEY"]
KNOWN_HOSTS = os.environ["MOORING_LAB_KNOWN_HOSTS"]  # written by tests/lab/lab.py create
PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
HOSTS = ["%s-%d" % (LAB, i) for i in (1, 2, 3)]
ADDRESS = {h: "%s.%d" % (NET, 10 + i) for i, h in enumerate(HOSTS, 1)}
URL = {h: "https://%s:2379" % ADDRESS[h] for h in HOSTS}
PKI = os.path.join(EPH, "pki", "etcd")
TLS = (os.path.join(PKI, "ca.crt"), os.path.join(PKI, "healthcheck-client.crt"), os.path.join(PKI, "healthcheck-client.key"))
OLD, NEW = "3.4.23", "3.5.1"
UPGRADE = ["-e", "mooring_lock=%s/installer-3.5.1.lock.yaml" % EPH, "-e", "mooring_bundle_file=%s/bundle-3.5.1.tar" % EPH]
KEYS = 100
PREFIX = "/mooring/verify/roll/"
RUNS = os.path.join(EPH, "runs")
CONTROLLER = NET + ".1"  # the lab bridge's gateway: the controller's address on the lab network
SAMPLER_ADDRESS = NET + ".254"  # a second address of the controller on the bridge, for the sampler only
FAST_GATE = ["-e", "etcd_gate_timeout=30"]
CUT_SECONDS = 45  # the controller's cut from etcd in the cutoff test: past run A's lease TTL (20 s)
DATA_DIR = "/var/lib/etcd"
READ_TIMEOUT = 4.0  # the sampler's linearizable read: longer than a leader election, shorter than any fault


class Failed(Exception):
    pass


def expect(ok, what):
    if not ok:
        raise Failed(what)


def client():
    return etcdhttp.GatewayClient(list(URL.values()), *TLS, timeout=5.0)


# ---------------------------------------------------------------------------------------------
# The sampler


class Sampler(threading.Thread):
    """Every 0.2 s: which members answer /version (and with which server version), and which say /health true."""

    def __init__(self):
        super().__init__(daemon=True)
        self.context = client().context
        self.samples = []  # (monotonic time the requests went out, {host: version or None}, {host: healthy})
        self.stop = threading.Event()
        self.pool = ThreadPoolExecutor(len(HOSTS))
        self.source = None  # (address, 0) once the controller's second lab address is up

    def get(self, host, path, body=None, timeout=0.5):
        parts = urlsplit(URL[host])
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout, context=self.context,
                                           source_address=self.source)
        try:
            if body is None:
                conn.request("GET", path)
            else:
                conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            return json.loads(resp.read()) if resp.status == 200 else None
        except (OSError, ValueError, http.client.HTTPException):
            return None
        finally:
            conn.close()

    def version(self, host):
        return (self.get(host, "/version") or {}).get("etcdserver")

    def healthy(self, host):
        """The member serves a linearizable read within READ_TIMEOUT s: it is part of a quorum with a leader.
        A member cut off from its peers cannot; a leader election (a leader restarted or partitioned away)
        only delays the answer by a second or two."""
        return "header" in (self.get(host, "/v3/kv/range", {"key": etcdhttp.b64(PREFIX + "k000")}, READ_TIMEOUT) or {})

    def look(self, host):
        return self.version(host), self.healthy(host)

    def run(self):
        for host in HOSTS:
            netguard.check(ADDRESS[host])  # refuse before the first request if not routed via the lab bridge
        while not self.stop.is_set():
            began = time.monotonic()  # a sample is dated when its requests go out (a read may take READ_TIMEOUT)
            looks = dict(zip(HOSTS, self.pool.map(self.look, HOSTS)))
            self.samples.append((began, {h: v for h, (v, _ok) in looks.items()},
                                 {h: ok for h, (_v, ok) in looks.items()}))
            self.stop.wait(0.2)

    def latest(self):
        return self.samples[-1][1] if self.samples else {}

    def latest_health(self):
        return self.samples[-1][2] if self.samples else {}

    def window(self, since, until=None, elections=False):
        """Quorum from ``since`` (to ``until``), as etcd defines it: a member serves a linearizable read only once the
        leader has confirmed it leads a quorum (ReadIndex), so quorum held in a sample where some member served one.
        Samples where fewer than 2 members answered the read in time (a member restarting or cut off, a survivor slow
        beside it on 2 shared cores) are counted, and the first is shown with each member's /version."""
        rows = [x for x in self.samples if x[0] >= since and (until is None or x[0] <= until)]
        unread = [x for x in rows if not any(x[2].values())]
        # With elections=True (a test that restarts a member over and over, or kills one that may lead) a sample without
        # a read but with a majority of members up is an election, counted and shown, not a lost quorum.
        elections = [x for x in unread if sum(1 for v in x[1].values() if v) * 2 > len(x[1])] if elections else []
        lost = [x for x in unread if x not in elections]
        serving = [sum(1 for ok in x[2].values() if ok) for x in rows]
        one = [x for x, n in zip(rows, serving) if n < 2]
        return {"samples": len(rows), "lost": len(lost), "elections": len(elections),
                "first_election": {"at": round(elections[0][0] - since, 1), "version": elections[0][1]} if elections else None,
                "min_serving": min(serving) if serving else None,
                "first_lost": {"at": round(lost[0][0] - since, 1), "read": lost[0][2], "version": lost[0][1]} if lost else None,
                "one_serving": len(one),
                "first_one_serving": {"at": round(one[0][0] - since, 1), "read": one[0][2], "version": one[0][1]} if one else None}


SAMPLER = Sampler()


def quorum_held(since, test, until=None, minimum=10, elections=False):
    """The sampler's window (see Sampler.window): fails when no member served a linearizable read in some sample."""
    w = SAMPLER.window(since, until, elections)
    expect(w["samples"] >= minimum, "%s: the etcd sampler took only %d samples" % (test, w["samples"]))
    expect(not w["lost"], "%s: no member served a linearizable read (quorum lost) in %d of %d samples, first: %s"
           % (test, w["lost"], w["samples"], w["first_lost"]))
    w.pop("first_lost")
    return w


def wait_for(what, predicate, timeout, proc=None):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        if proc is not None and proc.proc.poll() is not None:
            proc.wait()
            raise Failed("the run ended (rc %s) before %s: %s" % (proc.proc.returncode, what, proc.why()))
        time.sleep(0.1)
    raise Failed("timed out after %ds waiting for %s" % (timeout, what))


# ---------------------------------------------------------------------------------------------
# Hosts and runs


def ssh(host, command, check=True):
    netguard.check(ADDRESS[host])
    argv = ["ssh", "-i", KEY, "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=" + KNOWN_HOSTS,
            "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=10", "-o", "ProxyUseFdpass=yes",
            "-o", "ProxyCommand=%s %s/tests/lab/lab.py connect %%h %%p" % (sys.executable, PROJECT),
            "root@" + ADDRESS[host], command]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if check and res.returncode != 0:
        raise Failed("%s: %s failed (rc %d): %s" % (host, command, res.returncode, (res.stderr or res.stdout)[-500:]))
    return res.stdout


class Run:
    """One ansible-playbook process (own process group, USER unset), its output in runs/NAME.log."""

    def __init__(self, name, argv):
        os.makedirs(RUNS, exist_ok=True)
        self.name = name
        self.log = os.path.join(RUNS, name + ".log")
        env = {k: v for k, v in os.environ.items() if k not in ("USER", "LOGNAME")}
        env["ANSIBLE_NOCOLOR"] = "1"
        env["ANSIBLE_FORCE_COLOR"] = "0"
        self.t0 = time.monotonic()
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen([PLAYBOOK, "-i", INVENTORY] + argv, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env, start_new_session=True)

    def wait(self, timeout=900):
        self.proc.wait(timeout=timeout)
        self.seconds = round(time.monotonic() - self.t0, 1)
        with open(self.log) as f:
            self.text = re.sub(r"\x1b\[[0-9;]*m", "", f.read())
        return self.proc.returncode

    def why(self):
        """The failures and warnings of the run, for a test's failure message (the log itself may be gone)."""
        lines = [line[:600] for line in self.text.splitlines() if re.match(r"(fatal|failed|\[WARNING\]|ERROR)", line)]
        return "%s (%s): %s" % (self.name, self.log, " | ".join(lines[-6:]) or self.text[-1500:])

    def kill(self):
        os.killpg(self.proc.pid, signal.SIGKILL)
        return self.wait()

    def recap(self):
        out = {}
        for m in re.finditer(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", self.text, re.M):
            out[m.group(1)] = {"ok": int(m.group(2)), "changed": int(m.group(3)), "failed": int(m.group(5))}
        return out


def upgrade(name, *extra):
    return Run(name, ["mooring.cluster.etcd_upgrade"] + UPGRADE + list(extra))


def versions():
    return {h: SAMPLER.version(h) for h in HOSTS}


def starts():
    got = etcdhttp.process_starts([URL[h] for h in HOSTS], *TLS)
    return {h: got.get(URL[h]) for h in HOSTS}


def write_keys():
    c = client()
    for i in range(KEYS):
        c.call("/v3/kv/put", {"key": etcdhttp.b64("%sk%03d" % (PREFIX, i)), "value": etcdhttp.b64("v%03d" % i)})


def keys_intact(test):
    resp = client().call("/v3/kv/range", {"key": etcdhttp.b64(PREFIX), "range_end": etcdhttp.b64(PREFIX[:-1] + chr(ord(PREFIX[-1]) + 1))})
    got = {etcdhttp.unb64(kv["key"]): etcdhttp.unb64(kv["value"]) for kv in resp.get("kvs") or []}
    want = {"%sk%03d" % (PREFIX, i): "v%03d" % i for i in range(KEYS)}
    expect(got == want, "%s: %d of %d keys readable and right" % (test, sum(1 for k in want if got.get(k) == want[k]), KEYS))


def lease_free(test, within=15):
    c = client()
    wait_for("%s: the cluster lease to be free" % test, lambda: etcdlease.query_lease(c, "cluster")["holder"] is None, within)


def fresh_cluster(tmpfs=None):
    """A new 3.4.23 cluster: stop, wipe the data, converge with the 3.4.23 lock (the etcd scenario's converge).
    ``tmpfs``: a host whose data directory becomes a 320 MiB tmpfs first (a small disk to fill)."""
    for h in HOSTS:
        ssh(h, "systemctl stop etcd; systemctl reset-failed etcd || true; rm -rf %s/member %s/filler /etc/etcd/bootstrap.env"
            % (DATA_DIR, DATA_DIR))
    if tmpfs and not ssh(tmpfs, "mountpoint -q %s && echo mounted || true" % DATA_DIR).strip():
        # The lab hosts are not privileged: the mount is made from the controller in the host's mount namespace.
        inside(tmpfs, "-m", "mount", "-t", "tmpfs", "-o", "size=320m,mode=0700", "mooring-small-disk", DATA_DIR)
    run = Run("fresh-%d" % int(time.time()), [os.path.join(PROJECT, "molecule", "etcd", "converge.yml")])
    expect(run.wait() == 0, "fresh 3.4.23 cluster: converge failed: %s" % run.why())
    wait_for("every member serving %s" % OLD, lambda: set(versions().values()) == {OLD}, 60)
    write_keys()


# ---------------------------------------------------------------------------------------------
# Faults beyond a kill: netfilter rules and mounts inside one lab host, set from the controller


def lab_pid(host):
    """The PID of lab host ``host``'s init on the controller (podman with the lab's storage and configuration)."""
    out = subprocess.run(["podman", "inspect", "-f", "{{.State.Pid}}", host], capture_output=True, text=True,
                         check=True, timeout=60).stdout.strip()
    expect(out.isdigit() and int(out) > 0, "%s: podman inspect gave no PID (%r)" % (host, out))
    return out


def inside(host, namespace, *argv):
    """``argv`` run by the controller in one namespace (-n network, -m mount) of lab host ``host``."""
    res = subprocess.run(["nsenter", "-t", lab_pid(host), namespace, "--"] + list(argv), capture_output=True,
                         text=True, check=False, timeout=60)
    if res.returncode != 0:
        raise Failed("%s: %s failed (rc %d): %s" % (host, " ".join(argv), res.returncode, (res.stderr or res.stdout)[-300:]))


# Member partitioned from its peers: the peer port dropped both ways; clients (the controller, the other
# members' etcdctl) still reach its client port.
PARTITION = [["INPUT", "-p", "tcp", "--dport", "2380", "-j", "DROP"], ["OUTPUT", "-p", "tcp", "--dport", "2380", "-j", "DROP"]]
# The controller cut off from a member: its lab address dropped at the member's client port.
CUT = [["INPUT", "-s", CONTROLLER, "-p", "tcp", "--dport", "2379", "-j", "DROP"]]


@contextlib.contextmanager
def dropped(hosts, rules):
    """Netfilter ``rules`` inserted in each host's network namespace while the block runs, deleted after."""
    done = []
    try:
        for host in hosts:
            for rule in rules:
                inside(host, "-n", "iptables", "-I", *rule)
                done.append((host, rule))
        yield
    finally:
        for host, rule in done:
            inside(host, "-n", "iptables", "-D", *rule)


@contextlib.contextmanager
def sampler_address():
    """A second address of the controller on the lab bridge (a /32: no new route), used by the sampler only,
    so that cutting the controller's own address off leaves the measurement alone."""
    net = os.environ["MOORING_LAB_NETWORK"]
    bridge = subprocess.run(["podman", "network", "inspect", "-f", "{{.NetworkInterface}}", net], capture_output=True,
                            text=True, check=True, timeout=60).stdout.strip()
    expect(bridge.startswith("mlab"), "the lab network %s has bridge %r, not a lab bridge" % (net, bridge))
    subprocess.run(["ip", "addr", "replace", SAMPLER_ADDRESS + "/32", "dev", bridge], check=True, timeout=30)
    SAMPLER.source = (SAMPLER_ADDRESS, 0)
    try:
        yield
    finally:
        SAMPLER.source = None
        subprocess.run(["ip", "addr", "del", SAMPLER_ADDRESS + "/32", "dev", bridge], check=False, timeout=30)


SETTLE_SECONDS = 8  # a restarted member up this long has caught up; the roll's next restart is >= 15 s after it


def settle(run):
    """Wait until the member the run just restarted has settled, so that the partition is the only fault.
    Partitioning a member while another is still starting is two faults at once: if the partitioned one
    leads, the other two may need several seconds to elect a leader (a real gap no roll can prevent).
    The roll's own gates keep its next restart at least 15 s after the last one (settle window, then the
    next member's gate), so the partition still comes mid-roll, before the second member restarts."""
    end = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < end:
        if run.proc.poll() is not None:
            run.wait()
            raise Failed("the run ended (rc %s) before the partition: %s" % (run.proc.returncode, run.why()))
        time.sleep(0.2)


def member_id(host):
    """``(this member's id, the id of the leader it follows)`` from its /v3/maintenance/status."""
    st = etcdhttp.GatewayClient([URL[host]], *TLS, timeout=5.0).call("/v3/maintenance/status", {})
    return str((st.get("header") or {}).get("member_id")), str(st.get("leader"))


def lead_elsewhere(host, to):
    """If ``host`` leads, hand the leadership to ``to`` (etcd's move-leader) and wait until ``to`` sees the new
    leader; True when it moved. Partitioning a *leader* is another fault than partitioning a member: the
    other two must elect a new leader first (seconds without any linearizable read, however the roll
    behaves), so the partition tests partition a follower."""
    me, leader = member_id(host)
    if me != leader:
        return False
    target, _leader = member_id(to)
    etcdhttp.GatewayClient([URL[host]], *TLS, timeout=10.0).call("/v3/maintenance/transfer-leadership", {"targetID": target})
    wait_for("%s to lead instead of %s" % (to, host), lambda: member_id(to)[1] == target, 15)
    return True


def partition_mid_run(run, host, leader):
    """Once the member ``run`` just restarted has settled, ``host`` (made a follower: if it leads, the leadership
    goes to ``leader``) is partitioned from its peers until the run ends. Returns the run's rc and when
    (monotonic) the partition began and was healed, with the seconds from partition to the run's end."""
    settle(run)
    moved = lead_elsewhere(host, leader)
    with dropped([host], PARTITION):
        cut = time.monotonic()
        wait_for("%s to report itself unhealthy" % host, lambda: SAMPLER.latest_health().get(host) is False, 30, run)
        rc = run.wait()
        refused = round(time.monotonic() - cut, 1)
    return {"rc": rc, "cut": cut, "healed": time.monotonic(), "refused": refused, "moved": moved}


def partition_quorum(since, part, test):
    """Quorum in a partition test, as report fields: over the whole run (restarts and the heal included) from /version -
    the member healed after the run may start an election (cut off, it campaigns - without pre-vote, etcd 3.4's
    default - and its higher term unseats the leader): a sample without a read while a majority answers is that
    election, counted and shown; over the partition alone from linearizable reads, strictly."""
    held = quorum_held(since, test, elections=True)
    w = quorum_held(part["cut"], test, until=part["healed"], minimum=5)
    return {"quorum": w, "run_elections": held["elections"], "first_election": held["first_election"]}


def failures(run, host):
    """The run's fatal lines that name ``host``."""
    return [line[:600] for line in run.text.splitlines() if re.match(r"(fatal|failed|ERROR)", line) and host in line]


def changed_in_roll(run, hosts):
    """Which of ``hosts`` the run changed in its one-member-at-a-time play (its log after that play starts)."""
    text = run.text.split("PLAY [One member at a time]", 1)
    return sorted(h for h in hosts if len(text) > 1 and re.search(r"^changed: \[%s\]" % re.escape(h), text[1], re.M))


def report(test, **fields):
    print(json.dumps(dict({"test": test}, **fields)), flush=True)


def upgraded(run, since, test):
    """The run ended rc 0 with every member on NEW, quorum held since `since`, keys intact, lease free."""
    rc = run.wait()
    expect(rc == 0, "%s: rc %d: %s" % (test, rc, run.why()))
    expect(set(versions().values()) == {NEW}, "%s: versions %s" % (test, versions()))
    held = quorum_held(since, test)
    keys_intact(test)
    lease_free(test)
    return held


# ---------------------------------------------------------------------------------------------
# The tests


def test_documented():
    t = time.monotonic()
    run = upgrade("documented")
    w = upgraded(run, t, "documented")
    before = starts()
    again = upgrade("documented-rerun")
    expect(again.wait() == 0, "documented re-run: rc %d: %s" % (again.proc.returncode, again.why()))
    recap = again.recap()
    expect(recap and all(r["changed"] == 0 and r["failed"] == 0 for r in recap.values()),
           "documented re-run: not a no-op: %s" % recap)
    expect(starts() == before, "documented re-run: a member was restarted: %s -> %s" % (before, starts()))
    report("documented", upgrade_s=run.seconds, rerun_s=again.seconds, rerun_recap=recap, quorum=w)


def test_crashloop():
    t = time.monotonic()
    first, second, third = HOSTS
    before = starts()
    run = upgrade("crashloop")  # default settings: the gate gives up after etcd_gate_timeout, 120 s
    wait_for("%s to serve %s" % (first, NEW), lambda: SAMPLER.latest().get(first) == NEW, 300, run)
    ssh(third, "systemd-run --unit=mooring-crashloop --collect sh -c "
               "'while :; do systemctl kill -s KILL etcd; sleep 0.7; done' >/dev/null")
    try:
        rc = run.wait()
    finally:
        ssh(third, "systemctl stop mooring-crashloop", check=False)
    after = starts()
    expect(rc != 0, "crashloop: the run went on (rc 0) with %s crash-looping" % third)
    failure = "\n".join(line for line in run.text.splitlines() if third in line and ("flapped" in line or "down" in line))
    expect(failure, "crashloop: no failure naming %s (flapped/down): %s" % (third, run.why()))
    expect(after[second] == before[second] and after[second] is not None,
           "crashloop: %s was restarted (%s -> %s)" % (second, before[second], after[second]))
    expect(OLD in ssh(third, "/usr/local/bin/etcd --version"), "crashloop: %s's binaries were changed" % third)
    # etcd 3.4 runs without pre-vote: the killed member, restarting every 0.7 s, can start an election on rejoining.
    w = quorum_held(t, "crashloop", elections=True)
    ssh(third, "systemctl reset-failed etcd; systemctl start etcd")
    wait_for("%s serving again" % third, lambda: all(versions().values()), 60)
    keys_intact("crashloop")
    lease_free("crashloop")
    half = NEW in ssh(second, "/usr/local/bin/etcd --version")
    report("crashloop", run_s=run.seconds, rc=rc, quorum=w, message=failure[:400],
           left=("%s: %s binaries, process still %s" % (second, NEW if half else OLD, versions()[second])))


def test_killed():
    t = time.monotonic()
    run = upgrade("killed")
    todo = [h for h, v in versions().items() if v != NEW]
    expect(todo, "killed: nothing left to upgrade")
    wait_for("%s to serve %s" % (todo[0], NEW), lambda: SAMPLER.latest().get(todo[0]) == NEW, 300, run)
    run.kill()
    killed_at = versions()
    lease_free("killed", within=10)
    again = upgrade("killed-rerun")
    w = upgraded(again, t, "killed")
    report("killed", killed_after_s=run.seconds, versions_when_killed=killed_at, rerun_s=again.seconds,
           rerun_recap=again.recap(), quorum=w)


def test_sigkill_and_concurrent():
    t = time.monotonic()
    first, _second, third = HOSTS
    a = upgrade("sigkill-a")
    c = client()
    wait_for("run A to hold the lease", lambda: etcdlease.query_lease(c, "cluster")["holder"] is not None, 120, a)
    holder = etcdlease.query_lease(c, "cluster")["holder"]
    b = upgrade("concurrent-b")  # default settings, as a second operator runs it
    wait_for("%s to serve %s" % (first, NEW), lambda: SAMPLER.latest().get(first) == NEW, 300, a)
    ssh(third, "systemctl kill -s KILL etcd")
    rc_b = b.wait()
    rc_a = a.wait()
    expect(rc_b != 0, "concurrent: the second run was not refused (rc 0): %s" % b.why())
    expect(holder in b.text and "is held by" in b.text, "concurrent: the refusal does not name %r: %s" % (holder, b.why()))
    recap_b = b.recap()
    expect(recap_b and all(r["changed"] == 0 for r in recap_b.values()), "concurrent: the refused run changed: %s" % recap_b)
    expect(rc_a == 0, "sigkill: run A failed (rc %d): %s" % (rc_a, a.why()))
    expect(set(versions().values()) == {NEW}, "sigkill: versions %s" % versions())
    warned = [line for line in a.text.splitlines() if "WARNING" in line and third in line]
    expect(warned, "sigkill: the run did not report %s going down: %s" % (third, a.why()))
    # the killed member may have been the leader: the two left elect one (majority up, no read meanwhile)
    w = quorum_held(t, "sigkill", elections=True)
    keys_intact("sigkill")
    lease_free("sigkill")
    report("sigkill", run_s=a.seconds, warning=warned[0][:300], quorum=w)
    report("concurrent", holder=holder, refused_after_s=b.seconds, recap=recap_b)


def test_renew_partition():
    """certs_renew with the third member partitioned from its peers once the first has restarted."""
    t = time.monotonic()
    first, second, third = HOSTS
    before = starts()
    force = json.dumps({"force": ["etcd/members/%s/server" % h for h in HOSTS]})
    run = Run("renewpart", ["mooring.cluster.certs_renew", "-e", force] + FAST_GATE)
    wait_for("%s restarted with its new certificate" % first, lambda: starts()[first] not in (None, before[first]), 300, run)
    part = partition_mid_run(run, third, first)
    rc, after = part["rc"], starts()
    expect(rc != 0, "renewpart: the run went on (rc 0) with %s partitioned" % third)
    named = failures(run, third)
    expect(named, "renewpart: no failure naming %s: %s" % (third, run.why()))
    expect(after[second] == before[second], "renewpart: %s was restarted (%s -> %s)" % (second, before[second], after[second]))
    wait_for("every member healthy after healing", lambda: all(SAMPLER.latest_health().values()), 60)
    quorum = partition_quorum(t, part, "renewpart")
    keys_intact("renewpart")
    lease_free("renewpart")
    again = Run("renewpart-rerun", ["mooring.cluster.certs_renew"])
    expect(again.wait() == 0, "renewpart re-run: rc %d: %s" % (again.proc.returncode, again.why()))
    rolled = starts()
    expect(all(rolled[h] != after[h] for h in (second, third)),
           "renewpart re-run: %s and %s not both restarted with their new certificates (%s -> %s)" % (second, third, after, rolled))
    keys_intact("renewpart-rerun")
    lease_free("renewpart-rerun")
    report("renewpart", run_s=run.seconds, refused_after_partition_s=part["refused"], message=named[0][:400],
           leadership_moved_first=part["moved"], **quorum,
           rerun_s=again.seconds, rerun_recap=again.recap())


def test_cutoff():
    """Run A cut off from etcd past its lease's TTL while run B, started meanwhile, takes the lease."""
    t = time.monotonic()
    first, second, third = HOSTS
    a = upgrade("cutoff-a", "-e", "etcd_lease_ttl=20")
    c = client()
    wait_for("run A to hold the lease", lambda: etcdlease.query_lease(c, "cluster")["holder"] is not None, 120, a)
    holder_a = etcdlease.query_lease(c, "cluster")["holder"]
    wait_for("%s to serve %s" % (first, NEW), lambda: SAMPLER.latest().get(first) == NEW, 300, a)
    with dropped(HOSTS, CUT):
        cut = time.monotonic()
        time.sleep(3)
        b = upgrade("cutoff-b", "-e", "etcd_lease_timeout=180")
        a_end = at_a_end = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            a.proc.wait(timeout=CUT_SECONDS - 3)
            a_end, at_a_end = time.monotonic(), versions()
        time.sleep(max(0.0, CUT_SECONDS - (time.monotonic() - cut)))
    # A stops at its next lease check, in the cut (it cannot confirm the lease) or after it (its lease has
    # expired, and B may hold the key by then); either way before it changes another host.
    rc_a = a.wait()
    if a_end is None:
        a_end, at_a_end = time.monotonic(), versions()
    a_stopped = round(a_end - cut, 1)
    rc_b = b.wait()
    expect(rc_a != 0, "cutoff: run A went on (rc %s) cut off from etcd: %s" % (rc_a, a.why()))
    lost = [line[:600] for line in a.text.splitlines() if "cluster lease" in line and "stopping before the next host" in line]
    expect(lost, "cutoff: run A's failure does not name the lost lease: %s" % a.why())
    expect(changed_in_roll(a, [second, third]) == [], "cutoff: run A changed %s in the roll after the cut"
           % changed_in_roll(a, [second, third]))
    expect(rc_b == 0, "cutoff: run B failed (rc %d): %s" % (rc_b, b.why()))
    expect(changed_in_roll(b, [second, third]) == [second, third], "cutoff: run B did not upgrade %s and %s: %s"
           % (second, third, b.recap()))
    expect(set(versions().values()) == {NEW}, "cutoff: versions %s" % versions())
    w = quorum_held(t, "cutoff")
    keys_intact("cutoff")
    lease_free("cutoff")
    report("cutoff", holder_a=holder_a, a_stopped_after_cut_s=a_stopped, a_message=lost[0][:400],
           versions_when_a_stopped=at_a_end, b_s=b.seconds, b_recap=b.recap(), quorum=w)


def test_partition():
    """etcd_upgrade with the third member partitioned from its peers once the first is upgraded."""
    t = time.monotonic()
    first, second, third = HOSTS
    before = starts()
    run = upgrade("partition", *FAST_GATE)
    wait_for("%s to serve %s" % (first, NEW), lambda: SAMPLER.latest().get(first) == NEW, 300, run)
    part = partition_mid_run(run, third, first)
    rc, after = part["rc"], starts()
    expect(rc != 0, "partition: the run went on (rc 0) with %s partitioned" % third)
    named = failures(run, third)
    expect(named, "partition: no failure naming %s: %s" % (third, run.why()))
    expect(after[second] == before[second], "partition: %s was restarted (%s -> %s)" % (second, before[second], after[second]))
    expect(versions()[second] == OLD and versions()[third] == OLD, "partition: versions %s" % versions())
    wait_for("every member healthy after healing", lambda: all(SAMPLER.latest_health().values()), 60)
    quorum = partition_quorum(t, part, "partition")
    keys_intact("partition")
    lease_free("partition")
    report("partition", run_s=run.seconds, refused_after_partition_s=part["refused"], message=named[0][:400],
           leadership_moved_first=part["moved"], **quorum)


def test_diskfull():
    """etcd_upgrade meeting the third member's data disk filled to 16 MiB free once the second is upgraded."""
    t = time.monotonic()
    _first, second, third = HOSTS
    before = starts()
    run = upgrade("diskfull", *FAST_GATE)
    wait_for("%s to serve %s" % (second, NEW), lambda: SAMPLER.latest().get(second) == NEW, 300, run)
    ssh(third, "fallocate -l $(( $(df --output=avail -B1 %s | tail -n 1) - 16 * 1024 * 1024 )) %s/filler"
        % (DATA_DIR, DATA_DIR))
    filled = time.monotonic()
    free = ssh(third, "df --output=avail -BM %s | tail -n 1" % DATA_DIR).strip()
    rc = run.wait()
    refused = round(time.monotonic() - filled, 1)
    after = starts()
    expect(rc != 0, "diskfull: the run went on (rc 0) with %s's disk full" % third)
    named = [line for line in failures(run, third) if "MiB free" in line]
    expect(named, "diskfull: no failure naming %s's free space: %s" % (third, run.why()))
    expect(after[third] == before[third] and versions()[third] == OLD,
           "diskfull: %s was restarted (%s -> %s, now %s)" % (third, before[third], after[third], versions()[third]))
    w = quorum_held(t, "diskfull")
    keys_intact("diskfull")
    lease_free("diskfull")
    ssh(third, "rm -f %s/filler" % DATA_DIR)
    again = upgrade("diskfull-rerun")
    upgraded(again, t, "diskfull-rerun")
    report("diskfull", run_s=run.seconds, free_when_filled=free, refused_after_fill_s=refused, quorum=w,
           message=named[0][:400], rerun_s=again.seconds)


def main():
    SAMPLER.start()
    wait_for("the sampler", lambda: len(SAMPLER.samples) > 0, 10)
    try:
        if set(versions().values()) != {OLD}:  # a lab left by an earlier run of these tests
            fresh_cluster()
        write_keys()
        test_documented()
        fresh_cluster()
        test_crashloop()
        test_killed()
        fresh_cluster()
        test_sigkill_and_concurrent()
        with sampler_address():
            test_renew_partition()
            fresh_cluster()
            test_cutoff()
            fresh_cluster(tmpfs=HOSTS[2])
            test_partition()
            test_diskfull()
    except Failed as exc:
        print("FAILED: %s" % exc, flush=True)
        return 1
    finally:
        SAMPLER.stop.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
