# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: skopeo ``dir:`` images, the image format of a MetalK8s solution archive.

A MetalK8s archive holds each image as ``images/<name>/<tag>/`` in the format ``skopeo copy ...
dir:PATH`` writes: ``version`` (``Directory Transport Version: 1.<minor>`` and a newline),
``manifest.json`` (one image's manifest: docker schema 2 or OCI) and every blob it references
(config, layers) as a file named by its bare hex sha256. The image's digest is the sha256 of
``manifest.json``'s bytes, as for an OCI layout's manifest blob (bounded like any JSON of an archive:
:data:`layout.MAX_JSON_BYTES`).

:class:`DirImageChecks` is the part of :class:`solutions.oci.ImageChecks` that checks one such
directory; the pure functions here say which files belong to which image.
"""


from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    DIGEST,
    INDEX_TYPES,
    MANIFEST_TYPES,
    MT_OCI_MANIFEST,
)

METALK8S = "metalk8s"
VERSION_FILE = "version"
MANIFEST_FILE = "manifest.json"
MAX_VERSION_BYTES = 64
VERSION_RE = re.compile(rb"^Directory Transport Version: 1\.[0-9]+\n\Z")


def dir_blob_path(root, hexdigest):
    """Where a dir: image at ``root`` keeps the blob ``hexdigest``: ``<root>/<hex>``."""
    return "%s/%s" % (root, hexdigest)


def dir_image_key(path):
    """(name, tag) of the dir: image the file ``path`` (under images/) belongs to, or None.

    A MetalK8s image directory is ``images/<name>/<tag>/`` (the name is one path component) and
    holds files only, so a file belongs to an image exactly when its path has four parts."""
    parts = path.split("/")
    if len(parts) != 4 or parts[0] != "images" or not all(parts):
        return None
    return parts[1], parts[2]


def image_dirs(paths):
    """The (name, tag) of every ``images/<name>/<tag>/`` directory holding a file, sorted.

    ``paths`` are the archive's regular files (paths relative to its root); what MetalK8s lists
    as the solution's images when its manifest.yaml has no spec.images."""
    return sorted({key for key in (dir_image_key(p) for p in paths) if key is not None})


def image_flavour(paths):
    """``"metalk8s"`` when the files under images/ are dir: images (a manifest.json or version, no
    OCI layout's index.json or oci-layout), else ``"mooring"``."""
    names = {p.rsplit("/", 1)[-1] for p in paths if p.startswith("images/")}
    if names & {"index.json", "oci-layout"}:
        return "mooring"
    return METALK8S if names & {MANIFEST_FILE, VERSION_FILE} else "mooring"


def manifest_type(man):
    """The media type of the image manifest ``man`` (an OCI manifest may leave it out)."""
    return man.get("mediaType") or MT_OCI_MANIFEST


def referenced_blobs(man):
    """The bare hex digests the image manifest ``man`` references (config, then layers), once each."""
    descs = [man.get("config")] + (man.get("layers") if isinstance(man.get("layers"), list) else [])
    found = []
    for desc in descs:
        digest = desc.get("digest") if isinstance(desc, dict) else None
        m = DIGEST.match(digest) if isinstance(digest, str) else None
        if m and m.group(1) not in found:
            found.append(m.group(1))
    return found


class DirImageChecks:
    """One skopeo dir: image is complete: its version file, a single-image manifest.json, every blob
    with its size and digest, nothing else.

    A part of :class:`solutions.oci.ImageChecks`, which gives it ``json_file``, ``blob`` and
    ``image_manifest``; the validation gives ``files``, ``read``, ``digest`` and ``bad``."""

    dir_unexpected = "unexpected file under images/ (expected images/<name>/<tag>/ directories in skopeo's dir: format)"

    def dir_image(self, root):
        """Check the dir: image at ``root`` (``images/<name>/<tag>``); ``"sha256:<hex of manifest.json>"`` or None."""
        ok = self.dir_version(root + "/" + VERSION_FILE)
        path = root + "/" + MANIFEST_FILE
        man = self.json_file(path)
        if isinstance(man, dict):
            if man.get("mediaType") in INDEX_TYPES or "manifests" in man:
                self.bad(path, "a manifest list (image index) is not a dir: image; copy one platform "
                               "(as `skopeo copy --format v2s2` does)")
                return None
            if manifest_type(man) not in MANIFEST_TYPES:
                self.bad(path, "mediaType %s is not one of %s" % (excerpt(man.get("mediaType")), ", ".join(MANIFEST_TYPES)))
                return None
            ok = self.dir_extra(root, man) and ok
        if not self.image_manifest(root, path, man, dir_blob_path) or not ok:
            return None
        return "sha256:" + self.digest(path)

    def dir_version(self, path):
        """The dir: transport's version file: ``Directory Transport Version: 1.<digits>`` and a newline."""
        if path not in self.files:
            self.bad(path, "missing; a dir: image has a version file (Directory Transport Version: 1.1)")
            return False
        raw = self.read(path, MAX_VERSION_BYTES)
        if raw is None:
            return False
        if not VERSION_RE.match(raw):
            self.bad(path, "must be 'Directory Transport Version: 1.<digits>' and a newline, not %s"
                     % excerpt(raw.decode("utf-8", "replace"), 80))
            return False
        return True

    def dir_extra(self, root, man):
        """Every file of the directory that is not version, manifest.json or a blob ``man`` references is
        refused; True when there is none."""
        known = {VERSION_FILE, MANIFEST_FILE} | set(referenced_blobs(man))
        prefix = root + "/"
        extra = [p for p in sorted(self.files) if p.startswith(prefix) and p[len(prefix):] not in known]
        for path in extra:
            self.bad(path, "not referenced by %s%s (a dir: image holds version, manifest.json and its blobs only)"
                     % (prefix, MANIFEST_FILE))
        return not extra
