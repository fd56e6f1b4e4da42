# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test helper: validate Cluster API / CAPO objects against the CRD schemas in tests/data/capi
(see its README), converted from OpenAPI v3 to JSON Schema and strict about unknown fields.

``SCHEMAS`` holds the base file of every kind (``<kind>-<version>.yaml``); a file with a
suffix (``clusterclass-v1beta1-variables.yaml``) is a later release of the same kind, chosen
with ``load_schemas("clusterclass-v1beta1-variables.yaml")``.
"""

from __future__ import annotations

import glob
import os

import jsonschema
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
SCHEMA_DIR = os.path.join(ROOT, "tests", "data", "capi")


def openapi_to_jsonschema(node):
    """OpenAPI v3 (structural CRD schema) -> JSON Schema, strict about unknown fields."""
    if isinstance(node, list):
        return [openapi_to_jsonschema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-"):
            continue
        if key in ("properties",):
            out[key] = {k: openapi_to_jsonschema(v) for k, v in value.items()}
        else:
            out[key] = openapi_to_jsonschema(value)
    if node.get("x-kubernetes-int-or-string") and "anyOf" not in out:
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if out.pop("nullable", False) and "type" in out:
        out["type"] = [out["type"], "null"]
    if "properties" in out and "additionalProperties" not in out and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


def _load_files():
    files = {}
    for path in sorted(glob.glob(os.path.join(SCHEMA_DIR, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        key = ("%s/%s" % (doc["group"], doc["version"]), doc["kind"])
        files[os.path.basename(path)] = (key, openapi_to_jsonschema(doc["openAPIV3Schema"]))
    return files


FILES = _load_files()


def load_schemas(*files):
    """(apiVersion, kind) -> JSON Schema: every base file, then each of ``files`` over its kind."""
    schemas = {}
    for name, (key, schema) in FILES.items():
        if name == "%s-%s.yaml" % (key[1].lower(), key[0].rsplit("/", 1)[1]):
            schemas[key] = schema
    for name in files:
        key, schema = FILES[name]
        schemas[key] = schema
    return schemas


SCHEMAS = load_schemas()


def validate(obj, schemas=None):
    """One line per schema violation of ``obj`` (path: message); [] when it is valid."""
    schema = (schemas or SCHEMAS)[(obj["apiVersion"], obj["kind"])]
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message) for e in errors]
