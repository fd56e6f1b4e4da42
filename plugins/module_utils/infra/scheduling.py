# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: role scheduling for discovered machines (Enjoliver style).

Pure functions, no Ansible: a list of machines plus the persisted assignment state go in;
the roles (``control_plane`` + ``etcd``, or ``worker``), the new state and human-readable
reasons come out.

Rules:

* A machine is identified by its MAC address when it has one, else by its name.
* The control plane has an odd size N (1, 3 or 5). It is scheduled once, when at least N
  *eligible* machines (enough CPUs and memory) exist: the first N eligible machines in a
  stable order (name, then id; never the input order) become ``control_plane`` and ``etcd``.
  Until then nothing is scheduled and the reason says how many machines are missing.
* Once the control plane exists, every other machine (new or old) becomes a ``worker``.
* An assignment never changes: a machine keeps its role when machines are added, removed or
  come back. A control-plane machine that disappears stays recorded as missing; nothing is
  promoted in its place. Only :func:`replace_control_plane` (run by the explicit
  ``replace_control_plane.yml`` playbook) moves the role to another machine.
"""

from __future__ import annotations

import json
import os
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import write_if_changed

STATE_API_VERSION = "cluster.mooring.io/v1beta1"
STATE_KIND = "MachineSchedule"
CONTROL_PLANE = "control_plane"
WORKER = "worker"
ALLOWED_CONTROL_PLANE_COUNTS = (1, 3, 5)
DEFAULT_MIN_CPUS = 2
DEFAULT_MIN_MEMORY_MB = 1700  # kubeadm's own preflight minimum for a control-plane node

_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


class SchedulingError(MooringError):
    """Machines, configuration or the schedule state are unusable; nothing was changed."""


def normalize_mac(value):
    """``AA-BB-..`` / ``aa:bb:..`` -> ``aa:bb:..``; ``None`` when absent or all zero."""
    if value in (None, ""):
        return None
    mac = str(value).strip().lower().replace("-", ":")
    if not _MAC.match(mac):
        raise SchedulingError("bad MAC", ["machine MAC address %r is not of the form aa:bb:cc:dd:ee:ff" % value])
    if mac == "00:00:00:00:00:00":
        return None
    return mac


def _int(value, field, name):
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SchedulingError("bad machine", ["machine %r: %s %r is not a whole number" % (name, field, value)]) from None


def normalize_machine(raw):
    """One machine record (as written by ``discover.yml``) -> canonical dict with an ``id``."""
    if not isinstance(raw, dict):
        raise SchedulingError("bad machine", ["machine entry %r is not a mapping" % (raw,)])
    name = raw.get("name")
    if not name or not isinstance(name, str):
        raise SchedulingError("bad machine", ["machine entry %r has no 'name'" % (raw,)])
    mac = normalize_mac(raw.get("mac"))
    disks = raw.get("disks") or {}
    if not isinstance(disks, dict):
        raise SchedulingError("bad machine", ["machine %r: 'disks' must map device name to size" % name])
    return {
        "id": mac or name,
        "name": name,
        "address": raw.get("address") or None,
        "mac": mac,
        "cpus": _int(raw.get("cpus"), "cpus", name),
        "memory_mb": _int(raw.get("memory_mb"), "memory_mb", name),
        "disks": dict(sorted((str(k), v) for k, v in disks.items())),
    }


def normalize_machines(raws):
    machines = [normalize_machine(r) for r in raws or []]
    seen = {}
    problems = []
    for m in machines:
        if m["id"] in seen:
            problems.append("machines %r and %r have the same identity %r (MAC or name)" % (seen[m["id"]], m["name"], m["id"]))
        seen[m["id"]] = m["name"]
    if problems:
        raise SchedulingError("duplicate machines", problems)
    return machines


def order_key(machine):
    """The stable order: by name, then by id. Input order never matters."""
    return (machine["name"], machine["id"])


def eligibility(machine, min_cpus=DEFAULT_MIN_CPUS, min_memory_mb=DEFAULT_MIN_MEMORY_MB):
    """``None`` when the machine may join the control plane, else the reason it may not."""
    reasons = []
    if machine["cpus"] is None or machine["cpus"] < min_cpus:
        reasons.append("%s CPUs < %d" % (machine["cpus"], min_cpus))
    if machine["memory_mb"] is None or machine["memory_mb"] < min_memory_mb:
        reasons.append("%s MiB memory < %d" % (machine["memory_mb"], min_memory_mb))
    return "; ".join(reasons) or None


def check_control_plane_count(count):
    if isinstance(count, bool) or not isinstance(count, int) or count not in ALLOWED_CONTROL_PLANE_COUNTS:
        raise SchedulingError(
            "bad control plane size",
            ["control_plane_count %r is not allowed: use one of %s (etcd needs an odd number of members)"
             % (count, ", ".join(str(c) for c in ALLOWED_CONTROL_PLANE_COUNTS))],
        )
    return count


def empty_state():
    return {"apiVersion": STATE_API_VERSION, "kind": STATE_KIND, "controlPlaneCount": None, "machines": {}}


def validate_state(state):
    if state is None:
        return empty_state()
    problems = []
    if not isinstance(state, dict):
        raise SchedulingError("bad schedule state", ["schedule state is not a mapping"])
    if state.get("kind") != STATE_KIND:
        problems.append("schedule state kind is %r, expected %r" % (state.get("kind"), STATE_KIND))
    machines = state.get("machines")
    if not isinstance(machines, dict):
        problems.append("schedule state 'machines' must be a mapping of machine id to assignment")
        machines = {}
    for mid, entry in machines.items():
        if not isinstance(entry, dict) or entry.get("role") not in (CONTROL_PLANE, WORKER):
            problems.append("schedule state machine %r: role must be %r or %r" % (mid, CONTROL_PLANE, WORKER))
    cp = sorted(mid for mid, e in machines.items() if isinstance(e, dict) and e.get("role") == CONTROL_PLANE)
    count = state.get("controlPlaneCount")
    if cp and count != len(cp):
        problems.append("schedule state records %d control-plane machines but controlPlaneCount %r" % (len(cp), count))
    if cp and len(cp) % 2 == 0:
        problems.append("schedule state has an even control plane (%d machines)" % len(cp))
    if problems:
        raise SchedulingError("bad schedule state", problems)
    return {
        "apiVersion": STATE_API_VERSION,
        "kind": STATE_KIND,
        "controlPlaneCount": count if cp else None,
        "machines": {str(k): dict(v) for k, v in machines.items()},
    }


def _first_control_plane(present, new, control_plane_count, min_cpus, min_memory_mb, messages):
    """Schedule the control plane on the first ``control_plane_count`` eligible machines (into ``new``);
    their ids, or [] (with the reasons in ``messages``) when too few are eligible."""
    eligible = [m for m in present if eligibility(m, min_cpus, min_memory_mb) is None]
    if len(eligible) < control_plane_count:
        messages.append(
            "no control plane scheduled: %d of %d machines needed are eligible (>= %d CPUs, >= %d MiB memory)"
            % (len(eligible), control_plane_count, min_cpus, min_memory_mb)
        )
        for m in present:
            reason = eligibility(m, min_cpus, min_memory_mb)
            if reason:
                messages.append("machine %s is not eligible for the control plane: %s" % (m["name"], reason))
        return []
    for m in eligible[:control_plane_count]:
        new[m["id"]] = {"name": m["name"], "role": CONTROL_PLANE}
    messages.append(
        "control plane scheduled on %s" % ", ".join(m["name"] for m in eligible[:control_plane_count])
    )
    return sorted(m["id"] for m in eligible[:control_plane_count])


def _workers_and_names(present, new):
    """Every present machine not yet recorded becomes a worker; recorded ones take their current name."""
    for m in present:
        if m["id"] not in new:
            new[m["id"]] = {"name": m["name"], "role": WORKER}
        elif new[m["id"]].get("name") != m["name"]:
            new[m["id"]]["name"] = m["name"]


def _missing(new, by_id, messages):
    """``{name: role}`` of the recorded machines not present; a missing control-plane machine is told in ``messages``."""
    missing = {}
    for mid, entry in sorted(new.items()):
        if mid not in by_id:
            missing[entry.get("name", mid)] = entry["role"]
            if entry["role"] == CONTROL_PLANE:
                messages.append(
                    "control-plane machine %s (%s) is missing: run playbooks/replace_control_plane.yml to replace it; "
                    "no other machine is promoted automatically" % (entry.get("name", mid), mid)
                )
    return missing


def schedule(machines, state=None, control_plane_count=3, min_cpus=DEFAULT_MIN_CPUS, min_memory_mb=DEFAULT_MIN_MEMORY_MB):
    """Assign roles.

    ``machines``: raw or normalized machine dicts. ``state``: the persisted state (or None).
    Returns a dict: ``roles`` (machine name -> role for present, scheduled machines),
    ``pending`` (names not scheduled yet), ``missing`` (recorded machines not present, with
    role), ``state`` (the new state), ``changed`` and ``messages``.
    """
    check_control_plane_count(control_plane_count)
    present = sorted(normalize_machines(machines), key=order_key)
    state = validate_state(state)
    recorded = state["machines"]
    messages = []
    new = {k: dict(v) for k, v in recorded.items()}

    cp_ids = sorted(mid for mid, e in recorded.items() if e["role"] == CONTROL_PLANE)
    cp_count = state["controlPlaneCount"]
    if not cp_ids:
        cp_ids = _first_control_plane(present, new, control_plane_count, min_cpus, min_memory_mb, messages)
        if cp_ids:
            cp_count = control_plane_count
    elif cp_count != control_plane_count:
        messages.append(
            "the control plane has %d machines and stays so; configuration asks for %d: resizing is an explicit "
            "operation, not done by the inventory" % (cp_count, control_plane_count)
        )
    if cp_ids:
        _workers_and_names(present, new)
    missing = _missing(new, {m["id"]: m for m in present}, messages)

    roles = {m["name"]: new[m["id"]]["role"] for m in present if m["id"] in new}
    pending = [m["name"] for m in present if m["id"] not in new]
    new_state = {
        "apiVersion": STATE_API_VERSION,
        "kind": STATE_KIND,
        "controlPlaneCount": cp_count if cp_ids else None,
        "machines": dict(sorted(new.items())),
    }
    return {
        "roles": dict(sorted(roles.items())),
        "pending": pending,
        "missing": missing,
        "state": new_state,
        "changed": new_state != state,
        "messages": messages,
    }


def replace_control_plane(state, lost, replacement, machines, min_cpus=DEFAULT_MIN_CPUS, min_memory_mb=DEFAULT_MIN_MEMORY_MB):
    """Move the control-plane role from the missing machine ``lost`` to ``replacement``.

    Both are names or ids. ``lost`` must be a recorded control-plane machine that is not
    present; ``replacement`` must be present, eligible and not already in the control plane.
    Returns ``(new_state, message)``. Raises :class:`SchedulingError` otherwise.
    """
    state = validate_state(state)
    present = {m["id"]: m for m in normalize_machines(machines)}
    recorded = state["machines"]

    def find(ref, pool):
        hits = [mid for mid, e in pool.items() if mid == ref or (e or {}).get("name") == ref]
        return hits[0] if len(hits) == 1 else None

    lost_id = find(lost, recorded)
    done_id = find(replacement, recorded)
    if lost_id is None and done_id is not None and recorded[done_id]["role"] == CONTROL_PLANE:
        return state, "control-plane machine %s was already replaced by %s" % (lost, replacement)
    if lost_id is None or recorded[lost_id]["role"] != CONTROL_PLANE:
        raise SchedulingError("bad replacement", ["%r is not a recorded control-plane machine" % lost])
    if lost_id in present:
        raise SchedulingError(
            "bad replacement",
            ["control-plane machine %r is still present: remove it from the machine list first" % lost],
        )
    new_id = find(replacement, present)
    if new_id is None:
        raise SchedulingError("bad replacement", ["replacement %r is not among the discovered machines" % replacement])
    m = present[new_id]
    reason = eligibility(m, min_cpus, min_memory_mb)
    if reason:
        raise SchedulingError("bad replacement", ["replacement %s is not eligible: %s" % (m["name"], reason)])
    previous = recorded.get(new_id, {}).get("role")
    if previous == CONTROL_PLANE:
        raise SchedulingError("bad replacement", ["replacement %s is already in the control plane" % m["name"]])
    machines_state = {k: dict(v) for k, v in recorded.items() if k != lost_id}
    machines_state[new_id] = {"name": m["name"], "role": CONTROL_PLANE}
    new_state = dict(state, machines=dict(sorted(machines_state.items())))
    message = "control-plane machine %s replaced by %s%s" % (
        recorded[lost_id].get("name", lost_id), m["name"], " (was a worker)" if previous == WORKER else "")
    return new_state, message


def load_state(path):
    """The state file (JSON, a subset of YAML) or an empty state when it does not exist."""
    if not os.path.exists(path):
        return empty_state()
    try:
        with open(path, encoding="utf-8") as f:
            return validate_state(json.load(f))
    except ValueError as exc:
        raise SchedulingError("bad schedule state", ["schedule state %s is not valid JSON: %s" % (path, exc)]) from None


def dump_state(state):
    return json.dumps(state, indent=2, sort_keys=True) + "\n"


def save_state(path, state):
    """Write atomically (temp file + rename); returns True when the content changed."""
    return write_if_changed(path, dump_state(state), mode=0o644)  # nothing secret: names, MACs and roles
