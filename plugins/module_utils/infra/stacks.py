# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: versioned cluster stacks and their Cluster API export.

A stack lives in ``stacks/<provider>/<stack>/<kubernetes-major-minor>/`` (``1-34``)::

    metadata.yaml          metadata.clusterstack.x-k8s.io/v1alpha1 versions
    installer.yaml         the installer spec (exact versions only)
    cluster-class/         provider settings for the ClusterClass (openstack.yaml)
    cluster-addon/         values.yaml: Helm values per add-on for the cluster-addon chart
    node-image/            image.yaml: the node image definition
    release.yaml           the last release: its versions and the content hash of each part

Parts and what each content hash covers (every hash is independent of file order,
modification times and permissions):

* ``clusterAddon`` (component): ``cluster-addon/`` plus the installer spec's add-ons that the
  cluster-addon chart installs (everything but kubernetes, etcd and containerd);
* ``nodeImage`` (component): ``node-image/`` plus the spec's kubernetes and containerd entries;
* ``clusterClass`` (no version of its own): ``cluster-class/`` plus the whole installer spec.

``plan_versions`` bumps a component's version exactly when its hash differs from the last
release's, and the stack version when any part changed; never otherwise.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import stat

try:
    import yaml

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - PyYAML comes with ansible-core on the controller
    HAS_YAML = False
    YAML_IMPORT_ERROR = _exc

from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import canonical_json, sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import write_if_changed

METADATA_API_VERSION = "metadata.clusterstack.x-k8s.io/v1alpha1"
RELEASE_API_VERSION = "cluster.mooring.io/v1beta1"
RELEASE_KIND = "StackRelease"
COMPONENTS = ("clusterAddon", "nodeImage")
PARTS = ("clusterAddon", "nodeImage", "clusterClass")
PART_DIRS = {"clusterAddon": "cluster-addon", "nodeImage": "node-image", "clusterClass": "cluster-class"}
NODE_IMAGE_ADDONS = ("kubernetes", "containerd")
NOT_IN_CLUSTER_ADDON = ("kubernetes", "etcd", "containerd")
CAPI_GROUP_VERSION = "cluster.x-k8s.io/v1beta1"
KCP_GROUP_VERSION = "controlplane.cluster.x-k8s.io/v1beta1"
KUBEADM_GROUP_VERSION = "bootstrap.cluster.x-k8s.io/v1beta1"
CAPO_GROUP_VERSION = "infrastructure.cluster.x-k8s.io/v1beta1"

_VN = re.compile(r"^v([1-9][0-9]*)$")
_KUBE = re.compile(r"^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
_MINOR_DIR = re.compile(r"^(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$")
_EXACT = re.compile(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class StackError(MooringError):
    """A cluster stack is malformed, out of date or cannot be exported; nothing was written."""


# --------------------------------------------------------------------------- hashing
def tree_entries(root):
    """``[(relative posix path, kind, digest)]`` for everything under ``root``, sorted.

    Regular files by content, symlinks by target; names starting with ``.`` are skipped
    (editor and OS noise); modes, owners and times are never looked at.
    """
    entries = []
    if not os.path.isdir(root):
        return entries
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if name.startswith("."):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                entries.append((rel, "link", hashlib.sha256(os.readlink(full).encode("utf-8")).hexdigest()))
            elif stat.S_ISREG(mode):
                entries.append((rel, "file", sha256_file(full)[0]))
    return sorted(entries)


def part_hash(root, spec_parts):
    """sha256 over a directory's entries and a canonical JSON of the spec sections it ships."""
    h = hashlib.sha256()
    for rel, kind, digest in tree_entries(root):
        h.update(("%s\0%s\0%s\n" % (rel, kind, digest)).encode("utf-8"))
    h.update(b"spec\0")
    h.update(canonical_json(spec_parts))
    return "sha256:" + h.hexdigest()


# --------------------------------------------------------------------------- loading
def _load_yaml(path, what):
    if not HAS_YAML:  # pragma: no cover
        raise StackError("the Python library PyYAML is required: %s" % YAML_IMPORT_ERROR)
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except FileNotFoundError:
        raise StackError("%s missing" % what, ["%s: %s is missing" % (path, what)]) from None
    except yaml.YAMLError as exc:
        raise StackError("bad YAML", ["%s: not valid YAML: %s" % (path, str(exc).replace("\n", " "))]) from None


def _version_number(value, field, path):
    m = _VN.match(str(value)) if isinstance(value, str) else None
    if not m:
        raise StackError("bad version", ["%s: %s is %r, expected v<N> (v1, v2, ...)" % (path, field, value)])
    return int(m.group(1))


def load_metadata(path):
    doc = _load_yaml(path, "metadata.yaml")
    problems = []
    if not isinstance(doc, dict):
        raise StackError("bad metadata", ["%s: must be a mapping" % path])
    if doc.get("apiVersion") != METADATA_API_VERSION:
        problems.append("%s: apiVersion is %r, expected %r" % (path, doc.get("apiVersion"), METADATA_API_VERSION))
    versions = doc.get("versions") if isinstance(doc.get("versions"), dict) else {}
    components = versions.get("components") if isinstance(versions.get("components"), dict) else {}
    try:
        _version_number(versions.get("clusterStack"), "versions.clusterStack", path)
        for c in COMPONENTS:
            _version_number(components.get(c), "versions.components.%s" % c, path)
    except StackError as exc:
        problems.extend(exc.problems)
    if not _KUBE.match(str(versions.get("kubernetes"))):
        problems.append("%s: versions.kubernetes is %r, expected vX.Y.Z" % (path, versions.get("kubernetes")))
    extra = sorted(set(components) - set(COMPONENTS))
    if extra:
        problems.append("%s: unknown components %s (known: %s)" % (path, ", ".join(extra), ", ".join(COMPONENTS)))
    if problems:
        raise StackError("bad metadata", problems)
    return doc


def metadata_versions(doc):
    v = doc["versions"]
    return {"clusterStack": v["clusterStack"], "kubernetes": v["kubernetes"],
            "components": {c: v["components"][c] for c in COMPONENTS}}


def load_release(path):
    if not os.path.exists(path):
        return None
    doc = _load_yaml(path, "release.yaml")
    if not isinstance(doc, dict) or doc.get("kind") != RELEASE_KIND or not isinstance(doc.get("hashes"), dict) \
            or not isinstance(doc.get("versions"), dict):
        raise StackError("bad release record", ["%s: expected kind %s with 'versions' and 'hashes'" % (path, RELEASE_KIND)])
    missing = [p for p in PARTS if p not in doc["hashes"]]
    if missing:
        raise StackError("bad release record", ["%s: hashes lacks %s" % (path, ", ".join(missing))])
    return doc


class Stack(object):
    """One stack directory: its identity, installer spec, metadata and current hashes."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        parts = self.path.rstrip(os.sep).split(os.sep)
        if len(parts) < 3:
            raise StackError("bad stack path", ["%s: expected .../<provider>/<stack>/<major-minor>" % path])
        self.provider, self.stack, self.minor_dir = parts[-3], parts[-2], parts[-1]
        problems = []
        for field, value in (("provider", self.provider), ("stack", self.stack)):
            if not _DNS1123.match(value):
                problems.append("%s: %s directory %r must be a lower-case DNS label" % (path, field, value))
        if not _MINOR_DIR.match(self.minor_dir):
            problems.append("%s: directory %r must be the Kubernetes major-minor, e.g. 1-34" % (path, self.minor_dir))
        if problems:
            raise StackError("bad stack path", problems)
        self.metadata_path = os.path.join(self.path, "metadata.yaml")
        self.release_path = os.path.join(self.path, "release.yaml")
        self.installer_path = os.path.join(self.path, "installer.yaml")
        self.metadata = load_metadata(self.metadata_path)
        self.installer = _load_installer(self.installer_path)
        self.spec = self.installer.spec
        self._check_kubernetes()

    @property
    def name(self):
        return "%s-%s-%s" % (self.provider, self.stack, self.minor_dir)

    def _check_kubernetes(self):
        problems = []
        kube = str((self.spec.get("kubernetes") or {}).get("version", ""))
        for addon, values in sorted(self.spec.items()):
            version = str((values or {}).get("version", ""))
            if not _EXACT.match(version):
                problems.append(
                    "%s: spec.%s.version is %r; a stack pins exact versions (X.Y.Z) so its version says what is inside"
                    % (self.installer_path, addon, version))
        meta_kube = self.metadata["versions"]["kubernetes"]
        if _EXACT.match(kube) and "v" + kube.lstrip("v") != meta_kube:
            problems.append("%s: versions.kubernetes %s differs from the installer spec's kubernetes %s; run "
                            "'mooring stack version %s'" % (self.metadata_path, meta_kube, kube, self.path))
        if self.minor_dir != "-".join(meta_kube.lstrip("v").split(".")[:2]):
            problems.append("%s: directory %s does not match Kubernetes %s" % (self.path, self.minor_dir, meta_kube))
        if problems:
            raise StackError("stack %s is inconsistent" % self.name, problems)

    def spec_kubernetes(self):
        return "v" + str(self.spec["kubernetes"]["version"]).lstrip("v")

    def hashes(self):
        spec = self.spec
        addon_parts = {k: v for k, v in spec.items() if k not in NOT_IN_CLUSTER_ADDON}
        image_parts = {k: spec[k] for k in NODE_IMAGE_ADDONS if k in spec}
        return {
            "clusterAddon": part_hash(os.path.join(self.path, PART_DIRS["clusterAddon"]), addon_parts),
            "nodeImage": part_hash(os.path.join(self.path, PART_DIRS["nodeImage"]), image_parts),
            "clusterClass": part_hash(os.path.join(self.path, PART_DIRS["clusterClass"]), spec),
        }


def _load_installer(path):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.resolve import read_installer

    try:
        return read_installer(path=path)
    except FileNotFoundError:
        raise StackError("installer spec missing", ["%s is missing" % path]) from None
    except MooringError as exc:
        raise StackError("the stack's installer spec is invalid", ["%s: %s" % (path, p) for p in exc.problems]) from None


def find_stacks(path):
    """``path`` itself when it is a stack (has metadata.yaml), else every stack below it."""
    path = os.path.abspath(path)
    if os.path.isfile(os.path.join(path, "metadata.yaml")):
        return [path]
    if not os.path.isdir(path):
        raise StackError("no stack", ["%s is not a directory" % path])
    found = sorted(d for d, _dirs, files in os.walk(path) if "metadata.yaml" in files)
    if not found:
        raise StackError("no stack", ["no metadata.yaml below %s" % path])
    return found


# --------------------------------------------------------------------------- versions
def plan_versions(stack):
    """Decide versions from hashes: returns a dict describing the plan.

    ``due``: True when metadata.yaml/release.yaml must be (re)written; ``changed``: the parts
    whose content differs from the last release; ``versions``: what the metadata must say;
    ``reasons``: one line per decision.
    """
    current = metadata_versions(stack.metadata)
    hashes = stack.hashes()
    release = load_release(stack.release_path)
    reasons = []
    if release is None:
        versions = copy.deepcopy(current)
        versions["kubernetes"] = stack.spec_kubernetes()
        reasons.append("%s: no release recorded yet; recording %s as the first release" % (stack.name, versions["clusterStack"]))
        return {"stack": stack, "due": True, "changed": list(PARTS), "versions": versions, "hashes": hashes,
                "reasons": reasons, "first": True}
    recorded = release["versions"]
    try:
        base_stack = _version_number(recorded.get("clusterStack"), "versions.clusterStack", stack.release_path)
        base = {c: _version_number((recorded.get("components") or {}).get(c), "versions.components.%s" % c,
                                   stack.release_path) for c in COMPONENTS}
    except StackError:
        raise
    changed = [p for p in PARTS if hashes[p] != release["hashes"].get(p)]
    versions = {
        "clusterStack": "v%d" % (base_stack + 1 if changed else base_stack),
        "kubernetes": stack.spec_kubernetes(),
        "components": {c: "v%d" % (base[c] + 1 if c in changed else base[c]) for c in COMPONENTS},
    }
    for p in changed:
        if p in COMPONENTS:
            reasons.append("%s: %s content changed: %s -> %s" % (stack.name, p, "v%d" % base[p], versions["components"][p]))
        else:
            reasons.append("%s: %s content changed" % (stack.name, p))
    if changed:
        reasons.append("%s: clusterStack v%d -> %s" % (stack.name, base_stack, versions["clusterStack"]))
    due = bool(changed) or versions != current
    if not changed and versions != current:
        reasons.append("%s: metadata.yaml says %s but nothing changed since the last release (%s); it is put back"
                       % (stack.name, canonical_json(current).decode("utf-8"), canonical_json(versions).decode("utf-8")))
    if not due:
        reasons.append("%s: up to date at %s" % (stack.name, versions["clusterStack"]))
    return {"stack": stack, "due": due, "changed": changed, "versions": versions, "hashes": hashes,
            "reasons": reasons, "first": False}


def check_versions(stack):
    """Raise StackError when a bump (or first record) is due but not recorded."""
    plan = plan_versions(stack)
    if plan["due"]:
        raise StackError("stack %s needs a version bump" % stack.name, plan["reasons"] + [
            "run 'mooring stack version %s' and commit metadata.yaml and release.yaml" % stack.path])
    return plan


def _dump(doc):
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def apply_versions(plan):
    """Write metadata.yaml and release.yaml for a plan; returns the paths written."""
    stack = plan["stack"]
    if not plan["due"]:
        return []
    metadata = copy.deepcopy(stack.metadata)
    metadata["versions"] = plan["versions"]
    release = {"apiVersion": RELEASE_API_VERSION, "kind": RELEASE_KIND,
               "versions": plan["versions"], "hashes": dict(sorted(plan["hashes"].items()))}
    written = []
    if write_if_changed(stack.metadata_path, _dump(metadata)):
        written.append(stack.metadata_path)
    if write_if_changed(stack.release_path, "# Written by 'mooring stack version'; do not edit.\n" + _dump(release)):
        written.append(stack.release_path)
    stack.metadata = metadata
    return written


# --------------------------------------------------------------------------- export
def _require(doc, path, keys, problems):
    for key in keys:
        if doc.get(key) in (None, ""):
            problems.append("%s: '%s' is required" % (path, key))


def load_cluster_class_config(stack):
    path = os.path.join(stack.path, PART_DIRS["clusterClass"], "openstack.yaml")
    doc = _load_yaml(path, "cluster-class/openstack.yaml") or {}
    problems = []
    if not isinstance(doc, dict):
        raise StackError("bad cluster-class config", ["%s: must be a mapping" % path])
    _require(doc, path, ("identityRef", "externalNetwork", "nodeCIDR", "controlPlane", "workers"), problems)
    for role in ("controlPlane", "workers"):
        if isinstance(doc.get(role), dict):
            _require(doc[role], "%s: %s" % (path, role), ("flavor",), problems)
        elif role in doc:
            problems.append("%s: '%s' must be a mapping with 'flavor'" % (path, role))
    if isinstance(doc.get("identityRef"), dict):
        _require(doc["identityRef"], "%s: identityRef" % path, ("name", "cloudName"), problems)
    if problems:
        raise StackError("bad cluster-class config", problems)
    return doc


def load_node_image(stack):
    path = os.path.join(stack.path, PART_DIRS["nodeImage"], "image.yaml")
    doc = _load_yaml(path, "node-image/image.yaml") or {}
    problems = []
    if not isinstance(doc, dict):
        raise StackError("bad node image", ["%s: must be a mapping" % path])
    _require(doc, path, ("name", "kubernetes", "containerd"), problems)
    if str(doc.get("kubernetes")) != stack.spec_kubernetes():
        problems.append("%s: kubernetes %s differs from the stack's %s" % (path, doc.get("kubernetes"), stack.spec_kubernetes()))
    containerd = str((stack.spec.get("containerd") or {}).get("version", ""))
    if containerd and str(doc.get("containerd")).lstrip("v") != containerd.lstrip("v"):
        problems.append("%s: containerd %s differs from the installer spec's %s" % (path, doc.get("containerd"), containerd))
    if problems:
        raise StackError("bad node image", problems)
    return doc


def load_addon_values(stack):
    path = os.path.join(stack.path, PART_DIRS["clusterAddon"], "values.yaml")
    doc = _load_yaml(path, "cluster-addon/values.yaml") or {}
    if not isinstance(doc, dict):
        raise StackError("bad add-on values", ["%s: must map add-on name to Helm values" % path])
    addons = {k for k in stack.spec if k not in NOT_IN_CLUSTER_ADDON}
    unknown = sorted(set(doc) - addons)
    if unknown:
        raise StackError("bad add-on values", ["%s: %s not in the installer spec (add-ons: %s)"
                                               % (path, ", ".join(unknown), ", ".join(sorted(addons)))])
    return doc


def resolve_addons(stack, catalog):
    """Check every add-on version against the catalog (existence + Kubernetes compatibility)."""
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import resolve_versions

    try:
        return resolve_versions(catalog, stack.installer.requested_versions())
    except MooringError as exc:
        raise StackError("the stack's add-ons do not resolve", ["%s: %s" % (stack.installer_path, p) for p in exc.problems]) from None


def names(stack, version):
    base = "%s-%s" % (stack.name, version)
    return {
        "clusterClass": base,
        "controlPlane": base + "-control-plane",
        "controlPlaneMachine": base + "-control-plane-machine",
        "worker": base + "-worker",
        "workerMachine": base + "-worker-machine",
        "cluster": base + "-cluster",
    }


def _ref(api_version, kind, name):
    return {"apiVersion": api_version, "kind": kind, "name": name}


def _labels(stack, versions):
    return {
        "clusterstack.x-k8s.io/name": stack.name,
        "clusterstack.x-k8s.io/version": versions["clusterStack"],
        "app.kubernetes.io/managed-by": "mooring.cluster",
    }


def _machine_template(name, labels, role_cfg, image, cfg):
    spec = {"flavor": str(role_cfg["flavor"]), "image": {"filter": {"name": str(image["name"])}}}
    if cfg.get("sshKeyName"):
        spec["sshKeyName"] = str(cfg["sshKeyName"])
    if role_cfg.get("rootVolumeGiB"):
        spec["rootVolume"] = {"sizeGiB": int(role_cfg["rootVolumeGiB"])}
    if cfg.get("tags"):
        spec["tags"] = [str(t) for t in cfg["tags"]]
    return {"apiVersion": CAPO_GROUP_VERSION, "kind": "OpenStackMachineTemplate",
            "metadata": {"name": name, "labels": labels}, "spec": {"template": {"spec": spec}}}


def _node_registration():
    return {"name": "{{ local_hostname }}",
            "kubeletExtraArgs": {"cloud-provider": "external", "provider-id": "openstack:///{{ instance_id }}"}}


def render_export(stack, catalog):
    """Every object a Cluster API user needs, plus the cluster-addon chart values.

    Returns ``(objects, addon_values)``; raises StackError when the stack is not ready.
    """
    plan = check_versions(stack)
    versions = plan["versions"]
    cfg = load_cluster_class_config(stack)
    image = load_node_image(stack)
    values = load_addon_values(stack)
    resolved = resolve_addons(stack, catalog)
    addons = stack.installer.addons
    etcd = addons.get("etcd") or {}
    if etcd.get("topology", "stacked") != "stacked":
        raise StackError("unsupported etcd topology", [
            "%s: spec.etcd.topology is %r; a Cluster API stack runs etcd on the control plane "
            "(KubeadmControlPlane), set it to 'stacked'" % (stack.installer_path, etcd.get("topology"))])
    n = names(stack, versions["clusterStack"])
    labels = _labels(stack, versions)
    kube = addons["kubernetes"]
    cluster_configuration = {
        "apiServer": {"extraArgs": {"cloud-provider": "external"}},
        "controllerManager": {"extraArgs": {"cloud-provider": "external"}},
    }
    networking = {}
    if kube.get("podCIDR"):
        networking["podSubnet"] = str(kube["podCIDR"])
    if kube.get("serviceCIDR"):
        networking["serviceSubnet"] = str(kube["serviceCIDR"])
    if networking:
        cluster_configuration["networking"] = networking

    cluster_spec = {
        "identityRef": {"name": str(cfg["identityRef"]["name"]), "cloudName": str(cfg["identityRef"]["cloudName"])},
        "externalNetwork": {"filter": {"name": str(cfg["externalNetwork"])}},
        "managedSubnets": [{"cidr": str(cfg["nodeCIDR"]),
                            "dnsNameservers": [str(d) for d in cfg.get("dnsNameservers") or []]}],
        "managedSecurityGroups": {"allowAllInClusterTraffic": bool(cfg.get("allowAllInClusterTraffic", False))},
    }
    if not cluster_spec["managedSubnets"][0]["dnsNameservers"]:
        del cluster_spec["managedSubnets"][0]["dnsNameservers"]
    if cfg.get("apiServerLoadBalancer", True):
        cluster_spec["apiServerLoadBalancer"] = {"enabled": True}
    if cfg.get("tags"):
        cluster_spec["tags"] = [str(t) for t in cfg["tags"]]

    objects = [
        {"apiVersion": CAPI_GROUP_VERSION, "kind": "ClusterClass",
         "metadata": {"name": n["clusterClass"], "labels": labels},
         "spec": {
             "controlPlane": {
                 "ref": _ref(KCP_GROUP_VERSION, "KubeadmControlPlaneTemplate", n["controlPlane"]),
                 "machineInfrastructure": {"ref": _ref(CAPO_GROUP_VERSION, "OpenStackMachineTemplate", n["controlPlaneMachine"])},
             },
             "infrastructure": {"ref": _ref(CAPO_GROUP_VERSION, "OpenStackClusterTemplate", n["cluster"])},
             "workers": {"machineDeployments": [{
                 "class": "default-worker",
                 "template": {
                     "bootstrap": {"ref": _ref(KUBEADM_GROUP_VERSION, "KubeadmConfigTemplate", n["worker"])},
                     "infrastructure": {"ref": _ref(CAPO_GROUP_VERSION, "OpenStackMachineTemplate", n["workerMachine"])},
                 },
             }]},
         }},
        {"apiVersion": KCP_GROUP_VERSION, "kind": "KubeadmControlPlaneTemplate",
         "metadata": {"name": n["controlPlane"], "labels": labels},
         "spec": {"template": {"spec": {
             "kubeadmConfigSpec": {
                 "clusterConfiguration": cluster_configuration,
                 "initConfiguration": {"nodeRegistration": _node_registration()},
                 "joinConfiguration": {"nodeRegistration": _node_registration()},
             },
             "machineTemplate": {"infrastructureRef": _ref(CAPO_GROUP_VERSION, "OpenStackMachineTemplate",
                                                           n["controlPlaneMachine"])},
             "version": versions["kubernetes"],
         }}}},
        {"apiVersion": KUBEADM_GROUP_VERSION, "kind": "KubeadmConfigTemplate",
         "metadata": {"name": n["worker"], "labels": labels},
         "spec": {"template": {"spec": {"joinConfiguration": {"nodeRegistration": _node_registration()}}}}},
        {"apiVersion": CAPO_GROUP_VERSION, "kind": "OpenStackClusterTemplate",
         "metadata": {"name": n["cluster"], "labels": labels},
         "spec": {"template": {"spec": cluster_spec}}},
        _machine_template(n["controlPlaneMachine"], labels, cfg["controlPlane"], image, cfg),
        _machine_template(n["workerMachine"], labels, cfg["workers"], image, cfg),
    ]
    addon_values = {
        "clusterStack": {"name": stack.name, "version": versions["clusterStack"],
                         "clusterAddonVersion": versions["components"]["clusterAddon"],
                         "kubernetes": versions["kubernetes"]},
        "addons": {
            name: {"enabled": True, "version": resolved[name],
                   "category": catalog.category(name),
                   "options": {k: v for k, v in addons[name].items() if k != "version"},
                   "values": copy.deepcopy(values.get(name) or {})}
            for name in sorted(stack.spec) if name not in NOT_IN_CLUSTER_ADDON
        },
    }
    return objects, addon_values


def write_export(stack, catalog, out_dir):
    """Render and write ``clusterclass.yaml``, ``cluster-addon-values.yaml`` and ``metadata.yaml``."""
    objects, addon_values = render_export(stack, catalog)
    os.makedirs(out_dir, exist_ok=True)
    files = {
        "clusterclass.yaml": yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, explicit_start=True),
        "cluster-addon-values.yaml": _dump(addon_values),
        "metadata.yaml": _dump(stack.metadata),
    }
    written = []
    for name, text in files.items():
        path = os.path.join(out_dir, name)
        if write_if_changed(path, text):
            written.append(path)
    return objects, addon_values, written
