# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the one way a document's shape is checked.

Every document the collection reads from outside (installer spec, catalog and overlays, lock,
bundle manifest, solution manifest, stack files) is checked field by field through a
:class:`Shape`: the first wrong field raises the document's own error class with one line in one
style::

    WHERE: PATH: must be EXPECTED, not FOUND

``WHERE`` names the document (a file name), ``PATH`` the field (``spec.addons[2].version``),
``EXPECTED`` what a reader needs there and ``FOUND`` what is there (its type for a wrong type, a
bounded excerpt for a wrong value). A document's checker subclasses :class:`Shape` and adds its
own fields' rules built from these. Standard library only: host modules use it too.
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt

HEX64 = re.compile(r"^[0-9a-f]{64}$")
# A key shown as is in a path; any other key is quoted (bounded).
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TYPE_NAMES = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "nothing (null)"}


def type_name(value):
    """``value``'s kind as a reader says it: ``a mapping``, ``a list``, ``a string``, ``nothing (null)``..."""
    for kind in (bool, dict, list, str, int, float, type(None)):
        if isinstance(value, kind):
            return _TYPE_NAMES[kind]
    return "a %s" % type(value).__name__


def must_be(expected, value, show_value=True):
    """``must be EXPECTED, not FOUND``: the one wording of a value that is not what it should be (FOUND the value's
    excerpt, or its kind when not ``show_value``); a message puts its field first: ``FIELD: must be ...``."""
    return "must be %s, not %s" % (expected, excerpt(value) if show_value else type_name(value))


def field(path, key):
    """``path.key`` (``path[key]`` for an index); a key that is not plain is quoted (bounded)."""
    if isinstance(key, int) and not isinstance(key, bool):
        return "%s[%d]" % (path, key)
    text = key if isinstance(key, str) and _PLAIN_KEY.match(key) else excerpt(key, 60)
    return "%s.%s" % (path, text) if path else text


class Shape(object):
    """Checks one document; the first wrong field raises ``error`` (a MooringError class).

    ``where`` names the document. Each check returns the value it accepted (or the default for
    an ``optional`` field that is absent), so a checker reads like the document it checks.
    """

    error = MooringError

    def __init__(self, where, error=None):
        self.where = where
        if error is not None:
            self.error = error

    def fail(self, path, problem):
        """Raise the one-line error for the field at ``path``."""
        raise self.error("%s: %s: %s" % (self.where, path, problem) if path else "%s: %s" % (self.where, problem))

    def collect(self, found, check, *args):
        """Run one check; its problem (when it fails) goes to ``found`` instead of being raised. True when
        it passed, so a checker that lists every wrong field reads like one that stops at the first."""
        try:
            check(*args)
        except self.error as exc:
            found.append(str(exc))
            return False
        return True

    def expected(self, path, expected, value, show_value=False):
        """Raise ``PATH: must be EXPECTED, not FOUND`` (the value's excerpt when ``show_value``, else its kind)."""
        self.fail(path, must_be(expected, value, show_value))

    def mapping(self, value, path, optional=False):
        if value is None and optional:
            return {}
        if not isinstance(value, dict):
            self.expected(path, "a mapping", value)
        return value

    def listing(self, value, path, optional=False):
        if value is None and optional:
            return []
        if not isinstance(value, list):
            self.expected(path, "a list", value)
        return value

    def text(self, value, path, optional=False, limit=1024, empty=False):
        """A string of at most ``limit`` characters (non-empty unless ``empty``)."""
        if value is None and optional:
            return None
        if not isinstance(value, str) or (not value and not empty):
            self.expected(path, "a string" if empty else "a non-empty string", value)
        if len(value) > limit:
            self.fail(path, "must be at most %d characters, not %d" % (limit, len(value)))
        return value

    def boolean(self, value, path, optional=False):
        if value is None and optional:
            return None
        if not isinstance(value, bool):
            self.expected(path, "true or false", value)
        return value

    def count(self, value, path, optional=False, what="a whole number >= 0"):
        """A whole number >= 0 (never a boolean)."""
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.expected(path, what, value, show_value=True)
        return value

    def pattern(self, value, path, regex, what, optional=False):
        """A string that ``regex`` matches; ``what`` says in words what it must be."""
        if value is None and optional:
            return None
        if not isinstance(value, str) or not regex.match(value):
            self.expected(path, what, value, show_value=True)
        return value

    def sha256(self, value, path, optional=False):
        return self.pattern(value, path, HEX64, "a sha256 (64 lowercase hex digits)", optional)

    def one_of(self, value, path, choices, optional=False):
        if value is None and optional:
            return None
        if isinstance(value, bool) or value not in choices:
            self.expected(path, "one of %s" % ", ".join(str(c) for c in choices), value, show_value=True)
        return value

    def keys(self, value, path, required=(), allowed=None):
        """``value`` (a mapping) has every ``required`` key and, when ``allowed`` is given, no other."""
        self.mapping(value, path)
        for key in required:
            if key not in value:
                self.fail(field(path, key), "is missing")
        if allowed is not None:
            for key in sorted(value, key=str):
                if key not in allowed and key not in required:
                    self.fail(field(path, key), "is not a known field (known: %s)"
                              % ", ".join(sorted(set(allowed) | set(required))))
        return value

    def json_shaped(self, value, path):
        """Mappings with string keys, lists and scalars only: what canonical JSON takes."""
        stack = [(value, path)]
        while stack:
            item, where = stack.pop()
            if isinstance(item, dict):
                for key, sub in item.items():
                    if not isinstance(key, str):
                        self.expected(field(where, key), "a key that is a string", key)
                    stack.append((sub, field(where, key)))
            elif isinstance(item, list):
                stack.extend((sub, field(where, i)) for i, sub in enumerate(item))
            elif item is not None and not isinstance(item, (str, int, float)):
                self.expected(where, "a JSON value", item)
