# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the values of kURL's ``{{kurl ...}}`` templates as Go sees them.

Go's kinds and type names, its truth, how ``fmt`` prints a value (``%v``) and quotes a string (``%q``),
kURL's empty field (:data:`EMPTY`) and :class:`Fail`, the one problem an action raises (turned into a
``KurlTemplateError`` naming the action by :mod:`spec.kurltemplate`). Standard library only.

:class:`Budget` is what one evaluation may spend (Go's text/template has no such bounds; kURL renders its own
files, here they are the user's): :data:`MAX_TOKENS` tokens read, :data:`MAX_STEPS` steps, strings and rendered
text of at most :data:`MAX_STRING` characters, values and templates nested at most :data:`MAX_DEPTH` levels. A step is one node,
range iteration, operand, function call or printf verb, or :data:`CHARS_PER_STEP` characters a function reads or
builds. Each size is checked before its string is built; a limit reached raises :class:`Bound`.
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


MAX_STEPS = 1000000       # a kURL-shaped host preflight file takes about 150
MAX_TOKENS = 50000        # read (lexed and parsed): an action and each word, literal or operator in it; kURL's: ~120
MAX_STRING = 1024 * 1024  # characters: any one string built, and the rendered text (yamlio reads at most 1 MiB)
MAX_DEPTH = 100           # nested if/with/range/else-if and parentheses; nested lists and maps printed or compared
CHARS_PER_STEP = 16       # characters read or built per step: 1,000,000 steps build at most 16 M characters


class Fail(MooringError):
    """Internal: one problem, turned into a :class:`KurlTemplateError` with the action it is in."""

    def __init__(self, problem, item=None):
        super().__init__(problem)
        self.problem, self.item = problem, item


class Bound(Fail):
    """Internal: a limit of :class:`Budget` reached (never reworded as a function's own error)."""


class Budget(object):
    """What one evaluation may still spend: steps (``left``), tokens read (``tokens``) and characters of rendered
    text (``output``)."""

    __slots__ = ("left", "tokens", "output")

    def __init__(self, steps=MAX_STEPS):
        self.left, self.tokens, self.output = steps, 0, 0

    def read(self, count):
        """Before parsing ``count`` more tokens."""
        self.tokens += count
        if self.tokens > MAX_TOKENS:
            raise Bound("the template has more than %d tokens (actions, and the words, literals and operators in them)"
                        % MAX_TOKENS)

    def spend(self, steps=1):
        self.left -= steps
        if self.left < 0:
            raise Bound("the template takes more than %d evaluation steps (a loop too long, or too much text)" % MAX_STEPS)

    def chars(self, count):
        """Charge for reading or building ``count`` characters."""
        if count >= CHARS_PER_STEP:
            self.spend(count // CHARS_PER_STEP)

    def string(self, size, what="a string"):
        """Before building a string of ``size`` characters: refused over :data:`MAX_STRING`, else charged."""
        if size > MAX_STRING:
            raise Bound("%s of %d characters is over the limit of %d" % (what, size, MAX_STRING))
        self.chars(size)

    def emit(self, size):
        """Before adding ``size`` characters to the rendered text."""
        self.output += size
        if self.output > MAX_STRING:
            raise Bound("the rendered text is over the limit of %d characters" % MAX_STRING)


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


def _scalar(value, kind):
    if kind == "nil":
        return "<nil>"
    if kind == "empty":
        return ""
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float":
        return go_float(value)
    return value if kind == "string" else str(value)


def _parts(item, kind, depth, budget):
    """The pieces of one list or map as go_format prints it: strings, and (element, its depth) to print."""
    if depth > MAX_DEPTH:
        raise Bound("a value nested deeper than %d levels cannot be printed" % MAX_DEPTH)
    budget.spend(1 + len(item))
    parts = ["[" if kind == "list" else "map["]
    for at, key in enumerate(item if kind == "list" else sorted(item, key=str)):
        if at:
            parts.append(" ")
        if kind == "list":
            parts.append((key, depth + 1))
        else:
            parts.extend((go_format(key, budget) + ":", (item[key], depth + 1)))
    parts.append("]")
    return parts


def go_format(value, budget=None):
    """``value`` as Go's fmt prints it with %v (nil is ``<nil>``, kURL's zero field ``""``). A list or map is
    walked without recursion, each element a step of ``budget`` (a fresh one when None), nested at most
    :data:`MAX_DEPTH` levels and printed in at most :data:`MAX_STRING` characters (checked before the join)."""
    kind = kind_of(value)
    if kind not in ("list", "map"):
        return _scalar(value, kind)
    budget = Budget() if budget is None else budget
    pieces, size, todo = [], 0, [(value, 1)]
    while todo:
        part = todo.pop()
        if isinstance(part, tuple):
            item, depth = part
            kind = kind_of(item)
            if kind in ("list", "map"):
                todo.extend(reversed(_parts(item, kind, depth, budget)))
                continue
            part = _scalar(item, kind)
        size += len(part)
        if size > MAX_STRING:
            raise Bound("a value printed in more than %d characters" % MAX_STRING)
        pieces.append(part)
    budget.chars(size)
    return "".join(pieces)


def go_quote(text, budget=None):
    """``text`` as Go's %q quotes it. Printable ASCII is escaped in one pass; other text a character at a time,
    each a step of ``budget`` (a fresh one when None); at most :data:`MAX_STRING` characters either way."""
    budget = Budget() if budget is None else budget
    if text.isascii() and text.isprintable():
        budget.string(len(text) + text.count("\\") + text.count('"') + 2, "a quoted string")
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    budget.spend(len(text))
    out, size = [], 2
    for ch in text:
        if ch in _QUOTED:
            piece = _QUOTED[ch]
        elif ch.isprintable():
            piece = ch
        else:
            code = ord(ch)
            piece = "\\x%02x" % code if code < 0x80 else "\\u%04x" % code if code < 0x10000 else "\\U%08x" % code
        size += len(piece)
        if size > MAX_STRING:
            raise Bound("a quoted string of more than %d characters" % MAX_STRING)
        out.append(piece)
    return '"' + "".join(out) + '"'


def go_equal(left, right, budget):
    """Go's reflect.DeepEqual over template values (kinds must match: 1 is not 1.0), without recursion: each
    element compared is a step of ``budget`` (a string also its length), nested at most :data:`MAX_DEPTH` levels."""
    todo = [(left, right, 1)]
    while todo:
        one, other, depth = todo.pop()
        budget.spend()
        kind = kind_of(one)
        if kind != kind_of(other):
            return False
        if kind in ("list", "map"):
            if depth > MAX_DEPTH:
                raise Bound("a value nested deeper than %d levels cannot be compared" % MAX_DEPTH)
            if len(one) != len(other) or (kind == "map" and any(key not in other for key in one)):
                return False
            pairs = ((one[key], other[key]) for key in one) if kind == "map" else zip(one, other)
            todo.extend((a, b, depth + 1) for a, b in pairs)
        elif kind == "string":
            budget.chars(len(one))
            if one != other:
                return False
        elif one != other:
            return False
    return True


def fold_keys(mapping):
    """``{casefolded key: the first key of mapping with that folding}`` (Go field names against JSON keys)."""
    folded = {}
    for key in mapping:
        if isinstance(key, str):
            folded.setdefault(key.casefold(), key)
    return folded


def str_arg(value):
    if value is EMPTY:
        return ""
    if not isinstance(value, str):
        raise Fail("wrong type for value; expected string; got %s" % go_type(value))
    return value


def to_string(value, budget=None):
    return value if isinstance(value, str) else go_format(value, budget)
