# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes side of solutions as rendered (the molecule `solutions` scenario applies it to a real API server).

The objects the ``solutions`` role applies are rendered from Python and checked against
the Kubernetes OpenAPI schemas with kubernetes-validate (strict: unknown fields fail);
two environments' objects are shown never to collide. Applying them to a real API
server happens in the role wherever one exists; it cannot be done on this machine.
"""

from __future__ import annotations

import os
import sys

import kubernetes_validate
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import k8s
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import operatordeploy as solution_operatordeploy
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import example  # noqa: E402

K8S_VERSIONS = ["1.29.0", "1.31.0"]
PREFIX = "solutions.mooring.local"


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    d = tmp_path_factory.mktemp("archives")
    out = {}
    for v in example.VERSIONS:
        _path, out[v] = example.build(str(d), v, fmt="tar")
    return out


def available(summaries):
    return {v: s["images"] for v, s in summaries.items()}


def env_objects(env, version, summaries, description="test"):
    objs = k8s.render_environment(env, description, {"example": version})
    objs += k8s.render_solution(env, summaries[version], PREFIX, available(summaries))
    return objs


@pytest.mark.parametrize("kube", K8S_VERSIONS)
@pytest.mark.parametrize("version", ["1.0.0", "2.0.0"])
def test_rendered_objects_validate_against_kubernetes_schema(kube, version, summaries):
    objs = env_objects("staging", version, summaries) + k8s.render_crds(summaries[version])
    kinds = sorted(o["kind"] for o in objs)
    assert kinds == ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "ConfigMap", "CustomResourceDefinition",
                     "Deployment", "Namespace", "Role", "RoleBinding", "ServiceAccount"]
    for obj in objs:
        kubernetes_validate.validate(obj, kube, strict=True)


def test_environment_namespace_and_configmap(summaries):
    ns, cm = k8s.render_environment("staging", "Pre-production", {"example": "2.0.0", "other": "0.1.0"})
    assert ns["metadata"]["name"] == "staging"
    assert ns["metadata"]["labels"]["solutions.mooring.io/environment"] == "staging"
    assert ns["metadata"]["annotations"]["solutions.mooring.io/environment-description"] == "Pre-production"
    assert cm["metadata"] == {"name": "mooring-environment", "namespace": "staging",
                              "labels": {"app.kubernetes.io/managed-by": "mooring",
                                         "solutions.mooring.io/environment": "staging"}}
    assert cm["data"] == {"example": "2.0.0", "other": "0.1.0"}


def test_operator_deployment_uses_versioned_repository(summaries):
    objs = k8s.render_solution("prod", summaries["2.0.0"], "10.0.0.5:5000", available(summaries))
    dep = next(o for o in objs if o["kind"] == "Deployment")
    assert dep["metadata"]["namespace"] == "prod"
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == "10.0.0.5:5000/example-2.0.0/example-operator:2.0.0"
    assert c["imagePullPolicy"] == "IfNotPresent"
    assert {"name": "MOORING_OPERATOR_CONFIG", "value": "/etc/mooring/operator/operator.yaml"} in c["env"]
    vols = dep["spec"]["template"]["spec"]["volumes"]
    assert vols == [{"name": "mooring-operator-config", "configMap": {"name": "example-operator-config"}}]
    # The selector still matches the template after labelling.
    sel = dep["spec"]["selector"]["matchLabels"]
    assert all(dep["spec"]["template"]["metadata"]["labels"][k] == v for k, v in sel.items())


def test_operator_config_lists_images_per_version(summaries):
    objs = k8s.render_solution("prod", summaries["1.0.0"], PREFIX, available(summaries))
    cm = next(o for o in objs if o["metadata"]["name"] == "example-operator-config")
    cfg = yaml.safe_load(cm["data"]["operator.yaml"])
    assert cfg == {
        "apiVersion": "solutions.mooring.io/v1alpha1",
        "kind": "OperatorConfig",
        "solution": "example",
        "environment": "prod",
        "repositories": {
            "1.0.0": [{"endpoint": PREFIX + "/example-1.0.0",
                       "images": ["example-app:1.0.0", "example-operator:1.0.0"]}],
            "2.0.0": [{"endpoint": PREFIX + "/example-2.0.0",
                       "images": ["example-app:2.0.0", "example-operator:2.0.0"]}],
        },
    }


def test_cluster_rbac_renamed_and_bound_in_namespace(summaries):
    objs = k8s.render_solution("prod", summaries["1.0.0"], PREFIX, available(summaries))
    crole = next(o for o in objs if o["kind"] == "ClusterRole")
    crb = next(o for o in objs if o["kind"] == "ClusterRoleBinding")
    rb = next(o for o in objs if o["kind"] == "RoleBinding")
    assert crole["metadata"]["name"] == "solutions:prod:example-operator"
    assert "namespace" not in crole["metadata"]
    assert crb["roleRef"]["name"] == "solutions:prod:example-operator"
    assert crb["subjects"] == [{"kind": "ServiceAccount", "name": "example-operator", "namespace": "prod"}]
    assert rb["subjects"][0]["namespace"] == "prod" and rb["roleRef"]["name"] == "example-operator"


def test_two_environments_with_different_versions_never_collide(summaries):
    a = env_objects("staging", "1.0.0", summaries)
    b = env_objects("prod", "2.0.0", summaries)
    keys_a = {k8s.object_key(o) for o in a}
    keys_b = {k8s.object_key(o) for o in b}
    assert len(keys_a) == len(a) and len(keys_b) == len(b)
    assert keys_a.isdisjoint(keys_b)
    images_a = {c["image"] for o in a for c in solution_operatordeploy.containers_of(o)}
    images_b = {c["image"] for o in b for c in solution_operatordeploy.containers_of(o)}
    assert images_a == {PREFIX + "/example-1.0.0/example-operator:1.0.0"}
    assert images_b == {PREFIX + "/example-2.0.0/example-operator:2.0.0"}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.from_regex(r"\A[a-z][a-z0-9-]{0,18}[a-z0-9]\Z"), min_size=2, max_size=4, unique=True),
       st.lists(st.sampled_from(example.VERSIONS), min_size=4, max_size=4))
def test_property_distinct_environments_never_collide(summaries, envs, versions):
    seen = {}
    for env, version in zip(envs, versions):
        for obj in env_objects(env, version, summaries):
            key = k8s.object_key(obj)
            assert key not in seen, "%s collides between %s and %s" % (key, seen[key], env)
            seen[key] = env


def test_crds_belong_to_the_active_version_not_to_environments(summaries):
    crds = k8s.render_crds(summaries["2.0.0"])
    assert [c["metadata"]["name"] for c in crds] == ["examples.example.solutions.mooring.io"]
    assert crds[0]["metadata"]["labels"]["app.kubernetes.io/version"] == "2.0.0"
    assert all(o["kind"] != "CustomResourceDefinition" for o in env_objects("x", "2.0.0", summaries))


@pytest.mark.parametrize("env", ["Prod", "a_b", "-x", "", "x" * 41, None])
def test_bad_environment_name_is_refused(env, summaries):
    with pytest.raises(SolutionError, match="environment"):
        k8s.render_environment(env, "d", {})


@pytest.mark.parametrize(
    "current, action, version, expected",
    [
        ({}, "add", "1.0.0", {"example": "1.0.0"}),
        ({"example": "1.0.0"}, "add", "1.0.0", {"example": "1.0.0"}),
        ({"example": "1.0.0"}, "upgrade", "2.0.0", {"example": "2.0.0"}),
        ({"example": "2.0.0"}, "upgrade", "2.0.0", {"example": "2.0.0"}),
        ({"example": "2.0.0"}, "downgrade", "1.0.0", {"example": "1.0.0"}),
        ({"example": "2.0.0", "other": "1.0.0"}, "remove", None, {"other": "1.0.0"}),
        ({}, "remove", None, {}),
    ],
)
def test_plan_environment(current, action, version, expected):
    assert k8s.plan_environment(current, action, "example", version, imported=["1.0.0", "2.0.0"]) == expected


@pytest.mark.parametrize(
    "current, action, version, message",
    [
        ({"example": "1.0.0"}, "add", "2.0.0", "already runs version 1.0.0"),
        ({"example": "2.0.0"}, "upgrade", "1.0.0", "is not an upgrade; use downgrade"),
        ({"example": "1.0.0"}, "downgrade", "2.0.0", "is not a downgrade; use upgrade"),
        ({}, "upgrade", "2.0.0", "not in this environment; add it first"),
        ({}, "add", "3.0.0", "example 3.0.0 is not imported (imported: 1.0.0, 2.0.0)"),
        ({}, "add", "3.0", "not a semantic version"),
        ({}, "explode", "1.0.0", "choose add, upgrade, downgrade or remove"),
    ],
)
def test_plan_environment_refusals(current, action, version, message):
    with pytest.raises(SolutionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        k8s.plan_environment(current, action, "example", version, imported=["1.0.0", "2.0.0"])


@pytest.mark.parametrize(
    "lower, higher",
    [("1.0.0", "2.0.0"), ("1.9.0", "1.10.0"), ("1.0.0-alpha", "1.0.0"), ("1.0.0-alpha", "1.0.0-alpha.1"),
     ("1.0.0-alpha.1", "1.0.0-alpha.beta"), ("1.0.0-beta.2", "1.0.0-beta.11"), ("1.0.0-rc.1", "1.0.0")],
)
def test_semver_precedence(lower, higher):
    assert k8s.version_key(lower) < k8s.version_key(higher)
    assert k8s.version_key("1.0.0+build.5") == k8s.version_key("1.0.0")


def test_config_lifecycle():
    cfg = k8s.load_config("")
    a1 = {"path": "/var/lib/mooring/solutions/example-1.0.0.iso", "sha256": "a" * 64}
    cfg = k8s.update_config(cfg, "import", "example", "1.0.0", a1)
    assert k8s.update_config(cfg, "import", "example", "1.0.0", a1) == cfg  # idempotent
    cfg = k8s.update_config(cfg, "import", "example", "2.0.0", {"path": "/x/example-2.0.0.iso", "sha256": "b" * 64})
    assert k8s.imported_versions(cfg, "example") == ["1.0.0", "2.0.0"]
    cfg = k8s.update_config(cfg, "activate", "example", "2.0.0")
    assert cfg["active"] == {"example": "2.0.0"}
    with pytest.raises(SolutionError, match="is active: deactivate it before removing it"):
        k8s.update_config(cfg, "remove", "example", "2.0.0")
    with pytest.raises(SolutionError, match="already imported from a different archive"):
        k8s.update_config(cfg, "import", "example", "1.0.0", {"path": "/y", "sha256": "c" * 64})
    with pytest.raises(SolutionError, match="is not imported"):
        k8s.update_config(cfg, "activate", "example", "3.0.0")
    cfg = k8s.update_config(cfg, "deactivate", "example", "2.0.0")
    cfg = k8s.update_config(cfg, "remove", "example", "2.0.0")
    assert k8s.load_config(k8s.dump_config(cfg)) == cfg
    assert [a["version"] for a in cfg["archives"]] == ["1.0.0"] and cfg["active"] == {}


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "must be a mapping"),
    ("apiVersion: x\nkind: y\n", "apiVersion/kind must be"),
    ("apiVersion: solutions.mooring.io/v1alpha1\nkind: SolutionsConfiguration\narchives: [{name: x}]\n",
     r"archives\[0\]: needs name, version, path and sha256"),
    ("a: [", "not valid YAML"),
])
def test_config_refuses_malformed(text, message):
    with pytest.raises(SolutionError, match=message):
        k8s.load_config(text)


def _config(summaries, versions=("1.0.0", "2.0.0")):
    cfg = k8s.load_config("")
    for v in versions:
        cfg = k8s.update_config(cfg, "import", "example", v, {
            "path": "/a/example-%s.iso" % v, "sha256": "0" * 64,
            "images": ["%s:%s" % (i["name"], i["tag"]) for i in summaries[v]["images"]]})
    return k8s.dump_config(cfg)


def test_plan_changes_lifecycle(summaries):
    cfg = _config(summaries)
    created = k8s.plan_changes("staging", "create", description="Staging", config=cfg)
    assert [o["kind"] for o in created["apply"]] == ["Namespace", "ConfigMap"] and created["delete"] == []
    added = k8s.plan_changes("staging", "add", current={}, name="example", version="1.0.0",
                             solution=summaries["1.0.0"], config=cfg)
    assert added["solutions"] == {"example": "1.0.0"}
    assert added["apply"][-1]["metadata"]["name"] == "mooring-environment"
    assert added["apply"][-1]["data"] == {"example": "1.0.0"}
    # Applied one by one, each waited for: what the Deployment needs first, it next, the record last.
    order = ["ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap", "Deployment",
             "ConfigMap"]
    assert [o["kind"] for o in added["apply"]] == order
    opcfg = next(o for o in added["apply"] if o["metadata"]["name"] == "example-operator-config")
    assert sorted(yaml.safe_load(opcfg["data"]["operator.yaml"])["repositories"]) == ["1.0.0", "2.0.0"]
    up = k8s.plan_changes("staging", "upgrade", current={"example": "1.0.0"}, name="example", version="2.0.0",
                          solution=summaries["2.0.0"], previous=summaries["1.0.0"], config=cfg)
    assert up["solutions"] == {"example": "2.0.0"} and up["delete"] == []
    with pytest.raises(SolutionError, match="still runs example 2.0.0"):
        k8s.plan_changes("staging", "delete", current=up["solutions"], config=cfg)
    removed = k8s.plan_changes("staging", "remove", current={"example": "2.0.0"}, name="example",
                               solution=summaries["2.0.0"], config=cfg)
    assert removed["solutions"] == {} and removed["apply"][0]["data"] == {}
    assert {o["kind"] for o in removed["delete"]} >= {"Deployment", "ClusterRole", "ClusterRoleBinding"}
    assert removed["delete"][0]["kind"] == "Deployment" and removed["delete"][-1]["kind"] == "ServiceAccount"
    deleted = k8s.plan_changes("staging", "delete", current={}, config=cfg)
    assert [o["kind"] for o in deleted["delete"]] == ["Namespace"]


def test_plan_changes_refuses_mismatched_summary_and_unimported(summaries):
    cfg = _config(summaries, versions=("1.0.0",))
    with pytest.raises(SolutionError, match="the summary of example 2.0.0"):
        k8s.plan_changes("e", "add", name="example", version="2.0.0", solution=summaries["1.0.0"],
                         config=_config(summaries))
    with pytest.raises(SolutionError, match="example 2.0.0 is not imported"):
        k8s.plan_changes("e", "add", name="example", version="2.0.0", solution=summaries["2.0.0"], config=cfg)
