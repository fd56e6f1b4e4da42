# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the lock file (``installer.lock.yaml``).

A lock is the resolved installer: the spec as written, its kURL hash, every add-on's resolved
version with its artifacts (URL, sha256, size), images and host packages, and a SHA-256 over
the canonical JSON of all of it. Same spec + same catalog -> byte-identical lock.

The digest only says the lock was not changed by accident: anyone who edits a lock can compute
it again. So a lock read from a file is checked for its *shape* before the digest
(:func:`check_shape`): every field the bundle builder and the playbooks read has the type they
expect, and every value that becomes part of a path (add-on names, versions, architectures,
artifact names and ``dest``, image references, host package names) is a safe name. A lock that
fails is refused with one line naming the file and the field, before anything is fetched or
written.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re

try:
    import yaml

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
    _SafeDumper = yaml.SafeDumper
except ImportError as _yaml_exc:  # a controller requirement; the import guard keeps sanity's import test honest
    HAS_YAML = False
    YAML_IMPORT_ERROR = _yaml_exc
    _SafeDumper = object

from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import canonical_json
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import PathEscapeError, safe_name
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import addon_contents, resolve_versions
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalogshape import ARTIFACT_KINDS, IMAGE_ARCHIVE_FORMATS
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import LockError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import API_VERSION
from ansible_collections.mooring.cluster.plugins.module_utils.spec.network import control_plane_packages

LOCK_KIND = "InstallerLock"
DEFAULT_ARCHITECTURES = ("amd64",)
# The URLs the bundle builder fetches: the catalog's upstream releases (https), the test mirror
# served on 127.0.0.1 (http, tests/mirror/serve.py) and its overlays on disk (file).
URL_SCHEMES = ("https://", "http://", "file://")
MAX_URL = 4096
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_IMAGE_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
# A Debian package name (Policy 5.6.1), optionally :ARCH: what apt-get is given as an argument.
_PACKAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]{0,127}(:[a-z0-9-]{1,32})?$")
# [REGISTRY/]PATH[:TAG][@DIGEST]: what skopeo is given, and (sanitised) an image archive's file name.
_IMAGE_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,511}$")
# One component of an artifact's ``dest``: a safe name, plus '~' and '%' (Debian file names:
# ``containerd_1.6.20~ds1-1_amd64.deb``, an epoch as ``%3a``); never '.', '..' or a separator.
_FILE_NAME = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9_.+:@~%-]{1,255}$")
_NO_CONTROL = re.compile(r"^[^\x00-\x20\x7f]+$")


def lock_digest(lock):
    """SHA-256 (hex) of the canonical JSON of the lock without its ``digest`` field."""
    body = {k: v for k, v in lock.items() if k != "digest"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def build_lock(installer, catalog, architectures=DEFAULT_ARCHITECTURES):
    """Resolve ``installer`` against ``catalog`` into a lock mapping (raises on any problem)."""
    architectures = sorted(set(architectures))
    requested = installer.requested_versions()
    resolved = resolve_versions(catalog, requested)
    addons = {}
    for name in sorted(resolved):
        contents = addon_contents(catalog, name, resolved[name], architectures)
        addons[name] = {
            "requested": requested[name],
            "version": resolved[name],
            "category": catalog.category(name),
            "options": installer.options(name),
            "artifacts": contents["artifacts"],
            "images": contents["images"],
            "packages": contents["packages"],
        }
        extra = control_plane_packages(installer.options(name)) if name == "kubernetes" else {}
        if extra:  # in the bundle's repository, installed on the control-plane hosts only (haEndpoint)
            addons[name]["controlPlanePackages"] = extra
    lock = {
        "apiVersion": API_VERSION,
        "kind": LOCK_KIND,
        "metadata": {"name": installer.name},
        "spec": installer.spec,
        "hash": installer.hash,
        "specDigest": installer.digest,
        "architectures": architectures,
        "addons": addons,
    }
    if installer.host_preflights:  # the preflight stage runs them (docs/preflight.md); absent otherwise
        lock["hostPreflights"] = installer.host_preflights
    if installer.proxy:  # the hosts' containerd and kubelet and an online bundle build use it (docs/proxy.md)
        lock["proxy"] = installer.proxy
    # Plain JSON types only (callers may pass str subclasses, e.g. ansible-core's tagged values).
    lock = json.loads(canonical_json(lock))
    lock["digest"] = lock_digest(lock)
    return lock


class _LockDumper(_SafeDumper):
    """Block style, stable key order; long strings are never folded."""


def _require_yaml():
    if not HAS_YAML:
        raise missing_library("PyYAML", "for lock files", YAML_IMPORT_ERROR, LockError)


def dump_lock(lock):
    """The lock as YAML text (sorted keys, so the same lock is always the same bytes)."""
    _require_yaml()
    header = "# installer.lock.yaml: generated by mooring.cluster; do not edit. hash=%s\n" % lock.get("hash")
    return header + yaml.dump(lock, Dumper=_LockDumper, sort_keys=True, default_flow_style=False, width=4096,
                              allow_unicode=True)


def load_lock(path):
    """Read a lock file (bounded YAML, no aliases: a lock has none), check its shape, then its digest."""
    _require_yaml()
    try:
        lock = yamlio.load_file(path, max_aliases=0)
    except yamlio.YamlInputError as exc:
        raise LockError(str(exc)) from None
    except OSError as exc:
        raise LockError("%s: cannot read the lock file: %s" % (path, exc.strerror or exc)) from None
    return check_lock(lock, str(path))


def check_lock(lock, where="lock"):
    """``lock`` when its shape (:func:`check_shape`) and its digest are right; else :class:`LockError`."""
    check_shape(lock, where)
    actual = lock_digest(lock)
    if actual != lock["digest"]:
        raise LockError("%s: digest mismatch (recorded %s, content %s); the lock was edited by hand — "
                        "re-run `mooring spec resolve`" % (where, lock["digest"], actual))
    return lock


LOOPBACK = ("localhost", "127.0.0.1", "::1")


def proxy_variables(proxy, no_proxy):
    """The environment for the lock's ``proxy`` (``{http, https}``; either serves for the other when alone):
    ``HTTP_PROXY``, ``HTTPS_PROXY`` and ``NO_PROXY`` (``no_proxy`` joined, first occurrence kept), each also in lower
    case - Go programs read either, curl only the lower-case one."""
    http = proxy.get("http") or proxy.get("https")
    https = proxy.get("https") or proxy.get("http")
    joined = ",".join(dict.fromkeys(str(v) for v in no_proxy))
    return {"HTTP_PROXY": http, "HTTPS_PROXY": https, "NO_PROXY": joined,
            "http_proxy": http, "https_proxy": https, "no_proxy": joined}


# --------------------------------------------------------------------------------------------
# Shape: every field a reader of the lock uses, with the type it expects (one line per refusal)
# --------------------------------------------------------------------------------------------
class LockShape(Shape):
    """Checks one lock; the first problem raises :class:`LockError` naming ``where`` and the field."""

    error = LockError

    def name(self, value, path, what):
        """A single safe path component (fileio.safe_name)."""
        try:
            return safe_name(value, what)
        except PathEscapeError:
            self.expected(path, "a safe name (letters, digits and . _ - + : @; no '/' or '..')", value, show_value=True)

    def relative_path(self, value, path):
        """A relative path whose every component is a safe file name (:data:`_FILE_NAME`)."""
        text = self.text(value, path, limit=1024)
        if text.startswith("/"):
            self.expected(path, "a relative path", value, show_value=True)
        for part in text.split("/"):
            if not _FILE_NAME.match(part):
                self.fail(path, "must be a relative path of safe file names (letters, digits and . _ - + : @ ~ %%; "
                          "no '..'), not %s (%s)" % (excerpt(value), excerpt(part, 40)))
        return text

    def url(self, value, path):
        text = self.text(value, path, limit=MAX_URL)
        if not _NO_CONTROL.match(text):
            self.expected(path, "a URL without spaces or control characters", value, show_value=True)
        if not text.startswith(URL_SCHEMES):
            self.expected(path, "a URL the bundle builder fetches (%s)" % ", ".join(URL_SCHEMES), value, show_value=True)
        if text.startswith("file://") and not text.startswith("file:///"):
            self.expected(path, "a file:// URL with an absolute path (file:///...)", value, show_value=True)
        return text

    def image_ref(self, value, path):
        ref = self.pattern(value, path, _IMAGE_REF, "an image reference ([REGISTRY/]PATH[:TAG][@DIGEST])")
        if any(part in ("", ".", "..") for part in ref.split("@", 1)[0].split("/")):
            self.expected(path, "an image reference (no empty, '.' or '..' path component)", value, show_value=True)
        return ref

    def packages(self, value, path):
        for distro, names in self.mapping(value, path, optional=True).items():
            where = field(path, distro)
            self.name(distro, where, "distribution")
            for i, package in enumerate(self.listing(names, where, optional=True)):
                self.pattern(package, field(where, i), _PACKAGE_NAME, "a Debian package name")

    def artifact(self, art, path):
        self.mapping(art, path)
        self.name(art.get("name"), field(path, "name"), "artifact name")
        self.one_of(art.get("kind"), field(path, "kind"), ARTIFACT_KINDS, optional=True)
        if art.get("arch") is not None:
            self.name(art["arch"], field(path, "arch"), "architecture")
        url = self.url(art.get("url"), field(path, "url"))
        self.pattern(art.get("sha256"), field(path, "sha256"), _HEX64, "a sha256 (64 hex digits)", optional=True)
        self.count(art.get("size"), field(path, "size"), optional=True, what="a size in bytes (a whole number >= 0)")
        if art.get("dest") is not None:
            self.relative_path(art["dest"], field(path, "dest"))
        elif not _FILE_NAME.match(posixpath.basename(url.split("?", 1)[0])):
            # Without 'dest' the bundle builder stores it under the URL's last component.
            self.expected(field(path, "url"), "a URL ending in a safe file name (else set 'dest')", url, show_value=True)

    def image(self, image, path):
        self.mapping(image, path)
        self.image_ref(image.get("ref"), field(path, "ref"))
        self.pattern(image.get("digest"), field(path, "digest"), _IMAGE_DIGEST, "sha256:<64 hex digits>",
                     optional=True)
        archive = image.get("archive")
        if archive is None:
            return
        where = field(path, "archive")
        self.mapping(archive, where)
        self.url(archive.get("url"), field(where, "url"))
        self.pattern(archive.get("sha256"), field(where, "sha256"), _HEX64, "a sha256 (64 hex digits)",
                     optional=True)
        self.one_of(archive.get("format"), field(where, "format"), IMAGE_ARCHIVE_FORMATS, optional=True)
        self.count(archive.get("size"), field(where, "size"), optional=True, what="a size in bytes (a whole number >= 0)")

    def addon(self, addon, path):
        self.keys(addon, path, required=("version",))
        self.name(addon["version"], field(path, "version"), "version")
        self.text(addon.get("requested"), field(path, "requested"), optional=True)
        self.text(addon.get("category"), field(path, "category"), optional=True)
        if "options" in addon:
            self.mapping(addon["options"], field(path, "options"))
        where = field(path, "artifacts")
        for i, art in enumerate(self.listing(addon.get("artifacts"), where, optional=True)):
            self.artifact(art, field(where, i))
        where = field(path, "images")
        for i, image in enumerate(self.listing(addon.get("images"), where, optional=True)):
            self.image(image, field(where, i))
        for key in ("packages", "controlPlanePackages"):
            self.packages(addon.get(key), field(path, key))

    def settings(self, lock):
        """The lock's own fields (but its add-ons): versions, digests, metadata, spec, preflights, proxy."""
        self.text(lock.get("apiVersion"), "apiVersion", optional=True, limit=128)
        self.text(lock["hash"], "hash", limit=128)
        self.pattern(lock["digest"], "digest", _HEX64, "a sha256 (64 hex digits)")
        self.text(lock.get("specDigest"), "specDigest", optional=True, limit=128)
        metadata = self.mapping(lock.get("metadata"), "metadata", optional=True)
        self.text(metadata.get("name"), "metadata.name", optional=True, limit=253)
        self.mapping(lock.get("spec"), "spec", optional=True)
        chosen = self.mapping(lock.get("hostPreflights"), "hostPreflights", optional=True)
        self.listing(chosen.get("documents"), "hostPreflights.documents", optional=True)
        proxy = self.mapping(lock.get("proxy"), "proxy", optional=True)
        for key in ("http", "https"):
            self.text(proxy.get(key), "proxy." + key, optional=True, limit=2048)
        for i, entry in enumerate(self.listing(proxy.get("noProxy"), "proxy.noProxy", optional=True)):
            self.text(entry, field("proxy.noProxy", i), limit=253)

    def lock(self, lock):
        if not isinstance(lock, dict) or lock.get("kind") != LOCK_KIND:
            self.fail("", "not an installer lock (kind must be %s)" % LOCK_KIND)
        self.json_shaped(lock, "")
        self.keys(lock, "", required=("hash", "addons", "digest", "architectures"))
        self.settings(lock)
        for i, arch in enumerate(self.listing(lock["architectures"], "architectures")):
            self.name(arch, field("architectures", i), "architecture")
        for name, addon in sorted(self.mapping(lock["addons"], "addons").items()):
            where = field("addons", name)
            self.name(name, where, "add-on")
            self.addon(addon, where)
        return lock


def check_shape(lock, where="lock"):
    """``lock`` when every field has the type its readers expect and every value that becomes part of
    a path is a safe name; else :class:`LockError` (one line: ``where``, the field, the problem)."""
    return LockShape(where).lock(lock)
