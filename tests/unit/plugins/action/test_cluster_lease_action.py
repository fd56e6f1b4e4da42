# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster_lease action's wiring, against the FAKE gateway of the lease tests: acquire writes the run's
fencing token to the keeper status file and starts the keeper with it; held reads it back; a controller
without /proc gets no lease. (The real keeper against a real etcd: molecule/etcd.)"""

from __future__ import annotations

import importlib.util
import os
import types

import pytest

from ansible_collections.mooring.cluster.plugins.action import cluster_lease as action
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import etcdctl, etcdlease

_LEASE_TESTS = os.path.join(os.path.dirname(__file__), "..", "module_utils", "cluster", "test_cluster_lease.py")
_spec = importlib.util.spec_from_file_location("_lease_fakes", _LEASE_TESTS)
_fakes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fakes)
FakeGateway = _fakes.FakeGateway  # the one fake etcd gateway of the lease tests

ARGS = {"name": "cluster", "holder": "", "per_run": True, "ttl": 30, "timeout": 0, "poll": 2, "force": False,
        "confirm": None, "keep_alive": True, "prefix": etcdlease.LEASE_PREFIX, "endpoints": ["https://10.0.0.21:2379"],
        "cacert": "ca", "cert": "crt", "key": "key"}


@pytest.fixture()
def run(monkeypatch, tmp_path):
    gw = FakeGateway()
    started = {"value": 77}
    keepers = []
    monkeypatch.setattr(action, "GatewayClient", lambda *args, **kwargs: gw)
    monkeypatch.setattr(action, "process_started", lambda pid: started["value"])
    monkeypatch.setattr(action, "start_keeper", keepers.append)
    monkeypatch.setattr(action, "keeper_status_path",
                        lambda name, holder: etcdlease.keeper_status_path(name, holder, directory=str(tmp_path / "leases")))
    plugin = object.__new__(action.ActionModule)
    plugin._task = types.SimpleNamespace(check_mode=False)

    def act(**kwargs):
        args = dict(ARGS)
        args.update(kwargs)
        return plugin.act(args, {})

    return types.SimpleNamespace(act=act, gw=gw, started=started, keepers=keepers)


def test_acquire_keeps_the_token_and_held_checks_it(run):
    got = run.act(state="acquired")
    assert got["changed"] is True and got["create_revision"] == "2"
    keeper = run.keepers[0]
    assert (keeper["lease"], keeper["create_revision"], keeper["status"]) == (got["lease"], "2", got["keeper_status"])
    status = etcdlease.read_keeper_status(got["keeper_status"])
    assert status["state"] == "keeping" and status["lease"] == got["lease"]
    checked = run.act(state="held")
    assert checked["held"] is True and checked["holder"] == got["run_holder"]


def test_held_fails_naming_the_holder_once_the_lease_was_lost(run):
    got = run.act(state="acquired")
    run.gw.revoke(got["lease"])
    run.gw.put(etcdlease.LEASE_PREFIX + "cluster", "other@ctl run 9-9", "555")
    failed = run.act(state="held")
    assert failed["failed"] is True and failed["holder"] == "other@ctl run 9-9"
    assert "stopping before the next host" in failed["msg"]


def test_no_proc_no_lease(run):
    run.started["value"] = None
    with pytest.raises(etcdctl.EtcdError, match="no keeper can watch the run"):
        run.act(state="acquired")
    assert run.gw.kv == {} and run.keepers == []
