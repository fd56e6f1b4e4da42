# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the functions kURL templates may call.

Go's builtins (``and or not eq ne lt le gt ge len index print printf println``) and the Sprig functions
kURL's host preflight files use or may use, in :data:`FUNCS`: ``name: (function, least args, most args
or None)``; ``and``/``or`` have no function (the evaluator stops at the deciding operand). Those in
:data:`BUDGETED` take the evaluation's :class:`~spec.templatevalues.Budget` first: they build strings (each size
checked before the string is), compare nested values or parse constraints. ``printf`` is Go's fmt scanner, with
its flags, widths, precisions, ``*`` and ``[n]`` argument indexes and its error strings.
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatesemver import MAX_CONSTRAINT, semver_compare
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatevalues import (
    EMPTY,
    MAX_STRING,
    Bound,
    Empty,
    Fail,
    go_equal,
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


def _concat(budget, what, pieces, sep=""):
    """``sep`` joined ``pieces`` (an iterable: each piece is made only once those before it fit), refused as soon as
    the total passes :data:`MAX_STRING`, so the result is never built over the limit."""
    out, size = [], 0
    for piece in pieces:
        size += len(piece) + (len(sep) if out else 0)
        if size > MAX_STRING:
            raise Bound("%s is over the limit of %d characters" % (what, MAX_STRING))
        out.append(piece)
    budget.chars(size)
    return sep.join(out)


def _print(budget, *args):
    """Go's fmt.Sprint: a space between two operands when neither is a string."""
    def pieces():
        for at, arg in enumerate(args):
            if at and not isinstance(arg, (str, Empty)) and not isinstance(args[at - 1], (str, Empty)):
                yield " "
            yield go_format(arg, budget)
    return _concat(budget, "print's result", pieces())


def _println(budget, *args):
    """Go's fmt.Sprintln: the operands separated by spaces, a newline after."""
    def pieces():
        for at, arg in enumerate(args):
            if at:
                yield " "
            yield go_format(arg, budget)
        yield "\n"
    return _concat(budget, "println's result", pieces())


# Go's fmt (print.go): a width or precision beyond +-1e6 is "too large": from an argument (``*``) it prints
# %!(BADWIDTH) or %!(BADPREC) (a negative precision too) and the verb goes on without it; written in the format, the
# number's parse stops and takes the rest of the format with it, which ends in %!(NOVERB).
_WIDTH_LIMIT = 1000000
_BAD_WIDTH, _BAD_PREC, _NO_VERB = "%!(BADWIDTH)", "%!(BADPREC)", "%!(NOVERB)"
_FLAGS = "#0+- "


def _too_large(number):
    return not -_WIDTH_LIMIT <= number <= _WIDTH_LIMIT


def _number(form, at, end):
    """Go's parsenum: (number, present, next index); a number that grows too large takes the rest of the format."""
    number, present = 0, False
    while at < end and "0" <= form[at] <= "9":
        if _too_large(number):
            return 0, False, end
        number, present, at = number * 10 + ord(form[at]) - 48, True, at + 1
    return number, present, at


class _Printf(object):
    """One call of Go's fmt.Sprintf (its doPrintf) over template values; every piece's size is checked before the
    piece is built, and each verb is a step."""

    def __init__(self, budget, form, args):
        self.budget, self.form, self.args = budget, form, args
        self.out, self.size, self.reordered, self.good = [], 0, False, True
        self.close = None  # the next "]": found once, not again for every "%[" (Go looks each time)

    def add(self, piece):
        self.size += len(piece)
        if self.size > MAX_STRING:
            raise Bound("printf's result is over the limit of %d characters" % MAX_STRING)
        self.out.append(piece)

    def index(self, num, at):
        """Go's argNumber: an explicit argument index ``[n]`` at ``at``: (argument number, next index, found)."""
        if at >= len(self.form) or self.form[at] != "[":
            return num, at, False
        self.reordered = True
        if len(self.form) - at >= 3 and (self.close is None or 0 <= self.close <= at):
            self.close = self.form.find("]", at + 1)
        if len(self.form) - at < 3 or self.close < 0:
            index, width, ok = 0, 1, False
        else:
            number, present, after = _number(self.form, at + 1, self.close)
            ok = present and after == self.close
            index, width = number - 1 if ok else 0, self.close - at + 1
        if ok and 0 <= index < len(self.args):
            return index, at + width, True
        self.good = False
        return num, at + width, ok

    def int_arg(self, num):
        """Go's intFromArg: the argument ``num`` as a width or precision: (number or None, next argument number)."""
        if num >= len(self.args):
            return None, num
        value = self.args[num]
        return (value if kind_of(value) == "int" and not _too_large(value) else None), num + 1

    def run(self):
        form, end, num, at = self.form, len(self.form), 0, 0
        while at < end:
            self.good = True
            percent = form.find("%", at)
            percent = end if percent < 0 else percent
            if percent > at:
                self.add(form[at:percent])
            if percent >= end:
                break
            self.budget.spend()
            at, flags = percent + 1, set()
            while at < end and form[at] in _FLAGS:
                flags.add(form[at])
                at += 1
            num, at, after_index = self.index(num, at)
            if at < end and form[at] == "*":
                wid, num = self.int_arg(num)
                at, after_index = at + 1, False
                if wid is None:
                    self.add(_BAD_WIDTH)
                elif wid < 0:
                    wid, flags = -wid, (flags | {"-"}) - {"0"}
            else:
                wid, present, at = _number(form, at, end)
                wid = wid if present else None
                self.good = self.good and not (after_index and present)
            prec = None
            if at + 1 < end and form[at] == ".":
                self.good = self.good and not after_index
                num, at, after_index = self.index(num, at + 1)
                if at < end and form[at] == "*":
                    prec, num = self.int_arg(num)
                    at, after_index = at + 1, False
                    if prec is None or prec < 0:
                        prec = None
                        self.add(_BAD_PREC)
                else:
                    prec, _present, at = _number(form, at, end)
            if not after_index:
                num, at, after_index = self.index(num, at)
            if at >= end:
                self.add(_NO_VERB)
                break
            verb, at = form[at], at + 1
            if verb == "%":
                self.add("%")
            elif not self.good:
                self.add("%%!%s(BADINDEX)" % verb)
            elif num >= len(self.args):
                self.add("%%!%s(MISSING)" % verb)
            else:
                self.verb(flags, wid, prec, verb, self.args[num])
                num += 1
        if not self.reordered and num < len(self.args):
            self.add("%!(EXTRA ")
            for at, arg in enumerate(self.args[num:]):
                self.add(", " if at else "")
                self.add("<nil>" if arg is None else "%s=" % go_type(arg))
                self.add("" if arg is None else go_format(arg, self.budget))
            self.add(")")
        return "".join(self.out)

    def verb(self, flags, wid, prec, verb, arg):
        """One conversion; its size is checked before it is built. A wrong type prints as Go's does."""
        spec = "%" + "".join(sorted(flags)) + ("" if wid is None else "%d" % wid) + ("" if prec is None else ".%d" % prec)
        kind, width = kind_of(arg), wid or 0
        if (verb in "dxXoc" and kind == "int") or (verb in "feEgG" and kind == "float"):
            # digits, sign and prefix; a float's %f has up to 309 digits before the point
            self.budget.string(max(width, (prec or 0) + (len(str(arg)) if kind == "int" else 330) + 3), "printf's %" + verb)
            self.add((spec + verb) % arg)
            return
        if verb == "q" and kind in ("string", "empty"):
            text = go_quote(str_arg(arg), self.budget)
        elif verb == "v" or (verb == "s" and kind in ("string", "empty", "list", "map")) or (verb == "t" and kind == "bool"):
            text = go_format(arg, self.budget)
        elif arg is None:
            self.add("%%!%s(<nil>)" % verb)
            return
        else:  # Go's badVerb: the value printed with %v, flags and width kept
            self.add("%%!%s(%s=" % (verb, go_type(arg)))
            text, verb = go_format(arg, self.budget), None
        self.budget.string(max(width, len(text)), "printf's %" + (verb or "v"))
        self.add((spec + "s") % text)
        if verb is None:
            self.add(")")


def _printf(budget, form, *args):
    return _Printf(budget, str_arg(form), args).run()


def _has(budget, needle, haystack):
    if haystack is None or haystack is EMPTY:
        return False
    if not isinstance(haystack, (list, tuple)):
        raise Fail("cannot find has on type %s" % go_type(haystack))
    return any(go_equal(item, needle, budget) for item in haystack)


def _ternary(if_true, if_false, condition):
    if condition is EMPTY:
        condition = False
    if not isinstance(condition, bool):
        raise Fail("wrong type for value; expected bool; got %s" % go_type(condition))
    return if_true if condition else if_false


def _join(budget, sep, values):
    values = [] if values is EMPTY or values is None else values if isinstance(values, (list, tuple)) else [values]
    return _concat(budget, "join's result", (to_string(v, budget) for v in values if v is not None), str_arg(sep))


def _semver_compare(budget, constraint, version):
    """semverCompare, charged as its regular expressions cost: a few steps, and an eighth of the square of the
    constraint's length (256 characters, the most it takes, cost 8,192 steps: about as much CPU as that many steps
    of anything else)."""
    constraint, version = str_arg(constraint), str_arg(version)
    if len(constraint) <= MAX_CONSTRAINT:
        budget.spend(8 + len(constraint) ** 2 // 8)
    budget.chars(len(version))
    return semver_compare(constraint, version)


FUNCS = {
    # name: (function, least args, most args or None)
    "and": (None, 1, None), "or": (None, 1, None),
    "not": (lambda v: not truth(v), 1, 1),
    "eq": (_eq, 1, None), "ne": (lambda a, b: not _equal(a, b), 2, 2),
    "lt": (_less, 2, 2), "le": (lambda a, b: _less(a, b) or _equal(a, b), 2, 2),
    "gt": (lambda a, b: not (_less(a, b) or _equal(a, b)), 2, 2), "ge": (lambda a, b: not _less(a, b), 2, 2),
    "len": (_len, 1, 1), "index": (_index, 1, None),
    "print": (_print, 0, None), "printf": (_printf, 1, None), "println": (_println, 0, None),
    "semverCompare": (_semver_compare, 2, 2),
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
    "toString": (lambda budget, v: to_string(v, budget), 1, 1),
    "quote": (lambda budget, *a: _concat(budget, "quote's result", (go_quote(to_string(v, budget), budget) for v in a if v is not None), " "),
              0, None),
    "squote": (lambda budget, *a: _concat(budget, "squote's result", ("'%s'" % to_string(v, budget) for v in a if v is not None), " "),
               0, None),
    "ternary": (_ternary, 3, 3), "list": (lambda *a: list(a), 0, None), "has": (_has, 2, 2),
    "join": (_join, 2, 2),
}
# These build strings, compare values or parse constraints: they take the evaluation's Budget first.
BUDGETED = frozenset(("print", "printf", "println", "semverCompare", "toString", "quote", "squote", "has", "join"))
