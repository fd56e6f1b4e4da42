# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``mooring stack export``: every rendered object validated against the upstream CRD schemas
(tests/data/capi, see its README) of the Cluster API and CAPO releases the export targets."""

from __future__ import annotations

import copy
import os
import re
import shutil

import pytest
import yaml
from capi_schema import SCHEMAS, validate

from ansible_collections.mooring.cluster.plugins.module_utils.infra import stacks as s
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
STACKS = sorted(s.find_stacks(os.path.join(ROOT, "stacks")))
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_schemas_cover_every_kind():
    expected = {"ClusterClass", "KubeadmControlPlaneTemplate", "KubeadmConfigTemplate",
                "OpenStackClusterTemplate", "OpenStackMachineTemplate"}
    assert set(kind for _group, kind in SCHEMAS) == expected


@pytest.mark.parametrize("path", STACKS, ids=[os.path.relpath(p, ROOT) for p in STACKS])
def test_every_rendered_object_validates(path, catalog):
    st = s.Stack(path)
    objects, values = s.render_export(st, catalog)
    assert [o["kind"] for o in objects] == ["ClusterClass", "KubeadmControlPlaneTemplate", "KubeadmConfigTemplate",
                                            "OpenStackClusterTemplate", "OpenStackMachineTemplate",
                                            "OpenStackMachineTemplate"]
    for obj in objects:
        assert validate(obj) == [], obj["metadata"]["name"]
        name = obj["metadata"]["name"]
        assert DNS1123_SUBDOMAIN.match(name) and len(name) <= 63, name
        if obj["kind"] == "OpenStackMachineTemplate":  # the CRD's CEL rule, which jsonschema cannot run
            spec = obj["spec"]["template"]["spec"]
            assert spec.get("flavor") or spec.get("flavorID")
    # every reference in the ClusterClass points at an object of the export
    exported = {(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objects}
    cc = objects[0]["spec"]
    refs = [cc["controlPlane"]["ref"], cc["controlPlane"]["machineInfrastructure"]["ref"], cc["infrastructure"]["ref"]]
    for md in cc["workers"]["machineDeployments"]:
        refs += [md["template"]["bootstrap"]["ref"], md["template"]["infrastructure"]["ref"]]
    refs.append(objects[1]["spec"]["template"]["spec"]["machineTemplate"]["infrastructureRef"])
    for ref in refs:
        assert (ref["apiVersion"], ref["kind"], ref["name"]) in exported
    assert objects[1]["spec"]["template"]["spec"]["version"] == st.metadata["versions"]["kubernetes"]
    assert set(values["addons"]) == {"calico", "ingressNginx", "localPathProvisioner", "metricsServer"}
    assert values["clusterStack"]["version"] == st.metadata["versions"]["clusterStack"]


@pytest.mark.parametrize("mutate,where", [
    (lambda o: o["spec"]["template"]["spec"].update(flavour="typo"), "Additional properties"),
    (lambda o: o["spec"]["template"]["spec"].pop("image"), "'image' is a required property"),
    (lambda o: o["spec"]["template"]["spec"]["image"].update(id="not-a-uuid"), "too many properties"),
])
def test_validation_catches_bad_objects(mutate, where, catalog):
    objects, _values = s.render_export(s.Stack(STACKS[0]), catalog)
    bad = copy.deepcopy(objects[4])
    mutate(bad)
    assert any(where in e for e in validate(bad)), validate(bad)


def test_validation_catches_missing_required_kcp_version(catalog):
    objects, _values = s.render_export(s.Stack(STACKS[0]), catalog)
    bad = copy.deepcopy(objects[1])
    del bad["spec"]["template"]["spec"]["version"]
    assert any("'version' is a required property" in e for e in validate(bad))
    bad = copy.deepcopy(objects[3])
    bad["spec"]["template"]["spec"]["managedSubnets"].append({"cidr": "10.9.0.0/24"})
    assert any("is too long" in e for e in validate(bad))


@pytest.fixture
def stack_dir(tmp_path):
    d = tmp_path / "stacks" / "openstack" / "default" / "1-34"
    shutil.copytree(STACKS[0], str(d))
    return d


def test_bump_changes_every_name(stack_dir, catalog, tmp_path):
    before, _values = s.render_export(s.Stack(str(stack_dir)), catalog)
    values = stack_dir / "cluster-addon" / "values.yaml"
    values.write_text(values.read_text().replace("replicaCount: 2", "replicaCount: 3"))
    with pytest.raises(s.StackError, match="needs a version bump"):
        s.render_export(s.Stack(str(stack_dir)), catalog)  # never exported under the old names
    s.apply_versions(s.plan_versions(s.Stack(str(stack_dir))))
    after, values_after = s.render_export(s.Stack(str(stack_dir)), catalog)
    old = {o["metadata"]["name"] for o in before}
    new = {o["metadata"]["name"] for o in after}
    assert not old & new
    assert all(n.startswith("openstack-default-1-34-v2") for n in new)
    assert all(o["metadata"]["labels"]["clusterstack.x-k8s.io/version"] == "v2" for o in after)
    assert values_after["clusterStack"]["clusterAddonVersion"] == "v2"
    for obj in after:
        assert validate(obj) == []


def test_stacked_etcd_required(stack_dir, catalog):
    spec = stack_dir / "installer.yaml"
    spec.write_text(spec.read_text() + "  etcd:\n    version: 3.6.14\n    topology: external\n")
    s.apply_versions(s.plan_versions(s.Stack(str(stack_dir))))
    with pytest.raises(s.StackError, match="set it to 'stacked'"):
        s.render_export(s.Stack(str(stack_dir)), catalog)


def test_unknown_addon_values_refused(stack_dir, catalog):
    values = stack_dir / "cluster-addon" / "values.yaml"
    values.write_text(values.read_text() + "cilium: {}\n")
    s.apply_versions(s.plan_versions(s.Stack(str(stack_dir))))
    with pytest.raises(s.StackError, match="cilium not in the installer spec"):
        s.render_export(s.Stack(str(stack_dir)), catalog)


def test_cli_export_writes_files_idempotently(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["stack", "export", STACKS[0], "-o", str(out)]) == 0
    docs = list(yaml.safe_load_all((out / "clusterclass.yaml").read_text()))
    assert len(docs) == 6 and all(validate(d) == [] for d in docs)
    assert yaml.safe_load((out / "metadata.yaml").read_text())["apiVersion"] == s.METADATA_API_VERSION
    capsys.readouterr()
    assert cli.main(["stack", "export", STACKS[0], "-o", str(out)]) == 0
    assert "wrote" not in capsys.readouterr().out
