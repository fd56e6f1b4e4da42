# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: a Python port of the npm ``object-hash`` v3 default digest.

``object_hash(value)`` returns what ``require("object-hash")(value)`` returns in Node.js
(SHA-1, hex, default options) for the values a YAML or JSON document can hold: mappings,
sequences, strings, numbers, booleans, null, plus timestamps (JS ``Date``) and binary
(Node ``Buffer``), which is what js-yaml hands out for ``!!timestamp`` and ``!!binary``.

The JavaScript behaviour that has to be reproduced byte for byte:

* The digest is SHA-1 over one serialisation, written as UTF-8, without separators
  between values::

      string   -> "string:" + <length in UTF-16 code units> + ":" + <text>
      number   -> "number:" + <JavaScript Number#toString()>
      boolean  -> "bool:true" / "bool:false"
      null     -> "Null"          (undefined -> "Undefined")
      array    -> "array:" + <count> + ":" + <every element, in order>
      Date     -> "date:" + <Date#toJSON(), e.g. 2020-01-25T00:00:00.000Z>
      Buffer   -> "buffer:" + <the raw bytes>
      object   -> "object:" + <count> + ":" + for each key (key, ":", value, ",")

* Object keys are sorted in JavaScript string order (UTF-16 code units) and, with the
  default ``respectType: true``, the three keys ``prototype``, ``__proto__`` and
  ``constructor`` are put in front of them (and counted).  For a plain object
  ``prototype`` is undefined, ``__proto__`` is ``Object.prototype`` (itself serialised
  as an object with those three keys) and ``constructor`` is the native ``Object``
  function (``fn:`` + "[native]" + "function-name:Object" + its own, empty, key list).

* Every object, array, Date and Buffer visited is remembered, in visiting order, for
  the whole digest; meeting one again (``Object.prototype`` and ``Object`` in every
  nested object, or the same YAML anchor twice) writes the string
  ``"[CIRCULAR:<index>]"`` instead.  So the serialisation of a nested value depends on
  what was visited before it; identity (``is``) is what counts, as in JavaScript.

* Numbers are JavaScript doubles: Python ints are rounded to the nearest double first.
"""

from __future__ import annotations

import datetime
import hashlib
import math
from collections.abc import Mapping
from decimal import Decimal

from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import ObjectHashError

__all__ = [
    "UNDEFINED",
    "js_date_to_json",
    "js_key",
    "js_number_to_string",
    "js_sort_key",
    "js_utf16_length",
    "js_utf8",
    "object_hash",
    "object_hash_serialize",
]


class _Undefined:
    """JavaScript ``undefined`` (only ever needed inside this port)."""

    __slots__ = ()

    def __repr__(self):
        return "UNDEFINED"

    def __bool__(self):
        return False


UNDEFINED = _Undefined()

# Stand-ins for the two host objects every plain object drags into the serialisation.
_OBJECT_PROTOTYPE = object()
_OBJECT_FUNCTION = object()
_RESPECT_TYPE_KEYS = ("prototype", "__proto__", "constructor")


# --------------------------------------------------------------------------- JS helpers


def js_utf16_length(text):
    """``text.length`` in JavaScript: the number of UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_utf8(text):
    """The UTF-8 bytes Node writes for a JS string.

    Python strings may hold surrogate code points (e.g. from ``"\\ud83d\\ude00"``
    escapes); JavaScript sees them as UTF-16 code units, so a valid pair is one
    character and a lone surrogate becomes U+FFFD when encoded.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        units = text.encode("utf-16-le", "surrogatepass")
        return units.decode("utf-16-le", "replace").encode("utf-8")


def js_sort_key(text):
    """Sort key giving JavaScript's default string order (UTF-16 code unit order)."""
    return text.encode("utf-16-be", "surrogatepass")


def _to_double(number):
    if isinstance(number, float):
        return number
    try:
        return float(number)
    except OverflowError:
        return float("inf") if number > 0 else float("-inf")


def js_number_to_string(number):
    """``Number#toString()`` (ECMAScript Number::toString, radix 10) for a Python number."""
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise ObjectHashError("not a number: %r" % (number,))
    value = _to_double(number)
    if math.isnan(value):
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"  # also for -0
    sign = "-" if value < 0 else ""
    # repr() is the shortest string that round-trips, which is what ECMAScript requires
    # of the digits too; only the layout differs.
    parsed = Decimal(repr(abs(value))).normalize()
    digit_tuple, exponent = parsed.as_tuple()[1:]
    digits = "".join(str(d) for d in digit_tuple)
    k = len(digits)
    n = exponent + k  # value = 0.<digits> * 10**n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = "%se%s%d" % (mantissa, "+" if e > 0 else "-", abs(e))
    return sign + text


def js_key(key):
    """A mapping key as the JavaScript property name it becomes (``String(key)``)."""
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, (int, float)):
        return js_number_to_string(key)
    raise ObjectHashError("unsupported mapping key %r" % (key,))


def js_keys(mapping):
    """``[(js_name, value), ...]`` for a mapping; two keys naming one property are an error."""
    seen = {}
    for key, value in mapping.items():
        name = js_key(key)
        if name in seen:
            raise ObjectHashError("mapping keys %r and %r are the same JavaScript property %r"
                                  % (seen[name][0], key, name))
        seen[name] = (key, value)
    return [(name, pair[1]) for name, pair in seen.items()]


def _days_from_civil(year, month, day):
    # Proleptic Gregorian calendar, days since 1970-01-01 (H. Hinnant's algorithm).
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days):
    days += 719468
    era = (days if days >= 0 else days - 146096) // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    year = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return year + (month <= 2), month, day


def _epoch_ms(value):
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        days = _days_from_civil(value.year, value.month, value.day)
        ms = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
        return days * 86400000 + ms
    return _days_from_civil(value.year, value.month, value.day) * 86400000


def js_date_to_json(value):
    """``Date#toJSON()`` for a ``datetime``/``date`` (naive means UTC; millisecond precision)."""
    ms = _epoch_ms(value)
    days, ms_of_day = divmod(ms, 86400000)
    year, month, day = _civil_from_days(days)
    seconds, millis = divmod(ms_of_day, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    if 0 <= year <= 9999:
        year_text = "%04d" % year
    else:
        year_text = "%s%06d" % ("-" if year < 0 else "+", abs(year))
    return "%s-%02d-%02dT%02d:%02d:%02d.%03dZ" % (year_text, month, day, hour, minute, second, millis)


# ------------------------------------------------------------------------ serialiser


def _identity(value):
    """What stands for ``value`` in the visited list.

    CPython shares some immutable objects (``()``, ``b""``, one-byte ``bytes``), so for
    tuples and bytes identity says nothing about YAML aliases: each occurrence gets a
    fresh token (it still takes its place in the list, as in JavaScript).
    """
    if isinstance(value, (tuple, bytes)):
        return object()
    return value


class _Serializer:
    """One pass over the value: O(n) in the number of values written.

    object-hash keeps a list of visited objects and scans it for each new one, which is
    quadratic in the number of nested objects. Here the list only holds them (so that an
    ``id`` stays unique while it is remembered) and a dict maps ``id`` to the position, so
    the cycle check is O(1) and the whole serialisation linear in its output;
    benchmarks/spec_bench.py measures it at growing sizes.
    """

    def __init__(self):
        self.out = []
        self.context = []  # every object visited, in order; keeps each one alive
        self.position = {}  # id(object) -> its index in ``context``

    def write(self, text):
        self.out.append(js_utf8(text) if isinstance(text, str) else bytes(text))

    def remembered(self, obj):
        """object-hash's cycle check: True (and the marker written) if seen before."""
        index = self.position.get(id(obj))
        if index is not None:
            self.string("[CIRCULAR:%d]" % index)
            return True
        self.position[id(obj)] = len(self.context)
        self.context.append(obj)
        return False

    def string(self, text):
        self.write("string:%d:" % js_utf16_length(text))
        self.write(text)

    def dispatch(self, value):
        if value is UNDEFINED:
            self.write("Undefined")
        elif value is None:
            self.write("Null")
        elif isinstance(value, bool):
            self.write("bool:true" if value else "bool:false")
        elif isinstance(value, (int, float)):
            self.write("number:" + js_number_to_string(value))
        elif isinstance(value, str):
            self.string(value)
        elif isinstance(value, Mapping):
            self.plain_object(value)
        elif isinstance(value, (list, tuple)):
            if not self.remembered(_identity(value)):
                self.write("array:%d:" % len(value))
                for element in value:
                    self.dispatch(element)
        elif isinstance(value, datetime.date):
            if not self.remembered(value):
                self.write("date:" + js_date_to_json(value))
        elif isinstance(value, (bytes, bytearray)):
            if not self.remembered(_identity(value)):
                self.write("buffer:")
                self.write(value)
        else:
            raise ObjectHashError("cannot hash a %s like JavaScript would" % type(value).__name__)

    def plain_object(self, mapping):
        if self.remembered(mapping):
            return
        pairs = js_keys(mapping)
        own = dict(pairs)
        names = sorted(own, key=js_sort_key)
        self.write("object:%d:" % (len(names) + len(_RESPECT_TYPE_KEYS)))
        for name in _RESPECT_TYPE_KEYS:
            self.string(name)
            self.write(":")
            if name in own:  # an own property shadows the inherited one
                self.dispatch(own[name])
            elif name == "prototype":
                self.write("Undefined")
            elif name == "__proto__":
                self.object_prototype()
            else:
                self.object_function()
            self.write(",")
        for name in names:
            self.string(name)
            self.write(":")
            self.dispatch(own[name])
            self.write(",")

    def object_prototype(self):
        if self.remembered(_OBJECT_PROTOTYPE):
            return
        self.write("object:3:")
        for name, writer in (("prototype", lambda: self.write("Undefined")),
                             ("__proto__", lambda: self.write("Null")),
                             ("constructor", self.object_function)):
            self.string(name)
            self.write(":")
            writer()
            self.write(",")

    def object_function(self):
        # A native function: its source is replaced by "[native]", its name follows,
        # then its own properties (none) -- without the respectType keys.
        self.write("fn:")
        self.string("[native]")
        self.string("function-name:Object")
        if not self.remembered(_OBJECT_FUNCTION):
            self.write("object:0:")


def object_hash_serialize(value):
    """The exact bytes object-hash v3 feeds to SHA-1 for ``value`` (default options)."""
    serializer = _Serializer()
    serializer.dispatch(value)
    return b"".join(serializer.out)


def object_hash(value):
    """``require("object-hash")(value)`` with default options: SHA-1, lowercase hex."""
    if value is UNDEFINED:
        raise ObjectHashError("Object argument required.")
    return hashlib.sha1(object_hash_serialize(value)).hexdigest()  # noqa: S324 - not for security
