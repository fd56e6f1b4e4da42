# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: what certificates a cluster needs (the PKI request and its specs).

:func:`normalize` checks a PKI request (a ``mooring.cluster.pki`` call or a ``--config`` file) and fills
in the defaults; :func:`request_from_inventory` derives its host parts from the inventory; :func:`plan_specs`
names every certificate of the kubeadm layout as a :class:`CertSpec`. Standard library only: nothing
here reads the disk or needs ``cryptography``.

Subjects follow kubeadm (v1.29+): ``apiserver-kubelet-client`` and ``admin`` carry
O=kubeadm:cluster-admins, ``super-admin`` O=system:masters, kubelets
CN=system:node:<name>, O=system:nodes.
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import must_be
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

# Options of one run, not of the certificates: never part of a request (a --config file).
RUN_OPTIONS = ("new_ca", "reissue_broken")


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


def listed(items, limit=10):
    """Names for a message: sorted, each shown plain when short and simple, else as an excerpt,
    at most ``limit`` of them."""
    shown = sorted(i if isinstance(i, str) and re.fullmatch(r"[\w./:@-]{1,60}", i) else excerpt(i, 60) for i in items)
    more = len(shown) - limit
    return ", ".join(shown[:limit]) + (" and %d more" % more if more > 0 else "")


def field_list(value, field):
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise PKIError("%s: %s" % (field, must_be("a list", value)))
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
    for i, item in enumerate(field_list(value, field)):
        where = "%s[%d]" % (field, i)
        if isinstance(item, str):
            item = {"name": item}
        if not isinstance(item, dict) or "name" not in item:
            raise PKIError("%s: %s" % (where, must_be("a mapping with 'name' (and optional 'addresses', 'names')", item)))
        unknown = set(item) - {"name", "addresses", "names"}
        if unknown:
            raise PKIError("%s: unknown key(s) %s; allowed: name, addresses, names" % (where, listed(unknown)))
        name = _check_name(item["name"], where + ".name")
        if name in seen:
            raise PKIError("%s.name: %s appears twice in %s" % (where, excerpt(name), field))
        seen.add(name)
        addresses = [_parse_ip(a, "%s.addresses[%d]" % (where, j))
                     for j, a in enumerate(field_list(item.get("addresses"), where + ".addresses"))]
        names = [_check_name(n, "%s.names[%d]" % (where, j))
                 for j, n in enumerate(field_list(item.get("names"), where + ".names"))]
        out.append({"name": name, "addresses": addresses, "names": names})
    return out


# The longest validity and look-ahead in days (100 years): X.509 dates end in 9999, Python's at year 9999 too,
# and nobody means more.
MAX_DAYS = 36500


def _positive_int(spec, field):
    value = spec[field]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PKIError("%s: %s" % (field, must_be("a positive integer (days)", value)))
    if value > MAX_DAYS:
        raise PKIError("%s: %s" % (field, must_be("at most %d days (100 years)" % MAX_DAYS, value)))
    return value


def normalize(spec):
    """Validate a PKI request and fill in defaults. Raises :class:`PKIError` naming the field."""
    if not isinstance(spec, dict):
        raise PKIError("the PKI request: %s" % must_be("a mapping", spec))
    unknown = set(spec) - set(DEFAULTS)
    if unknown:
        raise PKIError("unknown PKI option(s): %s; allowed: %s" % (listed(unknown), ", ".join(sorted(DEFAULTS))))
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
    for i, k in enumerate(field_list(out["kubelets"], "kubelets")):
        name = k.get("name") if isinstance(k, dict) else k
        name = _check_name(name, "kubelets[%d]" % i)
        if name not in kubelets:
            kubelets.append(name)
    out["kubelets"] = kubelets
    endpoint = out["control_plane_endpoint"] or ""
    if not isinstance(endpoint, str):
        raise PKIError("control_plane_endpoint: %s" % must_be("a string (host, host:port or [v6]:port)", endpoint))
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


def host_address(name, hostvars):
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
            addresses, dns = host_address(host, hostvars)
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
