# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: a kURL ``Installer`` read as a mooring one.

:func:`map_kurl` maps the kURL add-ons and settings mooring.cluster supports (:data:`KURL_MAPPING`) to
a mooring document and names every other add-on or field once, in a warning that says what ignoring
it means for the cluster.
"""

from __future__ import annotations

import copy
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.schema import API_VERSION, DNS_LABELS, KIND, NODE_PORT_RANGE, found
from ansible_collections.mooring.cluster.plugins.module_utils.spec.specyaml import load_yaml_1_2

KURL_API_VERSIONS = ("cluster.kurl.sh/v1beta1", "kurl.sh/v1beta1")
CNI_ADDONS = ("calico", "cilium", "flannel")
NO_CNI = "none"
_DNS_NAME = re.compile(DNS_LABELS)
KURL_PROXY_OFF = "-off"
# kURL add-on -> {kURL field: (our add-on, our field path), or a tuple of such pairs}. A kURL add-on listed here is installed
# (its version resolved against our catalog); its other fields are named in a warning each.
KURL_MAPPING = {
    "kubernetes": {"version": ("kubernetes", "version"), "serviceCIDR": ("kubernetes", "serviceCIDR"),
                   "clusterName": ("kubernetes", "clusterName"),
                   "loadBalancerAddress": ("kubernetes", "controlPlaneEndpoint"),
                   "maxPodsPerNode": ("kubernetes", "kubelet.maxPods"),
                   "evictionThresholdResources": ("kubernetes", "kubelet.evictionHard")},
    "containerd": {"version": ("containerd", "version")},
    "calico": {"version": ("calico", "version")},
    "flannel": {"version": ("flannel", "version"), "podCIDR": ("kubernetes", "podCIDR")},
    "contour": {"version": ("contour", "version"), "httpPort": ("contour", "httpNodePort"),
                "httpsPort": ("contour", "httpsNodePort")},
    "registry": {"version": ("registry", "version")},
    "openebs": {"version": ("openebs", "version")},
    "longhorn": {"version": ("longhorn", "version")},
    "metricsServer": {"version": ("metricsServer", "version")},
    "localPathProvisioner": {"version": ("localPathProvisioner", "version")},
    # kURL's settings section: its host preflights (a troubleshoot.sh HostPreflight) run by the preflight stage.
    "kurl": {"hostPreflights": ("hostPreflights", "documents"),
             "hostPreflightEnforceWarnings": ("hostPreflights", "enforceWarnings"),
             # kURL's one proxy serves both schemes; both no-proxy lists add to mooring's own.
             "proxyAddress": (("proxy", "http"), ("proxy", "https")),
             "noProxyAddresses": ("proxy", "noProxy"),
             "additionalNoProxyAddresses": ("proxy", "noProxy"),
             # true: no proxy at all (kURL's no-proxy flag)
             "noProxy": ("proxy", KURL_PROXY_OFF)},
}
# kURL fields mapped only when the value fits here: kURL widens the NodePort range to 80-60000,
# mooring.cluster keeps Kubernetes' default, so a kURL port outside it is ignored with a warning.
KURL_NODE_PORTS = {("contour", "httpPort"), ("contour", "httpsPort")}
# kURL fields whose string kURL writes into the kubelet's configuration as YAML (evictionThresholdResources after
# `evictionHard:`): read here as the mapping it is; text that is no mapping of strings is ignored with a warning.
KURL_YAML_MAPPINGS = {("kubernetes", "evictionThresholdResources")}
# kURL CNIs mooring.cluster does not install: the cluster gets no CNI (kubernetes.cni: none) and
# the pod network they were given is kept for kubeadm.
KURL_OTHER_CNIS = {"weave": {"podCIDR": ("kubernetes", "podCIDR")}, "antrea": {"podCIDR": ("kubernetes", "podCIDR")}}
# kURL's settings sections (not add-ons): named as settings in warnings.
KURL_SETTINGS = ("kurl", "selinuxConfig", "iptablesConfig", "firewalldConfig", "ufwConfig")
# The document keys besides spec that kURL reads.
KURL_TOP_LEVEL = ("apiVersion", "kind", "metadata", "spec")


def _kurl_value(value):
    """A kURL field's value, or None when kURL treats it as unset (null or an empty string)."""
    return None if value is None or value == "" else value


def _yaml_mapping(text):
    """The mapping of strings a kURL field's YAML text holds, or None."""
    try:
        value = load_yaml_1_2(text, "kURL field") if isinstance(text, str) else None
    except MooringError:
        return None
    ok = isinstance(value, dict) and value and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    return value if ok else None


def _unusable(name, field, value):
    """Why a mapped kURL field's value cannot be used here (a warning), else None."""
    if (name, field) in KURL_NODE_PORTS and isinstance(value, int) and not isinstance(value, bool) \
            and not NODE_PORT_RANGE[0] <= value <= NODE_PORT_RANGE[1]:
        return ("spec.%s.%s: %d is outside the NodePort range %d-%d (kURL widens the range, mooring.cluster keeps "
                "Kubernetes' default); ignored, the default port is used"
                % (name, field, value, NODE_PORT_RANGE[0], NODE_PORT_RANGE[1]))
    if (name, field) in KURL_YAML_MAPPINGS and value is not None and _yaml_mapping(value) is None:
        return ("spec.%s.%s: %s is not YAML text of a mapping of strings (kURL writes it into the kubelet's "
                "configuration); ignored" % (name, field, found(value)))
    return None


def _map_addon(name, values, fields, mapped, unsupported, ignored):
    """Copy one kURL add-on's mapped fields into ``mapped``; name its other fields (and in
    ``ignored`` the warnings for mapped fields whose value cannot be used)."""
    for field in sorted(values, key=str):
        if field not in fields:
            unsupported.append("spec.%s.%s" % (name, field))
            continue
        value = _kurl_value(values[field])
        why = _unusable(name, field, value)
        if why:
            unsupported.append("spec.%s.%s" % (name, field))
            ignored.append(why)
            continue
        if value is None:
            continue
        if (name, field) in KURL_YAML_MAPPINGS:
            value = _yaml_mapping(value)
        targets = fields[field]
        for addon, ours in targets if isinstance(targets[0], tuple) else (targets,):
            target = mapped.setdefault(addon, {})
            *parents, leaf = ours.split(".")
            for parent in parents:
                target = target.setdefault(parent, {})
            if isinstance(target.get(leaf), list) and isinstance(value, list):
                target[leaf] = target[leaf] + value  # two kURL lists into one of ours
            else:
                target[leaf] = value


def _map_addons(spec, mapped, unsupported, warnings, problems):
    """Map every add-on and setting of the kURL ``spec`` into ``mapped``; returns the kURL CNIs not installed here."""
    no_cni = []
    for name in sorted(spec, key=str):
        values = spec[name]
        path = "spec.%s" % name
        fields = KURL_MAPPING.get(name) or KURL_OTHER_CNIS.get(name)
        if fields is None:
            unsupported.append(path)
            warnings.append("%s: kURL %s not supported by mooring.cluster; ignored"
                            % (path, "setting" if name in KURL_SETTINGS else "add-on"))
            continue
        if values is None and name not in KURL_OTHER_CNIS:
            values = {}
        if name in KURL_OTHER_CNIS:
            no_cni.append(name)
            unsupported.append(path)
            if isinstance(values, dict):
                _map_addon(name, {k: v for k, v in values.items() if k in fields}, fields, mapped, [], [])
            continue
        if not isinstance(values, dict):
            problems.append("%s: must be a mapping of the add-on's fields, not %s" % (path, found(values)))
            continue
        if name not in KURL_SETTINGS:
            mapped.setdefault(name, {})
        before, ignored = len(unsupported), []
        _map_addon(name, values, fields, mapped, unsupported, ignored)
        warnings.extend("%s: kURL field not supported by mooring.cluster; ignored" % item
                        for item in unsupported[before:] if not any(p.startswith(item + ":") for p in ignored))
        warnings.extend(ignored)
    return no_cni


def _settle_proxy_and_cni(spec, mapped, no_cni, warnings):
    """Drop a proxy without an address (or switched off); say what the cluster's CNI is when kURL's is not ours."""
    proxy = mapped.get("proxy")
    if proxy is not None and (proxy.pop(KURL_PROXY_OFF, False) is True or not ("http" in proxy or "https" in proxy)):
        if proxy and "http" not in proxy:
            warnings.append("spec.kurl.noProxyAddresses/additionalNoProxyAddresses: no proxyAddress (or noProxy: true); ignored")
        del mapped["proxy"]
    if "kubernetes" not in spec or any(cni in mapped for cni in CNI_ADDONS):
        # another CNI is installed, or no cluster mooring.cluster can install (the error says so)
        warnings.extend("spec.%s: kURL CNI not supported by mooring.cluster; ignored" % n for n in no_cni)
        return
    kube = mapped.setdefault("kubernetes", {})
    kube["cni"] = NO_CNI
    if no_cni:
        pod = (" (its podCIDR is kept as kubernetes.podCIDR)" if "podCIDR" in kube else "")
        warnings.extend("spec.%s: kURL CNI not supported by mooring.cluster; the cluster is installed without a "
                        "CNI: install %s yourself after the control plane is up%s" % (n, n, pod) for n in no_cni)
    else:
        warnings.append("spec: no CNI add-on (calico or flannel); the cluster is installed without a CNI: "
                        "install one yourself after the control plane is up")


def _metadata(document, warnings):
    """The document's metadata, without a name that is empty or not a DNS name (warned)."""
    metadata = document.get("metadata")
    metadata = copy.deepcopy(metadata) if isinstance(metadata, dict) else {}
    name = metadata.get("name")
    if name in (None, ""):
        metadata.pop("name", None)
    elif not (isinstance(name, str) and _DNS_NAME.fullmatch(name) and len(name) <= 63):
        warnings.append("metadata.name: %s is not a DNS name; the lock names the installer 'installer'" % found(name))
        metadata.pop("name")
    return metadata


def map_kurl(document):
    """Map a kURL Installer to a mooring document.

    Returns ``(document, unsupported, warnings, problems)``: every kURL add-on or field that is
    not mapped is named once in ``unsupported`` and in a warning (the fields of an ignored
    add-on are not named again); ``problems`` are what makes the document unusable.
    """
    spec = document.get("spec")
    mapped, unsupported, warnings, problems = {}, [], [], []
    api_version = document.get("apiVersion")
    if api_version is not None and api_version not in KURL_API_VERSIONS:
        warnings.append("apiVersion: %s is read as kURL reads it (kURL does not check the version); "
                        "write cluster.kurl.sh/v1beta1" % found(api_version))
    for key in sorted(document, key=str):
        if key not in KURL_TOP_LEVEL:
            unsupported.append(str(key))
            warnings.append("%s: not read by kURL or mooring.cluster; ignored" % key)
    if "kubernetes" not in spec:
        problems.append("spec.kubernetes: is missing; mooring.cluster installs upstream Kubernetes with kubeadm "
                        "(a kURL spec for k3s or rke2 has no counterpart)")
    no_cni = _map_addons(spec, mapped, unsupported, warnings, problems)
    _settle_proxy_and_cni(spec, mapped, no_cni, warnings)
    metadata = _metadata(document, warnings)
    result = {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": mapped}
    return result, unsupported, warnings, problems
