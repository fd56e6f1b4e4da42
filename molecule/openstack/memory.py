"""Sample the summed RSS of the test OpenStack's process groups; keep the peak in a file.

    python3 memory.py PIDS_DIR OUT_FILE     (runs until killed; every 2 s)
Each pid file under PIDS_DIR holds a process group id (tests/openstack/start.sh).
"""

import os
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def groups(pids_dir):
    out = set()
    try:
        names = os.listdir(pids_dir)
    except FileNotFoundError:
        return out
    for name in names:
        try:
            with open(os.path.join(pids_dir, name)) as f:
                out.add(int(f.read().strip()))
        except (OSError, ValueError):
            pass
    return out


def rss_mb(pgids):
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                stat = f.read()
            pgrp = int(stat.rsplit(")", 1)[1].split()[2])
            if pgrp not in pgids:
                continue
            with open("/proc/%s/statm" % pid) as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total // (1024 * 1024)


def main():
    pids_dir, out = sys.argv[1], sys.argv[2]
    peak = 0
    while True:
        pg = groups(pids_dir)
        if pg:
            now = rss_mb(pg)
            if now > peak:
                peak = now
                with open(out, "w") as f:
                    f.write("%d\n" % peak)
        time.sleep(2)


if __name__ == "__main__":
    main()
