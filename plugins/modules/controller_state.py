#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: controller_state
short_description: Back up the controller's state into one archive encrypted with age, or restore it
version_added: 0.2.0
description:
  - Action plugin (runs on the controller). The controller's state is what makes the cluster's trust and cannot be
    made again without re-keying the cluster - the PKI directory (the CAs', service-account and etcd keys), the lock,
    the bundle signing key and its public key - and what install leaves there - the admin kubeconfig, the rendered
    add-ons, the run reports. Each is an item (a file or a directory)
    found where the other playbooks look for it, from the same variables (O(items), RV(paths)).
  - V(archived) writes one tar with C(MANIFEST.json) first (each file's item, path, mode, size and sha256, and each
    directory's mode),
    encrypted with age to O(recipients), mode 0600, atomically. No unencrypted copy is written anywhere. Decrypt it
    with Debian's C(age) too (C(age -d -i KEY ARCHIVE | tar -t)).
  - V(restored) decrypts O(path) with O(identity), checks every file against the manifest and every destination,
    then writes. A directory item goes only into a missing or empty directory and a file item only onto a missing
    file or one with the same bytes; otherwise nothing at all is written and the task fails naming each
    destination. A wrong key, a changed or extra member fails the same way.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
    description: V(restored) checks everything and reports what it would write; V(archived) writes nothing.
  diff_mode:
    support: none
    description: Files are keys; no diff is shown.
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  state:
    description: V(archived) makes the archive, V(restored) restores from it.
    type: str
    choices: [archived, restored]
    required: true
  path:
    description: The archive file.
    type: path
    required: true
  recipients:
    description:
      - Who can decrypt the archive (V(archived)) - age public keys (C(age1...), from C(age-keygen)), SSH public keys
        (C(ssh-ed25519 ...)), or files holding such lines. Keep the matching private key off this controller.
    type: list
    elements: str
    default: []
  identity:
    description: A private key file matching one recipient (V(restored)) - an age identity file or an unencrypted
      OpenSSH private key, mode 0600.
    type: path
  items:
    description:
      - Item name to path, added to the defaults (an empty path drops one). The defaults come from the inventory's variables as the other playbooks
        read them - C(pki) (C(mooring_pki_dir), default C(INVENTORY_DIR/pki)), C(lock) (C(mooring_lock)),
        C(signing_key) and C(signing_pub) (C(bundle_signing_key), default C($MOORING_CONFIG_DIR/bundle-signing.key)
        or C(~/.config/mooring/bundle-signing.key)), C(reports) (C(INVENTORY_DIR/.mooring-reports)), C(kubeconfig)
        (C(mooring_kubeconfig), default C(INVENTORY_DIR/admin.conf)) and C(rendered) (C(mooring_addons_render_dir), default
        C(INVENTORY_DIR/rendered)).
      - On V(archived) a missing item is skipped and named in RV(skipped); on V(restored) each item of the archive
        is restored where this controller's inventory says.
    type: dict
seealso:
  - module: mooring.cluster.pki
"""

EXAMPLES = r"""
- name: Back up the controller's state, encrypted to the operator's age key
  mooring.cluster.controller_state:
    state: archived
    path: /srv/backups/mooring-controller.tar.age
    recipients: [age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p]
"""

RETURN = r"""
paths:
  description: The items (V(archived) those found, V(restored) those of the archive) and their paths here.
  returned: success
  type: dict
skipped:
  description: Items not found on this controller (V(archived)).
  returned: success
  type: list
  elements: str
files:
  description: Files archived or restored.
  returned: success
  type: int
sha256:
  description: The sha256 of the encrypted archive (V(archived)).
  returned: success
  type: str
written:
  description: Files written (V(restored); what would be written in check mode).
  returned: success
  type: list
  elements: str
"""
