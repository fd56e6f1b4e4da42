# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: MetalK8s's SolutionsConfiguration, read as the input of a run.

MetalK8s states which Solution archives a cluster holds and which version of each is active
in one document::

    apiVersion: solutions.metalk8s.scality.com/v1alpha1
    kind: SolutionsConfiguration
    archives:                     # absolute, or relative to the document's directory
      - /srv/solutions/example-1.0.0.iso
    active:
      example: 1.0.0              # or: latest (SemVer precedence among the archives)

:func:`read_configuration` reads it through the bounded YAML reader and checks it field by field
(one line per problem, :class:`ConfigurationShape`); :func:`archive_identity` reads the name and
version an archive holds from its manifest, without validating it (the import does);
:func:`plan_configuration` (pure) decides which archives still need an import and which version
of each solution to activate. mooring's own record of what was imported
(``/etc/mooring/solutions.yaml``, :func:`solutions.k8s.load_config`) is a different document and
stays as it is.
"""

from __future__ import annotations

import os
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import HashingWriter
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.archive import open_archive
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.checksums import file_sha256
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.k8s import version_key
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    MANIFEST,
    MAX_MANIFEST_BYTES,
    SolutionError,
    safe_path,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.manifest import VERSION_RE, VERSION_WHAT
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.metalk8s import NAME_RE as DNS_LABEL_RE
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.metalk8s import NAME_WHAT as DNS_LABEL_WHAT

API_VERSION = "solutions.metalk8s.scality.com/v1alpha1"
KIND = "SolutionsConfiguration"
LATEST = "latest"
FIELDS = ("apiVersion", "kind", "archives", "active")
MAX_BYTES = 256 * 1024
MAX_PATH = 4096
ACTIVE_RE = re.compile(r"^latest\Z|" + VERSION_RE)
ACTIVE_WHAT = "a version (X.Y.Z[-pre][+build]) or latest"


class ConfigurationShape(Shape):
    """A SolutionsConfiguration field by field; :meth:`problems` lists one line per wrong field."""

    error = SolutionError

    def problems(self, data, base):
        """``(problems, document)``: every problem of ``data``, and the document (``archives`` made
        absolute from ``base``, ``active`` as given) when there is none."""
        found = []
        if not isinstance(data, dict):
            self.collect(found, self.expected, "(document)", "a mapping with apiVersion, kind, archives and active", data)
            return found, None
        for key in ("apiVersion", "kind"):
            if key not in data:
                self.collect(found, self.fail, key, "is missing")
        for key in sorted(data, key=str):
            if key not in FIELDS:
                self.collect(found, self.fail, field("", key), "is not a known field (known: %s)" % ", ".join(FIELDS))
        if "apiVersion" in data:
            self.collect(found, self.one_of, data["apiVersion"], "apiVersion", (API_VERSION,))
        if "kind" in data:
            self.collect(found, self.one_of, data["kind"], "kind", (KIND,))
        archives = self.archives(found, data.get("archives"), base)
        active = {}
        if self.collect(found, self.mapping, data.get("active"), "active", True):
            for name, version in sorted((data.get("active") or {}).items(), key=lambda kv: str(kv[0])):
                path = field("active", name)
                if self.collect(found, self.pattern, name, path, re.compile(DNS_LABEL_RE), "keyed by a solution name: "
                                + DNS_LABEL_WHAT) and self.collect(found, self.pattern, version, path, ACTIVE_RE, ACTIVE_WHAT):
                    active[name] = version
        return found, None if found else {"source": self.where, "archives": archives, "active": active}

    def archives(self, found, value, base):
        """The archive paths, absolute (a relative one is taken from ``base``), each listed once."""
        out, seen = [], {}
        if not self.collect(found, self.listing, value, "archives", True):
            return out
        for i, item in enumerate(value or []):
            path = "archives[%d]" % i
            if not self.collect(found, self.text, item, path, False, MAX_PATH):
                continue
            full = os.path.normpath(os.path.join(base, item))
            if full in seen:
                self.collect(found, self.fail, path, "must name another archive than %s, not %s again" % (seen[full], full))
                continue
            seen[full] = path
            out.append(full)
        return out


def check_configuration(data, where, base):
    """The document of a parsed SolutionsConfiguration ``data`` (``where`` names it; relative archive
    paths are taken from the directory ``base``), or :class:`SolutionError` with one line per problem."""
    problems, document = ConfigurationShape(where).problems(data, base)
    if problems:
        raise SolutionError("%s: not a valid %s %s" % (where, API_VERSION, KIND), problems)
    return document


def read_configuration(path):
    """The checked SolutionsConfiguration in the file ``path`` (:func:`check_configuration`)."""
    try:
        data = yamlio.load_file(path, max_bytes=MAX_BYTES, max_aliases=0)
    except yamlio.YamlInputError as exc:
        raise SolutionError(str(exc)) from None
    return check_configuration(data, path, os.path.dirname(os.path.abspath(path)))


def archive_identity(path, sha256=False):
    """``{"name", "version", "sha256"}`` of the archive at ``path``, from its manifest.yaml (either
    flavour: ``metadata.name``, ``spec.version``); ``sha256`` of the whole file only when asked
    (it reads all of it), else None. Nothing else is checked: the import validates the archive."""
    reader = open_archive(path)
    where = "%s: %s" % (path, MANIFEST)
    try:
        entry = next((e for e in reader.entries if e.kind == "file" and safe_path(e.path) == (MANIFEST, None)), None)
        if entry is None:
            raise SolutionError("%s: missing; every solution archive has one at its root" % where)
        out = HashingWriter(limit=MAX_MANIFEST_BYTES)
        if entry.size <= MAX_MANIFEST_BYTES:
            reader.stream(entry, out)
        if entry.size > MAX_MANIFEST_BYTES or out.size > MAX_MANIFEST_BYTES:
            raise SolutionError("%s: more than %d bytes" % (where, MAX_MANIFEST_BYTES))
    finally:
        reader.close()
    try:
        data = yamlio.load(out.buf.getvalue(), where, max_bytes=MAX_MANIFEST_BYTES, max_aliases=0)
    except yamlio.YamlInputError as exc:
        raise SolutionError(str(exc)) from None
    shape = Shape(where, SolutionError)
    shape.mapping(data, "(document)")
    name = shape.pattern(shape.mapping(data.get("metadata"), "metadata").get("name"), "metadata.name",
                         re.compile(DNS_LABEL_RE), DNS_LABEL_WHAT)
    version = shape.pattern(shape.mapping(data.get("spec"), "spec").get("version"), "spec.version",
                            re.compile(VERSION_RE), VERSION_WHAT)
    return {"name": name, "version": version, "sha256": file_sha256(path) if sha256 else None}


def _imported(stored_config, path, held):
    """Whether the archive at ``path`` holding ``held`` is imported already: the same name and version
    recorded with the same sha256 (when known) or, without it, from the same path."""
    for record in stored_config["archives"]:
        if (record["name"], record["version"]) == (held["name"], held["version"]):
            return record["sha256"] == held["sha256"] if held.get("sha256") else record["path"] == path
    return False


def plan_configuration(document, stored_config, contents):
    """What to do so that the cluster holds what ``document`` (:func:`read_configuration`) states.

    ``stored_config``: mooring's record of the imported archives and active versions
    (:func:`solutions.k8s.load_config`); ``contents``: ``{path: {"name", "version", "sha256"}}``
    of every archive of the document (:func:`archive_identity`; ``sha256`` None when not read).
    Returns ``{"imports": [paths, in the document's order], "activate": {name: version} (the
    activations that change something), "active": {name: version} (every one, ``latest`` resolved
    by SemVer precedence among the versions imported or about to be)}``. Two archives holding one
    version, or an active version no archive holds, is a :class:`SolutionError` (one line each).
    """
    shape = ConfigurationShape(document.get("source") or KIND)
    problems, imports, holders = [], [], {}
    versions = {}
    for record in stored_config["archives"]:
        versions.setdefault(record["name"], set()).add(record["version"])
    for i, path in enumerate(document["archives"]):
        held = contents.get(path)
        if held is None:
            shape.collect(problems, shape.fail, "archives[%d]" % i, "%s was not read: its name and version are unknown" % path)
            continue
        key = (held["name"], held["version"])
        if key in holders:
            shape.collect(problems, shape.fail, "archives[%d]" % i, "must hold another version than %s, not %s %s again"
                          % (holders[key], held["name"], held["version"]))
            continue
        holders[key] = "archives[%d]" % i
        versions.setdefault(held["name"], set()).add(held["version"])
        if not _imported(stored_config, path, held):
            imports.append(path)
    active = {}
    for name in sorted(document["active"]):
        wanted, have = document["active"][name], sorted(versions.get(name, ()), key=version_key)
        if wanted == LATEST and have:
            active[name] = have[-1]
        elif wanted in have:
            active[name] = wanted
        else:
            shape.collect(problems, shape.expected, field("active", name), "a version an archive holds (%s)"
                          % (", ".join(have) or "none holds %s" % name), wanted, True)
    if problems:
        raise SolutionError("%s: cannot be applied" % shape.where, problems)
    return {"imports": imports, "active": active,
            "activate": {n: v for n, v in active.items() if stored_config["active"].get(n) != v}}
