# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the catalog of supported add-on versions, and version resolution.

The catalog is data (``catalog/<addon>.yml``, format in docs/formats.md). This module loads
it with optional overlays, checks it, orders versions semantically (never by file or dict
order), resolves requested versions (exact, ``latest``, ``X.Y.x``) and checks cross-add-on
compatibility. It knows nothing about Ansible.
"""

from __future__ import annotations

import copy
import functools
import os
import re

try:
    import yaml

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError as _yaml_exc:  # a controller requirement; the import guard keeps sanity's import test honest
    HAS_YAML = False
    YAML_IMPORT_ERROR = _yaml_exc

from ansible_collections.mooring.cluster.plugins.module_utils.common import semver, yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalogshape import CatalogShape, shape_problems
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import CatalogError, ResolveError

try:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    HAS_PACKAGING = True
    PACKAGING_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - packaging ships with ansible-core
    HAS_PACKAGING = False
    PACKAGING_IMPORT_ERROR = _exc

_MINOR_WILDCARD = re.compile(r"^(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)\.x$")
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if HAS_YAML else None


def default_catalog_dir():
    """The catalog shipped with the collection (``<collection>/catalog``)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "catalog"))


# --------------------------------------------------------------------------- versions
def parse_version(text):
    """Semantic version -> (major, minor, patch, prerelease-or-None). Raises ValueError."""
    try:
        return semver.parse(str(text))
    except ValueError:
        raise ValueError("%r is not a semantic version (X.Y.Z)" % (text,)) from None


def version_key(text):
    """Sort key implementing semantic version precedence (a prerelease sorts before its release)."""
    parse_version(text)
    return semver.precedence(str(text))


def minor_of(text):
    major, minor, _patch, _pre = parse_version(text)
    return "%d.%d" % (major, minor)


@functools.lru_cache(maxsize=1024)
def in_range(version, spec_range):
    """True when ``version`` satisfies a PEP 440-style range such as '>=1.29.0,<1.33.0'."""
    if not spec_range:
        return True
    major, minor, patch, _pre = parse_version(version)
    return Version("%d.%d.%d" % (major, minor, patch)) in SpecifierSet(spec_range)


# --------------------------------------------------------------------------- loading
def _read_yaml_documents(path, trusted=True):
    """The add-on documents of one catalog file. The collection's own catalog is read with the
    fast C loader; an overlay (``trusted=False``, the user's file) through :mod:`common.yamlio`'s
    bounds, without aliases."""
    try:
        if trusted:
            with open(path, "r", encoding="utf-8") as handle:
                docs = [d for d in yaml.load_all(handle, Loader=_SafeLoader) if d is not None]
        else:
            docs = yamlio.load_file(path, multi=True, max_aliases=0)
    except (OSError, yaml.YAMLError, yamlio.YamlInputError) as exc:
        text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CatalogError("cannot read catalog file %s: %s" % (path, text.splitlines()[0][:300])) from None
    entries = []
    for doc in docs:
        if isinstance(doc, dict) and "addons" in doc and "name" not in doc:
            if not isinstance(doc["addons"], list):
                raise CatalogError("%s: 'addons' must be a list of add-on documents" % path)
            entries.extend(doc["addons"] or [])
        else:
            entries.append(doc)
    for entry in entries:
        problems = shape_problems(path, entry)
        if problems:
            raise CatalogError("%s: malformed catalog document" % path, problems)
    return entries


def _yaml_files(path):
    if os.path.isdir(path):
        return sorted(
            os.path.join(path, f) for f in os.listdir(path) if f.endswith((".yml", ".yaml")) and not f.startswith(".")
        )
    if os.path.isfile(path):
        return [path]
    raise CatalogError("catalog path %s does not exist" % path)


def _merge_addon(base, overlay):
    merged = copy.deepcopy(base)
    for key, value in overlay.items():
        if key in ("name", "versions"):
            continue
        merged[key] = copy.deepcopy(value)
    by_version = {str(v.get("version")): i for i, v in enumerate(merged.get("versions", []))}
    for entry in overlay.get("versions", []) or []:
        key = str(entry.get("version"))
        if key in by_version:
            merged["versions"][by_version[key]] = copy.deepcopy(entry)
        else:
            merged.setdefault("versions", []).append(copy.deepcopy(entry))
    return merged


class Catalog(object):
    """A loaded, checked catalog: ``addons[name]`` is the add-on's data."""

    def __init__(self, addons, sources=(), origins=None):
        self.addons = addons
        self.sources = list(sources)
        # Each problem names the overlay (or catalog file) its add-on comes from.
        origins = origins or {}
        check = CatalogShape()
        named = ["%s: %s" % (", ".join(origins[name]), line) if origins.get(name) else line
                 for name in sorted(addons) for line in check.catalog_addon(name, addons[name])]
        if named:
            raise CatalogError("the catalog is invalid", named)
        # Decided once: versions newest first (semantic order), and each version's entry.
        self._sorted = {}
        self._releases = {}
        self._entries = {}
        for name, data in addons.items():
            entries = {str(v["version"]): v for v in data.get("versions", [])}
            ordered = sorted(entries, key=version_key, reverse=True)
            self._entries[name] = entries
            self._sorted[name] = ordered
            self._releases[name] = [v for v in ordered if parse_version(v)[3] is None]

    def names(self):
        return sorted(self.addons)

    def category(self, addon):
        return self.addons[addon]["category"]

    def versions(self, addon, include_prereleases=True):
        """The add-on's versions, newest first, by semantic ordering."""
        return list(self._sorted[addon] if include_prereleases else self._releases[addon])

    def entry(self, addon, version):
        try:
            return self._entries[addon][version]
        except KeyError:
            raise CatalogError("%s %s is not in the catalog" % (addon, version)) from None

    def supported_versions(self):
        """kURL's ``supported-versions-gen.json`` shape."""
        return {"supportedVersions": {name: ["latest"] + self.versions(name) for name in self.names()}}


def load_catalog(catalog_dir=None, overlays=()):
    """Load the catalog directory, then apply each overlay (a file or a directory) in order."""
    if not HAS_PACKAGING:  # pragma: no cover
        raise missing_library("packaging", "to read the catalog", PACKAGING_IMPORT_ERROR, CatalogError)
    if not HAS_YAML:  # pragma: no cover
        raise missing_library("PyYAML", "to read the catalog", YAML_IMPORT_ERROR, CatalogError)
    catalog_dir = catalog_dir or default_catalog_dir()
    addons = {}
    sources = []
    origins = {}
    for path in _yaml_files(catalog_dir):
        for entry in _read_yaml_documents(path):
            if not isinstance(entry, dict) or "name" not in entry:
                raise CatalogError("%s: every catalog document needs a 'name'" % path)
            if entry["name"] in addons:
                raise CatalogError("%s: add-on %r is defined twice in the catalog" % (path, entry["name"]))
            addons[entry["name"]] = entry
        sources.append(path)
    for overlay in overlays or ():
        for path in _yaml_files(overlay):
            for entry in _read_yaml_documents(path, trusted=False):
                if not isinstance(entry, dict) or "name" not in entry:
                    raise CatalogError("%s: every overlay document needs a 'name'" % path)
                name = entry["name"]
                addons[name] = _merge_addon(addons[name], entry) if name in addons else entry
                origins.setdefault(name, []).append(path)
            sources.append(path)
    return Catalog(addons, sources, origins)


# --------------------------------------------------------------------------- resolution
def nearest_versions(available, wanted, count=5):
    """The ``count`` available versions closest to ``wanted`` (for error messages)."""
    try:
        target = parse_version(wanted)[:3]
    except ValueError:
        return available[:count]

    def distance(version):
        parts = parse_version(version)[:3]
        return tuple(abs(a - b) for a, b in zip(parts, target)), version_key(version)

    return sorted(available, key=distance)[:count]


def resolve_version(catalog, addon, requested):
    """Resolve one requested version string against the catalog. Raises ResolveError."""
    if addon not in catalog.addons:
        raise ResolveError("spec.%s: add-on %r is not in the catalog (known: %s)" % (addon, addon, ", ".join(catalog.names())))
    requested = str(requested)
    available = catalog.versions(addon)
    releases = catalog.versions(addon, include_prereleases=False)
    if requested == "latest":
        if not releases:
            raise ResolveError("spec.%s.version: 'latest' found no released version in the catalog" % addon)
        return releases[0]
    match = _MINOR_WILDCARD.match(requested)
    if match:
        prefix = (int(match.group("major")), int(match.group("minor")))
        candidates = [v for v in releases if parse_version(v)[:2] == prefix]
        if not candidates:
            minors = sorted({minor_of(v) for v in releases}, key=lambda m: tuple(int(p) for p in m.split(".")), reverse=True)
            raise ResolveError(
                "spec.%s.version: %s matches no version in the catalog; available minors: %s"
                % (addon, requested, ", ".join("%s.x" % m for m in minors))
            )
        return candidates[0]
    if semver.is_exact(requested):
        normalised = requested[1:] if requested.startswith("v") else requested
        if normalised in available:
            return normalised
        raise ResolveError(
            "spec.%s.version: %s %s is not in the catalog; nearest available: %s"
            % (addon, addon, requested, ", ".join(nearest_versions(available, normalised)))
        )
    raise ResolveError("spec.%s.version: %r is not an exact version, 'latest' or 'X.Y.x'" % (addon, requested))


def resolve_versions(catalog, requested):
    """Resolve ``{addon: requested_version}`` and check compatibility with Kubernetes.

    Returns ``{addon: version}``. Every problem is collected and raised at once.
    """
    resolved = {}
    problems = []
    for addon in sorted(requested):
        try:
            resolved[addon] = resolve_version(catalog, addon, requested[addon])
        except ResolveError as exc:
            problems.extend(exc.problems)
    kube = resolved.get("kubernetes")
    if kube:
        for addon in sorted(resolved):
            if addon == "kubernetes":
                continue
            supported = catalog.entry(addon, resolved[addon]).get("kubernetes")
            if supported and not in_range(kube, supported):
                problems.append(
                    "spec.%s.version: %s %s supports Kubernetes %s, but kubernetes resolves to %s; "
                    "choose a compatible pair" % (addon, addon, resolved[addon], supported, kube)
                )
    if problems:
        raise ResolveError("the installer spec cannot be resolved", problems)
    return resolved


def _expand(template, version, arch):
    return str(template).replace("{version}", version).replace("{arch}", arch)


def addon_contents(catalog, addon, version, architectures):
    """Artifacts, images and host packages of one add-on version for the given architectures."""
    data = catalog.addons[addon]
    entry = catalog.entry(addon, version)
    supported = data.get("architectures") or []
    missing = [a for a in architectures if a not in supported]
    if missing:
        raise ResolveError(
            "%s %s is not available for %s (catalog has %s)" % (addon, version, ", ".join(missing), ", ".join(supported))
        )
    shas = entry.get("sha256") or {}
    artifacts = []
    for template in data.get("artifacts") or []:
        for arch in architectures:
            sha = (shas.get(template["name"]) or {}).get(arch)
            url = _expand(template["url"], version, arch)
            artifacts.append({
                "name": template["name"],
                "kind": template["kind"],
                "arch": arch,
                "url": url,
                "sha256": sha,
                "size": template.get("size"),
                "dest": template.get("dest") or url.rstrip("/").rsplit("/", 1)[-1],
            })
    for art in entry.get("artifacts") or []:
        if art.get("arch") not in list(architectures) + ["all"]:
            continue
        artifacts.append({
            "name": art["name"],
            "kind": art["kind"],
            "arch": art["arch"],
            "url": art["url"],
            "sha256": art.get("sha256"),
            "size": art.get("size"),
            "dest": art.get("dest") or art["url"].rstrip("/").rsplit("/", 1)[-1],
        })
    images = []
    for image in list(data.get("images") or []) + list(entry.get("images") or []):
        images.append({
            "ref": _expand(image["ref"], version, ""),
            "digest": image.get("digest"),
            "archive": copy.deepcopy(image.get("archive")),
        })
    artifacts.sort(key=lambda a: (a["name"], a["arch"], a["url"]))
    images.sort(key=lambda i: i["ref"])
    packages = {k: sorted(v or []) for k, v in (entry.get("packages") or data.get("packages") or {}).items()}
    return {"artifacts": artifacts, "images": images, "packages": packages}
