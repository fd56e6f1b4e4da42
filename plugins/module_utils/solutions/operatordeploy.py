# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the operator's manifests in a solution archive (operator/deploy/*.yaml).

:class:`OperatorChecks` is a part of the archive validation (:mod:`solutions.validate`): only
operator/deploy/*.yaml, Kubernetes objects of allowed kinds (no cluster-scoped kind of
:data:`layout.CLUSTER_SCOPED_REFUSED`, no ``List``), a Deployment, every container image one of the
archive's own (``NAME:TAG``, no registry), and no RoleBinding or ClusterRoleBinding that grants
broadly (:func:`broad_grant`: the ClusterRole ``cluster-admin``, or any role to everyone) unless the
operator allows it for that archive (``allow_broad_rbac``). The helpers that find the containers of
a workload are shared with :mod:`solutions.k8s`.
"""


from __future__ import annotations

import copy
import posixpath
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common import images as image_refs
from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, shown
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import metalk8s
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.images import image_ref, repository
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    BROAD_ROLES,
    BROAD_SUBJECTS,
    CLUSTER_SCOPED_REFUSED,
    MAX_OPERATOR_FILE_BYTES,
    OPERATOR_DIR,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.manifest import IMAGE_NAME_RE, TAG_RE

BINDING_KINDS = ("RoleBinding", "ClusterRoleBinding")
MAX_SUBJECTS_SHOWN = 5


def _dig(obj, *keys):
    """``obj[k1][k2]...`` when every level is a mapping; else None."""
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def parse_image_ref(ref):
    """(name, tag) of an operator manifest image reference ``NAME:TAG``; None if not that form."""
    if not isinstance(ref, str) or "@" in ref or ":" not in ref:
        return None
    name, tag = image_refs.split_tag(ref)
    if image_refs.is_registry_host(name.split("/", 1)[0]):
        return None  # a registry host: the repository is decided at import, not in the archive
    if not re.match(IMAGE_NAME_RE, name) or not re.match(TAG_RE, tag):
        return None
    return name, tag


def archive_key(name, version):
    """How an operator names one archive in ``allow_broad_rbac``: ``<name>-<version>``."""
    return "%s-%s" % (name, version)


def broad_grant(doc):
    """What the RoleBinding or ClusterRoleBinding ``doc`` grants too broadly, in words (None when it
    grants nothing of the kind, or is no binding): the ClusterRole ``cluster-admin`` (to anyone), or
    any role to a subject of :data:`layout.BROAD_SUBJECTS` (every user, every anonymous request,
    every service account)."""
    if not isinstance(doc, dict) or doc.get("kind") not in BINDING_KINDS:
        return None
    ref = doc.get("roleRef") if isinstance(doc.get("roleRef"), dict) else {}
    subjects = [s for s in doc.get("subjects") or [] if isinstance(s, dict)] if isinstance(doc.get("subjects"), list) else []
    broad = ["%s %s (%s)" % (s["kind"].lower(), s["name"], BROAD_SUBJECTS[(s["kind"], s["name"])])
             for s in subjects if isinstance(s.get("kind"), str) and isinstance(s.get("name"), str)
             and (s["kind"], s["name"]) in BROAD_SUBJECTS]
    if ref.get("kind") == "ClusterRole" and isinstance(ref.get("name"), str) and ref["name"] in BROAD_ROLES:
        to = broad or ["%s %s" % (shown(str(s.get("kind"))[:60]), shown(str(s.get("name"))[:120])) for s in subjects]
        more = " and %d more" % (len(to) - MAX_SUBJECTS_SHOWN) if len(to) > MAX_SUBJECTS_SHOWN else ""
        return "binds the ClusterRole %s (every right on the cluster) to %s%s" % (
            ref["name"], ", ".join(to[:MAX_SUBJECTS_SHOWN]) or "no subject yet", more)
    if broad:
        role = "%s %s" % (shown(str(ref.get("kind"))[:60]), shown(str(ref.get("name"))[:120]))
        return "grants the %s to %s" % (role, ", ".join(broad))
    return None


def pod_spec_of(obj):
    """The pod spec of a workload object (a mapping), or None (also when a level is not a mapping)."""
    kind = _dig(obj, "kind")
    if kind == "Pod":
        pod = _dig(obj, "spec")
    elif kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
        pod = _dig(obj, "spec", "template", "spec")
    elif kind == "CronJob":
        pod = _dig(obj, "spec", "jobTemplate", "spec", "template", "spec")
    else:
        return None
    return pod if isinstance(pod, dict) else {}


def containers_of(obj):
    """The container mappings (init containers first) of a workload object; [] for any other object."""
    pod = pod_spec_of(obj)
    if not isinstance(pod, dict):
        return []
    out = []
    for key in ("initContainers", "containers"):
        listed = pod.get(key)
        for c in listed if isinstance(listed, list) else []:
            if isinstance(c, dict):
                out.append(c)
    return out


class OperatorChecks:
    """The operator's manifests: kinds allowed, images from the archive only.

    A part of :class:`solutions.validate._Validation`: it uses the archive's members (``files``,
    ``read``) and reports with ``bad`` and ``problems``."""

    def operator(self, manifest):
        """The operator's documents as ``(path, number, object)``; every problem reported."""
        files = sorted(p for p in self.files if p.startswith("operator/"))
        if not files:
            self.bad(OPERATOR_DIR, "missing: the operator manifests (CRDs, RBAC, Deployment) go in operator/deploy/")
            return []
        docs = []
        for path in files:
            docs.extend(self.operator_file(path))
        if not any(d.get("kind") == "Deployment" for _p, _n, d in docs):
            self.bad(OPERATOR_DIR, "no Deployment found: the operator must be deployed by a Deployment")
        if manifest is not None:
            self.operator_images(manifest, docs)
        self.operator_rbac(manifest, docs)
        return docs

    def operator_rbac(self, manifest, docs):
        """Every binding that grants broadly (:func:`broad_grant`) is a problem naming its file and
        object, unless ``self.allow_broad_rbac`` names this archive (``<name>-<version>``, or True:
        any); then it is a warning and listed in ``self.broad_rbac``."""
        key = archive_key(manifest["metadata"]["name"], manifest["spec"]["version"]) if manifest is not None else None
        allowed = self.allow_broad_rbac is True or (key is not None and key in self.allow_broad_rbac)
        for path, n, doc in docs:
            why = broad_grant(doc)
            if why is None:
                continue
            line = "%s: document %d (%s %s): %s" % (shown(path), n, doc["kind"], shown(doc["metadata"]["name"]), why)
            if allowed:
                self.broad_rbac.append(line)
                self.warnings.append("%s; allowed for this archive (allow_broad_rbac)" % line)
            else:
                self.problems.append(
                    "%s; refused: a solution may not grant that unless the operator allows it for this archive "
                    "(allow_broad_rbac: [%s], or --allow-broad-rbac %s)" % (line, key or "NAME-VERSION", key or "NAME-VERSION"))

    def operator_file(self, path):
        """The acceptable documents of one file under operator/ (none when the file is refused)."""
        dirs = (OPERATOR_DIR, metalk8s.CRDS_DIR) if self.flavour == "metalk8s" else (OPERATOR_DIR,)
        if posixpath.dirname(path) not in dirs or not path.endswith((".yaml", ".yml")):
            self.bad(path, "unexpected file; only %s is allowed under operator/"
                     % " and ".join("%s/*.yaml" % d for d in dirs))
            return []
        raw = self.read(path, MAX_OPERATOR_FILE_BYTES)
        if raw is None:
            return []
        if self.flavour == "metalk8s":
            raw = self.rendered(path, raw)
            if raw is None:
                return []
        try:  # Kubernetes YAML may use anchors: bounded by the expanded-size budget
            loaded = yamlio.load(raw, path, multi=True, max_bytes=MAX_OPERATOR_FILE_BYTES, max_nodes=500000)
        except yamlio.YamlInputError as exc:
            self.problems.append(str(exc))
            return []
        docs = []
        for n, doc in enumerate(loaded):
            problem = _object_problem(doc)
            if problem:
                self.problems.append("%s: document %d: %s" % (shown(path), n + 1, problem))
            elif posixpath.dirname(path) == metalk8s.CRDS_DIR and doc["kind"] != "CustomResourceDefinition":
                self.warnings.append("%s: document %d (%s %s): a sample custom resource, carried, never applied"
                                     % (shown(path), n + 1, excerpt(doc["kind"]), excerpt(doc["metadata"]["name"])))
            else:
                docs.append((path, n + 1, doc))
        return docs

    def rendered(self, path, raw):
        """A MetalK8s operator file with ``{{ repository }}`` rendered (None, reported, when it cannot be)."""
        try:
            text, problem = metalk8s.render_repository(raw.decode("utf-8"), shown(path))
        except UnicodeDecodeError:
            text, problem = None, "%s: not UTF-8 text" % shown(path)
        if problem:
            self.problems.append(problem)
            return None
        return text.encode("utf-8")

    def operator_images(self, manifest, docs):
        """Every container of ``docs`` runs an image listed in the manifest; one of them the operator's."""
        listed = {(i["name"], i["tag"]) for i in manifest["spec"]["images"]}
        op = manifest["spec"]["operator"]["image"]
        used_operator = False
        for path, n, doc in docs:
            for c in containers_of(doc):
                ref = c.get("image")
                parsed = parse_image_ref(metalk8s.without_repository(ref))
                if parsed is not None and ref != metalk8s.without_repository(ref):
                    c["image"] = "%s:%s" % parsed  # rendered again with the repository it is imported under
                where = "%s: document %d (%s %s), container %s" % (
                    shown(path), n, doc["kind"], doc["metadata"]["name"], excerpt(c.get("name")))
                written = metalk8s.fill_repository(ref, "{{ repository }}")
                if parsed is None:
                    self.problems.append(
                        "%s: image %s must be written %sNAME:TAG with no registry (the repository is set when "
                        "the archive is imported)" % (where, excerpt(written),
                                                      "{{ repository }}/" if self.flavour == "metalk8s" else ""))
                elif parsed not in listed:
                    self.problems.append(
                        "%s: image %s is not listed in manifest.yaml spec.images" % (where, shown(written)))
                elif parsed == (op["name"], op["tag"]):
                    used_operator = True
        if docs and not used_operator:
            self.bad(OPERATOR_DIR, "no container runs the operator image %s:%s from spec.operator.image"
                     % (op["name"], op["tag"]))


def rendered_manifests(summary, prefix):
    """The operator's objects of a validated ``summary`` as this cluster runs them: every container
    image ``<prefix>/<name>-<version>/NAME:TAG`` and ``{{ repository }}`` filled in (no namespace,
    no environment: what an import stores for inspection; :mod:`solutions.k8s` renders environments)."""
    name, version = summary["name"], summary["version"]
    out = []
    for doc in summary["operator"]["manifests"]:
        obj = metalk8s.fill_repository(copy.deepcopy(doc), repository(prefix, name, version))
        for c in containers_of(obj):
            parsed = parse_image_ref(c.get("image"))
            if parsed is not None:
                c["image"] = image_ref(prefix, name, version, parsed[0], parsed[1])
        out.append(obj)
    return out


def _object_problem(doc):
    """Why one operator document is refused (None when it is an acceptable Kubernetes object)."""
    if not isinstance(doc, dict):
        return "must be a Kubernetes object (a mapping)"
    missing = [k for k in ("apiVersion", "kind") if not isinstance(doc.get(k), str) or not doc.get(k)]
    name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
    if not isinstance(name, str) or not name:
        missing.append("metadata.name")
    if missing:
        return "missing %s" % ", ".join(missing)
    if len(doc["kind"]) > 253 or len(name) > 253:
        return "kind or metadata.name longer than 253 characters"
    if doc["kind"] in CLUSTER_SCOPED_REFUSED:
        return "cluster-scoped %s objects are not allowed in operator manifests" % doc["kind"]
    if doc["kind"].endswith("List"):  # List, ClusterRoleBindingList...: a client applies every item
        return ("%s: a list of objects is not allowed in operator manifests (its items would be applied unchecked); "
                "write each object as its own document" % excerpt(doc["kind"], 80))
    return None
