# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the Ed25519 keys that sign and verify solution archives."""


from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import MAX_KEY_BYTES, SolutionError, require


def _key_file(path, what):
    """Refuse a key path that is not a small regular file before anything reads it (a FIFO would block)."""
    try:
        st, kind = fileio.file_kind(path)
    except OSError as exc:
        raise SolutionError("%s: cannot load the Ed25519 %s key: %s" % (path, what, exc.strerror or exc)) from None
    if kind == "directory":
        raise SolutionError("%s: is a directory, not an Ed25519 %s key file" % (path, what))
    if kind == "special":
        raise SolutionError("%s: not a regular file; give the Ed25519 %s key file (PEM)" % (path, what))
    if st.st_size > MAX_KEY_BYTES:
        raise SolutionError("%s: %d bytes, too large for an Ed25519 %s key (PEM)" % (path, st.st_size, what))


def load_public_key(path):
    """The raw Ed25519 public key in the PEM file ``path`` (common/ed25519.py; no cryptography needed)."""
    _key_file(path, "public")
    try:
        return ed25519.read_public_key(path)
    except OSError as exc:
        raise SolutionError("%s: cannot load the Ed25519 public key (PEM): %s" % (path, exc.strerror or exc)) from None
    except ed25519.NotEd25519Error as exc:
        raise SolutionError("%s: the public key is not an Ed25519 key" % path) from exc


def load_private_key(path):
    """The Ed25519 private key in the unencrypted PEM file ``path`` (needs cryptography)."""
    require(ed25519.cryptography_error() is None, "cryptography", ed25519.cryptography_error())
    _key_file(path, "private")
    try:
        return ed25519.load_private_key(path)
    except ed25519.NotEd25519Error as exc:
        raise SolutionError("%s: the private key is not an Ed25519 key" % path) from exc
    except ed25519.KeyFileError as exc:
        raise SolutionError("%s: cannot load the Ed25519 private key (unencrypted PEM): %s"
                            % (path, excerpt(str(exc).splitlines()[0] if str(exc) else "", 200))) from None
