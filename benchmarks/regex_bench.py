# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""textAnalyze regexes on the hosts: CPU time of mooring's linear-time matcher (common/linre.py) against text
size, for typical troubleshoot patterns and for patterns that make a backtracking engine explode (figures, not
a pass/fail test).

Prints, for 64 KiB and 1 MiB of log-like text, the CPU seconds (time.process_time) of ``found`` (the DFA:
textAnalyze ``regex``) and ``search`` (the Pike VM: ``regexGroups``) with the match at the end of the text, and
the CPU seconds per MiB; then the catastrophic patterns over 'a' * n + '!bx' (n = 4000, 64 KiB, 1 MiB)
(a search past linre.MAX_STEPS prints "refused": that is the bound working); then Python's ``re`` on the first
catastrophic pattern over a few short inputs (each character more doubles its time; 31 characters take
minutes), as the baseline the matcher replaces.
Usage: .venv/bin/python benchmarks/regex_bench.py [--quick]
"""

from __future__ import annotations

import random
import re
import sys
import time

from ansible_collections.mooring.cluster.plugins.module_utils.common import linre

WORDS = ("kubelet", "etcd", "containerd", "node-1", "10.32.0.1", "NotReady", "GET", "/healthz", "200", "ok",
         "time=0.045", "ms", "icmp_seq=17", "ttl=64", "I0612", "reconciler.go:224]", "volume", "mounted")
TYPICAL = (
    ("regexGroups", r"(?P<Loss>\d+)% packet loss", "3 packets transmitted, 3 received, 0% packet loss\n"),
    ("regexGroups", r"v(?P<Major>\d+)\.(?P<Minor>\d+)\.(?P<Patch>\d+)", "kubelet v1.33.9\n"),
    ("regex", r"(?i)error|failed", "E0612 failed to sync\n"),
    ("regex", r"127\.0\.0\.1", "nameserver 127.0.0.1\n"),
    ("regex", r"(?m)^\S+\s+kubelet\b.*\bReady$", "2025 kubelet node-1 Ready\n"),
)
HOSTILE = (r"^(\w+\s?)*$", r"(a+)+$", r"(a|a)*b", r"(.*a){20}", r"\w*\w*\w*x", r"(?:a?){500}a{500}")


def log_text(size, seed=1):
    rnd = random.Random(seed)
    out, n = [], 0
    while n < size:
        line = "2025-06-12T10:%02d:%02d %s\n" % (n % 60, n % 59, " ".join(rnd.choice(WORDS) for _k in range(8)))
        out.append(line)
        n += len(line)
    text = "".join(out)
    return text[:text.rfind("\n", 0, size) + 1]  # whole lines: the tail starts a line of its own


def cpu(fn, *args):
    start = time.process_time()
    try:
        result = fn(*args)
    except linre.RegexError as exc:
        result = "refused: %s" % str(exc).split(": ", 1)[-1][:60]
    return time.process_time() - start, result


def main():
    quick = "--quick" in sys.argv
    sizes = (64 * 1024,) if quick else (64 * 1024, 1024 * 1024)
    print("%-12s %-45s %8s %9s %9s %7s" % ("mode", "pattern", "size", "found s", "search s", "s/MiB"))
    for size in sizes:
        for mode, pattern, tail in TYPICAL:
            text = log_text(size - len(tail)) + tail  # the match is on the last line: the whole text is read
            rx = linre.compile(pattern)
            t_found, hit = cpu(rx.found, text)
            t_search, m = cpu(rx.search, text)
            assert hit and m is not None, pattern
            per_mib = max(t_found, t_search) * 1024 * 1024 / size
            print("%-12s %-45s %8d %9.3f %9.3f %7.2f" % (mode, pattern, len(text), t_found, t_search, per_mib))
    print()
    print("%-45s %8s %9s %9s" % ("catastrophic for backtracking, 'a'...'!bx'", "chars", "found s", "search s"))
    for pattern in HOSTILE:
        for size in (4000,) + (() if quick else (64 * 1024 - 3, 1024 * 1024 - 3)):
            rx = linre.Regex(pattern)  # a fresh one: no state remembered from the smaller text
            text = "a" * size + "!bx"  # b and x: the literal fast path does not answer, the automata read it all
            t_found, hit = cpu(rx.found, text)
            t_search, m = cpu(rx.search, text)
            note = next((r for r in (hit, m) if isinstance(r, str)), "")
            print("%-45s %8d %9.3f %9.3f  %s" % (pattern, len(text), t_found, t_search, note))
    print()
    print("Python re, %s over 'a' * n + '!' (the baseline):" % HOSTILE[0])
    for n in ((14, 16) if quick else (14, 16, 18, 20)):
        t_re, _m = cpu(re.search, HOSTILE[0], "a" * n + "!")
        t_lin, _m = cpu(linre.compile(HOSTILE[0]).search, "a" * n + "!")
        print("  n=%2d  re %8.3f s   linre %8.5f s" % (n, t_re, t_lin))


if __name__ == "__main__":
    main()
