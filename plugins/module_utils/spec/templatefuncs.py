# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the functions kURL templates may call.

Go's builtins (``and or not eq ne lt le gt ge len index print printf println``) and the Sprig functions
kURL's host preflight files use or may use, in :data:`FUNCS`: ``name: (function, least args, most args
or None)``; ``and``/``or`` have no function (the evaluator stops at the deciding operand).
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatesemver import semver_compare
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatevalues import (
    EMPTY,
    Empty,
    Fail,
    go_format,
    go_quote,
    go_type,
    kind_of,
    str_arg,
    to_string,
    truth,
)


def _zero_like(value, other):
    if value is not EMPTY:
        return value
    return {"bool": False, "int": 0, "float": 0.0}.get(kind_of(other), "")


def _equal(left, right):
    left, right = _zero_like(left, right), _zero_like(right, left)
    kinds = (kind_of(left), kind_of(right))
    if "nil" in kinds:
        return kinds[0] == kinds[1]
    if kinds[0] not in ("bool", "int", "float", "string") or kinds[1] not in ("bool", "int", "float", "string"):
        raise Fail("non-comparable type %s" % go_type(left if kinds[0] in ("list", "map") else right))
    if kinds[0] != kinds[1]:
        raise Fail("incompatible types for comparison: %s and %s" % kinds)
    return left == right


def _less(left, right):
    left, right = _zero_like(left, right), _zero_like(right, left)
    kinds = (kind_of(left), kind_of(right))
    if kinds[0] not in ("int", "float", "string"):
        raise Fail("invalid type for comparison: %s" % kinds[0])
    if kinds[0] != kinds[1]:
        raise Fail("incompatible types for comparison: %s and %s" % kinds)
    return left < right


def _eq(first, *others):
    if not others:
        raise Fail("missing argument for comparison")
    return any(_equal(first, other) for other in others)


def _len(value):
    if value is EMPTY:
        return 0
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, (list, tuple, dict)):
        return len(value)
    raise Fail("len of type %s" % go_type(value))


def _index(item, *keys):
    for key in keys:
        if item is EMPTY or isinstance(item, dict):
            if isinstance(key, (list, tuple, dict)) or (item is EMPTY and not isinstance(key, str)):
                raise Fail("can't index item of type %s with %s" % (go_type(item), go_type(key)))
            found = None if item is EMPTY else item.get(key)
            item = EMPTY if found is None else found
        elif isinstance(item, (list, tuple, str)) and kind_of(key) == "int":
            seq = item.encode("utf-8") if isinstance(item, str) else item
            if not 0 <= key < len(seq):
                raise Fail("index out of range: %d" % key)
            item = seq[key]
        else:
            raise Fail("can't index item of type %s with %s" % (go_type(item), go_type(key)))
    return item


def _print(*args):
    out = []
    for at, arg in enumerate(args):
        if at and not isinstance(arg, (str, Empty)) and not isinstance(args[at - 1], (str, Empty)):
            out.append(" ")
        out.append(go_format(arg))
    return "".join(out)


def _verb(spec, verb, arg):
    """One printf conversion (``spec`` is "%" with flags, width, precision); a wrong type prints as Go's does."""
    kind = kind_of(arg)
    if verb == "v" or (verb == "s" and kind in ("string", "empty", "list", "map")) or (verb == "t" and kind == "bool"):
        return (spec + "s") % go_format(arg)
    if verb == "q" and kind in ("string", "empty"):
        return (spec + "s") % go_quote(str_arg(arg))
    if (verb in "dxXoc" and kind == "int") or (verb in "feEgG" and kind == "float"):
        return (spec + verb) % arg
    return "%%!%s(%s)" % (verb, "<nil>" if arg is None else "%s=%s" % (go_type(arg), go_format(arg)))


def _printf(form, *args):
    out, used, pos, form = [], 0, 0, str_arg(form)
    for match in re.finditer(r"(%[-+# 0]*\d*(?:\.\d*)?)([a-zA-Z%])", form):
        out.append(form[pos:match.start()])
        pos = match.end()
        if match.group(2) == "%":
            out.append("%")
        elif used >= len(args):
            out.append("%%!%s(MISSING)" % match.group(2))
        else:
            out.append(_verb(match.group(1), match.group(2), args[used]))
            used += 1
    out.append(form[pos:])
    if used < len(args):
        out.append("%!(EXTRA " + ", ".join("%s=%s" % (go_type(a), go_format(a)) for a in args[used:]) + ")")
    return "".join(out)


def _has(needle, haystack):
    if haystack is None or haystack is EMPTY:
        return False
    if not isinstance(haystack, (list, tuple)):
        raise Fail("cannot find has on type %s" % go_type(haystack))
    return any(kind_of(item) == kind_of(needle) and item == needle for item in haystack)


def _ternary(if_true, if_false, condition):
    if condition is EMPTY:
        condition = False
    if not isinstance(condition, bool):
        raise Fail("wrong type for value; expected bool; got %s" % go_type(condition))
    return if_true if condition else if_false


def _join(sep, values):
    values = [] if values is EMPTY or values is None else values if isinstance(values, (list, tuple)) else [values]
    return str_arg(sep).join(to_string(v) for v in values if v is not None)


FUNCS = {
    # name: (function, least args, most args or None)
    "and": (None, 1, None), "or": (None, 1, None),
    "not": (lambda v: not truth(v), 1, 1),
    "eq": (_eq, 1, None), "ne": (lambda a, b: not _equal(a, b), 2, 2),
    "lt": (_less, 2, 2), "le": (lambda a, b: _less(a, b) or _equal(a, b), 2, 2),
    "gt": (lambda a, b: not (_less(a, b) or _equal(a, b)), 2, 2), "ge": (lambda a, b: not _less(a, b), 2, 2),
    "len": (_len, 1, 1), "index": (_index, 1, None),
    "print": (_print, 0, None), "printf": (_printf, 1, None),
    "println": (lambda *a: " ".join(go_format(v) for v in a) + "\n", 0, None),
    "semverCompare": (semver_compare, 2, 2),
    "default": (lambda d, *given: d if not given or not truth(given[0]) else given[0], 1, None),
    "empty": (lambda v: not truth(v), 1, 1),
    "coalesce": (lambda *a: next((v for v in a if truth(v)), None), 0, None),
    "contains": (lambda sub, s: str_arg(sub) in str_arg(s), 2, 2),
    "hasPrefix": (lambda pre, s: str_arg(s).startswith(str_arg(pre)), 2, 2),
    "hasSuffix": (lambda suf, s: str_arg(s).endswith(str_arg(suf)), 2, 2),
    "trim": (lambda s: str_arg(s).strip(), 1, 1),
    "trimPrefix": (lambda pre, s: str_arg(s)[len(str_arg(pre)):] if str_arg(s).startswith(str_arg(pre)) else str_arg(s), 2, 2),
    "trimSuffix": (lambda suf, s: str_arg(s)[:len(str_arg(s)) - len(str_arg(suf))] if str_arg(s).endswith(str_arg(suf)) else str_arg(s), 2, 2),
    "lower": (lambda s: str_arg(s).lower(), 1, 1), "upper": (lambda s: str_arg(s).upper(), 1, 1),
    "toString": (to_string, 1, 1),
    "quote": (lambda *a: " ".join(go_quote(to_string(v)) for v in a if v is not None), 0, None),
    "squote": (lambda *a: " ".join("'%s'" % to_string(v) for v in a if v is not None), 0, None),
    "ternary": (_ternary, 3, 3), "list": (lambda *a: list(a), 0, None), "has": (_has, 2, 2),
    "join": (_join, 2, 2),
}
