# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: one add-on's package in a bundle, and the content-addressed cache of packages.

A package (``<addon>/...`` files and ``package.json``, in one tar) is made from :func:`package_inputs`
alone and stored under :func:`package_key` (the sha256 of those inputs), so a package is built once
per distinct input and reused by every bundle that needs it: its artifacts fetched and checked
(bundle.fetch), its image archives, its host packages with a flat apt repository (bundle.debs).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import shutil
import subprocess
import tarfile
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.debs import apt_download, deb_control, deb_fields, flat_repo_index, flat_repo_release
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.fetch import IMAGE_FORMATS, fetch, skopeo_copy_argv
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.format import BundleError, manifest_bytes, tarinfo
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.layout import plan_install
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.progress import Progress
from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio, tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import HashingWriter, canonical_json, sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, reason
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import HEX64

# 2: packages record how each artifact installs on hosts (``installs``, see layout.py);
# 3-5: host packages come with the dependencies a host may lack (apt_closure).
PACKAGE_FORMAT = 5
ARTIFACT_DIRS = {"binary": "bin", "archive": "archives", "manifest": "manifests", "chart": "charts",
                 "deb": "debs", "wheel": "wheels"}
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
# One component of a file name inside a package: lockfile's rule for ``dest`` (a safe name, plus the
# '~' and '%' of Debian file names).
_FILE_NAME = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9_.+:@~%-]{1,255}$")
MAX_PACKAGE_JSON = 64 << 20  # a cached package's own package.json, read back for the SBOM
MANIFEST_PACKAGE_KEYS = ("key", "version", "file", "size", "sha256", "images", "packages", "repo",
                         "trustedOnFirstUse", "installs", "files")  # what the signed manifest records of a package


def _file_stem(text):
    """``text`` cleaned into a file name stem: every run of other characters than letters, digits and
    ``. _ -`` becomes ``_`` (never empty). Unlike fileio.safe_name, which refuses a name, this one cleans it."""
    return _SAFE.sub("_", text).strip("_") or "x"


def _under(root, rel):
    """``root/rel`` (``rel`` with '/' separators) after checking it stays under ``root`` once symlinks are
    resolved (fileio.under_root): every file the builder writes is placed through here."""
    try:
        return fileio.under_root(root, *rel.split("/"))
    except fileio.PathEscapeError as exc:
        raise BundleError("refusing to write %s: it resolves outside %s" % (excerpt(rel), root)) from exc


def package_inputs(name, addon, distro="debian"):
    """Everything a package is made from: a change here (and only here) rebuilds it."""
    artifacts = [{k: a.get(k) for k in ("name", "kind", "arch", "url", "sha256", "dest")}
                 for a in addon.get("artifacts") or []]
    images = [{"ref": i.get("ref"), "digest": i.get("digest"), "archive": i.get("archive")}
              for i in addon.get("images") or []]
    packages = sorted((addon.get("packages") or {}).get(distro) or [])
    inputs = {"addon": name, "version": addon.get("version"), "distro": distro, "artifacts": artifacts,
              "images": images, "packages": packages}
    # In the repository but not installed on every host by the bundle role (the ha_endpoint role's keepalived).
    control_plane = sorted((addon.get("controlPlanePackages") or {}).get(distro) or [])
    if control_plane:
        inputs["controlPlanePackages"] = control_plane
    return inputs


def package_key(inputs):
    return hashlib.sha256(canonical_json({"packageFormat": PACKAGE_FORMAT, "inputs": inputs})).hexdigest()


def default_cache_dir():
    return os.path.join(os.environ.get("MOORING_CACHE_DIR") or "/var/cache/mooring", "bundle")


def component(value, what, where):
    """``value`` when it is one safe path component (fileio.safe_name), else :class:`BundleError`."""
    try:
        return fileio.safe_name(value, what)
    except fileio.PathEscapeError as exc:
        raise BundleError("%s: %s" % (where, exc)) from None


def _artifact_relpath(name, artifact):
    """``<addon>/<dir>[/<arch>]/<dest>``: every component checked, whatever the lock says."""
    where = "add-on %s: artifact %s" % (excerpt(name), excerpt(artifact.get("name")))
    component(name, "add-on", where)
    kind = artifact.get("kind") or "binary"
    if kind not in ARTIFACT_DIRS:
        raise BundleError("%s: kind %s is not one of %s" % (where, excerpt(kind), ", ".join(sorted(ARTIFACT_DIRS))))
    url = artifact.get("url") if isinstance(artifact.get("url"), str) else ""
    dest = artifact.get("dest") or posixpath.basename(url.split("?", 1)[0])
    if not isinstance(dest, str) or not _FILE_NAME.match(dest):
        raise BundleError("%s: cannot derive a safe file name from %s (set 'dest' to one file name: letters, "
                          "digits and . _ - + : @ ~ %%)" % (where, excerpt(dest)))
    if kind in ("binary", "archive"):
        arch = component(artifact.get("arch") or "all", "architecture", where)
        return "%s/%s/%s/%s" % (name, ARTIFACT_DIRS[kind], arch, dest)
    return "%s/%s/%s" % (name, ARTIFACT_DIRS[kind], dest)


class PackageCache(object):
    """Add-on packages keyed by :func:`package_key`, stored as ``<key>.tar`` + ``<key>.json``."""

    def __init__(self, root):
        self.root = os.path.join(root, "packages")

    def paths(self, key):
        if not isinstance(key, str) or not HEX64.match(key):
            raise BundleError("package key %s is not a sha256" % excerpt(key))
        return _under(self.root, key + ".tar"), _under(self.root, key + ".json")

    def get(self, key):
        """The cached record of ``key``, or None when absent, unreadable or not of the expected shape
        (then the package is built again)."""
        tar_path, meta_path = self.paths(key)
        try:
            if not os.path.isfile(meta_path) or not os.path.isfile(tar_path):
                return None
            with open(meta_path, "r", encoding="utf-8") as handle:
                meta = json.load(handle)
            if not _cached_meta_ok(meta, key) or os.path.getsize(tar_path) != meta["size"]:
                return None
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return None
        return meta

    def build(self, name, addon, distro="debian", progress=None, counter=None, apt_download=apt_download):
        inputs = package_inputs(name, addon, distro)
        key = package_key(inputs)
        os.makedirs(self.root, exist_ok=True)
        work = tempfile.mkdtemp(prefix=".build-%s-" % _file_stem(name)[:64], dir=self.root)
        try:
            meta = _PackageBuild(work, name, addon, inputs, key, distro, progress, counter, apt_download).run(
                self.paths(key))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return meta


def _cached_meta_ok(meta, key):
    """A cache record has what the bundle takes from it (it goes into the signed manifest as is)."""
    if not isinstance(meta, dict) or meta.get("key") != key:
        return False
    size, file_ = meta.get("size"), meta.get("file")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return False
    if not isinstance(file_, str) or not re.match(r"^packages/[A-Za-z0-9._-]{1,300}\.tar$", file_):
        return False
    if not isinstance(meta.get("sha256"), str) or not HEX64.match(meta["sha256"]):
        return False
    if not isinstance(meta.get("addon"), str) or not isinstance(meta.get("files"), list):
        return False
    return all(k in meta for k in MANIFEST_PACKAGE_KEYS)


class _PackageBuild(object):
    """One add-on package built in ``work``: its artifacts, images and host packages fetched and
    checked, a flat apt repository index, package.json, then the tar and its cache record."""

    def __init__(self, work, name, addon, inputs, key, distro, progress, counter, apt_download):
        component(name, "add-on", "add-on %s" % excerpt(name))
        self.work, self.name, self.addon, self.inputs, self.key = work, name, addon, inputs, key
        self.distro, self.counter, self.apt_download = distro, counter, apt_download
        self.progress = progress or Progress(None)
        self.files = []
        self.seen = {}  # path in the package -> sha256
        self.tofu = []  # what had no digest in the catalog (trusted on first use)
        self.installs = []
        self.images = []
        self.repo_entries = []  # (control, file name, size, sha256) of every deb

    def run(self, paths):
        self.artifacts()
        self.container_images()
        self.host_packages()
        return self.pack(*paths)

    def target(self, rel):
        path = _under(self.work, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return path

    def add_file(self, rel, sha, size, **extra):
        if rel in self.seen:
            raise BundleError("add-on %s: two artifacts would both be stored as %s; give one a distinct 'dest'"
                              % (self.name, rel))
        self.seen[rel] = sha
        entry = {"path": rel, "size": size, "sha256": sha}
        entry.update({k: v for k, v in extra.items() if v is not None})
        self.files.append(entry)

    def add_bytes(self, rel, data, **extra):
        with open(self.target(rel), "wb") as handle:
            handle.write(data)
        self.add_file(rel, hashlib.sha256(data).hexdigest(), len(data), **extra)

    def artifacts(self):
        name, addon = self.name, self.addon
        for artifact in addon.get("artifacts") or []:
            rel = _artifact_relpath(name, artifact)
            expected = (artifact.get("sha256") or "").lower()
            if expected and self.seen.get(rel) == expected:
                # One file listed once per architecture (an arch-independent manifest or chart in a
                # lock for several architectures): the same bytes, stored once.
                continue
            target = self.target(rel)
            label = "%s/%s (%s)" % (name, artifact.get("name"), artifact.get("arch") or "all")
            sha, size = fetch(artifact.get("url") or "", target, artifact.get("sha256"), label, self.progress,
                              self.counter, expected_size=artifact.get("size"))
            if not artifact.get("sha256"):
                self.tofu.append(label)
            kind = artifact.get("kind") or "binary"
            self.add_file(rel, sha, size, kind=kind, name=artifact.get("name"), arch=artifact.get("arch"),
                          url=artifact.get("url"), mode=0o755 if kind == "binary" else 0o644)
            install = plan_install(artifact, target, sha, size, addon.get("version"))
            if install:
                install["artifact"] = rel
                self.installs.append(install)

    def container_images(self):
        name = self.name
        for image in self.addon.get("images") or []:
            ref = image.get("ref")
            archive = image.get("archive") or None
            fmt = (archive or {}).get("format") or "oci-archive"
            if fmt not in IMAGE_FORMATS:
                raise BundleError("add-on %s: image %s: archive format %r is not one of %s"
                                  % (name, ref, fmt, ", ".join(IMAGE_FORMATS)))
            rel = "%s/images/%s.%s.tar" % (name, _file_stem(ref.split("@", 1)[0].replace("/", "_").replace(":", "_")),
                                           fmt)
            target = self.target(rel)
            if archive:
                sha, size = fetch(archive.get("url") or "", target, archive.get("sha256"), "image %s" % ref,
                                  self.progress, self.counter, expected_size=archive.get("size"))
                if not archive.get("sha256"):
                    self.tofu.append("image %s" % ref)
            else:
                self.progress.say("skopeo copy %s" % ref)
                proc = subprocess.run(skopeo_copy_argv(ref, image.get("digest"), target, fmt),
                                      capture_output=True, text=True, check=False)
                if proc.returncode != 0:
                    raise BundleError("add-on %s: image %s: skopeo copy failed: %s" % (name, ref, proc.stderr.strip()))
                sha, size = sha256_file(target, self.counter)
                if not image.get("digest"):
                    self.tofu.append("image %s" % ref)
            self.add_file(rel, sha, size, kind="image", ref=ref, format=fmt)
            self.images.append({"ref": ref, "path": rel, "format": fmt, "digest": image.get("digest")})

    def host_packages(self):
        """Every deb artifact plus the named packages no artifact provides (apt, Debian only), then
        a flat repository index over all of them."""
        name = self.name
        provided = set()
        for entry in [f for f in self.files if f.get("kind") == "deb"]:
            control = deb_control(_under(self.work, entry["path"]), "add-on %s: %s" % (name, entry["path"]))
            fields = deb_fields(control)
            provided.add(fields.get("Package"))
            entry["package"] = fields.get("Package")
            entry["version"] = fields.get("Version")
            self.repo_entries.append((control, posixpath.basename(entry["path"]), entry["size"], entry["sha256"]))
        wanted = self.inputs["packages"] + self.inputs.get("controlPlanePackages", [])
        missing = [p for p in wanted if p not in provided]
        if missing and self.distro == "debian":
            debdir = _under(self.work, "%s/debs" % name)
            os.makedirs(debdir, exist_ok=True)
            self.progress.say("apt-get download %s" % " ".join(missing))
            before = set(os.listdir(debdir))
            self.apt_download(missing, debdir)
            for fname in sorted(set(os.listdir(debdir)) - before):
                if not _FILE_NAME.match(fname) or not os.path.isfile(os.path.join(debdir, fname)):
                    raise BundleError("host packages: apt-get download left %s, not a package file" % excerpt(fname))
                sha, size = sha256_file(os.path.join(debdir, fname), self.counter)
                control = deb_control(os.path.join(debdir, fname), "add-on %s: %s (apt)" % (name, fname))
                fields = deb_fields(control)
                self.add_file("%s/debs/%s" % (name, fname), sha, size, kind="deb", name=fields.get("Package"),
                              package=fields.get("Package"), version=fields.get("Version"), source="apt")
                self.repo_entries.append((control, fname, size, sha))
        if self.repo_entries:
            index = flat_repo_index(self.repo_entries)
            for fname, text in (("Packages", index), ("Release", flat_repo_release(index))):
                self.add_bytes("%s/debs/%s" % (name, fname), text.encode("utf-8"), kind="repo-index")

    def pack(self, tar_path, meta_path):
        name, addon, work, counter = self.name, self.addon, self.work, self.counter
        self.files.sort(key=lambda f: f["path"])
        repo = "%s/debs" % name if self.repo_entries else None
        package_json = {
            "packageFormat": PACKAGE_FORMAT,
            "addon": name,
            "version": addon.get("version"),
            "key": self.key,
            "distro": self.distro,
            "inputs": self.inputs,
            "images": self.images,
            "packages": self.inputs["packages"],
            "repo": repo,
            "trustedOnFirstUse": self.tofu,
            "installs": self.installs,
            "files": self.files,
        }
        pj_rel = "%s/package.json" % name
        pj_data = manifest_bytes(package_json)
        with open(_under(work, pj_rel), "wb") as handle:
            handle.write(pj_data)
        all_files = self.files + [{"path": pj_rel, "size": len(pj_data), "sha256": hashlib.sha256(pj_data).hexdigest()}]
        all_files.sort(key=lambda f: f["path"])
        self.progress.say("packing %s %s" % (name, addon.get("version")))
        # A temporary file beside the cached one (fileio.atomic_output): concurrent builds of one key never
        # clash, and the last atomic rename wins with identical content.
        with fileio.atomic_output(tar_path) as raw:
            writer = HashingWriter(raw)
            with tarfile.open(fileobj=writer, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for entry in all_files:
                    with open(_under(work, entry["path"]), "rb") as src:
                        tar.addfile(tarinfo(entry["path"], entry["size"], entry.get("mode", 0o644)), src)
                    if counter is not None:
                        counter["bytes_read"] = counter.get("bytes_read", 0) + entry["size"]
            raw.flush()
            os.fsync(raw.fileno())
        meta = {
            "key": self.key,
            "addon": name,
            "version": addon.get("version"),
            "file": "packages/%s-%s-%s.tar" % (_file_stem(name), _file_stem(str(addon.get("version"))), self.key[:12]),
            "size": writer.size,
            "sha256": writer.hexdigest(),
            "images": self.images,
            "packages": self.inputs["packages"],
            "repo": repo,
            "trustedOnFirstUse": self.tofu,
            "installs": self.installs,
            "files": [{k: f[k] for k in ("path", "size", "sha256")} for f in all_files],
        }
        fileio.write_atomic(meta_path, json.dumps(meta, sort_keys=True, indent=1))
        return meta


def package_record(cache, meta):
    """The ``package.json`` inside a cached package (what it carries, per file: kind, URL, deb version,
    image reference). Only the tar headers are read up to that member, then that member."""
    tar_path = cache.paths(meta["key"])[0]
    wanted = "%s/package.json" % meta["addon"]
    try:
        with tarsafe.open_tar(tar_path, mode="r:") as tar:
            for member in tar:
                if member.name == wanted and member.isfile() and member.size <= MAX_PACKAGE_JSON:
                    record = json.loads(tar.extractfile(member).read().decode("utf-8"))
                    if isinstance(record, dict) and isinstance(record.get("files"), list):
                        return record
                    break
    except (OSError, ValueError, tarfile.TarError, RecursionError, tarsafe.HeaderBoundError) as exc:
        raise BundleError("cached package %s (%s): cannot read its package.json (%s); delete it from %s and build "
                          "again" % (meta["addon"], tar_path, reason(exc), cache.root)) from None
    raise BundleError("cached package %s (%s): no usable %s in it; delete it from %s and build again"
                      % (meta["addon"], tar_path, wanted, cache.root))
