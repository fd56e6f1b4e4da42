# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the solution manifest (manifest.yaml): its shape and its checks.

:class:`ManifestShape` is the shape of ``kind: Solution`` (a :class:`common.shape.Shape`: one
line per wrong field, ``manifest.yaml: FIELD: must be EXPECTED, not FOUND``);
:func:`check_manifest_data` lists every problem of a parsed manifest, each naming its field,
including what the shape cannot say (an image listed twice, the operator image not listed,
names that would not be safe paths).
"""


from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import MANIFEST, MAX_MANIFEST_BYTES, SolutionError

API_VERSION = "solutions.mooring.io/v1alpha1"
KIND = "Solution"
DISPLAY_NAME_ANNOTATION = "solutions.mooring.io/display-name"

# Patterns end with \Z, not $: in Python's re, $ also matches
# before a final newline ("example\n" would pass and become part of a path).
NAME_RE = r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?\Z"
IMAGE_NAME_RE = r"^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*\Z"
TAG_RE = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z"
VERSION_RE = (
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?\Z"
)

# What each pattern is, in words (the Shape message: "must be WHAT, not VALUE").
NAME_WHAT = "a name of at most 40 lowercase letters, digits and '-', starting and ending with a letter or digit"
IMAGE_NAME_WHAT = ("an image name: lowercase letters and digits, joined by '.', '_' or '-', "
                   "in parts separated by '/'")
TAG_WHAT = "an image tag: letters, digits, '_', '.' and '-', at most 128, not starting with '.' or '-'"
VERSION_WHAT = "a semantic version (X.Y.Z[-pre][+build])"
TOP_FIELDS = ("apiVersion", "kind", "metadata", "spec")
MAX_IMAGE_NAME = 128
MAX_DISPLAY_NAME = 128


class ManifestShape(Shape):
    """manifest.yaml (``kind: Solution``) field by field; :meth:`problems` lists one line per wrong field."""

    error = SolutionError

    def __init__(self):
        super().__init__(MANIFEST)

    def problems(self, data):
        """Every problem of the parsed manifest ``data`` (one per wrong field), in the Shape style."""
        found = []
        if not isinstance(data, dict):
            self.collect(found, self.expected, "(document)", "a mapping with apiVersion, kind, metadata and spec", data)
            return found
        for key in TOP_FIELDS:
            if key not in data:
                self.collect(found, self.fail, key, "is missing")
        self.collect(found, self.keys, data, "", (), TOP_FIELDS)
        if "apiVersion" in data:
            self.collect(found, self.one_of, data["apiVersion"], "apiVersion", (API_VERSION,))
        if "kind" in data:
            self.collect(found, self.one_of, data["kind"], "kind", (KIND,))
        if "metadata" in data and self.collect(found, self.keys, data["metadata"], "metadata", ("name",), ("annotations",)):
            self.metadata(found, data["metadata"])
        if "spec" in data and self.collect(found, self.keys, data["spec"], "spec", ("version", "images", "operator"), ()):
            self.spec(found, data["spec"])
        return found

    def metadata(self, found, meta):
        """metadata: the name, and annotations of strings (the display name at most 128 characters)."""
        self.collect(found, self.pattern, meta["name"], "metadata.name", re.compile(NAME_RE), NAME_WHAT)
        annotations = meta.get("annotations")
        if "annotations" in meta and not self.collect(found, self.mapping, annotations, "metadata.annotations"):
            return
        for key, value in sorted((annotations or {}).items(), key=lambda kv: str(kv[0])):
            path = field("metadata.annotations", key)
            if key == DISPLAY_NAME_ANNOTATION:
                self.collect(found, self.text, value, path, False, MAX_DISPLAY_NAME)
            else:
                self.collect(found, self.text, value, path, False, MAX_MANIFEST_BYTES, True)

    def spec(self, found, spec):
        """spec: the version, at least one image, and the operator's image."""
        self.collect(found, self.pattern, spec["version"], "spec.version", re.compile(VERSION_RE), VERSION_WHAT)
        if self.collect(found, self.listing, spec["images"], "spec.images"):
            if not spec["images"]:
                self.collect(found, self.fail, "spec.images", "must list at least one image, not an empty list")
            for i, image in enumerate(spec["images"]):
                self.collect(found, self.image, image, "spec.images[%d]" % i)
        if self.collect(found, self.keys, spec["operator"], "spec.operator", ("image",), ()):
            self.collect(found, self.image, spec["operator"]["image"], "spec.operator.image")

    def image(self, image, path):
        """An image: ``name`` and ``tag``, nothing else (raises at the first wrong field)."""
        self.keys(image, path, ("name", "tag"), ())
        self.pattern(image["name"], path + ".name", re.compile(IMAGE_NAME_RE), IMAGE_NAME_WHAT)
        if len(image["name"]) > MAX_IMAGE_NAME:
            self.fail(path + ".name", "must be at most %d characters, not %d" % (MAX_IMAGE_NAME, len(image["name"])))
        self.pattern(image["tag"], path + ".tag", re.compile(TAG_RE), TAG_WHAT)


def check_manifest_data(data):
    """Problems (strings ``manifest.yaml: FIELD: ...``, one per wrong field) in a parsed manifest.yaml."""
    shape = ManifestShape()
    problems = shape.problems(data)
    if problems:
        return problems
    spec = data["spec"]
    seen = set()
    for i, img in enumerate(spec["images"]):
        key = (img["name"], img["tag"])
        if key in seen:
            shape.collect(problems, shape.fail, "spec.images[%d]" % i, "%s:%s is listed twice" % key)
        seen.add(key)
    check_listing(shape, problems, data["metadata"]["name"], spec)
    return problems


def check_listing(shape, problems, name, spec):
    """What a manifest's shape cannot say, into ``problems``: the operator image is listed in
    spec.images, and every name that becomes a path is one safe path component."""
    op = spec["operator"]["image"]
    if (op["name"], op["tag"]) not in {(i["name"], i["tag"]) for i in spec["images"]}:
        shape.collect(problems, shape.fail, "spec.operator.image",
                      "%s:%s is not listed in spec.images; list it there too" % (op["name"], op["tag"]))
    try:  # what becomes a path: <name>-<version>, images/<name>/<tag>, <name>_<tag>.oci.tar
        fileio.safe_name("%s-%s" % (name, spec["version"]), "solution name and version")
        for img in spec["images"]:
            for part in img["name"].split("/") + [img["tag"]]:
                fileio.safe_name(part, "image name or tag")
    except fileio.PathEscapeError as exc:
        shape.collect(problems, shape.fail, "", str(exc))


def image_dir_problem(name, tag):
    """Why ``images/<name>/<tag>/`` is not an image directory (the name and tag rules of
    spec.images, whether or not the manifest lists images), or None."""
    wrong = []
    if not re.match(IMAGE_NAME_RE, name) or len(name) > MAX_IMAGE_NAME:
        wrong.append("the name %s must be %s (at most %d characters)" % (excerpt(name, 80), IMAGE_NAME_WHAT, MAX_IMAGE_NAME))
    if not re.match(TAG_RE, tag):
        wrong.append("the tag %s must be %s" % (excerpt(tag, 80), TAG_WHAT))
    return "not an image directory images/NAME/TAG: %s" % "; ".join(wrong) if wrong else None


def normalised(data):
    """The normalised manifest (the form every later stage reads, for every flavour) of a valid
    mooring manifest: flavour, metadata (name, labels, annotations, display_name) and spec."""
    meta, spec = data["metadata"], data["spec"]
    annotations = dict(meta.get("annotations") or {})
    return {
        "flavour": "mooring",
        "metadata": {"name": meta["name"], "labels": {}, "annotations": annotations,
                     "display_name": annotations.get(DISPLAY_NAME_ANNOTATION, meta["name"])},
        "spec": {"version": spec["version"], "images": [dict(i) for i in spec["images"]],
                 "operator": {"image": dict(spec["operator"]["image"])}},
    }
