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
from capi_schema import SCHEMAS, load_schemas, validate
from helm_support import helm_binary

from ansible_collections.mooring.cluster.plugins.module_utils.infra import stackbump, stackexport, stacks, stacktree
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
STACKS = sorted(stacks.find_stacks(os.path.join(ROOT, "stacks")))
CC_SCHEMAS = load_schemas("clusterclass-v1beta1-variables.yaml")  # the ClusterClass with variables and patches
KINDS = ["ClusterClass", "KubeadmConfigTemplate", "KubeadmControlPlaneTemplate", "OpenStackClusterTemplate",
         "OpenStackMachineTemplate", "OpenStackMachineTemplate"]
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def render(path, catalog):
    """The export of a stack with the real helm: (objects, add-on values); no warnings expected."""
    export = stackexport.render_export(stacks.Stack(str(path)), catalog, helm_binary())
    assert export.warnings == []
    return export.objects, export.addon_values


def of_kind(objects, kind):
    return [o for o in objects if o["kind"] == kind][0]


def test_schemas_cover_every_kind():
    expected = {"ClusterClass", "KubeadmControlPlaneTemplate", "KubeadmConfigTemplate",
                "OpenStackClusterTemplate", "OpenStackMachineTemplate"}
    assert set(kind for _group, kind in SCHEMAS) == expected


@pytest.mark.parametrize("path", STACKS, ids=[os.path.relpath(p, ROOT) for p in STACKS])
def test_every_rendered_object_validates(path, catalog):
    st = stacks.Stack(path)
    objects, values = render(path, catalog)
    assert sorted(o["kind"] for o in objects) == KINDS
    for obj in objects:
        assert validate(obj, CC_SCHEMAS) == [], obj["metadata"]["name"]
        name = obj["metadata"]["name"]
        assert DNS1123_SUBDOMAIN.match(name) and len(name) <= 63, name
        if obj["kind"] == "OpenStackMachineTemplate":  # the CRD's CEL rule, which jsonschema cannot run
            spec = obj["spec"]["template"]["spec"]
            assert spec.get("flavor") or spec.get("flavorID")
    # every reference in the ClusterClass points at an object of the export
    exported = {(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objects}
    cc = of_kind(objects, "ClusterClass")["spec"]
    kcp = of_kind(objects, "KubeadmControlPlaneTemplate")
    refs = [cc["controlPlane"]["ref"], cc["controlPlane"]["machineInfrastructure"]["ref"], cc["infrastructure"]["ref"]]
    for md in cc["workers"]["machineDeployments"]:
        refs += [md["template"]["bootstrap"]["ref"], md["template"]["infrastructure"]["ref"]]
    refs.append(kcp["spec"]["template"]["spec"]["machineTemplate"]["infrastructureRef"])
    for ref in refs:
        assert (ref["apiVersion"], ref["kind"], ref["name"]) in exported
    assert kcp["spec"]["template"]["spec"]["version"] == st.metadata["versions"]["kubernetes"]
    assert len(cc["variables"]) >= 6 and len(cc["patches"]) >= 6  # from the stack's chart
    assert set(values["addons"]) == {"calico", "ingressNginx", "localPathProvisioner", "metricsServer"}
    assert values["clusterStack"]["version"] == st.metadata["versions"]["clusterStack"]


@pytest.mark.parametrize("mutate,where", [
    (lambda o: o["spec"]["template"]["spec"].update(flavour="typo"), "Additional properties"),
    (lambda o: o["spec"]["template"]["spec"].pop("image"), "'image' is a required property"),
    (lambda o: o["spec"]["template"]["spec"]["image"].update(id="not-a-uuid"), "too many properties"),
])
def test_validation_catches_bad_objects(mutate, where, catalog):
    objects, _values = render(STACKS[0], catalog)
    bad = copy.deepcopy(of_kind(objects, "OpenStackMachineTemplate"))
    mutate(bad)
    assert any(where in e for e in validate(bad)), validate(bad)


def test_validation_catches_missing_required_kcp_version(catalog):
    objects, _values = render(STACKS[0], catalog)
    bad = copy.deepcopy(of_kind(objects, "KubeadmControlPlaneTemplate"))
    del bad["spec"]["template"]["spec"]["version"]
    assert any("'version' is a required property" in e for e in validate(bad))
    bad = copy.deepcopy(of_kind(objects, "OpenStackClusterTemplate"))
    bad["spec"]["template"]["spec"]["managedSubnets"].append({"cidr": "10.9.0.0/24"})
    assert any("is too long" in e for e in validate(bad))


@pytest.fixture
def stack_dir(tmp_path):
    d = tmp_path / "stacks" / "openstack" / "default" / "1-34"
    shutil.copytree(STACKS[0], str(d))
    return d


def test_bump_changes_every_name(stack_dir, catalog, tmp_path):
    before, _values = render(stack_dir, catalog)
    values = stack_dir / "cluster-addon" / "values.yaml"
    values.write_text(values.read_text().replace("replicaCount: 2", "replicaCount: 3"))
    with pytest.raises(stacktree.StackError, match="needs a version bump"):
        render(stack_dir, catalog)  # never exported under the old names
    stackbump.apply_versions(stackbump.plan_versions(stacks.Stack(str(stack_dir))))
    after, values_after = render(stack_dir, catalog)
    old = {o["metadata"]["name"] for o in before}
    new = {o["metadata"]["name"] for o in after}
    assert not old & new
    version = stackbump.plan_versions(stacks.Stack(str(stack_dir)))["versions"]
    assert all(n.startswith("openstack-default-1-34-%s" % version["clusterStack"]) for n in new)
    assert all(o["metadata"]["labels"]["clusterstack.x-k8s.io/version"] == version["clusterStack"] for o in after)
    assert values_after["clusterStack"]["clusterAddonVersion"] == version["components"]["clusterAddon"]
    assert "version: %s\n" % version["clusterStack"] in (stack_dir / "cluster-class" / "Chart.yaml").read_text()
    for obj in after:
        assert validate(obj, CC_SCHEMAS) == []


def test_stacked_etcd_required(stack_dir, catalog):
    spec = stack_dir / "installer.yaml"
    spec.write_text(spec.read_text() + "  etcd:\n    version: 3.6.14\n    topology: external\n")
    stackbump.apply_versions(stackbump.plan_versions(stacks.Stack(str(stack_dir))))
    with pytest.raises(stacktree.StackError, match="set it to 'stacked'"):
        render(stack_dir, catalog)


def test_unknown_addon_values_refused(stack_dir, catalog):
    values = stack_dir / "cluster-addon" / "values.yaml"
    values.write_text(values.read_text() + "cilium: {}\n")
    stackbump.apply_versions(stackbump.plan_versions(stacks.Stack(str(stack_dir))))
    with pytest.raises(stacktree.StackError, match="cilium: is not an add-on of the installer spec"):
        render(stack_dir, catalog)


def test_cli_export_writes_files_idempotently(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["stack", "export", STACKS[0], "-o", str(out), "--helm", helm_binary()]) == 0
    docs = list(yaml.safe_load_all((out / "clusterclass.yaml").read_text()))
    assert len(docs) == 6 and all(validate(d, CC_SCHEMAS) == [] for d in docs)
    assert yaml.safe_load((out / "metadata.yaml").read_text())["apiVersion"] == stacktree.METADATA_API_VERSION
    capsys.readouterr()
    assert cli.main(["stack", "export", STACKS[0], "-o", str(out), "--helm", helm_binary()]) == 0
    assert "wrote" not in capsys.readouterr().out


# --------------------------------------------------------------------------- upstream layouts
# Stacks in SovereignCloudStack's seed layout and today's csctl layout (tests/data/stacks, written
# after upstream's shapes): the export renders each stack's own cluster-class chart with the real
# helm (scripts/tools.sh), so variables and patches come from the stack.
UPSTREAM = sorted(stacks.find_stacks(os.path.join(ROOT, "tests", "data", "stacks")))


def copy_stack(path, tmp_path):
    """A copy that keeps the stack's last three directories (<provider>/<name>/<major-minor>)."""
    dest = tmp_path.joinpath("stacks", *str(path).split(os.sep)[-3:])
    shutil.copytree(str(path), str(dest))
    return dest


def export(path, out):
    code = cli.main(["stack", "export", str(path), "-o", str(out), "--helm", helm_binary()])
    assert code == 0
    with open(os.path.join(str(out), "clusterclass.yaml"), encoding="utf-8") as f:
        return [o for o in yaml.safe_load_all(f) if o]


def check_objects(objects, name, version):
    """CRD schemas, names, labels and every reference of the ClusterClass resolved."""
    for obj in objects:
        assert validate(obj, CC_SCHEMAS) == [], (obj["kind"], obj["metadata"]["name"])
        assert obj["metadata"]["name"].startswith("%s-%s" % (name, version))
    classes = [o for o in objects if o["kind"] == "ClusterClass"]
    assert [c["metadata"]["name"] for c in classes] == ["%s-%s" % (name, version)]
    cc = classes[0]["spec"]
    exported = {(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objects}
    refs = [cc["controlPlane"]["ref"], cc["controlPlane"]["machineInfrastructure"]["ref"], cc["infrastructure"]["ref"]]
    for md in cc["workers"]["machineDeployments"]:
        refs += [md["template"]["bootstrap"]["ref"], md["template"]["infrastructure"]["ref"]]
    for ref in refs:
        assert (ref["apiVersion"], ref["kind"], ref["name"]) in exported
    declared = {v["name"] for v in cc.get("variables", [])}
    used = {p["valueFrom"]["variable"].split(".")[0] for patch in cc.get("patches", []) for d in patch["definitions"]
            for p in d["jsonPatches"] if "valueFrom" in p and "variable" in p["valueFrom"]}
    assert used and used <= declared | {"builtin"}
    return cc


@pytest.mark.parametrize("path", UPSTREAM, ids=[os.path.relpath(p, ROOT) for p in UPSTREAM])
def test_upstream_layout_exports_its_own_chart(path, tmp_path, capsys):
    st = stacks.Stack(path)
    version = stackbump.plan_versions(st)["versions"]["clusterStack"]
    objects = export(path, tmp_path / "out")
    cc = check_objects(objects, st.name, version)
    assert len(cc["variables"]) >= 3 and len(cc["patches"]) >= 3
    assert sorted(os.listdir(str(tmp_path / "out"))) == ["clusterclass.yaml", "metadata.yaml"]
    meta = yaml.safe_load((tmp_path / "out" / "metadata.yaml").read_text())
    assert meta["versions"]["clusterStack"] == version
    # a second export writes nothing
    capsys.readouterr()
    export(path, tmp_path / "out")
    assert "wrote" not in capsys.readouterr().out


@pytest.mark.parametrize("path", UPSTREAM, ids=[os.path.relpath(p, ROOT) for p in UPSTREAM])
def test_a_bump_reaches_the_exported_names(path, tmp_path):
    dest = copy_stack(path, tmp_path)
    st = stacks.Stack(str(dest))
    before = stackbump.plan_versions(st)["versions"]["clusterStack"]
    values = dest / "cluster-class" / "values.yaml"
    values.write_text(values.read_text() + "\n# tuned\n")
    assert cli.main(["stack", "version", str(dest)]) == 0
    after = stackbump.plan_versions(stacks.Stack(str(dest)))["versions"]["clusterStack"]
    assert after != before
    objects = export(dest, tmp_path / "out")
    check_objects(objects, st.name, after)


def test_csctl_placeholders_are_filled_as_csctl_does(tmp_path):
    src = [p for p in UPSTREAM if stacks.Stack(p).layout == "csctl"][0]
    dest = copy_stack(src, tmp_path)
    chart = dest / "cluster-class" / "Chart.yaml"
    text = chart.read_text()
    chart.write_text(re.sub(r"(?m)^version: .*$", "version: << .ClusterClassVersion >>", text))
    st = stacks.Stack(str(dest))
    version = stackbump.plan_versions(st)["versions"]["clusterStack"]
    export = stackexport.render_export(st, None, helm_binary())
    check_objects(export.objects, st.name, version)
    assert export.warnings == []
    assert chart.read_text().endswith("version: << .ClusterClassVersion >>\n")  # the stack is not touched


def test_a_chart_that_names_the_class_otherwise_is_exported_with_a_warning(tmp_path, capsys):
    # early SCS prototypes named the ClusterClass from a value (testcluster_name)
    src = [p for p in UPSTREAM if stacks.Stack(p).layout == "seed"][0]
    dest = copy_stack(src, tmp_path)
    template = dest / "cluster-class" / "templates" / "cluster-class.yaml"
    text = template.read_text()
    assert "{{ .Release.Name }}-{{ .Chart.Version }}\n" in text
    template.write_text(text.replace("{{ .Release.Name }}-{{ .Chart.Version }}\n", "testcluster\n", 1))
    assert cli.main(["stack", "version", str(dest)]) == 0
    st = stacks.Stack(str(dest))
    export = stackexport.render_export(st, None, helm_binary())
    assert "ClusterClass" in [o["kind"] for o in export.objects]
    assert export.warnings == ["%s: the chart names its ClusterClass testcluster, not %s-%s (<stack name>-<clusterStack "
                               "version>): a new stack version will not give clusters a new class"
                               % (st.name, st.name, stackbump.plan_versions(st)["versions"]["clusterStack"])]
    capsys.readouterr()
    assert cli.main(["stack", "export", str(dest), "-o", str(tmp_path / "out"), "--helm", helm_binary()]) == 0
    assert capsys.readouterr().err == "warning: %s\n" % export.warnings[0]


def test_a_stack_without_a_record_exports_as_it_is(tmp_path):
    src = [p for p in UPSTREAM if stacks.Stack(p).layout == "seed"][0]
    dest = copy_stack(src, tmp_path)
    (dest / "release.yaml").unlink()
    chart = dest / "cluster-class" / "Chart.yaml"
    chart.write_text(re.sub(r"(?m)^version: .*$", "version: v1", chart.read_text()))  # as upstream's source may say
    st = stacks.Stack(str(dest))
    version = stackbump.plan_versions(st)["versions"]["clusterStack"]
    objects = export(dest, tmp_path / "out")
    check_objects(objects, st.name, version)  # named after metadata.yaml's version, not the chart's v1
    assert not (dest / "release.yaml").exists()
