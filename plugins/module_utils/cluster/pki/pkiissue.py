# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: issuing the PKI's keys and certificates (``cryptography``).

:func:`new_key` makes a key of the request's type, :func:`build_cert` a self-signed CA or a leaf signed
by its CA (never outliving it, backdated a few minutes for clock skew); :func:`key_pem` /
:func:`cert_pem` are what is written.
"""

from __future__ import annotations

import datetime

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
except ImportError:  # pragma: no cover - pkicert.HAS_CRYPTOGRAPHY says so before anything here is called
    pass

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkicert import not_after
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import CLIENT, SERVER

_BACKDATE = datetime.timedelta(minutes=5)


def new_key(key_type):
    if key_type == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())


def _name(cn, orgs=()):
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def build_cert(cs, key, issuer_cert, issuer_key, days, now):
    subject = _name(cs.cn, cs.orgs)
    until = now + datetime.timedelta(days=days)
    if not cs.is_ca:  # a leaf never outlives the CA that signs it (a CA made long ago has less left)
        until = min(until, not_after(issuer_cert))
    builder = (x509.CertificateBuilder()
               .subject_name(subject)
               .issuer_name(subject if cs.is_ca else issuer_cert.subject)
               .public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - _BACKDATE)
               .not_valid_after(until)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False))
    rsa_key = isinstance(key, rsa.RSAPrivateKey)
    if cs.is_ca:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=rsa_key, data_encipherment=False,
            key_agreement=False, key_cert_sign=True, crl_sign=False, encipher_only=False, decipher_only=False),
            critical=True)
        signer = key
    else:
        builder = builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=rsa_key, data_encipherment=False,
            key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False),
            critical=True)
        oids = {SERVER: ExtendedKeyUsageOID.SERVER_AUTH, CLIENT: ExtendedKeyUsageOID.CLIENT_AUTH}
        builder = builder.add_extension(x509.ExtendedKeyUsage([oids[u] for u in cs.usages]), critical=False)
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            issuer_cert.public_key()), critical=False)
        if cs.dns or cs.ips:
            sans = [x509.DNSName(d) for d in cs.dns] + [x509.IPAddress(i) for i in cs.ips]
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        signer = issuer_key
    return builder.sign(signer, hashes.SHA256())


def key_pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def cert_pem(cert):
    return cert.public_bytes(serialization.Encoding.PEM)


def public_pem(key):
    """The PEM public key of ``key`` (``sa.pub``)."""
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
