# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resolve module (formerly installer) on a kURL spec: what is not supported is a warning naming it (in the
run's output and the result), also when the spec is invalid; the lock covers what is mapped.

Runs real ansible-playbook (the action plugin on the controller).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
KURL = """\
apiVersion: kurl.sh/v1beta1
spec:
  kubernetes: {version: 1.35.x, HACluster: true}
  weave: {version: 2.8.1, podCIDR: 10.50.0.0/16}
  rook: {version: 1.12.x}
"""
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Resolve a kURL spec
      mooring.cluster.resolve: {src: "{{ src }}", lock: "{{ lock }}"}
      register: result
    - name: Show
      ansible.builtin.copy: {content: "{{ result | to_json }}", dest: "{{ out }}", mode: "0600"}
"""


def play(tmp_path, spec, module="mooring.cluster.resolve"):
    (tmp_path / "installer.yaml").write_text(spec)
    (tmp_path / "play.yml").write_text(textwrap.dedent(PLAY).replace("mooring.cluster.resolve:", module + ":"))
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="1")
    return subprocess.run([os.path.join(BIN, "ansible-playbook"), str(tmp_path / "play.yml"),
                           "-e", "src=%s" % (tmp_path / "installer.yaml"), "-e", "lock=%s" % (tmp_path / "lock.yaml"),
                           "-e", "out=%s" % (tmp_path / "result.json")],
                          capture_output=True, text=True, cwd=ROOT, check=False, env=env)


def test_kurl_warnings_in_the_run_and_the_result(tmp_path):
    run = play(tmp_path, KURL)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["unsupported"] == ["spec.kubernetes.HACluster", "spec.rook", "spec.weave"]
    assert [w.split(":")[0] for w in result["warnings"]] == result["unsupported"]
    assert sorted(result["versions"]) == ["kubernetes"]
    output = " ".join((run.stdout + run.stderr).split())
    for item in result["unsupported"]:
        assert "[WARNING]: %s: kURL" % item in output
    assert (tmp_path / "lock.yaml").exists()


def test_kurl_warnings_also_when_the_spec_is_invalid(tmp_path):
    run = play(tmp_path, KURL.replace("kubernetes: {version: 1.35.x, HACluster: true}", "kubernetes: latest"))
    assert run.returncode != 0
    output = " ".join((run.stdout + run.stderr).split())
    assert "[WARNING]: spec.rook: kURL add-on not supported by mooring.cluster; ignored" in output
    assert "spec.kubernetes: must be a mapping of the add-on's fields, not 'latest'" in output
    assert not (tmp_path / "lock.yaml").exists()


def test_the_old_module_name_still_resolves_with_a_deprecation(tmp_path):
    run = play(tmp_path, KURL, module="mooring.cluster.installer")
    assert run.returncode == 0, run.stdout + run.stderr
    output = " ".join((run.stdout + run.stderr).split())
    assert "mooring.cluster.installer is now mooring.cluster.resolve" in output
    # ansible-core 2.19 words it "removed from collection 'mooring.cluster' version 0.4.0",
    # 2.17 and 2.18 "removed from mooring.cluster in version 0.4.0".
    assert re.search(r"removed from (collection 'mooring\.cluster'|mooring\.cluster in) version 0\.4\.0", output), output
    assert sorted(json.loads((tmp_path / "result.json").read_text())["versions"]) == ["kubernetes"]
