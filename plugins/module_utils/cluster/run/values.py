# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the values the playbooks take from a lock, decided in one place.

:func:`lock_values` turns a loaded lock (``load_lock``) into plain values: the Kubernetes version,
image refs and options, the API endpoint, the HA endpoint (keepalived VIP), the etcd topology, the cluster name, the add-ons, the
kubeadm boundary, containerd's config.toml version and, given the inventory's groups, what the install does on each host. The
playbooks pass these to the roles as data (action ``mooring.cluster.lock_values``) instead of
reading the lock's shape in Jinja. Plain data in, plain data out; a malformed lock raises
:class:`LockError` with one line naming the field.
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.layout import boundary, install_plan
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.kubeadm import KubeadmError, parse_version
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import LockError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import LOOPBACK, proxy_variables
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import EndpointError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.network import DEFAULT_ROUTER_ID, MODES, control_plane_packages, ip_endpoint

API_PORT = 6443
DEFAULT_CLUSTER_NAME = "kubernetes"
DEFAULT_ETCD_TOPOLOGY = "external"
ETCD_TOPOLOGIES = ("external", "stacked")
DEFAULT_ARCH = "amd64"
# Scheduled etcd snapshots kept per host when the spec does not say (RKE2 keeps 5 too).
DEFAULT_BACKUP_KEEP = 5
# containerd's config.toml version for the containerd role: 3 from containerd 2.1, the first whose version 3 has
# the CRI plugin's `cni.bin_dirs` (2.0's has only `bin_dir`, which 2.1 deprecates); 2 before (1.x's own; 2.0
# still reads it, migrated at start).
CONTAINERD_CONFIG_V3_FROM = (2, 1)
_CONTAINERD_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.|$)")


class LockValuesError(MooringError):
    """The inventory data given with the lock cannot be planned (the lock itself raises :class:`LockError`)."""


def _mapping(value, field, where):
    if not isinstance(value, dict):
        raise LockError("%s: %s is not a mapping" % (where, field))
    return value


def _string(value, field, where):
    if not isinstance(value, str) or not value:
        raise LockError("%s: %s is not a non-empty string (%r)" % (where, field, value))
    return value


def _check_addons(addons, where):
    """Every add-on a mapping, its artifacts and images lists of mappings (the boundary and the plans read them)."""
    for name in sorted(addons):
        addon = _mapping(addons[name], "addons.%s" % name, where)
        for key in ("artifacts", "images"):
            items = addon.get(key)
            if items is None:
                continue
            if not isinstance(items, list):
                raise LockError("%s: addons.%s.%s is not a list" % (where, name, key))
            for index, item in enumerate(items):
                _mapping(item, "addons.%s.%s[%d]" % (name, key, index), where)


def _kubernetes(addons, where):
    if "kubernetes" not in addons:
        raise LockError("%s: addons.kubernetes is missing" % where)
    k8s = _mapping(addons["kubernetes"], "addons.kubernetes", where)
    for key in ("version", "options", "images"):
        if key not in k8s:
            raise LockError("%s: addons.kubernetes.%s is missing" % (where, key))
    version = _string(k8s["version"], "addons.kubernetes.version", where)
    try:
        parse_version(version, "addons.kubernetes.version")
    except KubeadmError as exc:
        raise LockError("%s: %s" % (where, exc)) from None
    options = _mapping(k8s["options"], "addons.kubernetes.options", where)
    if not isinstance(k8s["images"], list):
        raise LockError("%s: addons.kubernetes.images is not a list" % where)
    refs = []
    for index, image in enumerate(k8s["images"]):
        field = "addons.kubernetes.images[%d]" % index
        if "ref" not in _mapping(image, field, where):
            raise LockError("%s: %s.ref is missing" % (where, field))
        refs.append(_string(image["ref"], field + ".ref", where))
    return version, options, refs


def _etcd_options(addons, where):
    if "etcd" not in addons:
        return {}
    etcd = _mapping(addons["etcd"], "addons.etcd", where)
    return _mapping(etcd.get("options") or {}, "addons.etcd.options", where)


def _etcd_backup(addons, where):
    """The etcd hosts' scheduled snapshots, ``{schedule, keep}`` (``None`` when the lock asks for none)."""
    backup = _etcd_options(addons, where).get("backup")
    if backup is None:
        return None
    backup = _mapping(backup, "addons.etcd.options.backup", where)
    schedule = _string(backup.get("schedule"), "addons.etcd.options.backup.schedule", where)
    if "\n" in schedule or '"' in schedule:
        raise LockError("%s: addons.etcd.options.backup.schedule: %r is not a systemd calendar expression" % (where, schedule))
    keep = backup.get("keep", DEFAULT_BACKUP_KEEP)
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise LockError("%s: addons.etcd.options.backup.keep: %r is not a positive integer" % (where, keep))
    return {"schedule": schedule, "keep": keep}


def _etcd_topology(addons, where):
    """The etcd add-on's topology; ``external`` when the lock has no etcd add-on or no topology."""
    options = _etcd_options(addons, where)
    topology = options.get("topology", DEFAULT_ETCD_TOPOLOGY)
    if topology not in ETCD_TOPOLOGIES:
        raise LockError("%s: addons.etcd.options.topology: %r is not %s" % (where, topology, " or ".join(ETCD_TOPOLOGIES)))
    return topology


def _containerd_config_version(addons, where):
    """The config.toml version (2 or 3) for the lock's containerd; 2 when the lock has none."""
    if "containerd" not in addons:
        return 2
    field = "addons.containerd.version"
    version = _string(addons["containerd"].get("version"), field, where)
    match = _CONTAINERD_VERSION.match(version)
    if not match:
        raise LockError("%s: %s: %r is not a containerd version like 2.1.9" % (where, field, version))
    return 3 if tuple(int(n) for n in match.groups()) >= CONTAINERD_CONFIG_V3_FROM else 2


def _containerd_restrict_oom_score_adj(addons, where):
    """The spec's ``containerd.restrictOOMScoreAdj`` (false when absent)."""
    value = ((addons.get("containerd") or {}).get("options") or {}).get("restrictOOMScoreAdj", False)
    if not isinstance(value, bool):
        raise LockError("%s: addons.containerd.options.restrictOOMScoreAdj: %r is not true or false" % (where, value))
    return value


def _api_endpoint(options, control_plane_address, where):
    """The lock's ``controlPlaneEndpoint``, else the first control-plane host's address on port 6443
    (``None`` when the lock has none and no address is given)."""
    if "controlPlaneEndpoint" in options:
        return _string(options["controlPlaneEndpoint"], "addons.kubernetes.options.controlPlaneEndpoint", where)
    if control_plane_address is None:
        return None
    return "%s:%d" % (control_plane_address, API_PORT)


def _ha_endpoint(options, where):
    """The lock's ``haEndpoint`` as the ha_endpoint playbook takes it (``None`` without one):
    mode, vip, port, interface, router_id, packages (per distro, control-plane hosts only)."""
    if "haEndpoint" not in options:
        return None
    ha = _mapping(options["haEndpoint"], "addons.kubernetes.options.haEndpoint", where)
    if ha.get("mode") not in MODES:
        raise LockError("%s: addons.kubernetes.options.haEndpoint.mode: %r is not %s" % (where, ha.get("mode"), " or ".join(MODES)))
    field = "addons.kubernetes.options.controlPlaneEndpoint"
    try:
        vip, port = ip_endpoint(options.get("controlPlaneEndpoint"), field)
    except EndpointError as exc:
        raise LockError("%s: %s" % (where, exc)) from None
    return {"mode": ha["mode"], "vip": str(vip), "port": port, "interface": ha.get("interface"),
            "router_id": ha.get("routerId", DEFAULT_ROUTER_ID), "packages": control_plane_packages(options)}


def _endpoint_host(endpoint):
    """The host part of ``HOST:PORT`` / ``[IPv6]:PORT`` / ``HOST``."""
    if endpoint.startswith("["):
        return endpoint[1:].split("]", 1)[0]
    return endpoint.rsplit(":", 1)[0] if endpoint.count(":") == 1 else endpoint


def _proxy(lock, options, api_endpoint, addresses, where):
    """The lock's HTTP proxy as the hosts and the controller use it (``None`` without one): ``http``, ``https``,
    ``no_proxy`` - what must never go through it: loopback, the spec's own ``noProxy``, the pod and service
    networks, the cluster's DNS suffixes, the API endpoint and every host of the inventory - and ``env``, the
    variables a systemd drop-in or a process environment sets (upper and lower case: Go reads either)."""
    if not lock.get("proxy"):
        return None
    proxy = _mapping(lock["proxy"], "proxy", where)
    urls = {key: _string(proxy[key], "proxy." + key, where) for key in ("http", "https") if proxy.get(key)}
    if not urls:
        raise LockError("%s: proxy has neither http nor https" % where)
    spec_no_proxy = proxy.get("noProxy") or []
    if not isinstance(spec_no_proxy, list):
        raise LockError("%s: proxy.noProxy is not a list" % where)
    wanted = list(LOOPBACK) + [_string(v, "proxy.noProxy[]", where) for v in spec_no_proxy]
    wanted += [options[k] for k in ("podCIDR", "serviceCIDR") if options.get(k)]
    wanted += [".svc", "." + options.get("clusterDomain", "cluster.local")]
    if api_endpoint:
        wanted.append(_endpoint_host(api_endpoint))
    wanted += [a for a in addresses or () if a]
    no_proxy = list(dict.fromkeys(str(v) for v in wanted))
    env = proxy_variables(urls, no_proxy)
    return {"http": env["HTTP_PROXY"], "https": env["HTTPS_PROXY"], "no_proxy": no_proxy, "env": env,
            "files": proxy_files(env)}


# The proxy's variables live in this file (0600: a proxy URL may carry credentials, and a unit's Environment= is
# readable by every user through systemctl show); each service's drop-in only points at it.
PROXY_ENV_FILE = "/etc/mooring/proxy.env"


def proxy_files(env):
    """``{env_file: {path, content}, dropin: text}``: the variables as a systemd EnvironmentFile (values quoted,
    backslashes and quotes escaped) and the drop-in a service reads it through."""
    lines = ["# The lock's HTTP proxy (spec.proxy), written by mooring.cluster: docs/proxy.md"]
    for key in sorted(env):
        value = str(env[key]).replace("\\", "\\\\").replace('"', '\\"')
        lines.append('%s="%s"' % (key, value))
    dropin = ("# The lock's HTTP proxy (spec.proxy), written by mooring.cluster: docs/proxy.md\n"
              "[Service]\nEnvironmentFile=%s\n" % PROXY_ENV_FILE)
    return {"env_file": {"path": PROXY_ENV_FILE, "content": "\n".join(lines) + "\n"}, "dropin": dropin}


def _plans(lock, groups, arch):
    """What the install does on each host of the inventory, from the lock alone: ``{host: [line, ...]}``.

    ``groups`` is the inventory's ``groups`` mapping (group -> hosts); the first host of
    ``control_plane`` runs ``kubeadm init``."""
    groups = dict(groups or {})
    for name, members in groups.items():
        if not isinstance(members, (list, tuple)):
            raise LockValuesError("groups.%s: not a list of host names" % name)
    if "control_plane" in groups and not groups["control_plane"]:
        raise LockValuesError("groups: control_plane is empty; its first host runs kubeadm init")
    first = (groups.get("control_plane") or [None])[0]
    hosts = dict.fromkeys(host for members in groups.values() for host in members)
    return {host: install_plan(lock, sorted(g for g, members in groups.items() if g != "all" and host in members),
                               arch, first_control_plane=host == first)
            for host in hosts}


def lock_values(lock, control_plane_address=None, groups=None, arch=DEFAULT_ARCH, where="lock", addresses=None):
    """Every value the playbooks take from ``lock`` (a loaded, digest-checked lock).

    ``control_plane_address``: the first control-plane host's address, for the API endpoint when
    the lock sets no ``controlPlaneEndpoint``. ``groups``: the inventory's groups mapping, for the
    per-host install plans. ``addresses``: every host's address, never sent through the proxy.
    ``where`` names the lock in error messages."""
    _mapping(lock, "the lock", where)
    if "addons" not in lock:
        raise LockError("%s: addons is missing" % where)
    addons = _mapping(lock["addons"], "addons", where)
    if "digest" not in lock:
        raise LockError("%s: digest is missing" % where)
    digest = _string(lock["digest"], "digest", where)
    _check_addons(addons, where)
    version, options, refs = _kubernetes(addons, where)
    cluster_name = options.get("clusterName", DEFAULT_CLUSTER_NAME)
    _string(cluster_name, "addons.kubernetes.options.clusterName", where)
    edge = boundary(lock, arch)
    missing = edge["artifacts"] + edge["images"]
    api_endpoint = _api_endpoint(options, control_plane_address, where)
    return {
        "digest": digest,
        "kubernetes_version": version,
        "kubernetes_images": refs,
        "kubernetes_options": options,
        "cluster_name": cluster_name,
        "api_endpoint": api_endpoint,
        "etcd_topology": _etcd_topology(addons, where),
        "etcd_backup": _etcd_backup(addons, where),
        "containerd_config_version": _containerd_config_version(addons, where),
        "containerd_restrict_oom_score_adj": _containerd_restrict_oom_score_adj(addons, where),
        # containerd's and the kubelet's cgroup driver: the spec's kubelet.cgroupDriver, else "auto" (the host's init).
        "cgroup_driver": (options.get("kubelet") or {}).get("cgroupDriver") or "auto",
        "proxy": _proxy(lock, options, api_endpoint, addresses, where),
        "ha_endpoint": _ha_endpoint(options, where),
        "addons": addons,
        "boundary": edge,
        "boundary_missing": missing,
        "kubeadm_ready": not missing,
        "plans": _plans(lock, groups, arch),
        "host_preflights": _mapping(lock.get("hostPreflights") or {}, "hostPreflights", where),
        # The spec the lock was resolved from: kURL's host preflight templates read it as .Installer.Spec.
        "installer_spec": _mapping(lock.get("spec") or {}, "spec", where),
    }
