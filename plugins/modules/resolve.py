# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# This module is implemented as an action plugin (plugins/action/resolve.py) and runs on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: resolve
short_description: Validate, hash and resolve an installer spec into a lock file
version_added: 0.1.0
description:
  - Reads a C(cluster.mooring.io/v1beta1) (or kURL C(cluster.kurl.sh/v1beta1)) C(Installer) document,
    validates it (every problem at once, each with its path), computes its kURL-compatible hash and
    resolves every add-on version (exact, C(latest), C(X.Y.x)) against the collection's catalog plus
    optional overlays.
  - When O(lock) is given, writes the lock file (only when its content changes).
  - Runs on the controller; nothing is changed on any managed host.
author:
  - Mooring maintainers (@mooring)
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  src:
    description:
      - Path of the installer YAML on the controller. A relative path is taken from the directory
        C(ansible-playbook) runs in; only if no such file exists is it searched in the role's and
        playbook's C(files/) directories.
      - Mutually exclusive with O(definition); one of the two is required.
    type: path
  definition:
    description:
      - The installer document as a mapping. Mutually exclusive with O(src); one of the two is required.
    type: dict
  lock:
    description:
      - Path of the lock file to write on the controller. Without it nothing is written.
    type: path
  catalog:
    description:
      - Catalog directory. Defaults to the catalog shipped with the collection.
    type: path
  catalog_overlay:
    description:
      - Catalog overlay files or directories, applied in order (local mirrors, air-gapped sites).
    type: list
    elements: path
    default: []
  architectures:
    description:
      - CPU architectures whose artifacts go into the lock.
    type: list
    elements: str
    choices: [amd64, arm64, ppc64le]
    default: [amd64]
  resolve:
    description:
      - Resolve versions and build the lock. With V(false) only validation and hashing happen.
      - kURL add-ons and fields that mooring.cluster does not support are ignored with a warning
        naming each, whether or not versions are resolved.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Reports whether the lock file would change without writing it.
  diff_mode:
    support: full
    description: Returns the lock file's text before and after.
notes:
  - The hash is kURL's (first 7 hex characters of its SHA-256 scheme over the spec as written).
"""

EXAMPLES = r"""
- name: Resolve the installer spec into a lock file
  mooring.cluster.resolve:
    src: installer.yaml
    lock: installer.lock.yaml

- name: Only validate and hash a kURL installer
  mooring.cluster.resolve:
    src: kurl-installer.yaml
    resolve: false
  register: installer

- name: Resolve against a local mirror
  mooring.cluster.resolve:
    src: installer.yaml
    lock: installer.lock.yaml
    catalog_overlay:
      - /srv/mirror/catalog-overlay.yml
"""

RETURN = r"""
hash:
  description: kURL-compatible 7-character hash of the spec as written.
  returned: success
  type: str
  sample: 3138d30
spec_digest:
  description: Full SHA-256 behind RV(hash).
  returned: success
  type: str
source:
  description: C(mooring) or C(kurl), the document's dialect.
  returned: success
  type: str
  sample: mooring
unsupported:
  description: kURL add-ons or fields that mooring.cluster does not map (ignored; each also a warning).
  returned: success
  type: list
  elements: str
versions:
  description: Resolved version per add-on.
  returned: when O(resolve=true)
  type: dict
  sample: {kubernetes: 1.35.8, calico: 3.31.7}
lock:
  description: The lock as a mapping (see docs/formats.md).
  returned: when O(resolve=true)
  type: dict
digest:
  description: SHA-256 of the lock's canonical content.
  returned: when O(resolve=true)
  type: str
"""
