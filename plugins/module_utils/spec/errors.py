# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the errors of the spec stage (the installer spec, its kURL hash and templates).

Standard library only: the host module preflight_check renders kURL templates with :mod:`spec.kurltemplate`.
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


class SpecError(MooringError):
    """The installer spec is invalid (every problem listed, each with its path)."""


class EndpointError(MooringError):
    """The API endpoint or the HA endpoint cannot be planned from the given input (one line per problem)."""


class KurlHashError(MooringError, ValueError):
    """The spec cannot be hashed the way kURL would (kURL would have failed or diverged)."""


class KurlTemplateError(MooringError):
    """A ``{{kurl ...}}`` template that does not parse or does not evaluate."""


class ObjectHashError(MooringError, ValueError):
    """The value holds something that has no JavaScript/object-hash counterpart here."""
