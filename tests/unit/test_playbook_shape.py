# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run-shape rule of docs/DEVELOPING.md: a playbook is the order of its run, at most 100 lines, without YAML
anchors; what several plays pass to one role is a file of playbooks/vars/ that exists and is a mapping."""

from __future__ import annotations

import os

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOKS = os.path.join(ROOT, "playbooks")
NAMES = sorted(n for n in os.listdir(PLAYBOOKS) if n.endswith(".yml"))
MAX_LINES = 100


class _Events(yaml.SafeLoader):
    pass


def _anchors(text):
    """The anchors and aliases in ``text``, from the YAML parser's own events (a ``&`` in a string is not one)."""
    found = []
    for event in yaml.parse(text, Loader=_Events):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            found.append(event.anchor)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_a_playbook_is_short_and_has_no_anchors(name):
    with open(os.path.join(PLAYBOOKS, name), encoding="utf-8") as handle:
        text = handle.read()
    assert len(text.splitlines()) <= MAX_LINES, "%s: %d lines" % (name, len(text.splitlines()))
    assert not _anchors(text), "%s: YAML anchors or aliases %s" % (name, _anchors(text))
    for play in yaml.safe_load(text):
        for path in play.get("vars_files", []):
            full = os.path.join(PLAYBOOKS, path)
            assert os.path.dirname(os.path.abspath(full)) == os.path.join(PLAYBOOKS, "vars"), (name, path)
            with open(full, encoding="utf-8") as handle:
                assert isinstance(yaml.safe_load(handle), dict), (name, path)


def test_the_rule_sees_an_anchor():
    assert _anchors("a: &x {b: 1}\nc: *x\n") == ["x", "x"]
    assert not _anchors("a: 'b & c'\n")
