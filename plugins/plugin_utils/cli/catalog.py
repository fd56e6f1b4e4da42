# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: ``mooring catalog list|check|supported-versions``."""

from __future__ import annotations

import json
import sys

from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.spec import add_catalog_options


def load_catalog(catalog_dir, overlays):
    """The catalog (PyYAML and packaging are imported only when a command reads it)."""
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog as load

    return load(catalog_dir, overlays)


def _list(args):
    catalog = load_catalog(args.catalog, args.catalog_overlay)
    if args.addon:
        if args.addon not in catalog.addons:
            from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import CatalogError

            raise CatalogError("add-on %r is not in the catalog (known: %s)" % (args.addon, ", ".join(catalog.names())))
        for version in catalog.versions(args.addon):
            supported = catalog.entry(args.addon, version).get("kubernetes") or "any"
            sys.stdout.write("%s\tkubernetes %s\n" % (version, supported))
        return 0
    for name in catalog.names():
        versions = catalog.versions(name)
        sys.stdout.write("%-22s %-11s %3d versions, newest %s\n" % (name, catalog.category(name), len(versions), versions[0]))
    return 0


def _check(args):
    catalog = load_catalog(args.catalog, args.catalog_overlay)
    count = sum(len(catalog.versions(n)) for n in catalog.names())
    sys.stdout.write("catalog valid: %d add-ons, %d versions (%s)\n" % (len(catalog.names()), count, ", ".join(catalog.sources)))
    return 0


def _supported(args):
    catalog = load_catalog(args.catalog, args.catalog_overlay)
    sys.stdout.write(json.dumps(catalog.supported_versions(), indent=2, sort_keys=True) + "\n")
    return 0


def register(subparsers):
    group = subparsers.add_parser("catalog", help="inspect the catalog of supported versions")
    sub = group.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p = sub.add_parser("list", help="add-ons, or one add-on's versions (newest first)")
    p.add_argument("addon", nargs="?")
    add_catalog_options(p)
    p.set_defaults(func=_list)
    p = sub.add_parser("check", help="validate the catalog (and overlays)")
    add_catalog_options(p)
    p.set_defaults(func=_check)
    p = sub.add_parser("supported-versions", help="kURL's supported-versions-gen.json")
    add_catalog_options(p)
    p.set_defaults(func=_supported)
