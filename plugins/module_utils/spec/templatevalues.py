# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the values of kURL's ``{{kurl ...}}`` templates as Go sees them.

Go's kinds and type names, its truth, how ``fmt`` prints a value (``%v``) and quotes a string (``%q``),
kURL's empty field (:data:`EMPTY`) and :class:`Fail`, the one problem an action raises (turned into a
``KurlTemplateError`` naming the action by :mod:`spec.kurltemplate`). Standard library only.
"""

from __future__ import annotations

import math

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

_QUOTED = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"'}


class Empty(object):
    """The zero value of a field kURL's typed Installer has and the document leaves out."""

    __slots__ = ()

    def __repr__(self):
        return "EMPTY"


EMPTY = Empty()


class Fail(MooringError):
    """Internal: one problem, turned into a :class:`KurlTemplateError` with the action it is in."""

    def __init__(self, problem, item=None):
        super().__init__(problem)
        self.problem, self.item = problem, item


def kind_of(value):
    if value is None:
        return "nil"
    if value is EMPTY:
        return "empty"
    for kind, types in (("bool", bool), ("int", int), ("float", float), ("string", str), ("list", (list, tuple)), ("map", dict)):
        if isinstance(value, types):
            return kind
    return type(value).__name__


def go_type(value):
    return {"nil": "<nil>", "empty": "string", "float": "float64", "list": "[]interface {}",
            "map": "map[string]interface {}"}.get(kind_of(value), kind_of(value))


def truth(value):
    if value is None or value is EMPTY:
        return False
    return bool(value) if isinstance(value, (bool, int, float, str, list, tuple, dict)) else True


def go_float(value):
    """A float as Go's %v prints it: shortest digits, exponent form below 1e-4 and from 1e+06."""
    if math.isnan(value) or math.isinf(value):
        return "NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    mantissa, _sep, exp = repr(abs(value)).partition("e")
    whole, _dot, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + int(exp or 0) - (len(whole + frac) - len(digits))
    digits = digits.rstrip("0")
    sign = "-" if value < 0 else ""
    if not -4 <= point - 1 < 6:
        frac = "." + digits[1:] if len(digits) > 1 else ""
        return "%s%s%se%s%02d" % (sign, digits[0], frac, "-" if point < 1 else "+", abs(point - 1))
    if point <= 0:
        return "%s0.%s%s" % (sign, "0" * -point, digits)
    return sign + digits[:point].ljust(point, "0") + ("." + digits[point:] if len(digits) > point else "")


def go_format(value):
    """``value`` as Go's fmt prints it with %v (nil is ``<nil>``, kURL's zero field ``""``)."""
    kind = kind_of(value)
    if kind == "nil":
        return "<nil>"
    if kind == "empty":
        return ""
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float":
        return go_float(value)
    if kind == "list":
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if kind == "map":
        return "map[" + " ".join("%s:%s" % (go_format(k), go_format(value[k])) for k in sorted(value, key=str)) + "]"
    return str(value)


def go_quote(text):
    out = []
    for ch in text:
        if ch in _QUOTED:
            out.append(_QUOTED[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append("\\x%02x" % code if code < 0x80 else "\\u%04x" % code if code < 0x10000 else "\\U%08x" % code)
    return '"' + "".join(out) + '"'


def find_key(mapping, name):
    if name in mapping:
        return name
    folded = name.casefold()
    return next((key for key in mapping if isinstance(key, str) and key.casefold() == folded), None)


def str_arg(value):
    if value is EMPTY:
        return ""
    if not isinstance(value, str):
        raise Fail("wrong type for value; expected string; got %s" % go_type(value))
    return value


def to_string(value):
    return value if isinstance(value, str) else go_format(value)
