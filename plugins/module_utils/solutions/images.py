# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: exporting a validated solution archive's images for containerd.

Each image becomes one deterministic OCI archive tar named
``<prefix>/<name>-<version>/<image>:<tag>``, ready for ``ctr images import`` (common/ctr.py).
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
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import ANN_CONTAINERD_NAME, ANN_REF_NAME, safe_path

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

    Each tar is the image's OCI layout with ``index.json`` annotated so that
    ``ctr images import`` names the image ``<prefix>/<name>-<version>/<image>:<tag>``.
    Tars are deterministic; one already present with the same content is kept.
    Returns ``(images, changed)`` with images a list of dicts (ref, digest, file, sha256).
    In ``check_mode`` nothing is written; ``changed`` says whether something would be.
    """
    name, version = summary["name"], summary["version"]
    fileio.safe_name("%s-%s" % (name, version), "solution name and version")
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
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for path in sorted(p for p in files if p.startswith(root)):
                    rel = path[len(root):]
                    data = io.BytesIO()
                    reader.stream(files[path], data)
                    content = data.getvalue()
                    if rel == "index.json":
                        index = json.loads(content.decode("utf-8"))
                        for m in index["manifests"]:
                            ann = dict(m.get("annotations") or {})
                            ann[ANN_CONTAINERD_NAME] = ref
                            ann[ANN_REF_NAME] = img["tag"]
                            m["annotations"] = ann
                        content = json.dumps(index, sort_keys=True, separators=(",", ":")).encode("utf-8")
                    ti = tarfile.TarInfo(rel)
                    ti.size = len(content)
                    ti.mode = 0o644
                    tar.addfile(ti, io.BytesIO(content))
            blob = buf.getvalue()
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
