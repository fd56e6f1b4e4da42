#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: bundle_image
short_description: Import image archives from an unpacked bundle into containerd, with no registry
version_added: 0.1.0
description:
  - Lists the images of a containerd namespace (C(ctr images list --quiet)) and imports, with
    C(ctr images import), every archive whose reference is not there yet. Archives are OCI or Docker
    archives as stored in the bundle; nothing is pulled.
  - After importing, checks that each reference is present and fails naming it otherwise.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
    description: Reports which images would be imported.
  diff_mode:
    support: full
    description: Shows the namespace's image list before and after.
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.containerd_client
options:
  images:
    description: Images to make present - C(ref) and C(path) (archive on the host); other keys are ignored.
    type: list
    elements: dict
    required: true
seealso:
  - module: mooring.cluster.bundle_unpack
"""

EXAMPLES = r"""
- name: Import the bundle's images into containerd
  mooring.cluster.bundle_image:
    images:
      - ref: localhost/mooring/hello:1.0
        path: /var/lib/mooring/bundles/ID/containerd/images/localhost_mooring_hello_1.0.oci-archive.tar
"""

RETURN = r"""
imported:
  description: References imported by this run.
  returned: always
  type: list
  elements: str
  sample: [localhost/mooring/hello:1.0]
present:
  description: References that were already present.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.mooring.cluster.plugins.module_utils.common import ctr  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


class BundleImage(MooringModule):
    """Imports image archives into containerd."""

    argument_spec = dict(
        images=dict(type="list", elements="dict", required=True),
        **ctr.IMPORT_OPTIONS
    )
    errors = (ctr.ContainerdError,)

    def failure(self, exc):
        partial = dict(getattr(exc, "result", None) or {})
        partial.pop("before", None)
        partial.pop("after", None)
        return dict(partial, msg=str(exc))

    def run(self):
        params = self.params
        problem = ctr.archive_problem(params["images"], "images")
        if problem:
            self.fail(problem)
        result = ctr.import_archives(self.module.run_command, params["images"], params["ctr"], params["address"],
                                     params["namespace"], check_mode=self.check_mode)
        before, after = result.pop("before"), result.pop("after")
        if result["changed"] and not self.check_mode and self.module._diff:
            result["diff"] = dict(before="\n".join(before) + "\n", after="\n".join(after) + "\n")
        return result


def main():
    BundleImage().execute()


if __name__ == "__main__":
    main()
