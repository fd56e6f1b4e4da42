# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the one way user-supplied YAML is read, with bounds.

Controller side only (it needs PyYAML, which ansible-core brings to every controller; no
module sent to a host imports it). Every spec, lock, overlay, stack file, solution manifest
and PKI request goes through :func:`load`, which:

- decodes UTF-8 only (a UTF-8 byte-order mark is allowed): other bytes, UTF-16 among them,
  are an error naming the file and the byte offset;
- refuses a document larger than ``max_bytes`` before parsing it;
- composes with a depth limit (``max_depth`` nested collections) and a budget on the
  *expanded* size: every node counts once, and every alias counts as many nodes as the
  anchored value it repeats, so a few hundred bytes of nested aliases (a "billion laughs")
  are refused after a bounded amount of work instead of being expanded by whatever walks
  the value later; ``max_aliases`` caps the number of alias uses (0 where a format needs none);
- leaves dates as strings (no implicit timestamps), so every value is JSON-shaped, and refuses a
  key given twice in one mapping.

Errors are :class:`YamlInputError` with one line naming the file; no message embeds the
document's values beyond a short excerpt.

The loader classes of :mod:`spec.specyaml` (YAML 1.2 core, js-yaml's DEFAULT_SCHEMA) are
made bounded with :func:`bounded` so that the kURL hash keeps its exact semantics.
"""

from __future__ import annotations

import codecs
import errno
import os

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt, missing_library

try:
    import yaml
    from yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - exercised by sanity's import test only
    HAS_YAML = False
    YAML_IMPORT_ERROR = _exc

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 100000
MAX_ALIASES = 1000


class YamlInputError(MooringError):
    """A YAML input is not UTF-8, too large, too deep, expands too far, or does not parse."""


def decode(data, name):
    """UTF-8 text of ``data`` (bytes); anything else is one error naming ``name`` and the offset."""
    if isinstance(data, str):
        return data
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) or data[:4] in (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE):
        raise YamlInputError("%s: UTF-16/32 text is not supported; save it as UTF-8" % name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlInputError("%s: not UTF-8 (byte 0x%02x at offset %d)" % (name, data[exc.start], exc.start)) from None
    if "\x00" in text:
        raise YamlInputError("%s: NUL byte at offset %d; not a text file" % (name, len(text[:text.index("\x00")].encode("utf-8"))))
    return text.lstrip("\ufeff")


def read_bytes(path, max_bytes=MAX_BYTES):
    """The bytes of a regular file, at most ``max_bytes`` (:func:`fileio.read_regular`).

    A file that cannot be opened or read raises its ``OSError`` (``IsADirectoryError`` for a
    directory), for the caller to word; a special file (FIFO, device, socket: never opened for
    a blocking read) or one larger than ``max_bytes`` is a :class:`YamlInputError`.
    """
    try:
        return fileio.read_regular(path, max_bytes, what="")
    except fileio.NotRegularFileError as exc:
        if exc.errno == errno.EISDIR:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path) from None
        raise YamlInputError("%s: not a regular file" % path) from None
    except fileio.TooLargeError as exc:
        raise YamlInputError(str(exc)) from None


class _Bounds(object):
    """Mixin for a pure-Python PyYAML loader: depth, alias and expanded-size budgets."""

    max_depth = MAX_DEPTH
    max_nodes = MAX_NODES
    max_aliases = MAX_ALIASES
    source_name = "<yaml>"

    def _bound_error(self, what):
        mark = self.peek_event().start_mark if self.check_event() else None
        where = " (line %d, column %d)" % (mark.line + 1, mark.column + 1) if mark else ""
        raise YamlInputError("%s: %s%s" % (self.source_name, what, where))

    def compose_node(self, parent, index):
        state = self.__dict__.setdefault("_bounds_state", {"depth": 0, "nodes": 0, "aliases": 0, "weight": {}})
        if self.check_event(AliasEvent):
            state["aliases"] += 1
            if state["aliases"] > self.max_aliases:
                self._bound_error("more than %d aliases" % self.max_aliases if self.max_aliases else
                                  "aliases (*name) are not allowed here")
            node = super().compose_node(parent, index)
            state["nodes"] += state["weight"].get(id(node), 1)
            if state["nodes"] > self.max_nodes:
                self._bound_error("aliases expand to more than %d values" % self.max_nodes)
            return node
        nested = self.check_event(MappingStartEvent) or self.check_event(SequenceStartEvent)
        if nested:
            state["depth"] += 1
            if state["depth"] > self.max_depth:
                self._bound_error("nested deeper than %d levels" % self.max_depth)
        start = state["nodes"]
        state["nodes"] += 1
        if state["nodes"] > self.max_nodes:
            self._bound_error("more than %d values" % self.max_nodes)
        try:
            node = super().compose_node(parent, index)
        finally:
            if nested:
                state["depth"] -= 1
        if node.__class__ is not yaml.ScalarNode:
            state["weight"][id(node)] = state["nodes"] - start
        return node


_BOUNDED = {}


def bounded(loader):
    """``loader`` (a pure-Python SafeLoader subclass) with :class:`_Bounds` mixed in (cached)."""
    cls = _BOUNDED.get(loader)
    if cls is None:
        cls = _BOUNDED[loader] = type("Bounded" + loader.__name__, (_Bounds, loader), {})
    return cls


def _plain_loader():
    cls = _BOUNDED.get("plain")
    if cls is None:
        class _NoDates(yaml.SafeLoader):
            """SafeLoader without implicit timestamps (dates stay strings) that refuses a key given
            twice in one mapping (YAML says keys are unique; PyYAML would keep the last silently)."""

            def construct_mapping(self, node, deep=False):
                if isinstance(node, yaml.MappingNode):
                    seen = set()
                    for key_node, _value in node.value:
                        if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                            key = (key_node.tag, key_node.value)
                            if key in seen:
                                raise yaml.constructor.ConstructorError(
                                    None, None, "found duplicated mapping key %s" % excerpt(key_node.value, 60),
                                    key_node.start_mark)
                            seen.add(key)
                return super().construct_mapping(node, deep=deep)

        _NoDates.yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }
        cls = _BOUNDED["plain"] = bounded(_NoDates)
    return cls


def _require_yaml():
    if not HAS_YAML:
        raise missing_library("PyYAML", "to read YAML", YAML_IMPORT_ERROR, YamlInputError)


def _loader_for(text, name, loader, max_depth, max_nodes, max_aliases):
    cls = bounded(loader) if loader is not None else _plain_loader()
    inst = cls(text)
    inst.source_name = name
    inst.max_depth = max_depth
    inst.max_nodes = max_nodes
    inst.max_aliases = max_aliases
    return inst


def _parse_error(name, exc):
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = " (line %d, column %d)" % (mark.line + 1, mark.column + 1) if mark is not None else ""
    return YamlInputError("%s is not valid YAML: %s%s" % (name, str(problem)[:200], where))


def load(data, name="<yaml>", loader=None, multi=False, max_bytes=MAX_BYTES, max_depth=MAX_DEPTH,
         max_nodes=MAX_NODES, max_aliases=MAX_ALIASES):
    """The value of one YAML document (or, with ``multi``, the list of non-empty documents).

    ``data`` is bytes or text; ``loader`` a pure-Python SafeLoader subclass (default: YAML 1.1
    safe, without timestamps). Raises :class:`YamlInputError`.
    """
    _require_yaml()
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise YamlInputError("%s: %d bytes; the limit is %d" % (name, size, max_bytes))
    text = decode(data, name)
    inst = _loader_for(text, name, loader, max_depth, max_nodes, max_aliases)
    try:
        if multi:
            docs = []
            while inst.check_data():
                doc = inst.get_data()
                if doc is not None:
                    docs.append(doc)
            return docs
        return inst.get_single_data()
    except YamlInputError:
        raise
    except yaml.YAMLError as exc:
        raise _parse_error(name, exc) from None
    except RecursionError:
        raise YamlInputError("%s: nested too deeply" % name) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a constructor refusing a scalar
        raise YamlInputError("%s: %s" % (name, str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)) from None
    finally:
        inst.dispose()


def load_file(path, loader=None, multi=False, max_bytes=MAX_BYTES, **bounds):
    """:func:`load` of a regular file's bytes (size checked before reading; :func:`read_bytes`)."""
    return load(read_bytes(path, max_bytes), str(path), loader=loader, multi=multi, max_bytes=max_bytes, **bounds)
