# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Exporting a validated archive's images streams every blob from the archive into the OCI tar
(memory does not grow with a layer), writes the same bytes as before, and refuses an archive whose
blobs changed after it was validated."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tarfile
import tracemalloc

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import build as solution_build
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import images as solution_images
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.validate import validate_archive

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import example  # noqa: E402

LAYER = 24 << 20


def _with_big_layer(src, size=LAYER):
    """Add an uncompressed layer of ``size`` bytes to the example-app image of the source tree ``src``."""
    root = os.path.join(src, "images", "example-app", "1.0.0")
    blobs = os.path.join(root, "blobs", "sha256")
    with open(os.path.join(root, "index.json")) as f:
        index = json.load(f)
    old = index["manifests"][0]["digest"].split(":", 1)[1]
    with open(os.path.join(blobs, old)) as f:
        man = json.load(f)
    big = bytes(range(256)) * (size // 256)
    digest = hashlib.sha256(big).hexdigest()
    with open(os.path.join(blobs, digest), "wb") as f:
        f.write(big)
    man["layers"].append({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + digest, "size": size})
    os.unlink(os.path.join(blobs, old))
    raw = json.dumps(man, sort_keys=True, separators=(",", ":")).encode()
    with open(os.path.join(blobs, hashlib.sha256(raw).hexdigest()), "wb") as f:
        f.write(raw)
    index["manifests"][0].update(digest="sha256:" + hashlib.sha256(raw).hexdigest(), size=len(raw))
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump(index, f)
    return digest


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    d = tmp_path_factory.mktemp("big")
    src = example.write_source(str(d / "src"), "1.0.0")
    layer = _with_big_layer(src)
    out = str(d / "example.tar")
    solution_build.build_archive(src, out)
    return out, layer


def test_a_layer_is_streamed_not_held(big, tmp_path):
    out, layer = big
    summary = validate_archive(out)
    tracemalloc.start()
    try:
        images, changed = solution_images.export_images(out, summary, "p", str(tmp_path / "x"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert changed and peak < LAYER // 4, peak  # a 1 MiB chunk at a time, not the 24 MiB layer
    with tarfile.open(images[1]["file"]) as tar:
        data = tar.extractfile("blobs/sha256/" + layer).read()
    assert hashlib.sha256(data).hexdigest() == layer


def test_check_mode_hashes_without_writing_and_a_second_export_keeps_the_files(big, tmp_path):
    out, _layer = big
    summary = validate_archive(out)
    dest = tmp_path / "x"
    planned, changed = solution_images.export_images(out, summary, "p", str(dest), check_mode=True)
    assert changed and not dest.exists()
    written, changed = solution_images.export_images(out, summary, "p", str(dest))
    assert changed and [i["sha256"] for i in written] == [i["sha256"] for i in planned]
    stats = [os.stat(i["file"]).st_ino for i in written]
    again, changed = solution_images.export_images(out, summary, "p", str(dest))
    assert not changed and again == written and [os.stat(i["file"]).st_ino for i in again] == stats
    assert sorted(os.listdir(str(dest))) == sorted(os.path.basename(i["file"]) for i in written)  # no temporary left


def test_an_archive_changed_after_validation_is_not_exported(tmp_path):
    src = example.write_source(str(tmp_path / "src"), "1.0.0")
    out = str(tmp_path / "example.tar")
    summary = solution_build.build_archive(src, out)
    with open(out, "rb") as f:
        data = f.read()
    layer = next(d for d in summary["images"] if d["name"] == "example-app")
    # flip one byte of the app image's layer (same size): the checksum file no longer matches, the export must notice
    with tarfile.open(out) as tar:
        member = next(m for m in tar.getmembers() if m.name.startswith("images/example-app/1.0.0/blobs/") and m.size > 200)
    data = bytearray(data)
    data[member.offset_data + 100] ^= 1
    with open(out, "wb") as f:
        f.write(bytes(data))
    with pytest.raises(SolutionError, match=r"%s: changed since the archive was validated" % member.name):
        solution_images.export_images(out, summary, "p", str(tmp_path / "x"))
    assert not [n for n in os.listdir(str(tmp_path / "x")) if layer["name"] in n]
