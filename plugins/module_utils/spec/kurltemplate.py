# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: kURL's ``{{kurl ...}}`` templates in host preflight files.

kURL renders its host preflight documents (troubleshoot.sh ``HostPreflight``) with Go's
text/template, delimiters ``{{kurl`` and ``}}``, before it decodes them; plain ``{{ ... }}``
is left for troubleshoot. This module evaluates that subset of Go templates in Python, with the
data kURL gives them (:func:`template_data`): ``if``/``else if``/``else``, ``range`` (``else``,
``break``, ``continue``), ``with``, variables, pipelines, parenthesised expressions, literals,
trim markers and comments; Go's builtins ``and or not eq ne lt le gt ge len index print printf
println`` and the Sprig functions those files use or may use (see :data:`spec.templatefuncs.FUNCS`).

Fields are written with Go names (``.Installer.Spec.Kubernetes.LoadBalancerAddress``) and looked
up case-insensitively in the parsed Installer document (JSON names). kURL gives every absent
add-on an empty struct; here any field missing under ``.Installer`` is an empty value that prints
as ``""`` and is false. Errors raise :class:`KurlTemplateError` naming the source, the line and
the action.

The template is read by :mod:`spec.templateparse`, its values printed and compared as Go does in
:mod:`spec.templatevalues`, its functions are :mod:`spec.templatefuncs` (``semverCompare``:
:mod:`spec.templatesemver`); this module evaluates the tree and is the entry point.

Unlike Go's, an evaluation is bounded (:class:`spec.templatevalues.Budget`, shared by every scalar of one
:func:`render_tree`): 1,000,000 steps, 1 MiB of rendered text and of any one string, 100 nested levels. A ``range``
is checked against the steps left before its first iteration (never a list of its numbers); the error is a
one-line :class:`KurlTemplateError` like any other.
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import KurlTemplateError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatefuncs import BUDGETED, FUNCS
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templateparse import LEFT, Parser, lex
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatevalues import (
    EMPTY,
    MAX_DEPTH,
    Bound,
    Budget,
    Fail,
    fold_keys,
    go_format,
    go_type,
    kind_of,
    truth,
)

_NOFINAL = object()
_ACTION_CLIP = 80
_PROBLEM_CLIP = 200


class _Jump(Exception):
    """Internal: {{kurl break}} or {{kurl continue}} (the word is the argument)."""


# ---------------------------------------------------------------- evaluation

class _Exec(object):
    def __init__(self, root, budget):
        self.root, self.vars, self.out, self.item = root, [("$", root)], [], None
        self.budget, self.folded = budget, {}  # folded: id of a mapping of the data -> fold_keys(mapping)

    def emit(self, text):
        self.budget.emit(len(text))
        self.out.append(text)

    def walk(self, nodes, dot):
        for node in nodes:
            self.budget.spend()
            kind = node[0]
            if kind == "text":
                self.emit(node[1])
            elif kind == "action":
                self.item = node[2]
                value = self.pipeline(node[1], dot)
                if not node[1][0]:
                    self.emit("<no value>" if value is None else go_format(value, self.budget))
            elif kind in ("break", "continue"):
                raise _Jump(kind)
            elif kind == "range":
                self.loop(node, dot)
            else:
                self.item, mark = node[4], len(self.vars)
                value = self.pipeline(node[1], dot)
                try:
                    if truth(value):
                        self.walk(node[2], value if kind == "with" else dot)
                    else:
                        self.walk(node[3], dot)
                finally:
                    del self.vars[mark:]

    def loop(self, node, dot):
        """Go's walkRange: the range's variables hold the value ranged over (so an else can read them), then each
        element (and its key or index); ``range $x = ...`` sets the variable outside instead."""
        _node_kind, (decl, assign, cmds), body, other, self.item = node
        value = self.commands(cmds, dot)
        if isinstance(value, (dict, list, tuple)):
            count = len(value)
        elif kind_of(value) == "int":
            count = max(value, 0)
        elif value is None or value is EMPTY:
            count = 0
        else:
            raise Fail("range can't iterate over %s" % go_format(value))
        if count > self.budget.left:  # each iteration is a step: refused before the first, nothing built
            raise Bound("range over %d items: more than the %d evaluation steps left" % (count, max(self.budget.left, 0)))
        if isinstance(value, dict):
            pairs = ((key, value[key]) for key in sorted(value, key=str))
        elif isinstance(value, (list, tuple)):
            pairs = enumerate(value)
        else:
            pairs = ((n, n) for n in range(count))
        mark = len(self.vars)
        if assign:
            self.vars[self.find(decl[0])] = (decl[0], value)
        else:
            self.vars.extend((name, value) for name in decl)
        inner = len(self.vars)
        try:
            for key, elem in pairs:
                self.budget.spend()
                if assign:
                    self.vars[self.find(decl[0])] = (decl[0], elem)
                elif decl:
                    self.vars[inner - len(decl):inner] = list(zip(decl, (key, elem) if len(decl) == 2 else (elem,)))
                try:
                    self.walk(body, elem)
                except _Jump as jump:
                    if jump.args[0] == "break":
                        break
                finally:
                    del self.vars[inner:]
            if not count:
                self.walk(other, dot)
        finally:
            del self.vars[mark:]

    def find(self, name):
        """Where the innermost variable ``name`` is in self.vars (the parser made sure it is), a step per 8 looked at
        (a Python loop costs more per item than the text a step per 16 characters pays for)."""
        at = len(self.vars) - 1
        while self.vars[at][0] != name:
            at -= 1
        self.budget.spend((len(self.vars) - at) // 8)
        return at

    def pipeline(self, pipe, dot):
        decl, assign, cmds = pipe
        value = self.commands(cmds, dot)
        if assign:
            self.vars[self.find(decl[0])] = (decl[0], value)
        elif decl:
            self.vars.append((decl[0], value))
        return value

    def commands(self, cmds, dot):
        value = _NOFINAL
        for cmd in cmds:
            self.budget.spend()
            if cmd[0][0] == "fn":
                value = self.call(cmd[0][1], cmd[1:], dot, value)
            elif len(cmd) > 1 or value is not _NOFINAL:
                raise Fail("can't give argument to non-function %s" % _describe(cmd[0]))
            elif cmd[0] == ("lit", None):
                raise Fail("nil is not a command")
            else:
                value = self.arg(cmd[0], dot)
        return value

    def call(self, name, args, dot, final):
        func, least, most = FUNCS[name]
        count = len(args) + (final is not _NOFINAL)
        if count < least or (most is not None and count > most):
            raise Fail("wrong number of args for %s: want %s%d got %d" % (name, "at least " if most is None else "", least, count))
        operands = list(args) + ([("lit", final)] if final is not _NOFINAL else [])
        if func is None:  # and / or: evaluate the operands in turn, stop at the deciding one (Go 1.18+)
            for operand in operands:
                value = self.arg(operand, dot)
                if truth(value) == (name == "or"):
                    break
            return value
        values = [self.arg(operand, dot) for operand in operands]
        self.budget.chars(sum(len(value) for value in values if isinstance(value, str)))  # what it reads
        try:
            if name in BUDGETED:
                return func(self.budget, *values)
            value = func(*values)
            if isinstance(value, str):  # the others build at most a few times what they read (upper, lower)
                self.budget.string(len(value), "%s's result" % name)
            return value
        except Bound:
            raise
        except Fail as err:
            raise Fail("error calling %s: %s" % (name, err.problem)) from None
        except (TypeError, ValueError, OverflowError) as err:
            raise Fail("error calling %s: %s" % (name, err)) from None

    def arg(self, node, dot):
        self.budget.spend()
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "dot":
            return dot
        if kind == "field":
            return self.fields(dot, node[1])
        if kind == "var":
            return self.fields(self.vars[self.find(node[1])][1], node[2])
        if kind == "fn":
            return self.call(node[1], (), dot, _NOFINAL)
        if kind == "pipe":
            return self.commands(node[1][2], dot)
        return self.fields(self.arg(node[1], dot), node[2])

    def key(self, mapping, name):
        """Go's field ``name`` in a mapping of the data: its JSON key, case-insensitively (each mapping folded once)."""
        if name in mapping:
            return name
        folded = self.folded.get(id(mapping))
        if folded is None:
            self.budget.spend(len(mapping))
            folded = self.folded[id(mapping)] = fold_keys(mapping)
        return folded.get(name.casefold())

    def fields(self, value, names):
        self.budget.spend(len(names))
        for name in names:
            if value is EMPTY:
                continue
            key = self.key(value, name) if isinstance(value, dict) else None
            if value is self.root and key is None or not isinstance(value, dict):
                raise Fail("can't evaluate field %s in type %s" % (name, "data" if value is self.root else go_type(value)))
            value = EMPTY if key is None or value[key] is None else value[key]
        return value


def _describe(node):
    if node[0] == "field":
        return "." + ".".join(node[1])
    if node[0] == "var":
        return node[1] + "".join("." + name for name in node[2])
    return {"lit": lambda: go_format(node[1]), "dot": lambda: "."}.get(node[0], lambda: "(...)")()


def _clip(text, limit):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _message(source, item, problem):
    """One line: the source, the line, the problem (a value it quotes clipped) and the action (clipped)."""
    return "%s: line %d: %s: %s" % (source, item.line if item else 0, _clip(problem, _PROBLEM_CLIP),
                                    _clip(item.raw if item else "", _ACTION_CLIP))


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


def render_text(text, data, source="template", budget=None):
    """`text` with every {{kurl ...}} action evaluated (other text, including plain {{ ... }}, unchanged), within
    ``budget`` (a fresh :class:`spec.templatevalues.Budget` when None)."""
    if LEFT not in text:
        return text
    runner = _Exec(data, Budget() if budget is None else budget)
    try:
        parser = Parser(lex(text, runner.budget))
        nodes = parser.parse_list()[0]
        runner.walk(nodes, data)
    except Fail as err:
        raise KurlTemplateError(_message(source, err.item or runner.item, err.problem)) from None
    except RecursionError:  # not reached within MAX_DEPTH unless the caller's own stack is already deep
        raise KurlTemplateError(_message(source, runner.item, "nested too deep for this Python (the limit is %d levels)"
                                         % MAX_DEPTH)) from None
    return "".join(runner.out)


def render_tree(value, data, source="template", budget=None):
    """A parsed YAML value with render_text applied to every string scalar (keys too) that contains '{{kurl'; other values
    returned as they are (new containers, input not mutated). An error names the scalar's path after ``source``. The
    scalars share ``budget`` (a fresh one when None): the whole value is evaluated within the bounds of one template."""
    return _render_tree(value, data, source, "", Budget() if budget is None else budget)


def _render_tree(value, data, source, path, budget):
    if isinstance(value, str):
        return render_text(value, data, "%s at %s" % (source, path) if path else source, budget) if LEFT in value else value
    if isinstance(value, dict):
        return {_render_tree(key, data, source, path, budget):
                _render_tree(item, data, source, "%s%s%s" % (path, "." if path else "", key), budget)
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_render_tree(item, data, source, "%s[%d]" % (path, at), budget) for at, item in enumerate(value))
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
