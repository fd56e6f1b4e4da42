# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster lease logic against a FAKE in-memory etcd gateway (leases, compare-and-swap txn, revisions).
The real lease against a real 3-member etcd over TLS is exercised in molecule/etcd."""

from __future__ import annotations

import json
import os
import re
import stat

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import etcdctl, etcdhttp, etcdlease


class FakeGateway:
    """FAKE etcd v3 gateway: one key space, leases with expiry driven by ``now``."""

    def __init__(self):
        self.kv = {}  # key -> (value, lease)
        self.revs = {}  # key -> (create_revision, mod_revision)
        self.revision = 1
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
            create, mod = self.revs.get(key, (1, 1))
            return {"kvs": [{"key": etcdhttp.b64(key), "value": etcdhttp.b64(value), "lease": lease,
                             "create_revision": str(create), "mod_revision": str(mod)}], "count": "1"}
        return {}

    def timetolive(self, lease):
        self._expire()
        left = self.leases.get(str(lease))
        return {"ID": str(lease), "TTL": str(int(left - self.now)) if left is not None else "-1"}

    def put(self, key, value, lease):
        """Another client writes the key (as a txn put does)."""
        self.revision += 1
        create = self.revs[key][0] if key in self.kv and key in self.revs else self.revision
        self.kv[key] = (value, lease)
        self.revs[key] = (create, self.revision)

    def txn(self, body):
        self._expire()
        self.calls.append(("txn", body))
        cmp = body["compare"][0]
        key = etcdhttp.unb64(cmp["key"])
        if cmp["target"] == "CREATE":
            ok = key not in self.kv
        else:
            ok = key in self.kv and self.kv[key][0] == etcdhttp.unb64(cmp["value"])
        if not ok:
            return {"header": {}}  # proto3 JSON omits succeeded=false
        responses = []
        for op in body["success"]:
            if "request_put" in op:
                put = op["request_put"]
                self.put(etcdhttp.unb64(put["key"]), etcdhttp.unb64(put["value"]), put["lease"])
                responses.append({"response_put": {"header": {}}})
            if "request_delete_range" in op:
                self.kv.pop(etcdhttp.unb64(op["request_delete_range"]["key"]), None)
                responses.append({"response_delete_range": {"header": {}}})
            if "request_range" in op:
                responses.append({"response_range": self.range(etcdhttp.unb64(op["request_range"]["key"]))})
        return {"header": {}, "succeeded": True, "responses": responses}


@pytest.fixture()
def gw():
    return FakeGateway()


def clock_of(gw):
    def sleep(seconds):
        gw.now += seconds

    return sleep, (lambda: gw.now)


def test_acquire_is_idempotent_for_the_same_holder(gw):
    first = etcdlease.acquire_lease(gw, "cluster", "alice@ctl", ttl=60)
    assert first["changed"] is True and gw.kv["/mooring/leases/cluster"][0] == "alice@ctl"
    again = etcdlease.acquire_lease(gw, "cluster", "alice@ctl", ttl=60)
    assert again["changed"] is False and ("keepalive", first["lease"]) in gw.calls


def test_second_holder_waits_then_fails_naming_the_holder(gw):
    etcdlease.acquire_lease(gw, "cluster", "alice@ctl", ttl=600)
    sleep, clock = clock_of(gw)
    with pytest.raises(etcdlease.LeaseHeldError, match="held by 'alice@ctl'; waited 30s") as info:
        etcdlease.acquire_lease(gw, "cluster", "bob@ctl", ttl=600, timeout=30, poll=5, sleep=sleep, clock=clock)
    assert info.value.holder == "alice@ctl"
    assert gw.now >= 30
    assert gw.kv["/mooring/leases/cluster"][0] == "alice@ctl"


def test_second_holder_gets_it_once_released_while_waiting(gw):
    etcdlease.acquire_lease(gw, "cluster", "alice@ctl", ttl=600)
    sleep_calls = []

    def sleep(seconds):
        sleep_calls.append(seconds)
        gw.now += seconds
        if len(sleep_calls) == 2:
            etcdlease.release_lease(gw, "cluster", "alice@ctl")

    got = etcdlease.acquire_lease(gw, "cluster", "bob@ctl", ttl=600, timeout=60, poll=5, sleep=sleep, clock=lambda: gw.now)
    assert got["changed"] is True and got["waited"] == 10
    assert gw.kv["/mooring/leases/cluster"][0] == "bob@ctl"


def test_etcd_unreachable_is_waited_out_within_the_timeout(gw):
    """A controller cut off from etcd for a while (a second run started meanwhile) takes the lease once
    etcd answers again, within its timeout; past the timeout it fails naming the last error."""
    sleep, clock = clock_of(gw)
    real_range = gw.range
    gw.cut_until = 20

    def cut_range(key):
        if gw.now < gw.cut_until:
            raise etcdctl.EtcdError("etcd /v3/kv/range failed on every endpoint: timed out")
        return real_range(key)

    gw.range = cut_range
    got = etcdlease.acquire_lease(gw, "cluster", "bob@ctl", ttl=60, timeout=60, poll=5, sleep=sleep, clock=clock)
    assert got["changed"] is True and gw.now >= 20 and gw.kv["/mooring/leases/cluster"][0] == "bob@ctl"
    gw.kv.clear()
    gw.cut_until = gw.now + 1000
    start = gw.now
    with pytest.raises(etcdctl.EtcdError, match=r"not taken: etcd did not answer for 30s: .*timed out"):
        etcdlease.acquire_lease(gw, "cluster", "carol@ctl", ttl=60, timeout=30, poll=5, sleep=sleep, clock=clock)
    assert 30 <= gw.now - start < 40 and not gw.kv


def test_a_dead_holders_lease_expires_with_its_ttl(gw):
    etcdlease.acquire_lease(gw, "cluster", "alice@ctl", ttl=20)
    sleep, clock = clock_of(gw)
    got = etcdlease.acquire_lease(gw, "cluster", "bob@ctl", ttl=20, timeout=60, poll=5, sleep=sleep, clock=clock)
    assert got["changed"] is True and 20 <= got["waited"] <= 25


def test_release_by_someone_else_is_refused_unless_forced(gw):
    etcdlease.acquire_lease(gw, "cluster", "alice@ctl", ttl=60)
    with pytest.raises(etcdlease.LeaseHeldError, match="held by 'alice@ctl', not by 'bob@ctl'"):
        etcdlease.release_lease(gw, "cluster", "bob@ctl")
    forced = etcdlease.release_lease(gw, "cluster", "bob@ctl", force=True, confirm="alice@ctl")
    assert forced == {"changed": True, "holder": "alice@ctl"}
    assert gw.kv == {} and gw.leases == {}
    assert etcdlease.release_lease(gw, "cluster", "bob@ctl") == {"changed": False, "holder": None}


def test_check_mode_takes_nothing(gw):
    res = etcdlease.acquire_lease(gw, "cluster", "alice@ctl", check_mode=True)
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
    with pytest.raises(etcdlease.LeaseHeldError, match="carol@ctl"):
        etcdlease.acquire_lease(gw, "cluster", "bob@ctl", timeout=0, sleep=sleep, clock=clock)
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
    with pytest.raises(etcdctl.EtcdError, match=message):
        etcdlease.acquire_lease(gw, **args)


def test_gateway_client_refuses_plain_http():
    with pytest.raises(etcdctl.EtcdError, match="not an https:// URL"):
        etcdhttp.GatewayClient(["http://127.0.0.1:2379"], "/nonexistent", "/nonexistent", "/nonexistent")


def test_breaking_another_runs_lease_needs_its_exact_holder(gw):
    etcdlease.acquire_lease(gw, "cluster", "ci@ctl run 10-a", ttl=60)
    with pytest.raises(etcdlease.LeaseHeldError, match="confirm that exact holder"):
        etcdlease.release_lease(gw, "cluster", "ops@ctl run 11-b", force=True, confirm="ci@ctl")
    assert gw.kv["/mooring/leases/cluster"][0] == "ci@ctl run 10-a"
    got = etcdlease.release_lease(gw, "cluster", "ops@ctl run 11-b", force=True, confirm="ci@ctl run 10-a")
    assert got == {"changed": True, "holder": "ci@ctl run 10-a"} and gw.kv == {}


def test_two_runs_with_the_same_settings_are_different_holders(gw):
    # USER unset in CI: both runs are root on the same controller; only the run id tells them apart.
    first = etcdlease.run_holder("root", "ctl", 4242, 987654)
    second = etcdlease.run_holder("root", "ctl", 4343, 987699)
    assert first == "root@ctl run 4242-f1206" and first != second
    assert etcdlease.run_holder("root", "ctl", 1, 255, label="awx job 7") == "awx job 7 (root@ctl run 1-ff)"
    etcdlease.acquire_lease(gw, "cluster", first, ttl=60)
    sleep, clock = clock_of(gw)
    with pytest.raises(etcdlease.LeaseHeldError, match="held by 'root@ctl run 4242-f1206'"):
        etcdlease.acquire_lease(gw, "cluster", second, ttl=60, timeout=10, poll=5, sleep=sleep, clock=clock)


def test_process_started_reads_field_22_past_a_name_with_spaces():
    stat = "4242 (ansible-playbook x) S 1 4242 4242 0 -1 4194560 " + " ".join(str(i) for i in range(10, 60))
    assert etcdlease.process_started(4242, read=lambda path: stat) == 22

    def missing(path):
        raise FileNotFoundError(path)

    assert etcdlease.process_started(4242, read=missing) is None


def test_the_keeper_renews_while_the_run_lives_and_gives_the_lease_back_when_it_ends(gw):
    holder = "root@ctl run 1-1"
    lease = etcdlease.acquire_lease(gw, "cluster", holder, ttl=30)["lease"]
    sleep, clock = clock_of(gw)
    life = {"left": 100}

    def alive():
        life["left"] -= 1
        return life["left"] > 0

    why = etcdlease.keep_lease(gw, "cluster", holder, lease, alive, ttl=30, sleep=sleep, clock=clock)
    assert why == "run ended"
    assert gw.now >= 99  # three times the TTL: the lease only lived because it was renewed
    assert sum(1 for c in gw.calls if c[0] == "keepalive") >= 9
    assert gw.kv == {}  # given back at once, not left to expire


def test_the_keeper_stops_when_the_run_released_the_lease(gw):
    holder = "root@ctl run 1-1"
    lease = etcdlease.acquire_lease(gw, "cluster", holder, ttl=30)["lease"]
    etcdlease.release_lease(gw, "cluster", holder)
    sleep, clock = clock_of(gw)
    assert etcdlease.keep_lease(gw, "cluster", holder, lease, lambda: True, ttl=30, sleep=sleep, clock=clock) == "not held"


# ---------------------------------------------------------------------------------------
# Fencing: the token, the keeper's status file, the held check


KEY = "/mooring/leases/cluster"
RUN_A = "root@ctl run 1-a"
RUN_B = "root@ctl run 2-b"


def take(gw, holder=RUN_A, ttl=30):
    """Acquire as the action does and return the run's keeper status (token, keeping, ttl, last renewal)."""
    out = etcdlease.acquire_lease(gw, "cluster", holder, ttl=ttl)
    status = {k: out[k] for k in ("holder", "lease", "create_revision", "mod_revision")}
    status.update(state="keeping", ttl=ttl, last_keepalive=gw.now)
    return out, status


def held(gw, status, holder=RUN_A):
    return etcdlease.check_held(gw, "cluster", holder, status, now=lambda: gw.now)


def test_acquire_returns_the_fencing_token_as_etcd_reports_it(gw):
    out, _status = take(gw)
    assert out["lease"] == "101" and out["create_revision"] == "2" and out["mod_revision"] == "2"
    again = etcdlease.acquire_lease(gw, "cluster", RUN_A, ttl=30)
    assert again["changed"] is False
    assert (again["lease"], again["create_revision"]) == (out["lease"], out["create_revision"])


def test_held_passes_for_the_holder(gw):
    _out, status = take(gw)
    gw.now += 10
    got = held(gw, status)
    assert got["held"] is True and got["lease"] == status["lease"] and got["ttl"] == 20 and got["keeper"] == "keeping"


def test_held_fails_after_another_run_took_the_key(gw):
    _out, status = take(gw)
    gw.revoke(status["lease"])  # A's lease gone (expired), B takes the key
    take(gw, holder=RUN_B)
    with pytest.raises(etcdlease.LeaseLostError, match="no longer this run's: another run took it; held now by "
                       "'root@ctl run 2-b'.*stopping before the next host") as info:
        held(gw, status)
    assert info.value.holder == RUN_B and "\n" not in str(info.value)


def test_held_fails_when_the_key_was_taken_again_even_by_the_same_holder(gw):
    _out, status = take(gw)
    gw.revoke(status["lease"])
    take(gw)  # the same holder string, a new lease and key: not the lease this run rolled under
    with pytest.raises(etcdlease.LeaseLostError, match=r"taken again \(lease 102, created at revision 3; "
                       r"this run's: lease 101, revision 2\)"):
        held(gw, status)


def test_held_fails_after_expiry(gw):
    _out, status = take(gw, ttl=30)
    gw.now += 31
    status["state"] = "keeping"
    status["last_keepalive"] = gw.now  # even with a keeper that claims to be fine, the key is gone
    with pytest.raises(etcdlease.LeaseLostError, match="the key is gone .*held now by nobody"):
        held(gw, status)


def test_held_fails_when_the_keeper_stopped(gw):
    _out, status = take(gw)
    for state in ("keeper failed: AttributeError: 'list' object has no attribute 'get'",
                  "not held: no keepalive for 31 s, past the TTL (30 s)"):
        status["state"] = state
        with pytest.raises(etcdlease.LeaseLostError, match="its keeper stopped: %s; held now by 'root@ctl run 1-a'"
                           % re.escape(state)):
            held(gw, status)


def test_held_fails_when_the_keeper_went_silent_past_the_ttl(gw):
    _out, status = take(gw, ttl=30)
    gw.keepalive(status["lease"])
    gw.now += 25
    gw.keepalive(status["lease"])  # someone renews (the key is fine), but not this run's keeper
    gw.now += 10
    with pytest.raises(etcdlease.LeaseLostError, match="has not renewed it for 35 s, past the TTL"):
        held(gw, status)


def test_held_fails_without_a_status_and_passes_in_check_mode(gw):
    take(gw)
    with pytest.raises(etcdlease.LeaseLostError, match="this run took no lease"):
        held(gw, None)
    assert etcdlease.check_held(gw, "cluster", RUN_A, None, check_mode=True)["held"] is None


def test_held_fails_when_etcd_does_not_answer(gw):
    _out, status = take(gw)

    def down(key):
        raise etcdctl.EtcdError("etcd /v3/kv/range failed on every endpoint: 10.0.0.1:2379 timed out")

    gw.range = down
    with pytest.raises(etcdlease.LeaseLostError, match="cannot confirm this run still holds it .*stopping before the next host"):
        held(gw, status)


def test_the_keeper_gives_up_the_lease_past_the_ttl_without_keepalive(gw):
    out, _status = take(gw, ttl=30)
    sleep, clock = clock_of(gw)
    seen = []

    def down(*args):
        raise etcdctl.EtcdError("etcd /v3/kv/range failed on every endpoint: connection refused")

    gw.range = down
    why = etcdlease.keep_lease(gw, "cluster", RUN_A, out["lease"], lambda: True, ttl=30, record=seen.append,
                               sleep=sleep, clock=clock)
    assert why == "not held: no keepalive for 30 s, past the TTL (30 s)"
    assert seen == [why] and 30 <= gw.now <= 31


def test_the_keeper_records_an_unexpected_error_instead_of_dying_silently(gw):
    out, _status = take(gw, ttl=30)
    sleep, clock = clock_of(gw)
    seen = []

    def not_etcd(*args):
        raise ValueError("Expecting value: line 1 column 1 (char 0)")

    gw.range = not_etcd
    why = etcdlease.keep_lease(gw, "cluster", RUN_A, out["lease"], lambda: True, ttl=30, record=seen.append,
                               sleep=sleep, clock=clock)
    assert why == "keeper failed: ValueError: Expecting value: line 1 column 1 (char 0)" and seen == [why]


def test_the_keeper_records_keeping_after_each_renewal(gw):
    out, _status = take(gw, ttl=30)
    sleep, clock = clock_of(gw)
    seen = []
    life = {"left": 25}

    def alive():
        life["left"] -= 1
        return life["left"] > 0

    assert etcdlease.keep_lease(gw, "cluster", RUN_A, out["lease"], alive, ttl=30, record=seen.append,
                                sleep=sleep, clock=clock) == "run ended"
    assert seen == ["keeping", "keeping", "run ended"]


def test_a_reply_that_is_not_a_json_object_is_an_etcd_error(monkeypatch):
    import http.client

    class Reply:
        status = 200

        def read(self):
            return b"[]"

    class Conn:
        def __init__(self, *args, **kwargs):
            pass

        def request(self, *args, **kwargs):
            pass

        def getresponse(self):
            return Reply()

        def close(self):
            pass

    client = etcdhttp.GatewayClient.__new__(etcdhttp.GatewayClient)
    client.endpoints, client.timeout, client.context = [("10.0.0.1", 2379)], 1.0, None
    monkeypatch.setattr(http.client, "HTTPSConnection", Conn)
    monkeypatch.setattr(etcdhttp.netguard, "check", lambda host: None)
    with pytest.raises(etcdctl.EtcdError, match="10.0.0.1:2379 replied list, not a JSON object"):
        client.range(KEY)


def test_the_status_file_is_private_and_the_recorder_keeps_the_token(tmp_path):
    path = etcdlease.keeper_status_path("cluster", RUN_A, directory=str(tmp_path / "leases"))
    assert path != etcdlease.keeper_status_path("cluster", RUN_B, directory=str(tmp_path / "leases"))
    token = {"holder": RUN_A, "lease": "101", "create_revision": "2", "mod_revision": "2"}
    record = etcdlease.keeper_recorder(path, token, 30, now=lambda: 1000.0)
    record("keeping")
    record("not held")
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    status = etcdlease.read_keeper_status(path)
    assert status["state"] == "not held" and status["last_keepalive"] == 1000.0 and status["lease"] == "101"
    # A later lease of the same run owns the file: the old keeper's last word does not overwrite it.
    etcdlease.write_keeper_status(path, dict(token, lease="102", state="keeping"))
    record("not held")
    assert etcdlease.read_keeper_status(path)["lease"] == "102" and etcdlease.read_keeper_status(path)["state"] == "keeping"
    with open(path, "w") as handle:
        handle.write("[]")
    assert etcdlease.read_keeper_status(path)["state"].startswith("keeper failed: ")
    assert json.loads(json.dumps(status))  # plain JSON


def test_the_keeper_records_why_it_ended_even_when_it_cannot_start(tmp_path):
    path = str(tmp_path / "leases" / "lease.json")
    why = etcdlease.keeper_main({"endpoints": ["http://10.0.0.1:2379"], "cacert": "/x", "cert": "/x", "key": "/x",
                                 "name": "cluster", "holder": RUN_A, "lease": "101", "create_revision": "2",
                                 "mod_revision": "2", "ttl": 30, "prefix": etcdlease.LEASE_PREFIX, "pid": 1, "started": 1,
                                 "status": path})
    assert why.startswith("keeper failed: EtcdError: endpoints: 'http://10.0.0.1:2379' is not an https:// URL")
    assert etcdlease.read_keeper_status(path)["state"] == why


def test_no_proc_no_lease():
    with pytest.raises(etcdctl.EtcdError, match=r"cluster lease 'cluster' not taken: this controller has no "
                       r"/proc/4242/stat .* a controller with /proc \(Linux\)"):
        etcdlease.require_watchable_run("cluster", 4242, None)
    etcdlease.require_watchable_run("cluster", 4242, 99)


def test_keeper_status_files_of_runs_ended_a_week_ago_are_pruned(tmp_path):
    """Each run leaves one small status file; taking a lease removes those untouched for 7 days (a live
    keeper rewrites its file every third of its TTL), and nothing else in the directory."""
    old = tmp_path / "lease-0123.json"
    fresh = tmp_path / "lease-4567.json"
    other = tmp_path / "notes.json"
    for path in (old, fresh, other):
        path.write_text("{}")
    week = 7 * 86400
    os.utime(old, (1000.0, 1000.0))
    os.utime(other, (1000.0, 1000.0))
    os.utime(fresh, (1000.0 + week, 1000.0 + week))
    removed = etcdlease.prune_keeper_status(str(tmp_path), now=lambda: 1000.0 + week + 1)
    assert removed == [str(old)] and not old.exists() and fresh.exists() and other.exists()
    assert etcdlease.prune_keeper_status(str(tmp_path / "none")) == []
