# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role scheduling rules: examples plus property tests (hypothesis)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.mooring.cluster.plugins.module_utils.infra import scheduling as s


def machine(name, mac=None, cpus=4, memory_mb=8192):
    return {"name": name, "mac": mac, "cpus": cpus, "memory_mb": memory_mb, "address": "10.0.0.%d" % (len(name) % 250)}


def test_no_control_plane_until_enough_eligible_machines():
    r = s.schedule([machine("a"), machine("b")], None, 3)
    assert r["roles"] == {}
    assert r["pending"] == ["a", "b"]
    assert r["state"]["machines"] == {}
    assert "2 of 3" in r["messages"][0]


def test_ineligible_machines_do_not_count_and_are_named():
    r = s.schedule([machine("a"), machine("b"), machine("c", cpus=1)], None, 3)
    assert r["roles"] == {}
    assert any("machine c is not eligible" in m and "1 CPUs < 2" in m for m in r["messages"])


def test_first_n_in_stable_order_then_workers():
    r = s.schedule([machine("d"), machine("b"), machine("a"), machine("c")], None, 3)
    assert r["roles"] == {"a": "control_plane", "b": "control_plane", "c": "control_plane", "d": "worker"}
    assert r["state"]["controlPlaneCount"] == 3
    assert r["changed"] is True


def test_ineligible_machine_is_skipped_for_control_plane_but_becomes_worker():
    r = s.schedule([machine("a", cpus=1), machine("b"), machine("c"), machine("d")], None, 3)
    assert r["roles"] == {"a": "worker", "b": "control_plane", "c": "control_plane", "d": "control_plane"}


def test_existing_assignment_survives_new_machine_that_sorts_first():
    first = s.schedule([machine("m2"), machine("m3"), machine("m4")], None, 3)
    second = s.schedule([machine("m1"), machine("m2"), machine("m3"), machine("m4")], first["state"], 3)
    assert second["roles"]["m1"] == "worker"
    assert [n for n, r in second["roles"].items() if r == "control_plane"] == ["m2", "m3", "m4"]


def test_lost_control_plane_is_reported_not_replaced():
    first = s.schedule([machine(n) for n in "abcd"], None, 3)
    second = s.schedule([machine(n) for n in "acd"], first["state"], 3)
    assert second["roles"] == {"a": "control_plane", "c": "control_plane", "d": "worker"}
    assert second["missing"] == {"b": "control_plane"}
    assert any("replace_control_plane.yml" in m for m in second["messages"])
    assert second["changed"] is False


def test_replace_control_plane_moves_role_explicitly():
    first = s.schedule([machine(n) for n in "abcd"], None, 3)
    machines = [machine(n) for n in "acde"]
    state, message = s.replace_control_plane(first["state"], "b", "e", machines)
    after = s.schedule(machines, state, 3)
    assert after["roles"] == {"a": "control_plane", "c": "control_plane", "d": "worker", "e": "control_plane"}
    assert after["missing"] == {}
    assert "replaced by e" in message


@pytest.mark.parametrize("lost,repl,why", [
    ("d", "e", "not a recorded control-plane machine"),
    ("a", "e", "still present"),
    ("b", "zz", "not among the discovered machines"),
    ("b", "c", "already in the control plane"),
])
def test_replace_control_plane_refuses(lost, repl, why):
    first = s.schedule([machine(n) for n in "abcd"], None, 3)
    with pytest.raises(s.SchedulingError, match=why):
        s.replace_control_plane(first["state"], lost, repl, [machine(n) for n in "acde"])


@pytest.mark.parametrize("count", [0, 2, 4, 6, -1, "3", True, None])
def test_even_or_odd_sizes_refused(count):
    with pytest.raises(s.SchedulingError, match="control_plane_count"):
        s.schedule([machine("a")], None, count)


def test_identity_is_mac_so_renamed_machine_keeps_role():
    first = s.schedule([machine("a", "aa:00:00:00:00:01"), machine("b", "aa:00:00:00:00:02"),
                        machine("c", "aa:00:00:00:00:03")], None, 1)
    assert first["roles"]["a"] == "control_plane"
    second = s.schedule([machine("zz", "AA-00-00-00-00-01"), machine("b", "aa:00:00:00:00:02"),
                         machine("c", "aa:00:00:00:00:03")], first["state"], 1)
    assert second["roles"] == {"b": "worker", "c": "worker", "zz": "control_plane"}


def test_duplicate_identity_and_bad_values_are_errors():
    with pytest.raises(s.SchedulingError, match="same identity"):
        s.schedule([machine("a"), machine("a")], None, 1)
    with pytest.raises(s.SchedulingError, match="MAC"):
        s.schedule([machine("a", "zz:zz")], None, 1)
    with pytest.raises(s.SchedulingError, match="cpus 'many'"):
        s.schedule([machine("a", cpus="many")], None, 1)


def test_corrupt_state_is_refused():
    with pytest.raises(s.SchedulingError, match="even control plane"):
        s.schedule([], {"kind": "MachineSchedule", "controlPlaneCount": 2, "machines": {
            "a": {"role": "control_plane"}, "b": {"role": "control_plane"}}}, 3)


def test_state_file_round_trip(tmp_path):
    path = str(tmp_path / "sub" / "schedule.json")
    assert s.load_state(path) == s.empty_state()
    r = s.schedule([machine(n) for n in "abc"], None, 1)
    assert s.save_state(path, r["state"]) is True
    assert s.save_state(path, r["state"]) is False
    assert s.load_state(path) == r["state"]


# ---- properties -------------------------------------------------------------------------

names = st.text(alphabet="abcdefgh0123", min_size=1, max_size=4)
machines_st = st.lists(
    st.builds(lambda n, c, m: {"name": n, "cpus": c, "memory_mb": m},
              names, st.integers(0, 8), st.sampled_from([512, 1024, 2048, 8192])),
    max_size=9, unique_by=lambda d: d["name"])
counts = st.sampled_from(s.ALLOWED_CONTROL_PLANE_COUNTS)


@settings(max_examples=150, deadline=None)
@given(machines_st, counts, st.randoms(use_true_random=False))
def test_property_independent_of_input_order(machines, count, rnd):
    shuffled = list(machines)
    rnd.shuffle(shuffled)
    assert s.schedule(machines, None, count) == s.schedule(shuffled, None, count)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), machines_st), min_size=1, max_size=6), counts)
def test_property_never_even_never_role_change(steps, count):
    """Machines come and go over several runs; roles once given never change, the control
    plane is always 0 or the configured odd size."""
    state = None
    ever = {}
    pool = {}
    for add_only, batch in steps:
        for m in batch:
            pool.setdefault(m["name"], m)
        present = list(pool.values()) if add_only else [pool[m["name"]] for m in batch]
        r = s.schedule(present, state, count)
        cp = [mid for mid, e in r["state"]["machines"].items() if e["role"] == "control_plane"]
        assert len(cp) in (0, count)
        assert len(cp) % 2 == 1 or not cp
        for mid, e in r["state"]["machines"].items():
            assert ever.setdefault(mid, e["role"]) == e["role"]
        for mid in ever:
            assert mid in r["state"]["machines"]
        state = r["state"]


@settings(max_examples=100, deadline=None)
@given(machines_st, counts)
def test_property_rescheduling_is_idempotent(machines, count):
    first = s.schedule(machines, None, count)
    again = s.schedule(list(reversed(machines)), first["state"], count)
    assert again["changed"] is False
    assert again["roles"] == first["roles"]


def test_random_churn_smoke():
    rnd = random.Random(7)
    state = None
    roles = {}
    for _round in range(50):
        present = [machine("n%02d" % i) for i in sorted(rnd.sample(range(20), rnd.randint(0, 12)))]
        r = s.schedule(present, state, 5)
        for name, role in r["roles"].items():
            assert roles.setdefault(name, role) == role
        state = r["state"]


def test_replace_control_plane_twice_is_a_no_op():
    first = s.schedule([machine(n) for n in "abcd"], None, 3)
    machines = [machine(n) for n in "acde"]
    state, _message = s.replace_control_plane(first["state"], "b", "e", machines)
    again, message = s.replace_control_plane(state, "b", "e", machines)
    assert again == state
    assert "already replaced" in message
