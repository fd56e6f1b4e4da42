# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the installer spec — schema, validation, kURL input, hash.

``parse_installer(text_or_mapping)`` returns an :class:`Installer` or raises
:class:`SpecError` listing every problem at once, each with its path and the allowed values.
Documents are validated as read with YAML 1.2 core-schema rules (``yes`` stays a string). The
hash is computed from the text as kurl.sh itself parsed it (js-yaml 4, which differs from the
core schema on a few plain scalars such as ``1_000`` or dates), so the 7-character identifier is
kURL's for the same document. kURL ``Installer`` documents (``cluster.kurl.sh/v1beta1``,
``kurl.sh/v1beta1``) are accepted: supported add-ons are mapped, the rest reported by name.

This module is the entry point and the document's own rules (its shape, the defaults, one CNI, one
ingress); the schema is :mod:`spec.schema`, the kURL mapping :mod:`spec.kurlmap`, the network
settings :mod:`spec.network`, the YAML readers :mod:`spec.specyaml` and the hash :mod:`spec.kurlhash`.
"""

from __future__ import annotations

import copy

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, reason
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import KurlHashError, SpecError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.kurlhash import kurl_hash_digest
from ansible_collections.mooring.cluster.plugins.module_utils.spec.kurlmap import CNI_ADDONS, KURL_API_VERSIONS, NO_CNI, map_kurl
from ansible_collections.mooring.cluster.plugins.module_utils.spec.network import network_problems
from ansible_collections.mooring.cluster.plugins.module_utils.spec.schema import (
    API_VERSION,
    KIND,
    SETTINGS_SCHEMAS,
    found,
    schema_problems,
)
from ansible_collections.mooring.cluster.plugins.module_utils.spec.specyaml import load_yaml_1_2, load_yaml_kurl

# kURL reads any apiVersion (only kurl.sh/v1beta1 changes how it reads the spec); its own test specs carry
# cluster.kurl.sh/v1beta. Any version of kURL's two groups is read as kURL reads it, with a warning.
KURL_API_GROUPS = ("cluster.kurl.sh/", "kurl.sh/")

DEFAULTS = {
    "kubernetes": {
        "podCIDR": "10.32.0.0/16",
        "serviceCIDR": "10.96.0.0/16",
        "clusterDomain": "cluster.local",
        "clusterName": "kubernetes",
    },
    "etcd": {"topology": "external"},
    "calico": {"encapsulation": "VXLAN"},
    "cilium": {"tunnel": "vxlan"},
    "flannel": {"backend": "vxlan"},
}


class Installer(object):
    """A validated installer document.

    ``spec`` is the spec as written (what the hash covers); ``addons`` is the mooring spec after
    kURL mapping with defaults filled in; ``unsupported`` names the kURL add-ons/fields that are
    ignored (paths such as ``spec.weave``) and ``warnings`` says, one line each, what was ignored
    and what that means for the cluster.
    """

    def __init__(self, document, addons, source, unsupported, hash_document=None, warnings=(), name=None):
        self.document = document
        # JSON's keys are strings (kURL reads the document as JavaScript does): a YAML key such as
        # ``1`` is the key "1" in the lock, as in the hash.
        self.spec = _string_keys(document.get("spec") or {})
        self.addons = addons
        self.source = source
        self.unsupported = unsupported
        self.warnings = list(warnings)
        # The document as kurl.sh parsed it; only the hash reads it.
        self._hash_document = hash_document if hash_document is not None else document
        self._digest = None
        self._name = name or "installer"
        # {documents: [HostPreflight...], enforceWarnings: bool} when the spec carries host preflights, else {}.
        self.host_preflights = {}
        self.proxy = {}

    @property
    def name(self):
        return self._name

    def hash_now(self):
        """Compute the kURL digest (raises KurlHashError where kURL would fail); it is kept."""
        if self._digest is None:
            self._digest = kurl_hash_digest(self._hash_document.get("spec") or {}, self._hash_document.get("apiVersion"))
        return self._digest

    @property
    def hash(self):
        return self.hash_now()[:7]

    @property
    def digest(self):
        return self.hash_now()

    def requested_versions(self):
        return {name: str(values["version"]) for name, values in self.addons.items()}

    def options(self, addon):
        return {k: v for k, v in self.addons[addon].items() if k != "version"}


def _string_keys(value):
    if isinstance(value, dict):
        return {str(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    return value


def load_document(source):
    """A mapping from YAML text (YAML 1.2 core schema, read within :mod:`common.yamlio`'s bounds)
    or an existing mapping."""
    if isinstance(source, dict):
        return copy.deepcopy(source)
    try:
        document = load_yaml_1_2(source, "the installer document")
    except MooringError as exc:
        raise SpecError(str(exc)) from None
    except Exception as exc:  # the YAML parser raises many types; report them all the same way
        raise SpecError("the installer document is not valid YAML: %s" % reason(exc)) from None
    if not isinstance(document, dict):
        raise SpecError("the installer document must be a mapping with apiVersion, kind and spec")
    return document


def _semantic_problems(addons):
    problems = []
    cnis = [a for a in CNI_ADDONS if a in addons]
    own_cni = (addons.get("kubernetes") or {}).get("cni") == NO_CNI
    if own_cni and cnis:
        problems.append("spec.kubernetes.cni: 'none' says the cluster brings its own CNI, but spec.%s is one; "
                        "remove one of them" % cnis[0])
    elif not own_cni and len(cnis) != 1:
        found = " and ".join(cnis) if cnis else "none"
        problems.append("spec: exactly one CNI add-on is required (%s), or kubernetes.cni: none to bring your own; "
                        "found %s" % (", ".join(CNI_ADDONS), found))
    if "ingressNginx" in addons and "contour" in addons:
        problems.append("spec: choose one ingress controller (ingressNginx or contour), not both")
    problems.extend(network_problems(addons.get("kubernetes") or {}))
    return problems


def _shape(document):
    """``(source kind, problems)`` for the document's apiVersion, kind and spec.

    kURL's shapes are all accepted: ``cluster.kurl.sh/v1beta1`` or ``kurl.sh/v1beta1`` (any other version
    of those groups too, as kURL reads it, with a warning from :func:`_map_kurl`) with
    ``kind: Installer`` or no kind, and a bare body with ``spec`` and neither apiVersion nor kind
    (what kURL's API receives).
    """
    api_version, kind = document.get("apiVersion"), document.get("kind")
    problems = []
    if api_version is None and kind is None and "spec" in document:
        source = "kurl"
    elif isinstance(api_version, str) and api_version.startswith(KURL_API_GROUPS):
        source = "kurl"
        if kind is not None and kind != KIND:
            problems.append("kind: must be 'Installer', not %s" % found(kind))
    else:
        source = "mooring"
    if source == "kurl" and not isinstance(document.get("spec"), dict):
        problems.append(_spec_problem(document))
    return source, problems


def _spec_problem(document):
    """The line for a document whose spec is not a mapping of add-ons."""
    if "spec" not in document:
        return "spec: is missing (a mapping of add-ons)"
    return "spec: must be a mapping of add-ons, not %s" % found(document["spec"])


def _hash_document(source, document):
    """The document as kurl.sh parsed the same text (falls back to ``document``)."""
    if isinstance(source, dict):
        return document
    try:
        parsed = load_yaml_kurl(source)
    except Exception:  # a document js-yaml would reject: hash what we validated
        return document
    return parsed if isinstance(parsed, dict) else document


def _unset_empty_cidrs(document):
    """The document with an empty ``podCIDR`` or ``serviceCIDR`` of ``spec.kubernetes`` left out: an empty
    string is unset, as kURL takes it (the default applies). The hash still reads the document as given."""
    spec = document.get("spec")
    kube = spec.get("kubernetes") if isinstance(spec, dict) else None
    if not isinstance(kube, dict) or not any(kube.get(f) == "" for f in ("podCIDR", "serviceCIDR")):
        return document
    out = copy.deepcopy(document)
    for field in ("podCIDR", "serviceCIDR"):
        if out["spec"]["kubernetes"].get(field) == "":
            del out["spec"]["kubernetes"][field]
    return out


def _read(source):
    """``(document, source kind, checked document, unsupported, warnings, problems)`` before the schema."""
    document = load_document(source)
    source_kind, problems = _shape(document)
    if source_kind != "kurl" or problems:
        return document, source_kind, _unset_empty_cidrs(document), [], [], problems
    checked, unsupported, warnings, problems = map_kurl(document)
    return document, source_kind, checked, unsupported, warnings, problems


def parse_installer(source):
    """Validate an installer document; return an :class:`Installer` or raise SpecError.

    The SpecError carries the document's warnings too (``warnings``), so a front end names every
    ignored kURL add-on or field even when the document is invalid.
    """
    document, source_kind, checked, unsupported, warnings, problems = _read(source)
    if problems:
        raise SpecError("the installer spec is invalid", problems, warnings)
    problems = schema_problems(checked)
    spec = checked.get("spec") if isinstance(checked.get("spec"), dict) else {}
    addons = {}
    for name, values in spec.items():
        if isinstance(values, dict) and name not in SETTINGS_SCHEMAS:
            merged = copy.deepcopy(DEFAULTS.get(name, {}))
            merged.update(copy.deepcopy(values))
            addons[name] = merged
    if not problems:
        problems.extend(_semantic_problems(addons))
    if problems:
        raise SpecError("the installer spec is invalid", problems, warnings)
    metadata = checked.get("metadata") if isinstance(checked.get("metadata"), dict) else {}
    installer = Installer(document, addons, source_kind, unsupported, _hash_document(source, document), warnings,
                          str(metadata.get("name") or "installer"))
    chosen = spec.get("hostPreflights") or {}
    if chosen.get("documents"):
        docs = chosen["documents"]
        installer.host_preflights = {"documents": copy.deepcopy(docs if isinstance(docs, list) else [docs]),
                                     "enforceWarnings": bool(chosen.get("enforceWarnings", False))}
    if spec.get("proxy"):
        installer.proxy = copy.deepcopy(spec["proxy"])
    try:
        installer.hash_now()
    except KurlHashError as exc:  # kURL could not have hashed it either
        raise SpecError("the installer spec cannot be hashed", exc.problems, warnings) from None
    return installer


def hash_installer(source):
    """``(7-character hash, 64-hex digest, warnings)`` of an Installer document.

    The add-ons are not validated: hashing is defined for any Installer document kURL would
    hash, including kURL add-ons mooring.cluster does not support (named in ``warnings``).
    """
    document = load_document(source)
    source_kind, problems = _shape(document)
    warnings = []
    if source_kind == "kurl" and not problems:
        warnings = map_kurl(document)[2]  # what the spec maps to does not change its hash
    if source_kind == "mooring":
        if document.get("kind") != KIND or document.get("apiVersion") != API_VERSION:
            problems.append("not an Installer document: apiVersion must be one of %s (or another version of "
                            "kURL's groups) and kind must be Installer" % ", ".join((API_VERSION,) + KURL_API_VERSIONS))
        elif not isinstance(document.get("spec"), dict):
            problems.append(_spec_problem(document))
    if problems:
        raise SpecError("the installer document cannot be hashed", problems, warnings)
    hashed = _hash_document(source, document)
    spec = hashed.get("spec") if isinstance(hashed.get("spec"), dict) else document["spec"]
    try:
        digest = kurl_hash_digest(spec, hashed.get("apiVersion"))
    except KurlHashError as exc:
        raise SpecError("the installer spec cannot be hashed", exc.problems, warnings) from None
    return digest[:7], digest, warnings
