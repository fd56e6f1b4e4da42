# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: ``mooring stack version|export``."""

from __future__ import annotations

import os
import sys

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

# The backend (infra/stacks.py, PyYAML, the catalog) is imported by the command that runs.


def _version(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.infra import stacks

    problems = []
    for path in stacks.find_stacks(args.path):
        try:
            st = stacks.Stack(path)
            plan = stacks.plan_versions(st)
        except MooringError as exc:
            problems.extend(exc.problems)
            continue
        for reason in plan["reasons"]:
            sys.stdout.write(reason + "\n")
        if args.check:
            if stacks.unrecorded(plan):
                problems.append("%s: a version bump is due but not recorded; run 'mooring stack version %s' "
                                "and commit the files it writes (%s)"
                                % (st.name, os.path.relpath(st.path), ", ".join(
                                    sorted(os.path.relpath(p, st.path) for p in plan["edits"]) + ["release.yaml"])))
            continue
        for written in stacks.apply_versions(plan):
            sys.stdout.write("wrote %s\n" % os.path.relpath(written))
    if problems:
        raise stacks.StackError("stack versions", problems)
    return 0


def _export(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.infra import stacks
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog

    catalog = load_catalog(overlays=args.catalog_overlay or ())
    paths = stacks.find_stacks(args.path)
    rendered = []
    for path in paths:  # every stack renders before anything is written
        st = stacks.Stack(path)
        rendered.append((st, stacks.render_export(st, catalog, args.helm)))
    for st, export in rendered:
        for warning in export.warnings:
            sys.stderr.write("warning: %s\n" % warning)
        out = args.output if len(paths) == 1 else os.path.join(args.output, st.name)
        written = stacks.write_rendered(export, out)
        sys.stdout.write("%s %s: %s\n" % (st.name, export.versions["clusterStack"],
                                          ", ".join("%s/%s" % (o.get("kind"), (o.get("metadata") or {}).get("name"))
                                                    for o in export.objects)))
        for w in written:
            sys.stdout.write("wrote %s\n" % w)
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
