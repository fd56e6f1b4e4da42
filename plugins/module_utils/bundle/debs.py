# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: host (Debian) packages in a bundle: control fields, a flat apt repository index,
and downloading a set of packages with every dependency an air-gapped host may lack (the controller's apt).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import lzma
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import zlib

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.format import BundleError
from ansible_collections.mooring.cluster.plugins.module_utils.common import tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, reason

MAX_DEB_CONTROL = 16 << 20  # a .deb's control archive is small


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
        raise BundleError("%s: not a readable Debian package (%s)" % (label, reason(exc))) from None
    raise BundleError("%s: no control file found in the package" % label)


def deb_fields(control_text):
    """The fields of a control paragraph (continuation lines left out): ``{name: value}``."""
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
    """``Release`` text of the flat repository whose ``Packages`` index is ``packages_text``."""
    data = packages_text.encode("utf-8")
    return ("Origin: mooring.cluster\nLabel: mooring bundle\nSuite: bundle\nCodename: bundle\n"
            "Date: Thu, 01 Jan 1970 00:00:00 UTC\n"
            "SHA256:\n %s %d Packages\n" % (hashlib.sha256(data).hexdigest(), len(data)))


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


def apt_download(names, dest_dir):
    """Fetch Debian packages by name with the controller's apt (signed archive metadata)."""
    if not shutil.which("apt-get"):
        raise BundleError("host packages %s: no deb artifact provides them and this controller has no apt-get; "
                          "add them to the catalog overlay as kind: deb artifacts" % ", ".join(names))
    closure = apt_closure(names)
    proc = subprocess.run(["apt-get", "-q", "-o", "APT::Sandbox::User=root", "download"] + closure,
                          cwd=dest_dir, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BundleError("host packages %s: apt-get download failed: %s" % (", ".join(names), proc.stderr.strip()))
