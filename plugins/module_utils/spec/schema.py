# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the installer spec's schema (a JSON schema), and its problems in one style.

:data:`SCHEMA` is what a mooring ``Installer`` document may hold: the add-ons (:data:`ADDON_SCHEMAS`)
and the settings (:data:`SETTINGS_SCHEMAS`). :func:`schema_problems` validates a document with
jsonschema and words each problem as :mod:`common.shape` does (``PATH: must be EXPECTED, not FOUND``
where that can be said, else ``PATH: <jsonschema's message>``); the front end names the file.

Every ``pattern`` here is written ``^...$`` and matched against the whole string (:func:`_whole_pattern`, the one
place): with jsonschema's own ``re.search``, Python's ``$`` also matches before a final newline, so ``"1.2.3\n"``
was a version and ``"http://proxy:3128\n"`` a proxy URL.
"""

from __future__ import annotations

import re

try:
    import jsonschema

    HAS_JSONSCHEMA = True
    JSONSCHEMA_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - exercised only without jsonschema
    HAS_JSONSCHEMA = False
    JSONSCHEMA_IMPORT_ERROR = _exc

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, missing_library, reason
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import field, type_name
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import SpecError

API_VERSION = "cluster.mooring.io/v1beta1"
KIND = "Installer"
VERSION_PATTERN = r"^(latest|(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.x|v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?)$"
VERSION_HELP = "an exact version, 'latest' or 'X.Y.x'"
DNS_LABELS = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
MAX_PROBLEMS = 20  # schema problems listed; the rest are counted
# An absolute path, on one line.
ABSOLUTE_PATH = r"^/[^\x00\r\n]*$"


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
# The kubelet's eviction signals (evictionHard keys) and a threshold: a quantity (100Mi) or a percentage (10%).
EVICTION_SIGNALS = ("memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
                    "imagefs.inodesFree", "containerfs.available", "containerfs.inodesFree",
                    "allocatableMemory.available", "pid.available")
EVICTION_THRESHOLD = r"^[0-9]+(\.[0-9]+)?(%|[KMGTPE]i|[kMGTPE])?$"
# What a pattern means, in a problem's words.
PATTERN_HELP = {EVICTION_THRESHOLD: "a quantity (100Mi) or a percentage (10%)",
                ABSOLUTE_PATH: "an absolute path (starting with /, on one line)"}

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
                # false: the kubelet runs on cgroup v1 (it refuses from Kubernetes 1.35 otherwise) and kubeadm
                # ignores its SystemVerification preflight error there (docs/installer.md).
                "failCgroupV1": {"type": "boolean"},
                "evictionHard": {"type": "object", "propertyNames": {"enum": list(EVICTION_SIGNALS)},
                                 "additionalProperties": {"type": "string", "pattern": EVICTION_THRESHOLD}},
                # Above the kubelet's imageGCLowThresholdPercent (80, its default), or the kubelet refuses its
                # configuration; 100 turns image garbage collection off.
                "imageGCHighThresholdPercent": {"type": "integer", "minimum": 81, "maximum": 100},
                "extraArgs": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "kubeProxy": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "mode": {"enum": ["iptables", "ipvs", "nftables"]},
                # kube-proxy's conntrack.maxPerCore; 0 leaves nf_conntrack_max as it is (in a container, which
                # cannot set it).
                "conntrackMaxPerCore": {"type": "integer", "minimum": 0, "maximum": 2 ** 31 - 1},
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
        # Pods get an oom_score_adj no lower than containerd's own: for hosts where raising a process's
        # OOM protection is not allowed (no CAP_SYS_RESOURCE: unprivileged or nested containers, rootless).
        "restrictOOMScoreAdj": {"type": "boolean"},
    }),
    "calico": _addon({"encapsulation": {"enum": ["VXLAN", "IPIP", "None"]}, "mtu": {"type": "integer", "minimum": 576}}),
    "cilium": _addon({"tunnel": {"enum": ["vxlan", "geneve", "disabled"]}, "kubeProxyReplacement": {"type": "boolean"}}),
    "flannel": _addon({"backend": {"enum": ["vxlan", "host-gw"]}}),
    "localPathProvisioner": _addon({"path": {"type": "string", "pattern": ABSOLUTE_PATH}, "default": {"type": "boolean"}}),
    "longhorn": _addon({"replicas": {"type": "integer", "minimum": 1, "maximum": 5}, "default": {"type": "boolean"}}),
    "openebs": _addon({"path": {"type": "string", "pattern": ABSOLUTE_PATH}, "default": {"type": "boolean"}}),
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


# What a JSON schema type is called in a message (as common.shape calls it).
_TYPES = {"string": "a string", "integer": "a whole number", "number": "a number", "boolean": "true or false",
          "object": "a mapping", "array": "a list", "null": "nothing (null)"}


def found(value):
    """What a message says was found: a mapping's or a list's kind, a scalar's bounded excerpt."""
    return type_name(value) if isinstance(value, (dict, list)) else excerpt(value)


def names(values, limit=8):
    """``values`` joined, at most ``limit`` of them, each bounded."""
    shown = ", ".join(str(v) if len(str(v)) <= 64 else excerpt(str(v), 64) for v in values[:limit])
    return shown + (", ... (%d more)" % (len(values) - limit) if len(values) > limit else "")


def path_of(parts):
    """A jsonschema error's ``absolute_path`` as a field path (``spec.addons[2].version``)."""
    out = ""
    for part in parts:
        out = field(out, part)
    return out


def _expected(error, path):
    """What the field must be, as common.shape says it, or None when jsonschema's own words are needed."""
    validator, want = error.validator, error.validator_value
    if validator == "pattern":
        return VERSION_HELP if path.endswith(".version") else PATTERN_HELP.get(want, "a string matching %s" % want)
    if validator == "enum":
        return "one of %s" % names([str(v) for v in want])
    if validator == "const":
        return excerpt(want)
    if validator == "type":
        return _TYPES.get(want, str(want))
    if validator in ("minimum", "maximum"):
        return "%s %s" % ("at least" if validator == "minimum" else "at most", want)
    if validator == "minLength":
        return "a non-empty string" if want == 1 else "at least %d characters long" % want
    if validator == "maxLength":
        return "at most %d characters long" % want
    return None


def _unknown_keys(error, path):
    known = sorted(error.schema.get("properties", {}))
    extra = sorted(set(error.instance) - set(known), key=str)
    what = "add-on" if path == "spec" else "field"
    lines = ["%s: is not a known %s (known: %s)" % (field(path, key), what, ", ".join(known)) for key in extra[:MAX_PROBLEMS]]
    if len(extra) > MAX_PROBLEMS:
        lines.append("%s: %d more unknown key(s)" % (path, len(extra) - MAX_PROBLEMS))
    return lines


def schema_problem(error):
    """One jsonschema ``ValidationError`` as lines in common.shape's style: ``PATH: must be EXPECTED, not FOUND``
    (a wrong type shows the kind found, a wrong value its excerpt), ``PATH: is missing``, ``PATH: is not a known
    field (known: ...)``, else ``PATH: <jsonschema's message>``."""
    path = path_of(error.absolute_path)
    if error.validator == "additionalProperties":
        return _unknown_keys(error, path)
    if error.validator == "required":
        return ["%s: is missing" % field(path, key) for key in error.validator_value if key not in error.instance]
    expected = _expected(error, path)
    where = path or "(document)"
    if expected is None:
        return ["%s: %s" % (where, reason(error.message or error.validator))]
    shown = type_name(error.instance) if error.validator == "type" else found(error.instance)
    return ["%s: must be %s, not %s" % (where, expected, shown)]


def _whole_pattern(validator, pattern, instance, schema):
    """The ``pattern`` keyword, the whole string matched (``re.fullmatch``): ``$`` never accepts a final newline."""
    if validator.is_type(instance, "string") and not re.fullmatch(pattern, instance):
        yield jsonschema.ValidationError("%r does not match %r" % (instance, pattern))


def schema_problems(document):
    """Every problem :data:`SCHEMA` finds in ``document`` (one line each, in path order, at most
    :data:`MAX_PROBLEMS` and a count of the rest); raises SpecError without jsonschema."""
    if not HAS_JSONSCHEMA:  # pragma: no cover
        raise missing_library("jsonschema", "to validate installer specs", JSONSCHEMA_IMPORT_ERROR, SpecError)
    checker = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _whole_pattern})
    validator = checker(SCHEMA)
    problems = []
    for error in sorted(validator.iter_errors(document), key=lambda e: (list(map(str, e.absolute_path)), e.validator)):
        for line in schema_problem(error):
            if line not in problems:
                problems.append(line)
    if len(problems) > MAX_PROBLEMS:
        problems = problems[:MAX_PROBLEMS] + ["... and %d more problem(s)" % (len(problems) - MAX_PROBLEMS)]
    return problems
