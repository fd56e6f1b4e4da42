# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The admin kubeconfig: written 0600 through common/fileio, idempotent, nothing written in check mode.

Runs real ansible-playbook (the action plugin on the controller) over a PKI made by the pki action.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: PKI
      mooring.cluster.pki:
        path: "{{ pki }}"
        control_plane_endpoint: 10.0.0.11:6443
        control_plane: [{name: cp1, addresses: [10.0.0.11]}]
    - name: Check mode writes nothing
      mooring.cluster.kubeadm_kubeconfig: {pki_dir: "{{ pki }}", server: "10.0.0.11:6443", dest: "{{ dest }}"}
      check_mode: true
      register: planned
    - name: Written
      mooring.cluster.kubeadm_kubeconfig: {pki_dir: "{{ pki }}", server: "10.0.0.11:6443", dest: "{{ dest }}"}
      register: first
    - name: Again
      mooring.cluster.kubeadm_kubeconfig: {pki_dir: "{{ pki }}", server: "10.0.0.11:6443", dest: "{{ dest }}"}
      register: second
    - name: Another server changes it
      mooring.cluster.kubeadm_kubeconfig: {pki_dir: "{{ pki }}", server: "10.0.0.12:6443", dest: "{{ dest }}"}
      register: third
    - ansible.builtin.assert:
        that: [planned is changed, first is changed, second is not changed, third is changed]
"""


def test_kubeconfig_is_written_once_0600_and_not_in_check_mode(tmp_path):
    (tmp_path / "play.yml").write_text(textwrap.dedent(PLAY))
    dest = tmp_path / "conf" / "admin.conf"
    run = subprocess.run([os.path.join(BIN, "ansible-playbook"), str(tmp_path / "play.yml"),
                          "-e", "pki=%s" % (tmp_path / "pki"), "-e", "dest=%s" % dest],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(dest.parent).st_mode) == 0o700
    text = dest.read_text()
    assert '"server": "https://10.0.0.12:6443"' in text and "client-key-data" in text
    assert not [p for p in os.listdir(dest.parent) if p != "admin.conf"], "no temporary file left behind"
