# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install cost figures (not a pass/fail test): the user's main job, measured in one run.

Runs ``scripts/demo.sh`` (resolve -> bundle -> ``mooring.cluster.install`` on a lab of 3
control-plane/etcd hosts and 1 worker, up to the kubeadm boundary, then the same install again)
on its own lab, and, on the same hosts right after, a baseline playbook of 40 no-op module runs per
host (``ansible.builtin.ping``: connection, module transfer and Python start-up, nothing else).
Prints, all from this one run:

* fresh install and no-op re-run wall time, and their ratio;
* module executions per host on the no-op re-run (from the run report: loop items counted,
  controller-side actions not) against the budget of 25 (Kubespray: ~340 tasks per host per re-run);
* RATIO lines: the re-run's and the fresh install's wall time as multiples of the 40-ping baseline.

    python benchmarks/install_bench.py [--lab bench] [--keep]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AIM = 40      # ping module runs per host in the baseline
BUDGET = 25   # module executions on the busiest host of a no-op re-run (issue 28)


def run_demo(lab):
    env = dict(os.environ, DEMO_LAB=lab)
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


def baseline(lab):
    """Wall time of 40 ping module runs per host on the lab's hosts, with the demo's settings."""
    inventory = os.path.join(ROOT, "inventories", "lab", lab, "hosts.yml")
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as play:
        play.write("- hosts: all\n  gather_facts: false\n  tasks:\n")
        for i in range(AIM):
            play.write("    - name: ping %d\n      ansible.builtin.ping:\n" % i)
    env = dict(os.environ)
    lab_env = subprocess.run([sys.executable, "tests/lab/lab.py", "env", lab], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
    for name, value in re.findall(r"^export (\w+)=['\"]?(.*?)['\"]?$", lab_env, re.M):
        env[name] = value
    start = time.monotonic()
    subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", inventory, play.name], cwd=ROOT,
                   env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    seconds = time.monotonic() - start
    os.unlink(play.name)
    return seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", default="bench")
    parser.add_argument("--keep", action="store_true", help="leave the lab running")
    args = parser.parse_args(argv)
    output = run_demo(args.lab)
    fresh, rerun = stage(output, "install"), stage(output, "re-run")
    runs = {h: int(n) for h, n in re.findall(r"^re-run (\S+)\s+changed=0 module executions=(\d+)", output, re.M)
            if h != "localhost"}  # the controller's own play (the bundle build) is not a host
    if not runs:
        raise SystemExit("install_bench: no per-host module runs in the demo's output")
    base = baseline(args.lab)
    print("fresh install: %d s; no-op re-run: %d s; re-run / fresh = %.2f" % (fresh, rerun, rerun / fresh))
    for host, count in sorted(runs.items()):
        print("module executions on the no-op re-run, %-10s %3d (budget <= %d)" % (host, count, BUDGET))
    print("baseline, %d ping module runs per host on the same hosts: %.1f s" % (AIM, base))
    print("RATIO noop/baseline %.2f (aim <= 1.0)" % (rerun / base))
    print("RATIO fresh/baseline %.2f (aim <= 2.5)" % (fresh / base))
    print("RATIO noop/fresh %.2f" % (rerun / fresh))
    if not args.keep:
        subprocess.run([sys.executable, "tests/lab/lab.py", "down", args.lab], cwd=ROOT, stdout=subprocess.DEVNULL,
                       check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
