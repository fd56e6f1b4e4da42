# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the OCI image layouts of a solution archive (images/<name>/<tag>/).

:class:`ImageChecks` is a part of the archive validation (:mod:`solutions.validate`): each image of
spec.images is a complete OCI layout whose every blob is present with its size and digest.
"""


from __future__ import annotations

import json
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    CONFIG_TYPES,
    INDEX_TYPES,
    MANIFEST_TYPES,
    MAX_INDEX_DEPTH,
    MAX_JSON_BYTES,
    OCI_LAYOUT_VERSION,
)

DIGEST = re.compile(r"^sha256:([0-9a-f]{64})\Z")


class ImageChecks:
    """Each image of spec.images is a complete OCI layout whose every blob matches its digest.

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

    def blob(self, root, desc, where, allowed_types):
        """Check a descriptor: its blob exists with that size and digest. Returns the blob path."""
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
        path = "%s/blobs/sha256/%s" % (root, m.group(1))
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
        man = self.json_file(path)
        if not isinstance(man, dict):
            if man is not None:
                self.bad(path, "an image manifest must be a JSON object")
            return False
        if man.get("schemaVersion") != 2:
            self.bad(path, "schemaVersion must be 2")
            return False
        ok = True
        cfg = self.blob(root, man.get("config"), (path, "config"), CONFIG_TYPES)
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
            if self.blob(root, layer, (path, "layers[%d]" % i), None) is None:
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
        listed = set()
        if manifest is not None:
            for img in manifest["spec"]["images"]:
                listed.add((img["name"], img["tag"]))
        layouts = {}
        for path in self.files:
            if not path.startswith("images/"):
                continue
            rest = path[len("images/"):]
            marker = rest.find("/blobs/") if "/blobs/" in rest else None
            if marker is not None:
                key = rest[:marker]
            elif rest.endswith("/index.json") or rest.endswith("/oci-layout"):
                key = rest.rsplit("/", 1)[0]
            else:
                self.bad(path, "unexpected file under images/ (expected images/<name>/<tag>/ OCI layouts)")
                continue
            if "/" not in key:
                self.bad(path, "unexpected file under images/ (expected images/<name>/<tag>/ OCI layouts)")
                continue
            name, tag = key.rsplit("/", 1)
            layouts.setdefault((name, tag), []).append(path)
        for name, tag in sorted(layouts):
            if (name, tag) not in listed and manifest is not None:
                self.bad("images/%s/%s" % (name, tag), "image not listed in manifest.yaml spec.images")
        digests = {}
        for name, tag in sorted(listed):
            root = "images/%s/%s" % (name, tag)
            if (name, tag) not in layouts:
                self.bad(root, "image %s:%s listed in manifest.yaml spec.images is missing" % (name, tag))
                continue
            layout = self.json_file(root + "/oci-layout")
            if layout is not None and (
                not isinstance(layout, dict) or layout.get("imageLayoutVersion") != OCI_LAYOUT_VERSION
            ):
                self.bad(root + "/oci-layout", "imageLayoutVersion must be %r" % OCI_LAYOUT_VERSION)
            index = self.json_file(root + "/index.json")
            if index is None:
                continue
            if self.oci_index(root, index, root + "/index.json", 0):
                if len(index["manifests"]) != 1:
                    self.bad(root + "/index.json", "must describe exactly one image (one entry in manifests)")
                else:
                    digests[(name, tag)] = index["manifests"][0]["digest"]
        return digests
