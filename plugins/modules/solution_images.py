#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: solution_images
short_description: Import solution images into containerd (and optionally push them to a registry)
version_added: 0.1.0
description:
  - Makes containerd on the host hold the images of a solution version, named
    C(<prefix>/<solution>-<version>/<image>:<tag>), from OCI archives written on the controller by
    M(mooring.cluster.solution_archive) after the archive was validated.
  - An image already present with the same manifest digest is left alone; one missing or with another
    digest is imported with C(ctr images import); after import the digest containerd reports is checked.
  - With O(state=absent) the images are removed (C(ctr images rm)).
  - With O(push=true) each image is also pushed (C(ctr images push)) to the registry its name starts with,
    unless the registry already serves that tag with the same digest.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: before and after map each image name to its manifest digest (null when absent).
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
requirements:
  - containerd and its C(ctr) client on the host
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.containerd_client
options:
  images:
    description: The images of one solution version.
    type: list
    elements: dict
    required: true
    suboptions:
      ref:
        description: Full image name, C(<prefix>/<solution>-<version>/<image>:<tag>).
        type: str
        required: true
      digest:
        description: Manifest digest, C(sha256:<64 hex>).
        type: str
        required: true
      file:
        description: OCI archive on the host to import from (required when O(state=present)).
        type: path
  directory:
    description: Directory on the host holding the archives; when set, each O(images[].file) is looked up
      there by its base name.
    type: path
  state:
    description: Whether the images must be present or absent.
    type: str
    choices: [present, absent]
    default: present
  snapshotter:
    description: Snapshotter to unpack into (containerd's default when unset).
    type: str
  push:
    description: Also push every image to the registry named by its ref.
    type: bool
    default: false
  registry_plain_http:
    description: Talk to the registry over plain HTTP.
    type: bool
    default: false
  registry_validate_certs:
    description: Verify the registry's TLS certificate.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Import the images of example 1.0.0 into containerd
  mooring.cluster.solution_images:
    images:
      - ref: solutions.mooring.local/example-1.0.0/example-app:1.0.0
        digest: sha256:6787217e5ccfb4e99f618fe2b4ff18efb43b08cca832263982ff4275ddb368b6
        file: /var/lib/mooring/solutions/example-1.0.0/images/example-app_1.0.0.oci.tar

- name: Remove them
  mooring.cluster.solution_images:
    state: absent
    images:
      - ref: solutions.mooring.local/example-1.0.0/example-app:1.0.0
        digest: sha256:6787217e5ccfb4e99f618fe2b4ff18efb43b08cca832263982ff4275ddb368b6
"""

RETURN = r"""
imported:
  description: Images imported by this run.
  returned: always
  type: list
  elements: str
  sample: [solutions.mooring.local/example-1.0.0/example-app:1.0.0]
removed:
  description: Images removed by this run.
  returned: always
  type: list
  elements: str
  sample: []
pushed:
  description: Images pushed to the registry by this run.
  returned: always
  type: list
  elements: str
  sample: []
images:
  description: Each requested image name and the digest containerd holds for it after the run (null when absent).
  returned: always
  type: dict
  sample: {"solutions.mooring.local/example-1.0.0/example-app:1.0.0": "sha256:6787217e5ccfb4e99f618fe2b4ff18efb43b08cca832263982ff4275ddb368b6"}
"""

import os  # noqa: E402

from ansible.module_utils.urls import open_url  # noqa: E402

from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.ctr import (  # noqa: E402
    IMPORT_OPTIONS,
    MANIFEST_ACCEPT,
    ensure_images,
    manifest_url,
)
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


class SolutionImages(MooringModule):
    """Imports (or removes) a solution's images in containerd, and optionally pushes them."""

    argument_spec = {
        "images": {"type": "list", "elements": "dict", "required": True, "options": {
            "ref": {"type": "str", "required": True},
            "digest": {"type": "str", "required": True},
            "file": {"type": "path"},
        }},
        "directory": {"type": "path"},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        **IMPORT_OPTIONS,
        "snapshotter": {"type": "str"},
        "push": {"type": "bool", "default": False},
        "registry_plain_http": {"type": "bool", "default": False},
        "registry_validate_certs": {"type": "bool", "default": True},
    }

    def run(self):
        p = self.params
        images = [dict(i) for i in p["images"]]
        if p["directory"]:
            for i in images:
                if i.get("file"):
                    i["file"] = os.path.join(p["directory"], os.path.basename(i["file"]))
        if p["state"] == "present":
            missing = [i["ref"] for i in images if not i.get("file")]
            if missing:
                self.fail("images[].file is required with state=present (missing for %s)" % ", ".join(missing))
        out = ensure_images(
            self.module.run_command, images, state=p["state"], ctr=p["ctr"], address=p["address"],
            namespace=p["namespace"], snapshotter=p["snapshotter"], check_mode=self.check_mode,
            push=p["push"], plain_http=p["registry_plain_http"],
            skip_verify=not p["registry_validate_certs"], registry_digest=self.registry_digest,
        )
        result = {"changed": out["changed"], "imported": out["imported"], "removed": out["removed"],
                  "pushed": out["pushed"], "images": out["after"]}
        if self.module._diff:
            result["diff"] = {"before": out["before"], "after": out["after"]}
        return result

    def registry_digest(self, ref):
        """The digest the registry has for ``ref``; None when it has none (or cannot tell)."""
        p = self.params
        url = manifest_url(ref, p["registry_plain_http"])
        try:
            netguard.check_url(url)
        except netguard.RouteRefused as exc:
            self.fail(str(exc))
        try:
            resp = open_url(manifest_url(ref, p["registry_plain_http"]), method="HEAD",
                            headers={"Accept": MANIFEST_ACCEPT}, validate_certs=p["registry_validate_certs"],
                            timeout=30)
            return resp.headers.get("Docker-Content-Digest")
        except Exception:  # any HTTP error (404 first of all) means: push it
            return None


def main():
    SolutionImages().execute()


if __name__ == "__main__":
    main()
