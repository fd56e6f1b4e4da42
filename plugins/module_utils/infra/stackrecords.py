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
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape
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
DNS_WHAT = "a lower-case DNS label"


def entries_hash(entries, spec_parts):
    """sha256 over ``[(relative path, kind, digest)]`` and a canonical JSON of the spec sections a part ships."""
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


STABLE_WHAT = "v<N> (v1, v2, ...)"
DEV_WHAT = "v<N> (v1, v2, ...) or v0-sha.<hash>"


class StackShape(Shape):
    """The shape of one of a stack's files (``where``: its path): every check raises StackError in
    the one style ``PATH: FIELD: must be EXPECTED, not FOUND``; :meth:`collect` gathers one line per
    wrong field, so that a file's problems are all told at once."""

    error = StackError

    def collect(self, found, check, *args):
        """Run one check; its problem (when it fails) goes to ``found``. True when it passed."""
        try:
            check(*args)
        except StackError as exc:
            found.extend(exc.problems)
            return False
        return True

    def version(self, value, path, dev_ok=False):
        """A stable version ``v<N>`` (or, when ``dev_ok``, csctl's ``v0-sha.<hash>``)."""
        if dev_ok and is_dev_version(value):
            return value
        return self.pattern(value, path, STABLE_VERSION, DEV_WHAT if dev_ok else STABLE_WHAT)

    def expected_mapping(self, value, path, what):
        """A mapping; else ``PATH: must be WHAT, not ...``."""
        if not isinstance(value, dict):
            self.expected(path, what, value)
        return value

    def string(self, value, path):
        """A string (of any length) when present."""
        if value is not None and not isinstance(value, str):
            self.expected(path, "a string", value)
        return value


def version_number(value, field, path):
    """The number ``N`` of a stable version ``v<N>``; StackError (``path``: ``field``) for anything else."""
    return int(STABLE_VERSION.match(StackShape(path).version(value, field)).group(1))


def is_dev_version(value):
    """True for csctl's hash-mode versions ``v0-sha.<hash>``."""
    return isinstance(value, str) and bool(DEV_VERSION.match(value))


def check_version(value, field, path, problems, dev_ok):
    """Add to ``problems`` the line for ``value`` when it is not a version (see :meth:`StackShape.version`)."""
    StackShape(path).collect(problems, StackShape(path).version, value, field, dev_ok)


class MetadataShape(StackShape):
    """metadata.yaml: ``apiVersion``, and ``versions`` with clusterStack, kubernetes and components."""

    def __init__(self, where, dev_ok=True):
        super().__init__(where)
        self.dev_ok = dev_ok

    def problems(self, doc):
        """One line per wrong field of the parsed ``doc``."""
        found = []
        if not self.collect(found, self.expected_mapping, doc, "", "a mapping (apiVersion, versions)"):
            return found
        self.collect(found, self.one_of, doc.get("apiVersion"), "apiVersion", (METADATA_API_VERSION,))
        versions = doc.get("versions")
        if not self.collect(found, self.expected_mapping, versions, "versions", "a mapping (clusterStack, kubernetes, components)"):
            versions = {}
        components = versions.get("components")
        if not isinstance(components, dict):
            if versions:
                self.collect(found, self.expected_mapping, components, "versions.components", "a mapping (%s)" % ", ".join(COMPONENTS))
            components = {}
        self.collect(found, self.version, versions.get("clusterStack"), "versions.clusterStack", self.dev_ok)
        for c in COMPONENTS:
            self.collect(found, self.version, components.get(c), "versions.components.%s" % c, self.dev_ok)
        self.collect(found, self.pattern, versions.get("kubernetes"), "versions.kubernetes", KUBE_VERSION, "vX.Y.Z")
        self.collect(found, self.keys, components, "versions.components", (), COMPONENTS)
        return found


def load_metadata(path, dev_ok=True):
    """metadata.yaml read and checked (:class:`MetadataShape`); StackError with one line per wrong field."""
    doc = load_yaml(path, "metadata.yaml")
    problems = MetadataShape(path, dev_ok).problems(doc)
    if problems:
        raise StackError("bad metadata", problems)
    return doc


def metadata_versions(doc):
    """The versions of a checked metadata.yaml, in the shape a plan uses."""
    v = doc["versions"]
    return {"clusterStack": v["clusterStack"], "kubernetes": v["kubernetes"],
            "components": {c: v["components"][c] for c in COMPONENTS}}


class ReleaseShape(StackShape):
    """release.yaml: ``kind: StackRelease``, ``hashes`` of every part and the ``versions`` recorded."""

    def problems(self, doc):
        """One line per wrong field of the parsed ``doc``."""
        found = []
        if not self.collect(found, self.expected_mapping, doc, "", "a mapping (kind %s, versions, hashes)" % RELEASE_KIND):
            return found
        self.collect(found, self.one_of, doc.get("kind"), "kind", (RELEASE_KIND,))
        self.collect(found, self.expected_mapping, doc.get("versions"), "versions", "a mapping")
        if self.collect(found, self.expected_mapping, doc.get("hashes"), "hashes", "a mapping (%s)" % ", ".join(PARTS)):
            self.collect(found, self.keys, doc["hashes"], "hashes", PARTS)
        if found:
            return found
        for p in PARTS:
            if not isinstance(doc["hashes"][p], str):
                self.collect(found, self.expected, "hashes.%s" % p, "sha256:<hex>", doc["hashes"][p])
        versions = doc["versions"]
        for name in ("clusterStack", "kubernetes"):
            self.collect(found, self.string, versions.get(name), "versions.%s" % name)
        components = versions.get("components")
        if components is not None and self.collect(found, self.expected_mapping, components, "versions.components", "a mapping"):
            for c in COMPONENTS:
                self.collect(found, self.string, components.get(c), "versions.components.%s" % c)
        return found


def load_release(path):
    """release.yaml read and checked (:class:`ReleaseShape`), or None when there is none."""
    if not os.path.exists(path):
        return None
    doc = load_yaml(path, "release.yaml")
    problems = ReleaseShape(path).problems(doc)
    if problems:
        raise StackError("bad release record", problems)
    return doc


class CsctlShape(StackShape):
    """csctl.yaml as csctl reads it: ``config`` with provider type, cluster stack name and Kubernetes version."""

    def problems(self, doc):
        """One line per wrong field of the parsed ``doc``."""
        found = []
        if not self.collect(found, self.expected_mapping, doc, "", "a mapping with config") or \
                not self.collect(found, self.expected_mapping, doc.get("config"), "config",
                                 "a mapping (provider, clusterStackName, kubernetesVersion)"):
            return found
        cfg = doc["config"]
        provider = cfg.get("provider") if isinstance(cfg.get("provider"), dict) else {}
        self.collect(found, self.pattern, provider.get("type"), "config.provider.type", DNS1123, DNS_WHAT)
        self.collect(found, self.pattern, cfg.get("clusterStackName"), "config.clusterStackName", DNS1123, DNS_WHAT)
        self.collect(found, self.pattern, cfg.get("kubernetesVersion"), "config.kubernetesVersion", KUBE_VERSION, "vX.Y.Z")
        return found


def load_csctl_config(path):
    """csctl.yaml as csctl reads it: provider type, cluster stack name and Kubernetes version."""
    doc = load_yaml(path, "csctl.yaml")
    problems = CsctlShape(path).problems(doc)
    if problems:
        raise StackError("bad csctl config", problems)
    return doc
