# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: exporting a validated solution archive's images for containerd.

Each image becomes one deterministic OCI archive tar named
``<prefix>/<name>-<version>/<image>:<tag>``, ready for ``ctr images import`` (common/ctr.py): a
mooring archive's OCI layout as it is, a MetalK8s archive's skopeo dir: image
(:mod:`solutions.skopeodir`) as the OCI layout holding the same manifest and blobs.
"""


from __future__ import annotations

import hashlib
import json
import os
import tarfile

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import HashingWriter
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.archive import open_archive
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.checksums import file_sha256
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    ANN_CONTAINERD_NAME,
    ANN_REF_NAME,
    MAX_JSON_BYTES,
    MT_OCI_INDEX,
    OCI_LAYOUT_VERSION,
    SolutionError,
    safe_path,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.skopeodir import (
    MANIFEST_FILE,
    METALK8S,
    manifest_type,
    referenced_blobs,
)

# ---------------------------------------------------------------------------------------
# Export images for containerd (after validation)
# ---------------------------------------------------------------------------------------


def repository(prefix, name, version):
    """The repository of a solution version: ``<prefix>/<name>-<version>``."""
    return "%s/%s-%s" % (prefix.rstrip("/"), name, version)


def image_ref(prefix, name, version, image, tag):
    return "%s/%s:%s" % (repository(prefix, name, version), image, tag)


def export_images(archive_path, summary, prefix, dest, check_mode=False):
    """Write one OCI archive tar per image of a *validated* archive into ``dest``.

    Each tar is the image as an OCI layout (a mooring archive's layout as it is, a MetalK8s
    archive's dir: image turned into one) with ``index.json`` annotated so that
    ``ctr images import`` names the image ``<prefix>/<name>-<version>/<image>:<tag>``.
    Tars are deterministic; one already present with the same content is kept.
    Returns ``(images, changed)`` with images a list of dicts (ref, digest, file, sha256).
    In ``check_mode`` nothing is written; ``changed`` says whether something would be.

    Blobs are streamed from the archive into the tar (a temporary file beside the target,
    renamed into place only when its content differs), never held in memory; each is checked
    again against its size and digest on the way, so an archive changed after its validation
    is refused rather than exported.
    """
    name, version = summary["name"], summary["version"]
    fileio.safe_name("%s-%s" % (name, version), "solution name and version")
    members_of = _dir_members if summary.get("flavour", "mooring") == METALK8S else _layout_members
    if not check_mode:
        os.makedirs(dest, exist_ok=True)
    reader = open_archive(archive_path)
    images, changed = [], False
    try:
        files = {}
        for e in reader.entries:
            path, problem = safe_path(e.path)
            if not problem and e.kind == "file":
                files[path] = e
        for img in summary["images"]:
            root = "images/%s/%s/" % (img["name"], img["tag"])
            ref = image_ref(prefix, name, version, img["name"], img["tag"])
            members = members_of(reader, files, root, ref, img["tag"])
            fname = fileio.safe_name("%s_%s.oci.tar" % (img["name"].replace("/", "_"), img["tag"]), "image file name")
            target = fileio.under_root(dest, fname)
            digest, wrote = _export_tar(reader, members, target, check_mode)
            changed = changed or wrote
            images.append({"ref": ref, "digest": img["digest"], "file": target, "sha256": digest,
                           "name": img["name"], "tag": img["tag"]})
    finally:
        reader.close()
    return images, changed


class _Same(Exception):
    """The tar just written is the file already in place: that one is kept."""


def _export_tar(reader, members, target, check_mode):
    """``(sha256 hex, changed)`` of the OCI tar of ``members`` at ``target``; in ``check_mode`` only hashed."""
    old = file_sha256(target) if os.path.isfile(target) else None
    if check_mode:
        out = HashingWriter()
        _write_tar(reader, members, out)
        return out.hexdigest(), out.hexdigest() != old
    written = {}

    def keep_old(_tmp):
        if written["digest"] == old:
            raise _Same()

    try:
        with fileio.atomic_output(target, 0o644, check=keep_old) as handle:
            out = HashingWriter(handle)
            _write_tar(reader, members, out)
            written["digest"] = out.hexdigest()
    except _Same:
        return old, False
    return written["digest"], True


def _small(reader, entry):
    """The bytes of a small member (index.json, manifest.json), bounded as validation bounds them."""
    out = HashingWriter(limit=MAX_JSON_BYTES)
    reader.stream(entry, out)
    if out.size > MAX_JSON_BYTES:
        raise SolutionError("%s: %d bytes, more than the limit of %d; validate the archive again" % (entry.path, out.size, MAX_JSON_BYTES))
    return out.buf.getvalue()


def _canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _name(desc, ref, tag):
    """The index descriptor ``desc`` annotated with the image's name for containerd and its tag."""
    ann = dict(desc.get("annotations") or {})
    ann[ANN_CONTAINERD_NAME] = ref
    ann[ANN_REF_NAME] = tag
    desc["annotations"] = ann
    return desc


def _layout_members(reader, files, root, ref, tag):
    """``{path in the tar: bytes or an archive Entry}`` of the OCI layout at ``root`` (ending in /),
    its index.json annotated."""
    members = {}
    for path in sorted(p for p in files if p.startswith(root)):
        if path[len(root):] == "index.json":
            index = json.loads(_small(reader, files[path]).decode("utf-8"))
            index["manifests"] = [_name(m, ref, tag) for m in index["manifests"]]
            members["index.json"] = _canonical(index)
        else:
            members[path[len(root):]] = files[path]
    return members


def _dir_members(reader, files, root, ref, tag):
    """``{path in the tar: bytes or an archive Entry}`` of the OCI layout holding the dir: image at
    ``root`` (ending in /): manifest.json and every blob it references under blobs/sha256/, one
    annotated index entry."""
    raw = _small(reader, files[root + MANIFEST_FILE])
    man = json.loads(raw.decode("utf-8"))
    hexdigest = hashlib.sha256(raw).hexdigest()
    desc = {"mediaType": manifest_type(man), "digest": "sha256:" + hexdigest, "size": len(raw)}
    members = {
        "oci-layout": _canonical({"imageLayoutVersion": OCI_LAYOUT_VERSION}),
        "index.json": _canonical({"schemaVersion": 2, "mediaType": MT_OCI_INDEX, "manifests": [_name(desc, ref, tag)]}),
        "blobs/sha256/" + hexdigest: raw,
    }
    for blob in referenced_blobs(man):
        members["blobs/sha256/" + blob] = files[root + blob]
    return members


def _write_tar(reader, members, out):
    """A deterministic tar (sorted names, mode 0644, no times or owners; as :mod:`tarfile` writes
    it in PAX format) of ``members`` written to ``out``: bytes as they are, an archive Entry
    streamed from ``reader`` and checked against its size and, under ``blobs/sha256/``, its digest."""
    offset = 0
    for rel in sorted(members):
        content = members[rel]
        info = tarfile.TarInfo(rel)
        info.size = len(content) if isinstance(content, bytes) else content.size
        info.mode = 0o644
        header = info.tobuf(tarfile.PAX_FORMAT, tarfile.ENCODING, "surrogateescape")
        out.write(header)
        if isinstance(content, bytes):
            out.write(content)
        else:
            _stream_checked(reader, content, rel, out)
        pad = -info.size % tarfile.BLOCKSIZE
        out.write(tarfile.NUL * pad)
        offset += len(header) + info.size + pad
    end = tarfile.NUL * (2 * tarfile.BLOCKSIZE)
    offset += len(end)
    out.write(end + tarfile.NUL * (-offset % tarfile.RECORDSIZE))


def _stream_checked(reader, entry, rel, out):
    """Stream ``entry`` to ``out``: exactly its size, and a blob's content matching its name."""
    check = HashingWriter(out)
    reader.stream(entry, check)
    blob = rel[len("blobs/sha256/"):] if rel.startswith("blobs/sha256/") else None
    if check.size != entry.size or (blob is not None and check.hexdigest() != blob):
        raise SolutionError("%s: changed since the archive was validated (%d bytes, sha256 %s); validate it again"
                            % (entry.path, check.size, check.hexdigest()))
