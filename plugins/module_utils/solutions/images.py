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
import io
import json
import os
import tarfile

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.archive import open_archive
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.checksums import file_sha256
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    ANN_CONTAINERD_NAME,
    ANN_REF_NAME,
    MT_OCI_INDEX,
    OCI_LAYOUT_VERSION,
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
            blob = _oci_tar(members_of(reader, files, root, ref, img["tag"]))
            digest = hashlib.sha256(blob).hexdigest()
            fname = fileio.safe_name("%s_%s.oci.tar" % (img["name"].replace("/", "_"), img["tag"]), "image file name")
            target = fileio.under_root(dest, fname)
            if not (os.path.isfile(target) and file_sha256(target) == digest):
                changed = True
                if not check_mode:
                    fileio.write_atomic(target, blob, 0o644)
            images.append({"ref": ref, "digest": img["digest"], "file": target, "sha256": digest,
                           "name": img["name"], "tag": img["tag"]})
    finally:
        reader.close()
    return images, changed


def _content(reader, entry):
    data = io.BytesIO()
    reader.stream(entry, data)
    return data.getvalue()


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
    """{path in the tar: bytes} of the OCI layout at ``root`` (ending in /), its index.json annotated."""
    members = {}
    for path in sorted(p for p in files if p.startswith(root)):
        content = _content(reader, files[path])
        if path[len(root):] == "index.json":
            index = json.loads(content.decode("utf-8"))
            index["manifests"] = [_name(m, ref, tag) for m in index["manifests"]]
            content = _canonical(index)
        members[path[len(root):]] = content
    return members


def _dir_members(reader, files, root, ref, tag):
    """{path in the tar: bytes} of the OCI layout holding the dir: image at ``root`` (ending in /):
    manifest.json and every blob it references under blobs/sha256/, one annotated index entry."""
    raw = _content(reader, files[root + MANIFEST_FILE])
    man = json.loads(raw.decode("utf-8"))
    hexdigest = hashlib.sha256(raw).hexdigest()
    desc = {"mediaType": manifest_type(man), "digest": "sha256:" + hexdigest, "size": len(raw)}
    members = {
        "oci-layout": _canonical({"imageLayoutVersion": OCI_LAYOUT_VERSION}),
        "index.json": _canonical({"schemaVersion": 2, "mediaType": MT_OCI_INDEX, "manifests": [_name(desc, ref, tag)]}),
        "blobs/sha256/" + hexdigest: raw,
    }
    for blob in referenced_blobs(man):
        members["blobs/sha256/" + blob] = _content(reader, files[root + blob])
    return members


def _oci_tar(members):
    """A deterministic tar (sorted names, mode 0644, no times or owners) of ``members`` ({path: bytes})."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(members):
            ti = tarfile.TarInfo(rel)
            ti.size = len(members[rel])
            ti.mode = 0o644
            tar.addfile(ti, io.BytesIO(members[rel]))
    return buf.getvalue()
