# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd command lines (exact argv, table-driven), output parsers, health arithmetic and member
operations. The runner in the member/health tests is a FAKE etcdctl replaying recorded JSON
(shapes as printed by etcdctl 3.4.23 in the lab); the real thing runs in molecule/etcd."""

from __future__ import annotations

import json

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import etcdctl, etcdgate, etcdmember

TLS = ["--cacert=/p/ca.crt", "--cert=/p/c.crt", "--key=/p/c.key"]
BASE = ["etcdctl", "--endpoints=https://127.0.0.1:2379"] + TLS


@pytest.mark.parametrize("built,expected", [
    (etcdctl.client_args("https://127.0.0.1:2379", "/p/ca.crt", "/p/c.crt", "/p/c.key"), BASE),
    (etcdctl.client_args(["https://10.0.0.1:2379", "https://10.0.0.2:2379"], "/p/ca.crt", "/p/c.crt", "/p/c.key",
                         etcdctl="/usr/local/bin/etcdctl", command_timeout=15, dial_timeout=10),
     ["/usr/local/bin/etcdctl", "--endpoints=https://10.0.0.1:2379,https://10.0.0.2:2379"] + TLS
     + ["--dial-timeout=10s", "--command-timeout=15s"]),
    (etcdctl.endpoint_health_cmd(BASE), BASE + ["endpoint", "health", "--cluster", "-w", "json"]),
    (etcdctl.endpoint_health_cmd(BASE, cluster=False), BASE + ["endpoint", "health", "-w", "json"]),
    (etcdctl.endpoint_status_cmd(BASE), BASE + ["endpoint", "status", "--cluster", "-w", "json"]),
    (etcdctl.member_list_cmd(BASE), BASE + ["member", "list", "-w", "json"]),
    (etcdctl.member_add_cmd(BASE, "e4", "https://10.0.0.24:2380"),
     BASE + ["member", "add", "e4", "--peer-urls=https://10.0.0.24:2380", "-w", "json"]),
    (etcdctl.member_add_cmd(BASE, "e4", ["https://10.0.0.24:2380", "https://[fd00::24]:2380"]),
     BASE + ["member", "add", "e4", "--peer-urls=https://10.0.0.24:2380,https://[fd00::24]:2380", "-w", "json"]),
    (etcdctl.member_remove_cmd(BASE, 0x8E9E05C52164694D), BASE + ["member", "remove", "8e9e05c52164694d", "-w", "json"]),
    (etcdctl.snapshot_save_cmd(BASE, "/var/backups/s.db.part"), BASE + ["snapshot", "save", "/var/backups/s.db.part"]),
    (etcdctl.snapshot_status_cmd("etcdutl", "/s.db"), ["etcdutl", "snapshot", "status", "/s.db", "-w", "json"]),
    (etcdctl.snapshot_restore_cmd("etcdctl", "/s.db", "e1", "e1=https://10.0.0.21:2380", "tok-2",
                                  "https://10.0.0.21:2380", "/var/lib/etcd"),
     ["etcdctl", "snapshot", "restore", "/s.db", "--name=e1", "--initial-cluster=e1=https://10.0.0.21:2380",
      "--initial-cluster-token=tok-2", "--initial-advertise-peer-urls=https://10.0.0.21:2380",
      "--data-dir=/var/lib/etcd"]),
])
def test_exact_command_lines(built, expected):
    assert built == expected


@pytest.mark.parametrize("call,message", [
    (lambda: etcdctl.client_args("http://127.0.0.1:2379", "a", "b", "c"), "not an https:// URL; mooring's etcd has no"),
    (lambda: etcdctl.client_args([], "a", "b", "c"), "give at least one https:// client URL"),
    (lambda: etcdctl.client_args("https://h:2379", "a", "", "c"), "cert: a path is required"),
    (lambda: etcdctl.snapshot_save_cmd(etcdctl.client_args(["https://a:2379", "https://b:2379"], "a", "b", "c"), "/s"),
     "exactly one endpoint"),
    (lambda: etcdctl.initial_cluster([("e1", "https://a:2380"), ("e1", "https://b:2380")]), "'e1' appears twice"),
])
def test_builders_refuse_bad_input(call, message):
    with pytest.raises(etcdctl.EtcdError, match=message):
        call()


@pytest.mark.parametrize("address,port,url", [
    ("10.0.0.1", 2380, "https://10.0.0.1:2380"),
    ("fd00::1", 2380, "https://[fd00::1]:2380"),
    ("e1.example", 2381, "https://e1.example:2381"),
])
def test_peer_urls(address, port, url):
    assert etcdctl.peer_url(address, port) == url


@pytest.mark.parametrize("size,q", [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (7, 4)])
def test_quorum(size, q):
    assert etcdctl.quorum(size) == q


MEMBERS_JSON = json.dumps({
    "header": {"cluster_id": 1, "member_id": 2, "raft_term": 3},
    "members": [
        {"ID": 10276657743932975437, "name": "e1", "peerURLs": ["https://10.0.0.21:2380"],
         "clientURLs": ["https://10.0.0.21:2379"]},
        {"ID": 2, "name": "e2", "peerURLs": ["https://10.0.0.22:2380"], "clientURLs": ["https://10.0.0.22:2379"]},
        {"ID": 3, "name": "e3", "peerURLs": ["https://10.0.0.23:2380"], "clientURLs": ["https://10.0.0.23:2379"]},
    ],
})
HEALTH_2_OF_3 = json.dumps([
    {"endpoint": "https://10.0.0.21:2379", "health": True, "took": "9ms"},
    {"endpoint": "https://10.0.0.22:2379", "health": True, "took": "9ms"},
    {"endpoint": "https://10.0.0.23:2379", "health": False, "took": "5s", "error": "context deadline exceeded"},
])


def test_parse_members_keeps_64_bit_ids():
    members = etcdctl.parse_members(MEMBERS_JSON)
    assert members[0]["id"] == 10276657743932975437 and members[0]["id_hex"] == "8e9e05c52164694d"
    assert [m["name"] for m in members] == ["e1", "e2", "e3"] and all(m["started"] for m in members)


@pytest.mark.parametrize("healthy,total,has_quorum,all_healthy,can_lose_one", [
    (3, 3, True, True, True),
    (2, 3, True, False, False),
    (1, 3, False, False, False),
    (5, 5, True, True, True),
    (4, 5, True, False, True),
    (1, 1, True, True, False),
])
def test_health_summary(healthy, total, has_quorum, all_healthy, can_lose_one):
    health = [{"endpoint": "e%d" % i, "health": i < healthy, "error": ""} for i in range(total)]
    members = [{"name": "m%d" % i} for i in range(total)]
    s = etcdctl.health_summary(health, members)
    assert (s["healthy"], s["total"], s["has_quorum"], s["all_healthy"], s["can_lose_one"]) == (
        healthy, total, has_quorum, all_healthy, can_lose_one)


class FakeEtcdctl:
    """FAKE etcdctl: answers member list/health from canned JSON, records every argv."""

    def __init__(self, members_json=MEMBERS_JSON, health_json=HEALTH_2_OF_3, fail_list=0):
        self.calls = []
        self.members = json.loads(members_json)
        self.health_json = health_json
        self.fail_list = fail_list

    def __call__(self, argv):
        self.calls.append(argv)
        tail = argv[len(BASE):]
        if tail[:2] == ["member", "list"]:
            if self.fail_list:
                self.fail_list -= 1
                return 1, "", "context deadline exceeded"
            return 0, json.dumps(self.members), ""
        if tail[:2] == ["endpoint", "health"]:
            ok = all(e["health"] for e in json.loads(self.health_json))
            return (0 if ok else 1), self.health_json, ("" if ok else "unhealthy cluster")
        if tail[:2] == ["endpoint", "status"]:
            return 0, json.dumps([{"Endpoint": "https://10.0.0.21:2379", "Status": {"version": "3.4.23"}}]), ""
        if tail[:2] == ["member", "add"]:
            url = tail[3].split("=", 1)[1]
            self.members["members"].append({"ID": 99, "peerURLs": [url]})
            return 0, "{}", ""
        if tail[:2] == ["member", "remove"]:
            self.members["members"] = [m for m in self.members["members"] if "%x" % m["ID"] != tail[2]]
            return 0, "{}", ""
        raise AssertionError(argv)


def test_wait_health_quorum_vs_all():
    run = FakeEtcdctl()
    state = etcdgate.wait_health(run, BASE, require="quorum")
    assert (state["healthy"], state["total"], state["has_quorum"]) == (2, 3, True)
    assert state["unhealthy"] == ["https://10.0.0.23:2379"]
    assert state["versions"] == {"https://10.0.0.21:2379": "3.4.23"}
    assert state["healthy_members"] == ["e1", "e2"]
    ticks = iter(range(100))
    with pytest.raises(etcdctl.EtcdError, match="e3 down in all of the last 3 checks; unhealthy: https://10.0.0.23:2379"):
        etcdgate.wait_health(run, BASE, require="all", timeout=3, sleep=lambda s: None, clock=lambda: next(ticks))


def test_wait_health_retries_until_member_list_answers():
    run = FakeEtcdctl(health_json=HEALTH_2_OF_3.replace("false", "true"), fail_list=2)
    ticks = iter(range(100))
    state = etcdgate.wait_health(run, BASE, require="all", expected=3, timeout=10, sleep=lambda s: None,
                                 clock=lambda: next(ticks))
    assert state["attempts"] == 3 and state["all_healthy"]


def test_member_list_retries_a_missed_deadline():
    run = FakeEtcdctl(fail_list=2)
    assert len(etcdctl.member_list(run, BASE, sleep=lambda s: None)) == 3
    with pytest.raises(etcdctl.EtcdError, match="member list failed"):
        etcdctl.member_list(FakeEtcdctl(fail_list=3), BASE, sleep=lambda s: None)


class CutOffEtcdctl(FakeEtcdctl):
    """FAKE etcdctl where ``cut_off`` is a member partitioned from its peers: a member list through any set
    of endpoints that includes it fails (etcdctl may send it there, and it cannot serve a linearizable call)."""

    def __init__(self, cut_off, **kwargs):
        super().__init__(**kwargs)
        self.cut_off = cut_off

    def __call__(self, argv):
        endpoints = next(a for a in argv if a.startswith("--endpoints="))
        if argv[len(BASE):][:2] == ["member", "list"] and self.cut_off in endpoints:
            self.calls.append(argv)
            return 1, "", "context deadline exceeded"
        return super().__call__(argv)


BASE3 = etcdctl.client_args(["https://10.0.0.23:2379", "https://10.0.0.21:2379", "https://10.0.0.22:2379"],
                            "/p/ca.crt", "/p/c.crt", "/p/c.key")


def test_one_member_cut_off_is_not_read_as_no_quorum():
    run = CutOffEtcdctl("10.0.0.23")
    state = etcdctl.check_health(run, BASE3)
    assert (state["healthy"], state["total"], state["has_quorum"]) == (2, 3, True)
    asked = [next(a for a in argv if a.startswith("--endpoints=")) for argv in run.calls]
    # all three, then the cut-off member alone, then the next one: it answers, and health and status go there too
    assert asked == ["--endpoints=https://10.0.0.23:2379,https://10.0.0.21:2379,https://10.0.0.22:2379",
                     "--endpoints=https://10.0.0.23:2379", "--endpoints=https://10.0.0.21:2379",
                     "--endpoints=https://10.0.0.21:2379", "--endpoints=https://10.0.0.21:2379"]
    ticks = iter(range(100))
    with pytest.raises(etcdctl.EtcdError, match="e3 down in all of the last 2 checks") as err:
        etcdgate.wait_health(run, BASE3, require="all", timeout=2, sleep=lambda s: None, clock=lambda: next(ticks))
    assert "no quorum" not in str(err.value)
    assert len(etcdctl.member_list(run, BASE3, sleep=lambda s: None)) == 3
    only_cut_off = etcdctl.one_endpoint(BASE3, "https://10.0.0.23:2379")  # one endpoint, and it is the cut-off one
    state = etcdctl.check_health(CutOffEtcdctl("10.0.0.23"), only_cut_off)
    assert state["has_quorum"] is False and "member list failed" in state["error"]
    with pytest.raises(etcdctl.EtcdError, match="member list failed"):
        etcdctl.member_list(CutOffEtcdctl("10.0.0.23"), only_cut_off, attempts=1)


def test_member_add_then_idempotent():
    run = FakeEtcdctl()
    url = "https://10.0.0.24:2380"
    res = etcdmember.ensure_member(run, BASE, "e4", [url])
    assert res["changed"] is True
    assert res["initial_cluster"] == ("e1=https://10.0.0.21:2380,e2=https://10.0.0.22:2380,"
                                      "e3=https://10.0.0.23:2380,e4=https://10.0.0.24:2380")
    assert BASE + ["member", "add", "e4", "--peer-urls=" + url, "-w", "json"] in run.calls
    # added but not started yet: found by peer URL, no second add, same initial cluster
    again = etcdmember.ensure_member(run, BASE, "e4", [url])
    assert again["changed"] is False and again["initial_cluster"] == res["initial_cluster"]
    assert sum(1 for c in run.calls if c[len(BASE):][:2] == ["member", "add"]) == 1


def test_member_add_refused_while_another_is_unstarted():
    run = FakeEtcdctl()
    etcdmember.ensure_member(run, BASE, "e4", ["https://10.0.0.24:2380"])
    with pytest.raises(etcdctl.EtcdError, match="was added but never started"):
        etcdmember.ensure_member(run, BASE, "e5", ["https://10.0.0.25:2380"])


def test_member_remove_and_check_mode():
    run = FakeEtcdctl()
    check = etcdmember.ensure_member(run, BASE, "e1", [], state="absent", check_mode=True)
    assert check["changed"] is True and not any("remove" in c for c in run.calls)
    res = etcdmember.ensure_member(run, BASE, "e1", [], state="absent")
    assert BASE + ["member", "remove", "8e9e05c52164694d", "-w", "json"] in run.calls
    assert [m["name"] for m in res["members"]] == ["e2", "e3"]
    assert etcdmember.ensure_member(run, BASE, "e1", [], state="absent")["changed"] is False


def test_peer_url_owned_by_another_member_is_refused():
    with pytest.raises(etcdctl.EtcdError, match="already belongs to member 'e3'"):
        etcdmember.ensure_member(FakeEtcdctl(), BASE, "e9", ["https://10.0.0.23:2380"])


def test_parse_status():
    out = json.dumps([{"Endpoint": "https://10.0.0.21:2379", "Status": {
        "header": {"cluster_id": 1, "member_id": 7, "revision": 42, "raft_term": 2},
        "version": "3.4.23", "dbSize": 20480, "leader": 7, "raftIndex": 50, "raftTerm": 2}}])
    st = etcdctl.parse_status(out)[0]
    assert st == {"endpoint": "https://10.0.0.21:2379", "version": "3.4.23", "member_id": 7, "leader": 7,
                  "is_leader": True, "db_size": 20480, "revision": 42, "raft_index": 50}


def test_parse_refuses_non_json():
    with pytest.raises(etcdctl.EtcdError, match="did not print JSON"):
        etcdctl.parse_health("{\"endpoint\": broken")


def test_members_initial_cluster():
    members = [{"name": "e1", "addresses": ["10.0.0.21"]}, {"name": "e2", "addresses": ["fd00::22"]},
               {"name": "e3", "addresses": [], "names": ["e3.example"]}]
    assert etcdctl.members_initial_cluster(members) == (
        "e1=https://10.0.0.21:2380,e2=https://[fd00::22]:2380,e3=https://e3.example:2380")
    with pytest.raises(etcdctl.EtcdError, match="needs a name and an address"):
        etcdctl.members_initial_cluster([{"name": "e1", "addresses": []}])


class FlappingCluster:
    """FAKE 3-member cluster for the gate, scripted look by look: ``script`` is a list of looks, each a dict
    ``{member: up}`` (missing: up); raft indexes advance on every write; ``starts`` per look gives process
    start times. Records every argv."""

    URLS = {"e1": "https://10.0.0.21:2379", "e2": "https://10.0.0.22:2379", "e3": "https://10.0.0.23:2379"}

    def __init__(self, script, starts=None, stuck=()):
        self.script = list(script)
        self.look = -1
        self.index = 100
        self.starts_script = starts or []
        self.stuck = set(stuck)
        self.calls = []

    def up(self, name):
        look = self.script[min(self.look, len(self.script) - 1)]
        return look.get(name, True)

    def __call__(self, argv):
        self.calls.append(argv)
        tail = argv[len(BASE):]
        if tail[0] == "put":
            self.look += 1
            self.index += 1
            return 0, "OK", ""
        if tail[:2] == ["member", "list"]:
            if self.look < 0:
                self.look = 0
            return 0, MEMBERS_JSON, ""
        if tail[:2] == ["endpoint", "health"]:
            return 0, json.dumps([{"endpoint": u, "health": self.up(n)} for n, u in self.URLS.items()]), ""
        if tail[:2] == ["endpoint", "status"]:
            return 0, json.dumps([{"Endpoint": u, "Status": {
                "version": "3.4.23", "raftIndex": 100 if n in self.stuck else self.index}}
                for n, u in self.URLS.items() if self.up(n)]), ""
        raise AssertionError(argv)

    def starts(self, urls):
        """/metrics answers only from members that are up (process start 10.0 unless scripted)."""
        if not self.starts_script:
            return {u: 10.0 for n, u in self.URLS.items() if self.up(n)}
        row = self.starts_script[min(self.look, len(self.starts_script) - 1)]
        return {u: row[n] for n, u in self.URLS.items() if n in row and self.up(n)}


def _gate(cluster, **kw):
    ticks = iter(range(0, 10000, 2))
    kw.setdefault("checks", 3)
    return etcdgate.wait_health(cluster, BASE, require="all", sleep=lambda s: None, clock=lambda: next(ticks),
                                starts=cluster.starts, now=lambda: 1000.0, **kw)


def test_gate_passes_after_three_good_looks_in_a_row_writing_each_time():
    cluster = FlappingCluster([{}])
    state = _gate(cluster, timeout=60)
    assert state["attempts"] == 3 and state["incidents"] == ""
    assert sum(1 for a in cluster.calls if a[len(BASE)] == "put") == 3


def test_a_crash_looping_member_fails_the_gate_even_when_up_at_a_lucky_look():
    # e3 answers one look in three (a crash loop with restarts): never three good looks in a row.
    script = [{"e3": False}, {"e3": True}, {"e3": False}] * 10
    cluster = FlappingCluster(script)
    with pytest.raises(etcdctl.EtcdError, match=r"e3 flapped: down 4 of the last 6 checks"):
        _gate(cluster, exclude="e2", timeout=40)


def test_a_member_restarting_between_looks_breaks_the_run_and_is_named():
    # Always up when looked at, but a new process start time every other look.
    starts = [{"e1": 10.0, "e2": 10.0, "e3": 10.0 + 100 * (i // 2)} for i in range(40)]
    cluster = FlappingCluster([{}], starts=starts)
    with pytest.raises(etcdctl.EtcdError, match=r"e3 flapped: down 0 of the last 6 checks, restarted 3 times"):
        _gate(cluster, exclude="e2", timeout=30)


def test_a_member_up_for_less_than_min_uptime_is_not_settled():
    cluster = FlappingCluster([{}], starts=[{"e1": 10.0, "e2": 10.0, "e3": 998.0}])
    with pytest.raises(etcdctl.EtcdError, match=r"e3 up only 2 s"):
        _gate(cluster, min_uptime=5, timeout=10)


def test_a_member_whose_raft_index_does_not_advance_is_not_settled():
    cluster = FlappingCluster([{}], stuck={"e1"})
    with pytest.raises(etcdctl.EtcdError, match=r"e1 raft index stuck at 100"):
        _gate(cluster, timeout=10)


def test_the_member_about_to_restart_may_be_down_but_quorum_must_hold_without_it():
    state = _gate(FlappingCluster([{"e2": False}]), exclude="e2", timeout=10)
    assert state["attempts"] == 3
    with pytest.raises(etcdctl.EtcdError, match="e3 down in all"):
        _gate(FlappingCluster([{"e2": False, "e3": False}]), exclude="e2", timeout=6)


def test_a_member_that_was_down_then_settled_is_reported_as_an_incident():
    cluster = FlappingCluster([{"e3": False}, {"e3": False}, {}])
    state = _gate(cluster, timeout=60)
    assert state["attempts"] == 5
    assert state["incidents"] == "e3 flapped: down 2 of the last 5 checks"


def test_check_mode_gate_writes_nothing():
    cluster = FlappingCluster([{}])
    _gate(cluster, timeout=60, write=False)
    assert not any(a[len(BASE)] == "put" for a in cluster.calls)


def test_a_member_that_health_retries_paper_over_is_down_when_metrics_do_not_answer():
    # etcdctl's retries can get a health answer from a member that was down for seconds in between;
    # /metrics, asked right after, does not answer from a member that is down.
    cluster = FlappingCluster([{}])
    real_starts = cluster.starts
    cluster.starts = lambda urls: {u: t for u, t in real_starts(urls).items() if not u.endswith(".23:2379")}
    with pytest.raises(etcdctl.EtcdError, match="e3 down in all"):
        _gate(cluster, timeout=6)


def test_restart_space_problem_needs_the_reserve_plus_the_database(tmp_path):
    """A member is restarted only with the reserve free beyond its database's size; the refusal names the
    member, the directory, the free space and what is needed. No data directory: nothing to check."""
    data = tmp_path / "etcd"
    (data / "member" / "snap").mkdir(parents=True)
    (data / "member" / "snap" / "db").write_bytes(b"\0" * (3 * etcdgate.MIB + 1))

    class Fs:
        f_frsize = 4096

        def __init__(self, free):
            self.f_bavail = free // 4096

    def with_free(free):
        return lambda path: Fs(free)

    need = 128 * etcdgate.MIB + 3 * etcdgate.MIB + 1
    assert etcdgate.restart_space_problem("etcd-3", str(data), 128, statvfs=with_free(need + 4096)) is None
    msg = etcdgate.restart_space_problem("etcd-3", str(data), 128, statvfs=with_free(need - 4096))
    assert msg == ("etcd-3: its data directory %s has 130 MiB free; a restart needs 132 MiB (128 MiB for etcd's "
                   "write-ahead log, plus its 4 MiB database). Not restarted: free space there, then run again" % data)
    assert etcdgate.restart_space_problem("etcd-3", str(tmp_path / "none"), 128) is None
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert etcdgate.restart_space_problem("etcd-3", str(fresh), 0) is None
    assert "has 0 MiB free" in etcdgate.restart_space_problem("etcd-3", str(fresh), 1, statvfs=with_free(0))
