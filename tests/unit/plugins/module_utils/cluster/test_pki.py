# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the controller-side PKI backend (real keys and certificates, on tmp_path)."""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import shutil
import stat
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki import pki, pkispec, pkistatus, pkistore

REQUEST = {
    "control_plane_endpoint": "api.example.test:6443",
    "cluster_domain": "cluster.local",
    "service_cidr": "10.96.0.0/12",
    "control_plane": [{"name": "cp1", "addresses": ["10.0.0.11"], "names": ["cp1.example.test"]},
                      {"name": "cp2", "addresses": ["10.0.0.12"]}],
    "etcd": [{"name": "e1", "addresses": ["10.0.0.21"]}, {"name": "e2", "addresses": ["10.0.0.22", "fd00::22"]},
             {"name": "e3", "addresses": ["10.0.0.23"]}],
    "kubelets": ["cp1", "cp2", "w1"],
}

# kubeadm v1.29+ subjects, issuers and extended key usages (cmd/kubeadm/app/phases/certs/certlist.go,
# phases/kubeconfig/kubeconfig.go).
KUBEADM = [
    # name, CN, O, issuer, usages
    ("apiserver", "kube-apiserver", [], "ca", {"server"}),
    ("apiserver-kubelet-client", "kube-apiserver-kubelet-client", ["kubeadm:cluster-admins"], "ca", {"client"}),
    ("front-proxy-client", "front-proxy-client", [], "front-proxy-ca", {"client"}),
    ("apiserver-etcd-client", "kube-apiserver-etcd-client", [], "etcd/ca", {"client"}),
    ("etcd/healthcheck-client", "kube-etcd-healthcheck-client", [], "etcd/ca", {"client"}),
    ("etcd/members/e1/server", "e1", [], "etcd/ca", {"server", "client"}),
    ("etcd/members/e2/peer", "e2", [], "etcd/ca", {"server", "client"}),
    ("kubeconfig/admin", "kubernetes-admin", ["kubeadm:cluster-admins"], "ca", {"client"}),
    ("kubeconfig/super-admin", "kubernetes-super-admin", ["system:masters"], "ca", {"client"}),
    ("kubeconfig/controller-manager", "system:kube-controller-manager", [], "ca", {"client"}),
    ("kubeconfig/scheduler", "system:kube-scheduler", [], "ca", {"client"}),
    ("kubeconfig/kubelet-w1", "system:node:w1", ["system:nodes"], "ca", {"client"}),
]
CAS = [("ca", "kubernetes"), ("etcd/ca", "etcd-ca"), ("front-proxy-ca", "front-proxy-ca")]


def cert(path, name):
    with open(os.path.join(path, name + ".crt"), "rb") as f:
        return x509.load_pem_x509_certificate(f.read())


def key(path, name):
    with open(os.path.join(path, name + ".key"), "rb") as f:
        return serialization.load_pem_private_key(f.read(), password=None)


def sans(c):
    ext = c.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return set(ext.get_values_for_type(x509.DNSName)), {str(i) for i in ext.get_values_for_type(x509.IPAddress)}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("pki") / "pki")
    result = pki.ensure_pki(path, REQUEST)
    return path, result


def test_first_run_creates_the_whole_layout(made):
    path, result = made
    assert result["changed"] is True
    assert result["renewed"] == []
    expected = {row[0] for row in KUBEADM} | {row[0] for row in CAS} | {"sa"}
    assert expected <= set(result["created"])
    assert len(result["created"]) == 3 + 5 + 2 * 3 + 4 + 3 + 1
    for name in set(result["created"]) - {"sa"}:
        assert os.path.isfile(os.path.join(path, name + ".crt"))
    assert os.path.isfile(os.path.join(path, "sa.key")) and os.path.isfile(os.path.join(path, "sa.pub"))


def test_file_modes(made):
    path = made[0]
    for root, _dirs, files in os.walk(path):
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700, root
        for f in files:
            mode = stat.S_IMODE(os.stat(os.path.join(root, f)).st_mode)
            assert mode == (0o600 if f.endswith(".key") else 0o644), (f, oct(mode))


@pytest.mark.parametrize("name,cn", CAS)
def test_cas_are_self_signed_cas(made, name, cn):
    path = made[0]
    c = cert(path, name)
    assert c.subject == c.issuer
    assert c.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == cn
    bc = c.extensions.get_extension_for_class(x509.BasicConstraints)
    assert bc.critical and bc.value.ca is True
    assert c.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign is True
    c.verify_directly_issued_by(c)
    days = (c.not_valid_after_utc - c.not_valid_before_utc).days
    assert 3649 <= days <= 3651


@pytest.mark.parametrize("name,cn,orgs,issuer,usages", KUBEADM)
def test_leaf_matches_kubeadm(made, name, cn, orgs, issuer, usages):
    path = made[0]
    c = cert(path, name)
    assert c.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == cn
    assert [a.value for a in c.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == orgs
    c.verify_directly_issued_by(cert(path, issuer))  # raises if the chain is wrong
    for other, _cn in CAS:
        if other != issuer:
            with pytest.raises(Exception):  # noqa: B017 - InvalidSignature or ValueError
                c.verify_directly_issued_by(cert(path, other))
    bc = c.extensions.get_extension_for_class(x509.BasicConstraints)
    assert bc.critical and bc.value.ca is False
    ku = c.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.digital_signature and not ku.key_cert_sign
    eku = c.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    got = set()
    if ExtendedKeyUsageOID.SERVER_AUTH in eku:
        got.add("server")
    if ExtendedKeyUsageOID.CLIENT_AUTH in eku:
        got.add("client")
    assert got == usages and len(list(eku)) == len(usages)
    k = key(path, name)
    assert isinstance(k, ec.EllipticCurvePrivateKey) and isinstance(k.curve, ec.SECP256R1)
    pub = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    assert k.public_key().public_bytes(*pub) == c.public_key().public_bytes(*pub)


def test_apiserver_sans(made):
    path = made[0]
    dns, ips = sans(cert(path, "apiserver"))
    assert dns == {"kubernetes", "kubernetes.default", "kubernetes.default.svc",
                   "kubernetes.default.svc.cluster.local", "cp1", "cp1.example.test", "cp2", "api.example.test"}
    assert ips == {"10.96.0.1", "10.0.0.11", "10.0.0.12"}


def test_etcd_member_sans(made):
    path = made[0]
    for kind in ("server", "peer"):
        dns, ips = sans(cert(path, "etcd/members/e2/%s" % kind))
        assert dns == {"e2", "localhost"}
        assert ips == {"10.0.0.22", "fd00::22", "127.0.0.1", "::1"}


def test_service_account_pair(made):
    path = made[0]
    with open(os.path.join(path, "sa.key"), "rb") as f:
        k = serialization.load_pem_private_key(f.read(), password=None)
    with open(os.path.join(path, "sa.pub"), "rb") as f:
        p = serialization.load_pem_public_key(f.read())
    assert k.public_key().public_numbers() == p.public_numbers()


def test_openssl_agrees_on_the_chains(made):
    """Independent check with the openssl binary (skipped where there is none)."""
    if not shutil.which("openssl"):
        pytest.skip("no openssl binary")
    path = made[0]
    for name, _cn, _o, issuer, _u in KUBEADM:
        out = subprocess.run(["openssl", "verify", "-CAfile", os.path.join(path, issuer + ".crt"),
                              os.path.join(path, name + ".crt")], capture_output=True, text=True, check=False)
        assert out.returncode == 0 and out.stdout.strip().endswith(": OK"), out


def snapshot(path):
    out = {}
    for root, _d, files in os.walk(path):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                out[os.path.relpath(os.path.join(root, f), path)] = fh.read()
    return out


@pytest.fixture()
def fresh(tmp_path):
    path = str(tmp_path / "pki")
    pki.ensure_pki(path, REQUEST)
    return path


def test_second_run_changes_nothing(fresh):
    before = snapshot(fresh)
    result = pki.ensure_pki(fresh, REQUEST)
    assert result["changed"] is False
    assert result["created"] == [] and result["renewed"] == [] and result["modes_fixed"] == []
    assert snapshot(fresh) == before


def test_check_mode_writes_nothing(tmp_path):
    path = str(tmp_path / "pki")
    result = pki.ensure_pki(path, REQUEST, check_mode=True)
    assert result["changed"] is True and "ca" in result["created"]
    assert "CN=kube-apiserver" in result["diff"]["after"]
    assert not os.path.exists(path)


def test_san_change_renews_only_that_certificate(fresh):
    req = dict(REQUEST, control_plane=REQUEST["control_plane"] + [{"name": "cp3", "addresses": ["10.0.0.13"]}])
    old_admin = snapshot(fresh)["kubeconfig/admin.crt"]
    check = pki.ensure_pki(fresh, req, check_mode=True)
    result = pki.ensure_pki(fresh, req)
    assert check["renewed"] == result["renewed"] == [{"name": "apiserver", "reason": "SANs changed"}]
    assert result["created"] == []
    assert "10.0.0.13" in sans(cert(fresh, "apiserver"))[1]
    assert snapshot(fresh)["kubeconfig/admin.crt"] == old_admin
    assert "10.0.0.13" not in result["diff"]["before"] and "10.0.0.13" in result["diff"]["after"]


def test_new_etcd_member_and_kubelet_are_created_and_stale_ones_reported(fresh):
    req = dict(REQUEST, etcd=REQUEST["etcd"][:2] + [{"name": "e4", "addresses": ["10.0.0.24"]}],
               kubelets=["cp1", "cp2", "w2"])
    result = pki.ensure_pki(fresh, req)
    assert set(result["created"]) == {"etcd/members/e4/server", "etcd/members/e4/peer", "kubeconfig/kubelet-w2"}
    assert result["renewed"] == []
    assert result["stale"] == ["etcd/members/e3", "kubeconfig/kubelet-w1"]


def test_expiring_certificates_are_renewed(fresh):
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=340)
    result = pki.ensure_pki(fresh, REQUEST, now=later)
    reasons = {r["name"]: r["reason"] for r in result["renewed"]}
    assert "ca" not in reasons  # the CAs have ten years
    assert reasons["apiserver"].startswith("expiring ")
    assert len(reasons) == 5 + 2 * 3 + 4 + 3
    # renewed under the same CA, valid from the given time for validity_days
    c = cert(fresh, "apiserver")
    c.verify_directly_issued_by(cert(fresh, "ca"))
    assert (c.not_valid_after_utc - later).days in (364, 365)


ETCD_LEAVES = {"apiserver-etcd-client", "etcd/healthcheck-client"} | {
    "etcd/members/e%d/%s" % (i, k) for i in (1, 2, 3) for k in ("server", "peer")}


def test_new_ca_reissues_everything_it_signed_and_nothing_else(fresh):
    before = snapshot(fresh)
    result = pki.ensure_pki(fresh, REQUEST, new_ca=["etcd/ca"])
    assert result["created"] == []
    renewed = {r["name"]: r["reason"] for r in result["renewed"]}
    assert renewed.pop("etcd/ca") == "new CA (new_ca)"
    assert set(renewed) == ETCD_LEAVES
    assert set(renewed.values()) == {"CA changed"}
    cert(fresh, "etcd/members/e1/server").verify_directly_issued_by(cert(fresh, "etcd/ca"))
    after = snapshot(fresh)
    changed = {f for f in before if before[f] != after[f]}
    assert changed == {"%s.%s" % (n, ext) for n in ETCD_LEAVES | {"etcd/ca"} for ext in ("crt", "key")}
    # Then it is a healthy PKI again: nothing to do.
    assert pki.ensure_pki(fresh, REQUEST)["changed"] is False


def test_half_a_ca_is_refused_unless_new_ca(fresh):
    os.unlink(os.path.join(fresh, "etcd", "ca.key"))
    before = snapshot(fresh)
    with pytest.raises(pkispec.PKIError) as exc:
        pki.ensure_pki(fresh, REQUEST)
    assert exc.value.problems == [
        "%s is missing while etcd/ca.crt is there (half a CA); a CA is replaced only when asked: new_ca [etcd/ca] "
        "(CLI --new-ca etcd/ca) makes a new one and re-issues every certificate it signed (docs/pki.md, "
        "'A new CA')" % os.path.join(fresh, "etcd", "ca.key")]
    assert snapshot(fresh) == before
    result = pki.ensure_pki(fresh, REQUEST, new_ca=["etcd/ca"])
    assert {r["name"] for r in result["renewed"]} == ETCD_LEAVES | {"etcd/ca"}


def test_missing_ca_is_made_as_on_a_first_run(fresh):
    os.unlink(os.path.join(fresh, "front-proxy-ca.crt"))
    os.unlink(os.path.join(fresh, "front-proxy-ca.key"))
    result = pki.ensure_pki(fresh, REQUEST)
    assert result["created"] == ["front-proxy-ca"]
    assert result["renewed"] == [{"name": "front-proxy-client", "reason": "CA changed"}]


def test_foreign_ca_is_detected(fresh, tmp_path):
    other = str(tmp_path / "other")
    pki.ensure_pki(other, REQUEST)
    shutil.copy(os.path.join(other, "front-proxy-ca.crt"), os.path.join(fresh, "front-proxy-ca.crt"))
    shutil.copy(os.path.join(other, "front-proxy-ca.key"), os.path.join(fresh, "front-proxy-ca.key"))
    result = pki.ensure_pki(fresh, REQUEST)
    assert result["renewed"] == [{"name": "front-proxy-client", "reason": "CA changed"}]


def test_key_mismatch_is_refused_missing_file_is_made(fresh):
    shutil.copy(os.path.join(fresh, "kubeconfig/admin.key"), os.path.join(fresh, "kubeconfig/scheduler.key"))
    os.unlink(os.path.join(fresh, "apiserver.crt"))
    before = snapshot(fresh)
    with pytest.raises(pkispec.PKIError) as exc:
        pki.ensure_pki(fresh, REQUEST)
    assert exc.value.problems == [
        "%s does not match kubeconfig/scheduler.crt (it is another key pair's key); re-issue it with force "
        "[kubeconfig/scheduler] (CLI --force kubeconfig/scheduler), or every broken leaf with reissue_broken "
        "(CLI --reissue-broken)" % os.path.join(fresh, "kubeconfig/scheduler.key")]
    assert snapshot(fresh) == before
    result = pki.ensure_pki(fresh, REQUEST, reissue_broken=True)
    assert result["renewed"] == [{"name": "kubeconfig/scheduler", "reason": "broken: kubeconfig/scheduler.key does "
                                  "not match kubeconfig/scheduler.crt (it is another key pair's key)"}]
    assert result["created"] == ["apiserver"]


def test_wrong_modes_are_fixed_and_reported(fresh):
    os.chmod(os.path.join(fresh, "ca.key"), 0o644)
    check = pki.ensure_pki(fresh, REQUEST, check_mode=True)
    assert check["changed"] and check["modes_fixed"] == ["ca.key"]
    assert stat.S_IMODE(os.stat(os.path.join(fresh, "ca.key")).st_mode) == 0o644
    result = pki.ensure_pki(fresh, REQUEST)
    assert result["modes_fixed"] == ["ca.key"]
    assert stat.S_IMODE(os.stat(os.path.join(fresh, "ca.key")).st_mode) == 0o600


def test_force(fresh):
    result = pki.ensure_pki(fresh, REQUEST, force=["kubeconfig/admin"])
    assert result["renewed"] == [{"name": "kubeconfig/admin", "reason": "forced"}]
    with pytest.raises(pkispec.PKIError, match="force: unknown certificate"):
        pki.ensure_pki(fresh, REQUEST, force=["nope"])


def test_force_all_is_every_leaf_never_a_ca(fresh):
    result = pki.ensure_pki(fresh, REQUEST, force=["all"])
    assert {r["name"] for r in result["renewed"]} == {n for n in result["files"] if n not in ("sa",) and
                                                      n not in {c for c, _cn in CAS}}
    assert set(result["kept"]) == {"ca", "etcd/ca", "front-proxy-ca", "sa"}


@pytest.mark.parametrize("name", ["ca", "etcd/ca", "sa"])
def test_force_on_a_ca_points_to_new_ca(fresh, name):
    with pytest.raises(pkispec.PKIError, match="force: %s: a CA or the service-account key pair is not renewed by "
                       "force; a new one is asked for with new_ca" % name):
        pki.ensure_pki(fresh, REQUEST, force=[name])


def test_new_ca_sa_and_unknown_new_ca(fresh):
    result = pki.ensure_pki(fresh, REQUEST, new_ca=["sa"])
    assert result["renewed"] == [{"name": "sa", "reason": "new key pair (new_ca)"}]
    with pytest.raises(pkispec.PKIError, match=r"new_ca: apiserver is not a CA; known: ca, etcd/ca, front-proxy-ca, sa"):
        pki.ensure_pki(fresh, REQUEST, new_ca=["apiserver"])
    with pytest.raises(pkispec.PKIError, match=r"new_ca: must be a list"):
        pki.ensure_pki(fresh, REQUEST, new_ca="ca")


def test_rsa_option_and_key_type_change(fresh):
    result = pki.ensure_pki(fresh, dict(REQUEST, key_type="rsa"))
    reasons = {r["name"]: r["reason"] for r in result["renewed"]}
    assert reasons["apiserver"] == "key type changed (ecdsa -> rsa)"
    k = key(fresh, "apiserver")
    assert isinstance(k, rsa.RSAPrivateKey) and k.key_size == 2048
    c = cert(fresh, "apiserver")
    assert c.extensions.get_extension_for_class(x509.KeyUsage).value.key_encipherment is True
    assert pki.ensure_pki(fresh, dict(REQUEST, key_type="rsa"))["changed"] is False


def test_validity_is_configurable(tmp_path):
    path = str(tmp_path / "p")
    pki.ensure_pki(path, dict(REQUEST, validity_days=90, renew_before_days=10, ca_validity_days=1000))
    c = cert(path, "kubeconfig/admin")
    assert (c.not_valid_after_utc - c.not_valid_before_utc) == datetime.timedelta(days=90, minutes=5)
    ca = cert(path, "ca")
    assert (ca.not_valid_after_utc - ca.not_valid_before_utc) == datetime.timedelta(days=1000, minutes=5)


def test_a_leaf_made_late_in_its_cas_life_ends_with_the_ca(tmp_path):
    path = str(tmp_path / "p")
    req = dict(REQUEST, validity_days=365, renew_before_days=30, ca_validity_days=400)
    start = datetime.datetime.now(datetime.timezone.utc)
    pki.ensure_pki(path, req, now=start)
    later = start + datetime.timedelta(days=340)  # leaves expire in 25 days: renewed; the CA has 60 left
    result = pki.ensure_pki(path, req, now=later)
    assert "apiserver" in {r["name"] for r in result["renewed"]}
    ca, leaf = cert(path, "ca"), cert(path, "apiserver")
    assert leaf.not_valid_after_utc == ca.not_valid_after_utc
    leaf.verify_directly_issued_by(ca)
    assert pki.ensure_pki(path, req, now=later)["changed"] is False  # capped is not expiring: kept next run


@pytest.mark.parametrize("change,message", [
    ({"key_type": "dsa"}, "key_type: 'dsa' is not one of ecdsa, rsa"),
    ({"service_cidr": "10.96.0.1/12"}, "service_cidr: '10.96.0.1/12' is not a network"),
    ({"etcd": [{"name": "e1", "addresses": ["e1.example"]}]}, r"etcd\[0\].addresses\[0\]: 'e1.example' is not an IP"),
    ({"etcd": [{"name": "E_1"}]}, r"etcd\[0\].name: 'E_1' is not a valid DNS-1123 name"),
    ({"etcd": [{"name": "e1"}, {"name": "e1"}]}, r"etcd\[1\].name: 'e1' appears twice"),
    ({"control_plane": [{"name": "cp1", "ip": "1.2.3.4"}]}, r"control_plane\[0\]: unknown key\(s\) ip"),
    ({"validity_days": 0}, "validity_days: must be a positive integer"),
    ({"validity_days": 3000000}, "validity_days: must be at most 36500 days"),
    ({"ca_validity_days": 100, "validity_days": 5000}, r"validity_days \(5000\) must not be longer than ca_validity_days"),
    ({"control_plane_endpoint": "999.999.999.999:6443"}, "'999.999.999.999' is not an IPv4 address"),
    ({"control_plane_endpoint": "0.0.0.0:6443"}, "0.0.0.0 is the unspecified address"),
    ({"service_cidr": "10.96.0.0/32"}, r"service_cidr: 10.96.0.0/32 holds 1 address\(es\)"),
    ({"renew_before_days": 400}, "renew_before_days \\(400\\) must be smaller than validity_days"),
    ({"bogus": 1}, "unknown PKI option\\(s\\): bogus"),
    ({"kubelets": "w1"}, "kubelets: must be a list"),
])
def test_bad_input_names_the_field_and_writes_nothing(tmp_path, change, message):
    path = str(tmp_path / "pki")
    with pytest.raises(pkispec.PKIError, match=message):
        pki.ensure_pki(path, dict(REQUEST, **change))
    assert not os.path.exists(path)


def test_ipv6_endpoint_and_service_ip():
    spec = pkispec.normalize(dict(REQUEST, control_plane_endpoint="[fd00::1]:6443", service_cidr="fd00:10::/108"))
    assert spec["endpoint_host"] == "fd00::1"
    assert spec["service_ip"] == ipaddress.ip_address("fd00:10::1")


def test_inspect_lists_every_certificate(fresh):
    entries = {e["name"]: e for e in pkistatus.inspect_pki(fresh)}
    assert entries["apiserver"]["days_left"] in (364, 365)
    assert len(entries) == 3 + 5 + 6 + 4 + 3


def test_request_from_inventory():
    groups = {"control_plane": ["cp1"], "etcd": ["e1", "e2"], "workers": ["w1", "cp1"], "all": ["x"]}
    hostvars = {"cp1": {"ansible_host": "10.0.0.11"}, "e1": {"ansible_host": "e1.example.test"},
                "e2": {"ansible_host": "10.0.0.22", "mooring_address": "10.1.0.22"}, "w1": {}}
    req = pkispec.request_from_inventory(groups, hostvars)
    assert req == {
        "control_plane": [{"name": "cp1", "addresses": ["10.0.0.11"], "names": []}],
        "etcd": [{"name": "e1", "addresses": [], "names": ["e1.example.test"]},
                 {"name": "e2", "addresses": ["10.1.0.22"], "names": []}],
        "kubelets": ["cp1", "w1"],
    }
    assert pkispec.normalize(req)["etcd"][1]["addresses"] == [ipaddress.ip_address("10.1.0.22")]


# ---------------------------------------------------------------------------------------
# Broken and hostile PKI directories: refused, nothing written or chmod-ed


def full_snapshot(path):
    """Kind, mode and content of every entry under ``path`` (links not followed)."""
    out = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            f = os.path.join(root, name)
            st = os.lstat(f)
            if stat.S_ISLNK(st.st_mode):
                out[os.path.relpath(f, path)] = ("link", os.readlink(f))
            elif stat.S_ISREG(st.st_mode):
                with open(f, "rb") as fh:
                    out[os.path.relpath(f, path)] = ("file", stat.S_IMODE(st.st_mode), fh.read())
            else:
                out[os.path.relpath(f, path)] = ("other", st.st_mode)
    return out


def get(path, name):
    with open(os.path.join(path, name), "rb") as f:
        return f.read()


def put(path, name, data):
    with open(os.path.join(path, name), "wb") as f:
        f.write(data)


def swap(path, a, b):
    pa, pb = os.path.join(path, a), os.path.join(path, b)
    os.rename(pa, pa + ".tmp")
    os.rename(pb, pa)
    os.rename(pa + ".tmp", pb)


def encrypt(path, name):
    k = key(path, name[:-4])
    put(path, name, k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.BestAvailableEncryption(b"secret")))


BROKEN_CAS = [
    # id, how to break it, the file named, the words
    ("ca-crt-garbage", lambda p: put(p, "ca.crt", b"garbage\n"), "ca.crt", "is not a PEM X.509 certificate"),
    ("ca-key-garbage", lambda p: put(p, "ca.key", b"\x00\xff" * 40), "ca.key", "is not a PEM private key"),
    ("ca-crt-empty", lambda p: put(p, "ca.crt", b""), "ca.crt", "is empty"),
    ("etcd-ca-truncated", lambda p: put(p, "etcd/ca.crt", get(p, "etcd/ca.crt")[:200]),
     "etcd/ca.crt", "is not a PEM X.509 certificate"),
    ("front-proxy-ca-utf16", lambda p: put(p, "front-proxy-ca.crt", get(p, "front-proxy-ca.crt").decode().encode("utf-16")),
     "front-proxy-ca.crt", "is not a PEM X.509 certificate"),
    ("ca-keys-swapped", lambda p: swap(p, "ca.key", "etcd/ca.key"), "ca.key", "does not match ca.crt"),
    ("cas-swapped", lambda p: (swap(p, "ca.key", "front-proxy-ca.key"), swap(p, "ca.crt", "front-proxy-ca.crt")),
     "ca.crt", "is CN=front-proxy-ca, the subject of front-proxy-ca.crt"),
    ("ca-is-a-leaf", lambda p: (shutil.copy(os.path.join(p, "apiserver.crt"), os.path.join(p, "ca.crt")),
                                shutil.copy(os.path.join(p, "apiserver.key"), os.path.join(p, "ca.key"))),
     "ca.crt", "is not a CA certificate"),
    ("ca-key-encrypted", lambda p: encrypt(p, "ca.key"), "ca.key", "is an encrypted private key"),
    ("ca-crt-missing", lambda p: os.unlink(os.path.join(p, "ca.crt")), "ca.crt", "is missing while ca.key is there"),
    ("sa-key-garbage", lambda p: put(p, "sa.key", b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
     "sa.key", "is not a PEM private key"),
    ("sa-pub-mismatch", lambda p: shutil.copy(os.path.join(p, "kubeconfig/admin.key"), os.path.join(p, "sa.key")),
     "sa.pub", "does not match sa.key"),
    ("sa-pub-missing", lambda p: os.unlink(os.path.join(p, "sa.pub")), "sa.pub", "is missing while sa.key is there"),
]


@pytest.mark.parametrize("breaks,file,words", [c[1:] for c in BROKEN_CAS], ids=[c[0] for c in BROKEN_CAS])
def test_broken_ca_is_refused_and_nothing_changes(fresh, breaks, file, words):
    breaks(fresh)
    os.chmod(os.path.join(fresh, "kubeconfig", "admin.key"), 0o644)  # a mode it would fix on a healthy run
    before = full_snapshot(fresh)
    for check_mode in (True, False):
        with pytest.raises(pkispec.PKIError) as exc:
            pki.ensure_pki(fresh, REQUEST, check_mode=check_mode)
        assert any(p.startswith(os.path.join(fresh, file) + " " + words) for p in exc.value.problems), exc.value.problems
        ca = "sa" if file.startswith("sa.") else file[:-4]
        assert "new_ca [%s]" % ca in str(exc.value)
        assert full_snapshot(fresh) == before
    # force is no way out for a CA; new_ca is
    with pytest.raises(pkispec.PKIError):
        pki.ensure_pki(fresh, REQUEST, force=["all"], reissue_broken=True)
    assert full_snapshot(fresh) == before
    replaced = {"cas-swapped": ["ca", "front-proxy-ca"], "ca-keys-swapped": ["ca", "etcd/ca"]}.get(
        [c[0] for c in BROKEN_CAS if c[2] == file and c[3] == words][0], ["sa" if file.startswith("sa.") else file[:-4]])
    result = pki.ensure_pki(fresh, REQUEST, new_ca=replaced)
    assert {r["name"] for r in result["renewed"] if r["reason"].startswith("new ")} == set(replaced)
    assert pki.ensure_pki(fresh, REQUEST)["changed"] is False


def test_expiring_ca_is_refused_unless_new_ca(tmp_path):
    path = str(tmp_path / "pki")
    old = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=3640)
    pki.ensure_pki(path, REQUEST, now=old)
    before = full_snapshot(path)
    with pytest.raises(pkispec.PKIError) as exc:
        pki.ensure_pki(path, REQUEST)
    assert len(exc.value.problems) == 3  # the three CAs
    assert "ca.crt expires " in exc.value.problems[0] and "within renew_before_days (30)" in exc.value.problems[0]
    assert full_snapshot(path) == before
    result = pki.ensure_pki(path, REQUEST, new_ca=["ca", "etcd/ca", "front-proxy-ca"])
    assert {r["name"] for r in result["renewed"]} >= {"ca", "etcd/ca", "front-proxy-ca", "apiserver"}


BROKEN_LEAVES = [
    ("garbage-crt", lambda p: put(p, "apiserver.crt", b"hello\n"), "apiserver", "apiserver.crt",
     "is not a PEM X.509 certificate"),
    ("binary-key", lambda p: put(p, "apiserver.key", os.urandom(300)), "apiserver", "apiserver.key",
     "is not a PEM private key"),
    ("empty-key", lambda p: put(p, "kubeconfig/admin.key", b""), "kubeconfig/admin", "kubeconfig/admin.key", "is empty"),
    ("huge-crt", lambda p: put(p, "front-proxy-client.crt", b"A" * (pkistore.MAX_PEM_BYTES + 1)), "front-proxy-client",
     "front-proxy-client.crt", "is %d bytes" % (pkistore.MAX_PEM_BYTES + 1)),
    ("leaf-is-a-ca", lambda p: (shutil.copy(os.path.join(p, "etcd/ca.crt"), os.path.join(p, "etcd/members/e1/peer.crt")),
                                shutil.copy(os.path.join(p, "etcd/ca.key"), os.path.join(p, "etcd/members/e1/peer.key"))),
     "etcd/members/e1/peer", "etcd/members/e1/peer.crt", "is a CA certificate where a leaf certificate belongs"),
    ("key-of-another", lambda p: shutil.copy(os.path.join(p, "etcd/members/e2/server.key"),
                                             os.path.join(p, "etcd/members/e1/server.key")),
     "etcd/members/e1/server", "etcd/members/e1/server.key",
     "does not match etcd/members/e1/server.crt"),
]


@pytest.mark.parametrize("breaks,name,file,words", [c[1:] for c in BROKEN_LEAVES], ids=[c[0] for c in BROKEN_LEAVES])
def test_broken_leaf_is_reported_not_rewritten_until_asked(fresh, breaks, name, file, words):
    breaks(fresh)
    before = full_snapshot(fresh)
    spec, actions, _loaded = pki.plan_pki(fresh, REQUEST)
    planned = {a["name"]: a for a in actions}
    assert planned[name]["action"] == "refused" and planned[name]["reason"].startswith(file + " " + words)
    with pytest.raises(pkispec.PKIError) as exc:
        pki.ensure_pki(fresh, REQUEST)
    assert exc.value.problems[0].startswith(os.path.join(fresh, file) + " " + words)
    assert "force [%s]" % name in exc.value.problems[0] and "reissue_broken" in exc.value.problems[0]
    assert full_snapshot(fresh) == before
    # Named in force: re-issued, and only that one.
    result = pki.ensure_pki(fresh, REQUEST, force=[name])
    assert result["renewed"] == [{"name": name, "reason": "broken: %s" % planned[name]["reason"]}]
    cert(fresh, name).verify_directly_issued_by(cert(fresh, pkispec.plan_specs(spec)[
        [cs.name for cs in pkispec.plan_specs(spec)].index(name)].ca))
    assert pki.ensure_pki(fresh, REQUEST)["changed"] is False


def test_reissue_broken_reissues_every_broken_leaf_and_reports_them(fresh):
    put(fresh, "apiserver.crt", b"hello\n")
    shutil.copy(os.path.join(fresh, "kubeconfig/admin.key"), os.path.join(fresh, "kubeconfig/scheduler.key"))
    with pytest.raises(pkispec.PKIError) as exc:
        pki.ensure_pki(fresh, REQUEST)
    assert len(exc.value.problems) == 2
    result = pki.ensure_pki(fresh, REQUEST, reissue_broken=True)
    assert [r["name"] for r in result["renewed"]] == ["apiserver", "kubeconfig/scheduler"]
    assert all(r["reason"].startswith("broken: ") for r in result["renewed"])


@pytest.mark.parametrize("link,mode,what", [
    (os.symlink, 0o644, "a symbolic link;"),
    (os.link, 0o640, "a hard link (2 names)"),  # the mode fix would make its other name 0600 through the link
], ids=["symlink", "hardlink"])
def test_linked_key_is_refused_and_the_other_name_untouched(fresh, tmp_path, link, mode, what):
    outside = tmp_path / "outside.key"
    outside.write_bytes(get(fresh, "apiserver.key"))
    os.chmod(outside, mode)
    os.unlink(os.path.join(fresh, "apiserver.key"))
    link(str(outside), os.path.join(fresh, "apiserver.key"))
    before = full_snapshot(fresh)
    with pytest.raises(pkispec.PKIError) as exc:
        pki.ensure_pki(fresh, REQUEST, force=["all"], reissue_broken=True)
    assert exc.value.problems[0].startswith("%s is %s" % (os.path.join(fresh, "apiserver.key"), what))
    assert stat.S_IMODE(os.stat(outside).st_mode) == mode
    assert full_snapshot(fresh) == before
    for read in (pkistatus.inspect_pki, pkistatus.pki_status):
        with pytest.raises(pkispec.PKIError, match=re.escape("apiserver.key is %s" % what.rstrip(";"))):
            read(fresh)


def test_symlinked_directory_and_fifo_are_refused(fresh, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(os.path.join(fresh, "kubeconfig"), str(elsewhere))
    os.chmod(elsewhere, 0o740)
    os.symlink(str(elsewhere), os.path.join(fresh, "kubeconfig"))
    os.mkfifo(os.path.join(fresh, "etcd", "ca.srl"))
    before = full_snapshot(fresh)
    with pytest.raises(pkispec.PKIError) as exc:
        pki.ensure_pki(fresh, REQUEST)
    assert exc.value.problems[0].startswith("%s is a special file" % os.path.join(fresh, "etcd", "ca.srl"))
    assert exc.value.problems[1].startswith("%s is a symbolic link" % os.path.join(fresh, "kubeconfig"))
    assert full_snapshot(fresh) == before
    assert stat.S_IMODE(os.stat(elsewhere).st_mode) == 0o740


def test_a_fifo_where_a_certificate_belongs_does_not_block(fresh):
    os.unlink(os.path.join(fresh, "apiserver.crt"))
    os.mkfifo(os.path.join(fresh, "apiserver.crt"))
    with pytest.raises(pkispec.PKIError, match="apiserver.crt is a special file"):
        pki.ensure_pki(fresh, REQUEST)
    # Even past the directory check, a read does not block on it.
    with pytest.raises(pkispec.PKIError, match="is a special file"):
        pkistore.read_pem(os.path.join(fresh, "apiserver.crt"))


def test_the_directory_itself_may_be_a_link(fresh, tmp_path):
    link = str(tmp_path / "link")
    os.symlink(fresh, link)
    os.chmod(fresh, 0o740)
    result = pki.ensure_pki(link, REQUEST)
    assert result["modes_fixed"] == ["."] and result["created"] == [] and result["renewed"] == []
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o700


def test_bad_directory_is_one_error(tmp_path, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(pkispec.PKIError, match="path: .*/afile exists and is not a directory"):
        pki.ensure_pki(str(afile), REQUEST)
    with pytest.raises(pkispec.PKIError, match="path: .*/afile/sub/pki is below .*/afile, which is not a directory"):
        pki.ensure_pki(str(afile / "sub" / "pki"), REQUEST, check_mode=True)
    os.symlink(str(tmp_path / "nowhere"), str(tmp_path / "dangling"))
    with pytest.raises(pkispec.PKIError, match="is a symbolic link to nothing"):
        pki.ensure_pki(str(tmp_path / "dangling"), REQUEST)
    # Tests run as root, who writes anywhere: the answer a user without access gets.
    monkeypatch.setattr(os, "access", lambda p, mode: False)
    with pytest.raises(pkispec.PKIError, match="path: cannot create .*/new/pki: .* is not writable"):
        pki.ensure_pki(str(tmp_path / "new" / "pki"), REQUEST)
    (tmp_path / "ro").mkdir()
    with pytest.raises(pkispec.PKIError, match="path: .*/ro is not writable"):
        pki.ensure_pki(str(tmp_path / "ro"), REQUEST)
    assert pki.ensure_pki(str(tmp_path / "ro"), REQUEST, check_mode=True)["changed"] is True
    assert os.listdir(str(tmp_path / "ro")) == []


def test_status_and_list_report_broken_files(fresh):
    put(fresh, "apiserver.crt", b"hello\n")
    shutil.copy(os.path.join(fresh, "kubeconfig/admin.key"), os.path.join(fresh, "kubeconfig/scheduler.key"))
    put(fresh, "ca.key", b"garbage")
    entries = {e["name"]: e for e in pkistatus.pki_status(fresh)["entries"]}
    assert entries["apiserver"]["state"] == "unreadable"
    assert entries["kubeconfig/scheduler"]["state"] == "broken"
    assert entries["kubeconfig/scheduler"]["reason"].startswith("kubeconfig/scheduler.key does not match")
    assert entries["ca"]["state"] == "broken" and entries["ca"]["reason"] == "ca.key is not a PEM private key"
    assert entries["ca"]["days_left"] in (3649, 3650)
    listed = {e["name"]: e for e in pkistatus.inspect_pki(fresh)}
    assert listed["apiserver"] == {"name": "apiserver", "error": "apiserver.crt is not a PEM X.509 certificate"}
    assert listed["kubeconfig/scheduler"]["error"].startswith("kubeconfig/scheduler.key does not match")
    assert listed["ca"]["error"] == "ca.key is not a PEM private key"
    assert "error" not in listed["kubeconfig/admin"]


@pytest.mark.parametrize("change,message", [
    ({"kubelets": "w" * 5000}, r"kubelets: must be a list, not 'wwww.*\.\.\.$"),
    ({"etcd": [{"name": "x" * 5000}]}, r"etcd\[0\].name: 'xxx.*\.\.\. is not a valid DNS-1123 name"),
    ({"control_plane_endpoint": ["a"]}, r"control_plane_endpoint: must be a string"),
    ({1: "a", "b": 2}, r"unknown PKI option\(s\): 1, b;"),
    ({"service_cidr": "z" * 5000}, r"service_cidr: 'zzz.*\.\.\. is not a network in CIDR form"),
])
def test_bad_request_messages_are_bounded(tmp_path, change, message):
    with pytest.raises(pkispec.PKIError) as exc:
        pki.ensure_pki(str(tmp_path / "pki"), {**REQUEST, **change})
    assert re.search(message, str(exc.value)) and len(str(exc.value)) < 1000, str(exc.value)[:300]
