# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the ``mooring`` command line.

Each command group lives in ``<group>.py`` next to this file and exposes
``register(subparsers)``; every leaf parser sets ``func(args) -> int``. Groups are found
by that file name, so adding one touches no shared file. Domain errors
(:class:`MooringError`, a path that would leave its root among them) and an operating-system
error on a file become one line per problem on stderr and exit code 1; usage errors exit 2. Anything
else is a bug: one line saying so (no traceback; ``MOORING_DEBUG=1`` re-raises it) and exit
code 70. A closed standard output (``| head``) ends the command quietly with exit code 0.

Start-up pays only for the command that runs: when the first argument names a group, only
that group's module is imported (all of them only for the top-level help and usage errors),
and a group module imports its backend inside the command functions, never at its top
(tests/unit/plugins/plugin_utils/cli/test_cli_imports.py holds both).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

_PACKAGE = "ansible_collections.mooring.cluster.plugins.plugin_utils.cli"


def groups():
    """The command groups: every ``<group>.py`` beside this file, sorted."""
    here = os.path.dirname(os.path.abspath(__file__))
    names = (f[:-len(".py")] for f in os.listdir(here) if f.endswith(".py") and f not in ("main.py", "__init__.py"))
    return sorted(names)


def needed_groups(argv):
    """The groups whose parsers ``argv`` needs: the one it names first, else every group."""
    names = groups()
    return argv[:1] if argv[:1] and argv[0] in names else names


def build_parser(only=None):
    """The parser with every group, or only the groups named in ``only``."""
    parser = argparse.ArgumentParser(
        prog="mooring",
        description="mooring.cluster: installer specs, catalog, bundles, PKI and more.",
    )
    sub = parser.add_subparsers(dest="group", metavar="GROUP")
    sub.required = True
    for group in groups() if only is None else only:
        importlib.import_module("%s.%s" % (_PACKAGE, group)).register(sub)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(needed_groups(argv))
    args = parser.parse_args(argv)
    return call(args.func, args)


def call(func, *args):
    """``func(*args)`` as a command: its exit code, with domain and file errors as one line each on stderr
    (exit 1) and anything else one line naming the bug (exit 70)."""
    try:
        code = int(func(*args) or 0)
        sys.stdout.flush()
        return code
    except MooringError as exc:
        for warning in exc.warnings:
            sys.stderr.write("warning: %s\n" % warning)
        for problem in exc.problems:
            sys.stderr.write("error: %s\n" % problem)
        return 1
    except BrokenPipeError:
        # The reader went away (``mooring catalog list | head``): not an error. Nothing more can
        # be written to stdout, including Python's own flush at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:
        sys.stderr.write("error: %s\n" % os_error_line(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug: say so in one line, never a traceback
        if os.environ.get("MOORING_DEBUG"):
            raise
        sys.stderr.write("error: internal error (%s: %s); run again with MOORING_DEBUG=1 and report it\n"
                         % (type(exc).__name__, str(exc).splitlines()[0][:200] if str(exc) else ""))
        return 70


def os_error_line(exc):
    """One line for an OSError: the file(s) it names and the system's words."""
    names = [n for n in (exc.filename, exc.filename2) if n is not None]
    text = exc.strerror or str(exc)
    return "%s: %s" % (" -> ".join(str(n) for n in names), text) if names else text
