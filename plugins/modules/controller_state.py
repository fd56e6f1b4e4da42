#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: controller_state
short_description: Back up the controller's state into one signed archive encrypted with age, or restore it
version_added: 0.2.0
description:
  - Action plugin (runs on the controller). The controller's state is what makes the cluster's trust and cannot be
    made again without re-keying the cluster - the PKI directory (the CAs', service-account and etcd keys), the lock,
    the bundle signing key and its public key - and what install leaves there - the admin kubeconfig, the rendered
    add-ons, the run reports. Each is an item (a file or a directory)
    found where the other playbooks look for it, from the same variables (O(items), RV(paths)).
  - V(archived) writes one tar with C(MANIFEST.json) first (the signer's fingerprint, each file's item, path, mode,
    size and sha256, and each directory's mode), then C(MANIFEST.json.sig) - the Ed25519 signature of the manifest
    by O(signing_key), the controller's bundle signing key - then the files, encrypted with age to O(recipients),
    mode 0600, atomically. No unencrypted copy is written anywhere. Decrypt it with Debian's C(age) too
    (C(age -d -i KEY ARCHIVE | tar -t)).
  - age alone does not say who made an archive (anyone with a recipient's public key can); the signature does. It
    covers every byte that a restore writes (the manifest holds each file's sha256), so it need not cover the
    recipients or the ciphertext.
  - V(restored) decrypts O(path) with O(identity), refuses it unless its signature verifies with one of
    O(trusted_signers), checks the manifest's shape, every file against the manifest and every destination, then
    writes. A directory item goes only into a missing or empty directory and a file item only onto a missing
    file or one with the same bytes; a symlink, an item under another item's file or two items writing one path
    differently are refused too; otherwise nothing at all is written and the task fails naming each destination.
    A wrong key, an unsigned (C(mooring.controller-backup/v1), made by 0.2.0) or untrusted archive, a changed or
    extra member fails the same way.
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
      OpenSSH private key, mode 0600. Only the path is passed; the key is read by the controller and never returned.
    type: path
  signing_key:
    description:
      - The Ed25519 private key (PEM, PKCS8) that signs the archive (V(archived)). Only the path is passed; the key
        is read on the controller and never returned or logged.
      - Default the bundle signing key, where the C(signing_key) item is (C(bundle_signing_key), default
        C($MOORING_CONFIG_DIR/bundle-signing.key) or C(~/.config/mooring/bundle-signing.key)). A missing key is
        refused, not made - build a bundle first, which makes it.
    type: path
    version_added: 0.3.0
  trusted_signers:
    description:
      - Required with V(restored) - the public keys whose signature of the archive a restore accepts, each a PEM
        Ed25519 public key (C(BEGIN PUBLIC KEY)) or a file holding one - the old controller's
        C(bundle-signing.pub), also on every host as C(/etc/mooring/bundle-signing.pub). Several are for a key
        that was replaced.
      - The archive's own C(signing_pub) is never trusted - it is what a forger would put there.
    type: list
    elements: str
    version_added: 0.3.0
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

- name: Restore it on a new controller, trusting only the bundle signing key (its .pub, copied from any host)
  mooring.cluster.controller_state:
    state: restored
    path: /srv/backups/mooring-controller.tar.age
    identity: ~/.config/age/operator.key
    trusted_signers: [/srv/backups/bundle-signing.pub]
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
signer:
  description: The fingerprint of the key that signed the archive (V(archived)) or whose signature was verified
    (V(restored)).
  returned: success
  type: str
  sample: SHA256:2mXq0N8Ck0ZqgW0JkGmIY3d7lq1iQ0rU1m9C2Zl3gkA
created:
  description: When the restored archive was made (UTC), as its signed manifest says (V(restored)).
  returned: success
  type: str
  sample: "2026-12-01T10:00:00Z"
"""
