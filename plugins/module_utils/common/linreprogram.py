# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: :mod:`linre`'s character tests (case folding as Go folds) and the compiler of a
parsed pattern into the program the matcher runs.
"""

from __future__ import annotations

import bisect
import re
import warnings

try:  # the standard library's own regular expression parser
    from re import _parser as _sre  # Python 3.11 and later
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre

from ansible_collections.mooring.cluster.plugins.module_utils.common.linresyntax import (
    _ASCII_POSIX,
    _MEMO,
    MAX_PROGRAM,
    MAX_REPEAT,
    RegexError,
    _complement,
    _refuse,
    _show,
    _translate,
)

# ------------------------------------------------------------------------------------------ character tests


class _Test(dict):
    """A character test, remembered per character: ``test[ch]`` is True or False. ``chars`` is the set of
    characters it accepts when that set is small and known (a prefilter uses it), else None."""

    __slots__ = ("fn", "chars", "limit")

    def __init__(self, fn, chars=None):
        super().__init__()
        self.fn = fn
        self.chars = chars
        self.limit = _MEMO  # lowered when a pattern has many tests (:data:`_MEMO_TOTAL`)

    def __missing__(self, ch):
        hit = bool(self.fn(ch))
        if len(self) < self.limit:
            self[ch] = hit
        return hit


_TURKISH_I = ("\u0130", "\u0131")  # no simple case folding partner in Go's tables either


def _fold(ch):
    """The representative of ``ch``'s simple case-folding orbit (k, K and the Kelvin sign give k)."""
    if ch in _TURKISH_I:
        return ch
    upper = ch.upper()
    if len(upper) == 1:
        lower = upper.lower()
        if len(lower) == 1:
            return lower
    lower = ch.lower()
    return lower if len(lower) == 1 else ch


_PARTNERS = {}


def _partners(key):
    """The members of fold representative ``key``'s orbit that ``key.upper()`` does not give (ſ for s, the
    Kelvin sign for k, ς for σ, ǅ for ǆ...). Built once, from the characters below U+3000, where Unicode
    places every such character."""
    if not _PARTNERS:
        for code in range(0x3000):
            ch = chr(code)
            folded = _fold(ch)
            if ch != folded and ch != folded.upper():
                _PARTNERS.setdefault(folded, []).append(ch)
        _PARTNERS[""] = []  # built
    return _PARTNERS.get(key, ())


def _variants(ch):
    """``ch``'s simple case-folding orbit (``ch`` first)."""
    if ch in _TURKISH_I:
        return (ch,)
    key = _fold(ch)
    upper = key.upper()
    return (ch, key) + ((upper,) if len(upper) == 1 else ()) + tuple(_partners(key))


def _orbit(ch):
    """Every character of ``ch``'s case-folding orbit when ``ch`` is ASCII, else None (not needed)."""
    return frozenset(_variants(ch)) if ord(ch) < 128 else None


def _char_test(ch, fold):
    if not fold or _fold(ch) == ch and ch.upper() == ch:
        return _Test(ch.__eq__, frozenset(ch))
    key = _fold(ch)
    return _Test(lambda c: c == ch or _fold(c) == key, _orbit(ch))


_DIGIT = ((48, 57),)
_SPACE = ((9, 10), (12, 13), (32, 32))      # Go's \s: [\t\n\f\r ]
_WORD_RANGES = _ASCII_POSIX["word"]
_WORD = frozenset(chr(c) for lo, hi in _WORD_RANGES for c in range(lo, hi + 1))


def _merge(ranges):
    out = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _class_test(ranges, negate, fold):
    ranges = _merge(ranges)
    lows = [lo for lo, _hi in ranges]
    highs = [hi for _lo, hi in ranges]

    def inside(c):
        k = bisect.bisect_right(lows, ord(c)) - 1
        return k >= 0 and ord(c) <= highs[k]

    if fold:
        def test(c):
            return any(inside(v) for v in _variants(c)) != negate
    else:
        def test(c):
            return inside(c) != negate
    size = sum(hi - lo + 1 for lo, hi in ranges)
    chars = None
    if not negate and size <= 256:
        chars = frozenset(chr(x) for lo, hi in ranges for x in range(lo, hi + 1))
        if fold:
            orbits = [_orbit(c) for c in chars]
            chars = None if None in orbits else frozenset().union(chars, *orbits)
    return _Test(test, chars)


# ------------------------------------------------------------------------------------------ program


MATCH, CONSUME, SPLIT, JMP, SAVE, ASSERT = range(6)
# Assertion bits of a position's context (computed from the characters before and after it).
BOT, EOT, BOL, EOL, WB, NWB = 1, 2, 4, 8, 16, 32
_CONTEXTS = 64

_I, _M, _S = re.IGNORECASE, re.MULTILINE, re.DOTALL
_CATEGORIES = {
    "CATEGORY_DIGIT": (_DIGIT, False), "CATEGORY_NOT_DIGIT": (_DIGIT, True),
    "CATEGORY_SPACE": (_SPACE, False), "CATEGORY_NOT_SPACE": (_SPACE, True),
    "CATEGORY_WORD": (_WORD_RANGES, False), "CATEGORY_NOT_WORD": (_WORD_RANGES, True),
}
_REFUSED_NODES = {
    "GROUPREF": "backreference", "GROUPREF_EXISTS": "conditional (?(...)...)", "GROUPREF_IGNORE": "backreference",
    "ASSERT": "lookahead or lookbehind", "ASSERT_NOT": "negative lookahead or lookbehind",
    "ATOMIC_GROUP": "atomic group (?>...)", "POSSESSIVE_REPEAT": "possessive quantifier",
}


def _name(code):
    """The name of one of the parser's constants (LITERAL, MAX_REPEAT, AT_BEGINNING, ...)."""
    return getattr(code, "name", None) or str(code).upper()


class _Compiler:
    """The parse tree as a program: parallel lists ``ops``, ``arg`` and ``alt`` (SPLIT's second target)."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.ops, self.arg, self.alt = [], [], []
        self.tests = {}  # one test per distinct character set: \d{1000} remembers characters once

    def test(self, key, make):
        test = self.tests.get(key)
        if test is None:
            test = self.tests[key] = make()
        return test

    def emit(self, op, arg=None, alt=None):
        if len(self.ops) >= MAX_PROGRAM:
            raise RegexError("regex %s: more than %d instructions once its repeats are expanded; make it smaller"
                             % (_show(self.pattern), MAX_PROGRAM))
        self.ops.append(op)
        self.arg.append(arg)
        self.alt.append(alt)
        return len(self.ops) - 1

    def seq(self, items, flags):
        for op, av in items:
            self.node(_name(op), av, flags)

    def node(self, op, av, flags):
        fold = bool(flags & _I)
        if op == "LITERAL":
            self.emit(CONSUME, self.test(("char", av, fold), lambda: _char_test(chr(av), fold)))
        elif op == "NOT_LITERAL":
            self.emit(CONSUME, self.test(("class", ((av, av),), True, fold), lambda: _class_test([(av, av)], True, fold)))
        elif op == "ANY":
            dotall = bool(flags & _S)
            self.emit(CONSUME, self.test(("any", dotall), lambda: _Test((lambda c: True) if dotall else (lambda c: c != "\n"))))
        elif op == "IN":
            self.emit(CONSUME, self.charset(av, fold))
        elif op == "AT":
            self.emit(ASSERT, self.at(_name(av), flags))
        elif op == "BRANCH":
            self.branch(av[1], flags)
        elif op == "SUBPATTERN":
            group, add, remove, items = av
            if group:
                self.emit(SAVE, 2 * group)
            self.seq(items, (flags | add) & ~remove)
            if group:
                self.emit(SAVE, 2 * group + 1)
        elif op in ("MAX_REPEAT", "MIN_REPEAT"):
            self.repeat(av, op == "MAX_REPEAT", flags)
        else:
            raise _refuse(_REFUSED_NODES.get(op, op.lower()), self.pattern)

    def charset(self, items, fold):
        ranges, negate = [], False
        for op, av in items:
            op = _name(op)
            if op == "NEGATE":
                negate = True
            elif op == "LITERAL":
                ranges.append((av, av))
            elif op == "RANGE":
                ranges.append(tuple(av))
            elif op == "CATEGORY" and _name(av) in _CATEGORIES:
                cat, negated = _CATEGORIES[_name(av)]
                ranges.extend(_complement(cat) if negated else cat)
            else:
                raise _refuse("%s in a class" % op.lower(), self.pattern)
        ranges = _merge(ranges)
        return self.test(("class", tuple(ranges), negate, fold), lambda: _class_test(ranges, negate, fold))

    def at(self, code, flags):
        if code == "AT_BEGINNING":
            return BOL if flags & _M else BOT
        if code == "AT_END":
            return EOL if flags & _M else EOT  # Go: $ is \z without (?m), not "before a final newline"
        found = {"AT_BEGINNING_STRING": BOT, "AT_END_STRING": EOT, "AT_BOUNDARY": WB, "AT_NON_BOUNDARY": NWB}.get(code)
        if found is None:
            raise _refuse(code.lower(), self.pattern)
        return found

    def branch(self, alternatives, flags):
        jumps = []
        for k, alternative in enumerate(alternatives):
            if k == len(alternatives) - 1:
                self.seq(alternative, flags)
                break
            split = self.emit(SPLIT)
            self.seq(alternative, flags)
            jumps.append(self.emit(JMP))
            self.arg[split], self.alt[split] = split + 1, len(self.ops)
        for jump in jumps:
            self.arg[jump] = len(self.ops)

    def patch(self, split, body, out, greedy):
        self.arg[split], self.alt[split] = (body, out) if greedy else (out, body)

    def repeat(self, av, greedy, flags):
        low, high, items = av
        unbounded = high == _sre.MAXREPEAT
        if low > MAX_REPEAT or (not unbounded and high > MAX_REPEAT):
            raise RegexError("regex %s: invalid repeat count (at most %d, as Go)" % (_show(self.pattern), MAX_REPEAT))
        for _k in range(low - 1 if unbounded and low else low):
            self.seq(items, flags)
        if unbounded and low:                   # x{n,}: n-1 copies, then x+
            self.plus(items, greedy, flags)
        elif unbounded:                         # x*; (x+)? when x can match empty, as Go
            if _nullable(items):
                split = self.emit(SPLIT)
                self.plus(items, greedy, flags)
                self.patch(split, split + 1, len(self.ops), greedy)
            else:
                split = self.emit(SPLIT)
                self.seq(items, flags)
                self.emit(JMP, split)
                self.patch(split, split + 1, len(self.ops), greedy)
        else:                                   # x{n,m}: n copies, then (x(x)?)? nested m-n deep
            splits = []
            for _k in range(high - low):
                splits.append(self.emit(SPLIT))
                self.seq(items, flags)
            for split in splits:
                self.patch(split, split + 1, len(self.ops), greedy)

    def plus(self, items, greedy, flags):
        start = len(self.ops)
        self.seq(items, flags)
        split = self.emit(SPLIT)
        self.patch(split, start, split + 1, greedy)


def _nullable(items):
    """Whether the sub-pattern can match the empty string (assertions count as empty)."""
    for op, av in items:
        op = _name(op)
        if op in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
            return False
        if op == "BRANCH" and not any(_nullable(alt) for alt in av[1]):
            return False
        if op == "SUBPATTERN" and not _nullable(av[3]):
            return False
        if op in ("MAX_REPEAT", "MIN_REPEAT") and av[0] and not _nullable(av[2]):
            return False
    return True


def _literal_runs(items, flags, runs=None, current=None):
    """The runs of literal characters (case-sensitive) that every match contains, in order: those of the
    pattern's top-level sequence and of the groups in it, broken by anything else."""
    top = runs is None
    runs, current = ([], []) if top else (runs, current)
    for op, av in items:
        op = _name(op)
        if op == "LITERAL" and not flags & _I:
            current.append(chr(av))
        elif op == "SUBPATTERN":
            _literal_runs(av[3], (flags | av[1]) & ~av[2], runs, current)
        elif current:
            runs.append("".join(current))
            current.clear()
    if top and current:
        runs.append("".join(current))
    return runs


def _repeats_valid(items, n=MAX_REPEAT):
    """Go's rule for counted repeats inside counted repeats: together they make at most ``n`` copies of the
    innermost thing (``(?:a{1000}){2}`` is refused, as Go refuses it)."""
    for op, av in items:
        op, budget = _name(op), n
        if op in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, sub = av
            if high == 0:
                continue
            copies = low if high == _sre.MAXREPEAT else high
            if copies > n:
                return False
            budget, subs = (n // copies if copies else n), [sub]
        else:
            subs = av[1] if op == "BRANCH" else [av[3]] if op == "SUBPATTERN" else []
        if not all(_repeats_valid(sub, budget) for sub in subs):
            return False
    return True


def _parse(pattern):
    translated = _translate(pattern)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning on nested sets, DeprecationWarning on 3.10
            return _sre.parse(translated, 0)
    except re.error as exc:
        raise RegexError("regex %s: %s" % (_show(pattern), str(exc).splitlines()[0])) from None
    except RecursionError:
        raise RegexError("regex %s: nests too deeply" % _show(pattern)) from None
