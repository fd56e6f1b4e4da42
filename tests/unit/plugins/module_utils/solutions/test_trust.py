# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Trust anchors of a solution archive (solutions/trust.py), with real files."""

from __future__ import annotations

import hashlib
import os

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import trust
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError


@pytest.fixture()
def iso(tmp_path):
    path = tmp_path / "example-solution-1.0.0.iso"
    path.write_bytes(b"an ISO's bytes")
    return str(path), hashlib.sha256(b"an ISO's bytes").hexdigest()


def test_a_sha256sum_beside_the_archive_trusts_it(iso):
    path, digest = iso
    sums = os.path.join(os.path.dirname(path), "SHA256SUM")
    with open(sums, "w") as f:
        f.write("%s  %s\n" % (digest, os.path.basename(path)))
    assert trust.decide(path, digest, False) == {"kind": "sha256sum", "detail": sums}


def test_a_changed_archive_is_refused(iso):
    path, digest = iso
    with open(os.path.join(os.path.dirname(path), "SHA256SUM"), "w") as f:
        f.write("%s  %s\n" % ("0" * 64, os.path.basename(path)))
    with pytest.raises(SolutionError, match="the archive changed after its checksum was made"):
        trust.decide(path, digest, False)


def test_a_sidecar_for_other_files_is_no_anchor(iso):
    path, digest = iso
    with open(os.path.join(os.path.dirname(path), "SHA256SUM"), "w") as f:
        f.write("%s  other.iso\n" % digest)
    assert trust.decide(path, digest, False) is None


def test_a_named_sums_file_must_list_the_archive(iso, tmp_path):
    path, digest = iso
    named = tmp_path / "sums.txt"
    named.write_text("%s  ./build/%s\n" % (digest, os.path.basename(path)))
    assert trust.decide(path, digest, False, sums_path=str(named))["kind"] == "sha256sum"
    named.write_text("%s  other.iso\n" % digest)
    with pytest.raises(SolutionError, match="does not list example-solution-1.0.0.iso"):
        trust.decide(path, digest, False, sums_path=str(named))


def test_named_trust(iso):
    path, digest = iso
    assert trust.decide(path, digest, False, trusted_sha256=digest)["kind"] == "named"
    with pytest.raises(SolutionError, match="not the trusted"):
        trust.decide(path, digest, False, trusted_sha256="1" * 64)
    with pytest.raises(SolutionError, match="64 lowercase hex"):
        trust.decide(path, digest, False, trusted_sha256="XYZ")


def test_a_verified_signature_comes_first(iso):
    path, digest = iso
    assert trust.decide(path, digest, True, trusted_sha256=digest)["kind"] == "signature"
    assert trust.decide(path, digest, False) is None


@pytest.mark.parametrize("content,match", [
    (b"not a sum line\n", "line 1: must be"),
    (b"\xff\xfe", "not UTF-8"),
    (b"a" * (trust.MAX_SIDECAR_BYTES + 1), "limit"),
])
def test_a_bad_sums_file_is_refused(iso, content, match):
    path, digest = iso
    with open(os.path.join(os.path.dirname(path), "SHA256SUM"), "wb") as f:
        f.write(content)
    with pytest.raises(SolutionError, match=match):
        trust.decide(path, digest, False)
    assert trust.decide(path, digest, False, sidecar=False) is None  # not read when not wanted


def test_a_fifo_named_as_sums_file_is_refused_without_blocking(iso, tmp_path):
    path, digest = iso
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(SolutionError, match="fifo"):
        trust.decide(path, digest, False, sums_path=str(fifo))
