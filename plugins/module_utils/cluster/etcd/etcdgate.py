# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the etcd health gates.

:func:`wait_health` looks at the members until they are healthy (optionally writing a key through the
cluster), :func:`describe_looks` tells what it saw, and :func:`restart_space_problem` refuses a
restart without room on the data directory's file system.
"""

from __future__ import annotations

import os
import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdctl import EtcdError, check_health, client_args, quorum
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdhttp import GATE_DIAL_TIMEOUT, process_starts

MIB = 1024 * 1024


def restart_space_problem(name, data_dir, reserve_mib, statvfs=os.statvfs, stat_path=os.stat):
    """Why member ``name`` must not be restarted for lack of space in ``data_dir``, or None.

    etcd writes its log in preallocated 64 MiB segments and its database grows in place: a member started
    on a nearly full disk fails at its first segment or commit, and stays down. A restart needs
    ``reserve_mib`` MiB free plus the size of its database (``member/snap/db``). No data directory yet
    (a member not bootstrapped): nothing to check."""
    try:
        fs = statvfs(data_dir)
    except FileNotFoundError:
        return None
    try:
        db = stat_path(os.path.join(data_dir, "member", "snap", "db")).st_size
    except FileNotFoundError:
        db = 0
    free = fs.f_bavail * fs.f_frsize
    need = int(reserve_mib) * MIB + db
    if free >= need:
        return None
    return ("%s: its data directory %s has %d MiB free; a restart needs %d MiB (%d MiB for etcd's write-ahead log, "
            "plus its %d MiB database). Not restarted: free space there, then run again"
            % (name, data_dir, free // MIB, -(-need // MIB), int(reserve_mib), -(-db // MIB)))


GATE_KEY = "/mooring/health/gate"


# How many of the latest looks a failed gate describes.
GATE_HISTORY = 6


def _member_url(member, urls):
    """The first of ``urls`` that is one of the member's client URLs (None if none)."""
    for url in member["client_urls"]:
        if url in urls:
            return url
    return None


def _look(run, base, write, starts):
    """One look for a gate: a write first (so every live member's raft index must move), then
    :func:`check_health`, then each member's process start time when ``starts`` is given.
    Returns the state with ``seen``: ``{name: {up, raft_index, start}}``."""
    write_error = ""
    if write:
        rc, out, err = run(base + ["put", GATE_KEY, "%.3f" % time.time()])
        if rc != 0:
            write_error = "a write failed: %s" % (err or out).strip()[:200]
    state = check_health(run, base)
    healthy = {e["endpoint"] for e in state["health"] if e["health"]}
    start_of = starts([u for m in state["members"] for u in m["client_urls"]]) if starts else {}
    seen = {}
    for m in state["members"]:
        url = _member_url(m, healthy)
        status_url = _member_url(m, state["raft_indexes"])
        start = next((start_of[u] for u in m["client_urls"] if start_of.get(u)), None)
        # With process start times asked for, a member that did not answer /metrics just now is down,
        # even if etcdctl's retries got a health answer from it within their command timeout.
        seen[m["name"] or m["id_hex"]] = {
            "up": url is not None and (not starts or start is not None),
            "raft_index": state["raft_indexes"].get(status_url) if status_url else None,
            "start": start,
        }
    state["seen"] = seen
    state["write_error"] = write_error
    return state


def _judge(state, previous, exclude, expected, min_uptime, now, wrote=False):
    """What keeps this look from counting towards a settled cluster (empty: nothing)."""
    problems = []
    if state["error"] and not state["members"]:
        problems.append("no quorum (%s)" % state["error"][:200])
        return problems
    if state["write_error"]:
        problems.append(state["write_error"])
    if expected is not None and state["total"] != int(expected):
        problems.append("%d members in the member list, expected %s" % (state["total"], expected))
    for name, m in sorted(state["seen"].items()):
        if name == exclude:
            continue
        before = (previous or {}).get("seen", {}).get(name) or {}
        if not m["up"]:
            problems.append("%s down" % name)
            continue
        if before.get("start") and m["start"] and abs(m["start"] - before["start"]) > 0.5:
            problems.append("%s restarted" % name)
        elif min_uptime and m["start"] and now - m["start"] < min_uptime:
            problems.append("%s up only %.0f s" % (name, max(0, now - m["start"])))
        if (wrote and previous is not None and m["raft_index"] is not None and before.get("raft_index") is not None
                and m["raft_index"] <= before["raft_index"]):
            problems.append("%s raft index stuck at %s" % (name, m["raft_index"]))
    others = [m for name, m in state["seen"].items() if name != exclude]
    if exclude is not None and state["total"] > 1 and sum(1 for m in others if m["up"]) < quorum(state["total"]):
        problems.append("without %s, %d of %d members are healthy; quorum needs %d"
                        % (exclude, sum(1 for m in others if m["up"]), state["total"], quorum(state["total"])))
    return problems


def describe_looks(looks, exclude=None, last=GATE_HISTORY, fallback=True):
    """One line on what went wrong in the ``last`` looks, member by member:
    ``etcd-3 flapped: down 4 of the last 6 checks, restarted 2 times``."""
    looks = looks[-last:]
    names = sorted({n for st in looks for n in st.get("seen", {})} - {exclude})
    parts = []
    for name in names:
        ups = [st["seen"][name]["up"] for st in looks if name in st.get("seen", {})]
        down = ups.count(False)
        starts = [st["seen"][name]["start"] for st in looks if name in st.get("seen", {}) and st["seen"][name]["start"]]
        restarts = sum(1 for a, b in zip(starts, starts[1:]) if abs(b - a) > 0.5)
        if not down and not restarts:
            continue
        if down == len(ups):
            parts.append("%s down in all of the last %d checks" % (name, len(ups)))
        else:
            verb = "flapped" if down or restarts else "restarted"
            again = {0: "", 1: ", restarted once"}.get(restarts, ", restarted %d times" % restarts)
            parts.append("%s %s: down %d of the last %d checks%s" % (name, verb, down, len(ups), again))
    if not parts and fallback:
        problems = []
        for st in looks:
            problems.extend(p for p in st.get("problems") or [] if p not in problems)
        parts.append("; ".join(problems or ["no look at the cluster succeeded"]))
    return "; ".join(parts)


def gate_client(params):
    """The ``etcdctl`` base command of a gate, from a module's client options (see :data:`GATE_DIAL_TIMEOUT`)."""
    return client_args(params["endpoints"], params["cacert"], params["cert"], params["key"], etcdctl=params["etcdctl"],
                       command_timeout=GATE_DIAL_TIMEOUT + 1, dial_timeout=GATE_DIAL_TIMEOUT)


def gate_kwargs(params, check_mode=False):
    """:func:`wait_health` keyword arguments from a module's ``gate_argument_spec`` and client options.
    In check mode the gate does not write its key (and so does not ask raft indexes to advance)."""
    settle = params["checks"] > 1 or params["min_uptime"] > 0

    def starts(urls):
        return process_starts(urls, params["cacert"], params["cert"], params["key"])

    return {"checks": params["checks"], "interval": params["interval"], "min_uptime": params["min_uptime"],
            "timeout": params["timeout"], "starts": starts if settle else None,
            "write": params["checks"] > 1 and not check_mode}


def wait_health(run, base, require="all", expected=None, timeout=0, interval=2.0, exclude=None, checks=1,
                min_uptime=0, starts=None, write=None, settling=None, sleep=time.sleep, clock=time.monotonic,
                now=time.time):
    """Poll the cluster until it is healthy enough, ``checks`` looks in a row, or ``timeout`` seconds pass;
    then raise :class:`EtcdError` naming what happened.

    ``require``: ``all`` - every member (but ``exclude``) healthy; ``quorum`` - a majority healthy.
    ``expected``: the member list must have this many members. ``exclude``: the member about to be
    restarted - it may be down, and the others must hold quorum without it. With ``checks`` > 1 (a
    settle window) every look writes one key first (unless ``write`` is false) and every member's raft
    index must advance from the look before; with ``starts`` (``urls -> {url: process start, epoch seconds}``) a member that
    restarted between looks, or has been up less than ``min_uptime`` seconds, breaks the run of good
    looks: a flapping member cannot slip through a lucky moment. ``settling``: a member just restarted on
    purpose; it must settle like the others, but its starting up is not reported in ``incidents`` (what
    the gate waited out: other members that were down or restarted).
    """
    if require not in ("all", "quorum"):
        raise EtcdError("require: %r is not one of all, quorum" % (require,))
    start = clock()
    looks = []
    streak = 0
    while True:
        wrote = checks > 1 if write is None else bool(write)
        state = _look(run, base, write=wrote, starts=starts)
        previous = looks[-1] if looks and streak else None
        if require == "all":
            problems = _judge(state, previous, exclude, expected, min_uptime, now(), wrote)
        else:
            problems = [] if state["has_quorum"] else ["%d of %d members healthy, quorum %d%s" % (
                state["healthy"], state["total"], state["quorum"],
                "; " + state["error"] if state["error"] else "")]
            if not problems and expected is not None and state["total"] != int(expected):
                problems = ["%d members in the member list, expected %s" % (state["total"], expected)]
        state["problems"] = problems
        looks.append(state)
        streak = 0 if problems else streak + 1
        state["attempts"] = len(looks)
        if streak >= max(1, int(checks)):
            state["looks"] = [{"problems": st["problems"], "seen": st["seen"]} for st in looks[-GATE_HISTORY:]]
            # What the gate waited out (a member that was down or restarted, then settled): worth reporting.
            state["incidents"] = (describe_looks(looks, settling or exclude, last=len(looks), fallback=False)
                                  if require == "all" and any(st["problems"] for st in looks) else "")
            return state
        if clock() - start >= timeout:
            what = describe_looks(looks, exclude) if require == "all" else "; ".join(problems)
            raise EtcdError("etcd is not healthy enough (require=%s%s%s) after %d checks in %ds: %s%s" % (
                require, "" if expected is None else ", expected %s members" % expected,
                "" if checks <= 1 else ", %d good checks in a row" % checks, len(looks), int(clock() - start),
                what, "; unhealthy: " + ", ".join(state["unhealthy"]) if state["unhealthy"] else ""))
        sleep(interval)
