# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install cost figures (not a pass/fail test): the user's main job, measured in one run, at several lab sizes.

For each size (default 4 and 12 hosts: 3 control-plane/etcd hosts, the rest workers) on its own lab:

* ``scripts/demo.sh`` (resolve -> bundle -> ``mooring.cluster.install``: kubeadm init and join, the CNI; then
  the same install again, which must change nothing): the fresh install's and the no-op re-run's wall time,
  and the module executions per host of the re-run (from the run report: loop items counted,
  controller-side actions not) against the budget of 25 on the busiest host;
* one more no-op install run here, for the controller's CPU seconds (user + system of the whole
  ``ansible-playbook`` process tree, from the kernel's accounting of waited-for children) per host-task
  (a task's result on one host, skipped ones included, from the PLAY RECAP);
* the baseline: a playbook of 40 ``ansible.builtin.ping`` module runs per host on the same hosts
  (connection, module transfer and Python start-up, nothing else), right after.

It prints ``RATIO`` lines: per size the no-op and the fresh install against the baseline, and between
the largest and the smallest size the no-op wall time and the CPU seconds per host-task.

    python benchmarks/install_bench.py [--sizes 4 12] [--keep]
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AIM = 40      # ping module runs per host in the baseline
BUDGET = 25   # module executions on the busiest host of a no-op re-run (issue 28)


def lab_env(lab):
    env = dict(os.environ)
    text = subprocess.run([sys.executable, "tests/lab/lab.py", "env", lab], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout
    for name, value in re.findall(r"^export (\w+)=['\"]?(.*?)['\"]?$", text, re.M):
        env[name] = value
    return env


def run_demo(lab, hosts):
    env = dict(os.environ, DEMO_LAB=lab, DEMO_HOSTS=str(hosts))
    proc = subprocess.run(["bash", "scripts/demo.sh"], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout[-4000:])
        raise SystemExit("install_bench: scripts/demo.sh failed (rc %d)" % proc.returncode)
    return proc.stdout


def stage(output, name):
    found = re.search(r"^::: %s done in (\d+)s" % re.escape(name), output, re.M)
    if not found:
        raise SystemExit("install_bench: no '%s' stage time in the demo's output" % name)
    return int(found.group(1))


def timed(argv, env):
    """(wall seconds, controller CPU seconds of the process tree, stdout) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout[-4000:])
        raise SystemExit("install_bench: %s failed (rc %d)" % (" ".join(argv[:3]), proc.returncode))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def host_tasks(output):
    """Task results on the hosts (ok + changed + failed + skipped) of a PLAY RECAP, localhost left out."""
    total = 0
    for line in output.splitlines():
        if re.match(r"^\S+\s+: ok=", line) and not line.startswith("localhost"):
            f = dict(re.findall(r"(\w+)=(\d+)", line))
            total += int(f["ok"]) + int(f["changed"]) + int(f["failed"]) + int(f["skipped"])
    return total


def noop_cpu(lab):
    """One more no-op install: its wall time, the controller's CPU seconds and the host-tasks it ran."""
    work = os.path.join(ROOT, ".work", lab)
    argv = [os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i",
            os.path.join(ROOT, "inventories", "lab", lab, "hosts.yml"), "mooring.cluster.install",
            "-e", "mooring_lock=%s/installer.lock.yaml" % work, "-e", "mooring_bundle_file=%s/bundle.tar" % work,
            "-e", "bundle_signing_key=%s/signing/bundle-signing.key" % work]
    wall, cpu, out = timed(argv, lab_env(lab))
    if re.search(r"^\S+\s+: ok=\d+\s+changed=[1-9]", out, re.M):
        raise SystemExit("install_bench: the extra no-op install changed something")
    return wall, cpu, host_tasks(out)


def baseline(lab):
    """Wall time of 40 ping module runs per host on the lab's hosts, with the demo's settings."""
    inventory = os.path.join(ROOT, "inventories", "lab", lab, "hosts.yml")
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as play:
        play.write("- hosts: all\n  gather_facts: false\n  tasks:\n")
        for i in range(AIM):
            play.write("    - name: ping %d\n      ansible.builtin.ping:\n" % i)
    try:
        wall, _cpu, _out = timed([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", inventory, play.name],
                                 lab_env(lab))
    finally:
        os.unlink(play.name)
    return wall


def measure(hosts, keep):
    lab = "bench%d" % hosts
    output = run_demo(lab, hosts)
    fresh, rerun = stage(output, "install"), stage(output, "re-run")
    runs = {h: int(n) for h, n in re.findall(r"^re-run (\S+)\s+changed=0 module executions=(\d+)", output, re.M)
            if h != "localhost"}  # the controller's own play (the bundle build) is not a host
    if not runs:
        raise SystemExit("install_bench: no per-host module executions in the demo's output")
    wall, cpu, tasks = noop_cpu(lab)
    base = baseline(lab)
    if not keep:
        subprocess.run([sys.executable, "tests/lab/lab.py", "down", lab], cwd=ROOT, stdout=subprocess.DEVNULL,
                       check=False)
    return {"hosts": hosts, "fresh": fresh, "rerun": rerun, "runs": runs, "noop_wall": wall, "cpu": cpu,
            "host_tasks": tasks, "baseline": base}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 12])
    parser.add_argument("--keep", action="store_true", help="leave the labs running")
    args = parser.parse_args(argv)
    results = [measure(n, args.keep) for n in args.sizes]
    for r in results:
        n = r["hosts"]
        print("%d hosts: fresh install %d s; no-op re-run %d s; baseline (%d pings per host) %.1f s"
              % (n, r["fresh"], r["rerun"], AIM, r["baseline"]))
        print("%d hosts: module executions on the no-op re-run, busiest host %d (budget <= %d): %s"
              % (n, max(r["runs"].values()), BUDGET, json.dumps(r["runs"], sort_keys=True)))
        print("%d hosts: extra no-op run %.1f s, controller CPU %.1f s for %d host-tasks = %.3f s per host-task"
              % (n, r["noop_wall"], r["cpu"], r["host_tasks"], r["cpu"] / max(r["host_tasks"], 1)))
        print("RATIO %dhosts noop/baseline %.2f (aim <= 1.0)" % (n, r["rerun"] / r["baseline"]))
        print("RATIO %dhosts fresh/baseline %.2f (aim <= 2.5)" % (n, r["fresh"] / r["baseline"]))
    if len(results) > 1:
        small, big = results[0], results[-1]
        per = [r["cpu"] / max(r["host_tasks"], 1) for r in (small, big)]
        print("RATIO noop %dhosts/%dhosts %.2f (aim <= 2.0)" % (big["hosts"], small["hosts"], big["rerun"] / small["rerun"]))
        print("RATIO cpu-per-host-task %dhosts/%dhosts %.2f (aim <= 1.3)" % (big["hosts"], small["hosts"], per[1] / per[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
