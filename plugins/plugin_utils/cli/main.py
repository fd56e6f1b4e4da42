# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the ``mooring`` command line.

Each command group lives in ``<group>.py`` next to this file and exposes
``register(subparsers)``; every leaf parser sets ``func(args) -> int``. Groups are found
by that file name, so adding one touches no shared file. Domain errors
(:class:`MooringError`) become one line per problem on stderr and exit code 1; usage
errors exit 2.
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


def build_parser():
    parser = argparse.ArgumentParser(
        prog="mooring",
        description="mooring.cluster: installer specs, catalog, bundles, PKI and more.",
    )
    sub = parser.add_subparsers(dest="group", metavar="GROUP")
    sub.required = True
    for group in groups():
        importlib.import_module("%s.%s" % (_PACKAGE, group)).register(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except MooringError as exc:
        for problem in exc.problems:
            sys.stderr.write("error: %s\n" % problem)
        return 1
    except KeyboardInterrupt:
        return 130
