# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the shape of a catalog entry, checked before anything is resolved from it.

:class:`AddonShape` is what an overlay or a catalog file may say (types and names), :class:`CatalogShape` what
the loaded catalog must hold (categories, artifact kinds, digests, exact versions); :func:`shape_problems` and
:func:`check_catalog` name every problem with its path, in one line each.
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio, semver
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import CatalogError

try:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
except ImportError:  # pragma: no cover - packaging ships with ansible-core; catalog.load_catalog says it is missing
    InvalidSpecifier = SpecifierSet = None

CATEGORIES = ("kubernetes", "etcd", "cri", "cni", "storage", "ingress", "metrics", "registry")
ARTIFACT_KINDS = ("binary", "archive", "manifest", "chart", "deb", "wheel", "file")
IMAGE_ARCHIVE_FORMATS = ("oci-archive", "docker-archive")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


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
        if not semver.is_exact(version):
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
