# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster-class Helm chart of each of our stacks (stacks/openstack/default/<minor>/cluster-class)
rendered with the real helm (``$MOORING_HELM``, else ``scripts/tools.sh helm``; no helm is a
failure, never a skip) and the values ``mooring stack export`` passes under ``mooring``:

- the kinds and names are those the Python generator rendered before the export rendered charts
  (kept in tests/data/stacks/python-export/, generated from ``cluster-class/openstack.yaml`` with
  the same settings), and so are metadata and specs, but for what the chart adds: the
  ClusterClass ``variables`` and ``patches`` and ``networking.dnsDomain``;
- every object validates against the CRD schemas (tests/data/capi; the ClusterClass against the
  release with variables and patches), every reference of the ClusterClass resolves;
- every patch names a declared variable, and applying the patches as Cluster API would (JSON
  patches on the selected templates) with the variables' defaults gives the templates back, and
  with other values valid objects that carry them.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
from collections import Counter

import jsonschema
import pytest
import yaml
from capi_schema import SCHEMAS, load_schemas, validate
from helm_support import helm_binary

from ansible_collections.mooring.cluster.plugins.module_utils.infra import helm as h
from ansible_collections.mooring.cluster.plugins.module_utils.infra import stacks
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
STACKS = [os.path.join(ROOT, "stacks", "openstack", "default", minor) for minor in ("1-34", "1-35")]
IDS = [os.path.relpath(p, ROOT) for p in STACKS]
PYTHON_EXPORT = os.path.join(ROOT, "tests", "data", "stacks", "python-export")
CC_SCHEMAS = load_schemas("clusterclass-v1beta1-variables.yaml")
KINDS = Counter({"ClusterClass": 1, "KubeadmControlPlaneTemplate": 1, "KubeadmConfigTemplate": 1,
                 "OpenStackClusterTemplate": 1, "OpenStackMachineTemplate": 2})
VARIABLES = {"controlPlaneFlavor", "workerFlavor", "imageName", "rootVolumeGiB", "dnsNameservers", "apiServerLoadBalancer"}


def _catalog():
    return load_catalog()


def chart_dir(path):
    return os.path.join(path, "cluster-class")


def chart_values(path):
    with open(os.path.join(chart_dir(path), "values.yaml"), encoding="utf-8") as f:
        return yaml.safe_load(f)


def mooring_values(stack):
    """What the export passes under ``mooring``: the stack's metadata, installer and node image."""
    versions = stack.metadata["versions"]
    kube = stack.installer.addons["kubernetes"]
    with open(os.path.join(stack.path, "node-image", "image.yaml"), encoding="utf-8") as f:
        node_image = yaml.safe_load(f)
    return {
        "stack": {"name": stack.name, "version": versions["clusterStack"], "kubernetes": versions["kubernetes"],
                  "components": dict(versions["components"])},
        "kubernetes": {"version": stack.spec_kubernetes(), "podCIDR": kube["podCIDR"], "serviceCIDR": kube["serviceCIDR"],
                       "clusterDomain": kube["clusterDomain"]},
        "nodeImage": node_image,
    }


def render(path, values=None):
    stack = stacks.Stack(path)
    return h.template(chart_dir(path), stack.name, {"mooring": mooring_values(stack)} if values is None else values, helm=helm_binary())


def python_objects(case, stack):
    """What the Python generator (the export before it rendered charts) gave for ``case``, kept in
    tests/data/stacks/python-export/ with ``@VERSION@`` for the stack version."""
    version = stack.metadata["versions"]["clusterStack"]
    with open(os.path.join(PYTHON_EXPORT, case + ".yaml"), encoding="utf-8") as f:
        text = f.read().replace("@VERSION@", version)
    return [o for o in yaml.safe_load_all(text) if o]


def keyed(objects):
    out = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    assert len(out) == len(objects), "two objects share a kind and name"
    return out


def class_refs(cc):
    """Every reference of a ClusterClass, with the patch selector role that matches it."""
    spec = cc["spec"]
    refs = [("controlPlane", spec["controlPlane"]["ref"]), ("controlPlane", spec["controlPlane"]["machineInfrastructure"]["ref"]),
            ("infrastructureCluster", spec["infrastructure"]["ref"])]
    for md in spec["workers"]["machineDeployments"]:
        refs += [(("machineDeploymentClass", md["class"]), md["template"]["bootstrap"]["ref"]),
                 (("machineDeploymentClass", md["class"]), md["template"]["infrastructure"]["ref"])]
    return refs


# ---- applying patches as Cluster API does (the subset the charts use)

_ENABLED_IF = re.compile(r"^\{\{ if (not )?\.([A-Za-z][A-Za-z0-9]*) \}\}true\{\{ end \}\}$")


def enabled(patch, variables):
    """The charts' enabledIf shapes, evaluated like Go templates; any other shape fails the test."""
    if "enabledIf" not in patch:
        return True
    m = _ENABLED_IF.match(patch["enabledIf"])
    assert m, "enabledIf %r is not a shape this test evaluates" % patch["enabledIf"]
    value = bool(variables[m.group(2)])
    return not value if m.group(1) else value


def _pointer(doc, path):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]
    for part in parts[:-1]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc, parts[-1]


def json_patch(doc, op):
    parent, key = _pointer(doc, op["path"])
    if op["op"] == "remove":
        assert key in parent, "remove of missing %s" % op["path"]
        del parent[key]
        return
    value = copy.deepcopy(op["value"]) if "value" in op else None
    if "valueFrom" in op:
        value = copy.deepcopy(op["_variables"][op["valueFrom"]["variable"]])
    if isinstance(parent, list):
        index = len(parent) if key == "-" else int(key)
        if op["op"] == "add":
            parent.insert(index, value)
        else:
            parent[index] = value
        return
    if op["op"] == "replace":
        assert key in parent, "replace of missing %s" % op["path"]
    else:
        assert op["op"] == "add", op
    parent[key] = value


def apply_patches(objects, variables):
    objects = copy.deepcopy(objects)
    by_key = keyed(objects)
    cc = next(o for o in objects if o["kind"] == "ClusterClass")
    roles = class_refs(cc)
    for patch in cc["spec"]["patches"]:
        if not enabled(patch, variables):
            continue
        for definition in patch["definitions"]:
            sel = definition["selector"]
            match = sel["matchResources"]
            wanted = set()
            if match.get("controlPlane"):
                wanted.add("controlPlane")
            if match.get("infrastructureCluster"):
                wanted.add("infrastructureCluster")
            for name in (match.get("machineDeploymentClass") or {}).get("names") or []:
                wanted.add(("machineDeploymentClass", name))
            targets = {(ref["kind"], ref["name"]) for role, ref in roles
                       if role in wanted and ref["apiVersion"] == sel["apiVersion"] and ref["kind"] == sel["kind"]}
            assert targets, "patch %s selects nothing" % patch["name"]
            for target in sorted(targets):
                for op in definition["jsonPatches"]:
                    assert "template" not in op.get("valueFrom", {}), "valueFrom.template is not simulated"
                    json_patch(by_key[target], dict(op, _variables=variables))
    return objects


def defaults(cc):
    return {v["name"]: v["schema"]["openAPIV3Schema"]["default"] for v in cc["spec"]["variables"]}


def check_variable_values(cc, variables):
    for var in cc["spec"]["variables"]:
        schema = var["schema"]["openAPIV3Schema"]
        errors = list(jsonschema.Draft7Validator(schema).iter_errors(variables[var["name"]]))
        assert not errors, (var["name"], [e.message for e in errors])


# ---- tests


@pytest.mark.parametrize("path", STACKS, ids=IDS)
def test_chart_is_the_stack_cluster_class(path):
    stack = stacks.Stack(path)
    assert not os.path.exists(os.path.join(chart_dir(path), "openstack.yaml"))
    with open(os.path.join(chart_dir(path), "Chart.yaml"), encoding="utf-8") as f:
        chart = yaml.safe_load(f)
    assert chart["apiVersion"] == "v2" and chart["type"] == "application" and chart.get("description")
    assert chart["name"] == "%s-cluster-class" % stack.name
    assert chart["version"] == stack.metadata["versions"]["clusterStack"]
    assert chart_values(path)["mooring"] == {}


@pytest.mark.parametrize("path", STACKS, ids=IDS)
def test_chart_renders_what_python_generates(path):
    stack = stacks.Stack(path)
    values = mooring_values(stack)
    chart = keyed(render(path))
    python = keyed(python_objects(os.path.basename(path), stack))
    assert Counter(kind for kind, _name in chart) == KINDS
    assert set(chart) == set(python)
    for key, obj in chart.items():
        want = python[key]
        assert obj["apiVersion"] == want["apiVersion"], key
        assert obj["metadata"] == want["metadata"], key
        spec = copy.deepcopy(obj["spec"])
        if obj["kind"] == "ClusterClass":  # what the chart adds
            assert spec.pop("variables") and spec.pop("patches")
        if obj["kind"] == "KubeadmControlPlaneTemplate":  # also added: kubeadm's default, from the installer spec
            networking = spec["template"]["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["networking"]
            assert networking.pop("dnsDomain") == values["kubernetes"]["clusterDomain"]
        assert spec == want["spec"], key


@pytest.mark.parametrize("path", STACKS, ids=IDS)
def test_every_rendered_object_validates_and_resolves(path):
    stack = stacks.Stack(path)
    objects = render(path)
    for obj in objects:
        schemas = CC_SCHEMAS if obj["kind"] == "ClusterClass" else SCHEMAS
        assert validate(obj, schemas) == [], obj["metadata"]["name"]
        labels = obj["metadata"]["labels"]
        assert labels["clusterstack.x-k8s.io/name"] == stack.name
        assert labels["clusterstack.x-k8s.io/version"] == stack.metadata["versions"]["clusterStack"]
        assert labels["app.kubernetes.io/managed-by"] == "mooring.cluster"
        if obj["kind"] == "OpenStackMachineTemplate":  # the CRD's CEL rule, which jsonschema cannot run
            assert obj["spec"]["template"]["spec"].get("flavor")
    rendered = {(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objects}
    cc = next(o for o in objects if o["kind"] == "ClusterClass")
    assert cc["metadata"]["name"] == "%s-%s" % (stack.name, stack.metadata["versions"]["clusterStack"])
    kcp = next(o for o in objects if o["kind"] == "KubeadmControlPlaneTemplate")
    refs = [ref for _role, ref in class_refs(cc)] + [kcp["spec"]["template"]["spec"]["machineTemplate"]["infrastructureRef"]]
    for ref in refs:
        assert (ref["apiVersion"], ref["kind"], ref["name"]) in rendered, ref
    assert kcp["spec"]["template"]["spec"]["version"] == stack.metadata["versions"]["kubernetes"]


@pytest.mark.parametrize("path", STACKS, ids=IDS)
def test_variables_and_patches(path):
    stack = stacks.Stack(path)
    values = chart_values(path)
    objects = render(path)
    cc = next(o for o in objects if o["kind"] == "ClusterClass")
    declared = {v["name"] for v in cc["spec"]["variables"]}
    assert declared >= VARIABLES
    used = set()
    for patch in cc["spec"]["patches"]:
        for definition in patch["definitions"]:
            for op in definition["jsonPatches"]:
                if "valueFrom" in op:
                    assert op["valueFrom"]["variable"] in declared, (patch["name"], op)
                    used.add(op["valueFrom"]["variable"])
        if "enabledIf" in patch:  # Cluster API's own Go templates pass through helm unrendered
            assert patch["enabledIf"].startswith("{{") and patch["enabledIf"].endswith("}}"), patch["enabledIf"]
    assert used == declared, "declared variables no patch applies: %s" % sorted(declared - used)
    # the defaults are the chart's values and the stack's node image
    assert defaults(cc) == {
        "controlPlaneFlavor": values["controlPlane"]["flavor"], "workerFlavor": values["workers"]["flavor"],
        "imageName": mooring_values(stack)["nodeImage"]["name"], "rootVolumeGiB": values["workers"]["rootVolumeGiB"],
        "dnsNameservers": values["dnsNameservers"], "apiServerLoadBalancer": values["apiServerLoadBalancer"],
    }
    check_variable_values(cc, defaults(cc))
    # the defaults applied as Cluster API would give the templates back
    assert apply_patches(objects, defaults(cc)) == objects


@pytest.mark.parametrize("path", STACKS, ids=IDS)
@pytest.mark.parametrize("overrides", [
    {"controlPlaneFlavor": "SCS-4V-16", "workerFlavor": "SCS-8V-32", "imageName": "my-image",
     "rootVolumeGiB": 0, "dnsNameservers": [], "apiServerLoadBalancer": False},
    {"rootVolumeGiB": 120, "dnsNameservers": ["1.1.1.1"], "apiServerLoadBalancer": True},
], ids=["other", "bigger-disk"])
def test_patches_apply_the_variables(path, overrides):
    objects = render(path)
    cc = next(o for o in objects if o["kind"] == "ClusterClass")
    variables = dict(defaults(cc), **overrides)
    check_variable_values(cc, variables)
    patched = keyed(apply_patches(objects, variables))
    for obj in patched.values():
        schemas = CC_SCHEMAS if obj["kind"] == "ClusterClass" else SCHEMAS
        assert validate(obj, schemas) == [], obj["metadata"]["name"]
    cp_ref = cc["spec"]["controlPlane"]["machineInfrastructure"]["ref"]
    md_ref = cc["spec"]["workers"]["machineDeployments"][0]["template"]["infrastructure"]["ref"]
    control_plane = patched[(cp_ref["kind"], cp_ref["name"])]["spec"]["template"]["spec"]
    worker = patched[(md_ref["kind"], md_ref["name"])]["spec"]["template"]["spec"]
    cluster_ref = cc["spec"]["infrastructure"]["ref"]
    cluster = patched[(cluster_ref["kind"], cluster_ref["name"])]["spec"]["template"]["spec"]
    assert control_plane["flavor"] == variables["controlPlaneFlavor"]
    assert worker["flavor"] == variables["workerFlavor"]
    assert control_plane["image"] == worker["image"] == {"filter": {"name": variables["imageName"]}}
    assert worker.get("rootVolume") == ({"sizeGiB": variables["rootVolumeGiB"]} if variables["rootVolumeGiB"] else None)
    assert "rootVolume" not in control_plane
    assert cluster["managedSubnets"][0]["dnsNameservers"] == variables["dnsNameservers"]
    assert cluster["apiServerLoadBalancer"] == {"enabled": variables["apiServerLoadBalancer"]}


@pytest.mark.parametrize("values,message", [
    ({}, "mooring.stack is required: 'mooring stack export' passes"),
    ({"mooring": {}}, "mooring.stack is required"),
    ({"mooring": {"stack": {"name": "openstack-default-1-34", "version": "v1"}}}, "mooring.kubernetes is required"),
], ids=["no-values", "empty", "no-kubernetes"])
def test_rendering_without_the_export_values_fails_clearly(values, message):
    with pytest.raises(h.HelmError, match=re.escape(message)):
        render(STACKS[0], values)


def test_optional_settings_render_as_python_does(tmp_path):
    """sshKeyName, tags, a control-plane root volume, no load balancer, no DNS servers, no worker
    root volume: the settings openstack.yaml allowed, in the chart as in the Python export."""
    src = STACKS[0]
    dest = tmp_path / "chart" / "stacks" / "openstack" / "default" / os.path.basename(src)
    shutil.copytree(src, str(dest))
    values_file = dest / "cluster-class" / "values.yaml"
    values = yaml.safe_load(values_file.read_text())
    values.update(sshKeyName="ops", tags=["team-a", 7], apiServerLoadBalancer=False, dnsNameservers=[],
                  allowAllInClusterTraffic=True)
    values["controlPlane"]["rootVolumeGiB"] = 30
    del values["workers"]["rootVolumeGiB"]
    values_file.write_text(yaml.safe_dump(values, sort_keys=False))
    objects = render(str(dest))
    chart = keyed(objects)
    python = keyed(python_objects("1-34-optional-settings", stacks.Stack(str(dest))))
    assert set(chart) == set(python)
    for key, obj in chart.items():
        spec = copy.deepcopy(obj["spec"])
        if obj["kind"] == "ClusterClass":
            spec.pop("variables")
            spec.pop("patches")
        if obj["kind"] == "KubeadmControlPlaneTemplate":
            spec["template"]["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["networking"].pop("dnsDomain")
        assert spec == python[key]["spec"], key
        schemas = CC_SCHEMAS if obj["kind"] == "ClusterClass" else SCHEMAS
        assert validate(obj, schemas) == [], key
    cc = next(o for o in objects if o["kind"] == "ClusterClass")
    assert "rootVolumeFromFlavor" not in {p["name"] for p in cc["spec"]["patches"]}  # nothing to remove
    # with the defaults, the patches give the templates back but for {enabled: false} and [] where
    # the template (like Python) leaves the load balancer and the DNS servers out; same meaning
    patched = keyed(apply_patches(objects, defaults(cc)))
    cluster = next(o for k, o in patched.items() if k[0] == "OpenStackClusterTemplate")["spec"]["template"]["spec"]
    assert cluster.pop("apiServerLoadBalancer") == {"enabled": False}
    assert cluster["managedSubnets"][0].pop("dnsNameservers") == []
    assert patched == chart
    patched = keyed(apply_patches(objects, dict(defaults(cc), rootVolumeGiB=40)))
    worker = next(o for k, o in patched.items() if k[1].endswith("-worker-machine"))
    assert worker["spec"]["template"]["spec"]["rootVolume"] == {"sizeGiB": 40}
    for obj in patched.values():
        assert validate(obj, CC_SCHEMAS if obj["kind"] == "ClusterClass" else SCHEMAS) == []
