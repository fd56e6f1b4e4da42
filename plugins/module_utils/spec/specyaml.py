# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the installer document read as YAML, as mooring.cluster and as kurl.sh read it.

Two YAML loaders are provided.  :func:`load_yaml_1_2` is a strict YAML 1.2 core-schema
loader.  :func:`load_yaml_kurl` reproduces js-yaml 4.1's DEFAULT_SCHEMA, which is what
kurl.sh actually used and which differs from the core schema on a few plain scalars
(``1_000`` and ``0b101`` are numbers, ``-.5`` is a string, ``2020-01-25`` is a
timestamp).  For an ID that matches kurl.sh, load with :func:`load_yaml_kurl` or call
:func:`spec.kurlhash.kurl_hash_yaml` on the whole document.
"""

from __future__ import annotations

import datetime
import re

try:
    import yaml
    from yaml.constructor import ConstructorError
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
    _SafeLoader = yaml.SafeLoader
except ImportError as _exc:  # PyYAML is a controller requirement; hosts may lack it
    HAS_YAML = False
    YAML_IMPORT_ERROR = _exc
    _SafeLoader = object
    ConstructorError = ValueError
    MappingNode = ScalarNode = SequenceNode = None

from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import KurlHashError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.object_hash import js_key

# An installer document is a few kilobytes and a few hundred values (the largest of the kURL corpora: 19 KB).
# These bounds are far above that and low enough that a hostile document is refused within a fraction of a
# second of CPU: the pure-Python reader costs about 30 microseconds a value.
MAX_BYTES = 256 * 1024
MAX_NODES = 10000

_MERGE_TAG = "tag:yaml.org,2002:merge"
_TAG = "tag:yaml.org,2002:"

_CORE_NULL = re.compile(r"~|null|Null|NULL|")
_CORE_BOOL = re.compile(r"true|True|TRUE|false|False|FALSE")
_CORE_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_CORE_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                         r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")

_JS_FLOAT = re.compile(r"[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?"
                       r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
                       r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_JS_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_JS_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[Tt]|[ \t]+)"
                           r"([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?"
                           r"(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?")


def _core_float(text):
    lowered = text.lower()
    if lowered.endswith(".inf"):
        return float("-inf") if lowered.startswith("-") else float("inf")
    if lowered == ".nan":
        return float("nan")
    return float(text)


def _core_int(text):
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _js_is_int(text):
    """js-yaml 4.1 ``resolveYamlInteger`` (underscores, 0b/0o/0x, signs on every base)."""
    if not text:
        return False
    index = 0
    if text[0] in "+-":
        index = 1
    rest = text[index:]
    if rest == "0":
        return True
    if rest.startswith("0") and len(rest) > 1 and rest[1] in "bxo":
        digits = {"b": "01", "o": "01234567", "x": "0123456789abcdefABCDEF"}[rest[1]]
        body = rest[2:]
        return (any(c in digits for c in body) and all(c == "_" or c in digits for c in body)
                and not body.endswith("_"))
    if rest.startswith("0"):
        rest = rest[1:]  # js-yaml steps over one leading zero before the base-10 loop
    if rest.startswith("_"):
        return False
    return (any(c in "0123456789" for c in rest) and all(c in "0123456789_" for c in rest)
            and not rest.endswith("_"))


def _js_int(text):
    value = text.replace("_", "")
    sign = -1 if value.startswith("-") else 1
    if value[:1] in "+-":
        value = value[1:]
    if value[:2] in ("0b", "0o", "0x"):
        return sign * int(value[2:], {"b": 2, "o": 8, "x": 16}[value[1]])
    return sign * int(value, 10)


def _js_float(text):
    value = text.replace("_", "").lower()
    sign = -1.0 if value.startswith("-") else 1.0
    if value[:1] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * float("inf")
    if value == ".nan":
        return float("nan")
    return sign * float(value)


def _js_is_float(text):
    return _JS_FLOAT.fullmatch(text) is not None and not text.endswith("_")


def _js_timestamp(text):
    """js-yaml's timestamp: ``Date.UTC`` semantics (fields overflow into the next unit)."""
    match = _JS_DATE.fullmatch(text) or _JS_TIMESTAMP.fullmatch(text)
    groups = match.groups() + (None,) * (11 - len(match.groups()))
    year, month, day = int(groups[0]), int(groups[1]) - 1, int(groups[2])
    hour = minute = second = millis = 0
    if groups[3] is not None:
        hour, minute, second = int(groups[3]), int(groups[4]), int(groups[5])
        if groups[6]:
            millis = int((groups[6][:3] + "00")[:3])
    if 0 <= year <= 99:
        year += 1900  # Date.UTC maps two-digit years into the 1900s
    year += month // 12
    month %= 12
    try:
        moment = datetime.datetime(year, month + 1, 1, tzinfo=datetime.timezone.utc)
        moment += datetime.timedelta(days=day - 1, hours=hour, minutes=minute, seconds=second,
                                     milliseconds=millis)
        if groups[8]:
            delta = datetime.timedelta(hours=int(groups[9]), minutes=int(groups[10] or 0))
            moment = moment - delta if groups[8] == "+" else moment + delta
    except (OverflowError, ValueError) as err:
        raise ValueError("timestamp %r is outside the range this port supports" % text) from err
    return moment


class _LoaderBase(_SafeLoader):
    """Shared: js-yaml-like mappings (no duplicate keys, ``<<`` merges in place)."""

    yaml_implicit_resolvers = {}  # replaced by ``implicit_tag``

    def implicit_tag(self, value):
        raise NotImplementedError

    def resolve(self, kind, value, implicit):
        if kind is ScalarNode:
            if implicit[0]:
                tag = self.implicit_tag(value)
                if tag is not None:
                    return tag
            implicit = (False, implicit[1])
        return super().resolve(kind, value, implicit)

    def mapping_key(self, key, node):
        try:
            hash(key)
        except TypeError as err:
            raise ConstructorError("while constructing a mapping", node.start_mark,
                                   "found an unsupported (unhashable) key", node.start_mark) from err
        return key

    def fill_mapping(self, data, node):
        if not isinstance(node, MappingNode):
            raise ConstructorError(None, None, "expected a mapping node, but found %s" % node.id,
                                   node.start_mark)
        overridable = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                if isinstance(value_node, SequenceNode):
                    sources = [self.construct_object(sub, deep=True) for sub in value_node.value]
                else:
                    sources = [self.construct_object(value_node, deep=True)]
                for source in sources:
                    if not isinstance(source, dict):
                        raise ConstructorError("while constructing a mapping", node.start_mark,
                                               "cannot merge mappings; the provided source object is"
                                               " unacceptable", value_node.start_mark)
                    for key, value in source.items():
                        if key not in data:
                            data[key] = value
                            overridable.add(key)
                continue
            key = self.mapping_key(self.construct_object(key_node, deep=True), key_node)
            if key in data and key not in overridable:
                raise ConstructorError("while constructing a mapping", node.start_mark,
                                       "found duplicated mapping key %r" % (key,), key_node.start_mark)
            data[key] = self.construct_object(value_node, deep=False)

    def construct_map(self, node):
        data = {}
        yield data
        self.fill_mapping(data, node)

    def construct_merge_scalar(self, node):
        return self.construct_scalar(node)

    def checked_scalar(self, node, pattern_ok, convert, what):
        value = self.construct_scalar(node)
        if not pattern_ok(value):
            raise ConstructorError(None, None, "cannot resolve %r as %s" % (value, what), node.start_mark)
        try:
            return convert(value)
        except ValueError as err:
            raise ConstructorError(None, None, str(err), node.start_mark) from err


class _Yaml12CoreLoader(_LoaderBase):
    """YAML 1.2.2 core schema (10.3.2): ``yes``/``on`` are strings, ``0o17`` is octal."""

    yaml_constructors = dict(getattr(_LoaderBase, "yaml_constructors", {}))

    def implicit_tag(self, value):
        if _CORE_NULL.fullmatch(value):
            return _TAG + "null"
        if _CORE_BOOL.fullmatch(value):
            return _TAG + "bool"
        if _CORE_INT.fullmatch(value):
            return _TAG + "int"
        if _CORE_FLOAT.fullmatch(value):
            return _TAG + "float"
        if value == "<<":
            return _MERGE_TAG
        return None

    def construct_core_bool(self, node):
        return self.checked_scalar(node, _CORE_BOOL.fullmatch, lambda v: v.lower() == "true", "a bool")

    def construct_core_int(self, node):
        return self.checked_scalar(node, _CORE_INT.fullmatch, _core_int, "an int")

    def construct_core_float(self, node):
        return self.checked_scalar(node, lambda v: _CORE_FLOAT.fullmatch(v) or _CORE_INT.fullmatch(v),
                                   lambda v: _core_float(v) if _CORE_FLOAT.fullmatch(v) else float(_core_int(v)),
                                   "a float")


if HAS_YAML:
    _Yaml12CoreLoader.add_constructor(_TAG + "map", _Yaml12CoreLoader.construct_map)
    _Yaml12CoreLoader.add_constructor(_TAG + "bool", _Yaml12CoreLoader.construct_core_bool)
    _Yaml12CoreLoader.add_constructor(_TAG + "int", _Yaml12CoreLoader.construct_core_int)
    _Yaml12CoreLoader.add_constructor(_TAG + "float", _Yaml12CoreLoader.construct_core_float)
    _Yaml12CoreLoader.add_constructor(_MERGE_TAG, _Yaml12CoreLoader.construct_merge_scalar)


class _JsYaml4Loader(_LoaderBase):
    """js-yaml 4.1 DEFAULT_SCHEMA: core + js-yaml's number quirks + timestamp + merge."""

    yaml_constructors = dict(getattr(_LoaderBase, "yaml_constructors", {}))

    def implicit_tag(self, value):
        if _CORE_NULL.fullmatch(value):
            return _TAG + "null"
        if _CORE_BOOL.fullmatch(value):
            return _TAG + "bool"
        if _js_is_int(value):
            return _TAG + "int"
        if _js_is_float(value):
            return _TAG + "float"
        if _JS_DATE.fullmatch(value) or _JS_TIMESTAMP.fullmatch(value):
            return _TAG + "timestamp"
        if value == "<<":
            return _MERGE_TAG
        return None

    def mapping_key(self, key, node):
        # A JavaScript object's keys are strings: js-yaml applies String() to scalars.
        if isinstance(key, (datetime.date, bytes, list, dict, set, tuple)):
            raise ConstructorError("while constructing a mapping", node.start_mark,
                                   "a %s key has no portable JavaScript string form" % type(key).__name__,
                                   node.start_mark)
        return js_key(key)

    def construct_js_bool(self, node):
        return self.checked_scalar(node, _CORE_BOOL.fullmatch, lambda v: v.lower() == "true", "a bool")

    def construct_js_int(self, node):
        return self.checked_scalar(node, _js_is_int, _js_int, "an int")

    def construct_js_float(self, node):
        return self.checked_scalar(node, _js_is_float, _js_float, "a float")

    def construct_js_timestamp(self, node):
        return self.checked_scalar(node, lambda v: _JS_DATE.fullmatch(v) or _JS_TIMESTAMP.fullmatch(v),
                                   _js_timestamp, "a timestamp")

    def construct_js_set(self, node):
        data = {}
        yield data
        self.fill_mapping(data, node)
        if any(value is not None for value in data.values()):
            raise ConstructorError(None, None, "a !!set may only have null values", node.start_mark)

    def construct_js_omap(self, node):
        pairs = []
        yield pairs
        for key, value in self._pairs(node):
            pairs.append({key: value})

    def construct_js_pairs(self, node):
        pairs = []
        yield pairs
        for key, value in self._pairs(node):
            pairs.append([key, value])

    def _pairs(self, node):
        if not isinstance(node, SequenceNode):
            raise ConstructorError(None, None, "expected a sequence of one-key mappings", node.start_mark)
        for sub in node.value:
            if not isinstance(sub, MappingNode) or len(sub.value) != 1:
                raise ConstructorError(None, None, "expected a one-key mapping", sub.start_mark)
            key_node, value_node = sub.value[0]
            key = self.mapping_key(self.construct_object(key_node, deep=True), key_node)
            yield key, self.construct_object(value_node, deep=True)


if HAS_YAML:
    _JsYaml4Loader.add_constructor(_TAG + "map", _JsYaml4Loader.construct_map)
    _JsYaml4Loader.add_constructor(_TAG + "bool", _JsYaml4Loader.construct_js_bool)
    _JsYaml4Loader.add_constructor(_TAG + "int", _JsYaml4Loader.construct_js_int)
    _JsYaml4Loader.add_constructor(_TAG + "float", _JsYaml4Loader.construct_js_float)
    _JsYaml4Loader.add_constructor(_TAG + "timestamp", _JsYaml4Loader.construct_js_timestamp)
    _JsYaml4Loader.add_constructor(_TAG + "set", _JsYaml4Loader.construct_js_set)
    _JsYaml4Loader.add_constructor(_TAG + "omap", _JsYaml4Loader.construct_js_omap)
    _JsYaml4Loader.add_constructor(_TAG + "pairs", _JsYaml4Loader.construct_js_pairs)
    _JsYaml4Loader.add_constructor(_MERGE_TAG, _JsYaml4Loader.construct_merge_scalar)


def _require_yaml():
    if not HAS_YAML:
        raise missing_library("PyYAML", "to read YAML", YAML_IMPORT_ERROR, KurlHashError)


def load_yaml_1_2(text, name="<installer>"):
    """Load one YAML document with YAML 1.2 core-schema scalar rules.

    ``true/True/TRUE``, ``false/...``, ``null/Null/NULL/~``/empty; ints ``[-+]?[0-9]+``,
    ``0o[0-7]+``, ``0x[0-9a-fA-F]+``; floats incl. ``.inf``/``.nan``; everything else
    (``yes``, ``on``, ``1_000``, ``0b1``, ``2020-01-25``, ``1:30``) stays a string.
    Duplicate keys are an error; ``<<`` merge keys are honoured.  Read within
    :mod:`common.yamlio`'s bounds (size, depth, expanded size), with an installer's limits (:data:`MAX_BYTES`,
    :data:`MAX_NODES`); raises
    :class:`yamlio.YamlInputError` on bad input.
    """
    _require_yaml()
    return yamlio.load(text, name, loader=_Yaml12CoreLoader, max_bytes=MAX_BYTES, max_nodes=MAX_NODES)


def load_yaml_kurl(text, name="<installer>"):
    """Load one YAML document the way kurl.sh did (js-yaml 4.1 ``load``, DEFAULT_SCHEMA).

    Differences from :func:`load_yaml_1_2`: numbers may contain ``_`` (``1_000``),
    ``0b``/``0o``/``0x`` with an optional sign, ``.5`` but not ``-.5``; plain
    ``YYYY-MM-DD[ T]hh:mm:ss...`` scalars become UTC ``datetime`` objects (JS ``Date``);
    mapping keys become JavaScript strings (``1: x`` has key ``"1"``); ``!!set`` is a
    mapping to ``None``, ``!!omap``/``!!pairs`` are lists of one-key mappings / pairs.
    Bounded as :func:`load_yaml_1_2`.
    """
    _require_yaml()
    return yamlio.load(text, name, loader=_JsYaml4Loader, max_bytes=MAX_BYTES, max_nodes=MAX_NODES)
