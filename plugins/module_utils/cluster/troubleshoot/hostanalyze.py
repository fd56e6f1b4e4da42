# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: troubleshoot's host analyzers evaluated on the controller over what the host
collectors gathered (:func:`analyze_all`): outcomes in order, the first whose ``when`` holds wins, ``textAnalyze``
matched in linear time (:mod:`common.linre`) and ``jsonCompare`` over bounded JSON. A check that cannot be
evaluated fails with one line, never a traceback.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import json
import re

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot.hostconditions import (
    CHECKS,
    NO_NE,
    RESULT_TYPES,
    ConditionError,
    compare,
    go_int,
    tokens,
)
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot.hostpreflight import ANALYZERS, COLLECTORS, OUTCOMES
from ansible_collections.mooring.cluster.plugins.module_utils.common import linre
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


def _result(title, outcome, body):
    return {"check": title, "outcome": outcome, "message": str(body.get("message") or ""), "uri": body.get("uri") or ""}


def _first(title, outcomes, holds):
    """troubleshoot's rule: the first outcome whose ``when`` holds (no ``when``: always); None if none does."""
    for item in outcomes:
        (outcome, body), = item.items()
        body = body or {}
        when = str(body.get("when") or "")
        if not when or holds(when):
            return _result(title, outcome, body)
    return None


def _collected_for(kind, spec, collected):
    """The result the analyzer reads: its collector's default path, or the one named by ``collectorName``."""
    source = ANALYZERS[kind][0]
    pattern, default = COLLECTORS[source]
    if default is None:
        return collected.get(pattern)
    return collected.get(pattern.format(name=spec.get("collectorName") or default))


def _select_files(spec, collected):
    key = "/".join(p.strip("/") for p in (spec.get("collectorName") or "", spec.get("fileName") or "") if p)
    return {path: content for path, content in collected.items()
            if path.startswith(key) or fnmatch.fnmatchcase(path, key)}


def _text(content, path):
    """A collected result as the text a regex reads: itself, or its JSON (built only up to the bound on the text)."""
    if isinstance(content, str):
        return content
    chunks, size = [], 0
    for chunk in json.JSONEncoder(sort_keys=True).iterencode(content):
        size += len(chunk)
        if size > linre.MAX_TEXT:
            raise ConditionError("%s: the result is more than %d characters as JSON" % (path, linre.MAX_TEXT))
        chunks.append(chunk)
    return "".join(chunks)


def _search(pattern, path, text, groups):
    """``regex`` (whether it matches) or ``regexGroups`` (the named groups of the match, {} without one) over
    one file's ``text``, in linear time; a pattern Go refuses or a text over the bound is a ConditionError."""
    regex = linre.compile(pattern) if isinstance(pattern, str) else linre.Regex(pattern)
    try:
        if not groups:
            return regex.found(text)
        m = regex.search(text)
    except linre.RegexError as exc:
        raise ConditionError("%s: %s" % (path, exc)) from None
    return m.groupdict() if m else {}


def _text_analyze(title, spec, collected):
    files = _select_files(spec, collected)
    if not files:
        return None if spec.get("ignoreIfNoFiles") else _result(title, "warn", {"message": "No matching files"})
    results = []
    for path, content in sorted(files.items()):
        text = _text(content, path)
        if spec.get("regex"):
            matched = _search(spec["regex"], path, text, False)
            last = None
            for item in spec["outcomes"]:
                (outcome, body), = item.items()
                body = body or {}
                when = str(body.get("when") or ("true" if outcome == "pass" else "false")).lower() == "true"
                if when == matched:
                    last = _result(title, outcome, body)
            if last:
                results.append(last)
        elif spec.get("regexGroups"):
            groups = _search(spec["regexGroups"], path, text, True)
            results.append(_first(title, spec["outcomes"], lambda when, g=groups: _group_holds(when, g)))
    results = [r for r in results if r]
    if not results:
        return _result(title, "fail", {"message": "Invalid analyzer"})
    return max(results, key=lambda r: OUTCOMES[::-1].index(r["outcome"]))  # the worst file decides


def _group_holds(when, groups):
    name, op, value = tokens(when, 3)
    if name not in groups or groups[name] is None:
        return False
    if value in ("''", '""'):
        value = ""
    if re.match(r"^-?\d+$", value):
        if not re.match(r"^-?\d+$", groups[name]):
            return False
        return compare(op, go_int(groups[name]), go_int(value), NO_NE)
    return compare(op, groups[name], value, ("=", "==", "==="))


def _at(data, path):
    for part in [p for p in str(path).split(".") if p]:
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


def _json_equal(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return sorted(json.dumps(x, sort_keys=True) for x in a) == sorted(json.dumps(x, sort_keys=True) for x in b)
    return a == b


def _json_compare(title, spec, collected):
    key = "/".join(p.strip("/") for p in (spec.get("collectorName") or "", spec.get("fileName") or "") if p)
    if key not in collected:
        raise ConditionError("file %s was not collected" % key)
    content = collected[key]
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            raise ConditionError("%s is not JSON" % key) from None
    try:
        expected = json.loads(spec.get("value") if isinstance(spec.get("value"), str) else json.dumps(spec.get("value")))
    except ValueError:
        raise ConditionError("value is not a JSON literal") from None
    equal = _json_equal(_at(content, spec.get("path") or ""), expected)
    for item in spec["outcomes"]:
        (outcome, body), = item.items()
        body = body or {}
        when = str(body.get("when") or ("true" if outcome == "pass" else "false")).lower() == "true"
        if when == equal:
            return _result(title, outcome, body)
    return _result(title, "fail", {"message": "Invalid analyzer"})


def analyze(kind, spec, collected):
    """One analyzer over the collected results: ``{check, outcome, message, uri}``, or None when no outcome
    holds (troubleshoot then reports nothing for it)."""
    title = spec.get("checkName") or ANALYZERS[kind][1]
    try:
        if kind == "textAnalyze":
            return _text_analyze(title, spec, collected)
        if kind == "jsonCompare":
            return _json_compare(title, spec, collected)
        data = _collected_for(kind, spec, collected)
        outcomes = spec["outcomes"]
        if data is None:
            if kind == "filesystemPerformance" and (next(iter(outcomes[0].values())) or {}).get("when") == "fileNotCollected":
                return _result(title, next(iter(outcomes[0])), next(iter(outcomes[0].values())) or {})
            raise ConditionError("the %s collector's result was not collected" % ANALYZERS[kind][0])
        wanted = RESULT_TYPES.get(ANALYZERS[kind][0], dict)
        if not isinstance(data, wanted):
            raise ConditionError("the %s collector's result is %s, not %s as troubleshoot writes it" % (
                ANALYZERS[kind][0], type(data).__name__, "a list" if wanted is list else "a mapping"))
        return _first(title, outcomes, lambda when: CHECKS[kind](when, data))
    except (MooringError, ipaddress.AddressValueError, TypeError, ValueError, KeyError, ArithmeticError, re.error) as exc:
        return _result(title, "fail", {"message": "Analyzer Failed: %s" % _one_line(exc)})
    except RecursionError:
        return _result(title, "fail", {"message": "Analyzer Failed: the collected result or the value is nested too deeply"})


def _one_line(exc):
    """An exception's text on one line (a multi-line problem list joined with "; ")."""
    problems = getattr(exc, "problems", None)
    text = "; ".join(problems) if problems else str(exc)
    return " ".join(text.split()) or type(exc).__name__


def analyze_all(plan, collected):
    """Every analyzer of ``plan`` (:func:`load`) over one host's ``collected`` results, in order; checks whose
    outcomes all miss are left out, as troubleshoot leaves them out."""
    return [r for r in (analyze(kind, spec, collected) for kind, spec in plan["analyzers"]) if r]
