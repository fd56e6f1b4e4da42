# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: fetching a bundle's sources (https, http, file; skopeo for images) with verification.

Every byte is hashed while it is written; a download that does not match its recorded sha256, or is
larger than allowed, leaves nothing behind (fileio.atomic_output). The lock's HTTP proxy applies
while a bundle builds (:func:`proxy_environment`) and the route guard (common/netguard.py) checks
where this process connects.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import urllib.request
from urllib.parse import urlsplit

from ansible.module_utils.urls import open_url

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.format import BundleError, ChecksumError
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.progress import Progress
from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio, netguard
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import CHUNK
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, reason
from ansible_collections.mooring.cluster.plugins.module_utils.common.images import split_tag
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import LOOPBACK, URL_SCHEMES, proxy_variables

IMAGE_FORMATS = ("oci-archive", "docker-archive")
# Bounds on what an artifact may make the builder read: a download larger than this (or than the
# lock's ``size`` for it) is cut off and refused.
MAX_ARTIFACT = 16 << 30
URL_SHOWN = 300  # how much of a URL an error message quotes
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


def _open_file_url(url, name):
    """``(file, size)`` of a file:// source: an absolute path to a regular file, opened without blocking on
    a FIFO or device (fileio.open_regular)."""
    path = url[len("file://"):]
    if not path.startswith("/"):
        raise BundleError("artifact %s: %s: a file:// URL needs an absolute path (file:///...)"
                          % (name, excerpt(url, URL_SHOWN)))
    try:
        handle, st = fileio.open_regular(path, "artifact %s:" % name)
    except fileio.NotRegularFileError as exc:
        raise BundleError("artifact %s: %s is %s, not a regular file" % (
            name, excerpt(path), "a directory" if exc.errno == errno.EISDIR else "a special file")) from None
    except OSError as exc:
        raise BundleError("artifact %s: cannot read %s: %s" % (name, excerpt(path), exc.strerror or exc)) from None
    return handle, st.st_size


def _open_source(url, name, timeout):
    """``(readable, total bytes or 0)`` for ``url``; every failure is a BundleError naming the artifact."""
    if not isinstance(url, str) or not url.startswith(URL_SCHEMES):
        raise BundleError("artifact %s: unsupported URL %s (use %s)" % (name, excerpt(url, URL_SHOWN), ", ".join(URL_SCHEMES)))
    try:
        if url.startswith("file://"):
            return _open_file_url(url, name)
        netguard.check_url(via_proxy(url))
        source = open_url(url, timeout=timeout, http_agent="mooring.cluster-bundle")
        try:
            total = int(source.headers.get("Content-Length") or 0)
        except ValueError:
            total = 0
        return source, total
    except BundleError:
        raise
    except Exception as exc:
        raise BundleError("artifact %s: cannot fetch %s: %s" % (name, excerpt(url, URL_SHOWN), reason(exc))) from exc


def _copy(source, out, limit, name, url, progress, total):
    """Copy ``source`` to ``out`` while hashing it, refusing more than ``limit`` bytes: ``(digest, size)``."""
    digest = hashlib.sha256()
    size = 0
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
    return digest, size


def fetch(url, dest, expected_sha256, name, progress=None, counter=None, timeout=60, expected_size=None):
    """Download ``url`` to ``dest`` (https, http, file) while hashing it.

    On a mismatch nothing is left at ``dest`` and :class:`ChecksumError` names the artifact,
    the expected and the actual digest. ``expected_sha256`` None = trust on first use.
    Network reads time out after ``timeout`` seconds without data; a file:// URL must name a
    regular file (a FIFO or device is refused without a blocking read). More than
    ``expected_size`` bytes (when the lock gives one) or :data:`MAX_ARTIFACT` is refused.
    Returns ``(sha256, size)``.
    """
    progress = progress or Progress(None)
    limit = MAX_ARTIFACT if expected_size is None else min(expected_size, MAX_ARTIFACT)
    source, total = _open_source(url, name, timeout)
    if total > limit:
        source.close()
        raise BundleError("artifact %s: %s has %d bytes; at most %d are allowed (the lock's size for it, else %d); "
                          "nothing was added" % (name, excerpt(url, URL_SHOWN), total, limit, MAX_ARTIFACT))
    got = {}

    def check(_tmp):
        actual = got["digest"].hexdigest()
        if expected_sha256 and actual != expected_sha256.lower():
            raise ChecksumError("artifact %s (%s): sha256 mismatch: expected %s, got %s; nothing was added to the "
                                "bundle. Check the catalog/overlay entry or the mirror." % (name, excerpt(url, URL_SHOWN),
                                                                                            expected_sha256, actual))

    try:
        with source, fileio.atomic_output(dest, check=check) as out:
            got["digest"], got["size"] = _copy(source, out, limit, name, url, progress, total)
            if counter is not None:
                counter["bytes_read"] = counter.get("bytes_read", 0) + got["size"]
    except BundleError:
        raise
    except Exception as exc:
        raise BundleError("artifact %s: download of %s failed: %s" % (name, excerpt(url, URL_SHOWN), reason(exc))) from exc
    return got["digest"].hexdigest(), got["size"]


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
