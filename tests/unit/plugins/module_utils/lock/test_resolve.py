# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one spec -> lock pipeline (lock/resolve.py) and the front ends that use it.

The CLI (``mooring spec resolve``), the ``installer`` action and the ``resolve_versions`` filter
must give the same lock (the filter: the same versions) for the same installer.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.infra import stacks
from ansible_collections.mooring.cluster.plugins.module_utils.lock import resolve as pipeline
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import CatalogError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import build_lock, dump_lock
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import SpecError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import Installer, parse_installer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
EXAMPLE = os.path.join(ROOT, "inventories", "example", "installer.yaml")
KURL = textwrap.dedent("""\
    apiVersion: cluster.kurl.sh/v1beta1
    kind: Installer
    metadata: {name: k}
    spec: {kubernetes: {version: 1.35.x}, calico: {version: latest}, rook: {version: 1.0.x}}
    """)


def example_text():
    with open(EXAMPLE, encoding="utf-8") as handle:
        return handle.read()


# --------------------------------------------------------------------------- reading
def test_read_installer_from_a_path_text_or_mapping_is_the_same_installer():
    text = example_text()
    from_path = pipeline.read_installer(path=EXAMPLE)
    from_text = pipeline.read_installer(text)
    from_mapping = pipeline.read_installer(yaml.safe_load(text))
    assert isinstance(from_path, Installer)
    assert from_path.hash == from_text.hash == from_mapping.hash == "cb7cb94"
    assert from_path.addons == from_text.addons == from_mapping.addons


def test_dash_reads_standard_input(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(example_text()))
    assert pipeline.read_installer(path="-").hash == "cb7cb94"


def test_files_are_read_as_utf8(tmp_path):
    path = tmp_path / "installer.yaml"
    path.write_bytes(("# d\u00e9mo, \u00fcber alles\n" + example_text()).encode("utf-8"))
    assert pipeline.read_installer(path=str(path)).hash == "cb7cb94"


def test_an_unreadable_file_is_the_callers_oserror(tmp_path):
    # Each front end words it: the CLI "cannot read", the action the OSError's text, a stack "missing".
    with pytest.raises(FileNotFoundError):
        pipeline.read_installer(path=str(tmp_path / "nope.yaml"))
    with pytest.raises(IsADirectoryError):
        pipeline.read_installer(path=str(tmp_path))


def test_an_invalid_spec_lists_every_problem():
    bad = "apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nspec: {kubernetes: {version: 1.31.z}, calico: {version: x}}\n"
    with pytest.raises(SpecError) as info:
        pipeline.read_installer(bad)
    assert len(info.value.problems) == 2


# --------------------------------------------------------------------------- resolving
def test_resolve_is_the_old_pipeline():
    expected = build_lock(parse_installer(example_text()), load_catalog(None, []), ("amd64",))
    assert pipeline.resolve(example_text()) == expected
    assert pipeline.resolve(pipeline.read_installer(path=EXAMPLE), load_catalog()) == expected
    assert dump_lock(pipeline.resolve(yaml.safe_load(example_text()), None, [])) == dump_lock(expected)


def test_architectures_default_to_amd64_and_are_kept_as_given():
    assert pipeline.resolve(example_text())["architectures"] == ["amd64"]
    assert pipeline.resolve(example_text(), architectures=["arm64", "amd64"])["architectures"] == ["amd64", "arm64"]
    # The action passes its option through: an empty list stays empty, as before.
    assert pipeline.resolve(example_text(), architectures=[])["architectures"] == []


def test_overlays_apply_to_the_default_catalog(tmp_path):
    overlay = tmp_path / "overlay.yml"
    overlay.write_text("name: calico\nversions:\n  - {version: 3.99.0, kubernetes: '>=1.30.0'}\n")
    assert pipeline.resolve(example_text(), overlays=[str(overlay)])["addons"]["calico"]["version"] == "3.99.0"
    assert pipeline.resolved_versions(example_text(), overlays=[str(overlay)])["calico"] == "3.99.0"
    with pytest.raises(CatalogError, match="catalog path /nonexistent does not exist"):
        pipeline.resolve(example_text(), overlays=["/nonexistent"])


def test_resolved_versions_are_the_locks_versions():
    lock = pipeline.resolve(example_text())
    assert pipeline.resolved_versions(example_text()) == {n: a["version"] for n, a in lock["addons"].items()}


def test_unsupported_kurl_addons_are_ignored_not_refused():
    with pytest.raises(CatalogError):
        pipeline.resolve(KURL, overlays=["/nonexistent"])
    lock = pipeline.resolve(KURL)
    assert sorted(lock["addons"]) == ["calico", "kubernetes"]
    assert lock["spec"]["rook"] == {"version": "1.0.x"}  # the spec as written, as hashed
    assert pipeline.resolved_versions(KURL) == {n: a["version"] for n, a in lock["addons"].items()}


def test_a_kurl_spec_with_an_unsupported_cni_resolves_without_one():
    lock = pipeline.resolve(KURL.replace("calico: {version: latest}", "weave: {version: 2.8.1, podCIDR: 10.50.0.0/16}"))
    assert sorted(lock["addons"]) == ["kubernetes"]
    assert lock["addons"]["kubernetes"]["options"]["cni"] == "none"
    assert lock["addons"]["kubernetes"]["options"]["podCIDR"] == "10.50.0.0/16"


# --------------------------------------------------------------------------- a stack's installer.yaml
def test_a_stacks_installer_errors_keep_their_words(tmp_path):
    missing = str(tmp_path / "installer.yaml")
    with pytest.raises(stacks.StackError) as info:
        stacks._load_installer(missing)
    assert info.value.problems == ["%s is missing" % missing]
    with open(missing, "w", encoding="utf-8") as handle:
        handle.write("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nspec: {calico: {version: x}}\n")
    with pytest.raises(stacks.StackError) as info:
        stacks._load_installer(missing)
    assert info.value.args[0] == "the stack's installer spec is invalid"
    assert info.value.problems and all(p.startswith(missing + ": ") for p in info.value.problems)
    assert stacks._load_installer(EXAMPLE).hash == "cb7cb94"


# --------------------------------------------------------------------------- the three front ends agree
PLAY = """
- hosts: localhost
  gather_facts: false
  connection: local
  tasks:
    - name: The action, from a file
      mooring.cluster.resolve:
        src: "{{ src }}"
        lock: "{{ out }}/action.lock.yaml"
        architectures: [arm64, amd64]
      register: from_file
    - name: The action, from a mapping
      mooring.cluster.resolve:
        definition: "{{ lookup('ansible.builtin.file', src) | from_yaml }}"
        architectures: [arm64, amd64]
      register: from_mapping
    - name: Everything the front ends gave
      ansible.builtin.copy:
        dest: "{{ out }}/results.json"
        content: "{{ {'file': from_file.lock, 'mapping': from_mapping.lock, 'versions': from_file.versions,
                      'filter': lookup('ansible.builtin.file', src) | mooring.cluster.resolve_versions} | to_json }}"
"""


@pytest.mark.slow
def test_cli_action_and_filter_give_the_same_lock(tmp_path):
    (tmp_path / "play.yml").write_text(PLAY)
    play = subprocess.run(
        [os.path.join(BIN, "ansible-playbook"), str(tmp_path / "play.yml"), "-e", "src=%s" % EXAMPLE,
         "-e", "out=%s" % tmp_path], capture_output=True, text=True, cwd=ROOT, check=False)
    assert play.returncode == 0, play.stdout[-3000:] + play.stderr[-3000:]
    code = "import sys; from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main; sys.exit(main())"
    cli = subprocess.run([sys.executable, "-c", code, "spec", "resolve", EXAMPLE, "--arch", "arm64", "--arch", "amd64"],
                         capture_output=True, text=True, check=False)
    assert cli.returncode == 0, cli.stderr

    expected = pipeline.resolve(example_text(), architectures=["arm64", "amd64"])
    results = json.loads((tmp_path / "results.json").read_text())
    assert cli.stdout == dump_lock(expected)
    assert (tmp_path / "action.lock.yaml").read_text(encoding="utf-8") == cli.stdout
    assert results["file"] == results["mapping"] == expected
    assert results["filter"] == results["versions"] == {n: a["version"] for n, a in expected["addons"].items()}
