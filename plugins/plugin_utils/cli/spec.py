# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: ``mooring spec validate|hash|resolve``."""

from __future__ import annotations

import contextlib
import sys

# The backends (jsonschema, PyYAML, the catalog) are imported by the command that runs, not here:
# only the group that runs is imported, and ``mooring catalog`` imports this module for its options.


def warn(warnings):
    """Each warning on one line of stderr, in the order found."""
    for line in warnings:
        sys.stderr.write("warning: %s\n" % line)


def named(path, exc):
    """``exc`` (a SpecError or ResolveError) with every problem prefixed by the file it is about."""
    name = "<stdin>" if path == "-" else path
    problems = [p if p.startswith(name + ":") or p.startswith(name + " ") else "%s: %s" % (name, p) for p in exc.problems]
    return type(exc)(exc.args[0] if exc.args else "invalid", problems, exc.warnings)


@contextlib.contextmanager
def about(path):
    """Errors of reading the installer file ``path`` ('-' for stdin) as the CLI words them: a file that
    cannot be read is a SpecError, and every problem of the spec names the file."""
    from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import SpecError

    try:
        yield
    except OSError as exc:
        raise SpecError("cannot read %s: %s" % (path, exc.strerror or exc)) from None
    except SpecError as exc:
        raise named(path, exc) from None


def output_target(path):
    """Refuse an output path that can never be written (a directory, or below a file) before any work."""
    import os

    from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import SpecError

    if path in (None, "-"):
        return
    if os.path.isdir(path):
        raise SpecError("%s: is a directory; name the lock file to write" % path)
    parent = os.path.dirname(os.path.abspath(path))
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if parent and not os.path.isdir(parent):
        raise SpecError("%s: cannot be written: %s is not a directory" % (path, parent))


def _validate(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.resolve import read_installer

    with about(args.file):
        installer = read_installer(path=args.file)
    warn(installer.warnings)
    sys.stdout.write("%s: valid (%s installer, hash %s)\n" % (args.file, installer.source, installer.hash))
    return 0


def _hash(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.resolve import read_text
    from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import hash_installer

    with about(args.file):
        short, _digest, warnings = hash_installer(read_text(args.file))
    warn(warnings)
    sys.stdout.write(short + "\n")
    return 0


def _resolve(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import write_if_changed
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import ResolveError
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import dump_lock
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.resolve import read_installer, resolve

    output_target(args.output)
    with about(args.file):
        installer = read_installer(path=args.file)
    warn(installer.warnings)
    try:
        text = dump_lock(resolve(installer, args.catalog, args.catalog_overlay, args.arch))
    except ResolveError as exc:
        raise named(args.file, exc) from None
    if args.output in (None, "-"):
        sys.stdout.write(text)
        return 0
    changed = write_if_changed(args.output, text)
    sys.stdout.write("%s: %s (hash %s)\n" % (args.output, "written" if changed else "unchanged", installer.hash))
    return 0


def add_catalog_options(parser):
    parser.add_argument("--catalog", metavar="DIR", help="catalog directory (default: the collection's catalog/)")
    parser.add_argument("--catalog-overlay", metavar="PATH", action="append", default=[],
                        help="catalog overlay file or directory; repeatable, applied in order")


def register(subparsers):
    group = subparsers.add_parser("spec", help="validate, hash and resolve installer specs")
    sub = group.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("validate", help="check an installer spec; one line per problem")
    p.add_argument("file", help="installer YAML ('-' for stdin)")
    p.set_defaults(func=_validate)

    p = sub.add_parser("hash", help="print the kURL-compatible 7-character hash")
    p.add_argument("file", help="installer YAML ('-' for stdin)")
    p.set_defaults(func=_hash)

    p = sub.add_parser("resolve", help="resolve versions against the catalog and write the lock file")
    p.add_argument("file", help="installer YAML ('-' for stdin)")
    p.add_argument("-o", "--output", metavar="LOCK", help="lock file to write (default: stdout)")
    p.add_argument("--arch", action="append", choices=("amd64", "arm64", "ppc64le"),
                   help="architectures to lock (repeatable; default amd64)")
    add_catalog_options(p)
    p.set_defaults(func=_resolve)
