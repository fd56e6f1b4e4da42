# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: :mod:`linre`'s bounds and error, and Go's regular expression syntax read
into the standard library's parse tree (what Go accepts and refuses, as Go does).
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

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
