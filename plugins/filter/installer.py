# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over the installer spec and its lock: installer_hash, resolve_versions, install_boundary, install_plan."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.layout import boundary, install_plan
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.resolve import resolved_versions
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import hash_installer
from ansible_collections.mooring.cluster.plugins.module_utils.spec.kurlhash import kurl_hash


def _document(value):
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "apiVersion" in value:
        return value
    raise AnsibleFilterError("expected an installer document (YAML text or a mapping with apiVersion, kind, spec)")


def installer_hash(value):
    """kURL-compatible 7-character hash of an installer document, or of a bare spec mapping."""
    try:
        if isinstance(value, dict) and "apiVersion" not in value:
            return kurl_hash(value)
        return hash_installer(_document(value))[0]
    except MooringError as exc:
        raise AnsibleFilterError(to_native(exc)) from exc


def resolve_versions_filter(value, catalog_overlay=None):
    """Resolved version per add-on for an installer document."""
    try:
        return resolved_versions(_document(value), None, catalog_overlay or [])
    except MooringError as exc:
        raise AnsibleFilterError(to_native(exc)) from exc


def install_boundary(lock, arch="amd64"):
    """What kubeadm needs that the lock does not carry: {"artifacts": [...], "images": [...]}."""
    if not isinstance(lock, dict) or not isinstance(lock.get("addons"), dict):
        raise AnsibleFilterError("install_boundary: expected a lock (a mapping with addons)")
    return boundary(lock, arch)


def install_plan_filter(lock, groups, arch="amd64", first_control_plane=False):
    """What the install does on a host in ``groups``, as lines (from the lock alone)."""
    if not isinstance(lock, dict) or not isinstance(lock.get("addons"), dict):
        raise AnsibleFilterError("install_plan: expected a lock (a mapping with addons)")
    return install_plan(lock, groups, arch, first_control_plane)


class FilterModule(object):
    def filters(self):
        return {"installer_hash": installer_hash, "resolve_versions": resolve_versions_filter,
                "install_boundary": install_boundary, "install_plan": install_plan_filter}
