# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster lease logic against a FAKE in-memory etcd gateway (leases, compare-and-swap txn).
The real lease against a real 3-member etcd over TLS is exercised in molecule/etcd."""

from __future__ import annotations

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import etcd


class FakeGateway:
    """FAKE etcd v3 gateway: one key space, leases with expiry driven by ``now``."""

    def __init__(self):
        self.kv = {}  # key -> (value, lease)
        self.leases = {}  # id -> expires_at
        self.now = 0.0
        self.next_id = 100
        self.calls = []

    def _expire(self):
        for lid, exp in list(self.leases.items()):
            if exp <= self.now:
                del self.leases[lid]
                self.kv = {k: v for k, v in self.kv.items() if v[1] != lid}

    def grant(self, ttl):
        self._expire()
        self.next_id += 1
        lid = str(self.next_id)
        self.leases[lid] = self.now + int(ttl)
        self.ttl = int(ttl)
        self.calls.append(("grant", ttl))
        return {"ID": lid, "TTL": str(ttl)}

    def revoke(self, lease):
        self.calls.append(("revoke", lease))
        self.leases.pop(str(lease), None)
        self.kv = {k: v for k, v in self.kv.items() if v[1] != str(lease)}
        return {}

    def keepalive(self, lease):
        self.calls.append(("keepalive", lease))
        self.leases[str(lease)] = self.now + self.ttl
        return {}

    def range(self, key):
        self._expire()
        if key in self.kv:
            value, lease = self.kv[key]
            return {"kvs": [{"key": etcd.b64(key), "value": etcd.b64(value), "lease": lease}], "count": "1"}
        return {}

    def txn(self, body):
        self._expire()
        self.calls.append(("txn", body))
        cmp = body["compare"][0]
        key = etcd.unb64(cmp["key"])
        if cmp["target"] == "CREATE":
            ok = key not in self.kv
        else:
            ok = key in self.kv and self.kv[key][0] == etcd.unb64(cmp["value"])
        if not ok:
            return {"header": {}}  # proto3 JSON omits succeeded=false
        for op in body["success"]:
            if "request_put" in op:
                put = op["request_put"]
                self.kv[etcd.unb64(put["key"])] = (etcd.unb64(put["value"]), put["lease"])
            if "request_delete_range" in op:
                self.kv.pop(etcd.unb64(op["request_delete_range"]["key"]), None)
        return {"header": {}, "succeeded": True}


@pytest.fixture()
def gw():
    return FakeGateway()


def clock_of(gw):
    def sleep(seconds):
        gw.now += seconds

    return sleep, (lambda: gw.now)


def test_acquire_is_idempotent_for_the_same_holder(gw):
    first = etcd.acquire_lease(gw, "cluster", "alice@ctl", ttl=60)
    assert first["changed"] is True and gw.kv["/mooring/leases/cluster"][0] == "alice@ctl"
    again = etcd.acquire_lease(gw, "cluster", "alice@ctl", ttl=60)
    assert again["changed"] is False and ("keepalive", first["lease"]) in gw.calls


def test_second_holder_waits_then_fails_naming_the_holder(gw):
    etcd.acquire_lease(gw, "cluster", "alice@ctl", ttl=600)
    sleep, clock = clock_of(gw)
    with pytest.raises(etcd.LeaseHeldError, match="held by 'alice@ctl'; waited 30s") as info:
        etcd.acquire_lease(gw, "cluster", "bob@ctl", ttl=600, timeout=30, poll=5, sleep=sleep, clock=clock)
    assert info.value.holder == "alice@ctl"
    assert gw.now >= 30
    assert gw.kv["/mooring/leases/cluster"][0] == "alice@ctl"


def test_second_holder_gets_it_once_released_while_waiting(gw):
    etcd.acquire_lease(gw, "cluster", "alice@ctl", ttl=600)
    sleep_calls = []

    def sleep(seconds):
        sleep_calls.append(seconds)
        gw.now += seconds
        if len(sleep_calls) == 2:
            etcd.release_lease(gw, "cluster", "alice@ctl")

    got = etcd.acquire_lease(gw, "cluster", "bob@ctl", ttl=600, timeout=60, poll=5, sleep=sleep, clock=lambda: gw.now)
    assert got["changed"] is True and got["waited"] == 10
    assert gw.kv["/mooring/leases/cluster"][0] == "bob@ctl"


def test_a_dead_holders_lease_expires_with_its_ttl(gw):
    etcd.acquire_lease(gw, "cluster", "alice@ctl", ttl=20)
    sleep, clock = clock_of(gw)
    got = etcd.acquire_lease(gw, "cluster", "bob@ctl", ttl=20, timeout=60, poll=5, sleep=sleep, clock=clock)
    assert got["changed"] is True and 20 <= got["waited"] <= 25


def test_release_by_someone_else_is_refused_unless_forced(gw):
    etcd.acquire_lease(gw, "cluster", "alice@ctl", ttl=60)
    with pytest.raises(etcd.LeaseHeldError, match="held by 'alice@ctl', not by 'bob@ctl'"):
        etcd.release_lease(gw, "cluster", "bob@ctl")
    forced = etcd.release_lease(gw, "cluster", "bob@ctl", force=True, confirm="alice@ctl")
    assert forced == {"changed": True, "holder": "alice@ctl"}
    assert gw.kv == {} and gw.leases == {}
    assert etcd.release_lease(gw, "cluster", "bob@ctl") == {"changed": False, "holder": None}


def test_check_mode_takes_nothing(gw):
    res = etcd.acquire_lease(gw, "cluster", "alice@ctl", check_mode=True)
    assert res["changed"] is True and gw.kv == {} and gw.calls == []


def test_lost_race_revokes_its_lease(gw):
    real_txn = gw.txn

    def racing_txn(body):
        if not gw.kv:  # someone else gets in between our range and our txn
            gw.kv["/mooring/leases/cluster"] = ("carol@ctl", "1")
            gw.leases["1"] = gw.now + 1000
        return real_txn(body)

    gw.txn = racing_txn
    sleep, clock = clock_of(gw)
    with pytest.raises(etcd.LeaseHeldError, match="carol@ctl"):
        etcd.acquire_lease(gw, "cluster", "bob@ctl", timeout=0, sleep=sleep, clock=clock)
    granted = [c for c in gw.calls if c[0] == "grant"]
    assert len(granted) == 1 and ("revoke", "101") in gw.calls


@pytest.mark.parametrize("kwargs,message", [
    ({"holder": ""}, "holder: give an identifier"),
    ({"holder": "a", "ttl": 2}, "ttl: 2 is too short"),
    ({"holder": "a", "name": "a/b"}, "is not a lease name"),
])
def test_bad_input(gw, kwargs, message):
    args = {"name": "cluster"}
    args.update(kwargs)
    with pytest.raises(etcd.EtcdError, match=message):
        etcd.acquire_lease(gw, **args)


def test_gateway_client_refuses_plain_http():
    with pytest.raises(etcd.EtcdError, match="not an https:// URL"):
        etcd.GatewayClient(["http://127.0.0.1:2379"], "/nonexistent", "/nonexistent", "/nonexistent")


def test_breaking_another_runs_lease_needs_its_exact_holder(gw):
    etcd.acquire_lease(gw, "cluster", "ci@ctl run 10-a", ttl=60)
    with pytest.raises(etcd.LeaseHeldError, match="confirm that exact holder"):
        etcd.release_lease(gw, "cluster", "ops@ctl run 11-b", force=True, confirm="ci@ctl")
    assert gw.kv["/mooring/leases/cluster"][0] == "ci@ctl run 10-a"
    got = etcd.release_lease(gw, "cluster", "ops@ctl run 11-b", force=True, confirm="ci@ctl run 10-a")
    assert got == {"changed": True, "holder": "ci@ctl run 10-a"} and gw.kv == {}


def test_two_runs_with_the_same_settings_are_different_holders(gw):
    # USER unset in CI: both runs are root on the same controller; only the run id tells them apart.
    first = etcd.run_holder("root", "ctl", 4242, 987654)
    second = etcd.run_holder("root", "ctl", 4343, 987699)
    assert first == "root@ctl run 4242-f1206" and first != second
    assert etcd.run_holder("root", "ctl", 1, 255, label="awx job 7") == "awx job 7 (root@ctl run 1-ff)"
    etcd.acquire_lease(gw, "cluster", first, ttl=60)
    sleep, clock = clock_of(gw)
    with pytest.raises(etcd.LeaseHeldError, match="held by 'root@ctl run 4242-f1206'"):
        etcd.acquire_lease(gw, "cluster", second, ttl=60, timeout=10, poll=5, sleep=sleep, clock=clock)


def test_process_started_reads_field_22_past_a_name_with_spaces():
    stat = "4242 (ansible-playbook x) S 1 4242 4242 0 -1 4194560 " + " ".join(str(i) for i in range(10, 60))
    assert etcd.process_started(4242, read=lambda path: stat) == 22

    def missing(path):
        raise FileNotFoundError(path)

    assert etcd.process_started(4242, read=missing) is None


def test_the_keeper_renews_while_the_run_lives_and_gives_the_lease_back_when_it_ends(gw):
    holder = "root@ctl run 1-1"
    lease = etcd.acquire_lease(gw, "cluster", holder, ttl=30)["lease"]
    sleep, clock = clock_of(gw)
    life = {"left": 100}

    def alive():
        life["left"] -= 1
        return life["left"] > 0

    why = etcd.keep_lease(gw, "cluster", holder, lease, alive, ttl=30, sleep=sleep, clock=clock)
    assert why == "run ended"
    assert gw.now >= 99  # three times the TTL: the lease only lived because it was renewed
    assert sum(1 for c in gw.calls if c[0] == "keepalive") >= 9
    assert gw.kv == {}  # given back at once, not left to expire


def test_the_keeper_stops_when_the_run_released_the_lease(gw):
    holder = "root@ctl run 1-1"
    lease = etcd.acquire_lease(gw, "cluster", holder, ttl=30)["lease"]
    etcd.release_lease(gw, "cluster", holder)
    sleep, clock = clock_of(gw)
    assert etcd.keep_lease(gw, "cluster", holder, lease, lambda: True, ttl=30, sleep=sleep, clock=clock) == "not held"
