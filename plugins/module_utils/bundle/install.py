# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: install upstream artifacts on a host from the bundle's record.

Host side, standard library only. The input is the ``installs`` list of an unpacked bundle
(``bundle_unpack``'s summary): per artifact its path in the unpacked bundle, and per file the
archive member (or none for a bare binary), the destination, the mode and the sha256 the
controller recorded in the signed manifest. Nothing here interprets archive layouts.

Decide, then act: a file is written only when the destination's content or mode differs;
each write streams into a temporary file next to the destination, checks the sha256, and
renames it into place. After installing, each binary's own version is asked for and compared
with the version the lock names.
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
import os
import re
import tarfile
import zlib

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio, tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

ARCH = {"x86_64": "amd64", "aarch64": "arm64", "ppc64le": "ppc64le", "s390x": "s390x"}
_VERSION = re.compile(r"(?:^|[\s:\"])v?([0-9]+\.[0-9]+\.[0-9]+)")


class InstallError(MooringError):
    """An artifact could not be installed as the bundle records it."""


def host_arch(machine=None):
    machine = machine or os.uname().machine
    return ARCH.get(machine, machine)


def select(installs, names=None, addons=None, arch=None):
    """The install entries for ``names`` (artifact names) / ``addons`` on ``arch`` (and 'all')."""
    out = []
    for entry in installs or []:
        if names and entry.get("name") not in names:
            continue
        if addons and entry.get("addon") not in addons:
            continue
        if arch and entry.get("arch") not in (arch, "all", None):
            continue
        out.append(entry)
    return out


def file_state(dest, want_sha, want_mode, want_size=None):
    """'ok', 'content' (missing or different bytes) or 'mode' for one destination."""
    try:
        st = os.lstat(dest)
    except FileNotFoundError:
        return "content"
    if not os.path.isfile(dest) or os.path.islink(dest):
        return "content"
    if (want_size is not None and st.st_size != want_size) or sha256_file(dest)[0] != want_sha:
        return "content"
    if (st.st_mode & 0o7777) != int(want_mode, 8):
        return "mode"
    return "ok"


def plan(entries):
    """``[(entry, file, state)]`` for every file whose state is not 'ok'."""
    todo = []
    for entry in entries:
        for f in entry.get("files") or []:
            state = file_state(f["dest"], f["sha256"], f.get("mode") or "0755", f.get("size"))
            if state != "ok":
                todo.append((entry, f, state))
    return todo


def _write_stream(source, dest, want_sha, mode):
    """Write ``source`` to ``dest`` in one rename (fileio.atomic_output, ``mode`` set first) when its sha256 is ``want_sha``."""
    os.makedirs(os.path.dirname(dest), mode=0o755, exist_ok=True)
    h = hashlib.sha256()

    def check(_tmp):
        if h.hexdigest() != want_sha:
            raise InstallError("%s: the bundle's content has sha256 %s, the signed manifest says %s; not installed"
                               % (dest, h.hexdigest(), want_sha))

    with fileio.atomic_output(dest, int(mode, 8), check) as out:
        for chunk in iter(lambda: source.read(1 << 20), b""):
            h.update(chunk)
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())


# What a truncated or corrupted archive raises while it is read: the tar layer, then each compression's.
DAMAGED = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError)


def _extract_member(archives, path, f):
    """Write member ``f["member"]`` of the release archive at ``path`` to ``f["dest"]`` (hash checked);
    ``archives`` caches the open archives by path (closed by the caller)."""
    tar = archives.get(path)
    try:
        if tar is None:  # every header measured before tarfile reads what it announces
            tar = archives[path] = tarsafe.open_tar(path, "r:*")  # noqa: SIM115 - closed by apply
        member = tar.getmember(f["member"])
    except KeyError:
        raise InstallError("%s: member %s is not in the archive" % (path, f["member"])) from None
    except tarsafe.HeaderBoundError as exc:
        raise InstallError("%s: %s; refusing the archive" % (path, exc)) from None
    if not member.isfile():
        raise InstallError("%s: member %s is not a regular file" % (path, f["member"]))
    _write_stream(tar.extractfile(member), f["dest"], f["sha256"], f.get("mode") or "0755")


def apply(todo):
    """Write what :func:`plan` found; returns the destinations written."""
    written = []
    archives = {}
    try:
        for entry, f, state in todo:
            if state == "mode":
                os.chmod(f["dest"], int(f.get("mode") or "0755", 8))
            elif f.get("member") is None:
                with open(entry["path"], "rb") as source:
                    _write_stream(source, f["dest"], f["sha256"], f.get("mode") or "0755")
            else:
                try:
                    _extract_member(archives, entry["path"], f)
                except DAMAGED as exc:
                    raise InstallError("%s: the archive is damaged (%s: %s); refusing it. Build the bundle again from "
                                       "the lock" % (entry["path"], type(exc).__name__, exc)) from None
            written.append(f["dest"])
    finally:
        for tar in archives.values():
            tar.close()
    return written


def reported_version(output):
    m = _VERSION.search(output or "")
    return m.group(1) if m else None


def check_versions(entries, run):
    """Ask every installed binary for its version. ``run(argv) -> (rc, out, err)``.

    Returns ``({binary: version}, [problem, ...])``."""
    versions = {}
    problems = []
    for entry in entries:
        for check in entry.get("check") or []:
            rc, out, err = run(check["argv"])
            got = reported_version("%s\n%s" % (out, err)) if rc == 0 else None
            name = os.path.basename(check["binary"])
            versions[name] = got
            if rc != 0:
                problems.append("%s: `%s` exited %s: %s" % (name, " ".join(check["argv"]), rc,
                                                            (err or out or "").strip()[:300]))
            elif check.get("version") and got != check["version"]:
                problems.append("%s reports version %s, the lock says %s (%s)"
                                % (name, got, check["version"], ((out or err).strip().splitlines() or ['(no output)'])[0][:200]))
    return versions, problems


def install(bundle, names, run, optional=(), arch=None, versions=True, running_unit=None, host=None,
            check_mode=False):
    """Plan, apply and check ``names`` from an unpacked bundle's summary: the one path every binary takes.

    ``run(argv) -> (rc, out, err)``. Returns ``(result, problems)``: ``result`` has ``installed`` (destinations
    written, or that would be in check mode), ``versions``, ``artifacts`` and ``absent``; ``problems`` are the
    version mismatches (the caller fails with the result). Raises :class:`InstallError` before writing anything
    for a name the bundle lacks or a running unit whose binaries would be swapped."""
    arch = arch or host_arch()
    entries = select(bundle.get("installs"), names=names, arch=arch)
    present = {e["name"] for e in entries}
    missing = [n for n in names if n not in present and n not in optional]
    if missing:
        raise InstallError("the bundle %s carries no %s for %s: build it from a lock that lists %s"
                           % (bundle.get("id", "?"), ", ".join(missing), arch, ", ".join(missing)))
    todo = plan(entries)
    # Swapping is replacing a binary that is there with other bytes; a missing file is restored.
    swapped = [f["dest"] for _e, f, state in todo if state == "content" and os.path.lexists(f["dest"])]
    if running_unit and swapped and run(["systemctl", "is-active", "--quiet", running_unit])[0] == 0:
        raise InstallError("%s: %s is running and the bundle has other binaries for it (%s); nothing was installed "
                           "or restarted. Run mooring.cluster.upgrade with this lock and bundle to replace them one "
                           "host at a time (drain, restart, gate)."
                           % (host or os.uname().nodename, running_unit, ", ".join(swapped)))
    if not check_mode:
        apply(todo)
    found, problems = {}, []
    if versions and not (check_mode and todo):
        found, problems = check_versions(entries, run)
    result = dict(installed=[f["dest"] for _e, f, _s in todo], versions=found,
                  artifacts=[{"name": e["name"], "version": e.get("version"), "addon": e.get("addon"),
                              "files": [f["dest"] for f in e.get("files") or []]} for e in entries],
                  absent=sorted(n for n in names if n not in present))
    return result, problems
