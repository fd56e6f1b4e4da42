# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: regular expressions matched in time linear in the text, with RE2's syntax and
semantics as Go's ``regexp`` has them (troubleshoot.sh evaluates ``textAnalyze`` with it). Standard library
only: it runs on the hosts (Python 3.10 and later).

Python's ``re`` backtracks: ``^(\\w+\\s?)*$`` over 31 characters of output runs past 30 s (each character
more doubles it). Here a pattern is compiled to a small program (consume a character, split, jump, save a
position, assert) and run as a Pike VM (every thread advanced one character at a time, at most one thread
per instruction), so matching costs in the order of ``len(text) * len(program)`` steps whatever the
pattern. :meth:`Regex.found` (is there a match?) runs the same program as a lazily built DFA: each set of
live instructions becomes a state once, its transitions are remembered, and most characters cost one
dictionary lookup. :meth:`Regex.search` (the match and its groups) runs the Pike VM, with leftmost-first
priorities, so the match and the groups are those Go's engine gives, and Python's but for the cases below.
Fast paths, linear and in C: a text without the literal every match contains (``% packet loss``) is answered
by ``in``; where a match can start is found by ``str.find`` (a literal prefix) or by a ``re`` search for one
character class (the characters a match can start with), never by ``re`` over the pattern itself.

The pattern is parsed by the standard library's own parser (``re._parser``; ``sre_parse`` on 3.10) after
:class:`_Translator` has rewritten Go's syntax into it, and what RE2 does not have is refused, one line naming
it: backreferences, lookahead and lookbehind, atomic groups, possessive quantifiers, conditionals, nested
repetition (``a**``), Python's own escapes (``\\Z``: Go's end of text is ``\\z``; ``\\u``: write ``\\x{263a}``).
Go's syntax and semantics, where they differ from Python's:

* ``$`` without ``(?m)`` matches only at the end of the text (``\\z``), not before a final newline;
* ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII (``\\s`` is ``[\\t\\n\\f\\r ]``);
* ``(?i)`` folds case as Unicode's simple folding (``k`` also matches the Kelvin sign, ``s`` the long s);
* flags ``(?i)``, ``(?m)``, ``(?s)``, ``(?U)`` (ungreedy) and their negations anywhere, holding to the end of
  the group; ``(?<name>...)``; ``\\Q...\\E``; ``\\x{10FFFF}``; octal ``\\12``; POSIX classes (``[[:alpha:]]``);
  ``[\\d-z]``; a repeated assertion (``^*``); a brace that is not a repeat (``a{,3}``) is a literal;
* a repeat count above 1000 is refused, and so are counted repeats whose nesting makes more than 1000 copies;
* a group that can match empty, repeated by ``+`` or ``*``: its captures are the Pike VM's (Go's), not
  those of Python's backtracking (``(a*)+b`` over ``aab``: group 1 is ``aa``, not ``''``).

Not supported (Go has them): Unicode classes (``\\pL``, ``\\p{Greek}``), a group name used twice or starting
with a digit. Checked against Go 1.26's regexp on some 35,000 random patterns and texts (matches and every
group's span) and on case folding of every character up to U+1F000.

Bounds: a pattern of at most :data:`MAX_PATTERN` characters, nested at most :data:`MAX_NESTING` deep,
compiled to at most :data:`MAX_PROGRAM` instructions (counted repeats are expanded); a text of at most
:data:`MAX_TEXT` characters; at most :data:`MAX_STEPS` thread steps per search. Each bound is a
:class:`RegexError`, never a long run.
"""

from __future__ import annotations

import bisect
import functools
import re
import warnings

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

try:  # the standard library's own regular expression parser
    from re import _parser as _sre  # Python 3.11 and later
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre

MAX_PATTERN = 16 * 1024         # characters of a pattern
MAX_NESTING = 100               # groups inside groups
MAX_REPEAT = 1000               # a counted repeat {m,n}, as Go
MAX_PROGRAM = 5000              # instructions, after counted repeats are expanded
MAX_TEXT = 1024 * 1024          # characters searched (the run collector's and http's output cap)
MAX_STEPS = 10 * 1000 * 1000    # thread steps (Pike VM) or instructions visited (DFA states) per search
MAX_STATES = 2000               # DFA states remembered; past it (or 200,000 instructions in them) they are built again
_MEMO = 4096                    # characters remembered per character test, at most
_MEMO_TOTAL = 200000            # characters remembered by all the tests of one pattern
_MAX_TRANSITIONS = 200000       # DFA transitions remembered; past it the states are built again
_SMALL = 32                     # instructions a remembered closure may enter
_PRECHECK = 4096                # search() asks found() first over a longer text
_MAX_CLOSURES = 20000           # closures remembered; past it they are dropped and walked again
_MAX_STATE_PCS = 200000


class RegexError(MooringError):
    """A pattern that is not RE2 syntax or not supported here, or a search over its bounds (one line)."""


# ------------------------------------------------------------------------------------------ Go syntax -> sre


_FLAG_GROUP = re.compile(r"\(\?([A-Za-z]*)(?:-([A-Za-z]*))?([:)])")
_POSIX_CLASS = re.compile(r"\[:(\^?)([a-z]+):\]")
_HEX = re.compile(r"[0-9A-Fa-f]{1,8}")
_ASCII_POSIX = {
    "alnum": ((48, 57), (65, 90), (97, 122)), "alpha": ((65, 90), (97, 122)), "ascii": ((0, 127),),
    "blank": ((9, 9), (32, 32)), "cntrl": ((0, 31), (127, 127)), "digit": ((48, 57),), "graph": ((33, 126),),
    "lower": ((97, 122),), "print": ((32, 126),), "punct": ((33, 47), (58, 64), (91, 96), (123, 126)),
    "space": ((9, 13), (32, 32)), "upper": ((65, 90),), "word": ((48, 57), (65, 90), (95, 95), (97, 122)),
    "xdigit": ((48, 57), (65, 70), (97, 102)),
}
_REFUSED_GROUPS = (
    ("(?=", "lookahead (?=...)"), ("(?!", "negative lookahead (?!...)"), ("(?<=", "lookbehind (?<=...)"),
    ("(?<!", "negative lookbehind (?<!...)"), ("(?>", "atomic group (?>...)"), ("(?(", "conditional (?(...)...)"),
    ("(?P=", "backreference (?P=name)"), ("(?#", "comment (?#...)"),
)


def _refuse(what, pattern):
    return RegexError("regex %s: %s is not RE2 syntax (troubleshoot's Go regexp refuses it too)" % (_show(pattern), what))


def _show(pattern):
    """The pattern quoted as Go quotes it in its errors, on one line and at most 60 characters."""
    text = pattern if len(pattern) <= 60 else pattern[:57] + "..."
    return "`%s`" % "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _ranges_text(ranges):
    return "".join("\\U%08x" % lo if lo == hi else "\\U%08x-\\U%08x" % (lo, hi) for lo, hi in ranges)


def _complement(ranges):
    out, low = [], 0
    for lo, hi in sorted(ranges):
        if lo > low:
            out.append((low, lo - 1))
        low = max(low, hi + 1)
    if low <= 0x10FFFF:
        out.append((low, 0x10FFFF))
    return out


class _Translator:
    """Go's syntax rewritten as the standard library's parser reads it (same groups, same numbers)."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.out = []
        self.stack = []         # for each open group: (flag groups, ungreedy) of the level that encloses it
        self.wraps = []         # "(?i:" groups opened at this level by "(?i)", closed at its end and around "|"
        self.ungreedy = False   # Go's (?U): * is *? and *? is *
        self.depth = 0

    def run(self):
        p, i, n = self.pattern, 0, len(self.pattern)
        quantified = None   # the quantifier just read, if the last token was one
        while i < n:
            c = p[i]
            quant = _quantifier(p, i)
            if quantified and quant:
                if quant == "+" and not quantified.endswith("?"):
                    raise _refuse("possessive quantifier %s+" % quantified, p)
                raise RegexError("regex %s: invalid nested repetition operator %s%s" % (_show(p), quantified, quant))
            quantified = None
            if c == "\\":
                i = self.escape(i, False)
            elif c == "[":
                i = self.bracket(i)
            elif c == "(":
                i = self.group(i)
            elif c == ")":
                self.out.append(")" * len(self.wraps) + ")")
                self.depth -= len(self.wraps) + 1
                self.wraps, self.ungreedy = self.stack.pop() if self.stack else ([], False)
                i += 1
            elif c == "|":
                self.out.append(")" * len(self.wraps) + "|" + "".join(self.wraps))
                i += 1
            elif quant:
                if quant[0] == "{" and max(_count(d) for d in quant[1:-1].split(",")) > MAX_REPEAT:
                    raise RegexError("regex %s: invalid repeat count %s (at most %d, as Go)" % (_show(p), quant, MAX_REPEAT))
                i += len(quant)
                lazy = i < n and p[i] == "?"
                i += lazy
                quantified = quant + "?" * lazy
                self.out.append(quant + "?" * (lazy != self.ungreedy))
            elif c == "{":
                self.out.append("\\{")  # Go: a brace that is not a repeat is a literal ({,3} too)
                i += 1
            elif c in "^$":
                self.assertion(c, i + 1)
                i += 1
            else:
                self.out.append(c)
                i += 1
        self.out.append(")" * len(self.wraps))
        return "".join(self.out)

    def assertion(self, text, after):
        """An empty-width assertion; in a group when a quantifier follows (Go repeats it, the parser would not)."""
        self.out.append("(?:%s)" % text if _quantifier(self.pattern, after) else text)

    def escape(self, i, in_class):
        """The escape at ``i``; returns where the next token starts."""
        p, n = self.pattern, len(self.pattern)
        nxt = p[i + 1] if i + 1 < n else ""
        if not in_class:
            if nxt == "Q":
                end = p.find("\\E", i + 2)
                end = n if end < 0 else end
                self.out.append(re.escape(p[i + 2:end]))
                return min(end + 2, n)
            if nxt in ("b", "B", "A", "z"):
                self.assertion("\\Z" if nxt == "z" else "\\" + nxt, i + 2)
                return i + 2
        if nxt in ("p", "P"):
            name = p[i:i + 3] if p[i + 2:i + 3] != "{" else p[i:p.find("}", i) + 1 or n]
            raise RegexError("regex %s: the Unicode class %s is not supported by mooring.cluster's matcher; use a "
                             "class of ranges ([a-z\\x{e0}-\\x{ff}])" % (_show(p), name))
        if nxt in _PYTHON_ESCAPES:
            raise RegexError("regex %s: invalid escape sequence \\%s (%s)" % (_show(p), nxt, _PYTHON_ESCAPES[nxt]))
        octal = _OCTAL.match(p, i + 1)
        if nxt and nxt in "1234567" and octal and len(octal.group()) > 1:   # Go: \12 and \123 are octal
            self.out.append("\\U%08x" % int(octal.group(), 8))
            return octal.end()
        if nxt and nxt in "123456789":
            if in_class:
                raise RegexError("regex %s: invalid escape sequence \\%s" % (_show(p), nxt))
            raise _refuse("backreference \\%s" % nxt, p)
        if nxt == "x" and p.startswith("{", i + 2):
            end = p.find("}", i + 3)
            m = _HEX.fullmatch(p, i + 3, end) if end > 0 else None
            if not m or int(m.group(), 16) > 0x10FFFF:
                raise RegexError("regex %s: invalid escape sequence %s" % (_show(p), p[i:end + 1 if end > 0 else n]))
            self.out.append("\\U%08x" % int(m.group(), 16))
            return end + 1
        self.out.append(p[i:i + 2])
        return i + 2

    def bracket(self, i):
        p, n = self.pattern, len(self.pattern)
        self.out.append("[")
        j = i + 1
        if j < n and p[j] == "^":
            self.out.append("^")
            j += 1
        first = True
        while j < n:
            c = p[j]
            if c == "]" and not first:
                self.out.append("]")
                return j + 1
            first, named = False, False
            if c == "\\":
                named = p[j + 1:j + 2] in ("d", "D", "s", "S", "w", "W")
                j = self.escape(j, True)
            elif c == "[":
                m = _POSIX_CLASS.match(p, j)
                if m and m.group(2) not in _ASCII_POSIX:
                    raise RegexError("regex %s: invalid character class range %s" % (_show(p), m.group()))
                if m:
                    ranges = _ASCII_POSIX[m.group(2)]
                    self.out.append(_ranges_text(_complement(ranges) if m.group(1) else ranges))
                    j, named = m.end(), True
                else:
                    self.out.append("\\[")  # Go: a literal [ in a class
                    j += 1
            elif c in "]&~|":
                self.out.append("\\" + c)  # literal in Go; escaped so the parser sees no set operation
                j += 1
            else:
                self.out.append(c)
                j += 1
            if named and p.startswith("-", j) and not p.startswith("-]", j):
                self.out.append("\\-")  # Go: [\d-z] is \d, - and z
                j += 1
        return n  # unterminated: the parser names it

    def group(self, i):
        p = self.pattern
        for start, what in _REFUSED_GROUPS:
            if p.startswith(start, i):
                raise _refuse(what, p)
        ungreedy = self.ungreedy
        if p.startswith("(?P<", i):
            opening, i = "(?P<", i + 4
        elif p.startswith("(?<", i):
            opening, i = "(?P<", i + 3  # Go 1.22's named group
        elif p.startswith("(?", i):
            m = _FLAG_GROUP.match(p, i)
            if not m or m.group(2) == "":  # Go: (?i-) and (?-) are errors, (?) is not
                raise RegexError("regex %s: invalid or unsupported Perl syntax %s" % (_show(p), m.group() if m else p[i:i + 3]))
            on, off, kind = m.group(1), m.group(2) or "", m.group(3)
            for flag in on + off:
                if flag not in "imsU":
                    raise RegexError("regex %s: unknown flag %s in %s (RE2 has i, m, s, U)" % (_show(p), flag, m.group()))
            ungreedy = ("U" in on or ungreedy) and "U" not in off
            on = "".join(sorted(set(on) - set(off) - {"U"}))     # Go: a flag both set and cleared is cleared
            off = "".join(sorted(set(off) - {"U"}))
            opening = "(?%s%s:" % (on, "-" + off if off else "")
            i = m.end()
            if kind == ")":  # the flags hold to the end of the enclosing group, across its alternatives
                self.ungreedy = ungreedy
                if on or off:
                    self.out.append(opening)
                    self.wraps.append(opening)
                    self.nest(1)
                return i
        else:
            opening, i = "(", i + 1
        self.out.append(opening)
        self.stack.append((self.wraps, self.ungreedy))
        self.wraps, self.ungreedy = [], ungreedy
        self.nest(1)
        return i

    def nest(self, levels):
        self.depth += levels
        if self.depth > MAX_NESTING:
            raise RegexError("regex %s: groups nest more than %d deep" % (_show(self.pattern), MAX_NESTING))


_QUANTIFIER = re.compile(r"[*+?]|\{[0-9]+(?:,[0-9]*)?\}")
_OCTAL = re.compile(r"[0-7]{1,3}")
_PYTHON_ESCAPES = {"Z": "Go's end of text is \\z", "u": "write \\x{263a}", "U": "write \\x{1F600}",
                   "N": "write the character or \\x{...}"}


def _quantifier(pattern, i):
    """The quantifier token at ``i`` (``*``, ``+``, ``?``, ``{n}``, ``{n,}``, ``{n,m}``), or "" (a brace that is
    not one is a literal)."""
    m = _QUANTIFIER.match(pattern, i)
    return m.group() if m else ""


def _count(digits):
    """A repeat count's value, or one past the limit when it has more digits than the limit."""
    digits = digits.lstrip("0")
    return int(digits or 0) if len(digits) <= len(str(MAX_REPEAT)) else MAX_REPEAT + 1


def _translate(pattern):
    """``pattern`` (Go's syntax) as the standard library's parser reads it; what RE2 lacks is refused."""
    return _Translator(pattern).run()


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


# ------------------------------------------------------------------------------------------ matching


def _context(text, p, n):
    """The assertion bits that hold at position ``p`` of ``text``."""
    if p:
        before = text[p - 1]
        bits = BOL if before == "\n" else 0
        word_before = before in _WORD
    else:
        bits, word_before = BOT | BOL, False
    if p < n:
        after = text[p]
        if after == "\n":
            bits |= EOL
        word_after = after in _WORD
    else:
        bits, word_after = bits | EOT | EOL, False
    return bits | (WB if word_before != word_after else NWB)


class Match:
    """The leftmost-first match: ``span``/``start``/``end``/``group`` of group 0 or a numbered group,
    ``groups()`` and ``groupdict()`` as Python's (None for a group that took no part)."""

    def __init__(self, text, slots, names):
        self.string = text
        self.slots = slots
        self.names = names

    def span(self, group=0):
        group = self.names.get(group, group)
        return (-1, -1) if self.slots[2 * group] is None else (self.slots[2 * group], self.slots[2 * group + 1])

    def start(self, group=0):
        return self.span(group)[0]

    def end(self, group=0):
        return self.span(group)[1]

    def group(self, group=0):
        start, end = self.span(group)
        return None if start < 0 else self.string[start:end]

    def groups(self):
        return tuple(self.group(g) for g in range(1, len(self.slots) // 2))

    def groupdict(self):
        return {name: self.group(number) for name, number in self.names.items()}


class _State:
    """A DFA state: the live instructions, whether the match instruction is among them, its transitions."""

    __slots__ = ("pcs", "match", "idle", "next")

    def __init__(self, pcs, match, idle):
        self.pcs = pcs
        self.match = match
        self.idle = idle
        self.next = {}


class Regex:
    """A compiled pattern (:func:`compile`). :meth:`found` and :meth:`search` run in time linear in the text."""

    def __init__(self, pattern):
        if not isinstance(pattern, str):
            raise RegexError("regex must be a string, not %s" % type(pattern).__name__)
        if len(pattern) > MAX_PATTERN:
            raise RegexError("regex of %d characters is longer than %d" % (len(pattern), MAX_PATTERN))
        self.pattern = pattern
        tree = _parse(pattern)
        if not _repeats_valid(tree):
            raise RegexError("regex %s: invalid repeat count: nested counted repeats make more than %d copies (as Go)"
                             % (_show(pattern), MAX_REPEAT))
        compiler = _Compiler(pattern)
        compiler.emit(SAVE, 0)
        compiler.seq(tree, tree.state.flags)
        compiler.emit(SAVE, 1)
        self.match_pc = compiler.emit(MATCH)
        for test in compiler.tests.values():
            test.limit = max(64, min(_MEMO, _MEMO_TOTAL // len(compiler.tests)))
        self.ops, self.arg, self.alt = compiler.ops, compiler.arg, compiler.alt
        self.groups = tree.state.groups - 1
        self.names = dict(tree.state.groupdict)
        runs = _literal_runs(tree, tree.state.flags)
        self.required = max(runs, key=len) if runs else ""  # every match contains it: a text without it has none
        self.asserts = ASSERT in self.ops
        self._closures = {}
        self._states = {}
        self._starts = {}
        self._state_pcs = 0
        self._transitions = 0
        self.anchored, self._skip_tests, self._skip_re, self._prefix = self._plan_start()

    # -- the epsilon closure: where a thread at pc goes before it consumes the next character

    def _walk(self, pc, ctx, seen, mark, out):
        """Depth-first from ``pc`` over jumps, splits (first target first), saves and the assertions that
        hold in ``ctx``: appends ``(target, saves)`` to ``out`` for each consuming or match instruction reached,
        in priority order, with the save slots set on the way. An instruction whose ``seen`` is ``mark`` is not
        entered again (and is marked when entered): so one step over all threads visits each instruction once.
        Returns how many instructions were entered."""
        ops, arg, alt = self.ops, self.arg, self.alt
        stack, entered = [(pc, ())], 0
        while stack:
            pc, saves = stack.pop()
            if seen[pc] == mark:
                continue
            seen[pc] = mark
            entered += 1
            op = ops[pc]
            if op == JMP:
                stack.append((arg[pc], saves))
            elif op == SPLIT:
                stack.append((alt[pc], saves))
                stack.append((arg[pc], saves))
            elif op == SAVE:
                stack.append((pc + 1, saves + (arg[pc],)))
            elif op == ASSERT:
                if ctx & arg[pc]:
                    stack.append((pc + 1, saves))
            else:
                out.append((pc, saves))
        return entered

    def _closure(self, pc, ctx):
        """``(targets, entered)`` of :meth:`_walk` from ``pc`` alone (``targets``: ``((pc, saves), ...)``,
        ``entered``: every instruction it entered), remembered; None when it enters more than
        :data:`_SMALL` instructions (then :meth:`_walk` runs each time, pruned by what a step has seen)."""
        key = pc * _CONTEXTS + ctx
        try:
            return self._closures[key]
        except KeyError:
            pass
        seen, targets = _Seen(), []
        self._walk(pc, ctx, seen, True, targets)
        got = (tuple(targets), tuple(seen)) if len(seen) <= _SMALL else None
        if len(self._closures) >= _MAX_CLOSURES:
            self._closures.clear()
        self._closures[key] = got
        return got

    def _plan_start(self):
        """Whether matches can only start at the first position, and how to skip to where one can start:
        a literal prefix (str.find), a small set of first characters (a one-class ``re`` search, linear), or
        the first characters' test; none when the pattern can match the empty string."""
        firsts_at = {}
        for ctx in range(_CONTEXTS):
            if ctx & WB and ctx & NWB:
                continue
            firsts_at[ctx] = []
            self._walk(0, ctx, _Seen(), True, firsts_at[ctx])
        anchored = not any(found for ctx, found in firsts_at.items() if not ctx & BOT)
        firsts = {pc for found in firsts_at.values() for pc, _saves in found}
        if anchored or not firsts or self.match_pc in firsts:
            return anchored, None, None, ""
        tests = [self.arg[pc] for pc in sorted(firsts)]
        prefix, pc = "", 0
        while self.ops[pc] in (SAVE, JMP) or (self.ops[pc] == CONSUME and len(self.arg[pc].chars or ()) == 1):
            if self.ops[pc] == CONSUME:
                prefix += next(iter(self.arg[pc].chars))
            pc = self.arg[pc] if self.ops[pc] == JMP else pc + 1
        chars = None
        if all(t.chars is not None for t in tests):
            chars = frozenset().union(*(t.chars for t in tests))
        skip_re = re.compile("[%s]" % "".join(re.escape(c) for c in sorted(chars))) if chars else None
        union = _Test(lambda c: any(t[c] for t in tests))
        return anchored, union, skip_re, prefix

    def _skip(self, text, p, n):
        """The first position from ``p`` where a match can start (n when none can)."""
        if self._prefix:
            q = text.find(self._prefix, p, n)
            return n if q < 0 else q
        if self._skip_re is not None:
            m = self._skip_re.search(text, p, n)
            return m.start() if m else n
        tests = self._skip_tests
        while p < n and not tests[text[p]]:
            p += 1
        return p

    def _check(self, text):
        if not isinstance(text, str):
            raise RegexError("text to search must be a string, not %s" % type(text).__name__)
        if len(text) > MAX_TEXT:
            raise RegexError("text of %d characters is longer than the %d a regex searches" % (len(text), MAX_TEXT))
        return len(text)

    def _over(self, n):
        return RegexError("regex %s: more than %d steps over a text of %d characters; a simpler pattern (fewer "
                          "repeats that overlap) or a shorter text is needed" % (_show(self.pattern), MAX_STEPS, n))

    # -- is there a match? (a lazily built DFA over the program's instructions)

    def _state(self, pcs, idle):
        key = (pcs, idle)
        state = self._states.get(key)
        if state is None:
            if len(self._states) >= MAX_STATES or self._state_pcs > _MAX_STATE_PCS or self._transitions > _MAX_TRANSITIONS:
                self._states.clear()
                self._starts.clear()
                self._state_pcs = self._transitions = 0
            state = self._states[key] = _State(pcs, self.match_pc in pcs, idle)
            self._state_pcs += len(pcs)
        return state

    def _start(self, ctx):
        state = self._starts.get(ctx)
        if state is None:
            live = []
            self._walk(0, ctx, _Seen(), True, live)
            state = self._starts[ctx] = self._state(frozenset(pc for pc, _saves in live), True)
        return state

    def _advance(self, state, ch, ctx):
        """The DFA state after ``state`` reads ``ch`` into a position whose assertion bits are ``ctx``, and the
        instructions that cost."""
        ops, arg = self.ops, self.arg
        seen, live = _Seen(), []
        cost = len(state.pcs)
        for pc in state.pcs:
            if ops[pc] == CONSUME and arg[pc][ch] and seen[pc + 1] is not True:
                cost += self._follow(pc + 1, ctx, seen, live)
        idle = not live
        if not self.anchored:
            cost += self._follow(0, ctx, seen, live)
        return self._state(frozenset(pc for pc, _saves in live), idle), cost

    def _follow(self, pc, ctx, seen, out):
        """:meth:`_walk` from ``pc`` (marks True), through the remembered closure when it is small."""
        got = self._closure(pc, ctx)
        if got is None:
            return self._walk(pc, ctx, seen, True, out)
        targets, entered = got
        out.extend(item for item in targets if seen[item[0]] is not True)
        for node in entered:
            seen[node] = True
        return len(entered)

    def found(self, text):
        """Whether the pattern matches anywhere in ``text``."""
        n = self._check(text)
        if self.required not in text:
            return False
        asserts = self.asserts
        skipping = self._skip_tests is not None
        budget = MAX_STEPS
        p = 0
        state = self._start(_context(text, 0, n) if asserts else 0)
        while True:
            if state.match:
                return True
            if p >= n or (self.anchored and not state.pcs):
                return False
            if state.idle and skipping:
                q = self._skip(text, p, n)
                if q >= n:
                    return False
                if q != p:
                    p = q
                    state = self._start(_context(text, p, n) if asserts else 0)
            ch = text[p]
            p += 1
            ctx = _context(text, p, n) if asserts else 0
            key = (ch, ctx) if asserts else ch
            following = state.next.get(key)
            if following is None:
                following, cost = self._advance(state, ch, ctx)
                budget -= cost
                if budget < 0:
                    raise self._over(n)
                if len(state.next) < _MEMO:
                    state.next[key] = following
                    self._transitions += 1
            state = following

    # -- the match and its groups (the Pike VM)

    def search(self, text):
        """The leftmost-first match in ``text`` (:class:`Match`), or None."""
        n = self._check(text)
        if self.required not in text or n > _PRECHECK and not self.found(text):
            return None  # the DFA's answer is cheaper than the threads' over a text without a match
        asserts, arg, match_pc, closure = self.asserts, self.arg, self.match_pc, self._closure
        skipping = self._skip_tests is not None and not self.anchored
        empty = (None,) * (2 * self.groups + 2)
        seen = [-1] * len(self.ops)
        budget = MAX_STEPS
        threads, matched, p = [], None, 0
        ctx = _context(text, 0, n) if asserts else 0
        while True:
            if matched is None and (p == 0 or not self.anchored):
                if not threads and skipping and p < n:
                    q = self._skip(text, p, n)
                    if q >= n:
                        break
                    if q != p:
                        p = q
                        ctx = _context(text, p, n) if asserts else 0
                started = []  # a thread starting here, with the lowest priority
                budget -= self._walk(0, ctx, seen, p, started)
                threads.extend((target, _saved(empty, saves, p) if saves else empty) for target, saves in started)
            if not threads:
                if matched is not None or self.anchored or p >= n:
                    break
                p += 1  # the start was refused here (an assertion): the next position
                ctx = _context(text, p, n) if asserts else 0
                continue
            budget -= len(threads)
            if budget < 0:
                raise self._over(n)
            if p >= n:
                matched = next((slots for pc, slots in threads if pc == match_pc), matched)
                break
            ch, q = text[p], p + 1
            ctx = _context(text, q, n) if asserts else 0
            following = []
            for pc, slots in threads:
                if pc == match_pc:
                    matched = slots   # every thread after this one has a lower priority: cut them
                    break
                if not arg[pc][ch] or seen[pc + 1] == q:
                    continue
                got = closure(pc + 1, ctx)
                if got is None:
                    walked = []
                    budget -= self._walk(pc + 1, ctx, seen, q, walked)
                    following.extend((target, _saved(slots, saves, q) if saves else slots) for target, saves in walked)
                    continue
                targets, entered = got
                for target, saves in targets:
                    if seen[target] != q:
                        following.append((target, _saved(slots, saves, q) if saves else slots))
                for node in entered:
                    seen[node] = q
            threads, p = following, q
        return None if matched is None else Match(text, matched, self.names)


class _Seen(dict):
    """The marks of one walk when no step shares them: ``seen[pc]`` is None until it is marked."""

    __slots__ = ()

    def __missing__(self, pc):
        return None


def _saved(slots, saves, p):
    slots = list(slots)
    for slot in saves:
        slots[slot] = p
    return tuple(slots)


@functools.lru_cache(maxsize=16)
def compile(pattern):  # noqa: A001 - the name every regex module uses
    """The :class:`Regex` of ``pattern`` (RE2 syntax); :class:`RegexError` names what is not supported."""
    return Regex(pattern)
