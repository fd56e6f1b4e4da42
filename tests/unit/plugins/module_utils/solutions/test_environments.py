# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Environments in both flavours, mooring's and MetalK8s's, as read and rendered (the `solutions` scenario runs them).

The Namespace and ConfigMap objects are written as the API returns them from a list (no kind on
the items); what mooring renders for an environment MetalK8s made keeps MetalK8s's label,
annotation and ConfigMap, and validates against the Kubernetes OpenAPI schemas (kubernetes-validate,
strict). Applying them to a real API server happens in the role wherever one exists.
"""

from __future__ import annotations

import os
import sys

import kubernetes_validate
import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import k8s
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.environments import (
    environment_state,
    environments_from_objects,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import example  # noqa: E402

K8S_VERSIONS = ["1.29.0", "1.31.0"]
PREFIX = "solutions.mooring.local"
MK_LABEL = "solutions.metalk8s.scality.com/environment"
MK_DESCRIPTION = "solutions.metalk8s.scality.com/environment-description"
MO_LABEL = "solutions.mooring.io/environment"
MO_DESCRIPTION = "solutions.mooring.io/environment-description"


def namespace(name, labels=None, annotations=None):
    meta = {"name": name, "uid": "u-" + name, "resourceVersion": "1", "labels": dict(labels or {})}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def configmap(ns, name, data):
    return {"metadata": {"name": name, "namespace": ns, "uid": "c-" + ns}, "data": data}


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    d = tmp_path_factory.mktemp("archives")
    return {v: example.build(str(d), v, fmt="tar")[1] for v in example.VERSIONS}


def config_text(summaries):
    cfg = k8s.load_config("")
    for v in example.VERSIONS:
        cfg = k8s.update_config(cfg, "import", "example", v, {
            "path": "/a/example-%s.iso" % v, "sha256": "0" * 64,
            "images": ["%s:%s" % (i["name"], i["tag"]) for i in summaries[v]["images"]]})
    return k8s.dump_config(cfg)


# -- reading environments -----------------------------------------------------------------


def test_metalk8s_environment_in_one_namespace_is_read():
    envs = environments_from_objects(
        [namespace("staging", {MK_LABEL: "staging", "kubernetes.io/metadata.name": "staging"},
                   {MK_DESCRIPTION: "Pre-production"}),
         namespace("kube-system", {"kubernetes.io/metadata.name": "kube-system"})],
        [configmap("staging", "metalk8s-environment", {"example": "1.0.0"}),
         configmap("staging", "kube-root-ca.crt", {"ca.crt": "x"})])
    assert envs == {"staging": {"name": "staging", "flavour": "metalk8s", "namespaces": ["staging"],
                                "namespace": "staging", "description": "Pre-production",
                                "solutions": {"example": "1.0.0"}}}


def test_metalk8s_environment_across_two_namespaces_takes_the_first_configmap():
    nss = [namespace("prod-b", {MK_LABEL: "prod"}, {MK_DESCRIPTION: "Production"}),
           namespace("prod-a", {MK_LABEL: "prod"})]
    cms = [configmap("prod-b", "metalk8s-environment", {"example": "2.0.0"}),
           configmap("prod-a", "metalk8s-environment", {"example": "1.0.0", "other": "0.1.0-rc.1"}),
           configmap("elsewhere", "metalk8s-environment", {"example": "9.9.9"})]
    prod = environments_from_objects(nss, cms)["prod"]
    assert prod["namespaces"] == ["prod-a", "prod-b"]
    assert prod["namespace"] == "prod-a" and prod["solutions"] == {"example": "1.0.0", "other": "0.1.0-rc.1"}
    assert prod["description"] == "Production"  # the first namespace that has one
    only_b = environments_from_objects(nss, cms[:1])["prod"]
    assert only_b["namespace"] == "prod-b" and only_b["solutions"] == {"example": "2.0.0"}
    none = environments_from_objects(nss, [])["prod"]
    assert none["namespace"] == "prod-a" and none["solutions"] == {}


def test_mooring_and_metalk8s_environments_coexist():
    envs = environments_from_objects(
        [namespace("a", {MO_LABEL: "a"}, {MO_DESCRIPTION: "mooring's"}), namespace("b", {MK_LABEL: "b"})],
        [configmap("a", "mooring-environment", {"example": "2.0.0"}),
         configmap("a", "metalk8s-environment", {"ignored": "1.0.0"}),
         configmap("b", "mooring-environment", {"ignored": "1.0.0"}),
         configmap("b", "metalk8s-environment", None)])
    assert {k: (e["flavour"], e["solutions"], e["description"]) for k, e in envs.items()} == {
        "a": ("mooring", {"example": "2.0.0"}, "mooring's"), "b": ("metalk8s", {}, "")}


@pytest.mark.parametrize("maps, flavour", [
    (["metalk8s-environment"], "metalk8s"), (["mooring-environment"], "mooring"),
    ([], "mooring"), (["mooring-environment", "metalk8s-environment"], "mooring")])
def test_a_namespace_with_both_labels_for_one_environment_is_read_by_its_configmap(maps, flavour):
    envs = environments_from_objects([namespace("x", {MO_LABEL: "x", MK_LABEL: "x"})],
                                     [configmap("x", m, {"example": "1.0.0"}) for m in maps])
    assert envs["x"]["flavour"] == flavour


@pytest.mark.parametrize("nss, cms, message", [
    ([namespace("x", {MO_LABEL: "a", MK_LABEL: "b"})], [],
     "Namespace x: metadata.labels: must name one environment, not 'b' in %s and 'a' in %s" % (MK_LABEL, MO_LABEL)),
    ([namespace("x", {MO_LABEL: "env"}), namespace("y", {MK_LABEL: "env"})], [],
     "Namespace y: metadata.labels.'%s': must be env's own flavour of label (%s, as on namespace x), not metalk8s's"
     % (MK_LABEL, MO_LABEL)),
    ([namespace("x", {MK_LABEL: "Bad_Env"})], [],
     "Namespace x: metadata.labels.'%s': must be an environment name: an RFC 1123 DNS label" % MK_LABEL),
    ([namespace("x", {MK_LABEL: "x"})], [configmap("x", "metalk8s-environment", {"example": "v1"})],
     "ConfigMap x/metalk8s-environment: data.example: must be a semantic version (X.Y.Z[-pre][+build]), not 'v1'"),
    ([namespace("x", {MK_LABEL: "x"})], [configmap("x", "metalk8s-environment", {"Ex ample": "1.0.0"})],
     "ConfigMap x/metalk8s-environment: data.'Ex ample': must be keyed by a solution name"),
    ([namespace("x", {MK_LABEL: "x"})], [configmap("x", "metalk8s-environment", ["example"])],
     "ConfigMap x/metalk8s-environment: data: must be a mapping, not a list"),
    ([namespace("x", {MK_LABEL: "x"}, {MK_DESCRIPTION: ["a"]})], [],
     "Namespace x: metadata.annotations.'%s': must be a non-empty string, not a list" % MK_DESCRIPTION),
    ([{"metadata": {}}], [], "Namespace {'metadata': {}}: metadata.name: must be a non-empty string"),
])
def test_bad_environment_objects_are_refused_with_the_object_and_field(nss, cms, message):
    with pytest.raises(SolutionError) as info:
        environments_from_objects(nss, cms)
    assert len(str(info.value).splitlines()) == 1
    assert str(info.value).startswith(message), str(info.value)


def test_a_metalk8s_environment_may_have_a_longer_name_than_a_mooring_one():
    name = "e" * 63
    assert environments_from_objects([namespace(name, {MK_LABEL: name})], [])[name]["flavour"] == "metalk8s"
    with pytest.raises(SolutionError, match="must be an environment name: a name of at most 40"):
        environments_from_objects([namespace("x", {MO_LABEL: "e" * 41})], [])


def test_environment_state_new_is_mooring_existing_keeps_its_flavour_and_namespace():
    envs = environments_from_objects([namespace("prod-a", {MK_LABEL: "prod"}), namespace("prod-b", {MK_LABEL: "prod"})],
                                     [configmap("prod-b", "metalk8s-environment", {"example": "1.0.0"})])
    assert environment_state(envs, "dev", "ns-dev") == {
        "exists": False, "flavour": "mooring", "namespace": "ns-dev", "namespaces": [], "description": "",
        "solutions": {}}
    assert environment_state(envs, "prod")["namespace"] == "prod-b"
    assert environment_state(envs, "prod", "prod-b")["flavour"] == "metalk8s"
    with pytest.raises(SolutionError, match="keeps its ConfigMap metalk8s-environment in namespace prod-b "
                                            r"\(of prod-a, prod-b\): give that namespace or none, not prod-a"):
        environment_state(envs, "prod", "prod-a")
    with pytest.raises(SolutionError, match="already exists in prod-a, prod-b; mooring does not add namespace x"):
        environment_state(envs, "prod", "x")


# -- rendering in an environment's flavour --------------------------------------------------


def _env_labels(obj):
    return {k: v for k, v in (obj["metadata"].get("labels") or {}).items() if k in (MK_LABEL, MO_LABEL)}


def test_a_change_to_a_metalk8s_environment_keeps_metalk8s_names(summaries):
    cfg = config_text(summaries)
    added = k8s.plan_changes("prod", "add", namespace="prod-a", current={"other": "0.1.0"}, name="example",
                             version="1.0.0", solution=summaries["1.0.0"], config=cfg, flavour="metalk8s")
    cm = added["apply"][-1]
    assert cm["metadata"]["name"] == "metalk8s-environment" and cm["metadata"]["namespace"] == "prod-a"
    assert cm["data"] == {"example": "1.0.0", "other": "0.1.0"}
    assert all(_env_labels(o) == {MK_LABEL: "prod"} for o in added["apply"])
    dep = next(o for o in added["apply"] if o["kind"] == "Deployment")
    assert dep["spec"]["template"]["metadata"]["labels"][MK_LABEL] == "prod"
    created = k8s.plan_changes("prod", "create", namespace="prod-a", description="Production",
                               current={"example": "1.0.0"}, flavour="metalk8s")["apply"]
    assert created[0]["metadata"]["labels"][MK_LABEL] == "prod"
    assert created[0]["metadata"]["annotations"] == {MK_DESCRIPTION: "Production"}
    assert created[1]["metadata"]["name"] == "metalk8s-environment" and created[1]["data"] == {"example": "1.0.0"}
    up = k8s.plan_changes("prod", "upgrade", namespace="prod-a", current={"example": "1.0.0"}, name="example",
                          version="2.0.0", solution=summaries["2.0.0"], previous=summaries["1.0.0"], config=cfg,
                          flavour="metalk8s")
    assert up["apply"][-1]["metadata"]["name"] == "metalk8s-environment"
    removed = k8s.plan_changes("prod", "remove", namespace="prod-a", current={"example": "2.0.0"}, name="example",
                               solution=summaries["2.0.0"], config=cfg, flavour="metalk8s")
    assert all(_env_labels(o) == {MK_LABEL: "prod"} for o in removed["apply"] + removed["delete"])


def test_a_new_environment_is_mooring_s(summaries):
    state = environment_state(environments_from_objects([], []), "staging")
    objs = k8s.plan_changes("staging", "create", namespace=state["namespace"], flavour=state["flavour"])["apply"]
    assert objs[0]["metadata"]["labels"][MO_LABEL] == "staging" and MK_LABEL not in objs[0]["metadata"]["labels"]
    assert objs[0]["metadata"]["annotations"] == {MO_DESCRIPTION: ""}
    assert objs[1]["metadata"]["name"] == "mooring-environment"


def test_deleting_a_metalk8s_environment_deletes_each_of_its_namespaces():
    out = k8s.plan_changes("prod", "delete", namespace="prod-a", namespaces=["prod-a", "prod-b"], flavour="metalk8s")
    assert [(o["kind"], o["metadata"]["name"]) for o in out["delete"]] == [("Namespace", "prod-a"),
                                                                           ("Namespace", "prod-b")]


@pytest.mark.parametrize("kube", K8S_VERSIONS)
def test_metalk8s_flavoured_objects_validate_against_kubernetes_schema(kube, summaries):
    objs = k8s.render_environment("e" * 63, "MetalK8s's", {"example": "2.0.0"}, "n" * 63, "metalk8s")
    objs += k8s.render_solution("e" * 63, summaries["2.0.0"], PREFIX, {"2.0.0": summaries["2.0.0"]["images"]},
                                "n" * 63, "metalk8s")
    assert sorted(o["kind"] for o in objs) == ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "ConfigMap",
                                               "Deployment", "Namespace", "Role", "RoleBinding", "ServiceAccount"]
    for obj in objs:
        kubernetes_validate.validate(obj, kube, strict=True)


def test_unknown_flavour_is_refused():
    with pytest.raises(SolutionError, match="environment flavour 'kurl': choose metalk8s or mooring"):
        k8s.render_environment("x", "", {}, flavour="kurl")
