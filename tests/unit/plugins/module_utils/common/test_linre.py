# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The linear-time matcher (RE2 syntax and semantics, as Go's regexp): the same matches and groups as Python's
re on ordinary patterns, bounded CPU time on the patterns that make a backtracking engine explode, Go's syntax
where it differs from Python's, and one-line errors for what RE2 refuses."""

from __future__ import annotations

import re
import time

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common import linre

PING = "PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data.\n\n--- 10.0.0.1 ping statistics ---\n" \
       "3 packets transmitted, 3 received, 0% packet loss, time 2003ms\n"

# (pattern, text): compared with Python's re (ASCII classes, as Go's); no text ends with a newline under a
# plain $ (Go's $ is the end of the text only; see test_dollar_is_the_end_of_the_text). Not compared: a group
# that can match empty inside + or * after a non-empty iteration ((a*)+b over aab), where Python's backtracking
# tries one more empty iteration and a Pike VM (Go's too) does not.
DIFFERENTIAL = [
    ("abc", "xxabcxx"), ("abc", "ab"), ("", "abc"), ("x*", ""),
    # alternation: the first alternative that leads to a match wins (leftmost-first), not the longest
    ("a|ab", "ab"), ("ab|a", "ab"), (r"(a|ab)(c|bcd)(d*)", "abcd"), (r"(?:ab|cd)+", "xabcdabz"),
    (r"(a)|(b)", "b"), (r"(a|b|c)+?c", "abcabc"), ("colou?r", "the color"), (r"(?:(a)|b)*", "ab"),
    # greedy and lazy quantifiers
    (r"(a+)(b+)?", "aaab"), (r"(a+?)(b*)", "aaab"), (r"a*?", "aaa"), (r"a+?b", "xaaab"), (r"<.*>", "<a><b>"),
    (r"<.*?>", "<a><b>"), (r"(a|b)*?c", "abc"), (r"(a+|b)+", "aab"), (r"(a*)*", "b"), (r"(a|b)*c", "ababc"),
    # counted repetition
    (r"\d{2,3}", "1 12 1234"), (r"\d{2,3}?", "1234"), (r"x{3}", "xx xxx"), (r"(ab){2,}", "abababx"),
    (r"a{0}b", "ab"), (r"(\d{1,3}\.){3}\d{1,3}", "addr 192.168.10.254/24"), (r"(?:a?){3}a{3}", "aaaa"),
    # anchors, multi-line, word boundaries
    (r"(?m)^b$", "a\nb\nc"), (r"^b", "a\nb"), (r"(?m)^$", "a\n\nb"), (r"\Aab", "ab ab"), (r"(?m)(\w+)$", "one two\nthree four"),
    (r"\bis\b", "this is it"), (r"\Bis\b", "this is it"), (r"^\s*#", "   # comment"), (r"(?m)^\s*(\w+):", "a\n  key: v"),
    # classes
    (r"[a-c]+", "xxbcaz"), (r"[^a-c]+", "abcxyzabc"), (r"[\d.]+", "v1.33.9"), (r"\s+", "a \t\nb"),
    (r"\S+\s\S+", "  foo bar "), (r"\W+", "ab, cd"), (r"[^\n]+", "line1\nline2"), (r"[\]a]+", "x]a]"),
    (r"[]a]+", "x]a]"), (r"a\|b", "a|b"), (r"\x41\t", "xA\t"), (r"\.", "1.2"), (r"[-a]+", "b-a-"),
    # case and dot flags
    (r"(?i)hello", "HeLLo world"), (r"(?i)[a-f]+", "xxDEADbeefg"), (r"(?s)a.b", "a\nb"), (r"a.b", "a\nb"),
    (r"(?i)(?-i:a)B", "Ab ab"), (r"(?i:x)Y", "XY xy xY"),
    # named groups, as regexGroups reads them
    (r"(?P<key>\w+)=(?P<value>[^;]*)", "a=1;b=2"), (r"(?P<Loss>\d+)% packet loss", PING),
    (r"(\d+)\.(\d+)(?:\.(\d+))?", "v1.33"), (r"(\w+)@(\w+)\.com", "mail bob@example.com now"),
    (r"time (?P<ms>\d+)ms", PING), (r"(?P<a>x)?(?P<b>y)", "y"),
]


def _python(pattern, text):
    return re.search(pattern, text, re.ASCII)


@pytest.mark.parametrize("pattern, text", DIFFERENTIAL)
def test_matches_and_groups_are_pythons(pattern, text):
    ours, theirs = linre.compile(pattern).search(text), _python(pattern, text)
    assert (ours is None) == (theirs is None)
    assert linre.compile(pattern).found(text) == (theirs is not None)
    if theirs is not None:
        assert ours.span() == theirs.span()
        assert ours.group() == theirs.group()
        assert ours.groups() == theirs.groups()
        assert ours.groupdict() == theirs.groupdict()
        assert [ours.span(g) for g in range(1, len(theirs.groups()) + 1)] == \
               [theirs.span(g) for g in range(1, len(theirs.groups()) + 1)]


def test_the_table_is_large_enough():
    assert len(DIFFERENTIAL) >= 40


@pytest.mark.parametrize("pattern, tail", [
    (r"(?P<Loss>\d+)% packet loss", PING),                   # a class first: the one-class skip
    (r"packet (?P<what>\w+)", PING),                         # a literal prefix: str.find
    (r"(?i)LOSS", PING),                                     # folded letters
    (r"[^\x00-\x40]oss", PING),                              # a negated class first: the tested skip
    (r"(?m)^(?P<n>\d+) packets", PING),                      # an assertion before the first character
    (r"\bnothing-here\b", PING),                             # no match anywhere
])
def test_long_texts_agree_with_python_whichever_skip_is_used(pattern, tail):
    text = "line of filler, no digits here\n" * 400 + tail      # past the length where search asks found first
    ours, theirs = linre.compile(pattern).search(text), _python(pattern, text)
    assert (ours and (ours.span(), ours.groupdict())) == (theirs and (theirs.span(), theirs.groupdict()))
    assert linre.compile(pattern).found(text) == (theirs is not None)


# Where Python's re answers otherwise: Go's answers (regexp of Go 1.26, FindStringSubmatchIndex, as character
# offsets), which troubleshoot gives.
GO_GOLDEN = [
    ("(a*)+b", "aab", [(0, 3), (0, 2)]),         # Python: group 1 is (2, 2), one more empty iteration
    ("(x*)*y", "xxy", [(0, 3), (0, 2)]),
    (r"\B", "", [(0, 0)]),                       # Python: \B never matches the empty text
    ("ok$", "ok\n", None),                       # Python: $ also before a final newline
    (r"\s", "\v", None),                         # Go's \s has no vertical tab
    (r"\w+", "\u00e91", [(1, 2)]),                # ASCII \w
    (r"\b", "\u00e9", None),
    (r"(?U)(a+)(a*)", "aaa", [(0, 1), (0, 1), (1, 1)]),  # Python has no (?U)
    (r"(?i)[^\x{17f}]", "s", None),              # s, S and the long s are one orbit
]


@pytest.mark.parametrize("pattern, text, spans", GO_GOLDEN)
def test_where_python_differs_the_answer_is_gos(pattern, text, spans):
    m = linre.compile(pattern).search(text)
    assert (m and [m.span(g) for g in range(len(spans))]) == spans
    assert linre.compile(pattern).found(text) == (spans is not None)


# ------------------------------------------------------------------------------------------ linear time


# (pattern, text, matches): each text holds the pattern's literals (b, x, y), so the automata, not the literal
# fast path, read it all. Python's re takes minutes or more on each (not run).
HOSTILE = [
    (r"^(\w+\s?)*$", "a" * 5000 + "!", False),
    (r"(a+)+$", "a" * 5000 + "!", False),
    (r"(a|a)*b", "a" * 5000 + "!b", True),
    (r"(.*a){20}", "a" * 5000 + "b", True),
    (r"\w*\w*\w*x", "a" * 5000 + "!x", True),
    (r"(x+x+)+y", "x" * 5000 + "!y", False),
    (r"^(a|aa)+$", "a" * 4999 + "b", False),
    (r"(?:a?){200}a{200}", "a" * 3000, True),
]


@pytest.mark.parametrize("pattern, text, matches", HOSTILE, ids=[pattern for pattern, _t, _m in HOSTILE])
def test_catastrophic_patterns_take_little_cpu(pattern, text, matches):
    rx = linre.compile(pattern)
    start = time.process_time()
    found, match = rx.found(text), rx.search(text)
    spent = time.process_time() - start
    assert found == (match is not None) == matches
    assert spent < 5.0, "%s over %d characters took %.2f s of CPU" % (pattern, len(text), spent)


def test_the_issues_pattern_over_31_characters_of_output():
    start = time.process_time()
    assert linre.compile(r"^(\w+\s?)*$").search("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!") is None   # re: minutes
    assert time.process_time() - start < 1.0


def test_a_search_over_its_step_budget_is_an_error_not_a_long_run(monkeypatch):
    monkeypatch.setattr(linre, "MAX_STEPS", 10000)
    rx = linre.Regex(r"[ab]{100}c")
    for method in (rx.found, rx.search):
        with pytest.raises(linre.RegexError) as err:
            method("ab" * 5000 + "c")
        assert "more than 10000 steps over a text of 10001 characters" in str(err.value)


def test_a_text_over_the_bound_is_refused():
    with pytest.raises(linre.RegexError, match="text of 1048577 characters is longer than the 1048576"):
        linre.compile("x").found("a" * (linre.MAX_TEXT + 1))


# ------------------------------------------------------------------------------------------ Go's syntax


def test_dollar_is_the_end_of_the_text():
    assert linre.compile("ok$").search("ok\n") is None           # Python's re matches before a final newline
    assert linre.compile("(?m)ok$").search("ok\n").span() == (0, 2)
    assert linre.compile(r"ok\z").search("ok") and not linre.compile(r"ok\z").search("ok\n")


@pytest.mark.parametrize("pattern, text, span", [
    (r"\Qa.b*\E+", "a.b**", (0, 5)),            # quoted literal; the + repeats its last character
    (r"\x{41}\x{1F600}", "xA\U0001F600", (1, 3)),
    (r"[[:alpha:]]+", "12abC3", (2, 5)),
    (r"[[:^digit:][:space:]]+", "12a b3", (2, 5)),
    (r"[[:word:]-]+", "(ab-c_1)", (1, 7)),
    (r"a{,3}", "aa{,3}", (1, 6)),               # Go: a brace that is not a repeat is literal
    (r"a(?i)b|c", "xaB", (1, 3)),               # flags hold to the end of the group, across its alternatives
    (r"a(?i)b|c", "C", (0, 1)),
    (r"(?i)k", "\u212a", (0, 1)),                # Unicode simple folding: the Kelvin sign
    (r"(?i)[a-k]+", "\u212aS", (0, 1)),
    (r"\w+", "h\u00e9llo", (0, 1)),             # ASCII classes, as Go
    (r"\d+", "\u0661\u06622", (2, 3)),
    ("caf\u00e9+", "un caf\u00e9\u00e9", (3, 8)),
    (r"(?s:.)x", "\nx", (0, 2)),
    (r"(x(?m)^y)", "x\ny x", None),
    (r"(?U)a+", "aaa", (0, 1)),                 # ungreedy: + is +? and +? is +
    (r"(?U)a+?", "aaa", (0, 3)),
    (r"a(?U:b*)c*", "abbcc", (0, 1)),            # (?U:...) holds inside the group only
    (r"a(?U:b*)c*", "acc", (0, 3)),
    (r"[\d-z]+", "1-z", (0, 3)),                # a - after a class is a literal
    (r"\12\101", "x\nA", (1, 3)),              # octal
    (r"(?i-i)a", "A a", (2, 3)),                # a flag both set and cleared is cleared
    (r"(?)a", "a", (0, 1)),
    (r"^*a", "a", (0, 1)),                      # an assertion may be repeated
    (r"\b+x", " x", (1, 2)),
])
def test_gos_syntax(pattern, text, span):
    m = linre.compile(pattern).search(text)
    assert (m and m.span()) == span


def test_gos_named_group_syntax_and_a_space_that_is_not_a_vertical_tab():
    m = linre.compile(r"(?<major>\d+)\.(?P<minor>\d+)").search("v1.33")
    assert m.groupdict() == {"major": "1", "minor": "33"} and m.group("minor") == "33"
    assert linre.compile(r"\s").search("\v") is None and linre.compile(r"[[:space:]]").search("\v")
    assert linre.compile("(?i)ı").search("I") is None      # the Turkish dotless i folds with nothing, as Go


@pytest.mark.parametrize("pattern, problem", [
    (r"(a)\1", "backreference \\1 is not RE2 syntax"),
    (r"(?P<x>a)(?P=x)", "backreference (?P=name) is not RE2 syntax"),
    (r"a(?=b)", "lookahead (?=...) is not RE2 syntax"),
    (r"a(?!b)", "negative lookahead (?!...) is not RE2 syntax"),
    (r"(?<=a)b", "lookbehind (?<=...) is not RE2 syntax"),
    (r"(?<!a)b", "negative lookbehind (?<!...) is not RE2 syntax"),
    (r"(?>a+)b", "atomic group (?>...) is not RE2 syntax"),
    (r"a*+b", "possessive quantifier *+ is not RE2 syntax"),
    (r"a{2}+", "possessive quantifier {2}+ is not RE2 syntax"),
    (r"(a)?(?(1)b|c)", "conditional (?(...)...) is not RE2 syntax"),
    (r"a**", "invalid nested repetition operator **"),
    (r"a+?*", "invalid nested repetition operator +?*"),
    (r"(?x)a b", "unknown flag x in (?x)"),
    (r"(?i-)a", "invalid or unsupported Perl syntax (?i-)"),
    (r"a\Z", "invalid escape sequence \\Z (Go's end of text is \\z)"),
    (r"\u0041", "invalid escape sequence \\u (write \\x{263a})"),
    (r"[\1]", "invalid escape sequence \\1"),
    (r"(?:a{1000}){2}", "nested counted repeats make more than 1000 copies"),
    (r"a(?#note)", "comment (?#...) is not RE2 syntax"),
    (r"\pL+", "the Unicode class \\pL is not supported by mooring.cluster's matcher"),
    (r"\p{Greek}", "the Unicode class \\p{Greek} is not supported"),
    (r"a{1001}", "invalid repeat count {1001} (at most 1000, as Go)"),
    (r"a{2,99999999999}", "invalid repeat count"),
    (r"\x{110000}", "invalid escape sequence \\x{110000}"),
    (r"[[:alphabet:]]", "invalid character class range [:alphabet:]"),
    (r"(a", "missing ), unterminated subpattern"),
    (r"[a", "unterminated character set"),
    (r"*a", "nothing to repeat"),
    ("(" * 101 + ")" * 101, "groups nest more than 100 deep"),
    (r"\d{1000}\d{1000}\d{1000}\d{1000}\d{1000}", "more than 5000 instructions once its repeats are expanded"),
    ("x" * (16 * 1024 + 1), "regex of 16385 characters is longer than 16384"),
])
def test_what_re2_refuses_is_one_line_naming_it(pattern, problem):
    with pytest.raises(linre.RegexError) as err:
        linre.compile(pattern)
    message = str(err.value)
    assert problem in message and "\n" not in message, message
    assert message.startswith("regex `") or message.startswith("regex of ")


def test_a_pattern_with_a_newline_is_shown_on_one_line():
    with pytest.raises(linre.RegexError) as err:
        linre.compile("a\n(?=b)")
    assert str(err.value).startswith("regex `a\\n(?=b)`: lookahead")


def test_not_a_string_is_an_error():
    with pytest.raises(linre.RegexError, match="regex must be a string, not int"):
        linre.Regex(404)
    with pytest.raises(linre.RegexError, match="text to search must be a string, not bytes"):
        linre.compile("a").search(b"a")
