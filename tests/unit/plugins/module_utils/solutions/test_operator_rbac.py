# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An operator's RBAC: a RoleBinding or ClusterRoleBinding that binds cluster-admin, or binds any
role to every user, every anonymous request or every service account, is refused at validation
(one line naming the archive member and the object) unless the operator names the archive in
``allow_broad_rbac``; the environment's rendering refuses it again unless its import allowed it.
A ``List`` of objects is refused (its items would be applied unchecked)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import build as solution_build
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import k8s
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.operatordeploy import broad_grant
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.validate import validate_archive
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import example  # noqa: E402
import metalk8s  # noqa: E402

RBAC = "rbac.authorization.k8s.io"


def binding(role, *subjects, kind="ClusterRoleBinding", role_kind="ClusterRole", name="everyone"):
    return {"apiVersion": RBAC + "/v1", "kind": kind, "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role},
            "subjects": [dict(s) for s in subjects]}


def group(name):
    return {"kind": "Group", "apiGroup": RBAC, "name": name}


def user(name):
    return {"kind": "User", "apiGroup": RBAC, "name": name}


SA = {"kind": "ServiceAccount", "name": "example-operator"}

BROAD = [
    ("admin-to-everyone", binding("cluster-admin", group("system:authenticated"), group("system:anonymous")),
     "binds the ClusterRole cluster-admin (every right on the cluster) to group system:authenticated (every signed-in user), "
     "group system:anonymous (anonymous requests)"),
    ("admin-to-own-sa", binding("cluster-admin", SA),
     "binds the ClusterRole cluster-admin (every right on the cluster) to ServiceAccount example-operator"),
    ("admin-in-a-namespace", binding("cluster-admin", SA, kind="RoleBinding"),
     "binds the ClusterRole cluster-admin (every right on the cluster) to ServiceAccount example-operator"),
    ("admin-no-subjects", dict(binding("cluster-admin"), subjects=None),
     "binds the ClusterRole cluster-admin (every right on the cluster) to no subject yet"),
    ("role-to-authenticated", binding("example-operator", group("system:authenticated")),
     "grants the ClusterRole example-operator to group system:authenticated (every signed-in user)"),
    ("role-to-unauthenticated", binding("view", group("system:unauthenticated"), kind="RoleBinding"),
     "grants the ClusterRole view to group system:unauthenticated (every anonymous request)"),
    ("role-to-anonymous-user", binding("example-operator", user("system:anonymous"), role_kind="Role", kind="RoleBinding"),
     "grants the Role example-operator to user system:anonymous (anonymous requests)"),
    ("role-to-every-service-account", binding("edit", SA, group("system:serviceaccounts")),
     "grants the ClusterRole edit to group system:serviceaccounts (every service account of the cluster)"),
]

NARROW = [
    ("own-role-to-own-sa", binding("example-operator", SA)),
    ("a-role-named-cluster-admin", binding("cluster-admin", SA, kind="RoleBinding", role_kind="Role")),
    ("group-with-a-space", binding("view", group("system:authenticated "))),
    ("group-lower-case-kind", binding("view", {"kind": "group", "name": "system:authenticated"})),
    ("a-namespace-s-service-accounts", binding("view", group("system:serviceaccounts:team"))),
    ("subjects-not-a-list", dict(binding("view"), subjects={"kind": "Group", "name": "system:authenticated"})),
    ("names-not-strings", dict(binding("view"), roleRef={"kind": "ClusterRole", "name": ["cluster-admin"]},
                               subjects=[{"kind": "Group", "name": ["system:authenticated"]}, "x", None])),
    ("a-role", {"apiVersion": RBAC + "/v1", "kind": "ClusterRole", "metadata": {"name": "cluster-admin"}, "rules": []}),
]


@pytest.mark.parametrize("doc, why", [c[1:] for c in BROAD], ids=[c[0] for c in BROAD])
def test_a_broad_grant_is_named(doc, why):
    assert broad_grant(doc) == why


@pytest.mark.parametrize("doc", [c[1] for c in NARROW], ids=[c[0] for c in NARROW])
def test_a_narrow_grant_is_not(doc):
    assert broad_grant(doc) is None


def test_many_subjects_are_counted():
    doc = binding("cluster-admin", *[dict(SA, name="sa%d" % i) for i in range(9)])
    assert broad_grant(doc).endswith("ServiceAccount sa4 and 4 more")


# --------------------------------------------------------------------------- mooring archives
@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return example.write_source(str(tmp_path_factory.mktemp("src") / "example"), "1.0.0")


def archive(pristine, tmp_path, *docs, fname="extra-rbac.yaml"):
    """The example archive (built with ``mooring solution build``, which warns) with ``docs`` in operator/deploy/FNAME."""
    src = str(tmp_path / "src")
    shutil.copytree(pristine, src)
    with open(os.path.join(src, "operator", "deploy", fname), "w") as f:
        yaml.safe_dump_all(list(docs), f)
    out = str(tmp_path / "example.tar")
    built = solution_build.build_archive(src, out)
    return out, built


@pytest.mark.parametrize("doc, why", [c[1:] for c in BROAD], ids=[c[0] for c in BROAD])
def test_validation_refuses_a_broad_grant_in_one_line(pristine, tmp_path, doc, why, capsys):
    role = {"apiVersion": RBAC + "/v1", "kind": "Role", "metadata": {"name": "r"}, "rules": []}
    out, _built = archive(pristine, tmp_path, role, doc)
    with pytest.raises(SolutionError) as info:
        validate_archive(out)
    assert info.value.problems == [
        "%s: operator/deploy/extra-rbac.yaml: document 2 (%s everyone): %s; refused: a solution may not grant that unless "
        "the operator allows it for this archive (allow_broad_rbac: [example-1.0.0], or --allow-broad-rbac example-1.0.0)"
        % (out, doc["kind"], why)]
    assert cli.main(["solution", "validate", out]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "operator/deploy/extra-rbac.yaml: document 2 (%s everyone)" % doc["kind"] in err


def test_the_operator_may_allow_it_for_that_archive_only(pristine, tmp_path, capsys):
    doc = binding("cluster-admin", group("system:authenticated"))
    out, built = archive(pristine, tmp_path, doc)
    assert built["broad_rbac"] and any("allowed for this archive" in w for w in built["warnings"])  # the build warns
    for other in ([], ["example-2.0.0"], ["example"], ["other-1.0.0"]):
        with pytest.raises(SolutionError, match="binds the ClusterRole cluster-admin"):
            validate_archive(out, allow_broad_rbac=other)
    s = validate_archive(out, allow_broad_rbac=["other-1.0.0", "example-1.0.0"])
    assert s["broad_rbac"] == ["operator/deploy/extra-rbac.yaml: document 1 (ClusterRoleBinding everyone): "
                               + broad_grant(doc)]
    assert "%s; allowed for this archive (allow_broad_rbac)" % s["broad_rbac"][0] in s["warnings"]
    assert cli.main(["solution", "validate", out, "--allow-broad-rbac", "example-1.0.0"]) == 0
    captured = capsys.readouterr()
    assert "valid solution example 1.0.0" in captured.out and "warning: operator/deploy/extra-rbac.yaml" in captured.err
    assert validate_archive(archive(pristine, tmp_path / "narrow", binding("view", SA))[0])["broad_rbac"] == []


@pytest.mark.parametrize("value", ["example-1.0.0", [5], [""], {"example": "1.0.0"}, ["a\nb"]])
def test_allow_broad_rbac_is_a_list_of_names(pristine, tmp_path, value):
    out = str(tmp_path / "none.tar")
    with pytest.raises(SolutionError, match="allow_broad_rbac: must be a list of archives named <name>-<version>"):
        validate_archive(out, allow_broad_rbac=value)


@pytest.mark.parametrize("kind", ["List", "ClusterRoleBindingList", "RoleBindingList"])
def test_a_list_of_objects_is_refused(pristine, tmp_path, kind):
    doc = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "hidden"},
           "items": [binding("cluster-admin", group("system:authenticated"))]}
    with pytest.raises(SolutionError) as info:
        solution_build.build_archive(archive_src(pristine, tmp_path, doc), str(tmp_path / "x.tar"))
    assert "operator/deploy/extra-rbac.yaml: document 1: %r: a list of objects is not allowed in operator manifests" % kind \
        in "\n".join(info.value.problems)
    assert not os.path.exists(str(tmp_path / "x.tar"))


def archive_src(pristine, tmp_path, *docs):
    src = str(tmp_path / "src")
    shutil.copytree(pristine, src)
    with open(os.path.join(src, "operator", "deploy", "extra-rbac.yaml"), "w") as f:
        yaml.safe_dump_all(list(docs), f)
    return src


# --------------------------------------------------------------------------- rendering an environment
def summary_with(doc, broad_rbac=()):
    s = {"name": "example", "version": "1.0.0", "flavour": "mooring", "broad_rbac": list(broad_rbac),
         "operator": {"image": {"name": "example-operator", "tag": "1.0.0"}, "manifests": [doc]}}
    return s


def test_rendering_refuses_a_broad_grant_its_import_did_not_allow():
    doc = binding("cluster-admin", group("system:authenticated"))
    with pytest.raises(SolutionError, match=r"ClusterRoleBinding everyone: binds the ClusterRole cluster-admin .*; not allowed "
                                            r"when example 1.0.0 was imported: import it again with allow_broad_rbac: "
                                            r"\[example-1.0.0\]"):
        k8s.render_solution("prod", summary_with(doc), "p", {})
    allowed = summary_with(doc, ["operator/deploy/x.yaml: document 1 (ClusterRoleBinding everyone): ..."])
    assert [o["kind"] for o in k8s.render_solution("prod", allowed, "p", {})] == ["ClusterRoleBinding", "ConfigMap"]
    # removing it renders it to delete it: never refused
    assert [o["kind"] for o in k8s.render_solution("prod", summary_with(doc), "p", {}, applying=False)] == [
        "ClusterRoleBinding", "ConfigMap"]
    with pytest.raises(SolutionError, match="List hidden: lists of objects are not supported"):
        k8s.render_solution("prod", summary_with({"apiVersion": "v1", "kind": "List", "metadata": {"name": "hidden"}}), "p", {})


# --------------------------------------------------------------------------- MetalK8s ISOs
def test_a_metalk8s_iso_trusted_by_its_sha256sum_may_not_grant_cluster_admin_to_everyone(built_iso, tmp_path, capsys):
    src = str(tmp_path / "src")
    shutil.copytree(os.path.join(os.path.dirname(built_iso), "src-1.0.0"), src, symlinks=True)
    with open(os.path.join(src, "operator", "deploy", "everyone.yaml"), "w") as f:
        yaml.safe_dump(binding("cluster-admin", group("system:authenticated"), group("system:anonymous")), f)
    iso = metalk8s.build_iso(src, str(tmp_path / os.path.basename(built_iso)), "1.0.0")
    with pytest.raises(SolutionError) as info:
        validate_archive(iso)
    assert info.value.problems == [
        "%s: operator/deploy/everyone.yaml: document 1 (ClusterRoleBinding everyone): binds the ClusterRole cluster-admin "
        "(every right on the cluster) to group system:authenticated (every signed-in user), group system:anonymous "
        "(anonymous requests); refused: a solution may not grant that unless the operator allows it for this archive "
        "(allow_broad_rbac: [example-solution-1.0.0], or --allow-broad-rbac example-solution-1.0.0)" % iso]
    s = validate_archive(iso, allow_broad_rbac=["example-solution-1.0.0"])
    assert s["trust"]["kind"] == "sha256sum" and len(s["broad_rbac"]) == 1
    assert cli.main(["solution", "validate", iso, "--allow-broad-rbac", "example-solution-1.0.0"]) == 0
    capsys.readouterr()
