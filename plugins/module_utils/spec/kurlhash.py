# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: kURL's installer ID (``Installer.hash()``), byte for byte.

kurl.sh names an anonymous installer by the first 7 hex characters of a SHA-256 over
its *unresolved* ``spec`` (``latest``/``1.x`` versions stay as written; apiVersion, kind
and metadata are not hashed).  The rules, as implemented by kURL's TypeScript API
(``Installer.parse`` followed by ``Installer.hash``):

1. The document is read with js-yaml 4 (``yaml.load``, DEFAULT_SCHEMA).
2. Legacy field conversions run on a deep copy of ``spec`` (:func:`legacy_conversions`):
   ``weave.encryptNetwork`` -> ``weave.isEncryptionDisabled``, ``fluentd.efkStack`` ->
   ``fullEFKStack``, ``weave.IPAllocRange`` -> ``podCidrRange``, ``rook.storageClass`` ->
   ``storageClassName``, ``rook.cephPoolReplicas`` -> ``cephReplicaCount``; then
   ``collectd.version: "0.0.1"`` becomes ``"v5"``; and for ``apiVersion: kurl.sh/v1beta1``
   documents the addons docker, weave, rook, contour, registry, prometheus and kotsadm
   are dropped when their ``version`` is falsy.
3. SHA-256 is fed, with no separators, first up to eight legacy strings in this fixed
   order, each only when the value is truthy in JavaScript::

       kubernetes_version=  weave_version=  rook_version=  contour_version=
       registry_version=  prometheus_version=  kotsadm_version=  kotsadm_applicationSlug=

   then, sorted in JavaScript string order (UTF-16 code units), one
   ``<addon>_<field>=<value>`` string for every other field of every addon (``undefined``
   is the only value skipped; ``false``, ``null``, ``""`` and ``0`` are hashed).  Scalars
   are written as JavaScript's ``String()`` writes them (``1.0`` -> ``1``, ``1e21`` ->
   ``1e+21``, ``true``, ``null``); objects, arrays, dates and binary values are replaced
   by their npm ``object-hash`` v3 digest (see :mod:`.object_hash`).

The published example: ``kubernetes: {version: "1.15.3"}`` -> ``3138d30``.

The document is read by :mod:`spec.specyaml` (:func:`load_yaml_kurl`: js-yaml 4.1 as kurl.sh read it).
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import math

from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import KurlHashError, ObjectHashError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.object_hash import (
    UNDEFINED,
    js_key,
    js_keys,
    js_number_to_string,
    js_sort_key,
    js_utf8,
    object_hash,
)
from ansible_collections.mooring.cluster.plugins.module_utils.spec.specyaml import load_yaml_kurl

__all__ = [
    "LEGACY_FIELDS",
    "kurl_hash",
    "kurl_hash_digest",
    "kurl_hash_input",
    "kurl_hash_yaml",
    "legacy_conversions",
]

LEGACY_FIELDS = (
    ("kubernetes", "version"),
    ("weave", "version"),
    ("rook", "version"),
    ("contour", "version"),
    ("registry", "version"),
    ("prometheus", "version"),
    ("kotsadm", "version"),
    ("kotsadm", "applicationSlug"),
)
_LEGACY_KEYS = frozenset("%s_%s" % pair for pair in LEGACY_FIELDS)
# kURL skips a field when ``legacy[fieldKey]`` is truthy; ``legacy`` is an object literal,
# so inherited Object.prototype members count too.  Only these can have the form "a_b".
_INHERITED_KEYS = frozenset(("__proto__", "__defineGetter__", "__defineSetter__",
                             "__lookupGetter__", "__lookupSetter__"))
# Addons dropped by migrateV1Beta1 when their version is falsy.
_V1BETA1_ADDONS = ("docker", "weave", "rook", "contour", "registry", "prometheus", "kotsadm")
V1BETA1_API_VERSION = "kurl.sh/v1beta1"


# ----------------------------------------------------------------- JavaScript semantics


def _js_truthy(value):
    if value is UNDEFINED or value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return not math.isnan(value) and value != 0
    if isinstance(value, str):
        return value != ""
    return True  # objects, arrays, dates and buffers, even empty ones


def _is_object(value):
    """``val === Object(val)``: anything that is not a primitive."""
    return isinstance(value, (dict, list, tuple, datetime.date, bytes, bytearray))


def _js_string(value):
    """``String(value)`` for a primitive."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number_to_string(value)
    raise KurlHashError("cannot write %r as JavaScript would" % (value,))


def _js_template(value, _active=None):
    """```${value}``` for any value kURL may interpolate (the legacy fields)."""
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, (list, tuple)):
        active = _active if _active is not None else []
        if any(seen is value for seen in active):
            raise KurlHashError("a self-referencing list cannot be written as a string")
        active.append(value)
        parts = ["" if item is None else _js_template(item, active) for item in value]
        active.pop()
        return ",".join(parts)
    if isinstance(value, (datetime.date, bytes, bytearray)):
        raise KurlHashError("kURL would write this %s with the server's locale or time zone"
                            % type(value).__name__)
    return _js_string(value)


def _prop(value, name):
    """``value[name]`` for a property read kURL does (mappings only; else undefined)."""
    if isinstance(value, dict):
        if name in value:
            return value[name]
        for key, item in value.items():
            try:
                if not isinstance(key, str) and js_key(key) == name:
                    return item
            except ObjectHashError:
                continue
    return UNDEFINED


def _lodash_get(obj, path):
    """``_.get(obj, "a.b")``: a literal key named ``"a.b"`` wins over the path."""
    if isinstance(obj, dict) and _prop(obj, path) is not UNDEFINED:
        return _prop(obj, path)
    for name in path.split("."):
        if obj is None or obj is UNDEFINED:
            return UNDEFINED
        obj = _prop(obj, name)
    return obj


def _lodash_keys(value):
    """``[(key, value)]`` as ``_.keys(value)`` + ``value[key]`` gives them."""
    if isinstance(value, dict):
        try:
            return js_keys(value)
        except ObjectHashError as err:
            raise KurlHashError(str(err)) from err
    if isinstance(value, (list, tuple)):
        return [(str(i), item) for i, item in enumerate(value)]
    if isinstance(value, str):  # string primitives are array-like: one key per UTF-16 unit
        units = value.encode("utf-16-le", "surrogatepass")
        return [(str(i), units[2 * i:2 * i + 2].decode("utf-16-le", "surrogatepass"))
                for i in range(len(units) // 2)]
    if isinstance(value, (bytes, bytearray)):
        return [(str(i), byte) for i, byte in enumerate(value)]
    return []  # numbers, booleans, null, dates: no own enumerable keys


# ------------------------------------------------------------------------------- hash


def legacy_conversions(spec, api_version=None):
    """kURL's conversions before hashing (``Installer.parse``), on a deep copy of ``spec``.

    ``legacyFieldConversion()``, the collectd ``0.0.1`` -> ``v5`` rename and, for
    ``api_version == "kurl.sh/v1beta1"``, ``migrateV1Beta1()``.  Raises
    :class:`KurlHashError` where kURL would have thrown (``weave: null``).
    """
    if not isinstance(spec, dict):
        raise KurlHashError("the installer spec must be a mapping, not %s" % type(spec).__name__)
    spec = copy.deepcopy(spec)  # keeps shared (aliased) sub-objects shared, as _.cloneDeep does

    weave = _prop(spec, "weave")
    if weave is not UNDEFINED:
        if weave is None:
            raise KurlHashError("spec.weave is null (kURL fails reading weave.encryptNetwork)")
        if isinstance(weave, dict) and "encryptNetwork" in weave:
            if "isEncryptionDisabled" not in weave:
                weave["isEncryptionDisabled"] = weave["encryptNetwork"] is not True
            del weave["encryptNetwork"]

    for addon, old, new in (("fluentd", "efkStack", "fullEFKStack"),
                            ("weave", "IPAllocRange", "podCidrRange"),
                            ("rook", "storageClass", "storageClassName"),
                            ("rook", "cephPoolReplicas", "cephReplicaCount")):
        if not _js_truthy(_lodash_get(spec, "%s.%s" % (addon, old))):
            continue
        config = _prop(spec, addon)
        if not (_js_truthy(config) and isinstance(config, dict)):
            continue
        if _js_truthy(_prop(config, old)) and not _js_truthy(_prop(config, new)):
            config[new] = config[old]
        config.pop(old, None)

    collectd = _prop(spec, "collectd")
    if isinstance(collectd, dict) and collectd.get("version") == "0.0.1":
        collectd["version"] = "v5"

    if api_version == V1BETA1_API_VERSION:
        for addon in _V1BETA1_ADDONS:
            if not _js_truthy(_lodash_get(spec, addon + ".version")):
                spec.pop(addon, None)
    return spec


def kurl_hash_input(spec, api_version=None, convert=True):
    """The strings kURL feeds to SHA-256, in order (after the conversions unless ``convert=False``)."""
    if convert:
        spec = legacy_conversions(spec, api_version)
    elif not isinstance(spec, dict):
        raise KurlHashError("the installer spec must be a mapping, not %s" % type(spec).__name__)

    head = []
    for addon, field in LEGACY_FIELDS:
        config = _prop(spec, addon)
        value = _prop(config, field) if _js_truthy(config) else UNDEFINED
        if _js_truthy(value):
            head.append("%s_%s=%s" % (addon, field, _js_template(value)))

    fields = []
    for addon, config in _lodash_keys(spec):
        for field, value in _lodash_keys(config):
            field_key = "%s_%s" % (addon, field)
            if value is UNDEFINED or field_key in _LEGACY_KEYS or field_key in _INHERITED_KEYS:
                continue
            try:
                text = object_hash(value) if _is_object(value) else _js_string(value)
            except ObjectHashError as err:
                raise KurlHashError("spec.%s.%s: %s" % (addon, field, err)) from err
            fields.append("%s=%s" % (field_key, text))
    fields.sort(key=js_sort_key)
    return head + fields


def kurl_hash_digest(spec, api_version=None):
    """Full SHA-256 hex digest of ``spec`` computed kURL's way (conversions included).

    ``spec`` is the mapping under the document's ``spec:`` key.  Pass the document's
    ``apiVersion`` as ``api_version`` when it may be ``kurl.sh/v1beta1`` (which drops
    addons whose version is empty before hashing).
    """
    digest = hashlib.sha256()
    for part in kurl_hash_input(spec, api_version):
        digest.update(js_utf8(part))
    return digest.hexdigest()


def kurl_hash(spec, api_version=None):
    """kurl.sh's installer ID for ``spec``: the first 7 hex characters of the digest."""
    return kurl_hash_digest(spec, api_version)[:7]


def kurl_hash_yaml(text):
    """kurl.sh's installer ID for a whole Installer document, as POST /installer computes it.

    Loaded with :func:`load_yaml_kurl`; a missing or non-mapping ``spec`` hashes as ``{}``,
    as in kURL.  (kurl.sh answers ``/latest`` instead of an ID when every addon is
    ``latest``; that check is not made here.)
    """
    try:
        document = load_yaml_kurl(text)
    except yamlio.YamlInputError as err:
        raise KurlHashError("YAML could not be parsed: %s" % err) from None
    spec, api_version = {}, None
    if isinstance(document, dict):
        api_version = document.get("apiVersion")
        if isinstance(document.get("spec"), dict):
            spec = document["spec"]
    return kurl_hash(spec, api_version)
