# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: one versioned cluster stack (:class:`Stack`) and finding stacks.

The layouts (``mooring``, ``csctl``, ``seed``) are described in ``infra/stacktree``; the version
records and content hashes in ``infra/stackrecords``; the bump in ``infra/stackbump``; the Cluster API
export in ``infra/stackexport``.

Parts and what each content hash covers (every hash is independent of file order,
modification times and permissions; names starting with ``.`` are skipped):

* mooring: ``clusterAddon`` = ``cluster-addon/`` plus the installer spec's add-ons that the
  cluster-addon chart installs (everything but kubernetes, etcd and containerd); ``nodeImage`` =
  ``node-image/`` plus the spec's kubernetes and containerd entries; ``clusterClass`` (no version
  of its own) = ``cluster-class/`` plus the whole installer spec.
* csctl and seed: every file of the stack belongs to exactly one part, by its top-level entry:
  ``nodeImage`` = ``node-image/``, ``node-images/``, ``node-images.yaml``, ``image.yaml``,
  ``kubernetes.yaml``; ``clusterAddon`` = ``cluster-addon/``, ``cluster-addon-values.yaml``,
  ``clusteraddon.yaml``, ``versions.yaml``; ``clusterClass`` = ``cluster-class/`` and every other
  file (topology files, ``csctl.yaml``, READMEs, anything unknown), so that no edit goes
  unversioned. ``metadata.yaml`` and ``release.yaml`` are the version record and never hashed.
  The Kubernetes version is hashed into ``nodeImage`` and ``clusterClass``. Texts are hashed
  with the version fields a bump rewrites normalised: the top-level ``version`` of the stack's
  own charts (``cluster-class/Chart.yaml``, ``cluster-addon/Chart.yaml``,
  ``cluster-addon/<addon>/Chart.yaml``) and every ClusterClass name ``<stack name>-<version>``.

``stackbump.plan_versions`` bumps a component's version exactly when its hash differs from the last
release's, and the stack version when any part changed; never otherwise. Versions are either
stable (``v1``, ``v2``, ...) or csctl's hash-mode dev versions (``v0-sha.<7 characters>``,
chosen by writing such a version into metadata.yaml or, without metadata.yaml, into
cluster-class/Chart.yaml). ``stackbump.apply_versions`` writes every place that carries a version
(metadata.yaml, the charts' ``version``, literal ClusterClass names) by editing the scalar in
place, and release.yaml.

Hostile or broken input is refused in one line per problem, before anything is written: every
YAML file is read through ``common/yamlio`` (UTF-8, bounded size and depth; no aliases in the
record files, ``csctl.yaml`` and ``node-image/image.yaml``); a stack directory may hold only
regular files and directories (no symlink anywhere, dot names included: nothing outside the stack
reaches helm, the export or a hash), with printable UTF-8 names, files of at
most :data:`stacktree.MAX_FILE_BYTES`, and no text in UTF-16/32 (a byte-order mark); the version files
and release.yaml are written all or nothing (:func:`stacktree.commit_files`). The export renders every
stack before it writes, and writes all or nothing (:func:`stackexport.write_export`).
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import os
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stackrecords import (
    DEV_VERSION,
    DNS1123,
    STABLE_VERSION,
    csctl_dirhash,
    entries_hash,
    load_csctl_config,
    load_metadata,
    metadata_versions,
)
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stacktree import (
    CHART_VERSION_OF,
    CLUSTER_ADDON_MARK,
    CLUSTER_CLASS_MARK,
    CSCTL_PLACEHOLDER,
    DOT_FILES_KEPT,
    ENTRY_PARTS,
    NODE_IMAGE_ADDONS,
    NOT_IN_CLUSTER_ADDON,
    PART_DIRS,
    PARTS,
    RECORD_FILES,
    StackError,
    check_tree,
    detect_layout,
    open_plain,
    shown,
    walk_plain,
)
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stackyaml import chart_text, dump, load_yaml, set_yaml_scalar, yaml_scalar

_MINOR_DIR = re.compile(r"^(0|[1-9][0-9]{0,3})-(0|[1-9][0-9]{0,3})\Z")
_EXACT = re.compile(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z")


def _minor_of(kube):
    return "-".join(kube.lstrip("v").split(".")[:2])


class Stack(object):
    """One stack directory: its layout, identity, Kubernetes version, metadata and current hashes."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.layout = detect_layout(self.path)
        if self.layout is None:
            raise StackError("no stack", ["%s: neither installer.yaml, csctl.yaml nor metadata.yaml" % path])
        problems = check_tree(self.path)
        if problems:
            raise StackError("stack %s holds what a stack may not" % shown(self.path), problems)
        self.metadata_path = os.path.join(self.path, "metadata.yaml")
        self.release_path = os.path.join(self.path, "release.yaml")
        self.installer_path = os.path.join(self.path, "installer.yaml")
        self.csctl_path = os.path.join(self.path, "csctl.yaml")
        self.installer = None
        self.spec = {}
        self.csctl = None
        parts = self.path.rstrip(os.sep).split(os.sep)
        if self.layout == "csctl":
            self.csctl = load_csctl_config(self.csctl_path)
            cfg = self.csctl["config"]
            self.provider, self.stack = cfg["provider"]["type"], cfg["clusterStackName"]
            self.kubernetes = cfg["kubernetesVersion"]
            self.minor_dir = _minor_of(self.kubernetes)
            if _MINOR_DIR.match(parts[-1]) and parts[-1] != self.minor_dir:
                raise StackError("stack %s is inconsistent" % self.name, [
                    "%s: directory %s does not match config.kubernetesVersion %s" % (self.path, parts[-1], self.kubernetes)])
            self.metadata = load_metadata(self.metadata_path) if os.path.isfile(self.metadata_path) else None
            return
        if len(parts) < 3:
            raise StackError("bad stack path", ["%s: expected .../<provider>/<stack>/<major-minor>" % path])
        self.provider, self.stack, self.minor_dir = parts[-3], parts[-2], parts[-1]
        problems = []
        for field, value in (("provider", self.provider), ("stack", self.stack)):
            if not DNS1123.match(value):
                problems.append("%s: %s directory %s must be a lower-case DNS label" % (shown(path), field, shown(value)))
        if not _MINOR_DIR.match(self.minor_dir):
            problems.append("%s: directory %s must be the Kubernetes major-minor, e.g. 1-34" % (shown(path), shown(self.minor_dir)))
        if problems:
            raise StackError("bad stack path", problems)
        if self.layout == "mooring":
            self.metadata = load_metadata(self.metadata_path, dev_ok=False)
            self.installer = _load_installer(self.installer_path)
            self.spec = self.installer.spec
            self._check_kubernetes()
            self.kubernetes = self.spec_kubernetes()
            return
        self.metadata = load_metadata(self.metadata_path)
        self.kubernetes = self.metadata["versions"]["kubernetes"]
        if self.minor_dir != _minor_of(self.kubernetes):
            raise StackError("stack %s is inconsistent" % self.name, [
                "%s: directory %s does not match versions.kubernetes %s" % (self.metadata_path, self.minor_dir, self.kubernetes)])

    @property
    def name(self):
        """``<provider>-<stack>-<major-minor>``: the stack's name, and its ClusterClass names' prefix."""
        return "%s-%s-%s" % (self.provider, self.stack, self.minor_dir)

    def _check_kubernetes(self):
        problems = []
        kube = str((self.spec.get("kubernetes") or {}).get("version", ""))
        for addon, values in sorted(self.spec.items()):
            version = str((values or {}).get("version", ""))
            if not _EXACT.match(version):
                problems.append(
                    "%s: spec.%s.version is %s; a stack pins exact versions (X.Y.Z) so its version says what is inside"
                    % (self.installer_path, addon, excerpt(version)))
        meta_kube = self.metadata["versions"]["kubernetes"]
        if _EXACT.match(kube) and "v" + kube.lstrip("v") != meta_kube:
            problems.append("%s: versions.kubernetes %s differs from the installer spec's kubernetes %s; run "
                            "'mooring stack version %s'" % (self.metadata_path, meta_kube, kube, self.path))
        if self.minor_dir != "-".join(meta_kube.lstrip("v").split(".")[:2]):
            problems.append("%s: directory %s does not match Kubernetes %s" % (self.path, self.minor_dir, meta_kube))
        if problems:
            raise StackError("stack %s is inconsistent" % self.name, problems)

    def spec_kubernetes(self):
        """The Kubernetes version ``vX.Y.Z`` the stack ships (its installer spec's, else the one recorded)."""
        if self.layout != "mooring":
            return self.kubernetes
        return "v" + str(self.spec["kubernetes"]["version"]).lstrip("v")

    # ---- files
    def files(self):
        """``[(relative posix path, "file", absolute path)]`` of every file of the stack but the record
        files (names starting with ``.`` skipped, but ``.helmignore``); a symlink is a StackError
        (:func:`stacktree.walk_plain`), so that no hash covers anything outside the stack."""
        return [(rel, "file", full) for rel, full in walk_plain(self.path, DOT_FILES_KEPT) if rel not in RECORD_FILES]

    @staticmethod
    def part_of(rel):
        """The part a csctl/seed file belongs to, by its top-level entry (unknown: clusterClass)."""
        return ENTRY_PARTS.get(rel.split("/", 1)[0], "clusterClass")

    @staticmethod
    def chart_version_field(rel):
        """The version a stack chart's ``version`` carries (``clusterStack``/``clusterAddon``), else None."""
        for pattern, which in CHART_VERSION_OF:
            if fnmatch.fnmatchcase(rel, pattern) and rel.count("/") == pattern.count("/"):
                return which
        return None

    def _class_name_pattern(self):
        return re.compile(re.escape(self.name) + r"-(?:v0-sha\.[a-z0-9]+|v[0-9]+)(?![A-Za-z0-9_])")

    def rewrite_text(self, rel, text, versions):
        """``text`` of ``rel`` with every carried version set from ``versions`` (``None``: csctl's placeholders)."""
        marks = {"clusterStack": CLUSTER_CLASS_MARK, "clusterAddon": CLUSTER_ADDON_MARK}
        cluster_stack = versions["clusterStack"] if versions else marks["clusterStack"]
        field = self.chart_version_field(rel)
        if field:
            if versions is None:
                value = marks[field]
            else:
                value = versions["clusterStack"] if field == "clusterStack" else versions["components"]["clusterAddon"]
            current = yaml_scalar(text, ["version"])
            # csctl's own placeholders (``<< .ClusterClassVersion >>``) are left to csctl
            if current is not None and (versions is None or not CSCTL_PLACEHOLDER.match(current)):
                text = set_yaml_scalar(text, ["version"], value)
        return self._class_name_pattern().sub(self.name + "-" + cluster_stack, text)

    def _content(self, rel, kind, full, versions=None):
        """Bytes of a file as hashed (``versions`` None: version fields normalised) or as it must be."""
        with open_plain(full) as f:
            data = f.read()
        if b"\0" in data:
            return data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        return self.rewrite_text(rel, text, versions).encode("utf-8")

    # ---- hashes
    def hashes(self):
        """``{part: "sha256:<hex>"}`` of the stack's current content (see the module's description)."""
        if self.layout == "mooring":
            # each part is its directory (paths relative to it) plus the spec sections it ships
            spec = self.spec
            dirs = {d: p for p, d in PART_DIRS.items()}
            entries = {p: [] for p in PARTS}
            for rel, kind, full in self.files():
                top, _sep, inner = rel.partition("/")
                if top in dirs and inner and not any(n.startswith(".") for n in inner.split("/")):
                    entries[dirs[top]].append((inner, kind, hashlib.sha256(self._content(rel, kind, full)).hexdigest()))
            return {
                "clusterAddon": entries_hash(entries["clusterAddon"],
                                             {k: v for k, v in spec.items() if k not in NOT_IN_CLUSTER_ADDON}),
                "nodeImage": entries_hash(entries["nodeImage"], {k: spec[k] for k in NODE_IMAGE_ADDONS if k in spec}),
                "clusterClass": entries_hash(entries["clusterClass"], spec),
            }
        entries = {p: [] for p in PARTS}
        for rel, kind, full in self.files():
            digest = hashlib.sha256(self._content(rel, kind, full)).hexdigest()
            entries[self.part_of(rel)].append((rel, kind, digest))
        kube = {"kubernetes": self.kubernetes}
        return {
            "clusterAddon": entries_hash(entries["clusterAddon"], {}),
            "nodeImage": entries_hash(entries["nodeImage"], kube),
            "clusterClass": entries_hash(entries["clusterClass"], kube),
        }

    def dev_version(self):
        """csctl's hash-mode version ``v0-sha.<7>`` of this stack's content.

        csctl hashes the whole directory; here the record files (metadata.yaml, release.yaml) are
        left out and the version fields normalised, so the value does not move when a bump
        rewrites them. A seed stack's Kubernetes version (kept in metadata.yaml) is added as the
        pseudo-file ``.kubernetes-version``.
        """
        files = [(rel, self._content(rel, kind, full)) for rel, kind, full in self.files()]
        if self.layout == "seed":
            files.append((".kubernetes-version", self.kubernetes.encode("utf-8")))
        return "v0-sha." + csctl_dirhash(files)

    # ---- versions carried by files
    def current_versions(self, release=None):
        """The versions the stack says it has now (metadata.yaml, else its charts, else the release)."""
        if self.metadata is not None:
            versions = metadata_versions(self.metadata)
            versions["kubernetes"] = self.spec_kubernetes()
            return versions
        found = {"clusterStack": None, "clusterAddon": None}
        for rel, _kind, full in self.files():
            field = self.chart_version_field(rel)
            if field and found[field] is None:
                with open_plain(full) as f:
                    value = yaml_scalar(chart_text(full, f.read()), ["version"])
                if value and (STABLE_VERSION.match(value) or DEV_VERSION.match(value)):
                    found[field] = value
        recorded = (release or {}).get("versions") or {}
        rc = recorded.get("components") or {}
        return {"clusterStack": found["clusterStack"] or recorded.get("clusterStack") or "v1",
                "kubernetes": self.spec_kubernetes(),
                "components": {"clusterAddon": found["clusterAddon"] or rc.get("clusterAddon") or "v1",
                               "nodeImage": rc.get("nodeImage") or "v1"}}

    def version_edits(self, versions):
        """``{path: new text}`` for every file whose carried versions differ from ``versions``."""
        edits = {}
        if self.metadata is not None:
            with open(self.metadata_path, "rb") as f:
                old = f.read().decode("utf-8")  # read through yamlio before: UTF-8
            new = old
            for keys, value in ((["versions", "clusterStack"], versions["clusterStack"]),
                                (["versions", "kubernetes"], versions["kubernetes"]),
                                (["versions", "components", "clusterAddon"], versions["components"]["clusterAddon"]),
                                (["versions", "components", "nodeImage"], versions["components"]["nodeImage"])):
                new = set_yaml_scalar(new, keys, value) if new is not None else None
            if new is None:  # not plain block style: written anew (comments are lost)
                doc = copy.deepcopy(self.metadata)
                doc["versions"] = versions
                new = dump(doc)
            if new != old:
                edits[self.metadata_path] = new
        for rel, _kind, full in self.files():
            with open_plain(full) as f:
                data = f.read()
            if b"\0" in data:
                continue
            if self.chart_version_field(rel):
                old = chart_text(full, data)
            else:
                try:
                    old = data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
            new = self.rewrite_text(rel, old, versions)
            if new != old:
                edits[full] = new
        return edits


def _load_installer(path):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.resolve import read_installer

    try:
        return read_installer(path=path)
    except FileNotFoundError:
        raise StackError("installer spec missing", ["%s is missing" % path]) from None
    except MooringError as exc:
        raise StackError("the stack's installer spec is invalid", ["%s: %s" % (path, p) for p in exc.problems]) from None


def _not_csctl_config(directory):
    """Why ``directory``'s ``csctl.yaml`` is some other file of that name (an Ansible task file, say) and
    not a csctl config, or None. Only a file that reads as YAML and is not a mapping with ``config`` is
    another file; one that does not read stays the stack's error."""
    path = os.path.join(directory, "csctl.yaml")
    if os.path.islink(path):  # never read through a link: the stack's check refuses it
        return None
    try:
        doc = load_yaml(path, "csctl.yaml")
    except StackError:
        return None
    if isinstance(doc, dict) and isinstance(doc.get("config"), dict):
        return None
    return "%s: not a csctl config (no 'config' mapping: %s); not a stack, skipped" % (
        shown(path), "a list" if isinstance(doc, list) else excerpt(doc) if not isinstance(doc, dict) else
        "keys %s" % ", ".join(sorted(map(str, doc))[:5]))


def find_stacks(path, notes=None):
    """``path`` itself when it is a stack, else every stack below it (not looking inside stacks).

    A stack is a directory with ``installer.yaml``, ``csctl.yaml`` or ``metadata.yaml``. Scanning a tree,
    a directory whose only marker is a ``csctl.yaml`` that is not a csctl config is not a stack: it is
    skipped, and ``notes`` (a list) is told why.
    """
    path = os.path.abspath(path)
    if detect_layout(path):
        return [path]
    if not os.path.isdir(path):
        raise StackError("no stack", ["%s is not a directory" % path])
    found = []
    for d, dirs, _files in os.walk(path):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        layout = detect_layout(d)
        other = _not_csctl_config(d) if layout == "csctl" else None
        if other:
            if notes is not None:
                notes.append(other)
            continue
        if layout:
            found.append(d)
            dirs[:] = []
    if not found:
        raise StackError("no stack", ["no metadata.yaml, csctl.yaml or installer.yaml below %s" % path])
    return sorted(found)
