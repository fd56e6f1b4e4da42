# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: Sprig's ``semverCompare`` in kURL templates (Masterminds semver constraints).

:func:`semver_compare` takes a constraint (``>= 1.24, < 1.27 || ~1.28.x``) and a version and says whether
the version satisfies it, as Sprig's function does (a version that does not parse is false here).

A constraint longer than :data:`MAX_CONSTRAINT` characters is refused, and a version that long does not parse:
the regular expressions below cost up to the square of their input's length (a real one is a few dozen).
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatevalues import Fail, str_arg

_CV = r"v?([0-9xX*]+)(?:\.([0-9xX*]+))?(?:\.([0-9xX*]+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
_TERM = re.compile(r"\s*(!=|>=|=>|<=|=<|~>|>|<|=|~|\^)?\s*" + _CV + r"\s*")
_HYPHEN = re.compile(r"(%s)\s+-\s+(%s)" % (re.sub(r"\((?!\?)", "(?:", _CV), re.sub(r"\((?!\?)", "(?:", _CV)))
MAX_CONSTRAINT = 256
_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?")


def _version(text):
    match = _VERSION.fullmatch(text) if len(text) <= MAX_CONSTRAINT else None
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups()[:3]) + (match.group(4) or "",)


def _compare(left, right):
    if left[:3] != right[:3]:
        return -1 if left[:3] < right[:3] else 1
    if left[3] == right[3]:
        return 0
    if not left[3] or not right[3]:
        return 1 if not left[3] else -1
    keys = [[(0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")] for pre in (left[3], right[3])]
    return -1 if keys[0] < keys[1] else 1


def _constraint_term(match):
    """(op, bound version, which part is a wildcard or missing: "major", "minor", "patch" or None)."""
    op, major, minor, patch, pre = match.groups()
    parts = [major, minor, patch]
    wild = next((at for at, part in enumerate(parts) if part is None or part in ("x", "X", "*")), None)
    fixed = parts if wild is None else parts[:wild]
    if not all(part.isdigit() for part in fixed):
        raise Fail("improper constraint: %s" % match.group().strip())
    bound = tuple(int(part) for part in fixed) + (0,) * (3 - len(fixed)) + (pre or "",)
    op = {"=>": ">=", "=<": "<=", "~>": "~", "=": ""}.get(op or "", op or "")
    return op, bound, None if wild is None else ("major", "minor", "patch")[wild]


def _constraint(text):
    """The constraint as OR groups of AND terms (op, bound version, which part is a wildcard)."""
    if len(text) > MAX_CONSTRAINT:
        raise Fail("improper constraint: longer than %d characters" % MAX_CONSTRAINT)
    groups = []
    for group in _HYPHEN.sub(lambda m: ">= %s, <= %s" % m.groups(), text).split("||"):
        terms, pos = [], 0
        while True:
            match = _TERM.match(group, pos)
            if not match:
                raise Fail("improper constraint: %s" % text)
            terms.append(_constraint_term(match))
            pos = match.end()
            if pos == len(group):
                break
            if group[pos] == ",":
                pos += 1
            elif not group[pos - 1].isspace():
                raise Fail("improper constraint: %s" % text)
        groups.append(terms)
    return groups


def _satisfies(version, op, bound, dirty):
    if version[3] and not bound[3] and (op != "!=" or dirty):
        return False  # a pre-release only matches a constraint that names one
    order = _compare(version, bound)
    same_major, same_minor = version[0] == bound[0], version[1] == bound[1]
    if op == "" and dirty:
        op = "~"
    if op == "!=":
        if dirty and dirty != "major":
            return not same_major or (dirty == "patch" and not same_minor)
        return order != 0
    if op == ">":
        if dirty and dirty != "major" and same_major:
            return dirty == "patch" and version[1] > bound[1]
        return version[0] > bound[0] if dirty and dirty != "major" else order > 0
    if op == "<=" and dirty:
        return version[0] < bound[0] or (same_major and (version[1] <= bound[1] or dirty == "minor"))
    if op in ("~", "^"):
        return order >= 0 and _near(op, version, bound, dirty)
    return {"": order == 0, "<": order < 0, ">=": order >= 0, "<=": order <= 0}[op]


def _near(op, version, bound, dirty):
    if op == "~":
        if bound[:3] == (0, 0, 0) and dirty in (None, "major"):
            return True
        return version[0] == bound[0] and (version[1] == bound[1] or dirty == "minor")
    if bound[0] > 0 or dirty == "minor":
        return version[0] == bound[0]
    if version[0] > 0:
        return False
    if bound[1] > 0 or dirty == "patch":
        return version[1] == bound[1]
    return version[1] == 0 and version[2] == bound[2]


def semver_compare(constraint, version):
    groups = _constraint(str_arg(constraint))
    parsed = _version(str_arg(version))
    if parsed is None:
        # Sprig's semverCompare returns an error for a version that does not parse (kURL's
        # files guard with `or (not .Version) ...`); here it is false, so "1.35.x" or "" never fails.
        return False
    return any(all(_satisfies(parsed, *term) for term in terms) for terms in groups)
