# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the keys of a controller backup (:mod:`controllerstate`): the age recipients it is
encrypted to and the identities that decrypt it (X25519 or SSH keys, through pyrage), the bundle signing key that
signs it and the signers a restore trusts. Key files are read bounded and refused when they are not regular files
or are too large; a private key file must not be readable by others.
"""

from __future__ import annotations

import os
import stat

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt, missing_library, reason

try:
    import pyrage
    PYRAGE_ERROR = None
except ImportError as _exc:  # pragma: no cover - requirements.txt has it
    pyrage = None
    PYRAGE_ERROR = _exc


MAX_KEY_FILE = 64 * 1024


class ControllerStateError(MooringError):
    """The archive cannot be made or restored; nothing was written."""


def _need_pyrage():
    if pyrage is None:
        raise missing_library("pyrage", "to encrypt and decrypt the controller backup (age)", PYRAGE_ERROR,
                              ControllerStateError)


# ----------------------------------------------------------------------------------------------- keys
def recipients(values):
    """age recipients from ``values``: each an ``age1...`` or SSH public key, or a file holding such lines."""
    _need_pyrage()
    found = []
    for value in values or ():
        lines = [value]
        if not value.startswith(("age1", "ssh-")) and os.path.isfile(value):
            lines = _read_key_file(value, secret=False).decode("utf-8", "replace").splitlines()
        for line in (ln.strip() for ln in lines):
            if not line or line.startswith("#"):
                continue
            try:
                found.append(pyrage.ssh.Recipient.from_str(line) if line.startswith("ssh-")
                             else pyrage.x25519.Recipient.from_str(line))
            except pyrage.RecipientError as exc:
                raise ControllerStateError("recipient %r: not an age (age1...) or SSH public key (%s)"
                                           % (line[:40], exc)) from None
    if not found:
        raise ControllerStateError("no recipient: give an age public key (age-keygen), an SSH public key or a file of them")
    return found


def identities(path):
    """The private keys in ``path``: an age identity file (``AGE-SECRET-KEY-1...`` lines) or an OpenSSH key."""
    _need_pyrage()
    data = _read_key_file(path, secret=True)
    if b"-----BEGIN" in data:
        try:
            return [pyrage.ssh.Identity.from_buffer(data)]
        except pyrage.IdentityError as exc:
            raise ControllerStateError("identity %s: not an unencrypted OpenSSH private key (%s)" % (path, exc)) from None
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line.startswith("AGE-SECRET-KEY-"):
            try:
                found.append(pyrage.x25519.Identity.from_str(line))
            except pyrage.IdentityError:
                raise ControllerStateError("identity %s: a line is not a valid age secret key" % path) from None
    if not found:
        raise ControllerStateError("identity %s: no age secret key (AGE-SECRET-KEY-1...) or OpenSSH private key in it" % path)
    return found


def trusted_signers(values):
    """``{fingerprint: raw public key}`` of the keys a restore trusts: each value a PEM Ed25519 public key
    (``BEGIN PUBLIC KEY``, as ``bundle-signing.pub``) or a file holding one."""
    found = {}
    for value in values or ():
        if not isinstance(value, str) or not value.strip():
            raise ControllerStateError("trusted signer %s: give a PEM public key or a file holding one" % excerpt(value))
        if "-----BEGIN" in value:
            where, text = "trusted signer (PEM text)", value.encode("utf-8", "replace")
        else:
            path = os.path.expanduser(value)
            where, text = "trusted signer %s" % path, _read_key_file(path, secret=False)
        if b"PRIVATE KEY" in text:
            raise ControllerStateError("%s is a private key: give its public key (bundle-signing.pub beside it), which is "
                                       "all a restore needs" % where)
        raw = ed25519.public_key_from_pem(text)
        if raw is None:
            raise ControllerStateError("%s: not a PEM Ed25519 public key (BEGIN PUBLIC KEY, as bundle-signing.pub)" % where)
        found[ed25519.key_fingerprint(raw)] = raw
    if not found:
        raise ControllerStateError("no trusted signer: a restore needs the public key of the bundle signing key that "
                                   "signed the backup (bundle-signing.pub, also on every host as "
                                   "/etc/mooring/bundle-signing.pub); the archive's own copy is never trusted")
    return found


def signing_key(path):
    """``(private key, fingerprint)`` of the Ed25519 key that signs a backup: the controller's bundle signing key.
    A missing key is refused (not made): a backup signed by a key nobody trusts could not be restored."""
    if not path:
        raise ControllerStateError("no signing key: a backup is signed with the controller's bundle signing key "
                                   "(bundle_signing_key)")
    if not os.path.lexists(path):
        raise ControllerStateError("signing key %s does not exist: a backup is signed with the controller's bundle "
                                   "signing key; give its path (signing_key, or bundle_signing_key in the inventory) "
                                   "or build a bundle first, which makes it" % path)
    try:
        kind = fileio.file_kind(path)[1]
    except OSError as exc:
        raise ControllerStateError("signing key %s: %s" % (path, reason(exc))) from None
    if kind != "file":
        raise ControllerStateError("signing key %s is not a regular file" % path)
    try:
        key = ed25519.load_private_key(path)
    except ed25519.NotEd25519Error:
        raise ControllerStateError("signing key %s: not an Ed25519 private key" % path) from None
    except ed25519.KeyFileError as exc:
        raise ControllerStateError("signing key %s: cannot load it (%s)" % (path, reason(exc))) from None
    return key, ed25519.key_fingerprint(ed25519.public_raw(key))


def regular_file(path):
    """``os.stat`` of ``path`` (not followed), which must be a regular file: a key or an archive of a backup."""
    try:
        st, kind = fileio.file_kind(path)
    except FileNotFoundError:
        raise ControllerStateError("%s does not exist" % path) from None
    if kind != "file":
        raise ControllerStateError("%s is not a regular file" % path)
    return st


def _read_key_file(path, secret):
    st = regular_file(path)
    if secret and st.st_mode & 0o077:
        raise ControllerStateError("identity %s is readable by others (mode %04o); chmod 600 it first"
                                   % (path, stat.S_IMODE(st.st_mode)))
    if st.st_size > MAX_KEY_FILE:
        raise ControllerStateError("%s is larger than %d bytes; not a key file" % (path, MAX_KEY_FILE))
    with open(path, "rb") as handle:
        return handle.read(MAX_KEY_FILE + 1)
