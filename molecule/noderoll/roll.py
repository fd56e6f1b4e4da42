# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole-node rolling upgrade as users run it, on the noderoll lab (real containerd, etcd, SSH, systemd).

Each run is the documented command, a separate ``ansible-playbook`` process (molecule/etcdroll/faults.py's
``Run``, sampler and helpers are reused, not copied):

    ansible-playbook -i INVENTORY mooring.cluster.upgrade -e mooring_lock=LOCK -e mooring_bundle_file=BUNDLE

The hosts run lock A (containerd 1.6.20 build deb12u2, etcd 3.4.23). Tests, in order:
  skew       lock A itself as the target: etcd 3.4.23 with Kubernetes 1.33 breaks the etcd rule - refused with
             the one-line message, changed=0, nothing on any host changed, the MOCK kubectl never called
  failure    lock B (containerd build deb12u3, etcd 3.5.1) with a systemd drop-in on host 2 that fails
             containerd's start once the new binary is there: the run fails naming host 2; host 1 done (new
             containerd sha256, etcd 3.5.1, drained before and uncordoned after its restarts, in that order);
             host 3 untouched (old sha256, same ActiveEnterTimestamps, etcd 3.4.23, never in the mock's log);
             quorum held; the cluster lease given back
  resume     the drop-in removed, the same command: completes; every host on the new containerd and etcd 3.5.1,
             per host drain -> containerd start -> etcd start -> uncordon, host 3 after host 2's uncordon,
             the gate container ran, quorum held
  noop       the same command again: changed=0 on every host, no restart, the mock never called
  installguard  mooring.cluster.install with lock A (the other containerd build) on the rolled hosts: every host
             refuses before its containerd is installed or restarted, naming mooring.cluster.upgrade
Prints one JSON line per test and exits non-zero at the first failed expectation.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tarfile
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], "molecule", "etcdroll"))

import faults as lab  # noqa: E402  (the etcdroll scenario's sampler, SSH and run helpers)
import yaml  # noqa: E402

EPH = lab.EPH
HOSTS = lab.HOSTS
H1, H2, H3 = HOSTS
OLD_ETCD, NEW_ETCD = "3.4.23", "3.5.1"
LOCK = {name: os.path.join(EPH, "lock-%s.yaml" % name) for name in ("a", "b")}
# By the old names (deprecated until 0.4.0): this scenario is what proves they still work.
ARGS = {name: ["mooring.cluster.upgrade", "-e", "bundle_lock=%s" % LOCK[name], "-e", "bundle_file=%s/bundle-%s.tar" % (EPH, name)] for name in LOCK}
MOCK_LOG = "/var/log/mock-kubectl.log"
DROPIN = "/etc/systemd/system/containerd.service.d/99-noderoll-fault.conf"
expect = lab.expect


def containerd_sha(lock):
    """sha256 of bin/containerd inside the lock's containerd archive (the mirror's stand-in)."""
    with open(lock) as f:
        doc = yaml.safe_load(f)
    art = next(a for a in doc["addons"]["containerd"]["artifacts"] if a["name"] == "containerd")
    with tarfile.open(urlsplit(art["url"]).path) as t:
        return hashlib.sha256(t.extractfile("bin/containerd").read()).hexdigest()


def unit_started(host, unit):
    """ActiveEnterTimestamp (epoch seconds) of a systemd unit, from systemd's own property."""
    path = "/org/freedesktop/systemd1/unit/" + unit.replace(".", "_2e")
    out = lab.ssh(host, "busctl get-property org.freedesktop.systemd1 %s org.freedesktop.systemd1.Unit "
                        "ActiveEnterTimestamp" % path)
    return int(out.split()[1]) / 1e6


def state(host):
    out = lab.ssh(host, "sha256sum /usr/local/bin/containerd | cut -d' ' -f1; systemctl is-active containerd || true; "
                        "/usr/local/bin/etcd --version | head -n1")
    sha, active, etcd_line = out.splitlines()[:3]
    return {"sha": sha, "active": active, "etcd_bin": etcd_line.split()[-1],
            "containerd_t": unit_started(host, "containerd.service"), "etcd_t": unit_started(host, "etcd.service")}


def mock_log():
    """[(time, verb, node)] of the MOCK kubectl (drain/uncordon run on the first control plane)."""
    out = lab.ssh(H1, "cat %s 2>/dev/null || true" % MOCK_LOG)
    rows = []
    for line in out.splitlines():
        parts = line.split()
        verb = next((p for p in parts[1:] if p in ("drain", "uncordon", "cordon")), None)
        if verb:
            rows.append((float(parts[0]), verb, parts[parts.index(verb) + 1]))
    return rows


def served(host):
    return lab.SAMPLER.latest().get(host)


def unchanged(run, test):
    recap = run.recap()
    expect(recap and all(r["changed"] == 0 for r in recap.values()), "%s: changed on some host: %s" % (test, recap))


def order_ok(test, before, after, log, hosts, containerd_kept=()):
    """Per host: drain < containerd start < etcd start < uncordon; the next host's drain after that uncordon.
    ``containerd_kept``: hosts whose containerd already ran the new binary (not restarted by this run)."""
    last = None
    for host in hosts:
        if host in containerd_kept:
            expect(after[host]["containerd_t"] == before[host]["containerd_t"],
                   "%s: containerd on %s restarted although it ran the new binary" % (test, host))
        drains = [t for t, v, n in log if n == host and v == "drain"]
        uncordons = [t for t, v, n in log if n == host and v == "uncordon"]
        expect(drains and uncordons, "%s: %s was not drained and uncordoned (mock log: %s)" % (test, host, log))
        d, u = drains[-1], uncordons[-1]
        c, e = after[host]["containerd_t"], after[host]["etcd_t"]
        if host in containerd_kept:
            c = d  # not restarted by this run: only drain < etcd start < uncordon applies
        else:
            expect(c != before[host]["containerd_t"], "%s: containerd on %s was not restarted" % (test, host))
        expect(e != before[host]["etcd_t"], "%s: etcd on %s was not restarted" % (test, host))
        expect(d <= c < e < u, "%s: %s order wrong: drain %.2f containerd %.2f etcd %.2f uncordon %.2f"
               % (test, host, d, c, e, u))
        expect(last is None or d > last, "%s: %s drained at %.2f before the previous host's uncordon %.2f"
               % (test, host, d, last or 0))
        last = u


def report(test, run, since, **extra):
    w = lab.quorum_held(since, test)
    print(json.dumps(dict(test=test, rc=run.proc.returncode, seconds=run.seconds, samples=w["samples"],
                          min_serving=w["min_serving"], **extra)), flush=True)


def main():
    old_sha, new_sha = containerd_sha(LOCK["a"]), containerd_sha(LOCK["b"])
    expect(old_sha != new_sha, "the two containerd builds have the same bytes (%s)" % old_sha)
    lab.SAMPLER.start()
    lab.wait_for("every member to serve", lambda: all(served(h) for h in HOSTS), 30)
    s0 = {h: state(h) for h in HOSTS}
    for h in HOSTS:
        expect(s0[h]["sha"] == old_sha and s0[h]["active"] == "active" and s0[h]["etcd_bin"] == OLD_ETCD,
               "before: %s is not on lock A: %s" % (h, s0[h]))
    expect(mock_log() == [], "before: the mock kubectl was called already")

    # skew: the etcd rule
    t = time.monotonic()
    run = lab.Run("skew", ARGS["a"])
    run.wait()
    expect(run.proc.returncode != 0, "skew: the run passed")
    want = "etcd 3.4.23 is not supported by Kubernetes 1.33.9 (kubeadm 1.33 runs etcd 3.5.x)"
    expect(want in run.text, "skew: no line %r: %s" % (want, run.why()))
    unchanged(run, "skew")
    expect({h: state(h) for h in HOSTS} == s0, "skew: a host changed")
    expect(mock_log() == [], "skew: the mock kubectl was called")
    deprecated = "the variable bundle_lock is now mooring_lock"
    expect(deprecated in run.text, "skew: the old input name was taken without its deprecation warning: %s" % run.why())
    report("skew", run, t, message=want)

    # failure on the second host
    lab.ssh(H2, "mkdir -p %s && printf '[Service]\\nExecStartPre=/bin/sh -c \"! echo %s  /usr/local/bin/containerd "
                "| sha256sum -c --status\"\\n' > %s && systemctl daemon-reload"
            % (os.path.dirname(DROPIN), new_sha, DROPIN))
    t = time.monotonic()
    run = lab.Run("failure", ARGS["b"])
    run.wait()
    s1 = {h: state(h) for h in HOSTS}
    log1 = mock_log()
    expect(run.proc.returncode != 0, "failure: the run passed")
    recap = run.recap()
    expect(recap.get(H2, {}).get("failed") == 1, "failure: %s not named as failed: %s" % (H2, recap))
    expect(re.search(r"fatal: \[%s\]" % re.escape(H2), run.text), "failure: no fatal line for %s" % H2)
    expect(s1[H1]["sha"] == new_sha and served(H1) == NEW_ETCD and s1[H1]["etcd_bin"] == NEW_ETCD,
           "failure: %s not done: %s, serves %s" % (H1, s1[H1], served(H1)))
    order_ok("failure", s0, s1, log1, [H1])
    expect([n for _t, v, n in log1 if v == "drain"][-1] == H2, "failure: %s was not drained last: %s" % (H2, log1))
    expect(min(t for t, v, n in log1 if n == H2) > max(t for t, v, n in log1 if n == H1 and v == "uncordon"),
           "failure: %s drained before %s's uncordon: %s" % (H2, H1, log1))
    expect(s1[H3] == s0[H3], "failure: %s changed: %s -> %s" % (H3, s0[H3], s1[H3]))
    expect(served(H3) == OLD_ETCD, "failure: %s serves etcd %s" % (H3, served(H3)))
    expect(all(n != H3 for _t, _v, n in log1), "failure: %s in the mock's log: %s" % (H3, log1))
    lab.lease_free("failure")
    report("failure", run, t, failed=H2, host3_untouched=True)

    # resume: drop-in removed (containerd's Restart=always then starts the new binary on host 2 by itself),
    # the same command completes
    lab.ssh(H2, "rm -f %s && systemctl daemon-reload" % DROPIN)
    lab.wait_for("containerd on %s to run again" % H2, lambda: state(H2)["active"] == "active", 60)
    s1 = dict(s1, **{H2: state(H2)})
    expect(s1[H2]["sha"] == new_sha, "resume: %s runs containerd %s" % (H2, s1[H2]["sha"]))
    t = time.monotonic()
    n_before = len(log1)
    run = lab.Run("resume", ARGS["b"])
    expect(run.wait() == 0, "resume: %s" % run.why())
    s2 = {h: state(h) for h in HOSTS}
    log2 = mock_log()
    for h in HOSTS:
        expect(s2[h]["sha"] == new_sha and s2[h]["active"] == "active" and s2[h]["etcd_bin"] == NEW_ETCD
               and served(h) == NEW_ETCD, "resume: %s not on lock B: %s, serves %s" % (h, s2[h], served(h)))
    expect(s2[H1] == s1[H1], "resume: %s (done before) changed: %s -> %s" % (H1, s1[H1], s2[H1]))
    order_ok("resume", s1, s2, log2[n_before:], [H2, H3], containerd_kept=[H2])
    gates = re.findall(r"GATE containerd (\S+): .*hello from the mooring bundle", run.text)
    expect(set(gates) == {H2, H3}, "resume: gate container lines for %s" % gates)
    lab.lease_free("resume")
    report("resume", run, t, gates=sorted(gates))

    # noop
    t = time.monotonic()
    run = lab.Run("noop", ARGS["b"])
    expect(run.wait() == 0, "noop: %s" % run.why())
    unchanged(run, "noop")
    expect({h: state(h) for h in HOSTS} == s2, "noop: a host changed")
    expect(mock_log() == log2, "noop: the mock kubectl was called")
    report("noop", run, t)

    # installguard: the install path with lock A (the other containerd build) never swaps a running containerd
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
    expect({h: state(h) for h in HOSTS} == s2, "installguard: a host's containerd or etcd changed")
    expect(mock_log() == log2, "installguard: the mock kubectl was called")
    report("installguard", run, t)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except lab.Failed as exc:
        print("FAILED %s" % exc, flush=True)
        sys.exit(1)
