# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the cluster PKI, made on the controller in one call.

:func:`ensure_pki` writes (or, in check mode, only plans) the whole kubeadm file layout
under one directory: the three CAs, the service-account key pair, the API server and
front-proxy certificates, one server and one peer certificate per etcd member, the etcd
health-check client, and the client certificates behind every kubeconfig (admin,
super-admin, controller-manager, scheduler, one per kubelet).

Decide, then act: :func:`plan_pki` looks at what is on disk and says, for every
certificate, whether it is kept, created or renewed and why (missing, expiring within the
renew threshold, subject/SANs/usages no longer matching the inventory, or issued by another
CA), or refused. :func:`ensure_pki` applies that plan only when nothing is refused. Only the
``cryptography`` library is used; nothing is shelled out. Directories are 0700, private keys
0600, certificates 0644; every write is atomic (temporary file + rename).

What is on disk is judged before anything is written or chmod-ed. A CA (or the
service-account key pair) that is present but broken - unreadable, half there, not a CA, its
key not matching, or expiring - is refused: a new CA is made only when the caller names it in
``new_ca``, because it re-issues everything it signed. A broken leaf (unreadable, its key not
matching, a CA where a leaf belongs) is refused unless named in ``force`` or the caller's policy
says ``reissue_broken``. Symbolic links and special files inside the directory are refused (the
directory itself may be a link); files are read without following links, without blocking and
at most :data:`MAX_PEM_BYTES` each.

Subjects follow kubeadm (v1.29+): ``apiserver-kubelet-client`` and ``admin`` carry
O=kubeadm:cluster-admins, ``super-admin`` O=system:masters, kubelets
CN=system:node:<name>, O=system:nodes.
"""

from __future__ import annotations

import datetime
import errno
import ipaddress
import os
import re
import stat

try:
    from cryptography import x509
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    HAS_CRYPTOGRAPHY = True
    CRYPTOGRAPHY_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - exercised by sanity's import test only
    HAS_CRYPTOGRAPHY = False
    CRYPTOGRAPHY_IMPORT_ERROR = _exc

    class UnsupportedAlgorithm(Exception):  # noqa: N818 - cryptography's name, for the except clauses
        """Stands in for cryptography's exception when the library is missing."""

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.yamlio import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.spec.network import host_problem, service_network_problem


class PKIError(MooringError):
    """The PKI request is invalid, or the PKI directory cannot be read or written."""


KEY_TYPES = ("ecdsa", "rsa")
DEFAULTS = {
    "cluster_domain": "cluster.local",
    "service_cidr": "10.96.0.0/12",
    "control_plane_endpoint": "",
    "control_plane": [],
    "etcd": [],
    "kubelets": [],
    "key_type": "ecdsa",
    "ca_validity_days": 3650,
    "validity_days": 365,
    "renew_before_days": 30,
}
CLUSTER_ADMINS = "kubeadm:cluster-admins"
SYSTEM_MASTERS = "system:masters"
SERVER = "server"
CLIENT = "client"
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_BACKDATE = datetime.timedelta(minutes=5)
# Options of one run, not of the certificates: never part of a request (a --config file).
RUN_OPTIONS = ("new_ca", "reissue_broken")
# A PEM certificate or key is a few KiB; a file larger than this is not one (and is not read).
MAX_PEM_BYTES = 1 << 20


class CertSpec:
    """What one certificate must look like. ``name`` is its path under the PKI directory
    without extension (``etcd/ca``, ``apiserver``, ``etcd/members/e1/server``)."""

    __slots__ = ("name", "ca", "cn", "orgs", "usages", "dns", "ips")

    def __init__(self, name, cn, ca=None, orgs=(), usages=(), dns=(), ips=()):
        self.name = name
        self.ca = ca
        self.cn = cn
        self.orgs = tuple(orgs)
        self.usages = tuple(sorted(usages))
        self.dns = tuple(sorted(set(dns)))
        self.ips = tuple(sorted(set(ips), key=lambda a: (a.version, int(a))))

    @property
    def is_ca(self):
        return self.ca is None

    def describe(self):
        """A short, stable, secret-free text used in diffs."""
        parts = ["CN=%s" % self.cn] + ["O=%s" % o for o in self.orgs]
        text = ", ".join(parts)
        if self.is_ca:
            return text + " (CA)"
        text += " [%s]" % ",".join(self.usages)
        sans = list(self.dns) + [str(ip) for ip in self.ips]
        if sans:
            text += " SANs: " + ",".join(sans)
        return text + " issuer: " + self.ca


# ---------------------------------------------------------------------------------------
# Input


def _listed(items, limit=10):
    """Names for a message: sorted, each shown plain when short and simple, else as an excerpt,
    at most ``limit`` of them."""
    shown = sorted(i if isinstance(i, str) and re.fullmatch(r"[\w./:@-]{1,60}", i) else excerpt(i, 60) for i in items)
    more = len(shown) - limit
    return ", ".join(shown[:limit]) + (" and %d more" % more if more > 0 else "")


def _field_list(value, field):
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise PKIError("%s must be a list, got %s" % (field, excerpt(value)))
    return list(value)


def _parse_ip(text, field):
    try:
        return ipaddress.ip_address(str(text))
    except ValueError:
        raise PKIError("%s: %s is not an IP address; give addresses as IPv4/IPv6 literals and host names "
                       "under 'names'" % (field, excerpt(text))) from None


def _check_name(text, field):
    if not isinstance(text, str) or len(text) > 253 or not _DNS1123.fullmatch(text):
        raise PKIError("%s: %s is not a valid DNS-1123 name (lower-case letters, digits, '-' and '.')"
                       % (field, excerpt(text)))
    return text


def _members(value, field):
    out = []
    seen = set()
    for i, item in enumerate(_field_list(value, field)):
        where = "%s[%d]" % (field, i)
        if isinstance(item, str):
            item = {"name": item}
        if not isinstance(item, dict) or "name" not in item:
            raise PKIError("%s must be a mapping with 'name' (and optional 'addresses', 'names'), got %s"
                           % (where, excerpt(item)))
        unknown = set(item) - {"name", "addresses", "names"}
        if unknown:
            raise PKIError("%s: unknown key(s) %s; allowed: name, addresses, names" % (where, _listed(unknown)))
        name = _check_name(item["name"], where + ".name")
        if name in seen:
            raise PKIError("%s.name: %s appears twice in %s" % (where, excerpt(name), field))
        seen.add(name)
        addresses = [_parse_ip(a, "%s.addresses[%d]" % (where, j))
                     for j, a in enumerate(_field_list(item.get("addresses"), where + ".addresses"))]
        names = [_check_name(n, "%s.names[%d]" % (where, j))
                 for j, n in enumerate(_field_list(item.get("names"), where + ".names"))]
        out.append({"name": name, "addresses": addresses, "names": names})
    return out


# The longest validity and look-ahead in days (100 years): X.509 dates end in 9999, Python's at year 9999 too,
# and nobody means more.
MAX_DAYS = 36500


def _positive_int(spec, field):
    value = spec[field]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PKIError("%s must be a positive integer (days), got %s" % (field, excerpt(value)))
    if value > MAX_DAYS:
        raise PKIError("%s must be at most %d days (100 years), got %d" % (field, MAX_DAYS, value))
    return value


def normalize(spec):
    """Validate a PKI request and fill in defaults. Raises :class:`PKIError` naming the field."""
    if not isinstance(spec, dict):
        raise PKIError("the PKI request must be a mapping, got %s" % excerpt(spec))
    unknown = set(spec) - set(DEFAULTS)
    if unknown:
        raise PKIError("unknown PKI option(s): %s; allowed: %s" % (_listed(unknown), ", ".join(sorted(DEFAULTS))))
    out = dict(DEFAULTS)
    out.update({k: v for k, v in spec.items() if v is not None})
    if out["key_type"] not in KEY_TYPES:
        raise PKIError("key_type: %s is not one of %s" % (excerpt(out["key_type"]), ", ".join(KEY_TYPES)))
    for field in ("ca_validity_days", "validity_days", "renew_before_days"):
        _positive_int(out, field)
    if out["validity_days"] > out["ca_validity_days"]:
        raise PKIError("validity_days (%d) must not be longer than ca_validity_days (%d): a certificate would outlive "
                       "the CA that signs it" % (out["validity_days"], out["ca_validity_days"]))
    if out["renew_before_days"] >= out["validity_days"]:
        raise PKIError("renew_before_days (%d) must be smaller than validity_days (%d), otherwise every run "
                       "renews every certificate" % (out["renew_before_days"], out["validity_days"]))
    _check_name(out["cluster_domain"], "cluster_domain")
    try:
        net = ipaddress.ip_network(str(out["service_cidr"]), strict=True)
    except ValueError as exc:
        raise PKIError("service_cidr: %s is not a network in CIDR form (%s)"
                       % (excerpt(out["service_cidr"]), str(exc)[:120])) from None
    why = service_network_problem(net)
    if why:
        raise PKIError("service_cidr: %s %s" % (net, why))
    out["service_ip"] = net.network_address + 1
    out["control_plane"] = _members(out["control_plane"], "control_plane")
    out["etcd"] = _members(out["etcd"], "etcd")
    kubelets = []
    for i, k in enumerate(_field_list(out["kubelets"], "kubelets")):
        name = k.get("name") if isinstance(k, dict) else k
        name = _check_name(name, "kubelets[%d]" % i)
        if name not in kubelets:
            kubelets.append(name)
    out["kubelets"] = kubelets
    endpoint = out["control_plane_endpoint"] or ""
    if not isinstance(endpoint, str):
        raise PKIError("control_plane_endpoint must be a string (host, host:port or [v6]:port), got %s"
                       % excerpt(endpoint))
    host = endpoint
    if endpoint.startswith("["):
        host = endpoint[1:].split("]", 1)[0]
    elif endpoint.count(":") == 1:
        host = endpoint.rsplit(":", 1)[0]
    out["endpoint_host"] = host
    if host:
        why = host_problem("[%s]" % host if ":" in host else host)  # host holds an IPv6 address unbracketed
        if why:
            raise PKIError("control_plane_endpoint: %s" % why)
        try:
            ipaddress.ip_address(host)
        except ValueError:
            _check_name(host, "control_plane_endpoint")
    return out


INVENTORY_GROUPS = {"control_plane": "control_plane", "etcd": "etcd", "workers": "workers"}


def _host_address(name, hostvars):
    hv = hostvars.get(name) or {}
    for var in ("mooring_address", "ansible_host"):
        value = hv.get(var)
        if value:
            try:
                return [str(ipaddress.ip_address(str(value)))], []
            except ValueError:
                return [], [str(value)]
    try:
        return [str(ipaddress.ip_address(name))], []
    except ValueError:
        return [], []


def request_from_inventory(groups, hostvars, names=None):
    """The ``control_plane``, ``etcd`` and ``kubelets`` parts of a PKI request, from the inventory:
    hosts of the groups ``control_plane``, ``etcd`` and ``workers`` (``names`` overrides these group
    names); a host's address is its ``mooring_address``, else its ``ansible_host``. Every playbook
    derives the PKI the same way, so no two of them disagree on SANs."""
    names = dict(INVENTORY_GROUPS, **(names or {}))
    out = {}
    for part in ("control_plane", "etcd"):
        members = []
        for host in groups.get(names[part]) or []:
            addresses, dns = _host_address(host, hostvars)
            members.append({"name": host, "addresses": addresses, "names": [d for d in dns if d != host]})
        out[part] = members
    kubelets = []
    for host in list(groups.get(names["control_plane"]) or []) + list(groups.get(names["workers"]) or []):
        if host not in kubelets:
            kubelets.append(host)
    out["kubelets"] = kubelets
    return out


def plan_specs(spec):
    """Every certificate of the cluster as :class:`CertSpec`, CAs first. ``spec`` is normalised."""
    specs = [
        CertSpec("ca", "kubernetes"),
        CertSpec("etcd/ca", "etcd-ca"),
        CertSpec("front-proxy-ca", "front-proxy-ca"),
    ]
    domain = spec["cluster_domain"]
    dns = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + domain]
    ips = [spec["service_ip"]]
    for cp in spec["control_plane"]:
        dns.append(cp["name"])
        dns.extend(cp["names"])
        ips.extend(cp["addresses"])
    host = spec["endpoint_host"]
    if host:
        try:
            ips.append(ipaddress.ip_address(host))
        except ValueError:
            dns.append(host)
    specs += [
        CertSpec("apiserver", "kube-apiserver", "ca", usages=[SERVER], dns=dns, ips=ips),
        CertSpec("apiserver-kubelet-client", "kube-apiserver-kubelet-client", "ca",
                 orgs=[CLUSTER_ADMINS], usages=[CLIENT]),
        CertSpec("front-proxy-client", "front-proxy-client", "front-proxy-ca", usages=[CLIENT]),
        CertSpec("apiserver-etcd-client", "kube-apiserver-etcd-client", "etcd/ca", usages=[CLIENT]),
        CertSpec("etcd/healthcheck-client", "kube-etcd-healthcheck-client", "etcd/ca", usages=[CLIENT]),
    ]
    loopback = [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]
    for member in spec["etcd"]:
        m_dns = [member["name"], "localhost"] + member["names"]
        m_ips = member["addresses"] + loopback
        for kind in ("server", "peer"):
            specs.append(CertSpec("etcd/members/%s/%s" % (member["name"], kind), member["name"], "etcd/ca",
                                  usages=[SERVER, CLIENT], dns=m_dns, ips=m_ips))
    specs += [
        CertSpec("kubeconfig/admin", "kubernetes-admin", "ca", orgs=[CLUSTER_ADMINS], usages=[CLIENT]),
        CertSpec("kubeconfig/super-admin", "kubernetes-super-admin", "ca", orgs=[SYSTEM_MASTERS], usages=[CLIENT]),
        CertSpec("kubeconfig/controller-manager", "system:kube-controller-manager", "ca", usages=[CLIENT]),
        CertSpec("kubeconfig/scheduler", "system:kube-scheduler", "ca", usages=[CLIENT]),
    ]
    for node in spec["kubelets"]:
        specs.append(CertSpec("kubeconfig/kubelet-%s" % node, "system:node:%s" % node, "ca",
                              orgs=["system:nodes"], usages=[CLIENT]))
    return specs


# ---------------------------------------------------------------------------------------
# Reading what is on disk: never through a link, never blocking, never more than a PEM file


_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_MAX_PROBLEMS = 20


def _shown(path):
    """A path as a message may show it: bounded, non-printable characters escaped."""
    if not path.isprintable():
        return excerpt(path, 300)
    return path if len(path) <= 300 else "..." + path[-297:]


def _capped(lines, limit=_MAX_PROBLEMS):
    more = len(lines) - limit
    return lines[:limit] + (["... and %d more" % more] if more > 0 else [])


def check_tree(path):
    """Refuse symbolic links, hard links (a file with another name, maybe outside) and special files (FIFOs,
    sockets, devices) anywhere inside the directory ``path`` (``path`` itself may be a link to a directory): one
    problem per entry, before anything reads, writes or chmods there. A missing ``path`` passes."""
    if not os.path.isdir(path):
        return
    bad = []
    pending = [path]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            raise PKIError("cannot read %s: %s" % (_shown(directory), exc.strerror or exc)) from None
        for entry in entries:
            if entry.is_symlink():
                bad.append("%s is a symbolic link" % _shown(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif not entry.is_file(follow_symlinks=False):
                bad.append("%s is a special file (FIFO, socket or device)" % _shown(entry.path))
            elif entry.stat(follow_symlinks=False).st_nlink > 1:
                bad.append("%s is a hard link (%d names)" % (_shown(entry.path), entry.stat(follow_symlinks=False).st_nlink))
    if bad:
        bad.sort()
        raise PKIError("the PKI directory %s holds links or special files" % _shown(path), problems=_capped(
            ["%s; the PKI directory holds only regular files and directories (nothing is read, written or "
             "chmod-ed through a link): replace it with the file itself or remove it" % b for b in bad]))


def _read(path):
    """``(data, None)`` for a regular file, ``(None, None)`` when there is none, ``(None, why)``
    when it cannot be taken (unreadable, larger than :data:`MAX_PEM_BYTES`). A link is not
    followed and a FIFO does not block; a link, a directory or a special file where a file
    belongs is a :class:`PKIError`."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PKIError("%s is a symbolic link; the PKI directory holds only regular files and directories"
                           % _shown(path)) from None
        if exc.errno == errno.ENOTDIR:
            head = os.path.dirname(path)
            while not os.path.exists(head) and os.path.dirname(head) != head:
                head = os.path.dirname(head)
            raise PKIError("%s is a file where a directory of the PKI belongs (it should hold %s)"
                           % (_shown(head), os.path.relpath(path, head))) from None
        return None, "cannot be read (%s)" % (exc.strerror or exc)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise PKIError("%s is a directory where a certificate or key file belongs" % _shown(path))
        if not stat.S_ISREG(st.st_mode):
            raise PKIError("%s is a special file (FIFO, socket or device); the PKI directory holds only regular "
                           "files and directories" % _shown(path))
        if st.st_size > MAX_PEM_BYTES:
            return None, "is %d bytes, more than a PEM file holds (at most %d)" % (st.st_size, MAX_PEM_BYTES)
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_PEM_BYTES:
                return None, "is more than %d bytes, more than a PEM file holds" % MAX_PEM_BYTES
            chunks.append(chunk)
        return b"".join(chunks), None
    except OSError as exc:
        return None, "cannot be read (%s)" % (exc.strerror or exc)
    finally:
        os.close(fd)


def _parse_cert(data):
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
        _subject_of(cert)
        _sans_of(cert)
        _usages_of(cert)
        _is_ca(cert)
        cert.issuer  # noqa: B018
        _public_bytes(cert.public_key())
        _not_after(cert)
    except Exception:  # noqa: BLE001 - whatever a hostile certificate makes cryptography raise
        return None, "is a malformed certificate (its extensions, names or public key cannot be read)"
    return cert, None


def _parse_key(data):
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


def _examine(path, name, ca):
    """What is on disk for ``name`` (``<name>.crt`` and ``<name>.key`` under ``path``).

    Returns ``(cert, key, problem)``: ``problem`` is None when both load, the key matches and the
    certificate is a CA exactly when ``ca``; ``"missing"`` when neither file is there (for a leaf,
    also when one of them is missing: it is made again); else ``(file, why)``, what is broken, the
    file named relative to ``path`` (``cert`` is set when the certificate itself loaded)."""
    crt, key_file = name + ".crt", name + ".key"
    cert_pem, why = _read(os.path.join(path, crt))
    if why:
        return None, None, (crt, why)
    key_pem, key_why = _read(os.path.join(path, key_file))
    cert = key = None
    if cert_pem is not None:
        cert, why = _parse_cert(cert_pem)
        if why:
            return None, None, (crt, why)
    if key_why:
        return cert, None, (key_file, key_why)
    if key_pem is not None:
        key, why = _parse_key(key_pem)
        if why:
            return cert, None, (key_file, why)
    if cert is None or key is None:
        if not ca or (cert is None and key is None):
            return cert, key, "missing"
        absent, there = (crt, key_file) if cert is None else (key_file, crt)
        return cert, key, (absent, "is missing while %s is there (half a CA)" % there)
    if _public_bytes(key.public_key()) != _public_bytes(cert.public_key()):
        return cert, key, (key_file, "does not match %s (it is another key pair's key)" % crt)
    if ca and not _is_ca(cert):
        return cert, key, (crt, "is not a CA certificate (no BasicConstraints CA:TRUE)")
    if ca and not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        return cert, key, (key_file, "holds a key of type %s; a CA here signs with an RSA or ECDSA key"
                           % type(key).__name__.replace("PrivateKey", ""))
    if not ca and _is_ca(cert):
        return cert, key, (crt, "is a CA certificate where a leaf certificate belongs")
    return cert, key, None


def _examine_sa(path):
    """The service-account key pair (``sa.key``, ``sa.pub``): None, ``"missing"`` (neither file)
    or ``(file, why)``."""
    key_pem, why = _read(os.path.join(path, "sa.key"))
    if why:
        return ("sa.key", why)
    pub_pem, why = _read(os.path.join(path, "sa.pub"))
    if why:
        return ("sa.pub", why)
    if key_pem is None and pub_pem is None:
        return "missing"
    if key_pem is None or pub_pem is None:
        absent, there = ("sa.key", "sa.pub") if key_pem is None else ("sa.pub", "sa.key")
        return (absent, "is missing while %s is there (half a key pair)" % there)
    key, why = _parse_key(key_pem)
    if why:
        return ("sa.key", why)
    try:
        pub = serialization.load_pem_public_key(pub_pem)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return ("sa.pub", "is empty" if not pub_pem.strip() else "is not a PEM public key")
    if _public_bytes(key.public_key()) != _public_bytes(pub):
        return ("sa.pub", "does not match sa.key")
    if not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        return ("sa.key", "holds a key of type %s; service-account tokens are signed with RSA or ECDSA"
                % type(key).__name__.replace("PrivateKey", ""))
    return None


def _public_bytes(pub):
    return pub.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _key_type(key):
    if isinstance(key, rsa.RSAPrivateKey):
        return "rsa"
    if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
        return "ecdsa"
    return "other"


def _not_after(cert):
    try:
        return cert.not_valid_after_utc
    except AttributeError:  # cryptography < 42
        return cert.not_valid_after.replace(tzinfo=datetime.timezone.utc)


def _subject_of(cert):
    cn = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    orgs = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    return (cn[0] if cn else None), tuple(orgs)


def _sans_of(cert):
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return (), ()
    dns = tuple(sorted(set(ext.get_values_for_type(x509.DNSName))))
    ips = tuple(sorted(set(ext.get_values_for_type(x509.IPAddress)), key=lambda a: (a.version, int(a))))
    return dns, ips


def _usages_of(cert):
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


def _is_ca(cert):
    try:
        return cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        return False


def _issued_by(cert, ca_cert):
    if cert.issuer != ca_cert.subject:
        return False
    try:
        cert.verify_directly_issued_by(ca_cert)
    except Exception:  # InvalidSignature, or a key type the issuer cannot verify
        return False
    return True


def _leaf_problem(cs, cert, key, ca_cert, spec, now):
    """Why an existing, loadable leaf certificate must be renewed (None: keep it)."""
    if not _issued_by(cert, ca_cert):
        return "CA changed"
    if _key_type(key) != spec["key_type"]:
        return "key type changed (%s -> %s)" % (_key_type(key), spec["key_type"])
    if _subject_of(cert) != (cs.cn, cs.orgs):
        return "subject changed"
    if _sans_of(cert) != (cs.dns, cs.ips):
        return "SANs changed"
    if _usages_of(cert) != cs.usages:
        return "key usages changed"
    if _not_after(cert) - now < datetime.timedelta(days=spec["renew_before_days"]):
        return "expiring %s" % _not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


# ---------------------------------------------------------------------------------------
# Making


def _new_key(key_type):
    if key_type == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())


def _name(cn, orgs=()):
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def _build(cs, key, issuer_cert, issuer_key, days, now):
    subject = _name(cs.cn, cs.orgs)
    not_after = now + datetime.timedelta(days=days)
    if not cs.is_ca:  # a leaf never outlives the CA that signs it (a CA made long ago has less left)
        not_after = min(not_after, _not_after(issuer_cert))
    builder = (x509.CertificateBuilder()
               .subject_name(subject)
               .issuer_name(subject if cs.is_ca else issuer_cert.subject)
               .public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - _BACKDATE)
               .not_valid_after(not_after)
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


def _key_pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def _cert_pem(cert):
    return cert.public_bytes(serialization.Encoding.PEM)


def _mkdirs(path):
    """Create ``path`` and any missing parents, every one it creates 0700."""
    try:
        missing = []
        head = path
        while head and not os.path.isdir(head):
            missing.append(head)
            head = os.path.dirname(head)
        for d in reversed(missing):
            os.mkdir(d, 0o700)
            os.chmod(d, 0o700)
    except OSError as exc:
        raise PKIError("cannot create PKI directory %s: %s" % (_shown(path), exc.strerror or exc)) from None


def write_atomic(path, data, mode):
    """Write ``data`` to ``path`` through a temporary file in the same directory, ``mode`` set
    before any byte is written."""
    _mkdirs(os.path.dirname(path))
    try:
        fileio.write_atomic(path, data, mode)
    except OSError as exc:
        raise PKIError("cannot write %s: %s" % (_shown(path), exc.strerror or exc)) from None


# ---------------------------------------------------------------------------------------
# Plan and apply


def _names(value, field):
    """The set of names in ``force`` / ``new_ca`` (a list of strings)."""
    items = _field_list(value, field)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise PKIError("%s[%d] must be a certificate name, got %s" % (field, i, excerpt(item)))
    return set(items)


def _ca_refusal(path, name, what, expiring=False):
    if name == "sa":
        hint = ("a new key pair is made only when asked: new_ca [sa] (CLI --new-ca sa); every service-account "
                "token signed with the old key stops being accepted")
    elif expiring:
        hint = ("a CA is not renewed in passing: rotate it (docs/pki.md, 'CA rotation'), starting with "
                "new_ca [%s] (CLI --new-ca %s)" % (name, name))
    else:
        hint = ("a CA is replaced only when asked: new_ca [%s] (CLI --new-ca %s) makes a new one and re-issues "
                "every certificate it signed (docs/pki.md, 'A new CA')" % (name, name))
    return "%s %s; %s" % (_shown(os.path.join(path, what[0])), what[1], hint)


def _leaf_refusal(path, name, what):
    return ("%s %s; re-issue it with force [%s] (CLI --force %s), or every broken leaf with reissue_broken "
            "(CLI --reissue-broken)" % (_shown(os.path.join(path, what[0])), what[1], name, name))


def plan_pki(path, request, now=None, force=(), new_ca=(), reissue_broken=False):
    """Decide, without writing anything, what happens to every file.

    Returns ``(spec, actions, loaded)``: ``actions`` is a list of dicts ``{name, action, reason,
    spec}`` with ``action`` one of ``keep``, ``create``, ``renew`` or ``refused`` (a broken file
    this run may not replace; ``error`` holds the line that says which file and why); CAs come
    first, ``sa`` last. ``force`` names leaf certificates (or ``all`` of them) to renew regardless,
    broken or not; ``new_ca`` names CAs (``ca``, ``etcd/ca``, ``front-proxy-ca``, ``sa``) to make
    anew; ``reissue_broken`` re-issues every broken leaf. Links and special files inside ``path``
    are a :class:`PKIError` (:func:`check_tree`).
    """
    if not HAS_CRYPTOGRAPHY:
        raise missing_library("cryptography", "for the PKI", CRYPTOGRAPHY_IMPORT_ERROR, PKIError)
    spec = normalize(request)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    force = _names(force, "force")
    new_ca = _names(new_ca, "new_ca")
    specs = plan_specs(spec)
    cas = {cs.name for cs in specs if cs.is_ca} | {"sa"}
    leaves = sorted(cs.name for cs in specs if not cs.is_ca)
    unknown = force - set(leaves) - cas - {"all"}
    if unknown:
        raise PKIError("force: unknown certificate(s) %s; known: all, %s"
                       % (_listed(unknown), _listed(leaves, limit=30)))
    if force & cas:
        raise PKIError("force: %s: a CA or the service-account key pair is not renewed by force; a new one is "
                       "asked for with new_ca (CLI --new-ca), see docs/pki.md 'A new CA'" % _listed(force & cas))
    unknown = new_ca - cas
    if unknown:
        raise PKIError("new_ca: %s is not a CA; known: %s" % (_listed(unknown), ", ".join(sorted(cas))))
    check_tree(path)
    forced = force if "all" not in force else set(leaves)
    ca_cns = {cs.cn: cs.name for cs in specs if cs.is_ca}
    renew_before = datetime.timedelta(days=spec["renew_before_days"])
    actions = []
    loaded = {}
    replaced_cas, refused_cas = set(), set()
    for cs in specs:
        cert, key, problem = _examine(path, cs.name, cs.is_ca)
        error = None
        if cs.is_ca:
            if problem is None and _subject_of(cert)[0] != cs.cn and _subject_of(cert)[0] in ca_cns:
                problem = (cs.name + ".crt", "is CN=%s, the subject of %s.crt (CA files swapped or copied?)"
                           % (_subject_of(cert)[0], ca_cns[_subject_of(cert)[0]]))
            if cs.name in new_ca:
                action, reason = ("create", "missing") if problem == "missing" else ("renew", "new CA (new_ca)")
            elif problem == "missing":
                action, reason = "create", "missing"
            elif problem is not None:
                action, reason, error = "refused", "%s %s" % problem, _ca_refusal(path, cs.name, problem)
            elif _not_after(cert) - now < renew_before:
                problem = (cs.name + ".crt", "expires %s, within renew_before_days (%d)"
                           % (_not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ"), spec["renew_before_days"]))
                action, reason = "refused", "%s %s" % problem
                error = _ca_refusal(path, cs.name, problem, expiring=True)
            else:
                action, reason = "keep", None
        elif cs.ca in refused_cas:
            # The run stops at its CA; still name what is broken here, so one run shows it all.
            if problem is None or problem == "missing":
                action, reason = "keep", "not checked: its CA is refused"
            else:
                action, reason, error = "refused", "%s %s" % problem, _leaf_refusal(path, cs.name, problem)
        elif problem == "missing":
            action, reason = "create", "missing"
        elif cs.ca in replaced_cas:
            action, reason = "renew", "CA changed"
        elif problem is not None:
            if reissue_broken or cs.name in forced:
                action, reason = "renew", "broken: %s %s" % problem
            else:
                action, reason, error = "refused", "%s %s" % problem, _leaf_refusal(path, cs.name, problem)
        else:
            reason = _leaf_problem(cs, cert, key, loaded[cs.ca][0], spec, now)
            if reason is None and cs.name in forced:
                reason = "forced"
            action = "keep" if reason is None else "renew"
        act = {"name": cs.name, "action": action, "reason": reason, "spec": cs}
        if action == "keep":
            loaded[cs.name] = (cert, key)
        else:
            act["old"] = cert
            loaded[cs.name] = (None, None)
        if error:
            act["error"] = error
        if cs.is_ca and action in ("create", "renew"):
            replaced_cas.add(cs.name)
        if cs.is_ca and action == "refused":
            refused_cas.add(cs.name)
        actions.append(act)
    problem = _examine_sa(path)
    act = {"name": "sa", "action": "keep", "reason": None, "spec": None}
    if "sa" in new_ca:
        act.update(action="create" if problem == "missing" else "renew",
                   reason="missing" if problem == "missing" else "new key pair (new_ca)")
    elif problem == "missing":
        act.update(action="create", reason="missing")
    elif problem is not None:
        act.update(action="refused", reason="%s %s" % problem, error=_ca_refusal(path, "sa", problem))
    actions.append(act)
    return spec, actions, loaded


def _stale(path, spec):
    """Member/kubelet certificate files on disk for hosts no longer in the request."""
    out = []
    members = os.path.join(path, "etcd", "members")
    wanted = {m["name"] for m in spec["etcd"]}
    if os.path.isdir(members):
        out += ["etcd/members/%s" % d for d in sorted(os.listdir(members)) if d not in wanted]
    kube = os.path.join(path, "kubeconfig")
    wanted_k = {"kubelet-%s.crt" % n for n in spec["kubelets"]}
    if os.path.isdir(kube):
        out += ["kubeconfig/%s" % f[:-4] for f in sorted(os.listdir(kube))
                if f.startswith("kubelet-") and f.endswith(".crt") and f not in wanted_k]
    return out


def _pki_dir(path, check_mode):
    """The PKI directory, absolute, after checking it is one (or can be made one)."""
    if not path or not isinstance(path, str):
        raise PKIError("path: give the PKI directory on the controller, got %s" % excerpt(path))
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.islink(path) and not os.path.exists(path):
        raise PKIError("path: %s is a symbolic link to nothing; point it at a directory or remove it" % _shown(path))
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise PKIError("path: %s exists and is not a directory" % _shown(path))
        if not check_mode and not os.access(path, os.W_OK | os.X_OK):
            raise PKIError("path: %s is not writable" % _shown(path))
        return path
    head = os.path.dirname(path)
    while not os.path.exists(head) and os.path.dirname(head) != head:
        head = os.path.dirname(head)
    if not os.path.isdir(head):
        raise PKIError("path: %s is below %s, which is not a directory" % (_shown(path), _shown(head)))
    if not check_mode and not os.access(head, os.W_OK | os.X_OK):
        raise PKIError("path: cannot create %s: %s is not writable" % (_shown(path), _shown(head)))
    return path


def ensure_pki(path, request, check_mode=False, now=None, force=(), new_ca=(), reissue_broken=False):
    """Make the PKI under ``path`` match ``request``; return what was done.

    ``force``, ``new_ca`` and ``reissue_broken`` are :func:`plan_pki`'s. When the plan refuses anything (a broken
    CA or key pair, a broken leaf nobody asked to re-issue) nothing is written or chmod-ed and a
    :class:`PKIError` lists every refused file.

    The result: ``changed``, ``created`` (names), ``renewed`` (``[{name, reason}]``), ``kept``,
    ``stale`` (files of hosts no longer in the request; never deleted), ``files``
    (``{name: {cert, key}}``, absolute paths) and ``diff`` (``before``/``after`` texts).
    Nothing secret is returned.
    """
    path = _pki_dir(path, check_mode)
    spec, actions, loaded = plan_pki(path, request, now=now, force=force, new_ca=new_ca,
                                     reissue_broken=reissue_broken)
    refused = [act["error"] for act in actions if act["action"] == "refused"]
    if refused:
        raise PKIError("the PKI under %s has broken files; nothing was written" % _shown(path),
                       problems=_capped(refused))
    now = now or datetime.datetime.now(datetime.timezone.utc)
    result = {"changed": False, "created": [], "renewed": [], "kept": [], "files": {}, "path": path,
              "diff": {"before": "", "after": ""}}
    before, after = [], []
    result["modes_fixed"] = _fix_modes(path, actions, check_mode)
    if result["modes_fixed"]:
        result["changed"] = True
        before += ["%s: mode %s" % (f, m) for f, m, _w in result["modes_fixed"]]
        after += ["%s: mode %s" % (f, w) for f, _m, w in result["modes_fixed"]]
        result["modes_fixed"] = [f for f, _m, _w in result["modes_fixed"]]
    if not check_mode:
        _mkdirs(path)
    for act in actions:
        name = act["name"]
        if name == "sa":
            result["files"]["sa"] = {"key": os.path.join(path, "sa.key"), "pub": os.path.join(path, "sa.pub")}
        else:
            result["files"][name] = {"cert": os.path.join(path, name + ".crt"),
                                     "key": os.path.join(path, name + ".key")}
        if act["action"] == "keep":
            result["kept"].append(name)
            continue
        result["changed"] = True
        if act["action"] == "create":
            result["created"].append(name)
        else:
            result["renewed"].append({"name": name, "reason": act["reason"]})
        cs = act["spec"]
        old = act.get("old")
        before.append("%s: %s" % (name, _describe_cert(old) if old is not None else "(absent)"))
        after.append("%s: %s" % (name, cs.describe() if cs else "service-account key pair (%s)" % spec["key_type"]))
        if check_mode:
            continue
        key = _new_key(spec["key_type"])
        if name == "sa":
            write_atomic(os.path.join(path, "sa.key"), _key_pem(key), 0o600)
            pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                                serialization.PublicFormat.SubjectPublicKeyInfo)
            write_atomic(os.path.join(path, "sa.pub"), pub, 0o644)
            continue
        if cs.is_ca:
            cert = _build(cs, key, None, None, spec["ca_validity_days"], now)
        else:
            ca_cert, ca_key = loaded[cs.ca]
            cert = _build(cs, key, ca_cert, ca_key, spec["validity_days"], now)
        base = os.path.join(path, cs.name)
        write_atomic(base + ".key", _key_pem(key), 0o600)
        write_atomic(base + ".crt", _cert_pem(cert), 0o644)
        loaded[cs.name] = (cert, key)
    result["stale"] = _stale(path, spec)
    if before:
        result["diff"] = {"before": "\n".join(before) + "\n", "after": "\n".join(after) + "\n",
                          "before_header": path, "after_header": path}
    return result


def _fix_modes(path, actions, check_mode):
    """Kept files and the directory tree back to 0700 (dirs), 0600 (keys), 0644 (certs).

    Every file is opened without following links (``path`` itself may be one) and its mode
    read and set through that descriptor, so no chmod lands outside the directory."""
    wanted = []
    if not os.path.isdir(path):
        return wanted
    for root, dirs, _files in os.walk(path):
        dirs.sort()
        wanted.append((root, 0o700, _O_DIRECTORY))
    for act in actions:
        if act["action"] != "keep" or act["reason"]:
            continue
        if act["name"] == "sa":
            wanted += [(os.path.join(path, "sa.key"), 0o600, 0), (os.path.join(path, "sa.pub"), 0o644, 0)]
        else:
            base = os.path.join(path, act["name"])
            wanted += [(base + ".key", 0o600, 0), (base + ".crt", 0o644, 0)]
    out = []
    for f, want, kind in wanted:
        flags = os.O_RDONLY | _O_NONBLOCK | kind
        if f != path:
            flags |= _O_NOFOLLOW
        try:
            fd = os.open(f, flags)
            try:
                have = stat.S_IMODE(os.fstat(fd).st_mode)
                if have != want:
                    out.append((os.path.relpath(f, path), "%04o" % have, "%04o" % want))
                    if not check_mode:
                        os.fchmod(fd, want)
            finally:
                os.close(fd)
        except OSError as exc:
            raise PKIError("cannot set the mode of %s: %s" % (_shown(f), exc.strerror or exc)) from None
    return out


def _describe_cert(cert):
    cn, orgs = _subject_of(cert)
    dns, ips = _sans_of(cert)
    text = ", ".join(["CN=%s" % cn] + ["O=%s" % o for o in orgs])
    sans = list(dns) + [str(i) for i in ips]
    if sans:
        text += " SANs: " + ",".join(sans)
    return text + " notAfter: " + _not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ")


def _existing_dir(path):
    if not path or not isinstance(path, str):
        raise PKIError("path: give the PKI directory, got %s" % excerpt(path))
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(path):
        raise PKIError("path: %s is not a directory; create the PKI first with 'mooring pki generate'" % _shown(path))
    return path


def inspect_pki(path):
    """Every certificate under ``path``: ``[{name, subject, not_after, days_left}]``; a broken one
    (unreadable, or its ``.key`` beside it not loading or not matching) is ``{name, error}``, the
    error naming the file. Links and special files inside ``path`` are a :class:`PKIError`."""
    path = _existing_dir(path)
    check_tree(path)
    now = datetime.datetime.now(datetime.timezone.utc)
    out = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".crt"):
                continue
            full = os.path.join(root, f)
            rel = os.path.relpath(full, path)
            name = rel[:-4]
            data, why = _read(full)
            cert = None
            if data is not None:
                cert, why = _parse_cert(data)
            if cert is None:
                out.append({"name": name, "error": "%s %s" % (rel, why or "vanished while being read")})
                continue
            key_pem, key_why = _read(full[:-4] + ".key")
            if key_why is None and key_pem is not None:
                key, key_why = _parse_key(key_pem)
                if key is not None and _public_bytes(key.public_key()) != _public_bytes(cert.public_key()):
                    key_why = "does not match %s" % rel
            if key_why:
                out.append({"name": name, "error": "%s.key %s" % (name, key_why)})
                continue
            out.append({"name": name, "subject": _describe_cert(cert),
                        "not_after": _not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "days_left": (_not_after(cert) - now).days})
    return sorted(out, key=lambda e: e["name"])


# ---------------------------------------------------------------------------------------
# Status: what expires when


def request_from_dir(path):
    """The host parts of a PKI request as the files under ``path`` show them: the etcd members
    (``etcd/members/<name>/``) and the kubelets (``kubeconfig/kubelet-<node>.crt``). With it,
    :func:`plan_specs` names every certificate the PKI made there without the inventory."""
    etcd, kubelets = [], []
    members = os.path.join(path, "etcd", "members")
    try:
        if os.path.isdir(members):
            etcd = sorted(d for d in os.listdir(members) if os.path.isdir(os.path.join(members, d)))
        kube = os.path.join(path, "kubeconfig")
        if os.path.isdir(kube):
            kubelets = sorted(f[len("kubelet-"):-len(".crt")] for f in os.listdir(kube)
                              if f.startswith("kubelet-") and f.endswith(".crt"))
    except OSError as exc:
        raise PKIError("cannot read %s: %s" % (_shown(path), exc.strerror or exc)) from None
    return {"etcd": [{"name": n} for n in etcd], "kubelets": kubelets}


def pki_status(path, request=None, days=None, now=None):
    """When each certificate of the PKI under ``path`` expires, and which are due.

    The certificates are the ones :func:`plan_specs` names (the same list :func:`plan_pki`
    renews); ``request`` gives the hosts (default: as found on disk, :func:`request_from_dir`).
    ``days``: due when expiring within that many days (default: the renew threshold,
    ``renew_before_days``). Returns ``{path, days, due, entries}``; an entry is ``{name, state,
    not_after, days_left, reason}`` with ``state`` one of ``ok``, ``due`` (expires within
    ``days``), ``expired``, ``missing``, ``unreadable`` (the certificate cannot be read),
    ``broken`` (it reads, but its key does not load or match, a CA is not one, a leaf is a CA, or
    half a CA / key pair is there: :func:`ensure_pki` refuses it) or ``no-expiry`` (the
    service-account key pair); ``due`` lists every entry that is not ``ok``/``no-expiry``.
    Reads only; links and special files inside ``path`` are a :class:`PKIError`."""
    if not HAS_CRYPTOGRAPHY:
        raise missing_library("cryptography", "for the PKI", CRYPTOGRAPHY_IMPORT_ERROR, PKIError)
    path = _existing_dir(path)
    if not os.access(path, os.R_OK | os.X_OK):
        raise PKIError("path: %s is not readable" % _shown(path))
    days = DEFAULTS["renew_before_days"] if days is None else days
    if isinstance(days, bool) or not isinstance(days, int) or days < 0 or days > MAX_DAYS:
        raise PKIError("days must be a whole number of days from 0 to %d, got %s" % (MAX_DAYS, excerpt(days)))
    check_tree(path)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if request is not None and not isinstance(request, dict):
        raise PKIError("the PKI request must be a mapping, got %s" % excerpt(request))
    request = dict(request_from_dir(path) if request is None else request)
    # Only the host parts matter for the names; the renew threshold is this call's.
    request.pop("renew_before_days", None)
    spec = normalize(request)
    entries = []
    for cs in plan_specs(spec):
        entry = {"name": cs.name, "state": "ok", "not_after": None, "days_left": None, "reason": None}
        cert, key, problem = _examine(path, cs.name, cs.is_ca)
        if cert is not None:
            left = _not_after(cert) - now
            entry["not_after"] = _not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ")
            entry["days_left"] = left.days
            if left <= datetime.timedelta(0):
                entry.update(state="expired", reason="expired")
            elif left < datetime.timedelta(days=days):
                entry.update(state="due", reason="expires within %d days" % days)
        if problem == "missing":
            entry.update(state="missing", reason="no %s.%s" % (cs.name, "crt" if cert is None else "key"))
        elif problem is not None:
            entry.update(state="broken" if cert is not None else "unreadable", reason="%s %s" % problem)
        entries.append(entry)
    sa = {"name": "sa", "state": "no-expiry", "not_after": None, "days_left": None,
          "reason": "service-account key pair: a key, not a certificate; it does not expire"}
    problem = _examine_sa(path)
    if problem == "missing":
        sa.update(state="missing", reason="no sa.key/sa.pub")
    elif problem is not None:
        sa.update(state="broken", reason="%s %s" % problem)
    entries.append(sa)
    due = [e["name"] for e in entries if e["state"] not in ("ok", "no-expiry")]
    return {"path": path, "days": days, "due": due, "entries": entries}
