#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: bundle_verify
short_description: Verify an air-gap bundle's signature and every checksum, without unpacking it
version_added: 0.1.0
description:
  - Reads the bundle once, as a stream - checks the Ed25519 signature of C(bundle.json) with the trusted
    public key first, then the size and sha256 of every package against the signed manifest; any extra,
    missing or altered member makes it fail. Nothing is written.
  - Needs only Python's standard library (the signature check does not use C(cryptography)), so it runs on
    the controller (delegated to C(localhost)) and on minimal hosts alike.
  - Returns what roles need to install the bundle - per add-on its apt repository, host packages,
    binaries and images.
author:
  - Mooring maintainers (@mooring)
extends_documentation_fragment:
  - mooring.cluster.attributes.read_only
options:
  path:
    description: The bundle file.
    type: path
    required: true
  pubkey:
    description: Trusted Ed25519 public key file (PEM, C(BEGIN PUBLIC KEY)).
    type: path
  pubkey_content:
    description: The trusted public key itself (PEM text), instead of O(pubkey).
    type: str
  checksums:
    description: Also check every package's size and sha256 (reads the whole bundle). When false only the
      signature of C(bundle.json) is checked (reads its first kilobytes).
    type: bool
    default: true
seealso:
  - module: mooring.cluster.bundle_build
  - module: mooring.cluster.bundle_unpack
"""

EXAMPLES = r"""
- name: Refuse a tampered bundle on the controller before copying anything
  mooring.cluster.bundle_verify:
    path: "{{ inventory_dir }}/bundle.tar"
    pubkey: ~/.config/mooring/bundle-signing.pub
  delegate_to: localhost
  run_once: true
  register: bundle_info
"""

RETURN = r"""
bundle:
  description: Summary of the verified bundle.
  returned: success
  type: dict
  contains:
    id:
      description: sha256 of C(bundle.json).
      type: str
    hash:
      description: Installer hash from the lock.
      type: str
    signer:
      description: Fingerprint of the key that signed it.
      type: str
    sandbox_image:
      description: The sandbox (pause) image the lock pins.
      type: str
    addons:
      description: Per add-on C(version), C(repo), C(packages), C(binaries), C(images).
      type: dict
  sample: {id: 436afbfa61618ceb45ee270770d75d7d41f671637e2a644a1534a1e227d49629, hash: a22dc05}
"""

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import host as backend  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


class BundleVerify(MooringModule):
    """Verifies a bundle's signature (and its checksums)."""

    argument_spec = dict(
        path=dict(type="path", required=True),
        pubkey=dict(type="path"),
        pubkey_content=dict(type="str"),
        checksums=dict(type="bool", default=True),
    )
    module_kwargs = dict(
        mutually_exclusive=[("pubkey", "pubkey_content")],
        required_one_of=[("pubkey", "pubkey_content")],
    )
    errors = (backend.BundleError, OSError)

    def run(self):
        p = self.params
        if p["pubkey_content"]:
            public = backend.public_key_from_pem(p["pubkey_content"])
        else:
            public = backend.read_public_key(p["pubkey"])
        if p["checksums"]:
            summary = backend.verify_bundle(p["path"], public)
        else:
            summary = backend.verify_signature(p["path"], public)
        return dict(changed=False, bundle=summary)


def main():
    BundleVerify().execute()


if __name__ == "__main__":
    main()
