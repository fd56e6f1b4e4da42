# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""kURL's object hash against the number of nested objects (figures, not a pass/fail test).

The serialiser's cycle check was a scan of every object visited so far (quadratic: a
60 KB spec took 16 s); it is now a dict lookup. This prints, for specs of 1k, 4k and 16k
nested objects, the time per object of today's serialiser and of the list-scan baseline in
the same run, and the growth of the time per object from the smallest size (linear stays
near 1.0x; the baseline grows with the size).
Usage: .venv/bin/python benchmarks/hash_bench.py
"""

from __future__ import annotations

import sys
import time

from ansible_collections.mooring.cluster.plugins.module_utils.spec import object_hash as oh


class _ListScan(oh._Serializer):
    """The former cycle check: a linear scan of the visited list (the baseline)."""

    def remembered(self, obj):
        for index, seen in enumerate(self.context):
            if seen is obj:
                self.string("[CIRCULAR:%d]" % index)
                return True
        self.context.append(obj)
        return False


def spec(objects):
    return {"kubernetes": {"version": "1.35.x"},
            "extra": {"k%d" % i: {"v": i, "w": [str(i)]} for i in range(objects // 2)}}


def timed(cls, value):
    start = time.perf_counter()
    ser = cls()
    ser.dispatch(value)
    return time.perf_counter() - start, b"".join(ser.out)


def main():
    sizes = (1000, 4000, 16000)
    first = {}
    timed(oh._Serializer, spec(sizes[0]))  # warm-up: the first run pays for imports and caches
    print("%8s %16s %16s %12s %12s" % ("objects", "linear us/obj", "scan us/obj", "linear grow", "scan grow"))
    for n in sizes:
        value = spec(n)
        t_new, out_new = timed(oh._Serializer, value)
        t_old, out_old = timed(_ListScan, value)
        assert out_new == out_old, "the two serialisers disagree"
        per = (t_new / n * 1e6, t_old / n * 1e6)
        first.setdefault("new", per[0])
        first.setdefault("old", per[1])
        print("%8d %16.2f %16.2f %11.1fx %11.1fx" % (n, per[0], per[1], per[0] / first["new"], per[1] / first["old"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
