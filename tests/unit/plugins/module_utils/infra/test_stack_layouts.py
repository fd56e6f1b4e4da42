# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``mooring stack version`` on upstream-shaped stacks (tests/data/stacks): the seed layout of
SovereignCloudStack/cluster-stacks (``providers/<provider>/<name>/<1-NN>/`` with metadata.yaml) and
today's csctl layout (``csctl.yaml``, ``versions.yaml``, ``clusteraddon.yaml``, per-add-on charts)."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.infra import stackbump, stackrecords, stacks, stacktree, stackyaml
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
DATA = os.path.join(ROOT, "tests", "data", "stacks")
FIXTURES = {
    "seed": ("seed", "providers/openstack/alpha/1-28", "openstack-alpha-1-28"),
    "csctl": ("csctl", "providers/openstack/scs", "openstack-scs-1-32"),
}
# Which part owns each top-level entry of the fixtures (the test's own statement of the rules).
OWNER = {
    "node-images": "nodeImage", "node-images.yaml": "nodeImage",
    "cluster-addon": "clusterAddon", "cluster-addon-values.yaml": "clusterAddon",
    "clusteraddon.yaml": "clusterAddon", "versions.yaml": "clusterAddon",
    "cluster-class": "clusterClass", "topology-openstack.yaml": "clusterClass",
    "csctl.yaml": "clusterClass", "README.md": "clusterClass",
}


def source(layout):
    top, rel, _name = FIXTURES[layout]
    return os.path.join(DATA, top, rel)


def component_files(layout):
    root = source(layout)
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            if rel not in ("metadata.yaml", "release.yaml"):
                out.append((layout, rel))
    return sorted(out)


ALL_FILES = component_files("seed") + component_files("csctl")


@pytest.fixture
def copy_stack(tmp_path):
    def make(layout):
        top, rel, _name = FIXTURES[layout]
        dest = tmp_path / top / rel
        shutil.copytree(source(layout), str(dest))
        return dest
    return make


def run(*args):
    return cli.main(["stack", "version"] + [str(a) for a in args])


def carried_versions(stack_dir, name):
    """Every version the stack's files carry: metadata.yaml, the charts, ClusterClass literals."""
    found = {"metadata": None, "charts": {}, "classes": set()}
    meta = stack_dir / "metadata.yaml"
    if meta.exists():
        found["metadata"] = yaml.safe_load(meta.read_text())["versions"]
    literal = re.compile(re.escape(name) + r"-(v0-sha\.[a-z0-9]+|v[0-9]+)(?![A-Za-z0-9_])")
    for path in sorted(stack_dir.rglob("*")):
        if not path.is_file() or path.name == "release.yaml":
            continue
        rel = path.relative_to(stack_dir).as_posix()
        text = path.read_text()
        if rel == "cluster-class/Chart.yaml" or re.match(r"^cluster-addon/([^/]+/)?Chart\.yaml$", rel):
            found["charts"][rel] = str(yaml.safe_load(text)["version"])
        found["classes"].update(literal.findall(text))
    return found


def assert_all_say(stack_dir, name, versions):
    found = carried_versions(stack_dir, name)
    if found["metadata"] is not None:
        assert found["metadata"] == versions
    assert found["charts"], "the fixture has charts"
    for rel, value in found["charts"].items():
        want = versions["clusterStack"] if rel.startswith("cluster-class/") else versions["components"]["clusterAddon"]
        assert value == want, rel
    assert found["classes"] == {versions["clusterStack"]}


def edit_file(path):
    data = path.read_bytes()
    path.write_bytes(data + (b"" if data.endswith(b"\n") else b"\n") + b"# edited\n")


@pytest.mark.parametrize("layout", sorted(FIXTURES))
def test_fixture_as_shipped_is_recorded(layout):
    st = stacks.Stack(source(layout))
    assert st.layout == layout
    assert st.name == FIXTURES[layout][2]
    plan = stackbump.plan_versions(st)
    assert plan["due"] is False, plan["reasons"]
    assert plan["edits"] == {}
    assert run(source(layout), "--check") == 0


@pytest.mark.parametrize("layout", sorted(FIXTURES))
def test_first_run_records_the_shipped_release(copy_stack, layout, capsys):
    d = copy_stack(layout)
    shipped = (d / "release.yaml").read_text()
    (d / "release.yaml").unlink()
    # As upstream ships a stack (its release record is remote): accepted as it is ...
    assert run(d, "--check") == 0
    assert "is taken as the first release" in capsys.readouterr().out
    assert not (d / "release.yaml").exists()
    # ... and recorded by the first 'version'
    assert run(d) == 0
    assert (d / "release.yaml").read_text() == shipped
    assert run(d, "--check") == 0


@pytest.mark.parametrize("layout", sorted(FIXTURES))
def test_without_a_record_versions_out_of_step_are_reported_then_put_in_step(copy_stack, layout, capsys):
    # Upstream's sources do not keep chart versions in step (their build sets them): without a
    # record the stack passes as it is, and the first 'version' puts the files in step.
    d = copy_stack(layout)
    (d / "release.yaml").unlink()
    chart = d / "cluster-class" / "Chart.yaml"
    text = chart.read_text()
    assert re.search(r"(?m)^version: \"?v", text)
    chart.write_text(re.sub(r"(?m)^version: .*$", "version: v9", text))
    assert run(d, "--check") == 0
    # seed: metadata.yaml holds the version and the chart is out of step; csctl: the chart is
    # where the version is read, and the README's class name is out of step
    assert "carry other versions; 'mooring stack version' sets them to" in capsys.readouterr().out
    assert run(d) == 0
    capsys.readouterr()
    assert run(d, "--check") == 0
    assert "carry other versions" not in capsys.readouterr().out
    # with a record, a disagreement fails the check
    chart.write_text(re.sub(r"(?m)^version: .*$", "version: v8", chart.read_text()))
    assert run(d, "--check") == 1
    assert "bump is due" in capsys.readouterr().err


def test_find_stacks_sees_every_layout():
    found = stacks.find_stacks(DATA)
    assert [stacks.Stack(p).layout for p in found] == ["csctl", "seed"]
    assert [stacks.Stack(p).layout for p in stacks.find_stacks(os.path.join(ROOT, "stacks"))] == ["mooring", "mooring"]


@pytest.mark.parametrize("layout,rel", ALL_FILES, ids=["%s:%s" % f for f in ALL_FILES])
def test_every_file_bumps_its_part_and_the_stack(copy_stack, layout, rel):
    name = FIXTURES[layout][2]
    d = copy_stack(layout)
    before = stackbump.plan_versions(stacks.Stack(str(d)))["versions"]
    owner = OWNER[rel.split("/", 1)[0]]
    edit_file(d / rel)
    plan = stackbump.plan_versions(stacks.Stack(str(d)))
    assert plan["changed"] == [owner]
    expected = {
        "clusterStack": "v%d" % (int(before["clusterStack"][1:]) + 1),
        "kubernetes": before["kubernetes"],
        "components": {c: "v%d" % (int(v[1:]) + (c == owner)) for c, v in before["components"].items()},
    }
    assert plan["versions"] == expected
    assert run(d) == 0
    assert_all_say(d, name, expected)
    st = stacks.Stack(str(d))
    again = stackbump.plan_versions(st)
    assert again["due"] is False and again["edits"] == {}
    snapshot = {p: p.read_bytes() for p in d.rglob("*") if p.is_file()}
    assert run(d) == 0
    assert {p: p.read_bytes() for p in d.rglob("*") if p.is_file()} == snapshot


@pytest.mark.parametrize("layout", sorted(FIXTURES))
def test_chart_version_only_is_not_a_content_change(copy_stack, layout):
    d = copy_stack(layout)
    chart = d / "cluster-class" / "Chart.yaml"
    text = chart.read_text()
    old = yaml.safe_load(text)["version"]
    chart.write_text(re.sub(r"(?m)^version: (\"?)%s" % old, r"version: \g<1>v9", text))
    assert yaml.safe_load(chart.read_text())["version"] == "v9"
    plan = stackbump.plan_versions(stacks.Stack(str(d)))
    assert plan["changed"] == []
    assert plan["due"] is True  # the hand-edited version is put back, nothing is bumped
    assert plan["versions"]["clusterStack"] == old
    assert run(d) == 0
    assert chart.read_text() == text
    assert stackbump.plan_versions(stacks.Stack(str(d)))["due"] is False


def test_bump_keeps_comments_and_quotes(copy_stack):
    d = copy_stack("seed")
    (d / "metadata.yaml").write_text("# the versions of this stack\n" + (d / "metadata.yaml").read_text())
    edit_file(d / "cluster-class" / "values.yaml")
    assert run(d) == 0
    meta = (d / "metadata.yaml").read_text()
    assert meta.startswith("# the versions of this stack\n") and "clusterStack: v3\n" in meta
    assert 'version: "v3"\n' in (d / "cluster-class" / "Chart.yaml").read_text()  # quoting kept
    topology = (d / "topology-openstack.yaml").read_text()
    assert "class: openstack-alpha-1-28-v3\n" in topology and topology.startswith("# Example workload cluster")


def test_kubernetes_version_of_a_seed_stack_bumps_node_image_and_stack(copy_stack):
    d = copy_stack("seed")
    meta = d / "metadata.yaml"
    meta.write_text(meta.read_text().replace("v1.28.6", "v1.28.7"))
    plan = stackbump.plan_versions(stacks.Stack(str(d)))
    assert plan["changed"] == ["nodeImage", "clusterClass"]
    assert plan["versions"]["kubernetes"] == "v1.28.7"
    assert plan["versions"]["components"] == {"clusterAddon": "v2", "nodeImage": "v2"}


def test_seed_stack_in_the_wrong_minor_directory_is_refused(copy_stack):
    d = copy_stack("seed")
    meta = d / "metadata.yaml"
    meta.write_text(meta.read_text().replace("v1.28.6", "v1.29.1"))
    with pytest.raises(stacktree.StackError, match="does not match"):
        stacks.Stack(str(d))


def test_csctl_config_problems_are_named(copy_stack):
    d = copy_stack("csctl")
    cfg = d / "csctl.yaml"
    cfg.write_text(cfg.read_text().replace("v1.32.7", "1.32.7").replace("type: openstack", "type: Open_Stack"))
    with pytest.raises(stacktree.StackError) as exc:
        stacks.Stack(str(d))
    assert "config.kubernetesVersion: must be vX.Y.Z, not '1.32.7'" in str(exc.value)
    assert "config.provider.type: must be a lower-case DNS label, not 'Open_Stack'" in str(exc.value)
    assert str(cfg) in str(exc.value)


def go_dirhash_cleaned(files):
    """An independent rendering of Go's dirhash.Hash1 + csctl's clean(): the test's own oracle."""
    lines = "".join("%s  %s\n" % (hashlib.sha256(data).hexdigest(), rel) for rel, data in sorted(files))
    h1 = base64.b64encode(hashlib.sha256(lines.encode()).digest()).decode()
    return re.sub(r"[/+=]", "", h1).lower()[:7]


def test_csctl_dirhash_matches_the_go_algorithm():
    files = [("cluster-class/Chart.yaml", b"name: x\n"), ("csctl.yaml", b"a: 1\n"), ("cluster-addon/b", b"")]
    assert stackrecords.csctl_dirhash(files) == go_dirhash_cleaned(files)
    assert re.match(r"^[a-z0-9]{7}$", stackrecords.csctl_dirhash(files))


def test_csctl_hash_mode(copy_stack):
    """v0-sha.<hash> dev versions: chosen by writing one into cluster-class/Chart.yaml."""
    name = FIXTURES["csctl"][2]
    d = copy_stack("csctl")
    chart = d / "cluster-class" / "Chart.yaml"
    chart.write_text(chart.read_text().replace("version: v3", "version: v0-sha.0000000"))
    st = stacks.Stack(str(d))
    dev = st.dev_version()
    assert re.match(r"^v0-sha\.[a-z0-9]{7}$", dev)
    plan = stackbump.plan_versions(st)
    assert plan["mode"] == "hash" and plan["first"] is True
    assert plan["versions"] == {"clusterStack": dev, "kubernetes": "v1.32.7",
                                "components": {"clusterAddon": dev, "nodeImage": dev}}
    assert run(d) == 0
    assert_all_say(d, name, plan["versions"])
    assert run(d, "--check") == 0
    # an add-on edit: a new dev version for the stack and the add-ons, the node image keeps its own
    edit_file(d / "cluster-addon" / "cni" / "values.yaml")
    plan = stackbump.plan_versions(stacks.Stack(str(d)))
    new = stacks.Stack(str(d)).dev_version()
    assert plan["changed"] == ["clusterAddon"] and new != dev
    assert plan["versions"] == {"clusterStack": new, "kubernetes": "v1.32.7",
                                "components": {"clusterAddon": new, "nodeImage": dev}}
    assert run(d) == 0
    assert_all_say(d, name, plan["versions"])
    assert stacks.Stack(str(d)).dev_version() == new  # rewriting the versions does not move the hash
    assert run(d, "--check") == 0


def test_csctl_template_placeholders_are_left_to_csctl(copy_stack):
    d = copy_stack("csctl")
    chart = d / "cluster-class" / "Chart.yaml"
    chart.write_text(chart.read_text().replace("version: v3", "version: << .ClusterClassVersion >>"))
    plan = stackbump.plan_versions(stacks.Stack(str(d)))
    assert plan["changed"] == [] and str(chart) not in plan["edits"]


def test_unknown_top_level_file_counts_in_cluster_class(copy_stack):
    d = copy_stack("seed")
    (d / "create-cluster-class-archive.sh").write_text("#!/bin/sh\nhelm package cluster-class\n")
    plan = stackbump.plan_versions(stacks.Stack(str(d)))
    assert plan["changed"] == ["clusterClass"]
    assert plan["versions"]["components"] == {"clusterAddon": "v2", "nodeImage": "v1"}


@pytest.mark.parametrize("text,keys,value,expected", [
    ("a:\n  b: v1  # note\n  c: 2\n", ["a", "b"], "v2", "a:\n  b: v2  # note\n  c: 2\n"),
    ("version: 'v1'\ndependencies:\n- name: x\n  version: 1.0.0\n", ["version"], "v2",
     "version: 'v2'\ndependencies:\n- name: x\n  version: 1.0.0\n"),
    ("dependencies:\n  - name: x\n    version: 1.0.0\nversion: v1\n", ["version"], "v5",
     "dependencies:\n  - name: x\n    version: 1.0.0\nversion: v5\n"),
    ("x:\n  version: v1\n", ["version"], "v2", None),
])
def test_set_yaml_scalar(text, keys, value, expected):
    assert stackyaml.set_yaml_scalar(text, keys, value) == expected


def test_dev_version_equals_csctl_on_a_placeholder_tree(copy_stack):
    """With csctl's placeholders in place and no record or dot files, the hash is csctl's own."""
    d = copy_stack("csctl")
    (d / "release.yaml").unlink()
    (d / "cluster-class" / ".helmignore").unlink()
    for chart in [d / "cluster-class" / "Chart.yaml"] + sorted((d / "cluster-addon").glob("*/Chart.yaml")):
        mark = "<< .ClusterClassVersion >>" if chart.parent.name == "cluster-class" else "<< .ClusterAddonVersion >>"
        chart.write_text(re.sub(r"(?m)^version: .*$", "version: " + mark, chart.read_text()))
    readme = d / "README.md"
    readme.write_text(readme.read_text().replace("openstack-scs-1-32-v3", "openstack-scs-1-32-<< .ClusterClassVersion >>"))
    raw = [(p.relative_to(d).as_posix(), p.read_bytes()) for p in d.rglob("*") if p.is_file()]
    assert stacks.Stack(str(d)).dev_version() == "v0-sha." + go_dirhash_cleaned(raw)


def test_a_csctl_yaml_that_is_no_csctl_config_is_skipped_with_a_note(copy_stack, tmp_path, capsys):
    """At the root of a cluster-stacks checkout, an Ansible task file named csctl.yaml (a list) is not a
    stack: the scan names it once and checks the real stacks; a broken csctl config stays an error."""
    d = copy_stack("csctl")
    tasks = tmp_path / "playbooks" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "csctl.yaml").write_text("- name: Build the stack with csctl\n  ansible.builtin.command: csctl create .\n")
    notes = []
    assert stacks.find_stacks(str(tmp_path), notes) == [str(d)]
    assert notes == ["%s: not a csctl config (no 'config' mapping: a list); not a stack, skipped"
                     % stacktree.shown(str(tasks / "csctl.yaml"))]
    assert run(tmp_path, "--check") == 0
    assert "playbooks/tasks/csctl.yaml: not a csctl config" in capsys.readouterr().err
    (tasks / "csctl.yaml").write_text("config: [unclosed\n")
    assert stacks.find_stacks(str(tmp_path)) == sorted([str(d), str(tasks)])
    with pytest.raises(stacktree.StackError):
        stacks.Stack(str(tasks))
