# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Join cost figures: adding one host costs the same on a cluster of 3 hosts as on one of 25.

Not a timing test: the figures are ratios within one run. It does fail (exit 1) when the join
contacts a host other than the new one and the first control plane, which is what it checks.

For each size N in (3, 25) it makes its own lab of N + 1 hosts (``tests/lab/lab.py up``, privileged,
1 control-plane/etcd host, the other N - 1 existing hosts and the new host in ``workers``), then:

* installs the FIRST CONTROL PLANE ONLY, for real up to the kubeadm boundary
  (``mooring.cluster.install --limit NAME-1,localhost``: bundle, containerd, etcd, PKI, kubeadm node);
  the other N - 1 existing hosts are running, reachable lab hosts in the inventory that are NOT
  installed. That is honest only because the join never contacts them - which this run checks: a
  task or an SSH connection on any of them fails the benchmark;
* runs the documented command ``ansible-playbook -i INV mooring.cluster.join -e join_hosts=NEW ...``
  with ``-vvv`` and measures its wall time, the module runs per host from the play recap (ok +
  changed + failed; a loop counts once; controller-side tasks of the run are counted on the host they
  ran for) and the SSH connections per host address (``<ADDR> ESTABLISH SSH CONNECTION`` lines).

On the 3-host lab it first checks, untimed, that a join host not in the inventory is refused with
a one-line error before any host is contacted, and that ``--check`` prints the plan (the hosts not
contacted listed as such) and changes nothing. The lab has no kubeadm/kubelet (docs/lab.md): the join
stops at the same boundary as the install, after the bundle, containerd, PKI and node configuration
on the new host. Prints a table and the 25/3 wall-time ratio (aim <= 1.5). Removes the labs unless
``--keep``.

    python benchmarks/join_bench.py [--sizes 3,25] [--keep]
"""

import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, ".work", "joinbench")
CACHE = os.environ.get("MOORING_CACHE_DIR", "/var/cache/mooring")
MIRROR = os.environ.get("MOORING_MIRROR_DIR", os.path.join(CACHE, "mirror"))
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
AIM = 1.5


def lab(*args, capture=True):
    proc = subprocess.run([sys.executable, "tests/lab/lab.py"] + list(args), cwd=ROOT, stdin=subprocess.DEVNULL,
                          capture_output=capture, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit("join_bench: lab.py %s failed: %s" % (" ".join(args), (proc.stderr or "")[-2000:]))
    return proc.stdout


def lab_env(name):
    env = dict(os.environ, MOORING_CACHE_DIR=CACHE, MOORING_MIRROR_DIR=MIRROR)
    for key, value in re.findall(r"^export (\w+)=['\"]?(.*?)['\"]?$", lab("env", name), re.M):
        env[key] = value
    return env


def playbook(env, inventory, name, *extra):
    """(rc, output, seconds) of ansible-playbook -i INVENTORY mooring.cluster.NAME with the bench's lock."""
    argv = [PLAYBOOK, "-i", inventory, "mooring.cluster." + name,
            "-e", "mooring_lock=%s/installer.lock.yaml" % WORK, "-e", "mooring_bundle_file=%s/bundle.tar" % WORK,
            "-e", "bundle_signing_key=%s/signing/bundle-signing.key" % WORK] + list(extra)
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False)
    return proc.returncode, proc.stdout, time.monotonic() - start


def recap(output):
    """{host: module runs} from the play recap (ok + changed + failed)."""
    runs = {}
    for host, fields in re.findall(r"^(\S+)\s+: (ok=.*)$", output, re.M):
        f = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", fields))
        runs[host] = f["ok"] + f["changed"] + f["failed"]
    return runs


def connections(output):
    """{address: SSH connections} from -vvv output."""
    out = {}
    for addr in re.findall(r"^<([0-9.]+)> ESTABLISH SSH CONNECTION", output, re.M):
        out[addr] = out.get(addr, 0) + 1
    return out


def inventory_hosts(name, n):
    prefix = lab_env(name)["MOORING_LAB_NET"]
    return {"%s-%d" % (name, i): "%s.%d" % (prefix, 10 + i) for i in range(1, n + 1)}


def prepare():
    """Lab tooling, test mirror and the lock (cached after the first run), as scripts/demo.sh does."""
    lab("setup")
    lab("image")
    env = dict(os.environ, MOORING_CACHE_DIR=CACHE, MOORING_MIRROR_DIR=MIRROR)
    subprocess.run(["bash", "tests/mirror/build.sh"], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, check=True)
    os.makedirs(WORK, exist_ok=True)
    subprocess.run([os.path.join(ROOT, ".venv", "bin", "mooring"), "spec", "resolve", "tests/lab/installer.yaml",
                    "--catalog-overlay", os.path.join(MIRROR, "upstream-overlay"),
                    "-o", os.path.join(WORK, "installer.lock.yaml")], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, check=True)


def fail(msg, output=""):
    sys.stdout.write(output[-6000:])
    raise SystemExit("join_bench: " + msg)


def checks_before(env, inventory, hosts, new):
    """Untimed: a host not in the inventory is refused; --check prints the plan and changes nothing."""
    rc, out, _err = playbook(env, inventory, "join", "-e", "join_hosts=not-in-this-inventory")
    if rc == 0 or "join_hosts: not-in-this-inventory not in the inventory groups" not in out:
        fail("a join host not in the inventory was not refused with the expected message", out)
    if set(recap(out)) - {"localhost"} or connections(out):
        fail("the refused join contacted hosts: %s" % sorted(set(recap(out)) - {"localhost"}), out)
    rc, out, _err = playbook(env, inventory, "join", "-e", "join_hosts=" + new, "--check")
    untouched = re.findall(r"([\w.-]+): untouched \(not contacted", out)
    if rc != 0 or sorted(untouched) != sorted(set(hosts) - {new, min(hosts, key=_index)}):
        fail("join --check: rc %d, hosts listed as not contacted: %s" % (rc, untouched), out)
    if "%s: blocked" % new not in out and "%s: join_worker" % new not in out:
        fail("join --check printed no plan line for %s" % new, out)
    print("  refused join of a host not in the inventory (no host contacted); --check plan lists %d hosts as "
          "not contacted" % len(untouched))


def _index(host):
    return int(host.rsplit("-", 1)[1])


def measure(size, keep, checks=False):
    name = "joinb%d" % size
    lab("down", name)
    print("lab %s: %d existing hosts (1 control plane, installed; %d workers, NOT installed) + 1 new host"
          % (name, size, size - 1))
    lab("up", name, "-n", str(size + 1), "--control-plane", "1", "--privileged")
    try:
        env = lab_env(name)
        inventory = os.path.join(ROOT, "inventories", "lab", name, "hosts.yml")
        hosts = inventory_hosts(name, size + 1)
        first, new = "%s-1" % name, "%s-%d" % (name, size + 1)
        rc, out, seconds = playbook(env, inventory, "install", "--limit", first + ",localhost")
        if rc != 0:
            fail("install of %s failed (rc %d)" % (first, rc), out)
        print("  install of the first control plane only: %.0f s" % seconds)
        if checks:
            checks_before(env, inventory, hosts, new)
        load = os.getloadavg()[0]
        rc, out, seconds = playbook(env, inventory, "join", "-e", "join_hosts=" + new, "-vvv")
        load = "%.1f -> %.1f" % (load, os.getloadavg()[0])
        if rc != 0:
            fail("join of %s failed (rc %d)" % (new, rc), out)
        if "BOUNDARY" not in out:
            fail("the join did not reach the kubeadm boundary", out)
        runs, conns = recap(out), connections(out)
        others = sorted(h for h in hosts if h not in (first, new))
        touched = {h: (runs.get(h, 0), conns.get(hosts[h], 0)) for h in others if runs.get(h) or conns.get(hosts[h])}
        if touched:
            fail("the join contacted hosts other than %s and %s: %s" % (new, first, touched), out)
        return {"size": size, "seconds": seconds, "new": runs.get(new, 0), "first": runs.get(first, 0),
                "controller": runs.get("localhost", 0), "others": sum(runs.get(h, 0) for h in others),
                "others_ssh": sum(conns.get(hosts[h], 0) for h in others), "new_ssh": conns.get(hosts[new], 0),
                "first_ssh": conns.get(hosts[first], 0), "n_others": len(others),
                "load": load}
    finally:
        if not keep:
            lab("down", name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3,25", help="existing hosts per lab, comma-separated (first = small)")
    parser.add_argument("--keep", action="store_true", help="leave the labs running")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    prepare()
    rows = [measure(size, args.keep, checks=i == 0) for i, size in enumerate(sizes)]
    print()
    print("Existing hosts other than the first control plane are reachable lab hosts that were never installed;")
    print("the join did not contact them (0 tasks, 0 SSH connections), which makes them stand in for installed ones.")
    header = ("lab size", "join wall", "runs: new host", "runs: 1st ctl plane", "runs: other hosts", "ssh: others")
    print("%-12s %10s %16s %20s %18s %14s" % header)
    for r in rows:
        print("%-12s %9.1fs %16d %20d %18s %14d" % ("%d (+1 new)" % r["size"], r["seconds"], r["new"], r["first"],
                                                    "%d (%d hosts)" % (r["others"], r["n_others"]), r["others_ssh"]))
    print("(controller-side tasks, localhost: %s; SSH connections new host / 1st control plane: %s)"
          % (", ".join(str(r["controller"]) for r in rows),
             ", ".join("%d/%d" % (r["new_ssh"], r["first_ssh"]) for r in rows)))
    print("(1-minute load average before -> after each join, %d cores: %s; other work on the machine skews the ratio)"
          % (os.cpu_count(), ", ".join(r["load"] for r in rows)))
    small, big = rows[0], rows[-1]
    ratio = big["seconds"] / small["seconds"]
    print("join wall time %d hosts / %d hosts = %.2f (aim <= %.1f: %s)"
          % (big["size"], small["size"], ratio, AIM, "met" if ratio <= AIM else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
