# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Time hash and resolve per installer spec (figures, not a pass/fail test).

Target from issue 2: hash + resolve under 1 ms per spec, with the catalog loaded once.
Usage: .venv/bin/python benchmarks/spec_bench.py [ROUNDS]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog, resolve_versions
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import build_lock
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import parse_installer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def per_call(fn, rounds):
    samples = []
    for _round in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3, sorted(samples)[int(rounds * 0.95) - 1] * 1e3


def main(argv):
    rounds = int(argv[1]) if len(argv) > 1 else 2000
    with open(os.path.join(ROOT, "inventories", "example", "installer.yaml"), encoding="utf-8") as handle:
        text = handle.read()
    start = time.perf_counter()
    catalog = load_catalog()
    print("catalog load (once): %.1f ms, %d add-ons" % ((time.perf_counter() - start) * 1e3, len(catalog.names())))
    installer = parse_installer(text)
    document = installer.document
    rows = [
        ("hash (spec mapping)", lambda: installer.hash),
        ("resolve versions", lambda: resolve_versions(catalog, installer.requested_versions())),
        ("hash + resolve", lambda: (installer.hash, resolve_versions(catalog, installer.requested_versions()))),
        ("validate mapping + hash + resolve", lambda: resolve_versions(catalog, parse_installer(document).requested_versions())),
        ("parse YAML + validate + hash + resolve", lambda: resolve_versions(catalog, parse_installer(text).requested_versions())),
        ("full lock (artifacts, images, digest)", lambda: build_lock(parse_installer(document), catalog)),
    ]
    print("%-40s %10s %10s   (%d rounds)" % ("per spec", "median ms", "p95 ms", rounds))
    for name, fn in rows:
        median, p95 = per_call(fn, rounds)
        print("%-40s %10.3f %10.3f" % (name, median, p95))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
