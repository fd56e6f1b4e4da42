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

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio, semver, yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import CatalogError, ResolveError

try:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    HAS_PACKAGING = True
    PACKAGING_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - packaging ships with ansible-core
    HAS_PACKAGING = False
    PACKAGING_IMPORT_ERROR = _exc

CATEGORIES = ("kubernetes", "etcd", "cri", "cni", "storage", "ingress", "metrics", "registry")
ARTIFACT_KINDS = ("binary", "archive", "manifest", "chart", "deb", "wheel", "file")
IMAGE_ARCHIVE_FORMATS = ("oci-archive", "docker-archive")
_MINOR_WILDCARD = re.compile(r"^(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)\.x$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
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


def is_exact_version(text):
    try:
        semver.parse(str(text))
    except ValueError:
        return False
    return True


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


_STR = (str,)
_VERSION = (str, int, float)
_IMAGE = {"ref": _STR, "digest": _STR, "archive": {"url": _STR, "format": _STR, "sha256": _STR}}
_ARTIFACT = {"name": _STR, "kind": _STR, "url": _STR, "dest": _STR, "arch": _STR, "sha256": _STR, "size": (int,)}
_PACKAGES = {"*": [_STR]}
ADDON_SHAPE = {
    "name": _STR, "category": _STR, "description": _STR, "architectures": [_STR],
    "artifacts": [_ARTIFACT], "images": [_IMAGE], "packages": _PACKAGES,
    "versions": [{"version": _VERSION, "kubernetes": _STR, "sha256": {"*": {"*": _STR}},
                  "artifacts": [_ARTIFACT], "images": [_IMAGE], "packages": _PACKAGES}],
}


_SCALARS = {(str,): "a string", (str, int, float): "a string or a number", (int,): "a whole number"}
_SAFE = "a safe name (letters, digits and . _ - + ~ : @; no '/' or '..')"


class AddonShape(Shape):
    """Checks one add-on document of a catalog file or an overlay against :data:`ADDON_SHAPE`: one line
    per wrong field (at most 20, each ``FILE: add-on.FIELD: must be EXPECTED, not FOUND``), then, when
    every type is right, every name that becomes a path (add-on, architecture, artifact name, arch,
    dest): a catalog or overlay cannot lead a bundle outside its cache."""

    error = CatalogError
    LIMIT = 20

    def __init__(self, where):
        super().__init__(where)
        self.problems = []

    def noted(self, check, *args, **kwargs):
        """Run one check; its problem is noted (one line) and checking goes on. True when it passed."""
        try:
            check(*args, **kwargs)
        except CatalogError as exc:
            self.problems.append(str(exc))
            return False
        return True

    def _scalar(self, value, path, kinds):
        if not isinstance(value, kinds) or isinstance(value, bool):
            self.expected(path, _SCALARS[kinds], value, show_value=True)

    def _key(self, key, path):
        if not isinstance(key, str):
            self.expected(field(path, key), "a key that is a string", key, show_value=True)

    def walk(self, value, path, shape):
        """``value`` against ``shape``: a tuple of scalar types, ``[item shape]`` or ``{key: shape}`` (``*``: any key)."""
        if isinstance(shape, tuple):
            self.noted(self._scalar, value, path, shape)
        elif isinstance(shape, list):
            if self.noted(self.listing, value, path):
                for i, item in enumerate(value):
                    self.walk(item, field(path, i), shape[0])
        elif self.noted(self.mapping, value, path):
            for key, item in value.items():
                sub = shape.get(key, shape.get("*"))
                if self.noted(self._key, key, path) and sub is not None and item is not None:
                    self.walk(item, field(path, key), sub)

    def name(self, value, path):
        try:
            fileio.safe_name(value, path)
        except fileio.PathEscapeError:
            self.expected(path, _SAFE, value, show_value=True)

    def dest(self, value, path):
        for part in value.split("/"):
            try:
                fileio.safe_name(part, path)
            except fileio.PathEscapeError:
                self.fail(path, "must be a relative path of safe names (letters, digits and . _ - + ~ : @; no '..'), "
                          "not %s (%s)" % (excerpt(value), excerpt(part, 40)))

    def names(self, entry):
        """Every name of ``entry`` (a well-typed add-on document) that becomes a path."""
        self.noted(self.name, entry.get("name"), "add-on.name")
        for i, arch in enumerate(entry.get("architectures") or []):
            self.noted(self.name, arch, "add-on.architectures[%d]" % i)
        arts = [("add-on.artifacts[%d]" % i, a) for i, a in enumerate(entry.get("artifacts") or [])]
        for i, version in enumerate(entry.get("versions") or []):
            arts += [("add-on.versions[%d].artifacts[%d]" % (i, j), a) for j, a in enumerate(version.get("artifacts") or [])]
        for where, art in arts:
            for key in ("name", "arch"):
                if art.get(key) is not None:
                    self.noted(self.name, art[key], "%s.%s" % (where, key))
            if art.get("dest") is not None:
                self.noted(self.dest, art["dest"], "%s.dest" % where)

    def addon(self, entry):
        """The problems of ``entry`` (an empty list when it is a well-formed add-on document)."""
        self.walk(entry, "add-on", ADDON_SHAPE)
        if not self.problems:
            self.names(entry)
        return self.problems[:self.LIMIT]


def shape_problems(path, entry):
    """One line per field of an add-on document (of the file ``path``) whose type or name is wrong
    (:class:`AddonShape`; at most 20)."""
    return AddonShape(path).addon(entry)


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


# --------------------------------------------------------------------------- checking
_HEX_DIGITS = "a sha256 (64 lowercase hex digits)"


class CatalogShape(AddonShape):
    """Checks the loaded catalog (every overlay applied), one add-on at a time: one line per problem,
    ``catalog: NAME.FIELD: must be EXPECTED, not FOUND`` (the catalog's category, architectures,
    versions, ranges, checksums, artifacts and images)."""

    def __init__(self):
        super().__init__("catalog")

    def checksum(self, value, path):
        if not _SHA256.match(str(value)):
            self.expected(path, _HEX_DIGITS, value, show_value=True)

    def artifact(self, artifact, where, concrete, architectures):
        if not self.noted(self.mapping, artifact, where):
            return
        for key in ("name", "kind", "url"):
            if not artifact.get(key):
                self.noted(self.expected, field(where, key), "set", artifact.get(key), True)
        if artifact.get("kind"):
            self.noted(self.one_of, artifact["kind"], field(where, "kind"), ARTIFACT_KINDS)
        if concrete:
            self.noted(self.one_of, artifact.get("arch"), field(where, "arch"), list(architectures) + ["all"])
            if artifact.get("sha256") is not None:
                self.noted(self.checksum, artifact["sha256"], field(where, "sha256"))

    def archive(self, archive, where):
        self.mapping(archive, where)
        if not archive.get("url"):
            self.expected(field(where, "url"), "set", archive.get("url"), show_value=True)
        self.one_of(archive.get("format"), field(where, "format"), IMAGE_ARCHIVE_FORMATS)
        if archive.get("sha256") is not None:
            self.checksum(archive["sha256"], field(where, "sha256"))

    def image(self, image, where):
        if not self.noted(self.mapping, image, where):
            return
        if not image.get("ref"):
            self.noted(self.expected, field(where, "ref"), "set", image.get("ref"), True)
            return
        digest = image.get("digest")
        if digest is not None and not re.match(r"^sha256:[0-9a-f]{64}$", str(digest)):
            self.noted(self.expected, field(where, "digest"), "sha256:<64 hex digits>", digest, True)
        if image.get("archive") is not None:
            self.noted(self.archive, image["archive"], field(where, "archive"))

    def checksums(self, shas, templates, arches, where):
        """A version's ``sha256`` (artifact -> architecture -> checksum): every architecture of an artifact listed."""
        for art in templates:
            per_arch = shas.get(art.get("name"))
            if per_arch is None:
                continue  # checksum unknown: trust on first use, recorded in the lock
            path = field(field(where, "sha256"), art["name"])
            for arch in arches:
                if arch not in per_arch:
                    self.noted(self.fail, field(path, arch), "is missing (no checksum for architecture %s)" % arch)
                else:
                    self.noted(self.checksum, per_arch[arch], field(path, arch))

    def version(self, entry, where, seen, templates, arches):
        version = str(entry.get("version"))
        if not is_exact_version(version):
            self.noted(self.expected, field(where, "version"), "a semantic version (X.Y.Z)", entry.get("version"), True)
            return
        if version in seen:
            self.noted(self.expected, field(where, "version"), "a version listed once", version, True)
        seen.add(version)
        if entry.get("kubernetes"):
            try:
                SpecifierSet(entry["kubernetes"])
            except InvalidSpecifier:
                self.noted(self.expected, field(where, "kubernetes"), "a version range ('>=1.31.0,<1.37.0')",
                           entry["kubernetes"], True)
        self.checksums(entry.get("sha256") or {}, templates, arches, where)
        for j, art in enumerate(entry.get("artifacts") or []):
            self.artifact(art, field(field(where, "artifacts"), j), True, arches)
        for j, image in enumerate(entry.get("images") or []):
            self.image(image, field(field(where, "images"), j))

    def catalog_addon(self, name, data):
        """The problems of the catalog's add-on ``name`` (an empty list when it is valid)."""
        self.problems = []
        where = field("", name)
        self.noted(self.one_of, data.get("category"), field(where, "category"), CATEGORIES)
        arches = data.get("architectures") or []
        if not arches:
            self.noted(self.expected, field(where, "architectures"), "a list of at least one architecture", arches, True)
        templates = data.get("artifacts") or []
        for i, art in enumerate(templates):
            self.artifact(art, field(field(where, "artifacts"), i), False, arches)
        for i, image in enumerate(data.get("images") or []):
            self.image(image, field(field(where, "images"), i))
        versions = data.get("versions") or []
        if not versions:
            self.noted(self.expected, field(where, "versions"), "a list of at least one version", versions, True)
        seen = set()
        for i, entry in enumerate(versions):
            self.version(entry, field(field(where, "versions"), i), seen, templates, arches)
        return self.problems


def check_catalog(addons):
    """Return one line per problem in the catalog (empty when it is valid)."""
    check = CatalogShape()
    return [line for name in sorted(addons) for line in check.catalog_addon(name, addons[name])]


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
    if is_exact_version(requested):
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
