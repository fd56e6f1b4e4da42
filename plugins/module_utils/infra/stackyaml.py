# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: a cluster stack's YAML files: read bounded through ``common/yamlio``,
dumped without anchors, and single scalars edited in place (comments and layout kept)."""

from __future__ import annotations

import re

try:
    import yaml

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - PyYAML comes with ansible-core on the controller
    HAS_YAML = False
    YAML_IMPORT_ERROR = _exc

from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stacktree import StackError

_KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[^\s#:'\"-][^:#]*?|'[^']*'|\"[^\"]*\")\s*:(?=\s|$)")
_SCALAR = re.compile(r"^(?P<pre>\s*)(?P<value>\"[^\"]*\"|'[^']*'|[^\s#][^#]*?)?(?P<post>\s+#.*|\s*)$")


def _unquote(key):
    key = key.strip()
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
        return key[1:-1]
    return key


def _find_scalar(lines, keys):
    """Index of the line holding ``keys`` (a path of block-mapping keys) and the span of its value.

    Returns ``(line index, start, end)`` of the scalar text (quotes included) or None when the
    path is not a plain block-style scalar. Only block mappings are followed, by indentation.
    """
    start, end, parent_indent = 0, len(lines), -1
    found = None
    for want in keys:
        child_indent = None
        found = None
        for i in range(start, end):
            line = lines[i].rstrip("\r\n")
            stripped = line.strip()
            if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
                continue
            indent = len(line) - len(line.lstrip(" "))
            if indent <= parent_indent:
                end = i
                break
            if child_indent is None:
                child_indent = indent
            if indent != child_indent:
                continue
            m = _KEY_LINE.match(line)
            if m and _unquote(m.group("key")) == want:
                found = (i, m.end())
                # the block of this key ends at the next line indented <= child_indent
                nested_end = end
                for k in range(i + 1, end):
                    other = lines[k].rstrip("\r\n")
                    if other.strip() and not other.strip().startswith("#") and \
                            len(other) - len(other.lstrip(" ")) <= child_indent:
                        nested_end = k
                        break
                start, end, parent_indent = i + 1, nested_end, child_indent
                break
        if found is None:
            return None
    i, col = found
    line = lines[i].rstrip("\r\n")
    m = _SCALAR.match(line[col:])
    if not m or m.group("value") is None or m.group("value")[0] in "|>&*!{[":
        return None
    return i, col + m.start("value"), col + m.end("value")


def yaml_scalar(text, keys):
    """The plain text of the block-style scalar at ``keys`` (quotes removed), or None."""
    lines = text.splitlines(True)
    hit = _find_scalar(lines, keys)
    if hit is None:
        return None
    i, a, b = hit
    return _unquote(lines[i][a:b])


def set_yaml_scalar(text, keys, value):
    """``text`` with the scalar at ``keys`` replaced by ``value`` (its quoting kept); None when absent.

    Everything else — comments, key order, indentation — stays byte for byte.
    """
    lines = text.splitlines(True)
    hit = _find_scalar(lines, keys)
    if hit is None:
        return None
    i, a, b = hit
    old = lines[i][a:b]
    quote = old[0] if old[:1] in ("'", '"') and len(old) >= 2 and old[-1] == old[0] else ""
    lines[i] = lines[i][:a] + quote + value + quote + lines[i][b:]
    return "".join(lines)


def load_yaml(path, what, max_aliases=0):
    """A stack's YAML file through yamlio: UTF-8, bounded; ``max_aliases`` 0 where the format has no anchors."""
    if not HAS_YAML:  # pragma: no cover
        raise missing_library("PyYAML", "for cluster stacks", YAML_IMPORT_ERROR, StackError)
    try:
        return yamlio.load_file(path, max_aliases=max_aliases)
    except FileNotFoundError:
        raise StackError("%s missing" % what, ["%s: %s is missing" % (path, what)]) from None
    except IsADirectoryError:
        raise StackError("bad %s" % what, ["%s: is a directory, not a file" % path]) from None
    except OSError as exc:
        raise StackError("bad %s" % what, ["%s: cannot read: %s" % (path, exc.strerror or exc)]) from None
    except yamlio.YamlInputError as exc:
        raise StackError("bad YAML", exc.problems) from None


def chart_text(path, data=None):
    """The text of a stack chart's Chart.yaml, which carries a version: UTF-8, else a StackError."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    try:
        yamlio.decode(data, path)
    except yamlio.YamlInputError as exc:
        raise StackError("bad chart", exc.problems) from None
    return data.decode("utf-8")  # as it is, a byte-order mark included


_DUMPERS = {}


def dumper():
    """SafeDumper that never writes anchors (a value used twice is written twice)."""
    if "no-aliases" not in _DUMPERS:
        class _NoAliases(yaml.SafeDumper):
            def ignore_aliases(self, data):
                return True

        _DUMPERS["no-aliases"] = _NoAliases
    return _DUMPERS["no-aliases"]


def dump(doc):
    """``doc`` as block-style YAML, keys in their order, no anchors."""
    return yaml.dump(doc, Dumper=dumper(), sort_keys=False, default_flow_style=False)


def dump_all(docs):
    """``docs`` as a YAML stream (each document starting with ``---``), as :func:`dump` writes one."""
    return yaml.dump_all(docs, Dumper=dumper(), sort_keys=False, default_flow_style=False, explicit_start=True)
