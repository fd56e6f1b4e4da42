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
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import KurlTemplateError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatefuncs import FUNCS
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templateparse import LEFT, Parser, lex
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatevalues import EMPTY, Fail, find_key, go_format, go_type, kind_of, truth

_NOFINAL = object()
_ACTION_CLIP = 80


class _Jump(Exception):
    """Internal: {{kurl break}} or {{kurl continue}} (the word is the argument)."""


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
                    self.out.append("<no value>" if value is None else go_format(value))
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
        _node_kind, (decl, _assign, cmds), body, other, self.item = node
        value = self.commands(cmds, dot)
        if isinstance(value, dict):
            pairs = [(key, value[key]) for key in sorted(value, key=str)]
        elif isinstance(value, (list, tuple)):
            pairs = list(enumerate(value))
        elif kind_of(value) == "int":
            pairs = [(n, n) for n in range(value)]
        elif value is None or value is EMPTY:
            pairs = []
        else:
            raise Fail("range can't iterate over %s" % go_format(value))
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
        try:
            return func(*values)
        except Fail as err:
            raise Fail("error calling %s: %s" % (name, err.problem)) from None
        except (TypeError, ValueError, OverflowError) as err:
            raise Fail("error calling %s: %s" % (name, err)) from None

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
            key = find_key(value, name) if isinstance(value, dict) else None
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
        parser = Parser(lex(text))
        nodes = parser.parse_list()[0]
        runner.walk(nodes, data)
    except Fail as err:
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
