# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""pki_status on PKIs made by the PKI itself at different ages (real files on tmp_path)."""

from __future__ import annotations

import datetime
import os

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki import pki, pkispec, pkistatus

NOW = datetime.datetime.now(datetime.timezone.utc)
REQUEST = {"control_plane": [{"name": "cp1", "addresses": ["10.0.0.11"]}],
           "etcd": [{"name": "e1", "addresses": ["10.0.0.21"]}, {"name": "e2", "addresses": ["10.0.0.22"]}],
           "kubelets": ["cp1", "w1"]}


def names_of(request):
    return [cs.name for cs in pkispec.plan_specs(pkispec.normalize(request))]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("fresh") / "pki")
    pki.ensure_pki(d, REQUEST)
    return d


def by_name(status):
    return {e["name"]: e for e in status["entries"]}


def test_fresh_pki_nothing_due_every_planned_certificate_listed(fresh):
    status = pkistatus.pki_status(fresh)
    assert status["due"] == []
    assert status["days"] == pkispec.DEFAULTS["renew_before_days"]
    entries = by_name(status)
    # The names are plan_specs' (found from the files), plus the key pair.
    assert [e["name"] for e in status["entries"]] == names_of(REQUEST) + ["sa"]
    assert entries["sa"]["state"] == "no-expiry" and entries["sa"]["not_after"] is None
    assert entries["apiserver"]["state"] == "ok" and entries["apiserver"]["days_left"] in (364, 365)
    assert entries["ca"]["days_left"] in (3649, 3650)
    assert {"etcd/members/e2/peer", "kubeconfig/kubelet-w1", "kubeconfig/super-admin"} <= set(entries)


def test_days_threshold_marks_leaves_due_not_cas(fresh):
    status = pkistatus.pki_status(fresh, days=400)
    entries = by_name(status)
    assert entries["apiserver"]["state"] == "due"
    assert entries["ca"]["state"] == "ok"
    assert set(status["due"]) == set(names_of(REQUEST)) - {"ca", "etcd/ca", "front-proxy-ca"}


def test_old_pki_is_due_then_expired(tmp_path):
    d = str(tmp_path / "pki")
    # Made 350 days ago: leaves (365 d) have about 15 days left.
    pki.ensure_pki(d, REQUEST, now=NOW - datetime.timedelta(days=350))
    status = pkistatus.pki_status(d)
    entries = by_name(status)
    assert entries["apiserver"]["state"] == "due" and 13 <= entries["apiserver"]["days_left"] <= 15
    assert entries["ca"]["state"] == "ok"
    assert "kubeconfig/kubelet-w1" in status["due"] and "ca" not in status["due"]
    # 10 days: nothing due yet.
    assert pkistatus.pki_status(d, days=10)["due"] == []
    # The same PKI seen 20 days later: expired.
    later = pkistatus.pki_status(d, now=NOW + datetime.timedelta(days=20))
    assert by_name(later)["apiserver"]["state"] == "expired"
    assert by_name(later)["apiserver"]["days_left"] < 0


def test_status_agrees_with_what_renewal_renews(tmp_path):
    d = str(tmp_path / "pki")
    pki.ensure_pki(d, REQUEST, now=NOW - datetime.timedelta(days=350))
    due = set(pkistatus.pki_status(d)["due"])
    renewed = {r["name"] for r in pki.ensure_pki(d, REQUEST)["renewed"]}
    assert due == renewed
    assert pkistatus.pki_status(d)["due"] == []


def test_missing_files_and_unreadable(tmp_path):
    d = str(tmp_path / "pki")
    pki.ensure_pki(d, REQUEST)
    os.remove(os.path.join(d, "front-proxy-client.crt"))
    with open(os.path.join(d, "kubeconfig", "admin.crt"), "w") as f:
        f.write("not a certificate\n")
    os.remove(os.path.join(d, "sa.pub"))
    entries = by_name(pkistatus.pki_status(d))
    assert entries["front-proxy-client"]["state"] == "missing"
    assert entries["kubeconfig/admin"]["state"] == "unreadable"
    # Half a key pair is not "missing": generate refuses it (it would not simply be made).
    assert entries["sa"]["state"] == "broken" and entries["sa"]["reason"].startswith("sa.pub is missing")
    assert set(pkistatus.pki_status(d)["due"]) == {"front-proxy-client", "kubeconfig/admin", "sa"}


def test_request_names_hosts_not_on_disk(fresh):
    request = dict(REQUEST, etcd=REQUEST["etcd"] + [{"name": "e3"}])
    entries = by_name(pkistatus.pki_status(fresh, request=request))
    assert entries["etcd/members/e3/server"]["state"] == "missing"


@pytest.mark.parametrize("path, message", [
    ("/nonexistent/pki", "is not a directory"),
    ("", "give the PKI directory"),
])
def test_bad_directory_is_one_error(path, message):
    with pytest.raises(pkispec.PKIError, match=message):
        pkistatus.pki_status(path)


def test_bad_days(fresh):
    with pytest.raises(pkispec.PKIError, match="days: must be a whole number of days from 0 to 36500, not -1"):
        pkistatus.pki_status(fresh, days=-1)


def test_request_from_dir(fresh):
    assert pkistatus.request_from_dir(fresh) == {"etcd": [{"name": "e1"}, {"name": "e2"}], "kubelets": ["cp1", "w1"]}
