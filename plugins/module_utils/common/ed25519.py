# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: Ed25519 keys and signatures, the one key stack of the collection.

Bundles and solution archives are both signed with Ed25519 keys kept as PEM files (private key
PKCS#8, 0600; public key SubjectPublicKeyInfo). Signing and key generation need
``cryptography`` (controller only). Verifying needs only the standard library: a plain-integer
RFC 8032 verifier, so a host without python3-cryptography checks a signature itself.

Errors: a file that cannot be read raises its ``OSError``; a key that cannot be parsed raises
:class:`KeyFileError`, one that is not Ed25519 :class:`NotEd25519Error`. The messages do not
name the file: callers say which file and which kind of artefact it signs.
"""

from __future__ import annotations

import base64
import hashlib
import os

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, missing_library

SIGNATURE_SIZE = 64
_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


class KeyFileError(MooringError):
    """A key file's content cannot be loaded as a key."""


class NotEd25519Error(KeyFileError):
    """The file holds a key (or PEM) that is not an Ed25519 one."""


# --------------------------------------------------------------------------------------------
# Ed25519 verification (RFC 8032, section 5.1.7), standard library only.
# --------------------------------------------------------------------------------------------
_P = 2 ** 255 - 19
_L = 2 ** 252 + 27742317777372353535851937790883648493
_D = (-121665 * pow(121666, _P - 2, _P)) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)
_IDENTITY = (0, 1, 1, 0)  # extended coordinates (X, Y, Z, T)


def _pt_add(p1, p2):
    x1, y1, z1, t1 = p1
    x2, y2, z2, t2 = p2
    a = (y1 - x1) * (y2 - x2) % _P
    b = (y1 + x1) * (y2 + x2) % _P
    c = 2 * t1 * t2 * _D % _P
    d = 2 * z1 * z2 % _P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _pt_mul(scalar, point):
    result = _IDENTITY
    while scalar:
        if scalar & 1:
            result = _pt_add(result, point)
        point = _pt_add(point, point)
        scalar >>= 1
    return result


def _pt_equal(p1, p2):
    return (p1[0] * p2[2] - p2[0] * p1[2]) % _P == 0 and (p1[1] * p2[2] - p2[1] * p1[2]) % _P == 0


def _recover_x(y, sign):
    if y >= _P:
        return None
    x2 = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P) % _P
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P:
        x = x * _SQRT_M1 % _P
    if (x * x - x2) % _P:
        return None
    if (x & 1) != sign:
        x = _P - x
    return x


def _decompress(data):
    y = int.from_bytes(data, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    x = _recover_x(y, sign)
    if x is None:
        return None
    return (x, y, 1, x * y % _P)


_BASE_Y = 4 * pow(5, _P - 2, _P) % _P
_BASE = (_recover_x(_BASE_Y, 0), _BASE_Y, 1, _recover_x(_BASE_Y, 0) * _BASE_Y % _P)


def _small(point):
    """A point of small order (8P = identity): as a public key, R = identity and s = 0 verify for every message."""
    return _pt_equal(_pt_mul(8, point), _IDENTITY)


def small_order(public_key):
    """True when the 32-byte key decodes to a point of small order, or to none at all."""
    point = _decompress(public_key) if len(public_key) == 32 else None
    return point is None or _small(point)


def verify(public_key, message, signature):
    """True when ``signature`` (64 bytes) is a valid Ed25519 signature of ``message`` by a key that is not of
    small order."""
    if len(public_key) != 32 or len(signature) != 64:
        return False
    a_point = _decompress(public_key)
    r_point = _decompress(signature[:32])
    if a_point is None or r_point is None or _small(a_point):
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= _L:
        return False
    h = int.from_bytes(hashlib.sha512(signature[:32] + public_key + message).digest(), "little") % _L
    return _pt_equal(_pt_mul(s, _BASE), _pt_add(r_point, _pt_mul(h, a_point)))


# --------------------------------------------------------------------------------------------
# Public keys (standard library)
# --------------------------------------------------------------------------------------------
def public_key_from_pem(text):
    """Raw 32-byte Ed25519 public key from PEM SubjectPublicKeyInfo text (None when it is not one)."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    body = "".join(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("-----"))
    try:
        der = base64.b64decode(body, validate=True)
    except (ValueError, TypeError):
        der = b""
    if len(der) != 44 or not der.startswith(_SPKI_PREFIX) or small_order(der[len(_SPKI_PREFIX):]):
        return None  # a small-order key would accept a forged signature of anything
    return der[len(_SPKI_PREFIX):]


def read_public_key(path):
    """Raw public key from a PEM file; ``OSError`` when unreadable, :class:`NotEd25519Error` otherwise."""
    with open(path, "rb") as handle:
        raw = public_key_from_pem(handle.read())
    if raw is None:
        raise NotEd25519Error("not a PEM Ed25519 public key")
    return raw


def key_fingerprint(public_raw):
    return "SHA256:" + base64.b64encode(hashlib.sha256(public_raw).digest()).decode("ascii").rstrip("=")


# --------------------------------------------------------------------------------------------
# Private keys and signing (cryptography, controller only)
# --------------------------------------------------------------------------------------------
def cryptography_error():
    """None when ``cryptography`` can be imported, else the ImportError. Imported only here, on first
    use, so that verifying (hosts) never loads it."""
    try:
        import cryptography.hazmat.primitives.asymmetric.ed25519  # noqa: F401
    except ImportError as exc:
        return exc
    return None


def _crypto():
    error = cryptography_error()
    if error is not None:
        raise missing_library("cryptography", "for signing", error, KeyFileError)
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    return serialization, Ed25519PrivateKey


def load_private_key(path):
    """The Ed25519 private key in the unencrypted PEM file ``path``."""
    serialization, Ed25519PrivateKey = _crypto()
    try:
        with open(path, "rb") as handle:
            key = serialization.load_pem_private_key(handle.read(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise KeyFileError(str(exc)) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise NotEd25519Error("not an Ed25519 private key")
    return key


def new_private_key():
    return _crypto()[1].generate()


def private_pem(key):
    serialization = _crypto()[0]
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def public_pem(key):
    serialization = _crypto()[0]
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def public_raw(key):
    serialization = _crypto()[0]
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def sign(key, message):
    """The raw 64-byte signature of ``message``."""
    return key.sign(message)


def write_private_key(path, key, exclusive=False):
    """Write ``key`` as PEM, 0600 from the first byte; ``exclusive`` refuses an existing file."""
    if exclusive:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(private_pem(key))
        return
    fileio.write_atomic(path, private_pem(key), 0o600)
