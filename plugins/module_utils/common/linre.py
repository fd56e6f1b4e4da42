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

Bounds: a pattern of at most :data:`MAX_PATTERN` characters, nested at most :data:`linresyntax.MAX_NESTING` deep,
compiled to at most :data:`linresyntax.MAX_PROGRAM` instructions (counted repeats are expanded); a text of at most
:data:`MAX_TEXT` characters; at most :data:`MAX_STEPS` thread steps per search. Each bound is a
:class:`RegexError`, never a long run.
"""

from __future__ import annotations

import functools
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.linreprogram import (
    _CONTEXTS,
    _WORD,
    ASSERT,
    BOL,
    BOT,
    CONSUME,
    EOL,
    EOT,
    JMP,
    MATCH,
    NWB,
    SAVE,
    SPLIT,
    WB,
    _Compiler,
    _literal_runs,
    _parse,
    _repeats_valid,
    _Test,
)
from ansible_collections.mooring.cluster.plugins.module_utils.common.linresyntax import (
    _MAX_CLOSURES,
    _MAX_STATE_PCS,
    _MAX_TRANSITIONS,
    _MEMO,
    _MEMO_TOTAL,
    _PRECHECK,
    _SMALL,
    MAX_PATTERN,
    MAX_REPEAT,
    MAX_STATES,
    MAX_STEPS,
    MAX_TEXT,
    RegexError,
    _show,
)

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
