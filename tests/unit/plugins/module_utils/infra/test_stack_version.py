# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster stack content hashes and version bumps (``mooring stack version``)."""

from __future__ import annotations

import os
import re
import shutil

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.mooring.cluster.plugins.module_utils.infra import stackbump, stackrecords, stacks, stacktree
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
SOURCE = os.path.join(ROOT, "stacks", "openstack", "default", "1-34")


@pytest.fixture
def stack_dir(tmp_path):
    d = tmp_path / "stacks" / "openstack" / "default" / "1-34"
    shutil.copytree(SOURCE, str(d))
    (d / "release.yaml").unlink()
    # the tests count from v1: the copy says v1 everywhere the stack version appears
    current = versions(d)["clusterStack"]
    for path in [d / "metadata.yaml"] + [p for p in (d / "cluster-class").rglob("*") if p.is_file()]:
        text = path.read_text().replace("clusterStack: %s" % current, "clusterStack: v1")
        text = text.replace("openstack-default-1-34-%s" % current, "openstack-default-1-34-v1")
        path.write_text(re.sub(r"(?m)^version: %s$" % current, "version: v1", text))
    return d


def released(stack_dir):
    plan = stackbump.plan_versions(stacks.Stack(str(stack_dir)))
    stackbump.apply_versions(plan)
    return stacks.Stack(str(stack_dir))


def versions(stack_dir):
    return yaml.safe_load((stack_dir / "metadata.yaml").read_text())["versions"]


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_repository_stacks_are_recorded():
    """CI's guard: every stack in the repository has its current content recorded."""
    for path in stacks.find_stacks(os.path.join(ROOT, "stacks")):
        assert stackbump.plan_versions(stacks.Stack(path))["due"] is False, path


def test_first_release_then_nothing_due(stack_dir):
    st = stacks.Stack(str(stack_dir))
    assert stackbump.plan_versions(st)["first"] is True
    # without a record the stack is taken as it is: nothing to commit yet
    assert stackbump.check_versions(st)["due"] is True and stackbump.unrecorded(stackbump.plan_versions(st)) is False
    st = released(stack_dir)
    assert stackbump.plan_versions(st)["due"] is False
    assert versions(stack_dir)["clusterStack"] == "v1"


def test_addon_values_change_bumps_cluster_addon_and_stack_only(stack_dir):
    released(stack_dir)
    edit(stack_dir / "cluster-addon" / "values.yaml", "replicaCount: 2", "replicaCount: 3")
    plan = stackbump.plan_versions(stacks.Stack(str(stack_dir)))
    assert plan["changed"] == ["clusterAddon"]
    assert plan["versions"]["clusterStack"] == "v2"
    assert plan["versions"]["components"] == {"clusterAddon": "v2", "nodeImage": "v1"}
    stackbump.apply_versions(plan)
    assert versions(stack_dir)["components"]["clusterAddon"] == "v2"
    assert stackbump.plan_versions(stacks.Stack(str(stack_dir)))["due"] is False


def test_node_image_change_bumps_node_image(stack_dir):
    released(stack_dir)
    edit(stack_dir / "node-image" / "image.yaml", "minDiskGiB: 20", "minDiskGiB: 30")
    plan = stackbump.plan_versions(stacks.Stack(str(stack_dir)))
    assert plan["changed"] == ["nodeImage"]
    assert plan["versions"]["components"] == {"clusterAddon": "v1", "nodeImage": "v2"}


def test_addon_version_in_spec_bumps_cluster_addon(stack_dir):
    released(stack_dir)
    edit(stack_dir / "installer.yaml", "version: 0.0.32", "version: 0.0.31")
    plan = stackbump.plan_versions(stacks.Stack(str(stack_dir)))
    assert plan["changed"] == ["clusterAddon", "clusterClass"]
    assert plan["versions"]["components"] == {"clusterAddon": "v2", "nodeImage": "v1"}
    assert plan["versions"]["clusterStack"] == "v2"


def test_kubernetes_patch_bumps_node_image_and_metadata(stack_dir):
    released(stack_dir)
    edit(stack_dir / "installer.yaml", "version: 1.34.11", "version: 1.34.10")
    edit(stack_dir / "node-image" / "image.yaml", "v1.34.11", "v1.34.10")
    with pytest.raises(stacktree.StackError, match="differs from the installer spec"):
        stacks.Stack(str(stack_dir))  # metadata still says 1.34.11: refused until `stack version` runs
    edit(stack_dir / "metadata.yaml", "v1.34.11", "v1.34.10")
    plan = stackbump.plan_versions(stacks.Stack(str(stack_dir)))
    assert plan["versions"]["kubernetes"] == "v1.34.10"
    assert plan["versions"]["components"]["nodeImage"] == "v2"


def test_cluster_class_change_bumps_stack_only(stack_dir):
    released(stack_dir)
    edit(stack_dir / "cluster-class" / "values.yaml", "flavor: SCS-4V-8", "flavor: SCS-8V-16")
    plan = stackbump.plan_versions(stacks.Stack(str(stack_dir)))
    assert plan["changed"] == ["clusterClass"]
    assert plan["versions"]["clusterStack"] == "v2"
    assert plan["versions"]["components"] == {"clusterAddon": "v1", "nodeImage": "v1"}


def test_noise_never_bumps(stack_dir):
    released(stack_dir)
    values = stack_dir / "cluster-addon" / "values.yaml"
    os.chmod(str(values), 0o600)
    os.utime(str(values), (1, 1))
    (stack_dir / "cluster-addon" / ".values.yaml.swp").write_text("editor noise")
    edit(stack_dir / "installer.yaml", "# The installer spec", "# Edited comment: the installer spec")
    edit(stack_dir / "metadata.yaml", "apiVersion", "# a comment\napiVersion")
    assert stackbump.plan_versions(stacks.Stack(str(stack_dir)))["due"] is False


def test_hand_bumped_metadata_is_put_back(stack_dir):
    released(stack_dir)
    edit(stack_dir / "metadata.yaml", "clusterStack: v1", "clusterStack: v7")
    plan = stackbump.plan_versions(stacks.Stack(str(stack_dir)))
    assert plan["due"] is True and plan["changed"] == []
    assert plan["versions"]["clusterStack"] == "v1"


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(alphabet="abcxyz", min_size=1, max_size=5), st.binary(max_size=64), min_size=1, max_size=6),
       st.randoms(use_true_random=False))
def test_property_tree_hash_independent_of_creation_order_and_mode(tmp_path_factory, files, rnd):
    hashes = []
    for attempt in range(2):
        root = tmp_path_factory.mktemp("tree")
        items = list(files.items())
        rnd.shuffle(items)
        for name, data in items:
            path = root / "sub" / name
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(data)
            os.chmod(str(path), 0o600 if attempt else 0o755)
            os.utime(str(path), (attempt * 1000, attempt * 1000))
        hashes.append(stackrecords.part_hash(str(root), {"b": 1, "a": [1, 2]}))
    assert hashes[0] == hashes[1]
    root = tmp_path_factory.mktemp("tree")
    for name, data in files.items():
        (root / name).write_bytes(data + b"!")
    assert stackrecords.part_hash(str(root), {"a": [1, 2], "b": 1}) != hashes[0]


def test_cli_check_exit_codes(stack_dir, capsys):
    assert cli.main(["stack", "version", str(stack_dir), "--check"]) == 0  # no record: taken as it is
    assert "is taken as the first release" in capsys.readouterr().out
    assert cli.main(["stack", "version", str(stack_dir)]) == 0
    assert cli.main(["stack", "version", str(stack_dir), "--check"]) == 0
    edit(stack_dir / "cluster-addon" / "values.yaml", "replicaCount: 2", "replicaCount: 5")
    assert cli.main(["stack", "version", str(stack_dir.parent.parent), "--check"]) == 1
    assert "bump is due" in capsys.readouterr().err


@pytest.mark.parametrize("old,new,why", [
    ("version: 0.8.0", "version: latest", "pins exact versions"),
    ("version: 1.34.11", "version: 1.34.x", "pins exact versions"),
])
def test_floating_versions_refused(stack_dir, old, new, why):
    edit(stack_dir / "installer.yaml", old, new)
    with pytest.raises(stacktree.StackError) as exc:
        stacks.Stack(str(stack_dir))
    assert why in str(exc.value)


def test_bad_metadata_named(stack_dir):
    edit(stack_dir / "metadata.yaml", "nodeImage: v1", "nodeImage: 1")
    with pytest.raises(stacktree.StackError, match=r"versions.components.nodeImage: must be v<N> \(v1, v2, ...\), not 1"):
        stacks.Stack(str(stack_dir))


EDITS = {
    "clusterAddon": ("cluster-addon/values.yaml", "replicaCount: 2", "replicaCount: 4"),
    "nodeImage": ("node-image/image.yaml", "minDiskGiB: 20", "minDiskGiB: 40"),
    "clusterClass": ("cluster-class/values.yaml", "nodeCIDR: 10.8.0.0/20", "nodeCIDR: 10.9.0.0/20"),
}


def bump(version, moved):
    return "v%d" % (int(version[1:]) + (1 if moved else 0))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sets(st.sampled_from(sorted(EDITS))), min_size=1, max_size=3))
def test_property_bumps_exactly_what_changed(tmp_path_factory, rounds):
    """Over several releases, a component's version moves by one exactly when its part was
    edited in that round, and the stack version exactly when anything was."""
    d = tmp_path_factory.mktemp("stk") / "stacks" / "openstack" / "default" / "1-34"
    shutil.copytree(SOURCE, str(d))
    expected = versions(d)
    flip = {}
    for edited in rounds:
        for part in edited:
            rel, a, b = EDITS[part]
            old, new = (b, a) if flip.get(part) else (a, b)
            edit(d / rel, old, new)
            flip[part] = not flip.get(part)
        plan = stackbump.plan_versions(stacks.Stack(str(d)))
        assert sorted(plan["changed"]) == sorted(edited)
        expected = {
            "clusterStack": bump(expected["clusterStack"], bool(edited)),
            "kubernetes": expected["kubernetes"],
            "components": {c: bump(expected["components"][c], c in edited) for c in stacktree.COMPONENTS},
        }
        assert plan["versions"] == expected
        stackbump.apply_versions(plan)
        assert stackbump.plan_versions(stacks.Stack(str(d)))["due"] is False
