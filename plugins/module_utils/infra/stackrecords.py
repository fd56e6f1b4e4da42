# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: a cluster stack's version records (metadata.yaml, release.yaml,
csctl.yaml), the versions they hold, and the content hashes a release records."""

from __future__ import annotations

import base64
import hashlib
import os
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import canonical_json
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stacktree import (
    COMPONENTS,
    METADATA_API_VERSION,
    PARTS,
    RELEASE_KIND,
    StackError,
    tree_entries,
)
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stackyaml import load_yaml

# \Z, not $: $ also matches before a final newline ("v1\n", a directory "default\n").
STABLE_VERSION = re.compile(r"^v([1-9][0-9]{0,8})\Z")
DEV_VERSION = re.compile(r"^v0-sha\.([a-z0-9]{1,64})\Z")
KUBE_VERSION = re.compile(r"^v(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\Z")
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")


def entries_hash(entries, spec_parts):
    h = hashlib.sha256()
    for rel, kind, digest in entries:
        h.update(("%s\0%s\0%s\n" % (rel, kind, digest)).encode("utf-8"))
    h.update(b"spec\0")
    h.update(canonical_json(spec_parts))
    return "sha256:" + h.hexdigest()


def part_hash(root, spec_parts):
    """sha256 over a directory's entries and a canonical JSON of the spec sections it ships."""
    return entries_hash(tree_entries(root), spec_parts)


def csctl_dirhash(files):
    """csctl's hash-mode string for ``[(relative posix path, content bytes)]``.

    Go's ``dirhash.Hash1`` (sha256 over sorted lines ``"<hex sha256>  <path>\\n"``, standard
    base64), then csctl's clean-up (no ``/``, ``+``, ``=``, lower case) and its first 7 characters.
    """
    h = hashlib.sha256()
    for rel, data in sorted(files, key=lambda f: f[0].encode("utf-8")):
        h.update(("%s  %s\n" % (hashlib.sha256(data).hexdigest(), rel)).encode("utf-8"))
    text = base64.b64encode(h.digest()).decode("ascii")
    for ch in "/=+":
        text = text.replace(ch, "")
    return text.lower()[:7]


def version_number(value, field, path):
    m = STABLE_VERSION.match(value) if isinstance(value, str) else None
    if not m:
        raise StackError("bad version", ["%s: %s is %s, expected v<N> (v1, v2, ...)" % (path, field, excerpt(value))])
    return int(m.group(1))


def is_dev_version(value):
    """True for csctl's hash-mode versions ``v0-sha.<hash>``."""
    return isinstance(value, str) and bool(DEV_VERSION.match(value))


def check_version(value, field, path, problems, dev_ok):
    if dev_ok and is_dev_version(value):
        return
    try:
        version_number(value, field, path)
    except StackError as exc:
        if dev_ok:
            problems.append("%s: %s is %s, expected v<N> (v1, v2, ...) or v0-sha.<hash>" % (path, field, excerpt(value)))
        else:
            problems.extend(exc.problems)


def load_metadata(path, dev_ok=True):
    doc = load_yaml(path, "metadata.yaml")
    problems = []
    if not isinstance(doc, dict):
        raise StackError("bad metadata", ["%s: must be a mapping" % path])
    if doc.get("apiVersion") != METADATA_API_VERSION:
        problems.append("%s: apiVersion is %s, expected %r" % (path, excerpt(doc.get("apiVersion")), METADATA_API_VERSION))
    versions = doc.get("versions") if isinstance(doc.get("versions"), dict) else {}
    if not isinstance(doc.get("versions"), dict):
        problems.append("%s: versions is %s, expected a mapping (clusterStack, kubernetes, components)"
                        % (path, excerpt(doc.get("versions"))))
    components = versions.get("components") if isinstance(versions.get("components"), dict) else {}
    if versions and not isinstance(versions.get("components"), dict):
        problems.append("%s: versions.components is %s, expected a mapping (%s)"
                        % (path, excerpt(versions.get("components")), ", ".join(COMPONENTS)))
    check_version(versions.get("clusterStack"), "versions.clusterStack", path, problems, dev_ok)
    for c in COMPONENTS:
        check_version(components.get(c), "versions.components.%s" % c, path, problems, dev_ok)
    if not isinstance(versions.get("kubernetes"), str) or not KUBE_VERSION.match(versions.get("kubernetes")):
        problems.append("%s: versions.kubernetes is %s, expected vX.Y.Z" % (path, excerpt(versions.get("kubernetes"))))
    extra = sorted(str(k) for k in set(components) - set(COMPONENTS))
    if extra:
        problems.append("%s: unknown components %s (known: %s)" % (path, excerpt(", ".join(extra), 200), ", ".join(COMPONENTS)))
    if problems:
        raise StackError("bad metadata", problems)
    return doc


def metadata_versions(doc):
    v = doc["versions"]
    return {"clusterStack": v["clusterStack"], "kubernetes": v["kubernetes"],
            "components": {c: v["components"][c] for c in COMPONENTS}}


def load_release(path):
    if not os.path.exists(path):
        return None
    doc = load_yaml(path, "release.yaml")
    if not isinstance(doc, dict) or doc.get("kind") != RELEASE_KIND or not isinstance(doc.get("hashes"), dict) \
            or not isinstance(doc.get("versions"), dict):
        raise StackError("bad release record", ["%s: expected kind %s with 'versions' and 'hashes'" % (path, RELEASE_KIND)])
    missing = [p for p in PARTS if p not in doc["hashes"]]
    if missing:
        raise StackError("bad release record", ["%s: hashes lacks %s" % (path, ", ".join(missing))])
    versions = doc["versions"]
    problems = ["%s: hashes.%s is %s, expected sha256:<hex>" % (path, p, excerpt(doc["hashes"][p]))
                for p in PARTS if not isinstance(doc["hashes"][p], str)]
    for field in ("clusterStack", "kubernetes"):
        if versions.get(field) is not None and not isinstance(versions.get(field), str):
            problems.append("%s: versions.%s is %s, expected a string" % (path, field, excerpt(versions.get(field))))
    components = versions.get("components")
    if components is not None and not isinstance(components, dict):
        problems.append("%s: versions.components is %s, expected a mapping" % (path, excerpt(components)))
    elif components:
        problems.extend("%s: versions.components.%s is %s, expected a string" % (path, c, excerpt(components.get(c)))
                        for c in COMPONENTS if components.get(c) is not None and not isinstance(components.get(c), str))
    if problems:
        raise StackError("bad release record", problems)
    return doc


def load_csctl_config(path):
    """csctl.yaml as csctl reads it: provider type, cluster stack name and Kubernetes version."""
    doc = load_yaml(path, "csctl.yaml")
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
        raise StackError("bad csctl config", ["%s: expected a mapping with 'config'" % path])
    cfg = doc["config"]
    provider = cfg.get("provider") if isinstance(cfg.get("provider"), dict) else {}
    problems = []
    ptype = provider.get("type")
    if not isinstance(ptype, str) or not DNS1123.match(ptype):
        problems.append("%s: config.provider.type is %s, expected a lower-case DNS label" % (path, excerpt(ptype)))
    name = cfg.get("clusterStackName")
    if not isinstance(name, str) or not DNS1123.match(name):
        problems.append("%s: config.clusterStackName is %s, expected a lower-case DNS label" % (path, excerpt(name)))
    kube = cfg.get("kubernetesVersion")
    if not isinstance(kube, str) or not KUBE_VERSION.match(kube):
        problems.append("%s: config.kubernetesVersion is %s, expected vX.Y.Z" % (path, excerpt(kube)))
    if problems:
        raise StackError("bad csctl config", problems)
    return doc
