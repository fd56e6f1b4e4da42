# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: ``mooring stack version|export``.

Both commands look at every stack before they write anything: ``version`` plans every stack
and writes only when none has a problem (each stack's files all or nothing); ``export``
checks every stack (versions, add-ons, node image, chart) before helm runs, renders every
stack before it writes, and writes the output directory all or nothing.
"""

from __future__ import annotations

import os
import sys

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

# The backend (infra/stack*.py, PyYAML, the catalog) is imported by the command that runs.


def _rel(path):
    """``path`` relative to the working directory, as a message shows it (a name that is not
    printable UTF-8 as the repr of its bytes)."""
    from ansible_collections.mooring.cluster.plugins.module_utils.infra.stacktree import shown

    return shown(os.path.relpath(path))


def _version(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.infra import stackbump, stacks, stacktree

    problems = []
    plans = []
    notes = []
    paths = stacks.find_stacks(args.path, notes)
    for note in notes:
        sys.stderr.write("note: %s\n" % note)
    for path in paths:
        try:
            st = stacks.Stack(path)
            plan = stackbump.plan_versions(st)
        except MooringError as exc:
            problems.extend(exc.problems)
            continue
        for reason in plan["reasons"]:
            sys.stdout.write(reason + "\n")
        plans.append((st, plan))
    if args.check:
        for st, plan in plans:
            if stackbump.unrecorded(plan):
                problems.append("%s: a version bump is due but not recorded; run 'mooring stack version %s' "
                                "and commit the files it writes (%s)"
                                % (st.name, _rel(st.path), ", ".join(
                                    sorted(stacktree.shown(os.path.relpath(p, st.path)) for p in plan["edits"]) + ["release.yaml"])))
    elif not problems:  # a stack with a problem: nothing is written, for any stack
        for _st, plan in plans:
            for written in stackbump.apply_versions(plan):
                sys.stdout.write("wrote %s\n" % _rel(written))
    if problems:
        raise stacktree.StackError("stack versions", problems)
    return 0


def _export(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.infra import stackexport, stacks, stacktree
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog

    stackexport.check_export_output(args.output)
    catalog = load_catalog(overlays=args.catalog_overlay or ())
    notes = []
    paths = stacks.find_stacks(args.path, notes)
    for note in notes:
        sys.stderr.write("note: %s\n" % note)
    problems, prepared, names = [], [], {}
    for path in paths:  # every check that needs no helm, for every stack, before helm runs
        try:
            st = stacks.Stack(path)
            prepared.append((st, stackexport.prepare_export(st, catalog)))
        except MooringError as exc:
            problems.extend(exc.problems)
            continue
        if st.name in names:
            problems.append("%s and %s are both the stack %s; the export writes one directory per stack name"
                            % (stacktree.shown(names[st.name]), stacktree.shown(st.path), st.name))
        names.setdefault(st.name, st.path)
    if problems:
        raise stacktree.StackError("stack export", problems)
    rendered = [(st, stackexport.render_export(st, catalog, args.helm, prep)) for st, prep in prepared]
    for _st, export in rendered:
        for warning in export.warnings:
            sys.stderr.write("warning: %s\n" % warning)
    single = len(paths) == 1
    written = stackexport.write_export(args.output, {("" if single else st.name): stackexport.export_files(export)
                                                     for st, export in rendered})
    for st, export in rendered:
        names = ("%s/%s" % (o.get("kind"), o["metadata"].get("name") if isinstance(o.get("metadata"), dict) else None)
                 for o in export.objects)
        sys.stdout.write("%s %s: %s\n" % (st.name, export.versions["clusterStack"], ", ".join(names)))
    for w in written:
        sys.stdout.write("wrote %s\n" % stacktree.shown(w))
    return 0


def register(subparsers):
    parser = subparsers.add_parser("stack", help="versioned cluster stacks and their Cluster API export")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    version = sub.add_parser("version", help="bump stack/component versions whose content changed")
    version.add_argument("path", help="a stack directory (stacks/<provider>/<stack>/<major-minor>) or a directory above stacks")
    version.add_argument("--check", action="store_true",
                         help="change nothing; exit 1 when a bump is due but not recorded (for CI)")
    version.set_defaults(func=_version)

    export = sub.add_parser("export", help="render the stack's cluster-class chart (helm template), metadata and add-on values")
    export.add_argument("path", help="a stack directory, or a directory above several (one sub-directory each)")
    export.add_argument("-o", "--output", required=True, help="output directory")
    export.add_argument("--catalog-overlay", action="append", metavar="PATH",
                        help="catalog overlay file or directory (repeatable)")
    export.add_argument("--helm", metavar="PATH",
                        help="helm binary (default: $MOORING_HELM, else helm on PATH; Helm 3.8+)")
    export.set_defaults(func=_export)
