# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: Kubernetes objects for solutions and environments.

Pure functions from data (a validated archive summary from :mod:`solution`, the
SolutionsConfiguration, an environment's current state) to the exact Kubernetes objects
to apply or delete, and the decisions behind them (which versions may be activated,
whether an upgrade is an upgrade). Nothing here talks to an API server: the
``solutions`` role applies what these functions return with ``kubernetes.core.k8s``.

Naming, so that two environments never collide:

* an environment ``ENV`` is the namespace ``ENV`` labelled
  ``solutions.mooring.io/environment=ENV`` with a description annotation, holding the
  ConfigMap ``mooring-environment`` (data: ``{solution: version}``); an environment MetalK8s
  made keeps MetalK8s's label, annotation and ConfigMap (its *flavour*,
  :mod:`solutions.environments`) on every change;
* a solution's namespaced operator objects live in the environment's namespace under
  their own names; its cluster-scoped RBAC is renamed ``solutions:ENV:NAME``;
* CRDs are cluster-wide and belong to the *active* version of the solution
  (:func:`render_crds`), never to an environment.
"""

from __future__ import annotations

import copy
import re

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.addons.addons import apply_order
from ansible_collections.mooring.cluster.plugins.module_utils.common import semver, yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.images import split_tag
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.environments import METALK8S, MOORING, check_name, flavour_names
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.images import image_ref, repository
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    CLUSTER_SCOPED_REFUSED,
    HAS_YAML,
    YAML_IMPORT_ERROR,
    SolutionError,
    require,
    yaml,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.manifest import API_VERSION, VERSION_RE
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.metalk8s import API_VERSION as METALK8S_API_VERSION
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.metalk8s import fill_repository
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.operatordeploy import (
    archive_key,
    broad_grant,
    containers_of,
    parse_image_ref,
    pod_spec_of,
)

SOLUTION_LABEL = "solutions.mooring.io/solution"
PART_OF = "app.kubernetes.io/part-of"
VERSION_LABEL = "app.kubernetes.io/version"
MANAGED_BY = "app.kubernetes.io/managed-by"
OPERATOR_CONFIG_MOUNT = "/etc/mooring/operator"
OPERATOR_CONFIG_KEY = "operator.yaml"
CONFIG_KIND = "SolutionsConfiguration"

CLUSTER_SCOPED_RENAMED = ("ClusterRole", "ClusterRoleBinding")


# ---------------------------------------------------------------------------------------
# Versions
# ---------------------------------------------------------------------------------------


def version_key(version):
    """A sort key implementing SemVer 2.0 precedence (build metadata ignored)."""
    if not isinstance(version, str) or not re.match(VERSION_RE, version):
        raise SolutionError("version %s is not a semantic version (X.Y.Z[-pre][+build])" % (excerpt(version),))
    return semver.precedence(version)


# ---------------------------------------------------------------------------------------
# SolutionsConfiguration (/etc/mooring/solutions.yaml)
# ---------------------------------------------------------------------------------------


def empty_config():
    return {"apiVersion": API_VERSION, "kind": CONFIG_KIND, "archives": [], "active": {}}


def load_config(text):
    """Parse and check a SolutionsConfiguration; an empty/absent file is an empty config."""
    require(HAS_YAML, "PyYAML", YAML_IMPORT_ERROR)
    if text is None or not text.strip():
        return empty_config()
    try:
        data = yamlio.load(text, "SolutionsConfiguration")
    except yamlio.YamlInputError as exc:
        raise SolutionError(str(exc)) from None
    problems = []
    if not isinstance(data, dict):
        raise SolutionError("SolutionsConfiguration: must be a mapping")
    if data.get("apiVersion") != API_VERSION or data.get("kind") != CONFIG_KIND:
        problems.append("apiVersion/kind must be %s %s" % (API_VERSION, CONFIG_KIND))
    archives = data.get("archives") or []
    active = data.get("active") or {}
    if not isinstance(archives, list):
        problems.append("archives: must be a list")
        archives = []
    if not isinstance(active, dict):
        problems.append("active: must be a mapping of solution name to version")
        active = {}
    for i, a in enumerate(archives):
        if not isinstance(a, dict) or not {"name", "version", "path", "sha256"} <= set(a):
            problems.append("archives[%d]: needs name, version, path and sha256" % i)
    if problems:
        raise SolutionError("SolutionsConfiguration is invalid", ["SolutionsConfiguration: %s" % p for p in problems])
    return {"apiVersion": API_VERSION, "kind": CONFIG_KIND, "archives": archives, "active": active}


def dump_config(config):
    require(HAS_YAML, "PyYAML", YAML_IMPORT_ERROR)
    return yaml.safe_dump(config, sort_keys=True, default_flow_style=False)


def available_images(config, name):
    """``{version: [{name, tag}]}`` of every imported version of ``name`` (for the OperatorConfig)."""
    out = {}
    for a in config["archives"]:
        if a["name"] == name:
            out[a["version"]] = [dict(zip(("name", "tag"), split_tag(ref))) for ref in a.get("images") or []]
    return out


def imported_versions(config, name):
    return sorted((a["version"] for a in config["archives"] if a["name"] == name), key=version_key)


def update_config(config, action, name, version=None, archive=None):
    """The SolutionsConfiguration after ``action`` (import, remove, activate, deactivate).

    ``archive`` (import only): ``{path, sha256}``. Refuses, with a clear message, to
    remove an active version, activate a version that is not imported, or import a
    different archive under a name and version already imported.
    """
    check_name("solution", name, METALK8S)  # the widest: a MetalK8s archive may name it with 63 characters
    if version is not None:
        version_key(version)
    new = copy.deepcopy(config)
    entries = [a for a in new["archives"] if a["name"] == name and a["version"] == version]
    if action == "import":
        if archive is None:
            raise SolutionError("import: the archive path and sha256 are required")
        entry = {"name": name, "version": version, "path": archive["path"], "sha256": archive["sha256"],
                 "images": sorted(archive.get("images") or [])}
        if archive.get("trust"):
            entry["trust"] = archive["trust"]
        if entries and entries[0] != entry:
            if entries[0]["sha256"] != entry["sha256"]:
                raise SolutionError(
                    "solution %s %s is already imported from a different archive (sha256 %s); "
                    "remove it first or bump spec.version" % (name, version, entries[0]["sha256"])
                )
            entries[0].update(entry)  # same content, imported from another path
        elif not entries:
            new["archives"].append(entry)
        new["archives"].sort(key=lambda a: (a["name"], version_key(a["version"])))
    elif action == "remove":
        if new["active"].get(name) == version:
            raise SolutionError("solution %s %s is active: deactivate it before removing it" % (name, version))
        new["archives"] = [a for a in new["archives"] if not (a["name"] == name and a["version"] == version)]
    elif action == "activate":
        if not entries:
            raise SolutionError(
                "solution %s %s is not imported (imported: %s); import its archive first"
                % (name, version, ", ".join(imported_versions(config, name)) or "none")
            )
        new["active"][name] = version
    elif action == "deactivate":
        if new["active"].get(name) == version or version is None:
            new["active"].pop(name, None)
    else:
        raise SolutionError("action %s: choose import, remove, activate or deactivate" % (excerpt(action),))
    return new


# ---------------------------------------------------------------------------------------
# Environments
# ---------------------------------------------------------------------------------------


def plan_environment(current, action, name, version=None, imported=()):
    """The ``{solution: version}`` map of an environment after ``action``.

    Actions: add (not yet there), upgrade (to a newer version), downgrade (to an older
    one), remove. The target version must be imported.
    """
    check_name("solution", name, METALK8S)  # the widest: a MetalK8s archive may name it with 63 characters
    new = dict(current)
    have = current.get(name)
    if action == "remove":
        new.pop(name, None)
        return new
    if version is None:
        raise SolutionError("%s: a version is required" % action)
    version_key(version)
    if version not in imported:
        raise SolutionError(
            "solution %s %s is not imported (imported: %s); import its archive first"
            % (name, version, ", ".join(sorted(imported, key=version_key)) or "none")
        )
    if action == "add":
        if have is not None and have != version:
            raise SolutionError(
                "solution %s already runs version %s in this environment; use upgrade or downgrade" % (name, have)
            )
    elif action in ("upgrade", "downgrade"):
        if have is None:
            raise SolutionError("solution %s is not in this environment; add it first" % name)
        if have != version:
            newer = version_key(version) > version_key(have)
            if action == "upgrade" and not newer:
                raise SolutionError("%s %s -> %s is not an upgrade; use downgrade" % (name, have, version))
            if action == "downgrade" and newer:
                raise SolutionError("%s %s -> %s is not a downgrade; use upgrade" % (name, have, version))
    else:
        raise SolutionError("action %s: choose add, upgrade, downgrade or remove" % (excerpt(action),))
    new[name] = version
    return new


def _labels(env, name=None, version=None, flavour=MOORING):
    labels = {MANAGED_BY: "mooring", flavour_names(flavour)["label"]: env}
    if name:
        labels[PART_OF] = name
        labels[SOLUTION_LABEL] = name
    if version:
        labels[VERSION_LABEL] = version
    return labels


def render_environment(env, description, solutions, namespace=None, flavour=MOORING):
    """The Namespace and the ConfigMap (``mooring-environment``, or ``metalk8s-environment`` for
    an environment of MetalK8s's ``flavour``) of environment ``env``."""
    names = flavour_names(flavour)
    check_name("environment", env, flavour)
    namespace = check_name("namespace", namespace or env, flavour)
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": namespace,
                "labels": _labels(env, flavour=flavour),
                "annotations": {names["description"]: description or ""},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": names["configmap"], "namespace": namespace, "labels": _labels(env, flavour=flavour)},
            "data": {k: solutions[k] for k in sorted(solutions)},
        },
    ]


def operator_config(env, name, prefix, available, archive_flavour=MOORING):
    """The OperatorConfig document: ``available`` is ``{version: [{name, tag}, ...]}``.

    An operator from a MetalK8s archive reads MetalK8s's document (its apiVersion, only
    ``repositories``); mooring's own adds ``solution`` and ``environment``."""
    repos = {}
    for version in sorted(available, key=version_key):
        repos[version] = [{
            "endpoint": repository(prefix, name, version),
            "images": sorted("%s:%s" % (i["name"], i["tag"]) for i in available[version]),
        }]
    if archive_flavour == METALK8S:
        return {"apiVersion": METALK8S_API_VERSION, "kind": "OperatorConfig", "repositories": repos}
    return {"apiVersion": API_VERSION, "kind": "OperatorConfig", "solution": name, "environment": env,
            "repositories": repos}


def _cluster_name(namespace, name):
    return "solutions:%s:%s" % (namespace, name)


def _run_from_the_registry(obj, pod, prefix, summary, config_name):
    """Point every container of the workload ``obj`` (pod spec ``pod``) at the registry under
    ``prefix``; the operator's container also gets the OperatorConfig mounted (``config_name``)."""
    name, version = summary["name"], summary["version"]
    op = summary["operator"]["image"]
    op_ref = "%s:%s" % (op["name"], op["tag"])
    for c in containers_of(obj):
        parsed = parse_image_ref(c.get("image"))
        if parsed is None:
            raise SolutionError(
                "%s %s: image %s is not NAME:TAG" % (obj["kind"], obj["metadata"]["name"], excerpt(c.get("image")))
            )
        is_operator = c["image"] == op_ref
        c["image"] = image_ref(prefix, name, version, parsed[0], parsed[1])
        c.setdefault("imagePullPolicy", "IfNotPresent")
        if is_operator:
            mounts = c.setdefault("volumeMounts", [])
            mounts.append({"name": "mooring-operator-config", "mountPath": OPERATOR_CONFIG_MOUNT,
                           "readOnly": True})
            env_vars = c.setdefault("env", [])
            env_vars.append({"name": "MOORING_OPERATOR_CONFIG",
                             "value": "%s/%s" % (OPERATOR_CONFIG_MOUNT, OPERATOR_CONFIG_KEY)})
            pod.setdefault("volumes", []).append(
                {"name": "mooring-operator-config", "configMap": {"name": config_name}})


def render_solution(env, summary, prefix, available, namespace=None, flavour=MOORING, applying=True):
    """Every namespaced/cluster-scoped object that runs ``summary``'s operator in ``env``.

    ``summary`` is :func:`solution.validate_archive`'s result; ``prefix`` the registry
    prefix images are named under; ``available`` ``{version: [images]}`` of every imported
    version (the OperatorConfig); ``flavour`` the environment's (its label on every object).
    CRDs are not included (see :func:`render_crds`). When ``applying`` (not when the objects are
    rendered to be deleted), a binding that grants broadly (:func:`operatordeploy.broad_grant`) is
    refused unless the summary records that its import allowed it (``broad_rbac``).
    """
    require(HAS_YAML, "PyYAML", YAML_IMPORT_ERROR)
    check_name("environment", env, flavour)
    namespace = check_name("namespace", namespace or env, flavour)
    name, version = summary["name"], summary["version"]
    labels = _labels(env, name, version, flavour)
    config_name = "%s-operator-config" % name
    cluster_roles = {d["metadata"]["name"] for d in summary["operator"]["manifests"] if d["kind"] == "ClusterRole"}
    objects = []
    for doc in summary["operator"]["manifests"]:
        kind = doc["kind"]
        if kind == "CustomResourceDefinition":
            continue
        if kind in CLUSTER_SCOPED_REFUSED:
            raise SolutionError(
                "%s %s: cluster-scoped %s objects are not supported in operator manifests"
                % (kind, doc["metadata"]["name"], kind)
            )
        if kind.endswith("List"):
            raise SolutionError("%s %s: lists of objects are not supported in operator manifests" % (kind, doc["metadata"]["name"]))
        why = broad_grant(doc)
        if why and applying and not summary.get("broad_rbac"):
            raise SolutionError(
                "%s %s: %s; not allowed when %s %s was imported: import it again with allow_broad_rbac: [%s]"
                % (kind, doc["metadata"]["name"], why, name, version, archive_key(name, version))
            )
        obj = fill_repository(copy.deepcopy(doc), repository(prefix, name, version))
        meta = obj.setdefault("metadata", {})
        meta["labels"] = dict(meta.get("labels") or {}, **labels)
        if kind in CLUSTER_SCOPED_RENAMED:
            meta["name"] = _cluster_name(namespace, meta["name"])
            meta.pop("namespace", None)
        else:
            meta["namespace"] = namespace
        if kind in ("RoleBinding", "ClusterRoleBinding"):
            ref = obj.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole" and ref.get("name") in cluster_roles:
                ref["name"] = _cluster_name(namespace, ref["name"])
            for s in obj.get("subjects") or []:
                if s.get("kind") == "ServiceAccount":
                    s["namespace"] = namespace
        pod = pod_spec_of(obj)
        if isinstance(pod, dict):
            _run_from_the_registry(obj, pod, prefix, summary, config_name)
            if kind != "Pod":
                tmeta = obj["spec"]["template"].setdefault("metadata", {}) if "template" in obj["spec"] else None
                if tmeta is not None:
                    tmeta["labels"] = dict(tmeta.get("labels") or {}, **labels)
        objects.append(obj)
    objects.append({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": config_name, "namespace": namespace, "labels": labels},
        "data": {OPERATOR_CONFIG_KEY: yaml.safe_dump(
            operator_config(env, name, prefix, available, summary.get("flavour", MOORING)), sort_keys=True)},
    })
    return objects


def render_crds(summary):
    """The CRDs of a solution version, applied cluster-wide when that version is activated."""
    out = []
    for doc in summary["operator"]["manifests"]:
        if doc["kind"] == "CustomResourceDefinition":
            crd = copy.deepcopy(doc)
            meta = crd.setdefault("metadata", {})
            meta["labels"] = dict(meta.get("labels") or {}, **{
                MANAGED_BY: "mooring", PART_OF: summary["name"], SOLUTION_LABEL: summary["name"],
                VERSION_LABEL: summary["version"]})
            out.append(crd)
    return out


def object_key(obj):
    """(apiVersion group, kind, namespace, name): what must be unique in a cluster."""
    group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
    meta = obj["metadata"]
    return group, obj["kind"], meta.get("namespace", ""), meta["name"]


def plan_changes(environment, action, namespace=None, description="", current=None, name=None, version=None,
                 solution=None, previous=None, config="", image_prefix="solutions.mooring.local", flavour=MOORING,
                 namespaces=None):
    """Objects to apply and to delete for one environment action; the environment's new solutions.

    ``current``: the environment's ``{solution: version}`` (its ConfigMap data); ``solution``:
    the validated summary of the version to run (add/upgrade/downgrade) or being removed
    (remove); ``previous``: the summary of the version being replaced (upgrade/downgrade),
    so that objects it had and the new one lacks are deleted; ``config``: the
    SolutionsConfiguration text (imported versions and their images); ``flavour``: the
    environment's (an existing environment keeps its own, :func:`environments.environment_state`);
    ``namespaces``: every namespace of the environment, deleted with it (default: ``namespace``).
    """
    current = dict(current or {})
    namespace = namespace or environment
    check_name("environment", environment, flavour)
    cfg = load_config(config)
    if action == "create":
        return {"apply": render_environment(environment, description, current, namespace, flavour), "delete": [],
                "solutions": current}
    if action == "delete":
        if current:
            raise SolutionError(
                "environment %s still runs %s; remove them from it first"
                % (environment, ", ".join("%s %s" % kv for kv in sorted(current.items())))
            )
        return {"apply": [], "solutions": {}, "delete": [
            render_environment(environment, description, {}, ns, flavour)[0] for ns in namespaces or [namespace]]}
    if not name:
        raise SolutionError("%s: the solution name is required" % action)
    new = plan_environment(current, action, name, version, imported_versions(cfg, name))
    configmap = render_environment(environment, description, new, namespace, flavour)[1]

    def render(summary, applying=True):
        return render_solution(environment, summary, image_prefix, available_images(cfg, name), namespace, flavour, applying)

    if action == "remove":
        if name not in current:
            return {"apply": [], "delete": [], "solutions": new}
        if not solution or solution.get("name") != name or solution.get("version") != current[name]:
            raise SolutionError("remove: the summary of %s %s (running) is required" % (name, current[name]))
        return {"apply": [configmap], "delete": apply_order(render(solution, False))[::-1], "solutions": new}
    if not solution or solution.get("name") != name or solution.get("version") != version:
        raise SolutionError("%s: the summary of %s %s (from its import) is required" % (action, name, version))
    apply = render(solution)
    delete = []
    if previous and previous.get("version") != version:
        keep = {object_key(o) for o in apply}
        delete = [o for o in render(previous, False) if object_key(o) not in keep]
    # Applied one by one, each waited for: what a Deployment needs before it (addons.apply_order, as the add-ons are
    # applied), deleted the other way; the environment's ConfigMap last, once the objects are up.
    return {"apply": apply_order(apply) + [configmap], "delete": apply_order(delete)[::-1], "solutions": new}
