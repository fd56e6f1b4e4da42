# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's installer specs (lab tooling): tests/lab/installer.yaml, and the same spec at the versions an
upgrade starts from (tests/lab/previous.yaml), as text with the spec's comments kept."""

import re
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
LAB_SPEC = HERE / "installer.yaml"
PREVIOUS = HERE / "previous.yaml"


class SpecError(Exception):
    pass


def previous(which):
    """{add-on: version} of tests/lab/previous.yaml's entry ``which`` (``patch``)."""
    doc = yaml.safe_load(PREVIOUS.read_text()) or {}
    if which not in doc:
        raise SpecError("%s: no entry %r (have: %s)" % (PREVIOUS, which, ", ".join(sorted(doc))))
    return {str(k): str(v) for k, v in doc[which].items()}


def pin_versions(text, versions):
    """``text`` (an Installer spec) with ``spec.<add-on>.version`` set to each of ``versions``; every add-on named
    must be in the spec with a ``version:`` line of its own."""
    for addon, version in sorted(versions.items()):
        pattern = re.compile(r"(\n  %s:\n(?:    .*\n|\s*\n)*?    version: )(\S+)" % re.escape(addon))
        text, n = pattern.subn(lambda m, v=version: m.group(1) + v, text, count=1)
        if n != 1:
            raise SpecError("the spec has no spec.%s.version line to pin to %s" % (addon, version))
    return text


def without(text, addons):
    """``text`` (an Installer spec) without ``spec.<add-on>`` for each of ``addons``, and the comment lines just above
    each; every add-on named must be in the spec."""
    for addon in addons:
        pattern = re.compile(r"\n(?:  #.*\n)*  %s:\n(?:    .*\n|\s*\n)*" % re.escape(addon))
        text, n = pattern.subn("\n", text, count=1)
        if n != 1:
            raise SpecError("the spec has no spec.%s to leave out" % addon)
    return text


def spec_text(upgrade_from=None):
    """tests/lab/installer.yaml's text, at tests/lab/previous.yaml's versions ``upgrade_from`` when given."""
    text = LAB_SPEC.read_text()
    return pin_versions(text, previous(upgrade_from)) if upgrade_from else text
