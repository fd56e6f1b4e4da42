# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: domain errors shared by every backend.

Backends raise these; front ends (modules, action plugins, filters, the CLI) turn them into
``fail_json(msg=...)``, ``AnsibleFilterError`` or a one-line-per-problem message and a
non-zero exit code.
"""

from __future__ import annotations


class MooringError(Exception):
    """Base class. ``problems`` holds one human-readable line per problem.

    ``warnings`` holds what the input does that is accepted but ignored (one line each); front
    ends show them with the problems, so an invalid input still names everything it uses that
    is not supported.
    """

    def __init__(self, message, problems=None, warnings=None):
        self.problems = list(problems or [])
        self.warnings = list(warnings or [])
        if not self.problems:
            self.problems = [str(message)]
        super().__init__(message)

    def __str__(self):
        if len(self.problems) == 1:
            return self.problems[0]
        return "%s:\n%s" % (self.args[0], "\n".join("  - %s" % p for p in self.problems))


class PathEscapeError(MooringError, ValueError):
    """A name is not a safe path component, or a path resolves outside its root."""


EXCERPT = 80


def excerpt(value, limit=EXCERPT):
    """``repr(value)`` cut to ``limit`` characters: what an error message may quote of any input."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def shown(value, limit=200):
    """``value`` as a message or a report line may show it: as it is when printable (a long text cut, ending in
    ``...``), else :func:`excerpt` (control characters and lone surrogates escaped): never a line break."""
    text = value if isinstance(value, str) else repr(value)
    if text.isprintable():
        return text if len(text) <= limit else text[:limit - 3] + "..."
    return excerpt(text, limit)


def reason(exc):
    """The first line of an exception's text, at most 200 characters (its type's name when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def missing_library(package, purpose, error, cls=MooringError):
    """The error for a Python library the controller lacks: names the pip package to install.

    ``package`` is the name on PyPI (``requirements.txt`` of this collection lists every one),
    ``purpose`` what needs it ("to validate installer specs"), ``error`` the ImportError seen.
    """
    return cls("the Python library %s is required %s and is not installed on the controller (%s): "
               "pip install '%s', or pip install -r requirements.txt from the mooring.cluster collection"
               % (package, purpose, error, package))
