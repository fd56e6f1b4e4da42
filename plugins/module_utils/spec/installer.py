# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the installer spec — schema, validation, kURL input, hash.

``parse_installer(text_or_mapping)`` returns an :class:`Installer` or raises
:class:`SpecError` listing every problem at once, each with its path and the allowed values.
Documents are validated as read with YAML 1.2 core-schema rules (``yes`` stays a string). The
hash is computed from the text as kurl.sh itself parsed it (js-yaml 4, which differs from the
core schema on a few plain scalars such as ``1_000`` or dates), so the 7-character identifier is
kURL's for the same document. kURL ``Installer`` documents (``cluster.kurl.sh/v1beta1``,
``kurl.sh/v1beta1``) are accepted: supported add-ons are mapped, the rest reported by name.
"""

from __future__ import annotations

import copy
import json
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, missing_library, reason
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import KurlHashError, SpecError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.kurl_hash import kurl_hash_digest
from ansible_collections.mooring.cluster.plugins.module_utils.spec.kurl_yaml import load_yaml_1_2, load_yaml_kurl
from ansible_collections.mooring.cluster.plugins.module_utils.spec.network import network_problems

try:
    import jsonschema

    HAS_JSONSCHEMA = True
    JSONSCHEMA_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - exercised only without jsonschema
    HAS_JSONSCHEMA = False
    JSONSCHEMA_IMPORT_ERROR = _exc

API_VERSION = "cluster.mooring.io/v1beta1"
KURL_API_VERSIONS = ("cluster.kurl.sh/v1beta1", "kurl.sh/v1beta1")
# kURL reads any apiVersion (only kurl.sh/v1beta1 changes how it reads the spec); its own test specs carry
# cluster.kurl.sh/v1beta. Any version of kURL's two groups is read as kURL reads it, with a warning.
KURL_API_GROUPS = ("cluster.kurl.sh/", "kurl.sh/")
KIND = "Installer"
CNI_ADDONS = ("calico", "cilium", "flannel")
VERSION_PATTERN = r"^(latest|(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.x|v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?)$"
VERSION_HELP = "is not an exact version, 'latest' or 'X.Y.x'"
DNS_LABELS = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_DNS_NAME = re.compile(DNS_LABELS)


def _addon(properties=None, required=("version",)):
    props = {"version": {"type": "string", "pattern": VERSION_PATTERN}}
    props.update(properties or {})
    return {"type": "object", "additionalProperties": False, "required": list(required), "properties": props}


_STRING = {"type": "string"}
_CIDR = {"type": "string", "minLength": 1}
# Kubernetes' default --service-node-port-range (mooring.cluster does not change it).
NODE_PORT_RANGE = (30000, 32767)
_PORT = {"type": "integer", "minimum": NODE_PORT_RANGE[0], "maximum": NODE_PORT_RANGE[1]}
_REGISTRY_HOSTS = {"type": "array", "items": {"type": "string", "minLength": 1}}

ADDON_SCHEMAS = {
    "kubernetes": _addon({
        "podCIDR": _CIDR,
        "serviceCIDR": _CIDR,
        "controlPlaneEndpoint": {"type": "string", "minLength": 1},
        # A virtual IP held by one control-plane host at a time (keepalived): docs/ha-endpoint.md.
        "haEndpoint": {
            "type": "object",
            "additionalProperties": False,
            "required": ["mode"],
            "properties": {
                "mode": {"enum": ["vip"]},
                "interface": {"type": "string", "pattern": r"^[^/\s:]{1,15}$"},
                "routerId": {"type": "integer", "minimum": 1, "maximum": 255},
            },
        },
        "clusterDomain": {"type": "string", "pattern": DNS_LABELS},
        "clusterName": {"type": "string", "pattern": DNS_LABELS},
        "cni": {"enum": ["none"]},
        "kubelet": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "maxPods": {"type": "integer", "minimum": 10, "maximum": 2500},
                "cgroupDriver": {"enum": ["systemd", "cgroupfs"]},
                "failSwapOn": {"type": "boolean"},
                "extraArgs": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
    }),
    "etcd": _addon({
        "topology": {"enum": ["external", "stacked"]},
        # Snapshots the etcd hosts take on their own (a systemd timer): docs/etcd.md "Scheduled snapshots".
        "backup": {
            "type": "object",
            "additionalProperties": False,
            "required": ["schedule"],
            "properties": {
                # A systemd OnCalendar expression (hourly, daily, *-*-* 00/12:00:00, ...); no quotes or newlines.
                "schedule": {"type": "string", "pattern": r"^[A-Za-z0-9*/:,. ~-]{1,100}$"},
                "keep": {"type": "integer", "minimum": 1, "maximum": 1000},
            },
        },
    }),
    "containerd": _addon({
        "registryMirrors": {"type": "object", "additionalProperties": _REGISTRY_HOSTS},
        "insecureRegistries": _REGISTRY_HOSTS,
    }),
    "calico": _addon({"encapsulation": {"enum": ["VXLAN", "IPIP", "None"]}, "mtu": {"type": "integer", "minimum": 576}}),
    "cilium": _addon({"tunnel": {"enum": ["vxlan", "geneve", "disabled"]}, "kubeProxyReplacement": {"type": "boolean"}}),
    "flannel": _addon({"backend": {"enum": ["vxlan", "host-gw"]}}),
    "localPathProvisioner": _addon({"path": {"type": "string", "pattern": "^/"}, "default": {"type": "boolean"}}),
    "longhorn": _addon({"replicas": {"type": "integer", "minimum": 1, "maximum": 5}, "default": {"type": "boolean"}}),
    "openebs": _addon({"path": {"type": "string", "pattern": "^/"}, "default": {"type": "boolean"}}),
    "ingressNginx": _addon({"httpNodePort": _PORT, "httpsNodePort": _PORT}),
    "contour": _addon({"httpNodePort": _PORT, "httpsNodePort": _PORT}),
    "metricsServer": _addon({"insecureKubeletTLS": {"type": "boolean"}}),
    "registry": _addon({"storageSize": {"type": "string", "pattern": r"^[0-9]+(Mi|Gi|Ti)$"}}),
}

# Not an add-on: troubleshoot.sh HostPreflight documents (one or a list) the preflight stage runs beside its
# built-in checks (docs/preflight.md), and whether their warnings stop the run. Carried in the lock's spec.
SETTINGS_SCHEMAS = {
    "hostPreflights": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "documents": {"anyOf": [{"type": "object"}, {"type": "array", "items": {"type": "object"}}]},
            "enforceWarnings": {"type": "boolean"},
        },
    },
}

# Not an add-on: the HTTP proxy the hosts' containerd and kubelet, and the controller building a bundle online,
# go through (docs/proxy.md). The cluster's own networks, endpoint and hosts are added to noProxy by mooring.
_PROXY_URL = {"type": "string", "pattern": r"^https?://[^\s/?#]+/?$"}
SETTINGS_SCHEMAS["proxy"] = {
    "type": "object",
    "additionalProperties": False,
    "anyOf": [{"required": ["http"]}, {"required": ["https"]}],
    "properties": {
        "http": _PROXY_URL,
        "https": _PROXY_URL,
        "noProxy": {"type": "array", "items": {"type": "string", "pattern": r"^[^\s,]+$"}},
    },
}

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["apiVersion", "kind", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": API_VERSION},
        "kind": {"const": KIND},
        "metadata": {
            "type": "object",
            "properties": {"name": {"type": "string", "pattern": DNS_LABELS, "maxLength": 63}},
        },
        "spec": {
            "type": "object",
            "required": ["kubernetes"],
            "additionalProperties": False,
            "properties": dict(ADDON_SCHEMAS, **SETTINGS_SCHEMAS),
        },
    },
}

DEFAULTS = {
    "kubernetes": {
        "podCIDR": "10.32.0.0/16",
        "serviceCIDR": "10.96.0.0/16",
        "clusterDomain": "cluster.local",
        "clusterName": "kubernetes",
    },
    "etcd": {"topology": "external"},
    "calico": {"encapsulation": "VXLAN"},
    "cilium": {"tunnel": "vxlan"},
    "flannel": {"backend": "vxlan"},
}

KURL_PROXY_OFF = "-off"
# kURL add-on -> {kURL field: (our add-on, our field path), or a tuple of such pairs}. A kURL add-on listed here is installed
# (its version resolved against our catalog); its other fields are named in a warning each.
KURL_MAPPING = {
    "kubernetes": {"version": ("kubernetes", "version"), "serviceCIDR": ("kubernetes", "serviceCIDR"),
                   "clusterName": ("kubernetes", "clusterName"),
                   "loadBalancerAddress": ("kubernetes", "controlPlaneEndpoint"),
                   "maxPodsPerNode": ("kubernetes", "kubelet.maxPods")},
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
# kURL CNIs mooring.cluster does not install: the cluster gets no CNI (kubernetes.cni: none) and
# the pod network they were given is kept for kubeadm.
KURL_OTHER_CNIS = {"weave": {"podCIDR": ("kubernetes", "podCIDR")}, "antrea": {"podCIDR": ("kubernetes", "podCIDR")}}
# kURL's settings sections (not add-ons): named as settings in warnings.
KURL_SETTINGS = ("kurl", "selinuxConfig", "iptablesConfig", "firewalldConfig", "ufwConfig")
# The document keys besides spec that kURL reads.
KURL_TOP_LEVEL = ("apiVersion", "kind", "metadata", "spec")
NO_CNI = "none"
EXCERPT = 80  # the longest value an error message quotes
MAX_PROBLEMS = 20  # schema problems listed; the rest are counted


class Installer(object):
    """A validated installer document.

    ``spec`` is the spec as written (what the hash covers); ``addons`` is the mooring spec after
    kURL mapping with defaults filled in; ``unsupported`` names the kURL add-ons/fields that are
    ignored (paths such as ``spec.weave``) and ``warnings`` says, one line each, what was ignored
    and what that means for the cluster.
    """

    def __init__(self, document, addons, source, unsupported, hash_document=None, warnings=(), name=None):
        self.document = document
        # JSON's keys are strings (kURL reads the document as JavaScript does): a YAML key such as
        # ``1`` is the key "1" in the lock, as in the hash.
        self.spec = _string_keys(document.get("spec") or {})
        self.addons = addons
        self.source = source
        self.unsupported = unsupported
        self.warnings = list(warnings)
        # The document as kurl.sh parsed it; only the hash reads it.
        self._hash_document = hash_document if hash_document is not None else document
        self._digest = None
        self._name = name or "installer"
        # {documents: [HostPreflight...], enforceWarnings: bool} when the spec carries host preflights, else {}.
        self.host_preflights = {}
        self.proxy = {}

    @property
    def name(self):
        return self._name

    def hash_now(self):
        """Compute the kURL digest (raises KurlHashError where kURL would fail); it is kept."""
        if self._digest is None:
            self._digest = kurl_hash_digest(self._hash_document.get("spec") or {}, self._hash_document.get("apiVersion"))
        return self._digest

    @property
    def hash(self):
        return self.hash_now()[:7]

    @property
    def digest(self):
        return self.hash_now()

    def requested_versions(self):
        return {name: str(values["version"]) for name, values in self.addons.items()}

    def options(self, addon):
        return {k: v for k, v in self.addons[addon].items() if k != "version"}


def _string_keys(value):
    if isinstance(value, dict):
        return {str(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    return value


def load_document(source):
    """A mapping from YAML text (YAML 1.2 core schema, read within :mod:`common.yamlio`'s bounds)
    or an existing mapping."""
    if isinstance(source, dict):
        return copy.deepcopy(source)
    try:
        document = load_yaml_1_2(source, "the installer document")
    except MooringError as exc:
        raise SpecError(str(exc)) from None
    except Exception as exc:  # the YAML parser raises many types; report them all the same way
        raise SpecError("the installer document is not valid YAML: %s" % reason(exc)) from None
    if not isinstance(document, dict):
        raise SpecError("the installer document must be a mapping with apiVersion, kind and spec")
    return document


def _path(parts):
    out = ""
    for part in parts:
        part = part if isinstance(part, int) else _short(str(part), 64)
        out += "[%d]" % part if isinstance(part, int) else (".%s" % part if out else str(part))
    return out or "(document)"


def _short(text, limit=EXCERPT):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _render(value):
    """A value as an error message quotes it: at most :data:`EXCERPT` characters."""
    if isinstance(value, str):
        return "'%s'" % _short(value)
    if isinstance(value, (dict, list)):
        return "a %s of %d item(s)" % ("mapping" if isinstance(value, dict) else "list", len(value))
    return _short(json.dumps(value, default=str))


def _names(names, limit=8):
    """``names`` joined, at most ``limit`` of them, each shortened."""
    shown = ", ".join(_short(str(n), 64) for n in names[:limit])
    return shown + (", ... (%d more)" % (len(names) - limit) if len(names) > limit else "")


def _schema_problem(error):
    path = _path(list(error.absolute_path))
    validator = error.validator
    if validator == "pattern" and path.endswith(".version"):
        return "%s: %s %s" % (path, _render(error.instance), VERSION_HELP)
    if validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(known))
        more = ["%s: %d more unknown key(s)" % (path, len(extra) - MAX_PROBLEMS)] if len(extra) > MAX_PROBLEMS else []
        extra = [_short(str(e), 64) for e in extra[:MAX_PROBLEMS]]
        if path == "spec":
            return "; ".join(["spec.%s: unknown add-on '%s' (known: %s)" % (e, e, ", ".join(known)) for e in extra] + more)
        return "; ".join(["%s.%s: unknown field '%s' (allowed: %s)" % (path, e, e, ", ".join(known)) for e in extra] + more)
    if validator == "required":
        missing = [r for r in error.validator_value if r not in error.instance]
        return "; ".join("%s.%s: required" % (path, m) if path != "(document)" else "%s: required" % m for m in missing)
    if validator == "enum":
        return "%s: %s is not one of %s" % (path, _render(error.instance), _names([str(v) for v in error.validator_value]))
    if validator == "const":
        return "%s: %s must be %s" % (path, _render(error.instance), _render(error.validator_value))
    if validator == "type":
        return "%s: %s is not of type %s" % (path, _render(error.instance), error.validator_value)
    if validator == "pattern":
        return "%s: %s does not match %s" % (path, _render(error.instance), error.validator_value)
    if validator in ("minimum", "maximum", "minLength", "maxLength"):
        return "%s: %s is out of range (%s %s)" % (path, _render(error.instance), validator, error.validator_value)
    return "%s: %s" % (path, _short(error.message.splitlines()[0] if error.message else validator, 200))


def _schema_problems(document):
    if not HAS_JSONSCHEMA:  # pragma: no cover
        raise missing_library("jsonschema", "to validate installer specs", JSONSCHEMA_IMPORT_ERROR, SpecError)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    problems = []
    for error in sorted(validator.iter_errors(document), key=lambda e: (list(map(str, e.absolute_path)), e.validator)):
        for line in _schema_problem(error).split("; "):
            if line not in problems:
                problems.append(line)
    if len(problems) > MAX_PROBLEMS:
        problems = problems[:MAX_PROBLEMS] + ["... and %d more problem(s)" % (len(problems) - MAX_PROBLEMS)]
    return problems


def _semantic_problems(addons):
    problems = []
    cnis = [a for a in CNI_ADDONS if a in addons]
    own_cni = (addons.get("kubernetes") or {}).get("cni") == NO_CNI
    if own_cni and cnis:
        problems.append("spec.kubernetes.cni: 'none' says the cluster brings its own CNI, but spec.%s is one; "
                        "remove one of them" % cnis[0])
    elif not own_cni and len(cnis) != 1:
        found = " and ".join(cnis) if cnis else "none"
        problems.append("spec: exactly one CNI add-on is required (%s), or kubernetes.cni: none to bring your own; "
                        "found %s" % (", ".join(CNI_ADDONS), found))
    if "ingressNginx" in addons and "contour" in addons:
        problems.append("spec: choose one ingress controller (ingressNginx or contour), not both")
    problems.extend(network_problems(addons.get("kubernetes") or {}))
    return problems


def _kurl_value(value):
    """A kURL field's value, or None when kURL treats it as unset (null or an empty string)."""
    return None if value is None or value == "" else value


def _map_kurl_addon(name, values, fields, mapped, unsupported, ignored_ports):
    """Copy one kURL add-on's mapped fields into ``mapped``; name its other fields (and in
    ``ignored_ports`` the warnings for mapped ports that do not fit)."""
    for field in sorted(values, key=str):
        if field not in fields:
            unsupported.append("spec.%s.%s" % (name, field))
            continue
        value = _kurl_value(values[field])
        if (name, field) in KURL_NODE_PORTS and isinstance(value, int) and not isinstance(value, bool) \
                and not NODE_PORT_RANGE[0] <= value <= NODE_PORT_RANGE[1]:
            unsupported.append("spec.%s.%s" % (name, field))
            ignored_ports.append("spec.%s.%s: %d is outside the NodePort range %d-%d (kURL widens the range, "
                                 "mooring.cluster keeps Kubernetes' default); ignored, the default port is used"
                                 % (name, field, value, NODE_PORT_RANGE[0], NODE_PORT_RANGE[1]))
            continue
        if value is None:
            continue
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


def _map_kurl(document):
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
                        "write cluster.kurl.sh/v1beta1" % _render(api_version))
    for key in sorted(document, key=str):
        if key not in KURL_TOP_LEVEL:
            unsupported.append(str(key))
            warnings.append("%s: not read by kURL or mooring.cluster; ignored" % key)
    if "kubernetes" not in spec:
        problems.append("spec.kubernetes: required; mooring.cluster installs upstream Kubernetes with kubeadm "
                        "(a kURL spec for k3s or rke2 has no counterpart)")
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
        if not isinstance(values, dict):
            if name in KURL_OTHER_CNIS:
                no_cni.append(name)
                unsupported.append(path)
                continue
            problems.append("%s: must be a mapping of the add-on's fields, not %s" % (path, _render(values)))
            continue
        if name in KURL_OTHER_CNIS:
            no_cni.append(name)
            unsupported.append(path)
            _map_kurl_addon(name, {k: v for k, v in values.items() if k in fields}, fields, mapped, [], [])
            continue
        if name not in KURL_SETTINGS:
            mapped.setdefault(name, {})
        before, ports = len(unsupported), []
        _map_kurl_addon(name, values, fields, mapped, unsupported, ports)
        warnings.extend("%s: kURL field not supported by mooring.cluster; ignored" % item
                        for item in unsupported[before:] if not any(p.startswith(item + ":") for p in ports))
        warnings.extend(ports)
    proxy = mapped.get("proxy")
    if proxy is not None and (proxy.pop(KURL_PROXY_OFF, False) is True or not ("http" in proxy or "https" in proxy)):
        if proxy and "http" not in proxy:
            warnings.append("spec.kurl.noProxyAddresses/additionalNoProxyAddresses: no proxyAddress (or noProxy: true); ignored")
        del mapped["proxy"]
    if "kubernetes" not in spec or any(cni in mapped for cni in CNI_ADDONS):
        # another CNI is installed, or no cluster mooring.cluster can install (the error says so)
        warnings.extend("spec.%s: kURL CNI not supported by mooring.cluster; ignored" % n for n in no_cni)
    else:
        kube = mapped.setdefault("kubernetes", {})
        kube["cni"] = NO_CNI
        if no_cni:
            pod = (" (its podCIDR is kept as kubernetes.podCIDR)" if "podCIDR" in kube else "")
            warnings.extend("spec.%s: kURL CNI not supported by mooring.cluster; the cluster is installed without a "
                            "CNI: install %s yourself after the control plane is up%s" % (n, n, pod) for n in no_cni)
        else:
            warnings.append("spec: no CNI add-on (calico or flannel); the cluster is installed without a CNI: "
                            "install one yourself after the control plane is up")
    metadata = document.get("metadata")
    metadata = copy.deepcopy(metadata) if isinstance(metadata, dict) else {}
    name = metadata.get("name")
    if name in (None, ""):
        metadata.pop("name", None)
    elif not (isinstance(name, str) and _DNS_NAME.match(name) and len(name) <= 63):
        warnings.append("metadata.name: %s is not a DNS name; the lock names the installer 'installer'" % _render(name))
        metadata.pop("name")
    result = {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": mapped}
    return result, unsupported, warnings, problems


def _shape(document):
    """``(source kind, problems)`` for the document's apiVersion, kind and spec.

    kURL's shapes are all accepted: ``cluster.kurl.sh/v1beta1`` or ``kurl.sh/v1beta1`` (any other version
    of those groups too, as kURL reads it, with a warning from :func:`_map_kurl`) with
    ``kind: Installer`` or no kind, and a bare body with ``spec`` and neither apiVersion nor kind
    (what kURL's API receives).
    """
    api_version, kind = document.get("apiVersion"), document.get("kind")
    problems = []
    if api_version is None and kind is None and "spec" in document:
        source = "kurl"
    elif isinstance(api_version, str) and api_version.startswith(KURL_API_GROUPS):
        source = "kurl"
        if kind is not None and kind != KIND:
            problems.append("kind: %s must be 'Installer'" % _render(kind))
    else:
        source = "mooring"
    if source == "kurl" and not isinstance(document.get("spec"), dict):
        problems.append("spec: required (a mapping of add-ons)")
    return source, problems


def _hash_document(source, document):
    """The document as kurl.sh parsed the same text (falls back to ``document``)."""
    if isinstance(source, dict):
        return document
    try:
        parsed = load_yaml_kurl(source)
    except Exception:  # a document js-yaml would reject: hash what we validated
        return document
    return parsed if isinstance(parsed, dict) else document


def _unset_empty_cidrs(document):
    """The document with an empty ``podCIDR`` or ``serviceCIDR`` of ``spec.kubernetes`` left out: an empty
    string is unset, as kURL takes it (the default applies). The hash still reads the document as given."""
    spec = document.get("spec")
    kube = spec.get("kubernetes") if isinstance(spec, dict) else None
    if not isinstance(kube, dict) or not any(kube.get(f) == "" for f in ("podCIDR", "serviceCIDR")):
        return document
    out = copy.deepcopy(document)
    for field in ("podCIDR", "serviceCIDR"):
        if out["spec"]["kubernetes"].get(field) == "":
            del out["spec"]["kubernetes"][field]
    return out


def _read(source):
    """``(document, source kind, checked document, unsupported, warnings, problems)`` before the schema."""
    document = load_document(source)
    source_kind, problems = _shape(document)
    if source_kind != "kurl" or problems:
        return document, source_kind, _unset_empty_cidrs(document), [], [], problems
    checked, unsupported, warnings, problems = _map_kurl(document)
    return document, source_kind, checked, unsupported, warnings, problems


def parse_installer(source):
    """Validate an installer document; return an :class:`Installer` or raise SpecError.

    The SpecError carries the document's warnings too (``warnings``), so a front end names every
    ignored kURL add-on or field even when the document is invalid.
    """
    document, source_kind, checked, unsupported, warnings, problems = _read(source)
    if problems:
        raise SpecError("the installer spec is invalid", problems, warnings)
    problems = _schema_problems(checked)
    spec = checked.get("spec") if isinstance(checked.get("spec"), dict) else {}
    addons = {}
    for name, values in spec.items():
        if isinstance(values, dict) and name not in SETTINGS_SCHEMAS:
            merged = copy.deepcopy(DEFAULTS.get(name, {}))
            merged.update(copy.deepcopy(values))
            addons[name] = merged
    if not problems:
        problems.extend(_semantic_problems(addons))
    if problems:
        raise SpecError("the installer spec is invalid", problems, warnings)
    metadata = checked.get("metadata") if isinstance(checked.get("metadata"), dict) else {}
    installer = Installer(document, addons, source_kind, unsupported, _hash_document(source, document), warnings,
                          str(metadata.get("name") or "installer"))
    chosen = spec.get("hostPreflights") or {}
    if chosen.get("documents"):
        docs = chosen["documents"]
        installer.host_preflights = {"documents": copy.deepcopy(docs if isinstance(docs, list) else [docs]),
                                     "enforceWarnings": bool(chosen.get("enforceWarnings", False))}
    if spec.get("proxy"):
        installer.proxy = copy.deepcopy(spec["proxy"])
    try:
        installer.hash_now()
    except KurlHashError as exc:  # kURL could not have hashed it either
        raise SpecError("the installer spec cannot be hashed", exc.problems, warnings) from None
    return installer


def hash_installer(source):
    """``(7-character hash, 64-hex digest, warnings)`` of an Installer document.

    The add-ons are not validated: hashing is defined for any Installer document kURL would
    hash, including kURL add-ons mooring.cluster does not support (named in ``warnings``).
    """
    document = load_document(source)
    source_kind, problems = _shape(document)
    warnings = []
    if source_kind == "kurl" and not problems:
        warnings = _map_kurl(document)[2]  # what the spec maps to does not change its hash
    if source_kind == "mooring":
        if document.get("kind") != KIND or document.get("apiVersion") != API_VERSION:
            problems.append("not an Installer document: apiVersion must be one of %s (or another version of "
                            "kURL's groups) and kind must be Installer" % ", ".join((API_VERSION,) + KURL_API_VERSIONS))
        elif not isinstance(document.get("spec"), dict):
            problems.append("spec: required (a mapping of add-ons)")
    if problems:
        raise SpecError("the installer document cannot be hashed", problems, warnings)
    hashed = _hash_document(source, document)
    spec = hashed.get("spec") if isinstance(hashed.get("spec"), dict) else document["spec"]
    try:
        digest = kurl_hash_digest(spec, hashed.get("apiVersion"))
    except KurlHashError as exc:
        raise SpecError("the installer spec cannot be hashed", exc.problems, warnings) from None
    return digest[:7], digest, warnings
