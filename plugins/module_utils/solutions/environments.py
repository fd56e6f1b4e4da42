# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: solution environments as mooring and MetalK8s label them.

An environment is one or more namespaces carrying an environment label, a description
annotation on them, and a ConfigMap in one of them whose data maps each solution the
environment runs to its version. Two *flavours* of names exist (:data:`FLAVOURS`):

* ``mooring``: label ``solutions.mooring.io/environment``, annotation
  ``solutions.mooring.io/environment-description``, ConfigMap ``mooring-environment``;
* ``metalk8s``: label ``solutions.metalk8s.scality.com/environment``, annotation
  ``solutions.metalk8s.scality.com/environment-description``, ConfigMap ``metalk8s-environment``
  (what MetalK8s writes: a cluster moved from MetalK8s keeps its environments).

:func:`environments_from_objects` reads the environments from the Namespace and ConfigMap
objects as the API returns them; :func:`environment_state` says, for one environment action,
which flavour, namespace and current solutions it works on. An environment keeps its flavour
on every change; a new one is mooring's. Pure functions: the ``solutions`` role lists the
objects with ``kubernetes.core.k8s_info``.
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import metalk8s
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.manifest import NAME_RE, NAME_WHAT, VERSION_RE, VERSION_WHAT

MOORING = "mooring"
METALK8S = "metalk8s"
FLAVOURS = {
    MOORING: {"label": "solutions.mooring.io/environment",
              "description": "solutions.mooring.io/environment-description",
              "configmap": "mooring-environment"},
    METALK8S: {"label": "solutions.metalk8s.scality.com/environment",
               "description": "solutions.metalk8s.scality.com/environment-description",
               "configmap": "metalk8s-environment"},
}
# MetalK8s names environments, their namespaces and solutions as RFC 1123 DNS labels.
# What each flavour accepts as a name (environment, namespace, solution): (regex, in words).
NAME_RULES = {MOORING: (NAME_RE, NAME_WHAT), METALK8S: (metalk8s.NAME_RE, metalk8s.NAME_WHAT)}
MAX_DESCRIPTION = 1024


def flavour_names(flavour):
    """The label, annotation and ConfigMap names of ``flavour``."""
    if flavour not in FLAVOURS:
        raise SolutionError("environment flavour %s: choose %s" % (excerpt(flavour), " or ".join(sorted(FLAVOURS))))
    return FLAVOURS[flavour]


def check_name(kind, value, flavour=MOORING):
    """``value`` when it is a valid ``kind`` name (environment, namespace, solution) in ``flavour``."""
    flavour_names(flavour)
    regex, what = NAME_RULES[flavour]
    if not isinstance(value, str) or not re.match(regex, value):
        raise SolutionError("%s %s is not a valid name: it must be %s" % (kind, excerpt(value), what))
    return value


def _name_of(obj, kind):
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise SolutionError("%s %s: metadata.name: must be a non-empty string" % (kind, excerpt(obj, 60)))
    return name


def _namespace_label(ns, shape, has_configmap):
    """``(environment, flavour)`` a Namespace object is labelled with, or None."""
    meta = ns["metadata"]
    labels = shape.mapping(meta.get("labels"), "metadata.labels", optional=True)
    values = {f: labels[FLAVOURS[f]["label"]] for f in FLAVOURS if FLAVOURS[f]["label"] in labels}
    if not values:
        return None
    if len(set(values.values())) > 1:
        shape.fail("metadata.labels", "must name one environment, not %s" % " and ".join(
            "%s in %s" % (excerpt(values[f]), FLAVOURS[f]["label"]) for f in sorted(values)))
    if len(values) == 1:
        flavour = next(iter(values))
    else:  # both labels, one value: MetalK8s's only when its ConfigMap alone is there
        flavour = METALK8S if has_configmap(METALK8S) and not has_configmap(MOORING) else MOORING
    regex, what = NAME_RULES[flavour]
    shape.pattern(values[flavour], field("metadata.labels", FLAVOURS[flavour]["label"]), re.compile(regex),
                  "an environment name: " + what)
    return values[flavour], flavour


def _solutions_of(cm, namespace, flavour):
    """The ``{solution: version}`` data of an environment's ConfigMap, each key and value checked."""
    shape = Shape("ConfigMap %s/%s" % (namespace, FLAVOURS[flavour]["configmap"]), SolutionError)
    data = shape.mapping(cm.get("data"), "data", optional=True)
    regex, what = NAME_RULES[flavour]
    for key in sorted(data, key=str):
        if not isinstance(key, str) or not re.match(regex, key):
            shape.fail(field("data", key), "must be keyed by a solution name (%s)" % what)
        shape.pattern(data[key], field("data", key), re.compile(VERSION_RE), VERSION_WHAT)
    return {k: data[k] for k in sorted(data)}


def environments_from_objects(namespaces, configmaps):
    """Every environment the Namespace and ConfigMap objects (as the API returns them) describe.

    Returns ``{env: {"name", "flavour", "namespaces", "namespace", "description", "solutions"}}``:
    ``namespaces`` sorted (the API's order), ``namespace`` the one holding the environment's
    ConfigMap (the first found, as MetalK8s reads it; else the first namespace), ``solutions`` its
    data. Objects without an environment label, and ConfigMaps that are not an environment's, are
    ignored. A namespace labelled for two environments, environment namespaces of two flavours,
    or a bad name or version is a :class:`SolutionError` naming the object and the field.
    """
    maps = {}
    for cm in configmaps or []:
        meta = cm.get("metadata") or {}
        maps[(meta.get("namespace"), _name_of(cm, "ConfigMap"))] = cm
    envs = {}
    for ns in sorted(namespaces or [], key=lambda n: _name_of(n, "Namespace")):
        name = _name_of(ns, "Namespace")
        shape = Shape("Namespace %s" % name, SolutionError)
        found = _namespace_label(ns, shape, lambda f, n=name: (n, FLAVOURS[f]["configmap"]) in maps)
        if found is None:
            continue
        env, flavour = found
        check_name("namespace", name, flavour)
        entry = envs.setdefault(env, {"name": env, "flavour": flavour, "namespaces": [], "namespace": None,
                                      "description": "", "solutions": {}})
        if entry["flavour"] != flavour:
            shape.fail(field("metadata.labels", FLAVOURS[flavour]["label"]),
                       "must be %s's own flavour of label (%s, as on namespace %s), not %s's"
                       % (env, FLAVOURS[entry["flavour"]]["label"], entry["namespaces"][0], flavour))
        entry["namespaces"].append(name)
        annotations = shape.mapping(ns["metadata"].get("annotations"), "metadata.annotations", optional=True)
        description = annotations.get(FLAVOURS[flavour]["description"])
        if description and not entry["description"]:
            entry["description"] = shape.text(description, field("metadata.annotations", FLAVOURS[flavour]["description"]),
                                              limit=MAX_DESCRIPTION)
        cm = maps.get((name, FLAVOURS[flavour]["configmap"]))
        if cm is not None and entry["namespace"] is None:
            entry["solutions"] = _solutions_of(cm, name, flavour)
            entry["namespace"] = name
    for entry in envs.values():
        entry["namespace"] = entry["namespace"] or entry["namespaces"][0]
    return envs


def environment_state(environments, env, namespace=None):
    """What an action on environment ``env`` works on: ``{"exists", "flavour", "namespace", "namespaces",
    "description", "solutions"}``.

    ``environments`` is :func:`environments_from_objects`'s result. A new environment is mooring's,
    in ``namespace`` (default: its name). An existing one keeps its flavour and is changed where its
    ConfigMap is: a ``namespace`` given must be that one (mooring does not add namespaces to an
    environment).
    """
    check_name("environment", env, METALK8S)
    found = environments.get(env)
    if found is None:
        check_name("environment", env, MOORING)
        return {"exists": False, "flavour": MOORING, "namespace": namespace or env, "namespaces": [],
                "description": "", "solutions": {}}
    if namespace and namespace != found["namespace"]:
        if namespace in found["namespaces"]:
            raise SolutionError(
                "environment %s keeps its ConfigMap %s in namespace %s (of %s): give that namespace or none, not %s"
                % (env, FLAVOURS[found["flavour"]]["configmap"], found["namespace"], ", ".join(found["namespaces"]),
                   namespace))
        raise SolutionError("environment %s already exists in %s; mooring does not add namespace %s to it"
                            % (env, ", ".join(found["namespaces"]), namespace))
    return {"exists": True, "flavour": found["flavour"], "namespace": found["namespace"],
            "namespaces": list(found["namespaces"]), "description": found["description"],
            "solutions": dict(found["solutions"])}
