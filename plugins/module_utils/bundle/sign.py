# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the bundle signing key on the controller (common/ed25519.py holds the one key stack).

Signing needs ``cryptography``; verifying (bundle.host) does not.
"""

from __future__ import annotations

import os

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.format import BundleError
from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import missing_library


def default_key_path():
    """The signing key used when none is named: ``$MOORING_CONFIG_DIR`` or ~/.config/mooring."""
    base = os.environ.get("MOORING_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".config", "mooring")
    return os.path.join(base, "bundle-signing.key")


def ensure_signing_key(key_path):
    """Load the Ed25519 signing key, creating it (0600) and its ``.pub`` on first use.

    Returns ``(private_key, public_pem_bytes, created)``.
    """
    missing = ed25519.cryptography_error()
    if missing is not None:
        raise missing_library("cryptography", "to sign bundles", missing, BundleError)
    pub_path = public_key_path(key_path)
    created = False
    for path in (key_path, pub_path):
        if os.path.lexists(path) and not os.path.isfile(path):
            raise BundleError("signing key %s: not a regular file" % path)
    if os.path.exists(key_path):
        try:
            key = ed25519.load_private_key(key_path)
        except ed25519.NotEd25519Error as exc:
            raise BundleError("signing key %s: not an Ed25519 private key" % key_path) from exc
        except ed25519.KeyFileError as exc:
            raise BundleError("signing key %s: cannot load it (%s); move it away to create a new one"
                              % (key_path, exc)) from exc
    else:
        key = ed25519.new_private_key()
        os.makedirs(os.path.dirname(os.path.abspath(key_path)), mode=0o700, exist_ok=True)
        ed25519.write_private_key(key_path, key)
        created = True
    public_pem = ed25519.public_pem(key)
    fileio.write_if_changed(pub_path, public_pem, 0o644)
    return key, public_pem, created


def public_key_path(key_path):
    """Where the public key of the signing key ``key_path`` is written (``.key`` -> ``.pub``)."""
    return key_path[:-4] + ".pub" if key_path.endswith(".key") else key_path + ".pub"


def sign(key, data):
    """The detached Ed25519 signature (64 raw bytes) of ``data`` (bundle.json) with ``key``."""
    return key.sign(data)
