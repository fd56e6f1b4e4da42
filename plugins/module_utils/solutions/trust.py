# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: why a solution archive is trusted.

An archive is trusted by one of three anchors, recorded with its import:

``signature``
    mooring's own archives: ``SHA256SUMS.sig`` verifies with the administrator's public key
    (checked by :mod:`solutions.validate`).
``sha256sum``
    MetalK8s's way: a ``SHA256SUM`` file (``sha256sum``'s output) beside the archive, or named
    with ``--sha256sum``, lists the archive's name with the archive's SHA-256.
``named``
    the administrator names the archive's SHA-256 as trusted (``--trusted-sha256``).

A checksum file that lists the archive with another digest, or a named digest that is not the
archive's, refuses the archive: it changed after it was vouched for. Files read here are
bounded and must be regular files.
"""


from __future__ import annotations

import os
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError

SIDECAR = "SHA256SUM"
MAX_SIDECAR_BYTES = 1024 * 1024
_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")
_HEX = re.compile(r"^[0-9a-f]{64}\Z")


def read_sidecar(archive_path, sums_path=None):
    """(sums file path, the digest it lists for the archive or None), or (None, None).

    Without ``sums_path`` the ``SHA256SUM`` beside the archive is read when it exists. A line
    names the archive by its file name (a path in the line is compared by its last part)."""
    explicit = sums_path is not None
    if sums_path is None:
        sums_path = os.path.join(os.path.dirname(os.path.abspath(archive_path)), SIDECAR)
        if not os.path.lexists(sums_path):
            return None, None
    try:
        raw = fileio.read_regular(sums_path, MAX_SIDECAR_BYTES, "checksum file")
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SolutionError("%s: not UTF-8 text; expected sha256sum's output" % sums_path) from None
    except OSError as exc:
        if not explicit and isinstance(exc, FileNotFoundError):
            return None, None
        raise SolutionError("%s: %s" % (sums_path, getattr(exc, "strerror", None) or exc)) from None
    name = os.path.basename(archive_path)
    found = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            raise SolutionError("%s: line %d: must be '<64 hex>  <file name>', not %s" % (sums_path, n, excerpt(line)))
        if m.group(2).replace("\\", "/").rsplit("/", 1)[-1] == name:
            digest = m.group(1).lower()
            if found is not None and found != digest:
                raise SolutionError("%s: %s is listed twice with different digests" % (sums_path, name))
            found = digest
    return sums_path, found


def decide(archive_path, archive_sha256, signature_verified, sums_path=None, trusted_sha256=None, sidecar=True):
    """``{"kind", "detail"}`` of the anchor that trusts the archive, or None when none does.

    Raises :class:`SolutionError` when an anchor contradicts the archive (its digest differs).
    ``sidecar=False``: no checksum file is read (only the signature can trust the archive)."""
    if trusted_sha256 is not None and not _HEX.match(trusted_sha256 or ""):
        raise SolutionError("trusted sha256: must be 64 lowercase hex digits, not %s" % excerpt(trusted_sha256))
    if trusted_sha256 is not None and trusted_sha256 != archive_sha256:
        raise SolutionError("sha256 is %s, not the trusted %s" % (archive_sha256, trusted_sha256))
    sums_file, listed = read_sidecar(archive_path, sums_path) if sidecar else (None, None)
    if sums_file is not None and listed is None and sums_path is not None:
        raise SolutionError("%s: does not list %s" % (sums_file, os.path.basename(archive_path)))
    if listed is not None and listed != archive_sha256:
        raise SolutionError("sha256 is %s, but %s lists %s: the archive changed after its checksum was made"
                            % (archive_sha256, sums_file, listed))
    if signature_verified:
        return {"kind": "signature", "detail": "SHA256SUMS.sig verified with the given public key"}
    if listed is not None:
        return {"kind": "sha256sum", "detail": sums_file}
    if trusted_sha256 is not None:
        return {"kind": "named", "detail": "sha256 %s named as trusted" % trusted_sha256}
    return None


NO_ANCHOR = ("no trust anchor: the archive is not signed with a given public key, no SHA256SUM beside it "
             "(or --sha256sum FILE) lists it, and its sha256 %s is not named as trusted (--trusted-sha256)")
