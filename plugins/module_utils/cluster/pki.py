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
renew threshold, subject/SANs/usages no longer matching the inventory, key mismatch, or
issued by another CA). :func:`ensure_pki` applies that plan. Only the ``cryptography``
library is used; nothing is shelled out. Directories are 0700, private keys 0600,
certificates 0644; every write is atomic (temporary file + rename).

Subjects follow kubeadm (v1.29+): ``apiserver-kubelet-client`` and ``admin`` carry
O=kubeadm:cluster-admins, ``super-admin`` O=system:masters, kubelets
CN=system:node:<name>, O=system:nodes.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    HAS_CRYPTOGRAPHY = True
    CRYPTOGRAPHY_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - exercised by sanity's import test only
    HAS_CRYPTOGRAPHY = False
    CRYPTOGRAPHY_IMPORT_ERROR = _exc

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


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


def _field_list(value, field):
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise PKIError("%s must be a list, got %r" % (field, value))
    return list(value)


def _parse_ip(text, field):
    try:
        return ipaddress.ip_address(str(text))
    except ValueError:
        raise PKIError("%s: %r is not an IP address; give addresses as IPv4/IPv6 literals and host names "
                       "under 'names'" % (field, text)) from None


def _check_name(text, field):
    if not isinstance(text, str) or len(text) > 253 or not _DNS1123.match(text):
        raise PKIError("%s: %r is not a valid DNS-1123 name (lower-case letters, digits, '-' and '.')"
                       % (field, text))
    return text


def _members(value, field):
    out = []
    seen = set()
    for i, item in enumerate(_field_list(value, field)):
        where = "%s[%d]" % (field, i)
        if isinstance(item, str):
            item = {"name": item}
        if not isinstance(item, dict) or "name" not in item:
            raise PKIError("%s must be a mapping with 'name' (and optional 'addresses', 'names'), got %r"
                           % (where, item))
        unknown = sorted(set(item) - {"name", "addresses", "names"})
        if unknown:
            raise PKIError("%s: unknown key(s) %s; allowed: name, addresses, names" % (where, ", ".join(unknown)))
        name = _check_name(item["name"], where + ".name")
        if name in seen:
            raise PKIError("%s.name: %r appears twice in %s" % (where, name, field))
        seen.add(name)
        addresses = [_parse_ip(a, "%s.addresses[%d]" % (where, j))
                     for j, a in enumerate(_field_list(item.get("addresses"), where + ".addresses"))]
        names = [_check_name(n, "%s.names[%d]" % (where, j))
                 for j, n in enumerate(_field_list(item.get("names"), where + ".names"))]
        out.append({"name": name, "addresses": addresses, "names": names})
    return out


def _positive_int(spec, field):
    value = spec[field]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PKIError("%s must be a positive integer (days), got %r" % (field, value))
    return value


def normalize(spec):
    """Validate a PKI request and fill in defaults. Raises :class:`PKIError` naming the field."""
    if not isinstance(spec, dict):
        raise PKIError("the PKI request must be a mapping, got %r" % (spec,))
    unknown = sorted(set(spec) - set(DEFAULTS))
    if unknown:
        raise PKIError("unknown PKI option(s): %s; allowed: %s" % (", ".join(unknown), ", ".join(sorted(DEFAULTS))))
    out = dict(DEFAULTS)
    out.update({k: v for k, v in spec.items() if v is not None})
    if out["key_type"] not in KEY_TYPES:
        raise PKIError("key_type: %r is not one of %s" % (out["key_type"], ", ".join(KEY_TYPES)))
    for field in ("ca_validity_days", "validity_days", "renew_before_days"):
        _positive_int(out, field)
    if out["renew_before_days"] >= out["validity_days"]:
        raise PKIError("renew_before_days (%d) must be smaller than validity_days (%d), otherwise every run "
                       "renews every certificate" % (out["renew_before_days"], out["validity_days"]))
    _check_name(out["cluster_domain"], "cluster_domain")
    try:
        net = ipaddress.ip_network(str(out["service_cidr"]), strict=True)
    except ValueError as exc:
        raise PKIError("service_cidr: %r is not a network in CIDR form (%s)" % (out["service_cidr"], exc)) from None
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
    endpoint = str(out["control_plane_endpoint"] or "")
    host = endpoint
    if endpoint.startswith("["):
        host = endpoint[1:].split("]", 1)[0]
    elif endpoint.count(":") == 1:
        host = endpoint.rsplit(":", 1)[0]
    out["endpoint_host"] = host
    if host:
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
# Reading what is on disk


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PKIError("cannot read %s: %s" % (path, exc)) from None


def _load_pair(base):
    """(cert, key, problem): problem is None when both load and match."""
    cert_pem, key_pem = _read(base + ".crt"), _read(base + ".key")
    if cert_pem is None or key_pem is None:
        return None, None, "missing"
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError):
        return None, None, "unreadable"
    if _public_bytes(key.public_key()) != _public_bytes(cert.public_key()):
        return cert, key, "key mismatch"
    return cert, key, None


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
    builder = (x509.CertificateBuilder()
               .subject_name(subject)
               .issuer_name(subject if cs.is_ca else issuer_cert.subject)
               .public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - _BACKDATE)
               .not_valid_after(now + datetime.timedelta(days=days))
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
        raise PKIError("cannot create PKI directory %s: %s" % (path, exc)) from None


def write_atomic(path, data, mode):
    """Write ``data`` to ``path`` through a temporary file in the same directory, ``mode`` set
    before any byte is written."""
    _mkdirs(os.path.dirname(path))
    try:
        fileio.write_atomic(path, data, mode)
    except OSError as exc:
        raise PKIError("cannot write %s: %s" % (path, exc)) from None


# ---------------------------------------------------------------------------------------
# Plan and apply


def plan_pki(path, request, now=None, force=()):
    """Decide, without writing anything, what happens to every file.

    Returns ``(spec, actions)``: ``actions`` is a list of dicts ``{name, action, reason, spec}``
    with ``action`` one of ``keep``, ``create``, ``renew``; CAs come first. ``force`` names
    certificates (or ``all``) to renew regardless.
    """
    if not HAS_CRYPTOGRAPHY:
        raise PKIError("the Python library 'cryptography' is required on the controller: %s"
                       % CRYPTOGRAPHY_IMPORT_ERROR)
    spec = normalize(request)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    force = set(force or ())
    specs = plan_specs(spec)
    names = {cs.name for cs in specs}
    unknown = sorted(force - names - {"all", "sa"})
    if unknown:
        raise PKIError("force: unknown certificate(s) %s; known: all, sa, %s"
                       % (", ".join(unknown), ", ".join(sorted(names))))
    actions = []
    loaded = {}
    replaced_cas = set()
    for cs in specs:
        base = os.path.join(path, cs.name)
        cert, key, problem = _load_pair(base)
        if cs.is_ca:
            if problem is None and not _is_ca(cert):
                problem = "not a CA"
            if problem is None and _not_after(cert) - now < datetime.timedelta(days=spec["renew_before_days"]):
                problem = "expiring %s" % _not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ")
        else:
            if problem is None:
                if cs.ca in replaced_cas:
                    problem = "CA changed"
                else:
                    problem = _leaf_problem(cs, cert, key, loaded[cs.ca][0], spec, now)
        if problem is None and (cs.name in force or "all" in force):
            problem = "forced"
        if problem is None:
            actions.append({"name": cs.name, "action": "keep", "reason": None, "spec": cs})
            loaded[cs.name] = (cert, key)
        else:
            action = "create" if problem == "missing" else "renew"
            actions.append({"name": cs.name, "action": action, "reason": problem, "spec": cs, "old": cert})
            loaded[cs.name] = (None, None)
            if cs.is_ca:
                replaced_cas.add(cs.name)
    sa_key = _read(os.path.join(path, "sa.key"))
    sa_pub = _read(os.path.join(path, "sa.pub"))
    sa_problem = None
    if sa_key is None or sa_pub is None:
        sa_problem = "missing"
    else:
        try:
            k = serialization.load_pem_private_key(sa_key, password=None)
            if _public_bytes(k.public_key()) != _public_bytes(serialization.load_pem_public_key(sa_pub)):
                sa_problem = "key mismatch"
        except (ValueError, TypeError):
            sa_problem = "unreadable"
    if sa_problem is None and ("sa" in force or "all" in force):
        sa_problem = "forced"
    if sa_problem is None:
        actions.append({"name": "sa", "action": "keep", "reason": None, "spec": None})
    else:
        actions.append({"name": "sa", "action": "create" if sa_problem == "missing" else "renew",
                        "reason": sa_problem, "spec": None})
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


def ensure_pki(path, request, check_mode=False, now=None, force=()):
    """Make the PKI under ``path`` match ``request``; return what was done.

    The result: ``changed``, ``created`` (names), ``renewed`` (``[{name, reason}]``), ``kept``,
    ``stale`` (files of hosts no longer in the request; never deleted), ``files``
    (``{name: {cert, key}}``, absolute paths) and ``diff`` (``before``/``after`` texts).
    Nothing secret is returned.
    """
    if not path or not isinstance(path, str):
        raise PKIError("path: give the PKI directory on the controller, got %r" % (path,))
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(path) and not os.path.isdir(path):
        raise PKIError("path: %s exists and is not a directory" % path)
    spec, actions, loaded = plan_pki(path, request, now=now, force=force)
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
    """Kept files and the directory tree back to 0700 (dirs), 0600 (keys), 0644 (certs)."""
    wrong = []
    if not os.path.isdir(path):
        return wrong
    for root, _dirs, _files in os.walk(path):
        wrong.append((root, 0o700))
    for act in actions:
        if act["action"] != "keep":
            continue
        if act["name"] == "sa":
            wrong += [(os.path.join(path, "sa.key"), 0o600), (os.path.join(path, "sa.pub"), 0o644)]
        else:
            base = os.path.join(path, act["name"])
            wrong += [(base + ".key", 0o600), (base + ".crt", 0o644)]
    out = []
    for f, want in wrong:
        have = os.stat(f).st_mode & 0o7777
        if have != want:
            out.append((os.path.relpath(f, path), "%04o" % have, "%04o" % want))
            if not check_mode:
                os.chmod(f, want)
    return out


def _describe_cert(cert):
    cn, orgs = _subject_of(cert)
    dns, ips = _sans_of(cert)
    text = ", ".join(["CN=%s" % cn] + ["O=%s" % o for o in orgs])
    sans = list(dns) + [str(i) for i in ips]
    if sans:
        text += " SANs: " + ",".join(sans)
    return text + " notAfter: " + _not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ")


def inspect_pki(path):
    """Every certificate under ``path``: ``[{name, subject, not_after, days_left, issuer}]``."""
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(path):
        raise PKIError("path: %s is not a directory; create the PKI first with 'mooring pki generate'" % path)
    now = datetime.datetime.now(datetime.timezone.utc)
    out = []
    for root, _dirs, files in os.walk(path):
        for f in sorted(files):
            if not f.endswith(".crt"):
                continue
            full = os.path.join(root, f)
            try:
                cert = x509.load_pem_x509_certificate(_read(full))
            except ValueError:
                out.append({"name": os.path.relpath(full, path)[:-4], "error": "unreadable"})
                continue
            cn, orgs = _subject_of(cert)
            out.append({"name": os.path.relpath(full, path)[:-4], "subject": _describe_cert(cert),
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
        raise PKIError("cannot read %s: %s" % (path, exc)) from None
    return {"etcd": [{"name": n} for n in etcd], "kubelets": kubelets}


def pki_status(path, request=None, days=None, now=None):
    """When each certificate of the PKI under ``path`` expires, and which are due.

    The certificates are the ones :func:`plan_specs` names (the same list :func:`plan_pki`
    renews); ``request`` gives the hosts (default: as found on disk, :func:`request_from_dir`).
    ``days``: due when expiring within that many days (default: the renew threshold,
    ``renew_before_days``). Returns ``{path, days, due, entries}``; an entry is ``{name, state,
    not_after, days_left, reason}`` with ``state`` one of ``ok``, ``due`` (expires within
    ``days``), ``expired``, ``missing``, ``unreadable`` or ``no-expiry`` (the service-account
    key pair); ``due`` lists every entry that is not ``ok``/``no-expiry``. Reads only."""
    if not HAS_CRYPTOGRAPHY:
        raise PKIError("the Python library 'cryptography' is required on the controller: %s"
                       % CRYPTOGRAPHY_IMPORT_ERROR)
    if not path or not isinstance(path, str):
        raise PKIError("path: give the PKI directory, got %r" % (path,))
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(path):
        raise PKIError("path: %s is not a directory; create the PKI first with 'mooring pki generate'" % path)
    if not os.access(path, os.R_OK | os.X_OK):
        raise PKIError("path: %s is not readable" % path)
    days = DEFAULTS["renew_before_days"] if days is None else days
    if isinstance(days, bool) or not isinstance(days, int) or days < 0:
        raise PKIError("days must be a whole number of days (0 or more), got %r" % (days,))
    now = now or datetime.datetime.now(datetime.timezone.utc)
    request = dict(request_from_dir(path) if request is None else request)
    # Only the host parts matter for the names; the renew threshold is this call's.
    request.pop("renew_before_days", None)
    spec = normalize(request)
    entries = []
    for cs in plan_specs(spec):
        entry = {"name": cs.name, "state": "ok", "not_after": None, "days_left": None, "reason": None}
        pem = _read(os.path.join(path, cs.name + ".crt"))
        if pem is None:
            entry.update(state="missing", reason="no %s.crt" % cs.name)
        else:
            try:
                cert = x509.load_pem_x509_certificate(pem)
            except ValueError:
                cert = None
                entry.update(state="unreadable", reason="%s.crt is not a PEM certificate" % cs.name)
            if cert is not None:
                left = _not_after(cert) - now
                entry["not_after"] = _not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ")
                entry["days_left"] = left.days
                if left <= datetime.timedelta(0):
                    entry.update(state="expired", reason="expired")
                elif left < datetime.timedelta(days=days):
                    entry.update(state="due", reason="expires within %d days" % days)
        entries.append(entry)
    sa = {"name": "sa", "state": "no-expiry", "not_after": None, "days_left": None,
          "reason": "service-account key pair: a key, not a certificate; it does not expire"}
    if _read(os.path.join(path, "sa.key")) is None or _read(os.path.join(path, "sa.pub")) is None:
        sa.update(state="missing", reason="no sa.key/sa.pub")
    entries.append(sa)
    due = [e["name"] for e in entries if e["state"] not in ("ok", "no-expiry")]
    return {"path": path, "days": days, "due": due, "entries": entries}
