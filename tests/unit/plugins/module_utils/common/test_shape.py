# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one shape checker: every refusal is ``WHERE: PATH: must be EXPECTED, not FOUND``."""

from __future__ import annotations

import re

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common import shape
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


class _DocError(MooringError):
    pass


def _refusal(call):
    with pytest.raises(_DocError) as info:
        call(shape.Shape("doc.yaml", _DocError))
    return str(info.value)


@pytest.mark.parametrize("call, message", [
    (lambda s: s.mapping([], "spec"), "doc.yaml: spec: must be a mapping, not a list"),
    (lambda s: s.listing("x", "spec.items"), "doc.yaml: spec.items: must be a list, not a string"),
    (lambda s: s.text("", "name"), "doc.yaml: name: must be a non-empty string, not a string"),
    (lambda s: s.text(None, "name"), "doc.yaml: name: must be a non-empty string, not nothing (null)"),
    (lambda s: s.text("abcd", "name", limit=3), "doc.yaml: name: must be at most 3 characters, not 4"),
    (lambda s: s.count(True, "size"), "doc.yaml: size: must be a whole number >= 0, not True"),
    (lambda s: s.count(-1, "size"), "doc.yaml: size: must be a whole number >= 0, not -1"),
    (lambda s: s.boolean("yes", "flag"), "doc.yaml: flag: must be true or false, not a string"),
    (lambda s: s.sha256("ABC", "a.sha256"), "doc.yaml: a.sha256: must be a sha256 (64 lowercase hex digits), not 'ABC'"),
    (lambda s: s.one_of("arm", "arch", ("amd64", "arm64")), "doc.yaml: arch: must be one of amd64, arm64, not 'arm'"),
    (lambda s: s.keys({"a": 1}, "spec", required=("b",)), "doc.yaml: spec.b: is missing"),
    (lambda s: s.keys({"a": 1, "z z": 2}, "spec", allowed=("a",)), "doc.yaml: spec.'z z': is not a known field (known: a)"),
    (lambda s: s.json_shaped({"a": [1, {2: 3}]}, "lock"), "doc.yaml: lock.a[1][2]: must be a key that is a string, not a number"),
    (lambda s: s.json_shaped({"a": {1.5j}}, "lock"), "doc.yaml: lock.a: must be a JSON value, not a set"),
])
def test_one_line_per_refusal(call, message):
    assert _refusal(call) == message


def test_accepted_values_come_back_and_optional_defaults():
    s = shape.Shape("doc.yaml", _DocError)
    assert s.mapping(None, "x", optional=True) == {}
    assert s.listing(None, "x", optional=True) == []
    assert s.text(None, "x", optional=True) is None
    assert s.text("", "x", empty=True) == ""
    assert s.count(0, "x") == 0
    assert s.pattern("v1", "x", re.compile(r"^v\d$"), "a version") == "v1"
    assert s.json_shaped({"a": [1, "b", None, 2.5]}, "x") is None


def test_a_long_value_is_quoted_bounded():
    message = _refusal(lambda s: s.pattern("x" * 500, "name", re.compile("^y$"), "a y"))
    assert len(message) < 140 and message.endswith("...")


def test_the_default_error_is_the_base():
    with pytest.raises(MooringError, match="^doc: x: must be a mapping, not a number$"):
        shape.Shape("doc").mapping(3, "x")


def test_field_paths():
    assert shape.field("", "spec") == "spec"
    assert shape.field("spec", 3) == "spec[3]"
    assert shape.field("spec", "a.b") == "spec.'a.b'"
