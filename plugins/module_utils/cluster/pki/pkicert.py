# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: reading the PKI's certificates and keys (``cryptography``).

:func:`parse_cert` / :func:`parse_key` load a PEM file (every part the PKI looks at is parsed there, so a
hostile file fails once, with one line); :func:`examine` / :func:`examine_sa` judge what is on disk for
one certificate or the service-account key pair; :func:`leaf_problem` says why a loadable leaf must be
renewed; the small readers (:func:`not_after`, :func:`subject_of`, :func:`sans_of`, ...) compare a
certificate with its :class:`~.pkispec.CertSpec`.
"""

from __future__ import annotations

import datetime
import os

try:
    from cryptography import x509
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    HAS_CRYPTOGRAPHY = True
    CRYPTOGRAPHY_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - exercised by sanity's import test only
    HAS_CRYPTOGRAPHY = False
    CRYPTOGRAPHY_IMPORT_ERROR = _exc

    class UnsupportedAlgorithm(Exception):  # noqa: N818 - cryptography's name, for the except clauses
        """Stands in for cryptography's exception when the library is missing."""

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import CLIENT, SERVER
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkistore import read_pem


def parse_cert(data):
    """``(certificate, None)`` or ``(None, why)``; every part the PKI looks at is parsed here."""
    if not data.strip():
        return None, "is empty"
    try:
        cert = x509.load_pem_x509_certificate(data)
    except x509.InvalidVersion:
        return None, "is not an X.509 v1/v3 certificate (invalid version)"
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None, "is not a PEM X.509 certificate"
    try:
        cert.extensions  # noqa: B018 - parsed lazily: a malformed extension raises here, not later
        subject_of(cert)
        sans_of(cert)
        usages_of(cert)
        is_ca(cert)
        cert.issuer  # noqa: B018
        public_bytes(cert.public_key())
        not_after(cert)
    except Exception:  # noqa: BLE001 - whatever a hostile certificate makes cryptography raise
        return None, "is a malformed certificate (its extensions, names or public key cannot be read)"
    return cert, None


def parse_key(data):
    """``(private key, None)`` or ``(None, why)``."""
    if not data.strip():
        return None, "is empty"
    try:
        return serialization.load_pem_private_key(data, password=None), None
    except TypeError:
        return None, "is an encrypted private key; the PKI needs unencrypted PEM keys"
    except UnsupportedAlgorithm:
        return None, "holds a private key of an unsupported type"
    except ValueError:
        return None, "is not a PEM private key"


def examine(path, name, ca):
    """What is on disk for ``name`` (``<name>.crt`` and ``<name>.key`` under ``path``).

    Returns ``(cert, key, problem)``: ``problem`` is None when both load, the key matches and the
    certificate is a CA exactly when ``ca``; ``"missing"`` when neither file is there (for a leaf,
    also when one of them is missing: it is made again); else ``(file, why)``, what is broken, the
    file named relative to ``path`` (``cert`` is set when the certificate itself loaded)."""
    crt, key_file = name + ".crt", name + ".key"
    cert_pem, why = read_pem(os.path.join(path, crt))
    if why:
        return None, None, (crt, why)
    key_data, key_why = read_pem(os.path.join(path, key_file))
    cert = key = None
    if cert_pem is not None:
        cert, why = parse_cert(cert_pem)
        if why:
            return None, None, (crt, why)
    if key_why:
        return cert, None, (key_file, key_why)
    if key_data is not None:
        key, why = parse_key(key_data)
        if why:
            return cert, None, (key_file, why)
    if cert is None or key is None:
        if not ca or (cert is None and key is None):
            return cert, key, "missing"
        absent, there = (crt, key_file) if cert is None else (key_file, crt)
        return cert, key, (absent, "is missing while %s is there (half a CA)" % there)
    if public_bytes(key.public_key()) != public_bytes(cert.public_key()):
        return cert, key, (key_file, "does not match %s (it is another key pair's key)" % crt)
    if ca and not is_ca(cert):
        return cert, key, (crt, "is not a CA certificate (no BasicConstraints CA:TRUE)")
    if ca and not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        return cert, key, (key_file, "holds a key of type %s; a CA here signs with an RSA or ECDSA key"
                           % type(key).__name__.replace("PrivateKey", ""))
    if not ca and is_ca(cert):
        return cert, key, (crt, "is a CA certificate where a leaf certificate belongs")
    return cert, key, None


def examine_sa(path):
    """The service-account key pair (``sa.key``, ``sa.pub``): None, ``"missing"`` (neither file)
    or ``(file, why)``."""
    key_data, why = read_pem(os.path.join(path, "sa.key"))
    if why:
        return ("sa.key", why)
    pub_data, why = read_pem(os.path.join(path, "sa.pub"))
    if why:
        return ("sa.pub", why)
    if key_data is None and pub_data is None:
        return "missing"
    if key_data is None or pub_data is None:
        absent, there = ("sa.key", "sa.pub") if key_data is None else ("sa.pub", "sa.key")
        return (absent, "is missing while %s is there (half a key pair)" % there)
    key, why = parse_key(key_data)
    if why:
        return ("sa.key", why)
    try:
        pub = serialization.load_pem_public_key(pub_data)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return ("sa.pub", "is empty" if not pub_data.strip() else "is not a PEM public key")
    if public_bytes(key.public_key()) != public_bytes(pub):
        return ("sa.pub", "does not match sa.key")
    if not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        return ("sa.key", "holds a key of type %s; service-account tokens are signed with RSA or ECDSA"
                % type(key).__name__.replace("PrivateKey", ""))
    return None


def public_bytes(pub):
    return pub.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def key_type(key):
    if isinstance(key, rsa.RSAPrivateKey):
        return "rsa"
    if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
        return "ecdsa"
    return "other"


def not_after(cert):
    try:
        return cert.not_valid_after_utc
    except AttributeError:  # cryptography < 42
        return cert.not_valid_after.replace(tzinfo=datetime.timezone.utc)


def subject_of(cert):
    cn = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    orgs = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    return (cn[0] if cn else None), tuple(orgs)


def sans_of(cert):
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return (), ()
    dns = tuple(sorted(set(ext.get_values_for_type(x509.DNSName))))
    ips = tuple(sorted(set(ext.get_values_for_type(x509.IPAddress)), key=lambda a: (a.version, int(a))))
    return dns, ips


def usages_of(cert):
    try:
        ext = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return ()
    names = []
    if ExtendedKeyUsageOID.SERVER_AUTH in ext:
        names.append(SERVER)
    if ExtendedKeyUsageOID.CLIENT_AUTH in ext:
        names.append(CLIENT)
    return tuple(sorted(names))


def is_ca(cert):
    try:
        return cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        return False


def issued_by(cert, ca_cert):
    if cert.issuer != ca_cert.subject:
        return False
    try:
        cert.verify_directly_issued_by(ca_cert)
    except Exception:  # InvalidSignature, or a key type the issuer cannot verify
        return False
    return True


def leaf_problem(cs, cert, key, ca_cert, spec, now):
    """Why an existing, loadable leaf certificate must be renewed (None: keep it)."""
    if not issued_by(cert, ca_cert):
        return "CA changed"
    if key_type(key) != spec["key_type"]:
        return "key type changed (%s -> %s)" % (key_type(key), spec["key_type"])
    if subject_of(cert) != (cs.cn, cs.orgs):
        return "subject changed"
    if sans_of(cert) != (cs.dns, cs.ips):
        return "SANs changed"
    if usages_of(cert) != cs.usages:
        return "key usages changed"
    if not_after(cert) - now < datetime.timedelta(days=spec["renew_before_days"]):
        return "expiring %s" % not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def describe_cert(cert):
    cn, orgs = subject_of(cert)
    dns, ips = sans_of(cert)
    text = ", ".join(["CN=%s" % cn] + ["O=%s" % o for o in orgs])
    sans = list(dns) + [str(i) for i in ips]
    if sans:
        text += " SANs: " + ",".join(sans)
    return text + " notAfter: " + not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ")
