# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: exporting cluster stacks to Cluster API: the cluster-class chart
rendered with helm, the cluster-addon values, metadata.yaml; written all or nothing."""

from __future__ import annotations

import collections
import copy
import os
import shutil
import stat
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio, yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import field
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stackbump import check_versions
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stackrecords import StackShape
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stacktree import (
    CLUSTER_ADDON_MARK,
    CLUSTER_CLASS_MARK,
    METADATA_API_VERSION,
    NOT_IN_CLUSTER_ADDON,
    PART_DIRS,
    StackError,
    commit_files,
    link_problem,
    open_plain,
    plain,
    shown,
)
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stackyaml import dump, dump_all, load_yaml, set_yaml_scalar


class NodeImageShape(StackShape):
    """node-image/image.yaml: name, kubernetes and containerd, the last two as the stack and its spec say."""

    def problems(self, doc, kubernetes, containerd):
        """One line per wrong field of ``doc``; ``kubernetes`` is the stack's, ``containerd`` the spec's ("" when it has none)."""
        found = []
        if not self.collect(found, self.expected_mapping, doc, "", "a mapping (name, kubernetes, containerd)"):
            return found
        for key in ("name", "kubernetes", "containerd"):
            if doc.get(key) in (None, ""):
                self.collect(found, self.expected, key, "set", doc.get(key), True)
        if str(doc.get("kubernetes")) != kubernetes:
            self.collect(found, self.expected, "kubernetes", "the stack's %s" % kubernetes, doc.get("kubernetes"), True)
        if containerd and str(doc.get("containerd")).lstrip("v") != containerd.lstrip("v"):
            self.collect(found, self.expected, "containerd", "the installer spec's %s" % containerd, doc.get("containerd"), True)
        return found


def load_node_image(stack):
    """node-image/image.yaml of a stack with an installer spec, checked (:class:`NodeImageShape`)."""
    path = os.path.join(stack.path, PART_DIRS["nodeImage"], "image.yaml")
    doc = load_yaml(path, "node-image/image.yaml") or {}
    containerd = str((stack.spec.get("containerd") or {}).get("version", ""))
    problems = NodeImageShape(path).problems(doc, stack.spec_kubernetes(), containerd)
    if problems:
        raise StackError("bad node image", problems)
    return doc


class AddonValuesShape(StackShape):
    """cluster-addon/values.yaml: Helm values (a mapping) per add-on of the installer spec."""

    def problems(self, doc, addons):
        """The unknown add-ons of ``doc`` (one line each), else its values that are not mappings."""
        found = []
        if not self.collect(found, self.expected_mapping, doc, "", "a mapping of add-on name to Helm values"):
            return found
        for key in sorted(set(doc) - addons, key=str):
            self.collect(found, self.fail, field("", str(key)), "is not an add-on of the installer spec (add-ons: %s)"
                         % ", ".join(sorted(addons)))
        if found:
            return found
        for key, value in sorted(doc.items(), key=lambda kv: str(kv[0])):
            if value is not None:
                self.collect(found, self.expected_mapping, value, field("", str(key)), "a mapping (Helm values)")
        return found


def load_addon_values(stack):
    """cluster-addon/values.yaml, checked against the installer spec's add-ons (:class:`AddonValuesShape`)."""
    path = os.path.join(stack.path, PART_DIRS["clusterAddon"], "values.yaml")
    doc = load_yaml(path, "cluster-addon/values.yaml", max_aliases=yamlio.MAX_ALIASES) or {}  # Helm values: anchors allowed
    problems = AddonValuesShape(path).problems(doc, {k for k in stack.spec if k not in NOT_IN_CLUSTER_ADDON})
    if problems:
        raise StackError("bad add-on values", problems)
    return doc


def resolve_addons(stack, catalog):
    """Check every add-on version against the catalog (existence + Kubernetes compatibility)."""
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import resolve_versions

    try:
        return resolve_versions(catalog, stack.installer.requested_versions())
    except MooringError as exc:
        raise StackError("the stack's add-ons do not resolve", ["%s: %s" % (stack.installer_path, p) for p in exc.problems]) from None


def export_values(stack, versions):
    """The values the export gives the stack's cluster-class chart, under the key ``mooring``.

    ``stack`` (name, versions) always; for a stack with an installer spec also ``kubernetes``
    (version, podCIDR, serviceCIDR, clusterDomain) and ``nodeImage`` (node-image/image.yaml).
    Upstream charts do not read them; ours do, so the spec stays the one source of those facts.
    """
    values = {"stack": {"name": stack.name, "version": versions["clusterStack"], "kubernetes": versions["kubernetes"],
                        "components": dict(versions["components"])}}
    if stack.installer is not None:
        kube = stack.installer.addons["kubernetes"]
        values["kubernetes"] = {"version": stack.spec_kubernetes(), "podCIDR": kube["podCIDR"],
                                "serviceCIDR": kube["serviceCIDR"], "clusterDomain": kube["clusterDomain"]}
        values["nodeImage"] = load_node_image(stack)
    return {"mooring": values}


_CSCTL_MARKS = {CLUSTER_CLASS_MARK: "clusterStack", CLUSTER_ADDON_MARK: "clusterAddon",
                "<< .NodeImageVersion >>": "nodeImage"}


def _copy_file(src, dest):
    """Copy the regular file ``src`` to the new file ``dest`` (0600), ``src`` opened without following a link."""
    with open_plain(src) as f, open(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as out:
        shutil.copyfileobj(f, out, 1 << 20)


def copy_chart(chart_dir, dest):
    """Copy the chart ``chart_dir`` to the new directory ``dest``: directories and regular files
    only, every name (dot names too), nothing followed. A symlink (to a file or a directory) or a
    special file anywhere is a StackError naming it; so is one found in the copy afterwards
    (:func:`check_copy`), so that helm only ever reads the stack's own bytes."""
    os.mkdir(dest, 0o700)
    for dirpath, dirnames, filenames in os.walk(chart_dir):
        here = os.path.join(dest, os.path.relpath(dirpath, chart_dir))
        for name in sorted(dirnames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full):  # os.walk lists it here and does not follow it
                raise StackError("cannot export %s" % shown(chart_dir), [link_problem(full)])
            os.mkdir(os.path.join(here, name), 0o700)
        for name in sorted(filenames):
            _copy_file(os.path.join(dirpath, name), os.path.join(here, name))
    check_copy(dest, chart_dir)


def check_copy(copy_dir, chart_dir):
    """Every entry of ``copy_dir`` is a directory or a regular file (StackError naming the entry, as
    a path of ``chart_dir``, otherwise)."""
    for dirpath, dirnames, filenames in os.walk(copy_dir):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            mode = os.lstat(full).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                where = os.path.join(chart_dir, os.path.relpath(full, copy_dir))
                raise StackError("cannot export %s" % shown(chart_dir), [
                    "%s: not a file or directory in the chart's copy; nothing outside the stack may reach helm" % shown(where)])


def _release_copy(chart_dir, dest, versions):
    """Copy the chart to ``dest`` (:func:`copy_chart`) as csctl packages it: ``version`` is the stack
    version and csctl's ``<< .XVersion >>`` placeholders are filled. The stack's own files are not touched."""
    copy_chart(chart_dir, dest)
    chart_yaml = os.path.join(dest, "Chart.yaml")
    fill = {mark: (versions["clusterStack"] if part == "clusterStack" else versions["components"][part])
            for mark, part in _CSCTL_MARKS.items()}
    for dirpath, _dirs, files in os.walk(dest):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                data = f.read()
            text = data.decode("utf-8", "surrogateescape")
            changed = text
            for mark, value in fill.items():
                changed = changed.replace(mark, value)
            if path == chart_yaml:
                changed = set_yaml_scalar(changed, ["version"], versions["clusterStack"])
            if changed != text:
                with open(path, "wb") as f:
                    f.write(changed.encode("utf-8", "surrogateescape"))


def _chart_dir(stack):
    chart = os.path.join(stack.path, PART_DIRS["clusterClass"])
    if not os.path.isfile(os.path.join(chart, "Chart.yaml")):
        raise StackError("no cluster-class chart", [
            "%s: no Chart.yaml; the export renders the stack's own cluster-class Helm chart" % chart])
    return chart


def render_cluster_class(stack, versions, helm=None, values=None):
    """The stack's own cluster-class chart rendered with ``helm template`` (release name: the
    stack name, so the ClusterClass is ``<stack name>-<clusterStack version>`` as upstream),
    with ``values`` (default: :func:`export_values`).

    Returns ``(objects, warnings)``."""
    from ansible_collections.mooring.cluster.plugins.module_utils.infra import helm as helm_mod

    chart = _chart_dir(stack)
    if values is None:
        values = export_values(stack, versions)
    with tempfile.TemporaryDirectory(prefix="mooring-stack-") as tmp:
        copy_dir = os.path.join(tmp, os.path.basename(chart))
        _release_copy(chart, copy_dir, versions)
        try:
            objects = helm_mod.template(copy_dir, stack.name, values, kube_version=versions["kubernetes"], helm=helm)
        except MooringError as exc:
            raise StackError("cannot render %s" % chart, [p.replace(copy_dir, chart) for p in exc.problems]) from None
    classes = [o["metadata"].get("name") for o in objects
               if o.get("kind") == "ClusterClass" and isinstance(o.get("metadata"), dict)]
    if not classes:
        raise StackError("no ClusterClass", ["%s: the chart renders no ClusterClass" % chart])
    return objects, class_name_warnings(stack, versions, classes)


def class_name_warnings(stack, versions, classes):
    """A warning when no ClusterClass carries the stack version in its name (upstream's
    ``<stack name>-<clusterStack version>``): a new stack version would then not give clusters a
    new class to move to (early SCS prototypes named it from a value)."""
    expected = "%s-%s" % (stack.name, versions["clusterStack"])
    if expected in classes:
        return []
    return ["%s: the chart names its ClusterClass %s, not %s (<stack name>-<clusterStack version>): a new stack "
            "version will not give clusters a new class" % (stack.name, plain(", ".join(map(str, classes))), expected)]


# What one stack's export consists of: the rendered objects, the cluster-addon values (None
# without an installer spec), warnings, and the versions it was rendered at.
Export = collections.namedtuple("Export", "objects addon_values warnings versions")
# What an export checks and computes before helm runs: the versions, the cluster-addon values
# and the values given to the cluster-class chart.
Prepared = collections.namedtuple("Prepared", "versions addon_values chart_values")


def prepare_export(stack, catalog):
    """Every check of an export that needs no helm (versions recorded, add-ons against the
    catalog, the node image, a cluster-class chart present), as a :class:`Prepared`; raises
    StackError. ``mooring stack export`` prepares every stack before it renders any."""
    versions = check_versions(stack)["versions"]
    addon_values = _addon_values(stack, catalog, versions) if stack.installer is not None else None
    _chart_dir(stack)
    fileio.safe_name(stack.name, "stack name")
    return Prepared(versions, addon_values, export_values(stack, versions))


def render_export(stack, catalog, helm=None, prepared=None):
    """Every object a Cluster API user needs, plus (for a stack with an installer spec) the
    cluster-addon chart values, as an :class:`Export`; raises StackError when the stack is not ready.
    """
    if prepared is None:
        prepared = prepare_export(stack, catalog)
    objects, warnings = render_cluster_class(stack, prepared.versions, helm, prepared.chart_values)
    return Export(objects, prepared.addon_values, warnings, prepared.versions)


def _addon_values(stack, catalog, versions):
    values = load_addon_values(stack)
    resolved = resolve_addons(stack, catalog)
    addons = stack.installer.addons
    etcd = addons.get("etcd") or {}
    if etcd.get("topology", "stacked") != "stacked":
        raise StackError("unsupported etcd topology", [
            "%s: spec.etcd.topology is %s; a Cluster API stack runs etcd on the control plane "
            "(KubeadmControlPlane), set it to 'stacked'" % (stack.installer_path, excerpt(etcd.get("topology")))])
    return {
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


def export_files(export):
    """``{file name: text}`` of an :class:`Export`: ``clusterclass.yaml``, ``metadata.yaml`` and
    (with an installer spec) ``cluster-addon-values.yaml``."""
    files = {
        "clusterclass.yaml": dump_all(export.objects),
        "metadata.yaml": dump({"apiVersion": METADATA_API_VERSION, "versions": export.versions}),
    }
    if export.addon_values is not None:
        files["cluster-addon-values.yaml"] = dump(export.addon_values)
    return files


def check_export_output(out_dir):
    """Refuse an output directory that cannot be one: an existing file (or anything but a
    directory), or a path whose parent directory does not exist."""
    if os.path.lexists(out_dir) and not os.path.isdir(out_dir):
        raise StackError("bad output", ["%s: exists and is not a directory; the export writes a directory" % shown(out_dir)])
    parent = os.path.dirname(os.path.abspath(out_dir))
    if not os.path.isdir(parent):
        state = "is not a directory" if os.path.lexists(parent) else "does not exist"
        raise StackError("bad output", ["%s: the directory %s %s" % (shown(out_dir), shown(parent), state)])


def write_export(out_dir, sets):
    """Write ``sets`` (``{sub-directory name, or "" for out_dir itself: {file name: text}}``),
    all or nothing; returns the paths written (as ``out_dir`` joined with their names).

    A missing ``out_dir`` is made as a temporary directory beside it, filled, and renamed into
    place. An existing directory keeps whatever else it holds: the export's files in it are
    replaced through :func:`commit_files` (temporaries, then renames, put back on failure); a
    directory, symlink or special file where one of them goes is refused before anything is
    written."""
    check_export_output(out_dir)
    files = {}
    for sub, named in sorted(sets.items()):
        for name, text in sorted(named.items()):
            files[os.path.join(fileio.safe_name(sub, "stack name"), name) if sub else name] = text.encode("utf-8")
    if os.path.isdir(out_dir):
        for sub in sorted(sets):
            sub_dir = os.path.join(out_dir, sub)
            if sub and os.path.lexists(sub_dir) and (os.path.islink(sub_dir) or not os.path.isdir(sub_dir)):
                raise StackError("cannot write %s" % shown(sub_dir), [
                    "%s: exists and is not a directory; refusing to replace it" % shown(sub_dir)])
        return commit_files([(fileio.under_root(out_dir, rel), data) for rel, data in sorted(files.items())], out_dir)
    parent = os.path.dirname(os.path.abspath(out_dir))
    staging = tempfile.mkdtemp(prefix=".%s-" % os.path.basename(os.path.abspath(out_dir)), dir=parent)
    try:
        for rel, data in sorted(files.items()):
            path = os.path.join(staging, rel)
            if not os.path.isdir(os.path.dirname(path)):
                os.mkdir(os.path.dirname(path), 0o755)
            with open(path, "xb") as f:
                f.write(data)
            os.chmod(path, 0o644)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(staging, 0o777 & ~mask)
        os.rename(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [os.path.join(out_dir, rel) for rel in sorted(files)]
