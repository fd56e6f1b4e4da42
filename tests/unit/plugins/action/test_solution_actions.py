# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The solution_environment and solution_metalk8s_plan action plugins on canned objects (the `solutions`
scenario gives them a real API server's): show reads an environment of either flavour from the objects the role lists with
kubernetes.core.k8s_info, the other actions take the flavour it returned; solution_metalk8s_plan
plans a MetalK8s SolutionsConfiguration against mooring's record."""

from __future__ import annotations

import importlib

import pytest
from ansible.errors import AnsibleActionFail

ENV = importlib.import_module("ansible_collections.mooring.cluster.plugins.action.solution_environment").ActionModule
CONF = importlib.import_module("ansible_collections.mooring.cluster.plugins.action.solution_metalk8s_plan").ActionModule
MK_LABEL = "solutions.metalk8s.scality.com/environment"


# What the role's k8s_info loop returns, flattened: list items carry no kind.
OBJECTS = [
    {"metadata": {"name": "prod-a", "labels": {MK_LABEL: "prod"},
                  "annotations": {"solutions.metalk8s.scality.com/environment-description": "Production"}}},
    {"metadata": {"name": "prod-b", "labels": {MK_LABEL: "prod"}}},
    {"metadata": {"name": "metalk8s-environment", "namespace": "prod-b"}, "data": {"example": "1.0.0"}},
    {"metadata": {"name": "mooring-environment", "namespace": "staging"}, "data": {"example": "2.0.0"}},
]


def test_show_reads_a_metalk8s_environment_from_k8s_info_objects(action_plugin):
    out = action_plugin(ENV, {"environment": "prod", "action": "show", "objects": OBJECTS}).run(task_vars={})
    assert {k: out[k] for k in ("exists", "flavour", "namespace", "namespaces", "description", "solutions")} == {
        "exists": True, "flavour": "metalk8s", "namespace": "prod-b", "namespaces": ["prod-a", "prod-b"],
        "description": "Production", "solutions": {"example": "1.0.0"}}
    assert out["apply"] == [] and out["delete"] == [] and out["changed"] is False


def test_show_of_a_new_environment_is_mooring_s_and_create_renders_mooring_names(action_plugin):
    out = action_plugin(ENV, {"environment": "dev", "action": "show", "objects": OBJECTS}).run(task_vars={})
    assert (out["exists"], out["flavour"], out["namespace"]) == (False, "mooring", "dev")
    created = action_plugin(ENV, {"environment": "dev", "action": "create", "flavour": out["flavour"],
                            "namespace": out["namespace"]}).run(task_vars={})
    assert [o["metadata"]["name"] for o in created["apply"]] == ["dev", "mooring-environment"]


def test_delete_takes_the_flavour_and_namespaces_show_returned(action_plugin):
    out = action_plugin(ENV, {"environment": "prod", "action": "delete", "flavour": "metalk8s", "namespace": "prod-b",
                        "namespaces": ["prod-a", "prod-b"]}).run(task_vars={})
    assert [o["metadata"]["name"] for o in out["delete"]] == ["prod-a", "prod-b"]


@pytest.mark.parametrize("args, message", [
    ({"environment": "prod", "action": "create", "objects": OBJECTS}, "objects is read by action show only"),
    ({"environment": "prod", "action": "show", "objects": OBJECTS, "namespace": "prod-a"},
     "environment prod keeps its ConfigMap metalk8s-environment in namespace prod-b"),
    ({"environment": "prod", "action": "create", "flavour": "kurl"}, "value of flavour must be one of"),
])
def test_environment_action_refusals(args, message, action_plugin):
    with pytest.raises(AnsibleActionFail) as info:
        action_plugin(ENV, args).run(task_vars={})
    assert message in info.value.message


def test_solution_metalk8s_plan_plans_a_document(tmp_path, action_plugin):
    (tmp_path / "a.tar").write_bytes(b"")  # not an archive: its line names it
    (tmp_path / "c.yaml").write_text("apiVersion: solutions.metalk8s.scality.com/v1alpha1\n"
                                     "kind: SolutionsConfiguration\narchives: [a.tar, b.iso]\n")
    with pytest.raises(AnsibleActionFail) as info:
        action_plugin(CONF, {"path": str(tmp_path / "c.yaml")}).run(task_vars={})
    lines = info.value.message.splitlines()
    assert lines[0] == "%s: its archives cannot be read:" % (tmp_path / "c.yaml")
    assert lines[1:] == ["  - %s: not an ISO 9660 image or a tar archive" % (tmp_path / "a.tar"),
                         "  - %s: no such archive file" % (tmp_path / "b.iso")]
    (tmp_path / "c.yaml").write_text("apiVersion: solutions.metalk8s.scality.com/v1alpha1\n"
                                     "kind: SolutionsConfiguration\narchives: []\nactive: {}\n")
    out = action_plugin(CONF, {"path": str(tmp_path / "c.yaml")}).run(task_vars={})
    assert out == {"changed": False, "imports": [], "activate": {}, "active": {}, "archives": {}}
