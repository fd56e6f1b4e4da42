# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the errors of the lock stage (the catalog, version resolution, the lock file)."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


class CatalogError(MooringError):
    """The catalog (or an overlay) is malformed or lacks what was asked for."""


class ResolveError(MooringError):
    """Versions could not be resolved or are not compatible with each other."""


class LockError(MooringError):
    """A lock file is missing, malformed or does not match its digest."""
