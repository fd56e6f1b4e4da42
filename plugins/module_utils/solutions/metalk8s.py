# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: Solution archives as MetalK8s's tooling builds them.

A MetalK8s Solution is an ISO 9660 image (Rock Ridge, Joliet) with::

    manifest.yaml            kind: Solution (apiVersion solutions.metalk8s.scality.com/v1alpha1)
    images/<name>/<tag>/     one image per directory in skopeo's dir: format (solutions.skopeodir)
    operator/deploy/*.yaml   the operator's objects; image references ``{{ repository }}/NAME:TAG``
    operator/deploy/crds/    its CRDs (and sample custom resources, carried, never applied)
    ui/                      the Solution's UI (carried and named; mooring does not deploy it)
    product.txt              KEY=VALUE lines (NAME, VERSION, ...), read for display
    registry-config.inc.j2   MetalK8s's registry configuration (carried, unused)

and its integrity comes from a ``SHA256SUM`` file shipped beside the ISO (:mod:`solutions.trust`),
not from a signature inside. This module reads the manifest the way MetalK8s does (its
defaults: every image directory when ``spec.images`` is absent, ``<name>-operator:<version>``
when ``spec.operator.image`` is) and turns it into the normalised manifest the rest of
solutions/ uses (:func:`normalise`), reads ``product.txt``, and renders ``{{ repository }}``.
"""


from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import field
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import MANIFEST
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.manifest import (
    IMAGE_NAME_RE,
    IMAGE_NAME_WHAT,
    MAX_DISPLAY_NAME,
    MAX_IMAGE_NAME,
    TAG_RE,
    TAG_WHAT,
    VERSION_RE,
    ManifestShape,
)

API_VERSION = "solutions.metalk8s.scality.com/v1alpha1"
DISPLAY_NAME_ANNOTATION = "solutions.metalk8s.scality.com/display-name"
# MetalK8s's rule for metadata.name: an RFC 1123 DNS label.
NAME_RE = r"^(?!-)[0-9a-z-]{1,63}(?<!-)\Z"
NAME_WHAT = "an RFC 1123 DNS label (at most 63 lowercase letters, digits and '-', not starting or ending with '-')"
VERSION_WHAT = "a semantic version (X.Y.Z[-pre][+build]); mooring orders a solution's versions by it"
TOP_LEVEL = frozenset([MANIFEST, "images", "operator", "ui", "product.txt", "registry-config.inc",
                       "registry-config.inc.j2"])
PRODUCT = "product.txt"
MAX_PRODUCT_BYTES = 64 * 1024
CRDS_DIR = "operator/deploy/crds"
# ``{{ repository }}`` as MetalK8s's Jinja renders it; any other template expression is refused.
REPOSITORY_TEMPLATE = re.compile(r"\{\{-?\s*repository\s*-?\}\}")
OTHER_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
# What ``{{ repository }}`` becomes while an archive is validated; replaced by the real repository
# when the objects are rendered (a reserved name: .invalid never resolves).
REPOSITORY_SENTINEL = "repository.solution.invalid"
_PRODUCT_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def is_metalk8s(data):
    """True when a parsed manifest says it is MetalK8s's (its apiVersion)."""
    return isinstance(data, dict) and data.get("apiVersion") == API_VERSION


class MetalK8sManifestShape(ManifestShape):
    """MetalK8s's manifest.yaml field by field; keys MetalK8s ignores are carried and named in warnings."""

    def problems(self, data, warnings=None):
        found = []
        warnings = [] if warnings is None else warnings
        for key in ("apiVersion", "kind", "metadata", "spec"):
            if key not in data:
                self.collect(found, self.fail, key, "is missing")
        warnings.extend("%s: %s: carried, not used by mooring" % (MANIFEST, field("", k))
                        for k in sorted(data, key=str) if k not in ("apiVersion", "kind", "metadata", "spec"))
        self.collect(found, self.one_of, data.get("kind"), "kind", ("Solution",))
        if "metadata" in data and self.collect(found, self.keys, data["metadata"], "metadata", ("name",)):
            self.metadata(found, data["metadata"])
        if "spec" in data and self.collect(found, self.keys, data["spec"], "spec", ("version",)):
            self.spec(found, data["spec"], warnings)
        return found

    def metadata(self, found, meta):
        self.collect(found, self.pattern, meta["name"], "metadata.name", re.compile(NAME_RE), NAME_WHAT)
        for part in ("labels", "annotations"):
            values = meta.get(part)
            if part not in meta or not self.collect(found, self.mapping, values, "metadata." + part, True):
                continue
            for key, value in sorted((values or {}).items(), key=lambda kv: str(kv[0])):
                path = field("metadata." + part, key)
                if not isinstance(key, str):
                    self.collect(found, self.expected, path, "a string key", key)
                elif key == DISPLAY_NAME_ANNOTATION:
                    self.collect(found, self.text, value, path, False, MAX_DISPLAY_NAME)
                else:
                    self.collect(found, self.text, value, path, False, 64 * 1024, True)

    def spec(self, found, spec, warnings):
        self.collect(found, self.pattern, spec["version"], "spec.version", re.compile(VERSION_RE), VERSION_WHAT)
        if spec.get("images") is not None and self.collect(found, self.listing, spec["images"], "spec.images"):
            for i, image in enumerate(spec["images"]):
                self.collect(found, self.image_ref, image, "spec.images[%d]" % i)
        for part in ("operator", "ui"):
            if spec.get(part) is None:
                continue
            if self.collect(found, self.mapping, spec[part], "spec." + part) and spec[part].get("image") is not None:
                self.collect(found, self.image, spec[part]["image"], "spec.%s.image" % part)
        if spec.get("customApiGroups") is not None and self.collect(
                found, self.listing, spec["customApiGroups"], "spec.customApiGroups"):
            for i, group in enumerate(spec["customApiGroups"]):
                self.collect(found, self.text, group, "spec.customApiGroups[%d]" % i, False, 253)
        warnings.extend("%s: %s: carried, not used by mooring" % (MANIFEST, field("spec", k))
                        for k in sorted(spec, key=str)
                        if k not in ("version", "images", "operator", "ui", "customApiGroups"))

    def image_ref(self, image, path):
        """An image as MetalK8s lists it: ``"name:tag"`` or ``{name, tag}``."""
        if isinstance(image, dict):
            return self.image(image, path)
        text = self.text(image, path, False, MAX_IMAGE_NAME + 130)
        name, sep, tag = text.rpartition(":")
        if not sep or "/" in tag:
            self.expected(path, "NAME:TAG (an image directory images/NAME/TAG)", text, True)
        return self.image({"name": name, "tag": tag}, path)

    def image(self, image, path):
        """``{name, tag}``: the name is one directory under images/, as MetalK8s's registry serves it."""
        self.keys(image, path, ("name", "tag"), ())
        self.pattern(image["name"], path + ".name", re.compile(IMAGE_NAME_RE), IMAGE_NAME_WHAT)
        if "/" in image["name"] or len(image["name"]) > MAX_IMAGE_NAME:
            self.expected(path + ".name", "one directory name of at most %d characters" % MAX_IMAGE_NAME,
                          image["name"], True)
        self.pattern(image["tag"], path + ".tag", re.compile(TAG_RE), TAG_WHAT)
        return {"name": image["name"], "tag": image["tag"]}


def normalise(data, image_dirs):
    """The normalised manifest of a MetalK8s manifest that passed :class:`MetalK8sManifestShape`.

    ``image_dirs``: the ``(name, tag)`` directories under images/, MetalK8s's default image list.
    Images listed twice are listed once (MetalK8s's tooling writes a set)."""
    meta, spec = data["metadata"], data["spec"]
    shape = MetalK8sManifestShape()
    if spec.get("images") is None:
        images = [{"name": n, "tag": t} for n, t in sorted(image_dirs)]
    else:
        images = []
        for i, image in enumerate(spec["images"]):
            one = shape.image_ref(image, "spec.images[%d]" % i)
            if one not in images:
                images.append(one)
    operator = (spec.get("operator") or {}).get("image") or {"name": "%s-operator" % meta["name"],
                                                             "tag": spec["version"]}
    annotations = dict(meta.get("annotations") or {})
    return {
        "flavour": "metalk8s",
        "metadata": {"name": meta["name"], "labels": dict(meta.get("labels") or {}),
                     "annotations": annotations,
                     "display_name": annotations.get(DISPLAY_NAME_ANNOTATION, meta["name"])},
        "spec": {"version": spec["version"], "images": images,
                 "operator": {"image": {"name": operator["name"], "tag": operator["tag"]}}},
    }


def parse_product(raw):
    """(``{KEY: VALUE}``, warnings) of product.txt; lines that are not KEY=VALUE are named, not fatal."""
    info, warnings = {}, []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return info, ["%s: not UTF-8 text; not shown" % PRODUCT]
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _PRODUCT_LINE.match(line.strip())
        if not m:
            warnings.append("%s: line %d: not KEY=VALUE, ignored: %s" % (PRODUCT, n, excerpt(line)))
            continue
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        info[m.group(1)] = value[:256]
    return info, warnings


def render_repository(text, path):
    """(text with ``{{ repository }}`` replaced by :data:`REPOSITORY_SENTINEL`, problem or None).

    MetalK8s renders operator manifests with Jinja before reading them as YAML; mooring renders
    only ``{{ repository }}`` and refuses any other template expression rather than guess it."""
    rendered = REPOSITORY_TEMPLATE.sub(REPOSITORY_SENTINEL, text)
    other = OTHER_TEMPLATE.search(rendered)
    if other:
        return None, ("%s: template expression %s: only {{ repository }} is rendered in operator manifests"
                      % (path, excerpt(other.group(0), 60)))
    return rendered, None


def without_repository(ref):
    """An image reference with a rendered ``{{ repository }}/`` prefix removed (``NAME:TAG`` is left)."""
    prefix = REPOSITORY_SENTINEL + "/"
    return ref[len(prefix):] if isinstance(ref, str) and ref.startswith(prefix) else ref


def fill_repository(obj, repository):
    """``obj`` (a rendered object) with every :data:`REPOSITORY_SENTINEL` in its strings replaced."""
    if isinstance(obj, dict):
        return {k: fill_repository(v, repository) for k, v in obj.items()}
    if isinstance(obj, list):
        return [fill_repository(v, repository) for v in obj]
    if isinstance(obj, str):
        return obj.replace(REPOSITORY_SENTINEL, repository)
    return obj
