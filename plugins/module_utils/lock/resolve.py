# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the one spec -> lock pipeline.

Every front end (the ``mooring spec`` CLI, the ``installer`` action, the ``resolve_versions``
filter, a cluster stack's ``installer.yaml``) reads and resolves installers through here:

* :func:`read_installer` - an :class:`Installer` from YAML text or a mapping, or from a file
  (UTF-8; ``-`` is standard input). An ``OSError`` from reading the file propagates unchanged:
  each front end words it in its own way.
* :func:`resolve` - installer (or its text/mapping) + catalog (or its directory and overlays) +
  architectures -> the lock mapping (:func:`build_lock`).
* :func:`resolved_versions` - only the resolved version per add-on (no artifacts, no lock).

kURL add-ons and fields mooring.cluster does not support are ignored, never refused: the
installer names each in ``warnings`` and the lock covers what is mapped.
"""

from __future__ import annotations

import sys

from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.spec import specyaml
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import Installer, parse_installer

# The catalog and lock modules (PyYAML's dumper, packaging) are imported by the functions that
# resolve: reading an installer (``mooring spec validate|hash``, a stack's version) does not need them.


def read_text(path):
    """The text of an installer file (``-``: standard input): a regular file of UTF-8, within
    :data:`specyaml.MAX_BYTES` (refused before it is parsed). Raises ``OSError`` when it cannot be read,
    :class:`yamlio.YamlInputError` (naming the file) when it is not such a file."""
    limit = specyaml.MAX_BYTES
    if path == "-":
        data = sys.stdin.buffer.read(limit + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        if len(data) > limit:
            raise yamlio.YamlInputError("<stdin>: more than %d bytes; an installer document is a few kilobytes" % limit)
        return yamlio.decode(data, "<stdin>")
    return yamlio.decode(yamlio.read_bytes(path, limit), path)


def read_installer(source=None, path=None):
    """A validated :class:`Installer` from ``source`` (YAML text or a mapping) or the file at ``path``.

    Raises :class:`SpecError` listing every problem; ``OSError`` when ``path`` cannot be read.
    """
    if path is not None:
        source = read_text(path)
    return parse_installer(source)


def _installer(value):
    return value if isinstance(value, Installer) else read_installer(value)


def _catalog(catalog, overlays):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import Catalog, load_catalog

    return catalog if isinstance(catalog, Catalog) else load_catalog(catalog, overlays or ())


def resolve(installer, catalog=None, overlays=(), architectures=None):
    """The lock for ``installer`` (an :class:`Installer`, YAML text or a mapping).

    ``catalog`` is a loaded :class:`Catalog`, or the catalog directory (``None``: the collection's)
    to which ``overlays`` are applied in order; ``architectures`` defaults to amd64 only.
    """
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import DEFAULT_ARCHITECTURES, build_lock

    installer = _installer(installer)
    catalog = _catalog(catalog, overlays)
    return build_lock(installer, catalog, DEFAULT_ARCHITECTURES if architectures is None else architectures)


def resolved_versions(installer, catalog=None, overlays=()):
    """``{add-on: version}`` for ``installer``, resolved as :func:`resolve` would (no lock built)."""
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import resolve_versions

    installer = _installer(installer)
    return resolve_versions(_catalog(catalog, overlays), installer.requested_versions())
