# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the solution manifest (manifest.yaml): its schema and its checks.

:data:`MANIFEST_SCHEMA` is the shape of ``kind: Solution``; :func:`check_manifest_data` lists
every problem of a parsed manifest, each naming its field, including what the schema cannot say
(an image listed twice, the operator image not listed, names that would not be safe paths).
"""


from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import HAS_JSONSCHEMA, JSONSCHEMA_IMPORT_ERROR, jsonschema, require

API_VERSION = "solutions.mooring.io/v1alpha1"
KIND = "Solution"
DISPLAY_NAME_ANNOTATION = "solutions.mooring.io/display-name"

# Patterns end with \Z, not $: jsonschema searches with Python's re, where $ also matches
# before a final newline ("example\n" would pass and become part of a path).
NAME_RE = r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?\Z"
IMAGE_NAME_RE = r"^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*\Z"
TAG_RE = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z"
VERSION_RE = (
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?\Z"
)

MANIFEST_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": API_VERSION},
        "kind": {"const": KIND},
        "metadata": {
            "type": "object",
            "required": ["name"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "pattern": NAME_RE},
                "annotations": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "properties": {DISPLAY_NAME_ANNOTATION: {"type": "string", "minLength": 1, "maxLength": 128}},
                },
            },
        },
        "spec": {
            "type": "object",
            "required": ["version", "images", "operator"],
            "additionalProperties": False,
            "properties": {
                "version": {"type": "string", "pattern": VERSION_RE},
                "images": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["name", "tag"],
                        "additionalProperties": False,
                        "properties": {
                            "name": {"type": "string", "pattern": IMAGE_NAME_RE, "maxLength": 128},
                            "tag": {"type": "string", "pattern": TAG_RE},
                        },
                    },
                },
                "operator": {
                    "type": "object",
                    "required": ["image"],
                    "additionalProperties": False,
                    "properties": {
                        "image": {
                            "type": "object",
                            "required": ["name", "tag"],
                            "additionalProperties": False,
                            "properties": {
                                "name": {"type": "string", "pattern": IMAGE_NAME_RE},
                                "tag": {"type": "string", "pattern": TAG_RE},
                            },
                        }
                    },
                },
            },
        },
    },
}


def _schema_path(error):
    out = ""
    for p in error.absolute_path:
        out += "[%d]" % p if isinstance(p, int) else ("." if out else "") + str(p)
    return out or "(document)"


def check_manifest_data(data):
    """Problems (strings, each naming the field) in a parsed manifest.yaml."""
    require(HAS_JSONSCHEMA, "jsonschema", JSONSCHEMA_IMPORT_ERROR)
    if not isinstance(data, dict):
        return ["(document): must be a mapping with apiVersion, kind, metadata and spec"]
    validator = jsonschema.Draft7Validator(MANIFEST_SCHEMA)
    problems = []
    for err in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        if err.validator == "pattern":
            msg = "%s does not match %s" % (excerpt(err.instance), err.validator_value)
        elif err.validator == "const":
            msg = "must be %r, got %s" % (err.validator_value, excerpt(err.instance))
        elif err.validator == "additionalProperties":
            extra = sorted(str(k) for k in err.instance if k not in (err.schema.get("properties") or {}))
            msg = "unknown field(s) %s" % excerpt(", ".join(extra), 200)
        elif err.validator == "type":
            msg = "%s is not of type %r" % (excerpt(err.instance), err.validator_value)
        else:
            msg = err.message if len(err.message) <= 200 else err.message[:197] + "..."
        problems.append("%s: %s" % (_schema_path(err), msg))
    if problems:
        return problems
    spec = data["spec"]
    seen = set()
    for i, img in enumerate(spec["images"]):
        key = (img["name"], img["tag"])
        if key in seen:
            problems.append("spec.images[%d]: %s:%s is listed twice" % (i, key[0], key[1]))
        seen.add(key)
    op = spec["operator"]["image"]
    if (op["name"], op["tag"]) not in seen:
        problems.append(
            "spec.operator.image: %s:%s is not listed in spec.images; list it there too" % (op["name"], op["tag"])
        )
    try:  # what becomes a path: <name>-<version>, images/<name>/<tag>, <name>_<tag>.oci.tar
        fileio.safe_name("%s-%s" % (data["metadata"]["name"], spec["version"]), "solution name and version")
        for img in spec["images"]:
            for part in img["name"].split("/") + [img["tag"]]:
                fileio.safe_name(part, "image name or tag")
    except fileio.PathEscapeError as exc:
        problems.append("%s" % exc)
    return problems
