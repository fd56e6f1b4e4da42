# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: kURL's ``{{kurl ...}}`` templates in host preflight files.

kURL renders its host preflight documents (troubleshoot.sh ``HostPreflight``) with Go's
text/template, delimiters ``{{kurl`` and ``}}``, before it decodes them; plain ``{{ ... }}``
is left for troubleshoot. This module evaluates that subset of Go templates in Python, with the
data kURL gives them (:func:`template_data`): ``if``/``else if``/``else``, ``range`` (``else``,
``break``, ``continue``), ``with``, variables, pipelines, parenthesised expressions, literals,
trim markers and comments; Go's builtins ``and or not eq ne lt le gt ge len index print printf
println`` and the Sprig functions those files use or may use (see ``_FUNCS``).

Fields are written with Go names (``.Installer.Spec.Kubernetes.LoadBalancerAddress``) and looked
up case-insensitively in the parsed Installer document (JSON names). kURL gives every absent
add-on an empty struct; here any field missing under ``.Installer`` is an empty value that prints
as ``""`` and is false. Errors raise :class:`KurlTemplateError` naming the source, the line and
the action.
"""

from __future__ import annotations

import math
import re

from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import KurlTemplateError

LEFT, RIGHT = "{{kurl", "}}"
END_ACTION = LEFT + " end" + RIGHT
_SPACE = " \t\r\n"
_ACTION_CLIP = 80
_KEYWORDS = ("if", "else", "end", "range", "with", "break", "continue", "define", "template", "block")
_TOKEN = re.compile(r"""(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<raw>`[^`]*`)
    |(?P<num>[+-]?(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?))
    |(?P<field>\.[A-Za-z_]\w*)|(?P<dot>\.)|(?P<var>\$\w*)|(?P<ident>[A-Za-z_]\w*)|(?P<op>:=|[=,|()])""", re.X)
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"'}
_QUOTED = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"'}


class _Empty(object):
    """The zero value of a field kURL's typed Installer has and the document leaves out."""

    __slots__ = ()

    def __repr__(self):
        return "EMPTY"


EMPTY = _Empty()
_NOFINAL = object()


class _Fail(Exception):
    """Internal: one problem, turned into a :class:`KurlTemplateError` with the action it is in."""

    def __init__(self, problem, item=None):
        super().__init__(problem)
        self.problem, self.item = problem, item


class _Jump(Exception):
    """Internal: {{kurl break}} or {{kurl continue}} (the word is the argument)."""


class _Item(object):
    """A piece of the template: text, or one action (its tokens, line and source text)."""

    __slots__ = ("text", "tokens", "line", "raw")

    def __init__(self, text=None, tokens=None, line=0, raw=""):
        self.text, self.tokens, self.line, self.raw = text, tokens, line, raw


# ---------------------------------------------------------------- lexer

def _unquote(body):
    """The value of a Go quoted string (``body`` without its quotes)."""
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        esc = body[i + 1]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 2
            continue
        size = {"x": 2, "u": 4, "U": 8}.get(esc)
        digits = body[i + 2:i + 2 + size] if size else body[i + 1:i + 4]
        if not re.fullmatch(r"[0-9a-fA-F]{%d}" % size if size else r"[0-7]{3}", digits):
            raise _Fail("invalid escape \\%s in quoted text" % esc)
        out.append(chr(int(digits, 16 if size else 8)))
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
        raise _Fail("bad number syntax: \"%s\"" % text) from None


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


def _lex_action(text, pos):
    """The tokens of the action body at ``pos``: (tokens, end, trims the text after)."""
    tokens, spaced = [], True
    while True:
        if pos >= len(text):
            raise _Fail("unclosed action")
        if text[pos] in _SPACE and text.startswith("-" + RIGHT, pos + 1):
            return tokens, pos + 2 + len(RIGHT), True
        if text.startswith(RIGHT, pos):
            return tokens, pos + len(RIGHT), False
        if text.startswith("{{", pos):
            raise _Fail("unclosed action")
        if text[pos] in _SPACE:
            spaced, pos = True, pos + 1
            continue
        match = _TOKEN.match(text, pos)
        if not match:
            raise _Fail("unterminated quoted text" if text[pos] in "\"`" else "unexpected character \"%s\"" % text[pos])
        kind, value = _token(match)
        pos = match.end()
        ahead = text[pos:pos + 1]
        if match.lastgroup in ("num", "field", "var", "ident") and ahead and ahead not in _SPACE + ".,|:()" \
                and not text.startswith(RIGHT, pos):
            raise _Fail("bad character \"%s\" after \"%s\"" % (ahead, match.group()))
        tokens.append((kind, value, spaced, match.group()))
        spaced = False


def _lex(text):
    """The template as a list of text and action items (comments dropped, trim markers applied)."""
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
            closing, following = text.find(RIGHT, at), text.find(LEFT, at)
            if text.startswith("/*", at):
                pos, trim = _comment_end(text, at)
            elif closing < 0 or 0 <= following < closing:
                raise _Fail("unclosed action")
            else:
                tokens, pos, trim = _lex_action(text, at)
                items.append(_Item(tokens=tokens, line=line, raw=text[start:pos]))
        except _Fail as err:
            raise _Fail(err.problem, where) from None
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
        raise _Fail("unclosed comment")
    end += 2
    if text[end:end + 1] in tuple(_SPACE) and text.startswith("-" + RIGHT, end + 1):
        return end + 2 + len(RIGHT), True
    if text.startswith(RIGHT, end):
        return end + len(RIGHT), False
    raise _Fail("comment ends before closing delimiter")


# ---------------------------------------------------------------- parser

class _Parser(object):
    """Items to a tree: ("text", s), ("action", pipe, item), (if|with|range, pipe, body, else, item)."""

    def __init__(self, items):
        self.items, self.at, self.vars, self.loops = items, 0, ["$"], 0
        self.item, self.tokens, self.pos = None, (), 0

    def fail(self, problem, item=None):
        return _Fail(problem, item or self.item)

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
        del self.vars[mark:]
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
        if assign and decl[0] not in self.vars:
            raise self.fail("undefined variable \"%s\"" % decl[0])
        cmds = self.commands()
        if self.peek()[0] is not None:
            raise self.fail("unexpected \"%s\" in %s" % (self.peek()[3], context))
        if not assign:
            self.vars.extend(decl)
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
            if value not in self.vars:
                raise self.fail("undefined variable \"%s\"" % value)
            node = ("var", value, ())
        elif kind == "ident":
            if value not in _FUNCS:
                raise self.fail("function \"%s\" not defined" % value)
            node = ("fn", value)
        elif kind == "(":
            node = ("pipe", ([], False, self.commands()))
            if self.peek()[0] != ")":
                raise self.fail("unclosed left paren")
            self.pos += 1
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


# ---------------------------------------------------------------- values

def _kind(value):
    if value is None:
        return "nil"
    if value is EMPTY:
        return "empty"
    for kind, types in (("bool", bool), ("int", int), ("float", float), ("string", str), ("list", (list, tuple)), ("map", dict)):
        if isinstance(value, types):
            return kind
    return type(value).__name__


def _typename(value):
    return {"nil": "<nil>", "empty": "string", "float": "float64", "list": "[]interface {}",
            "map": "map[string]interface {}"}.get(_kind(value), _kind(value))


def _truth(value):
    if value is None or value is EMPTY:
        return False
    return bool(value) if isinstance(value, (bool, int, float, str, list, tuple, dict)) else True


def _go_float(value):
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


def _fmt(value):
    """``value`` as Go's fmt prints it with %v (nil is ``<nil>``, kURL's zero field ``""``)."""
    kind = _kind(value)
    if kind == "nil":
        return "<nil>"
    if kind == "empty":
        return ""
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float":
        return _go_float(value)
    if kind == "list":
        return "[" + " ".join(_fmt(v) for v in value) + "]"
    if kind == "map":
        return "map[" + " ".join("%s:%s" % (_fmt(k), _fmt(value[k])) for k in sorted(value, key=str)) + "]"
    return str(value)


def _go_quote(text):
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


def _find_key(mapping, name):
    if name in mapping:
        return name
    folded = name.casefold()
    return next((key for key in mapping if isinstance(key, str) and key.casefold() == folded), None)


# ---------------------------------------------------------------- functions

def _str(value):
    if value is EMPTY:
        return ""
    if not isinstance(value, str):
        raise _Fail("wrong type for value; expected string; got %s" % _typename(value))
    return value


def _strval(value):
    return value if isinstance(value, str) else _fmt(value)


def _zero_like(value, other):
    if value is not EMPTY:
        return value
    return {"bool": False, "int": 0, "float": 0.0}.get(_kind(other), "")


def _equal(left, right):
    left, right = _zero_like(left, right), _zero_like(right, left)
    kinds = (_kind(left), _kind(right))
    if "nil" in kinds:
        return kinds[0] == kinds[1]
    if kinds[0] not in ("bool", "int", "float", "string") or kinds[1] not in ("bool", "int", "float", "string"):
        raise _Fail("non-comparable type %s" % _typename(left if kinds[0] in ("list", "map") else right))
    if kinds[0] != kinds[1]:
        raise _Fail("incompatible types for comparison: %s and %s" % kinds)
    return left == right


def _less(left, right):
    left, right = _zero_like(left, right), _zero_like(right, left)
    kinds = (_kind(left), _kind(right))
    if kinds[0] not in ("int", "float", "string"):
        raise _Fail("invalid type for comparison: %s" % kinds[0])
    if kinds[0] != kinds[1]:
        raise _Fail("incompatible types for comparison: %s and %s" % kinds)
    return left < right


def _eq(first, *others):
    if not others:
        raise _Fail("missing argument for comparison")
    return any(_equal(first, other) for other in others)


def _len(value):
    if value is EMPTY:
        return 0
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, (list, tuple, dict)):
        return len(value)
    raise _Fail("len of type %s" % _typename(value))


def _index(item, *keys):
    for key in keys:
        if item is EMPTY or isinstance(item, dict):
            if isinstance(key, (list, tuple, dict)) or (item is EMPTY and not isinstance(key, str)):
                raise _Fail("can't index item of type %s with %s" % (_typename(item), _typename(key)))
            found = None if item is EMPTY else item.get(key)
            item = EMPTY if found is None else found
        elif isinstance(item, (list, tuple, str)) and _kind(key) == "int":
            seq = item.encode("utf-8") if isinstance(item, str) else item
            if not 0 <= key < len(seq):
                raise _Fail("index out of range: %d" % key)
            item = seq[key]
        else:
            raise _Fail("can't index item of type %s with %s" % (_typename(item), _typename(key)))
    return item


def _print(*args):
    out = []
    for at, arg in enumerate(args):
        if at and not isinstance(arg, (str, _Empty)) and not isinstance(args[at - 1], (str, _Empty)):
            out.append(" ")
        out.append(_fmt(arg))
    return "".join(out)


def _verb(spec, verb, arg):
    """One printf conversion (``spec`` is "%" with flags, width, precision); a wrong type prints as Go's does."""
    kind = _kind(arg)
    if verb == "v" or (verb == "s" and kind in ("string", "empty", "list", "map")) or (verb == "t" and kind == "bool"):
        return (spec + "s") % _fmt(arg)
    if verb == "q" and kind in ("string", "empty"):
        return (spec + "s") % _go_quote(_str(arg))
    if (verb in "dxXoc" and kind == "int") or (verb in "feEgG" and kind == "float"):
        return (spec + verb) % arg
    return "%%!%s(%s)" % (verb, "<nil>" if arg is None else "%s=%s" % (_typename(arg), _fmt(arg)))


def _printf(form, *args):
    out, used, pos, form = [], 0, 0, _str(form)
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
        out.append("%!(EXTRA " + ", ".join("%s=%s" % (_typename(a), _fmt(a)) for a in args[used:]) + ")")
    return "".join(out)


def _has(needle, haystack):
    if haystack is None or haystack is EMPTY:
        return False
    if not isinstance(haystack, (list, tuple)):
        raise _Fail("cannot find has on type %s" % _typename(haystack))
    return any(_kind(item) == _kind(needle) and item == needle for item in haystack)


def _ternary(if_true, if_false, condition):
    if condition is EMPTY:
        condition = False
    if not isinstance(condition, bool):
        raise _Fail("wrong type for value; expected bool; got %s" % _typename(condition))
    return if_true if condition else if_false


def _join(sep, values):
    values = [] if values is EMPTY or values is None else values if isinstance(values, (list, tuple)) else [values]
    return _str(sep).join(_strval(v) for v in values if v is not None)


# -- semverCompare (Masterminds semver constraints as Sprig uses them)

_CV = r"v?([0-9xX*]+)(?:\.([0-9xX*]+))?(?:\.([0-9xX*]+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
_TERM = re.compile(r"\s*(!=|>=|=>|<=|=<|~>|>|<|=|~|\^)?\s*" + _CV + r"\s*")
_HYPHEN = re.compile(r"(%s)\s+-\s+(%s)" % (re.sub(r"\((?!\?)", "(?:", _CV), re.sub(r"\((?!\?)", "(?:", _CV)))
_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?")


def _version(text):
    match = _VERSION.fullmatch(text)
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups()[:3]) + (match.group(4) or "",)


def _compare(left, right):
    if left[:3] != right[:3]:
        return -1 if left[:3] < right[:3] else 1
    if left[3] == right[3]:
        return 0
    if not left[3] or not right[3]:
        return 1 if not left[3] else -1
    keys = [[(0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")] for pre in (left[3], right[3])]
    return -1 if keys[0] < keys[1] else 1


def _constraint_term(match):
    """(op, bound version, which part is a wildcard or missing: "major", "minor", "patch" or None)."""
    op, major, minor, patch, pre = match.groups()
    parts = [major, minor, patch]
    wild = next((at for at, part in enumerate(parts) if part is None or part in ("x", "X", "*")), None)
    fixed = parts if wild is None else parts[:wild]
    if not all(part.isdigit() for part in fixed):
        raise _Fail("improper constraint: %s" % match.group().strip())
    bound = tuple(int(part) for part in fixed) + (0,) * (3 - len(fixed)) + (pre or "",)
    op = {"=>": ">=", "=<": "<=", "~>": "~", "=": ""}.get(op or "", op or "")
    return op, bound, None if wild is None else ("major", "minor", "patch")[wild]


def _constraint(text):
    """The constraint as OR groups of AND terms (op, bound version, which part is a wildcard)."""
    groups = []
    for group in _HYPHEN.sub(lambda m: ">= %s, <= %s" % m.groups(), text).split("||"):
        terms, pos = [], 0
        while True:
            match = _TERM.match(group, pos)
            if not match:
                raise _Fail("improper constraint: %s" % text)
            terms.append(_constraint_term(match))
            pos = match.end()
            if pos == len(group):
                break
            if group[pos] == ",":
                pos += 1
            elif not group[pos - 1].isspace():
                raise _Fail("improper constraint: %s" % text)
        groups.append(terms)
    return groups


def _satisfies(version, op, bound, dirty):
    if version[3] and not bound[3] and (op != "!=" or dirty):
        return False  # a pre-release only matches a constraint that names one
    order = _compare(version, bound)
    same_major, same_minor = version[0] == bound[0], version[1] == bound[1]
    if op == "" and dirty:
        op = "~"
    if op == "!=":
        if dirty and dirty != "major":
            return not same_major or (dirty == "patch" and not same_minor)
        return order != 0
    if op == ">":
        if dirty and dirty != "major" and same_major:
            return dirty == "patch" and version[1] > bound[1]
        return version[0] > bound[0] if dirty and dirty != "major" else order > 0
    if op == "<=" and dirty:
        return version[0] < bound[0] or (same_major and (version[1] <= bound[1] or dirty == "minor"))
    if op in ("~", "^"):
        return order >= 0 and _near(op, version, bound, dirty)
    return {"": order == 0, "<": order < 0, ">=": order >= 0, "<=": order <= 0}[op]


def _near(op, version, bound, dirty):
    if op == "~":
        if bound[:3] == (0, 0, 0) and dirty in (None, "major"):
            return True
        return version[0] == bound[0] and (version[1] == bound[1] or dirty == "minor")
    if bound[0] > 0 or dirty == "minor":
        return version[0] == bound[0]
    if version[0] > 0:
        return False
    if bound[1] > 0 or dirty == "patch":
        return version[1] == bound[1]
    return version[1] == 0 and version[2] == bound[2]


def _semver_compare(constraint, version):
    groups = _constraint(_str(constraint))
    parsed = _version(_str(version))
    if parsed is None:
        # Sprig's semverCompare returns an error for a version that does not parse (kURL's
        # files guard with `or (not .Version) ...`); here it is false, so "1.35.x" or "" never fails.
        return False
    return any(all(_satisfies(parsed, *term) for term in terms) for terms in groups)


_FUNCS = {
    # name: (function, least args, most args or None)
    "and": (None, 1, None), "or": (None, 1, None),
    "not": (lambda v: not _truth(v), 1, 1),
    "eq": (_eq, 1, None), "ne": (lambda a, b: not _equal(a, b), 2, 2),
    "lt": (_less, 2, 2), "le": (lambda a, b: _less(a, b) or _equal(a, b), 2, 2),
    "gt": (lambda a, b: not (_less(a, b) or _equal(a, b)), 2, 2), "ge": (lambda a, b: not _less(a, b), 2, 2),
    "len": (_len, 1, 1), "index": (_index, 1, None),
    "print": (_print, 0, None), "printf": (_printf, 1, None),
    "println": (lambda *a: " ".join(_fmt(v) for v in a) + "\n", 0, None),
    "semverCompare": (_semver_compare, 2, 2),
    "default": (lambda d, *given: d if not given or not _truth(given[0]) else given[0], 1, None),
    "empty": (lambda v: not _truth(v), 1, 1),
    "coalesce": (lambda *a: next((v for v in a if _truth(v)), None), 0, None),
    "contains": (lambda sub, s: _str(sub) in _str(s), 2, 2),
    "hasPrefix": (lambda pre, s: _str(s).startswith(_str(pre)), 2, 2),
    "hasSuffix": (lambda suf, s: _str(s).endswith(_str(suf)), 2, 2),
    "trim": (lambda s: _str(s).strip(), 1, 1),
    "trimPrefix": (lambda pre, s: _str(s)[len(_str(pre)):] if _str(s).startswith(_str(pre)) else _str(s), 2, 2),
    "trimSuffix": (lambda suf, s: _str(s)[:len(_str(s)) - len(_str(suf))] if _str(s).endswith(_str(suf)) else _str(s), 2, 2),
    "lower": (lambda s: _str(s).lower(), 1, 1), "upper": (lambda s: _str(s).upper(), 1, 1),
    "toString": (_strval, 1, 1),
    "quote": (lambda *a: " ".join(_go_quote(_strval(v)) for v in a if v is not None), 0, None),
    "squote": (lambda *a: " ".join("'%s'" % _strval(v) for v in a if v is not None), 0, None),
    "ternary": (_ternary, 3, 3), "list": (lambda *a: list(a), 0, None), "has": (_has, 2, 2),
    "join": (_join, 2, 2),
}


# ---------------------------------------------------------------- evaluation

class _Exec(object):
    def __init__(self, root):
        self.root, self.vars, self.out, self.item = root, [("$", root)], [], None

    def walk(self, nodes, dot):
        for node in nodes:
            kind = node[0]
            if kind == "text":
                self.out.append(node[1])
            elif kind == "action":
                self.item = node[2]
                value = self.pipeline(node[1], dot)
                if not node[1][0]:
                    self.out.append("<no value>" if value is None else _fmt(value))
            elif kind in ("break", "continue"):
                raise _Jump(kind)
            elif kind == "range":
                self.loop(node, dot)
            else:
                self.item, mark = node[4], len(self.vars)
                value = self.pipeline(node[1], dot)
                try:
                    if _truth(value):
                        self.walk(node[2], value if kind == "with" else dot)
                    else:
                        self.walk(node[3], dot)
                finally:
                    del self.vars[mark:]

    def loop(self, node, dot):
        _node_kind, (decl, _assign, cmds), body, other, self.item = node
        value = self.commands(cmds, dot)
        if isinstance(value, dict):
            pairs = [(key, value[key]) for key in sorted(value, key=str)]
        elif isinstance(value, (list, tuple)):
            pairs = list(enumerate(value))
        elif _kind(value) == "int":
            pairs = [(n, n) for n in range(value)]
        elif value is None or value is EMPTY:
            pairs = []
        else:
            raise _Fail("range can't iterate over %s" % _fmt(value))
        mark = len(self.vars)
        for key, elem in pairs:
            self.vars.extend(zip(decl, (key, elem) if len(decl) == 2 else (elem,)))
            try:
                self.walk(body, elem)
            except _Jump as jump:
                if jump.args[0] == "break":
                    break
            finally:
                del self.vars[mark:]
        if not pairs:
            self.walk(other, dot)

    def pipeline(self, pipe, dot):
        decl, assign, cmds = pipe
        value = self.commands(cmds, dot)
        if assign:
            at = max(i for i, (name, _value) in enumerate(self.vars) if name == decl[0])
            self.vars[at] = (decl[0], value)
        elif decl:
            self.vars.append((decl[0], value))
        return value

    def commands(self, cmds, dot):
        value = _NOFINAL
        for cmd in cmds:
            if cmd[0][0] == "fn":
                value = self.call(cmd[0][1], cmd[1:], dot, value)
            elif len(cmd) > 1 or value is not _NOFINAL:
                raise _Fail("can't give argument to non-function %s" % _describe(cmd[0]))
            elif cmd[0] == ("lit", None):
                raise _Fail("nil is not a command")
            else:
                value = self.arg(cmd[0], dot)
        return value

    def call(self, name, args, dot, final):
        func, least, most = _FUNCS[name]
        count = len(args) + (final is not _NOFINAL)
        if count < least or (most is not None and count > most):
            raise _Fail("wrong number of args for %s: want %s%d got %d" % (name, "at least " if most is None else "", least, count))
        operands = list(args) + ([("lit", final)] if final is not _NOFINAL else [])
        if func is None:  # and / or: evaluate the operands in turn, stop at the deciding one (Go 1.18+)
            for operand in operands:
                value = self.arg(operand, dot)
                if _truth(value) == (name == "or"):
                    break
            return value
        values = [self.arg(operand, dot) for operand in operands]
        try:
            return func(*values)
        except _Fail as err:
            raise _Fail("error calling %s: %s" % (name, err.problem)) from None
        except (TypeError, ValueError, OverflowError) as err:
            raise _Fail("error calling %s: %s" % (name, err)) from None

    def arg(self, node, dot):
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "dot":
            return dot
        if kind == "field":
            return self.fields(dot, node[1])
        if kind == "var":
            value = next(value for name, value in reversed(self.vars) if name == node[1])
            return self.fields(value, node[2])
        if kind == "fn":
            return self.call(node[1], (), dot, _NOFINAL)
        if kind == "pipe":
            return self.commands(node[1][2], dot)
        return self.fields(self.arg(node[1], dot), node[2])

    def fields(self, value, names):
        for name in names:
            if value is EMPTY:
                continue
            key = _find_key(value, name) if isinstance(value, dict) else None
            if value is self.root and key is None or not isinstance(value, dict):
                raise _Fail("can't evaluate field %s in type %s" % (name, "data" if value is self.root else _typename(value)))
            value = EMPTY if key is None or value[key] is None else value[key]
        return value


def _describe(node):
    if node[0] == "field":
        return "." + ".".join(node[1])
    if node[0] == "var":
        return node[1] + "".join("." + name for name in node[2])
    return {"lit": lambda: _fmt(node[1]), "dot": lambda: "."}.get(node[0], lambda: "(...)")()


def _message(source, item, problem):
    action = " ".join((item.raw if item else "").split())
    if len(action) > _ACTION_CLIP:
        action = action[:_ACTION_CLIP - 3] + "..."
    return "%s: line %d: %s: %s" % (source, item.line if item else 0, problem, action)


# ---------------------------------------------------------------- API

def template_data(installer, is_primary=True, is_join=False, is_upgrade=False, primary_hosts=(), secondary_hosts=()):
    """The data kURL renders host preflights with (dict with keys Installer, IsPrimary, IsJoin, IsUpgrade, IsCluster,
    PrimaryHosts, SecondaryHosts, RemoteHosts)."""
    primaries, secondaries = [str(h) for h in primary_hosts], [str(h) for h in secondary_hosts]
    return {
        "Installer": installer if installer is not None else {},
        "IsPrimary": bool(is_primary), "IsJoin": bool(is_join), "IsUpgrade": bool(is_upgrade),
        # Our reading: a cluster is more than one host. kURL's TemplateData has the field; the
        # source at hand does not show where kURL sets it.
        "IsCluster": len(primaries) + len(secondaries) > 1,
        "PrimaryHosts": primaries, "SecondaryHosts": secondaries, "RemoteHosts": primaries + secondaries,
    }


def render_text(text, data, source="template"):
    """`text` with every {{kurl ...}} action evaluated (other text, including plain {{ ... }}, unchanged)."""
    if LEFT not in text:
        return text
    runner = _Exec(data)
    try:
        parser = _Parser(_lex(text))
        nodes = parser.parse_list()[0]
        runner.walk(nodes, data)
    except _Fail as err:
        raise KurlTemplateError(_message(source, err.item or runner.item, err.problem)) from None
    return "".join(runner.out)


def render_tree(value, data, source="template"):
    """A parsed YAML value with render_text applied to every string scalar (keys too) that contains '{{kurl'; other values
    returned as they are (new containers, input not mutated). An error names the scalar's path after ``source``."""
    return _render_tree(value, data, source, "")


def _render_tree(value, data, source, path):
    if isinstance(value, str):
        return render_text(value, data, "%s at %s" % (source, path) if path else source) if LEFT in value else value
    if isinstance(value, dict):
        return {_render_tree(key, data, source, path): _render_tree(item, data, source, "%s%s%s" % (path, "." if path else "", key))
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_render_tree(item, data, source, "%s[%d]" % (path, at)) for at, item in enumerate(value))
    return value


def has_templates(value):
    """True if any string in a parsed YAML value (or a text) contains '{{kurl'."""
    if isinstance(value, str):
        return LEFT in value
    if isinstance(value, dict):
        return any(has_templates(key) or has_templates(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return any(has_templates(item) for item in value)
    return False
