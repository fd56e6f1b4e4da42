# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the images of a solution archive (images/<name>/<tag>/).

:class:`ImageChecks` is a part of the archive validation (:mod:`solutions.validate`): each image of
spec.images is complete and every blob is present with its size and digest. A mooring archive
holds OCI image layouts (checked here); a MetalK8s one skopeo ``dir:`` images
(:class:`solutions.skopeodir.DirImageChecks`, which this class extends).
"""


from __future__ import annotations

import json

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    CONFIG_TYPES,
    DIGEST,
    INDEX_TYPES,
    MANIFEST_TYPES,
    MAX_INDEX_DEPTH,
    MAX_JSON_BYTES,
    OCI_LAYOUT_VERSION,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.manifest import image_dir_problem
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.skopeodir import (
    METALK8S,
    DirImageChecks,
    dir_image_key,
    image_flavour,
)

_OCI_UNEXPECTED = "unexpected file under images/ (expected images/<name>/<tag>/ OCI layouts)"


def oci_blob_path(root, hexdigest):
    """Where an OCI image layout at ``root`` keeps the blob ``hexdigest``."""
    return "%s/blobs/sha256/%s" % (root, hexdigest)


def oci_layout_key(path):
    """(name, tag) of the OCI layout ``path`` (a file under images/) belongs to, or None when it belongs to none."""
    rest = path[len("images/"):]
    if "/blobs/" in rest:
        key = rest[:rest.find("/blobs/")]
    elif rest.endswith("/index.json") or rest.endswith("/oci-layout"):
        key = rest.rsplit("/", 1)[0]
    else:
        return None
    if "/" not in key:
        return None
    name, tag = key.rsplit("/", 1)
    return name, tag


class ImageChecks(DirImageChecks):
    """Each image of spec.images is complete (an OCI layout, or a skopeo dir: image in a MetalK8s
    archive) and its every blob matches its digest.

    A part of :class:`solutions.validate._Validation`: it uses the archive's members (``files``,
    ``read``, ``digest``) and reports with ``bad``."""

    def json_file(self, path):
        if path not in self.files:
            self.bad(path, "missing")
            return None
        raw = self.read(path, MAX_JSON_BYTES)
        if raw is None:
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self.bad(path, "not valid JSON: %s" % excerpt(str(exc), 200))
            return None
        except RecursionError:
            self.bad(path, "not valid JSON: nested too deeply")
            return None

    def blob(self, root, desc, where, allowed_types, path_of=oci_blob_path):
        """Check a descriptor: its blob (at ``path_of(root, hex)``) exists with that size and digest. Returns the blob path."""
        if not isinstance(desc, dict):
            self.bad(where[0], "%s: a descriptor must be a mapping" % where[1])
            return None
        mt, digest, size = desc.get("mediaType"), desc.get("digest"), desc.get("size")
        if allowed_types is not None and mt not in allowed_types:
            self.bad(where[0], "%s: mediaType %s is not one of %s" % (where[1], excerpt(mt), ", ".join(allowed_types)))
            return None
        m = DIGEST.match(digest) if isinstance(digest, str) else None
        if not m:
            self.bad(where[0], "%s: digest %s is not sha256:<64 hex>" % (where[1], excerpt(digest)))
            return None
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            self.bad(where[0], "%s: size %s is not a non-negative integer" % (where[1], excerpt(size)))
            return None
        path = path_of(root, m.group(1))
        if path not in self.files:
            self.bad(path, "blob referenced by %s (%s) is missing" % (where[0], where[1]))
            return None
        if self.files[path].size != size:
            self.bad(path, "size is %d, the descriptor in %s says %d" % (self.files[path].size, where[0], size))
            return None
        if self.digest(path) != m.group(1):
            self.bad(path, "content does not match its digest (sha256 is %s)" % self.digest(path))
            return None
        return path

    def oci_manifest(self, root, desc, where, depth):
        mt = desc.get("mediaType") if isinstance(desc, dict) else None
        if mt in INDEX_TYPES:
            if depth >= MAX_INDEX_DEPTH:
                self.bad(where[0], "%s: image indexes nested deeper than %d" % (where[1], MAX_INDEX_DEPTH))
                return False
            path = self.blob(root, desc, where, INDEX_TYPES)
            if path is None:
                return False
            index = self.json_file(path)
            return self.oci_index(root, index, path, depth + 1)
        path = self.blob(root, desc, where, MANIFEST_TYPES)
        if path is None:
            return False
        return self.image_manifest(root, path, self.json_file(path))

    def image_manifest(self, root, path, man, path_of=oci_blob_path):
        """The image manifest ``man`` read from ``path``: schemaVersion 2, a config with architecture and os,
        every layer present (blobs at ``path_of(root, hex)``). True when all is well."""
        if not isinstance(man, dict):
            if man is not None:
                self.bad(path, "an image manifest must be a JSON object")
            return False
        if man.get("schemaVersion") != 2:
            self.bad(path, "schemaVersion must be 2")
            return False
        ok = True
        cfg = self.blob(root, man.get("config"), (path, "config"), CONFIG_TYPES, path_of)
        if cfg is None:
            ok = False
        else:
            config = self.json_file(cfg)
            if not isinstance(config, dict) or not config.get("architecture") or not config.get("os"):
                self.bad(cfg, "an image config must be a JSON object with architecture and os")
                ok = False
        layers = man.get("layers")
        if not isinstance(layers, list):
            self.bad(path, "layers must be a list")
            return False
        for i, layer in enumerate(layers):
            if self.blob(root, layer, (path, "layers[%d]" % i), None, path_of) is None:
                ok = False
        return ok

    def oci_index(self, root, index, path, depth):
        if not isinstance(index, dict):
            if index is not None:
                self.bad(path, "must be a JSON object")
            return False
        if index.get("schemaVersion") != 2:
            self.bad(path, "schemaVersion must be 2")
            return False
        manifests = index.get("manifests")
        if not isinstance(manifests, list) or not manifests:
            self.bad(path, "manifests must be a non-empty list")
            return False
        ok = True
        for i, desc in enumerate(manifests):
            ok = self.oci_manifest(root, desc, (path, "manifests[%d]" % i), depth) and ok
        return ok

    def images(self, manifest):
        """Check every image of the (normalised) manifest; ``{(name, tag): "sha256:<hex>"}`` of the good ones.

        ``manifest["flavour"]`` says the images' format: OCI layouts ("mooring", also when absent) or
        skopeo dir: images ("metalk8s"). Without a manifest (it was invalid), the files say which it is,
        and only files outside any image directory are reported. Every image directory's name and tag
        follow spec.images's rules (:func:`manifest.image_dir_problem`), whether or not it is listed."""
        listed = set()
        if manifest is not None:
            for img in manifest["spec"]["images"]:
                listed.add((img["name"], img["tag"]))
            flavour = manifest.get("flavour") or "mooring"
        else:
            flavour = image_flavour(self.files)
        key_of, unexpected, check = (dir_image_key, self.dir_unexpected, self.dir_image) if flavour == METALK8S \
            else (oci_layout_key, _OCI_UNEXPECTED, self.oci_layout)
        present = set()
        for path in self.files:
            if not path.startswith("images/"):
                continue
            key = key_of(path)
            if key is None:
                self.bad(path, unexpected)
            else:
                present.add(key)
        misnamed = set()
        for name, tag in sorted(present):  # every directory, listed or not (MetalK8s's default lists them all)
            problem = image_dir_problem(name, tag)
            if problem:
                self.bad("images/%s/%s" % (name, tag), problem)
                misnamed.add((name, tag))
        for name, tag in sorted(present - misnamed):
            if (name, tag) not in listed and manifest is not None:
                self.bad("images/%s/%s" % (name, tag), "image not listed in manifest.yaml spec.images")
        digests = {}
        for name, tag in sorted(listed - misnamed):
            root = "images/%s/%s" % (name, tag)
            if (name, tag) not in present:
                self.bad(root, "image %s:%s listed in manifest.yaml spec.images is missing" % (name, tag))
                continue
            digest = check(root)
            if digest is not None:
                digests[(name, tag)] = digest
        return digests

    def oci_layout(self, root):
        """Check the OCI image layout at ``root``; the digest of its one image manifest, or None."""
        layout = self.json_file(root + "/oci-layout")
        if layout is not None and (
            not isinstance(layout, dict) or layout.get("imageLayoutVersion") != OCI_LAYOUT_VERSION
        ):
            self.bad(root + "/oci-layout", "imageLayoutVersion must be %r" % OCI_LAYOUT_VERSION)
        index = self.json_file(root + "/index.json")
        if index is None or not self.oci_index(root, index, root + "/index.json", 0):
            return None
        if len(index["manifests"]) != 1:
            self.bad(root + "/index.json", "must describe exactly one image (one entry in manifests)")
            return None
        return index["manifests"][0]["digest"]
