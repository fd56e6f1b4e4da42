# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the controller-side PKI backend (real keys and certificates, on tmp_path)."""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import stat
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import pki

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


def test_new_ca_reissues_everything_it_signed(fresh):
    os.unlink(os.path.join(fresh, "etcd", "ca.key"))
    result = pki.ensure_pki(fresh, REQUEST)
    assert result["created"] == ["etcd/ca"]
    renewed = {r["name"]: r["reason"] for r in result["renewed"]}
    assert set(renewed) == {"apiserver-etcd-client", "etcd/healthcheck-client"} | {
        "etcd/members/e%d/%s" % (i, k) for i in (1, 2, 3) for k in ("server", "peer")}
    assert set(renewed.values()) == {"CA changed"}
    cert(fresh, "etcd/members/e1/server").verify_directly_issued_by(cert(fresh, "etcd/ca"))


def test_foreign_ca_is_detected(fresh, tmp_path):
    other = str(tmp_path / "other")
    pki.ensure_pki(other, REQUEST)
    shutil.copy(os.path.join(other, "front-proxy-ca.crt"), os.path.join(fresh, "front-proxy-ca.crt"))
    shutil.copy(os.path.join(other, "front-proxy-ca.key"), os.path.join(fresh, "front-proxy-ca.key"))
    result = pki.ensure_pki(fresh, REQUEST)
    assert result["renewed"] == [{"name": "front-proxy-client", "reason": "CA changed"}]


def test_key_mismatch_and_missing_file(fresh):
    shutil.copy(os.path.join(fresh, "kubeconfig/admin.key"), os.path.join(fresh, "kubeconfig/scheduler.key"))
    os.unlink(os.path.join(fresh, "apiserver.crt"))
    result = pki.ensure_pki(fresh, REQUEST)
    assert result["renewed"] == [{"name": "kubeconfig/scheduler", "reason": "key mismatch"}]
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
    result = pki.ensure_pki(fresh, REQUEST, force=["kubeconfig/admin", "sa"])
    assert result["renewed"] == [{"name": "kubeconfig/admin", "reason": "forced"}, {"name": "sa", "reason": "forced"}]
    with pytest.raises(pki.PKIError, match="force: unknown certificate"):
        pki.ensure_pki(fresh, REQUEST, force=["nope"])


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


@pytest.mark.parametrize("change,message", [
    ({"key_type": "dsa"}, "key_type: 'dsa' is not one of ecdsa, rsa"),
    ({"service_cidr": "10.96.0.1/12"}, "service_cidr: '10.96.0.1/12' is not a network"),
    ({"etcd": [{"name": "e1", "addresses": ["e1.example"]}]}, r"etcd\[0\].addresses\[0\]: 'e1.example' is not an IP"),
    ({"etcd": [{"name": "E_1"}]}, r"etcd\[0\].name: 'E_1' is not a valid DNS-1123 name"),
    ({"etcd": [{"name": "e1"}, {"name": "e1"}]}, r"etcd\[1\].name: 'e1' appears twice"),
    ({"control_plane": [{"name": "cp1", "ip": "1.2.3.4"}]}, r"control_plane\[0\]: unknown key\(s\) ip"),
    ({"validity_days": 0}, "validity_days must be a positive integer"),
    ({"renew_before_days": 400}, "renew_before_days \\(400\\) must be smaller than validity_days"),
    ({"bogus": 1}, "unknown PKI option\\(s\\): bogus"),
    ({"kubelets": "w1"}, "kubelets must be a list"),
])
def test_bad_input_names_the_field_and_writes_nothing(tmp_path, change, message):
    path = str(tmp_path / "pki")
    with pytest.raises(pki.PKIError, match=message):
        pki.ensure_pki(path, dict(REQUEST, **change))
    assert not os.path.exists(path)


def test_ipv6_endpoint_and_service_ip():
    spec = pki.normalize(dict(REQUEST, control_plane_endpoint="[fd00::1]:6443", service_cidr="fd00:10::/108"))
    assert spec["endpoint_host"] == "fd00::1"
    assert spec["service_ip"] == ipaddress.ip_address("fd00:10::1")


def test_inspect_lists_every_certificate(fresh):
    entries = {e["name"]: e for e in pki.inspect_pki(fresh)}
    assert entries["apiserver"]["days_left"] in (364, 365)
    assert len(entries) == 3 + 5 + 6 + 4 + 3


def test_request_from_inventory():
    groups = {"control_plane": ["cp1"], "etcd": ["e1", "e2"], "workers": ["w1", "cp1"], "all": ["x"]}
    hostvars = {"cp1": {"ansible_host": "10.0.0.11"}, "e1": {"ansible_host": "e1.example.test"},
                "e2": {"ansible_host": "10.0.0.22", "mooring_address": "10.1.0.22"}, "w1": {}}
    req = pki.request_from_inventory(groups, hostvars)
    assert req == {
        "control_plane": [{"name": "cp1", "addresses": ["10.0.0.11"], "names": []}],
        "etcd": [{"name": "e1", "addresses": [], "names": ["e1.example.test"]},
                 {"name": "e2", "addresses": ["10.1.0.22"], "names": []}],
        "kubelets": ["cp1", "w1"],
    }
    assert pki.normalize(req)["etcd"][1]["addresses"] == [ipaddress.ip_address("10.1.0.22")]
