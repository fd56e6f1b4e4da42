# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: air-gap bundles (build on the controller, verify, unpack on hosts).

A bundle is one uncompressed tar stream::

    bundle.json              manifest: spec hash, the lock, every package and every file in it
                             (path, size, sha256); canonical JSON, its SHA-256 is the bundle id
    bundle.json.sig          detached Ed25519 signature (64 raw bytes) of bundle.json
    packages/<addon>-<version>-<key12>.tar
                             one per add-on: binaries, image archives, debs (+ a flat apt repo
                             index), manifests and package.json; built once per distinct input
                             and kept in a content-addressed cache on the controller

Building needs ``cryptography`` (signing) on the controller. Verifying and unpacking need only
the Python standard library: the Ed25519 check below is a plain-integer implementation of
RFC 8032 verification so that hosts without python3-cryptography verify the signature
themselves before anything is unpacked. Everything streams in fixed-size chunks.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import io
import json
import lzma
import os
import posixpath
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
import threading
import time
import urllib.request
import zlib
from urllib.parse import urlsplit

from ansible.module_utils.urls import open_url

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import sbom
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.host import (
    BUNDLE_FORMAT,
    BUNDLE_KIND,
    MANIFEST_NAME,
    SIGNATURE_NAME,
    BundleError,
    ChecksumError,
    SignatureError,
    _human,
    _Progress,
    bundle_id_of,
    key_fingerprint,
    public_key_from_pem,
)
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.layout import plan_install
from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio, netguard, tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import (
    CHUNK,
    HashingWriter,
    canonical_json,
    sha256_file,
)
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.images import split_tag
from ansible_collections.mooring.cluster.plugins.module_utils.common.yamlio import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import (
    LOOPBACK,
    URL_SCHEMES,
    check_shape,
    proxy_variables,
)

# 2: packages record how each artifact installs on hosts (``installs``, see layout.py);
# 3-5: host packages come with the dependencies a host may lack (apt_closure).
PACKAGE_FORMAT = 5
ARTIFACT_DIRS = {"binary": "bin", "archive": "archives", "manifest": "manifests", "chart": "charts",
                 "deb": "debs", "wheel": "wheels"}
IMAGE_FORMATS = ("oci-archive", "docker-archive")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
# One component of a file name inside a package: lockfile's rule for ``dest`` (a safe name, plus the
# '~' and '%' of Debian file names).
_FILE_NAME = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9_.+:@~%-]{1,255}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
# Bounds on what an artifact may make the builder read: a download larger than this (or than the
# lock's ``size`` for it) is cut off and refused; a .deb's control archive is small.
MAX_ARTIFACT = 16 << 30
MAX_DEB_CONTROL = 16 << 20
MAX_PACKAGE_JSON = 64 << 20  # a cached package's own package.json, read back for the SBOM
URL_SHOWN = 300  # how much of a URL an error message quotes


# --------------------------------------------------------------------------------------------
# The signing key (common/ed25519.py holds the one key stack)
# --------------------------------------------------------------------------------------------
def default_key_path():
    base = os.environ.get("MOORING_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".config", "mooring")
    return os.path.join(base, "bundle-signing.key")


def ensure_signing_key(key_path):
    """Load the Ed25519 signing key, creating it (0600) and its ``.pub`` on first use.

    Returns ``(private_key, public_pem_bytes, created)``.
    """
    missing = ed25519.cryptography_error()
    if missing is not None:
        raise missing_library("cryptography", "to sign bundles", missing, BundleError)
    pub_path = public_key_path(key_path)
    created = False
    for path in (key_path, pub_path):
        if os.path.lexists(path) and not os.path.isfile(path):
            raise BundleError("signing key %s: not a regular file" % path)
    if os.path.exists(key_path):
        try:
            key = ed25519.load_private_key(key_path)
        except ed25519.NotEd25519Error as exc:
            raise BundleError("signing key %s: not an Ed25519 private key" % key_path) from exc
        except ed25519.KeyFileError as exc:
            raise BundleError("signing key %s: cannot load it (%s); move it away to create a new one"
                              % (key_path, exc)) from exc
    else:
        key = ed25519.new_private_key()
        os.makedirs(os.path.dirname(os.path.abspath(key_path)), mode=0o700, exist_ok=True)
        ed25519.write_private_key(key_path, key)
        created = True
    public_pem = ed25519.public_pem(key)
    fileio.write_if_changed(pub_path, public_pem, 0o644)
    return key, public_pem, created


def public_key_path(key_path):
    return key_path[:-4] + ".pub" if key_path.endswith(".key") else key_path + ".pub"


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------
def manifest_bytes(manifest):
    """The exact bytes of bundle.json: sorted keys, one level of indentation, trailing newline."""
    return (json.dumps(manifest, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _tarinfo(name, size, mode=0o644):
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = mode
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _safe_name(text):
    return _SAFE.sub("_", text).strip("_") or "x"


def _under(root, rel):
    """``root/rel`` (``rel`` with '/' separators) after checking it stays under ``root`` once symlinks are
    resolved (fileio.under_root): every file the builder writes is placed through here."""
    try:
        return fileio.under_root(root, *rel.split("/"))
    except fileio.PathEscapeError as exc:
        raise BundleError("refusing to write %s: it resolves outside %s" % (excerpt(rel), root)) from exc


def _open_source(path, name):
    """A file:// source, opened without blocking on a FIFO or device: regular files only."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise BundleError("artifact %s: cannot read %s: %s" % (name, excerpt(path), exc.strerror or exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BundleError("artifact %s: %s is %s, not a regular file" % (
                name, excerpt(path), "a directory" if stat.S_ISDIR(st.st_mode) else "a special file"))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st.st_size
    except BaseException:
        os.close(fd)
        raise


# --------------------------------------------------------------------------------------------
# Fetching with verification
# --------------------------------------------------------------------------------------------
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")


@contextlib.contextmanager
def proxy_environment(lock):
    """While the build runs, the lock's HTTP proxy (``spec.proxy``) in this process's environment, where
    ``open_url`` (artifacts) and ``apt-get download`` (host packages) read it; the controller's own proxy variables
    are put back afterwards. Without a proxy in the lock nothing changes. Yields the variables set."""
    proxy = lock.get("proxy") if isinstance(lock, dict) else None
    if not proxy:
        yield {}
        return
    env = proxy_variables(proxy, list(LOOPBACK) + list(proxy.get("noProxy") or ()))
    saved = {k: os.environ.get(k) for k in PROXY_VARIABLES}
    os.environ.update(env)
    try:
        yield env
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def via_proxy(url):
    """The URL this process connects to for ``url``: its proxy, as the environment gives one to urllib (and so to
    ``open_url``), or ``url`` itself. The route guard checks that one."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass_environment(parts.hostname or "", proxies):
        return proxy
    return url


def fetch(url, dest, expected_sha256, name, progress=None, counter=None, timeout=60, expected_size=None):
    """Download ``url`` to ``dest`` (https, http, file) while hashing it.

    On a mismatch nothing is left at ``dest`` and :class:`ChecksumError` names the artifact,
    the expected and the actual digest. ``expected_sha256`` None = trust on first use.
    Network reads time out after ``timeout`` seconds without data; a file:// URL must name a
    regular file (a FIFO or device is refused without a blocking read). More than
    ``expected_size`` bytes (when the lock gives one) or :data:`MAX_ARTIFACT` is refused.
    Returns ``(sha256, size)``.
    """
    progress = progress or _Progress(None)
    part = dest + ".part"
    digest = hashlib.sha256()
    size = 0
    limit = MAX_ARTIFACT if expected_size is None else min(expected_size, MAX_ARTIFACT)
    if not isinstance(url, str) or not url.startswith(URL_SCHEMES):
        raise BundleError("artifact %s: unsupported URL %s (use %s)" % (name, excerpt(url, URL_SHOWN), ", ".join(URL_SCHEMES)))
    try:
        if url.startswith("file://"):
            path = url[len("file://"):]
            if not path.startswith("/"):
                raise BundleError("artifact %s: %s: a file:// URL needs an absolute path (file:///...)"
                                  % (name, excerpt(url, URL_SHOWN)))
            source, total = _open_source(path, name)
        else:
            netguard.check_url(via_proxy(url))
            source = open_url(url, timeout=timeout, http_agent="mooring.cluster-bundle")
            try:
                total = int(source.headers.get("Content-Length") or 0)
            except ValueError:
                total = 0
    except BundleError:
        raise
    except Exception as exc:
        raise BundleError("artifact %s: cannot fetch %s: %s" % (name, excerpt(url, URL_SHOWN), _reason(exc))) from exc
    if total > limit:
        source.close()
        raise BundleError("artifact %s: %s has %d bytes; at most %d are allowed (the lock's size for it, else %d); "
                          "nothing was added" % (name, excerpt(url, URL_SHOWN), total, limit, MAX_ARTIFACT))
    try:
        with source, open(part, "wb") as out:
            while True:
                chunk = source.read(CHUNK)
                if not chunk:
                    break
                if size + len(chunk) > limit:
                    raise BundleError("artifact %s: %s has more than %d bytes (the lock's size for it, else %d); "
                                      "nothing was added" % (name, excerpt(url, URL_SHOWN), limit, MAX_ARTIFACT))
                digest.update(chunk)
                out.write(chunk)
                size += len(chunk)
                progress.tick("fetch %s" % name, size, total)
    except BundleError:
        _unlink(part)
        raise
    except Exception as exc:
        _unlink(part)
        raise BundleError("artifact %s: download of %s failed: %s" % (name, excerpt(url, URL_SHOWN), _reason(exc))) from exc
    if counter is not None:
        counter["bytes_read"] = counter.get("bytes_read", 0) + size
    actual = digest.hexdigest()
    if expected_sha256 and actual != expected_sha256.lower():
        _unlink(part)
        raise ChecksumError("artifact %s (%s): sha256 mismatch: expected %s, got %s; nothing was added to the "
                            "bundle. Check the catalog/overlay entry or the mirror." % (name, excerpt(url, URL_SHOWN),
                                                                                        expected_sha256, actual))
    os.replace(part, dest)
    return actual, size


def _unlink(path):
    with contextlib.suppress(OSError):
        os.unlink(path)


def skopeo_copy_argv(ref, digest, dest, image_format):
    """The skopeo command that saves a registry image as an archive (no daemon, no pull)."""
    if image_format not in IMAGE_FORMATS:
        raise BundleError("image %s: format %r is not one of %s" % (ref, image_format, ", ".join(IMAGE_FORMATS)))
    source = ref
    if digest:
        source = ref.split("@", 1)[0]
        # name:tag@sha256:... is not accepted by every transport; pin by digest only.
        repo = split_tag(source)[0]
        source = "%s@%s" % (repo, digest)
    return ["skopeo", "copy", "--quiet", "--retry-times", "2", "docker://" + source,
            "%s:%s:%s" % (image_format, dest, ref.split("@", 1)[0])]


# --------------------------------------------------------------------------------------------
# Debian packages: control fields, flat repository index
# --------------------------------------------------------------------------------------------
def _bounded_zstd(data, limit):
    """``zstd -dc`` of ``data``, refusing more than ``limit`` bytes of output."""
    proc = subprocess.Popen(["zstd", "-dc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,  # noqa: S603,S607
                            stderr=subprocess.DEVNULL)

    def feed():
        with contextlib.suppress(OSError):
            proc.stdin.write(data)
        with contextlib.suppress(OSError):
            proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    out = proc.stdout.read(limit + 1)
    proc.stdout.close()
    if len(out) > limit:
        proc.kill()
    proc.wait()
    writer.join()
    if len(out) > limit:
        raise ValueError("more than %d bytes decompressed" % limit)
    if proc.returncode != 0:
        raise ValueError("zstd exited %d" % proc.returncode)
    return out


def _decompress(name, data, limit):
    """The decompressed bytes of a .deb member ``name`` (by its suffix), at most ``limit``."""
    if name.endswith(".xz"):
        engine = lzma.LZMADecompressor()
    elif name.endswith(".gz"):
        engine = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif name.endswith(".zst"):
        return _bounded_zstd(data, limit)
    else:
        return data
    out = engine.decompress(data, limit + 1)
    if len(out) > limit:
        raise ValueError("more than %d bytes decompressed" % limit)
    return out


def _reason(exc):
    """The first line of an exception's text, at most 200 characters (its type when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def deb_control(path, label=None):
    """The control paragraph (text) of a .deb, read with the standard library only (bounded:
    the control archive is at most :data:`MAX_DEB_CONTROL` bytes, packed or unpacked, and its
    headers are measured before tarfile reads them, common/tarsafe.py).
    ``label`` names the package in errors (default: the path)."""
    label = label or excerpt(path, 200)
    try:
        with open(path, "rb") as handle:
            if handle.read(8) != b"!<arch>\n":
                raise BundleError("%s: not a Debian package (no ar header)" % label)
            while True:
                header = handle.read(60)
                if len(header) < 60:
                    break
                name = header[:16].decode("ascii", "replace").strip().rstrip("/")
                field = header[48:58].decode("ascii", "replace").strip()
                if not field.isdigit():
                    raise BundleError("%s: not a Debian package (bad ar member size %s)" % (label, excerpt(field)))
                size = int(field)
                if name.startswith("control.tar"):
                    if size > MAX_DEB_CONTROL:
                        raise BundleError("%s: control archive of %d bytes; the limit is %d"
                                          % (label, size, MAX_DEB_CONTROL))
                    data = _decompress(name, handle.read(size), MAX_DEB_CONTROL)
                    with tarsafe.open_tar(fileobj=io.BytesIO(data), mode="r:") as tar:
                        for member in tar.getmembers():
                            if member.name in ("./control", "control") and member.isfile():
                                return tar.extractfile(member).read().decode("utf-8").strip("\n")
                    break
                handle.seek(size + (size & 1), 1)
    except BundleError:
        raise
    except tarsafe.HeaderBoundError as exc:
        raise BundleError("%s: control archive: %s; refusing the package" % (label, exc)) from None
    except (OSError, EOFError, ValueError, tarfile.TarError, lzma.LZMAError, zlib.error) as exc:
        raise BundleError("%s: not a readable Debian package (%s)" % (label, _reason(exc))) from None
    raise BundleError("%s: no control file found in the package" % label)


def deb_fields(control_text):
    fields = {}
    for line in control_text.splitlines():
        if line and not line[0].isspace() and ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return fields


def flat_repo_index(entries):
    """``Packages`` text for a flat apt repository; entries are (control, filename, size, sha256)."""
    out = []
    for control, filename, size, sha in sorted(entries, key=lambda e: e[1]):
        out.append("%s\nFilename: ./%s\nSize: %d\nSHA256: %s\n" % (control, filename, size, sha))
    return "\n".join(out)


def flat_repo_release(packages_text):
    data = packages_text.encode("utf-8")
    return ("Origin: mooring.cluster\nLabel: mooring bundle\nSuite: bundle\nCodename: bundle\n"
            "Date: Thu, 01 Jan 1970 00:00:00 UTC\n"
            "SHA256:\n %s %d Packages\n" % (hashlib.sha256(data).hexdigest(), len(data)))


# --------------------------------------------------------------------------------------------
# Per-add-on packages (content-addressed cache)
# --------------------------------------------------------------------------------------------
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


def _component(value, what, where):
    """``value`` when it is one safe path component (fileio.safe_name), else :class:`BundleError`."""
    try:
        return fileio.safe_name(value, what)
    except fileio.PathEscapeError as exc:
        raise BundleError("%s: %s" % (where, exc)) from None


def _artifact_relpath(name, artifact):
    """``<addon>/<dir>[/<arch>]/<dest>``: every component checked, whatever the lock says."""
    where = "add-on %s: artifact %s" % (excerpt(name), excerpt(artifact.get("name")))
    _component(name, "add-on", where)
    kind = artifact.get("kind") or "binary"
    if kind not in ARTIFACT_DIRS:
        raise BundleError("%s: kind %s is not one of %s" % (where, excerpt(kind), ", ".join(sorted(ARTIFACT_DIRS))))
    url = artifact.get("url") if isinstance(artifact.get("url"), str) else ""
    dest = artifact.get("dest") or posixpath.basename(url.split("?", 1)[0])
    if not isinstance(dest, str) or not _FILE_NAME.match(dest):
        raise BundleError("%s: cannot derive a safe file name from %s (set 'dest' to one file name: letters, "
                          "digits and . _ - + : @ ~ %%)" % (where, excerpt(dest)))
    if kind in ("binary", "archive"):
        arch = _component(artifact.get("arch") or "all", "architecture", where)
        return "%s/%s/%s/%s" % (name, ARTIFACT_DIRS[kind], arch, dest)
    return "%s/%s/%s" % (name, ARTIFACT_DIRS[kind], dest)


def _apt_print_uris(names, status, archives):
    # An empty dpkg status and an empty archive cache: apt then lists every package it would fetch
    # for a host with nothing installed (it leaves out what it finds in its cache).
    proc = subprocess.run(["apt-get", "install", "-qq", "--print-uris", "--no-install-recommends",
                           "-o", "Dir::State::status=%s" % status, "-o", "Dir::Cache::archives=%s" % archives]
                          + list(names),
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BundleError("host packages %s: apt cannot resolve them: %s" % (", ".join(names), proc.stderr.strip()))
    # 'URI' name_version_arch.deb size SHA256:...
    return {line.split()[1].split("_", 1)[0] for line in proc.stdout.splitlines() if line.startswith("'")}


def apt_closure(names):
    """``names`` with every dependency a host may lack: apt's resolution against an empty dpkg
    status, less what every Debian host has (the Priority: required packages).
    Hosts are air-gapped: a package whose dependency is missing from the bundle cannot install."""
    dump = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True, check=False).stdout
    required, pkg = set(), None
    for line in dump.splitlines():
        if line.startswith("Package: "):
            pkg = line.split(": ", 1)[1]
        elif line == "Priority: required" and pkg:
            required.add(pkg)
    with tempfile.TemporaryDirectory(prefix="mooring-apt-") as tmp:
        status = os.path.join(tmp, "status")
        open(status, "w").close()
        os.makedirs(os.path.join(tmp, "archives", "partial"))
        want = _apt_print_uris(names, status, os.path.join(tmp, "archives"))
    # Only the required packages themselves are on every host; apt may satisfy their own
    # dependencies with other alternatives than a host did, so nothing else is left out.
    return sorted((want - required) | set(names))


def _apt_download(names, dest_dir):
    """Fetch Debian packages by name with the controller's apt (signed archive metadata)."""
    if not shutil.which("apt-get"):
        raise BundleError("host packages %s: no deb artifact provides them and this controller has no apt-get; "
                          "add them to the catalog overlay as kind: deb artifacts" % ", ".join(names))
    closure = apt_closure(names)
    proc = subprocess.run(["apt-get", "-q", "-o", "APT::Sandbox::User=root", "download"] + closure,
                          cwd=dest_dir, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BundleError("host packages %s: apt-get download failed: %s" % (", ".join(names), proc.stderr.strip()))


class PackageCache(object):
    """Add-on packages keyed by :func:`package_key`, stored as ``<key>.tar`` + ``<key>.json``."""

    def __init__(self, root):
        self.root = os.path.join(root, "packages")

    def paths(self, key):
        if not isinstance(key, str) or not _HEX64.match(key):
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

    def build(self, name, addon, distro="debian", progress=None, counter=None, apt_download=_apt_download):
        inputs = package_inputs(name, addon, distro)
        key = package_key(inputs)
        os.makedirs(self.root, exist_ok=True)
        work = tempfile.mkdtemp(prefix=".build-%s-" % _safe_name(name)[:64], dir=self.root)
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
    if not isinstance(meta.get("sha256"), str) or not _HEX64.match(meta["sha256"]):
        return False
    if not isinstance(meta.get("addon"), str) or not isinstance(meta.get("files"), list):
        return False
    return all(k in meta for k in _MANIFEST_PACKAGE_KEYS)


class _PackageBuild(object):
    """One add-on package built in ``work``: its artifacts, images and host packages fetched and
    checked, a flat apt repository index, package.json, then the tar and its cache record."""

    def __init__(self, work, name, addon, inputs, key, distro, progress, counter, apt_download):
        _component(name, "add-on", "add-on %s" % excerpt(name))
        self.work, self.name, self.addon, self.inputs, self.key = work, name, addon, inputs, key
        self.distro, self.counter, self.apt_download = distro, counter, apt_download
        self.progress = progress or _Progress(None)
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
            rel = "%s/images/%s.%s.tar" % (name, _safe_name(ref.split("@", 1)[0].replace("/", "_").replace(":", "_")),
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
        # Temporary names inside the build directory: concurrent builds of one key never clash,
        # and the last atomic rename wins with identical content.
        tmp_tar = _under(work, ".package.tar")
        self.progress.say("packing %s %s" % (name, addon.get("version")))
        with open(tmp_tar, "wb") as raw:
            writer = HashingWriter(raw)
            with tarfile.open(fileobj=writer, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for entry in all_files:
                    with open(_under(work, entry["path"]), "rb") as src:
                        tar.addfile(_tarinfo(entry["path"], entry["size"], entry.get("mode", 0o644)), src)
                    if counter is not None:
                        counter["bytes_read"] = counter.get("bytes_read", 0) + entry["size"]
            raw.flush()
            os.fsync(raw.fileno())
        meta = {
            "key": self.key,
            "addon": name,
            "version": addon.get("version"),
            "file": "packages/%s-%s-%s.tar" % (_safe_name(name), _safe_name(str(addon.get("version"))), self.key[:12]),
            "size": writer.size,
            "sha256": writer.hexdigest(),
            "images": self.images,
            "packages": self.inputs["packages"],
            "repo": repo,
            "trustedOnFirstUse": self.tofu,
            "installs": self.installs,
            "files": [{k: f[k] for k in ("path", "size", "sha256")} for f in all_files],
        }
        os.replace(tmp_tar, tar_path)
        tmp_meta = _under(work, ".package.json")
        with open(tmp_meta, "w", encoding="utf-8") as handle:
            json.dump(meta, handle, sort_keys=True, indent=1)
        os.replace(tmp_meta, meta_path)
        return meta


# --------------------------------------------------------------------------------------------
# Bundle assembly
# --------------------------------------------------------------------------------------------
def select_addons(lock, addons=None):
    available = sorted((lock.get("addons") or {}).keys())
    if not addons:
        return available
    unknown = [a for a in addons if a not in available]
    if unknown:
        shown = [a if isinstance(a, str) and fileio.SAFE_NAME.match(a) else excerpt(a, 60) for a in unknown[:5]]
        raise BundleError("addons: %s not in the lock (it has: %s)" % (", ".join(shown), ", ".join(available)[:500]))
    return sorted(set(addons))


def sandbox_image(lock):
    """The pause image the catalog pins for the locked Kubernetes version (None if absent)."""
    for addon in (lock.get("addons") or {}).values():
        for image in addon.get("images") or []:
            repo = split_tag(image.get("ref") or "")[0]
            if repo.endswith("/pause"):
                return image["ref"]
    return None


def plan_bundle(lock, cache_dir=None, addons=None, distro="debian"):
    """Which packages the bundle needs and which are already cached: ``[(name, key, cached_meta)]``.

    The lock's shape is checked first (lockfile.check_shape: a lock given as a mapping, not read
    from a file, is held to the same rules), so nothing is fetched or written for a lock whose
    names would leave the cache."""
    check_shape(lock)
    _component(distro, "distro", "distro")
    cache = PackageCache(cache_dir or default_cache_dir())
    plan = []
    for name in select_addons(lock, addons):
        key = package_key(package_inputs(name, lock["addons"][name], distro))
        plan.append((name, key, cache.get(key)))
    return plan


_MANIFEST_PACKAGE_KEYS = ("key", "version", "file", "size", "sha256", "images", "packages", "repo",
                          "trustedOnFirstUse", "installs", "files")


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
                          "again" % (meta["addon"], tar_path, _reason(exc), cache.root)) from None
    raise BundleError("cached package %s (%s): no usable %s in it; delete it from %s and build again"
                      % (meta["addon"], tar_path, wanted, cache.root))


def sbom_bytes(cache, manifest, bundle_id, metas):
    """The bundle's CycloneDX SBOM (sbom.py), validated: from the manifest and each package's package.json."""
    return sbom.render(manifest, bundle_id, {m["addon"]: package_record(cache, m) for m in metas})


def build_manifest(lock, metas, public_raw, distro):
    return {
        "bundleFormat": BUNDLE_FORMAT,
        "kind": BUNDLE_KIND,
        "hash": lock.get("hash"),
        "specDigest": lock.get("specDigest"),
        "lockDigest": lock.get("digest"),
        "distro": distro,
        "signer": key_fingerprint(public_raw),
        "sandboxImage": sandbox_image(lock),
        "lock": lock,
        "packages": {m["addon"]: {k: m[k] for k in _MANIFEST_PACKAGE_KEYS} for m in metas},
    }


def _build_packages(cache, lock, names, distro, sink, counter, apt_download):
    """Build the packages ``names`` side by side, one thread per core: decompressing, hashing and
    copying release the GIL, so a bundle of several add-ons uses every core. ``{name: meta}``."""
    if not names:
        return {}
    apt_lock = threading.Lock()

    def serial_apt(packages, dest):
        with apt_lock:  # one apt-get download at a time
            return apt_download(packages, dest)

    def one(name):
        own = {"bytes_read": 0, "bytes_copied": 0}
        return cache.build(name, lock["addons"][name], distro, sink, own, serial_apt), own

    for name in names:
        sink.say("building package %s %s" % (name, lock["addons"][name].get("version")))
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(names), os.cpu_count() or 1)) as pool:
        futures = [(name, pool.submit(one, name)) for name in names]
    built = {}
    for name, future in futures:
        meta, own = future.result()
        built[name] = meta
        for k, v in own.items():
            counter[k] = counter.get(k, 0) + v
    return built


def build_bundle(lock, output, key_path=None, cache_dir=None, addons=None, distro="debian", progress=None,
                 check_mode=False, apt_download=_apt_download, verify_cache=False):
    """Build (or reuse) every package and write the signed bundle to ``output``, fetching through the lock's
    proxy when it has one (:func:`proxy_environment`); see :func:`_build_bundle`."""
    with proxy_environment(lock):
        return _build_bundle(lock, output, key_path=key_path, cache_dir=cache_dir, addons=addons, distro=distro,
                             progress=progress, check_mode=check_mode, apt_download=apt_download,
                             verify_cache=verify_cache)


def _build_bundle(lock, output, key_path=None, cache_dir=None, addons=None, distro="debian", progress=None,
                  check_mode=False, apt_download=_apt_download, verify_cache=False):
    """Build (or reuse) every package and write the signed bundle to ``output``.

    Returns a result dict: ``changed``, ``id`` (sha256 of bundle.json), ``size`` of the bundle file,
    per add-on ``reused``, ``bytes_read`` (read through Python: sources, hashing) and
    ``bytes_copied`` (cached packages copied into the bundle in the kernel). A cached package is
    trusted by its recorded size unless ``verify_cache`` (then it is re-hashed).

    The CycloneDX SBOM of the bundle (sbom.py) is written beside it, ``<output>.cdx.json``, when its
    content changed (``sbom``: its path, ``sbom_changed``); it is made and validated before the bundle
    is written, so a bundle never goes out with an SBOM that failed. ``changed`` covers both files,
    ``bundle_changed`` the bundle alone.
    """
    started = time.monotonic()
    sink = _Progress(progress)
    cache_dir = cache_dir or default_cache_dir()
    cache = PackageCache(cache_dir)
    key_path = key_path or default_key_path()
    counter = {"bytes_read": 0, "bytes_copied": 0}
    plan = plan_bundle(lock, cache_dir, addons, distro)
    check_output(output)
    _check_directory(cache_dir, "cache directory")
    sbom.require()
    sbom_path = sbom.sbom_path(output)
    if check_mode:
        current = bundle_id_of(output)
        changed = current is None or any(item[2] is None for item in plan)
        result = {"path": output, "packages": {name: {"key": key, "reused": meta is not None} for name, key, meta in plan},
                  "sbom": sbom_path, "sbom_changed": True}
        if not changed:
            # Every package is cached: the manifest (and so the id) can be computed without fetching.
            try:
                with open(public_key_path(key_path), "rb") as handle:
                    public_raw = public_key_from_pem(handle.read())
            except (OSError, SignatureError):
                changed = True
            else:
                metas = [item[2] for item in plan]
                manifest = build_manifest(lock, metas, public_raw, distro)
                data = manifest_bytes(manifest)
                bundle_id = hashlib.sha256(data).hexdigest()
                changed = bundle_id != current
                if not changed:
                    # What a real run would return, so a check run can go on with the bundle that is there.
                    result.update({"id": bundle_id, "public_key_path": public_key_path(key_path),
                                   "sandbox_image": manifest["sandboxImage"]})
                    result["sbom_changed"] = fileio.write_if_changed(
                        sbom_path, sbom_bytes(cache, manifest, bundle_id, metas), check_mode=True)
        result["bundle_changed"] = changed
        result["changed"] = changed or result["sbom_changed"]
        return result
    key, public_pem, key_created = ensure_signing_key(key_path)
    public_raw = public_key_from_pem(public_pem)
    metas = []
    report = {}
    built = _build_packages(cache, lock, [name for name, _pkey, meta in plan if meta is None], distro, sink, counter,
                            apt_download)
    for name, pkey, meta in plan:
        if meta is None:
            meta = built[name]
            report[name] = {"key": pkey, "reused": False}
        else:
            report[name] = {"key": pkey, "reused": True}
        report[name].update({"size": meta["size"], "sha256": meta["sha256"],
                             "trustedOnFirstUse": meta.get("trustedOnFirstUse", [])})
        metas.append(meta)
    manifest = build_manifest(lock, metas, public_raw, distro)
    data = manifest_bytes(manifest)
    bundle_id = hashlib.sha256(data).hexdigest()
    signature = key.sign(data)
    sbom_data = sbom_bytes(cache, manifest, bundle_id, metas)  # validated before anything is written
    result = {"path": output, "id": bundle_id, "hash": lock.get("hash"), "packages": report,
              "public_key": public_pem.decode("ascii"), "public_key_path": public_key_path(key_path),
              "key_created": key_created, "signer": manifest["signer"],
              "sandbox_image": manifest["sandboxImage"], "sbom": sbom_path}
    if bundle_id_of(output) == bundle_id and os.path.getsize(output) == _bundle_size(data, signature, metas):
        sbom_changed = fileio.write_if_changed(sbom_path, sbom_data)
        result.update({"changed": sbom_changed, "bundle_changed": False, "sbom_changed": sbom_changed,
                       "size": os.path.getsize(output),
                       "bytes_read": counter["bytes_read"], "bytes_copied": 0,
                       "seconds": round(time.monotonic() - started, 3)})
        if sbom_changed:
            sink.say("SBOM %s written" % sbom_path)
        return result
    directory = os.path.dirname(os.path.abspath(output))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".bundle-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            _write_member(out, MANIFEST_NAME, len(data), io.BytesIO(data))
            _write_member(out, SIGNATURE_NAME, len(signature), io.BytesIO(signature))
            for meta in metas:
                tar_path = cache.paths(meta["key"])[0]
                sink.say("adding %s (%s)" % (meta["file"], _human(meta["size"])))
                with open(tar_path, "rb") as src:
                    if verify_cache:
                        actual, _size = sha256_file(tar_path, counter)
                        if actual != meta["sha256"]:
                            raise ChecksumError("cached package %s (%s): sha256 mismatch: expected %s, got %s; delete "
                                                "it from %s and build again" % (meta["addon"], tar_path, meta["sha256"],
                                                                                actual, cache.root))
                    counter["bytes_copied"] += _write_member(out, meta["file"], meta["size"], src, counter)
            out.write(b"\0" * (2 * tarfile.BLOCKSIZE))
            pad = -out.tell() % tarfile.RECORDSIZE
            out.write(b"\0" * pad)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, output)
    except BaseException:
        _unlink(tmp)
        raise
    size = os.path.getsize(output)
    result["sbom_changed"] = fileio.write_if_changed(sbom_path, sbom_data)
    result.update({"changed": True, "bundle_changed": True, "size": size, "bytes_read": counter["bytes_read"],
                   "bytes_copied": counter["bytes_copied"], "seconds": round(time.monotonic() - started, 3)})
    sink.say("bundle %s written: %s, id %s; SBOM %s" % (output, _human(size), bundle_id[:16], sbom_path))
    return result


def check_output(output):
    """Refuse, before anything is built, a bundle path that cannot be written as a file: a directory,
    an existing special file, or a path below something that is not a directory (missing
    directories are created)."""
    if not isinstance(output, str) or not output:
        raise BundleError("output: a bundle file path is required")
    if os.path.isdir(output):
        raise BundleError("output %s: is a directory; name the bundle file to write" % output)
    if os.path.lexists(output) and not os.path.isfile(output):
        raise BundleError("output %s: exists and is not a regular file" % output)
    sbom_file = sbom.sbom_path(output)
    if os.path.lexists(sbom_file) and not os.path.isfile(sbom_file):
        raise BundleError("output %s: its SBOM path %s exists and is not a regular file" % (output, sbom_file))
    _check_directory(os.path.dirname(os.path.abspath(output)), "output %s:" % output)


def _check_directory(path, what):
    """``path`` is a directory, or can be made one: its nearest existing ancestor is a directory."""
    path = os.path.abspath(path)
    if os.path.lexists(path) and not os.path.isdir(path):
        raise BundleError("%s %s is not a directory" % (what, path))
    parent = path
    while not os.path.lexists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise BundleError("%s %s is not a directory" % (what, parent))


def _write_member(out, name, size, src, counter=None):
    """Append one tar member. File sources are copied in the kernel (copy_file_range) when possible,
    so assembling a bundle from cached packages does not read them through Python."""
    out.write(_tarinfo(name, size).tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))
    out.flush()
    copied = 0
    fileno = getattr(src, "fileno", None)
    if fileno is not None and hasattr(os, "copy_file_range"):
        try:
            in_fd, out_fd = src.fileno(), out.fileno()
            while copied < size:
                n = os.copy_file_range(in_fd, out_fd, min(size - copied, 1 << 30))
                if n == 0:
                    break
                copied += n
        except (OSError, io.UnsupportedOperation):
            copied = 0
            src.seek(0)
            out.seek(0, os.SEEK_END)
    if copied == 0 and size:
        while copied < size:
            chunk = src.read(min(CHUNK, size - copied))
            if not chunk:
                break
            out.write(chunk)
            copied += len(chunk)
        if counter is not None and fileno is not None:
            counter["bytes_read"] += copied
    if copied != size:
        raise BundleError("bundle member %s: expected %d bytes, copied %d" % (name, size, copied))
    out.write(b"\0" * (-size % tarfile.BLOCKSIZE))
    return copied


def _bundle_size(data, signature, metas):
    def member(size):
        return 512 + (size + 511) // 512 * 512
    total = member(len(data)) + member(len(signature)) + sum(member(m["size"]) for m in metas)
    total += 1024
    return (total + tarfile.RECORDSIZE - 1) // tarfile.RECORDSIZE * tarfile.RECORDSIZE
