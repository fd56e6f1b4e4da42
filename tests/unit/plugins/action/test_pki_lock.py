# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pki action takes the API server's cluster values from the lock, so every playbook agrees.

Runs real ansible-playbook (the action plugin on the controller) against a real lock file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from cryptography import x509

from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)

SPEC = """
apiVersion: cluster.mooring.io/v1beta1
kind: Installer
metadata: {name: t}
spec:
  kubernetes: {version: 1.35.x, serviceCIDR: 10.100.0.0/16, controlPlaneEndpoint: api.example.test:6443, clusterDomain: corp.local}
  calico: {version: latest}
"""

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: PKI from the lock
      mooring.cluster.pki:
        path: "{{ pki }}"
        lock: "{{ lock }}"
        control_plane: [{name: cp1, addresses: [10.0.0.11]}]
      register: first
    - name: The same again, as another playbook would
      mooring.cluster.pki:
        path: "{{ pki }}"
        lock: "{{ lock }}"
        control_plane: [{name: cp1, addresses: [10.0.0.11]}]
      register: second
    - name: An explicit option wins over the lock
      mooring.cluster.pki:
        path: "{{ pki }}"
        lock: "{{ lock }}"
        service_cidr: 10.100.0.0/16
        control_plane: [{name: cp1, addresses: [10.0.0.11]}]
      register: third
    - ansible.builtin.assert:
        that: [first is changed, second is not changed, third is not changed]
"""


def _playbook(tmp_path, *extra):
    (tmp_path / "play.yml").write_text(textwrap.dedent(PLAY))
    return subprocess.run(
        [os.path.join(BIN, "ansible-playbook"), str(tmp_path / "play.yml"),
         "-e", "pki=%s" % (tmp_path / "pki"), "-e", "lock=%s" % (tmp_path / "lock.yaml"), *extra],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )


@pytest.fixture()
def lock(tmp_path):
    (tmp_path / "installer.yaml").write_text(textwrap.dedent(SPEC))
    # In process: the venv of the ansible-core test matrix has no `mooring` launcher (test_cli runs that).
    assert cli.main(["spec", "resolve", str(tmp_path / "installer.yaml"), "-o", str(tmp_path / "lock.yaml")]) == 0
    return tmp_path / "lock.yaml"


def test_apiserver_sans_come_from_the_lock(tmp_path, lock):
    run = _playbook(tmp_path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    cert = x509.load_pem_x509_certificate((tmp_path / "pki" / "apiserver.crt").read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    names = sans.get_values_for_type(x509.DNSName)
    addresses = [str(a) for a in sans.get_values_for_type(x509.IPAddress)]
    assert "api.example.test" in names
    assert "kubernetes.default.svc.corp.local" in names
    assert "10.100.0.1" in addresses and "10.96.0.1" not in addresses


def test_a_tampered_lock_is_refused(tmp_path, lock):
    lock.write_text(lock.read_text().replace("10.100.0.0/16", "10.101.0.0/16"))
    run = _playbook(tmp_path)
    assert run.returncode != 0
    assert "digest mismatch" in run.stdout
    assert not (tmp_path / "pki").exists()
