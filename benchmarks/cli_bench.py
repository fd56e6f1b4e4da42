# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: start-up of the ``mooring`` command line, group by group.

Every ``mooring`` command pays for the Python it imports before it does any work. For the
top-level help, each group's ``--help`` and one real command per group, this prints the median
and minimum wall time of N whole-process runs, the interpreter's own import accounting
(``python -X importtime``: the sum of every module's own import time, and how many modules),
and ``python -c pass`` as the floor. Prints figures; never pass/fail.
Usage: benchmarks/cli_bench.py [RUNS] (default 10).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "inventories", "example", "installer.yaml")
STACK = os.path.join(ROOT, "stacks", "openstack", "default", "1-35")
MAIN = "import sys; from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main; sys.exit(main())"


def mooring_argv():
    """The installed ``mooring`` (scripts/setup.sh) if there is one, else the same entry point via -c."""
    installed = os.path.join(os.path.dirname(sys.executable), "mooring")
    return [installed] if os.path.exists(installed) else [sys.executable, "-c", MAIN]


def wall(argv, runs):
    """Wall seconds of ``runs`` whole-process runs (after one warm-up run)."""
    subprocess.run(argv, capture_output=True, check=False, cwd=ROOT)
    times = []
    for _run in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=False, cwd=ROOT)
        times.append(time.perf_counter() - t0)
    return times


def import_time(args):
    """(seconds, modules): ``-X importtime``'s own time of every module imported by ``mooring ARGS``."""
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", MAIN, *args], capture_output=True, text=True,
                         check=False, cwd=ROOT)
    total = count = 0
    for line in run.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            own = line.split(":", 1)[1].split("|")[0].strip()
            if own.isdigit():
                total += int(own)
                count += 1
    return total / 1e6, count


def main(argv):
    runs = int(argv[0]) if argv else 10
    base = mooring_argv()
    with tempfile.TemporaryDirectory() as tmp:
        hosts = [{"name": "node00%d" % i, "addresses": ["10.1.0.%d" % (i + 1)]} for i in range(3)]
        request = os.path.join(tmp, "pki.yaml")
        with open(request, "w") as f:
            yaml.safe_dump({"control_plane_endpoint": "10.1.255.1:6443", "control_plane": hosts, "etcd": hosts,
                            "kubelets": [h["name"] for h in hosts]}, f)
        pki_dir = os.path.join(tmp, "pki")
        subprocess.run(base + ["pki", "generate", "--dir", pki_dir, "--config", request], check=True,
                       capture_output=True)
        groups = ["bundle", "catalog", "pki", "solution", "spec", "stack"]
        cases = [("--help", ["--help"])] + [("%s --help" % g, [g, "--help"]) for g in groups] + [
            ("pki generate (3 nodes, nothing due)", ["pki", "generate", "--dir", pki_dir, "--config", request]),
            ("pki list (3 nodes)", ["pki", "list", "--dir", pki_dir]),
            ("spec hash installer.yaml", ["spec", "hash", EXAMPLE]),
            ("spec resolve installer.yaml", ["spec", "resolve", EXAMPLE]),
            ("catalog list containerd", ["catalog", "list", "containerd"]),
            ("stack version 1-35 --check", ["stack", "version", STACK, "--check"]),
        ]
        floor = wall([sys.executable, "-c", "pass"], runs)
        print("mooring start-up, %d runs each (whole process, wall seconds; imports from python -X importtime)" % runs)
        print("  %-44s %8s %8s %10s %8s" % ("command", "median", "min", "imports s", "modules"))
        print("  %-44s %8.3f %8.3f %10s %8s" % ("python -c pass", statistics.median(floor), min(floor), "-", "-"))
        for label, case in cases:
            times = wall(base + case, runs)
            seconds, modules = import_time(case)
            row = ("mooring " + label, statistics.median(times), min(times), seconds, modules)
            print("  %-44s %8.3f %8.3f %10.3f %8d" % row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
