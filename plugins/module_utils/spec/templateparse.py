# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: kURL templates read - the lexer and the parser of the Go template subset.

:func:`lex` cuts a text into text items and ``{{kurl ...}}`` actions (comments dropped, trim markers
applied); :class:`Parser` turns them into a tree of ``("text", s)``, ``("action", pipe, item)`` and
``(if|with|range, pipe, body, else, item)`` nodes that :mod:`spec.kurltemplate` evaluates. Blocks (an ``else if``
is one more) and parentheses nest at most :data:`~spec.templatevalues.MAX_DEPTH` levels, counted together: the
parser and the evaluator recurse once per level, so no template reaches Python's recursion limit. Both take time
in proportion to the text (a variable is looked up in a count of the names in scope, not a list).
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatefuncs import FUNCS
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatevalues import MAX_DEPTH, Fail

LEFT, RIGHT = "{{kurl", "}}"
END_ACTION = LEFT + " end" + RIGHT
_SPACE = " \t\r\n"
_KEYWORDS = ("if", "else", "end", "range", "with", "break", "continue", "define", "template", "block")
# A quoted string as one character class per run between escapes: (?:[^"\\]|\\.)* keeps a backtracking entry per
# character (about 130 bytes each: 1 MiB of string literal was 130 MB).
_TOKEN = re.compile(r"""(?P<str>"[^"\\\n]*(?:\\.[^"\\\n]*)*")|(?P<raw>`[^`]*`)
    |(?P<num>[+-]?(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?))
    |(?P<field>\.[A-Za-z_]\w*)|(?P<dot>\.)|(?P<var>\$\w*)|(?P<ident>[A-Za-z_]\w*)|(?P<op>:=|[=,|()])""", re.X)
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"'}


class _Item(object):
    """A piece of the template: text, or one action (its tokens, line and source text)."""

    __slots__ = ("text", "tokens", "line", "raw")

    def __init__(self, text=None, tokens=None, line=0, raw=""):
        self.text, self.tokens, self.line, self.raw = text, tokens, line, raw


# ---------------------------------------------------------------- lexer

def _unquote(body):
    """The value of a Go quoted string (``body`` without its quotes); the text between escapes copied whole."""
    out, i = [], 0
    while i < len(body):
        at = body.find("\\", i)
        if at < 0:
            out.append(body[i:])
            break
        out.append(body[i:at])
        i = at
        esc = body[i + 1]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 2
            continue
        size = {"x": 2, "u": 4, "U": 8}.get(esc)
        digits = body[i + 2:i + 2 + size] if size else body[i + 1:i + 4]
        if not re.fullmatch(r"[0-9a-fA-F]{%d}" % size if size else r"[0-7]{3}", digits):
            raise Fail("invalid escape \\%s in quoted text" % esc)
        code = int(digits, 16 if size else 8)
        if code > 0x10FFFF or 0xD800 <= code < 0xE000:  # Go's: not a valid rune
            raise Fail("invalid escape \\%s in quoted text" % esc)
        out.append(chr(code))
        i += (2 + size) if size else 4
    return "".join(out)


def _number(text):
    clean = text.replace("_", "")
    clean = re.sub(r"^([+-]?)0([0-7]+)$", r"\g<1>0o\2", clean)  # Go's 017 is octal
    try:
        return int(clean, 0)
    except ValueError:
        pass
    try:
        return float(clean)
    except ValueError:
        raise Fail("bad number syntax: \"%s\"" % text) from None


def _token(match):
    kind, text = match.lastgroup, match.group()
    if kind == "str":
        return "lit", _unquote(text[1:-1])
    if kind == "raw":
        return "lit", text[1:-1].replace("\r", "")
    if kind == "num":
        return "lit", _number(text)
    if kind == "ident" and text in ("true", "false", "nil"):
        return "lit", {"true": True, "false": False, "nil": None}[text]
    if kind == "ident" and text in _KEYWORDS:
        return "kw", text
    if kind in ("field", "var", "ident", "dot"):
        return kind, text.lstrip(".") if kind == "field" else text
    return text, text


def _lex_action(text, pos, budget):
    """The tokens of the action body at ``pos``: (tokens, end, trims the text after), each read from ``budget``."""
    tokens, spaced = [], True
    while True:
        if pos >= len(text):
            raise Fail("unclosed action")
        if text[pos] in _SPACE and text.startswith("-" + RIGHT, pos + 1):
            return tokens, pos + 2 + len(RIGHT), True
        if text.startswith(RIGHT, pos):
            return tokens, pos + len(RIGHT), False
        if text.startswith("{{", pos):
            raise Fail("unclosed action")
        if text[pos] in _SPACE:
            spaced, pos = True, pos + 1
            continue
        match = _TOKEN.match(text, pos)
        if not match:
            raise Fail("unterminated quoted text" if text[pos] in "\"`" else "unexpected character \"%s\"" % text[pos])
        kind, value = _token(match)
        pos = match.end()
        ahead = text[pos:pos + 1]
        if match.lastgroup in ("num", "field", "var", "ident") and ahead and ahead not in _SPACE + ".,|:()" \
                and not text.startswith(RIGHT, pos):
            raise Fail("bad character \"%s\" after \"%s\"" % (ahead, match.group()))
        if budget is not None:
            budget.read(1)
        tokens.append((kind, value, spaced, match.group()))
        spaced = False


def lex(text, budget=None):
    """The template as a list of text and action items (comments dropped, trim markers applied); each action and
    each of its tokens is read from ``budget`` (:meth:`spec.templatevalues.Budget.read`) as it is lexed."""
    items, pos, line, counted = [], 0, 1, 0
    while True:
        start = text.find(LEFT, pos)
        if start < 0:
            items.append(_Item(text=text[pos:]))
            return items
        items.append(_Item(text=text[pos:start]))
        line += text.count("\n", counted, start)
        counted = start
        at = start + len(LEFT)
        if text[at:at + 1] == "-" and text[at + 1:at + 2] and text[at + 1] in _SPACE:
            items[-1].text = items[-1].text.rstrip(_SPACE)
            at += 2
        where = _Item(line=line, raw=_action_text(text, start))
        try:
            if budget is not None:
                budget.read(1)
            closing, following = text.find(RIGHT, at), text.find(LEFT, at)
            if text.startswith("/*", at):
                pos, trim = _comment_end(text, at)
            elif closing < 0 or 0 <= following < closing:
                raise Fail("unclosed action")
            else:
                tokens, pos, trim = _lex_action(text, at, budget)
                items.append(_Item(tokens=tokens, line=line, raw=text[start:pos]))
        except Fail as err:
            raise type(err)(err.problem, where) from None
        if trim:
            while pos < len(text) and text[pos] in _SPACE:
                pos += 1


def _action_text(text, start):
    """The action at ``start`` as far as its closing delimiter or the next action, for messages."""
    ends = [at for at in (text.find(RIGHT, start), text.find("{{", start + 2)) if at >= 0] + [len(text)]
    end = min(ends)
    return text[start:end + (len(RIGHT) if text.startswith(RIGHT, end) else 0)]


def _comment_end(text, at):
    end = text.find("*/", at + 2)
    if end < 0:
        raise Fail("unclosed comment")
    end += 2
    if text[end:end + 1] in tuple(_SPACE) and text.startswith("-" + RIGHT, end + 1):
        return end + 2 + len(RIGHT), True
    if text.startswith(RIGHT, end):
        return end + len(RIGHT), False
    raise Fail("comment ends before closing delimiter")


# ---------------------------------------------------------------- parser

class Parser(object):
    """Items to a tree: ("text", s), ("action", pipe, item), (if|with|range, pipe, body, else, item)."""

    def __init__(self, items):
        self.items, self.at, self.vars, self.loops = items, 0, ["$"], 0
        self.known, self.depth = {"$": 1}, 0  # how many of self.vars have each name; blocks and parentheses open
        self.item, self.tokens, self.pos = None, (), 0

    def fail(self, problem, item=None):
        return Fail(problem, item or self.item)

    def declare(self, names):
        self.vars.extend(names)
        for name in names:
            self.known[name] = self.known.get(name, 0) + 1

    def forget(self, mark):
        """Leave a scope: the variables declared since len(self.vars) was ``mark``."""
        for name in self.vars[mark:]:
            self.known[name] -= 1
        del self.vars[mark:]

    def enter(self, construct, item=None):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail("%s nested deeper than %d levels (if, with, range, else if and parentheses count together)"
                            % (construct, MAX_DEPTH), item)

    def parse_list(self, opener=None):
        nodes = []
        while self.at < len(self.items):
            item = self.items[self.at]
            self.at += 1
            if item.tokens is None:
                nodes.append(("text", item.text))
                continue
            word = item.tokens[0][1] if item.tokens and item.tokens[0][0] == "kw" else None
            if word in ("end", "else"):
                if opener is None:
                    raise self.fail("unexpected {{kurl %s}}" % word, item)
                return nodes, item
            if word in ("if", "with", "range"):
                nodes.append(self.control(item, word, 1))
            elif word in ("break", "continue"):
                if not self.loops or len(item.tokens) > 1:
                    raise self.fail("{{kurl %s}} outside of range, or with arguments" % word, item)
                nodes.append((word, item))
            elif word:
                raise self.fail("{{kurl %s}} is not supported" % word, item)
            else:
                nodes.append(("action", self.pipeline(item, 0, "action"), item))
        if opener is not None:
            raise self.fail("unexpected end of template: missing %s" % END_ACTION, opener)
        return nodes, None

    def control(self, item, word, start):
        self.enter("{{kurl %s}}" % ("else " + word if start == 2 else word), item)
        mark = len(self.vars)
        pipe = self.pipeline(item, start, word)
        self.loops += word == "range"
        body, stop = self.parse_list(item)
        self.loops -= word == "range"
        other, rest = [], stop.tokens[1:]
        if stop.tokens[0][1] == "else":
            if rest and rest[0][0] == "kw" and rest[0][1] == word and word != "range":
                other = [self.control(stop, word, 2)]
            elif rest:
                raise self.fail("unexpected \"%s\" after else" % rest[0][3], stop)
            else:
                other, stop = self.parse_list(item)
                rest = stop.tokens[1:]
                if stop.tokens[0][1] == "else":
                    raise self.fail("expected %s, found a second else" % END_ACTION, stop)
        if rest and stop.tokens[0][1] == "end":
            raise self.fail("unexpected \"%s\" after end" % rest[0][3], stop)
        self.forget(mark)
        self.depth -= 1
        return (word, pipe, body, other, item)

    def peek(self, offset=0):
        at = self.pos + offset
        return self.tokens[at] if at < len(self.tokens) else (None, None, True, "")

    def pipeline(self, item, start, context):
        self.item, self.tokens, self.pos = item, item.tokens, start
        decl, assign = [], False
        kinds = [self.peek(i)[0] for i in range(4)]
        if kinds[0] == "var" and kinds[1] in (":=", "="):
            decl, assign = [self.peek()[1]], kinds[1] == "="
            self.pos += 2
        elif context == "range" and kinds == ["var", ",", "var", ":="]:
            decl = [self.peek()[1], self.peek(2)[1]]
            self.pos += 4
        elif kinds[:2] == ["var", ","]:
            raise self.fail("too many declarations in %s" % context)
        if assign and not self.known.get(decl[0]):
            raise self.fail("undefined variable \"%s\"" % decl[0])
        cmds = self.commands()
        if self.peek()[0] is not None:
            raise self.fail("unexpected \"%s\" in %s" % (self.peek()[3], context))
        if not assign:
            self.declare(decl)
        return (decl, assign, cmds)

    def commands(self):
        cmds = []
        while True:
            cmd = []
            while self.peek()[0] not in (None, "|", ")"):
                if cmd and not self.peek()[2]:
                    raise self.fail("unexpected \"%s\" in operand" % self.peek()[3])
                cmd.append(self.operand())
            if not cmd:
                raise self.fail("missing value for command")
            cmds.append(cmd)
            if self.peek()[0] != "|":
                return cmds
            self.pos += 1

    def operand(self):
        kind, value, _pos, text = self.peek()
        self.pos += 1
        if kind == "lit":
            node = ("lit", value)
        elif kind == "dot":
            node = ("dot",)
        elif kind == "field":
            node = ("field", (value,))
        elif kind == "var":
            if not self.known.get(value):
                raise self.fail("undefined variable \"%s\"" % value)
            node = ("var", value, ())
        elif kind == "ident":
            if value not in FUNCS:
                raise self.fail("function \"%s\" not defined" % value)
            node = ("fn", value)
        elif kind == "(":
            self.enter("a parenthesis")
            node = ("pipe", ([], False, self.commands()))
            if self.peek()[0] != ")":
                raise self.fail("unclosed left paren")
            self.pos += 1
            self.depth -= 1
        else:
            raise self.fail("unexpected \"%s\" in operand" % text)
        names = []
        while self.peek()[0] == "field" and not self.peek()[2]:
            names.append(self.peek()[1])
            self.pos += 1
        if not names:
            return node
        if node[0] in ("lit", "dot", "fn"):
            raise self.fail("unexpected . after term")
        if node[0] == "field":
            return ("field", node[1] + tuple(names))
        if node[0] == "var":
            return ("var", node[1], tuple(names))
        return ("chain", node, tuple(names))
