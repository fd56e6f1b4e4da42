# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``mooring pki status`` through the CLI dispatcher, on PKIs the PKI made (real files on tmp_path)
and on a short-lived certificate written with cryptography."""

from __future__ import annotations

import datetime
import json
import os

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki import pki, pkicert, pkispec
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli

NOW = datetime.datetime.now(datetime.timezone.utc)
REQUEST = {"etcd": [{"name": "e1", "addresses": ["10.0.0.1"]}], "kubelets": ["w1"]}


def read(path):
    with open(path, "rb") as f:
        return f.read()


def lines(out):
    return {line.split()[0]: line for line in out.splitlines() if line and not line.startswith("/")}


def test_fresh_pki_exit_0_every_line(tmp_path, capsys):
    d = str(tmp_path / "pki")
    pki.ensure_pki(d, REQUEST)
    assert cli.main(["pki", "status", "--dir", d]) == 0
    out = capsys.readouterr().out
    rows = lines(out)
    assert set(rows) == {cs.name for cs in pkispec.plan_specs(pkispec.normalize(REQUEST))} | {"sa"}
    assert "DUE" not in out
    assert rows["sa"].endswith("no expiry (key pair)")
    assert out.strip().endswith("0 due within 30 days")
    na = pkicert.x509.load_pem_x509_certificate(read(os.path.join(d, "apiserver.crt")))
    assert pkicert.not_after(na).strftime("%Y-%m-%dT%H:%M:%SZ") in rows["apiserver"]


def test_days_makes_leaves_due_exit_1(tmp_path, capsys):
    d = str(tmp_path / "pki")
    pki.ensure_pki(d, REQUEST)
    assert cli.main(["pki", "status", "--dir", d, "--days", "400"]) == 1
    rows = lines(capsys.readouterr().out)
    assert rows["apiserver"].endswith("DUE")
    assert not rows["ca"].endswith("DUE")


def test_old_pki_due_json(tmp_path, capsys):
    d = str(tmp_path / "pki")
    pki.ensure_pki(d, REQUEST, now=NOW - datetime.timedelta(days=340))
    assert cli.main(["pki", "status", "--dir", d, "--json"]) == 1
    status = json.loads(capsys.readouterr().out)
    assert "kubeconfig/admin" in status["due"] and "etcd/ca" not in status["due"]
    assert cli.main(["pki", "status", "--dir", d, "--days", "7"]) == 0
    capsys.readouterr()


def _short_lived(path, ca_crt, ca_key, hours):
    """A leaf signed by the PKI's CA that expires in ``hours`` (negative: already expired), with
    its key beside it (a key that does not match would make it BROKEN)."""
    ca = x509.load_pem_x509_certificate(read(ca_crt))
    signer = serialization.load_pem_private_key(read(ca_key), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
            .issuer_name(ca.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(NOW - datetime.timedelta(days=2))
            .not_valid_after(NOW + datetime.timedelta(hours=hours))
            .sign(signer, hashes.SHA256()))
    with open(path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(path[:-len(".crt")] + ".key", "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                  serialization.NoEncryption()))


@pytest.mark.parametrize("hours, mark", [(5, "DUE"), (-5, "EXPIRED")])
def test_short_lived_certificate(tmp_path, capsys, hours, mark):
    d = str(tmp_path / "pki")
    pki.ensure_pki(d, REQUEST)
    _short_lived(os.path.join(d, "apiserver.crt"), os.path.join(d, "ca.crt"), os.path.join(d, "ca.key"), hours)
    assert cli.main(["pki", "status", "--dir", d, "--days", "0"]) == (1 if mark == "EXPIRED" else 0)
    capsys.readouterr()
    assert cli.main(["pki", "status", "--dir", d, "--days", "1"]) == 1
    out = capsys.readouterr().out
    assert lines(out)["apiserver"].endswith(mark)
    assert "(apiserver)" in out


def test_missing_directory_one_error_line_exit_2(tmp_path, capsys):
    assert cli.main(["pki", "status", "--dir", str(tmp_path / "nope")]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    assert cap.err.count("\n") == 1 and cap.err.startswith("error: path: ") and "is not a directory" in cap.err


def test_unreadable_directory_exit_2(tmp_path, capsys, monkeypatch):
    # Tests run as root, who reads any directory: the permission answer is what a user without access gets.
    d = tmp_path / "pki"
    pki.ensure_pki(str(d), REQUEST)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if os.path.abspath(p) == str(d) else real_access(p, mode))
    assert cli.main(["pki", "status", "--dir", str(d)]) == 2
    assert "not readable" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["pki", "status"], ["pki", "status", "--dir", "x", "--days", "-3"],
                                  ["pki", "status", "--dir", "x", "--days", "soon"]])
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    capsys.readouterr()
