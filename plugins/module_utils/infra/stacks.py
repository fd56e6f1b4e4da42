# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: versioned cluster stacks and their Cluster API export.

Three layouts are recognised (by the files in the stack directory, in this order):

``mooring`` (``installer.yaml`` present): ``stacks/<provider>/<stack>/<kubernetes-major-minor>/``::

    metadata.yaml          metadata.clusterstack.x-k8s.io/v1alpha1 versions
    installer.yaml         the installer spec (exact versions only)
    cluster-class/         the ClusterClass Helm chart (templates/, values.yaml: provider settings)
    cluster-addon/         values.yaml: Helm values per add-on for the cluster-addon chart
    node-image/            image.yaml: the node image definition
    release.yaml           the last release: its versions and the content hash of each part

``csctl`` (``csctl.yaml`` present; SovereignCloudStack/cluster-stacks today, built by csctl):
``csctl.yaml`` (provider type, cluster stack name, Kubernetes version), ``cluster-class/`` (Helm
chart), ``cluster-addon/`` (a chart, or one chart per add-on in ``cluster-addon/<addon>/``),
``clusteraddon.yaml``, ``versions.yaml``, node image files; ``metadata.yaml`` is optional.

``seed`` (``metadata.yaml`` without ``installer.yaml`` or ``csctl.yaml``; the early
cluster-stacks ``providers/<provider>/<name>/<1-NN>/``): ``metadata.yaml`` (which also holds the
Kubernetes version), ``cluster-class/`` and ``cluster-addon/`` Helm charts, ``node-images/``,
``node-images.yaml``, ``cluster-addon-values.yaml``, topology files.

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

``plan_versions`` bumps a component's version exactly when its hash differs from the last
release's, and the stack version when any part changed; never otherwise. Versions are either
stable (``v1``, ``v2``, ...) or csctl's hash-mode dev versions (``v0-sha.<7 characters>``,
chosen by writing such a version into metadata.yaml or, without metadata.yaml, into
cluster-class/Chart.yaml). ``apply_versions`` writes every place that carries a version
(metadata.yaml, the charts' ``version``, literal ClusterClass names) by editing the scalar in
place, and release.yaml.

Hostile or broken input is refused in one line per problem, before anything is written: every
YAML file is read through ``common/yamlio`` (UTF-8, bounded size and depth; no aliases in the
record files, ``csctl.yaml`` and ``node-image/image.yaml``); a stack directory may hold only
regular files, directories and symlinks, with printable UTF-8 names and link targets, files of at
most :data:`MAX_FILE_BYTES`, and no text in UTF-16/32 (a byte-order mark); the version files
and release.yaml are written all or nothing (:func:`commit_files`). The export renders every
stack before it writes, and writes all or nothing (:func:`write_export`).
"""

from __future__ import annotations

import base64
import codecs
import collections
import copy
import fnmatch
import hashlib
import os
import re
import shutil
import stat
import tempfile

try:
    import yaml

    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - PyYAML comes with ansible-core on the controller
    HAS_YAML = False
    YAML_IMPORT_ERROR = _exc

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio, yamlio
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import canonical_json, sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.yamlio import excerpt

METADATA_API_VERSION = "metadata.clusterstack.x-k8s.io/v1alpha1"
RELEASE_API_VERSION = "cluster.mooring.io/v1beta1"
RELEASE_KIND = "StackRelease"
COMPONENTS = ("clusterAddon", "nodeImage")
PARTS = ("clusterAddon", "nodeImage", "clusterClass")
PART_DIRS = {"clusterAddon": "cluster-addon", "nodeImage": "node-image", "clusterClass": "cluster-class"}
NODE_IMAGE_ADDONS = ("kubernetes", "containerd")
NOT_IN_CLUSTER_ADDON = ("kubernetes", "etcd", "containerd")

LAYOUTS = ("mooring", "csctl", "seed")
RECORD_FILES = ("metadata.yaml", "release.yaml")
# Top-level entries of csctl/seed stacks and the part they belong to; anything else is clusterClass.
ENTRY_PARTS = {
    "node-image": "nodeImage", "node-images": "nodeImage", "node-images.yaml": "nodeImage",
    "image.yaml": "nodeImage", "kubernetes.yaml": "nodeImage",
    "cluster-addon": "clusterAddon", "cluster-addon-values.yaml": "clusterAddon",
    "clusteraddon.yaml": "clusterAddon", "versions.yaml": "clusterAddon",
}
# The stack's own charts: their top-level ``version`` carries a stack version (fnmatch on posix paths).
CHART_VERSION_OF = (("cluster-class/Chart.yaml", "clusterStack"),
                    ("cluster-addon/Chart.yaml", "clusterAddon"),
                    ("cluster-addon/*/Chart.yaml", "clusterAddon"))
DOT_FILES_KEPT = (".helmignore",)
# The largest file a stack may hold (charts, vendored chart packages, node image definitions).
MAX_FILE_BYTES = 64 * 1024 * 1024
# Problems of one stack's tree listed before the rest are only counted.
MAX_TREE_PROBLEMS = 10
_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)

# \Z, not $: $ also matches before a final newline ("v1\n", a directory "default\n").
_VN = re.compile(r"^v([1-9][0-9]{0,8})\Z")
_DEV = re.compile(r"^v0-sha\.([a-z0-9]{1,64})\Z")
_KUBE = re.compile(r"^v(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\Z")
_MINOR_DIR = re.compile(r"^(0|[1-9][0-9]{0,3})-(0|[1-9][0-9]{0,3})\Z")
_EXACT = re.compile(r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z")
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_CSCTL_PLACEHOLDER = re.compile(r"^<<\s*\.[A-Za-z]+\s*>>\Z")
# Hashes see the versions a bump rewrites as csctl's own placeholders, so that a tree written
# with those placeholders hashes exactly as csctl hashes it.
_CLUSTER_CLASS_MARK = "<< .ClusterClassVersion >>"
_CLUSTER_ADDON_MARK = "<< .ClusterAddonVersion >>"


class StackError(MooringError):
    """A cluster stack is malformed, out of date or cannot be exported; nothing was written."""


def _plain(text, limit=200):
    """``text`` as a message shows a list of names: unquoted, cut to ``limit`` characters."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def shown(text):
    """A file name or path as a message shows it: as it is when printable UTF-8, else the repr
    of its bytes (``b'a\\xffb'``), cut to a bounded length."""
    try:
        text.encode("utf-8")
        if text.isprintable() and len(text) <= 300:
            return text
    except UnicodeEncodeError:
        pass
    return excerpt(os.fsencode(text), 300)


def _good_name(name):
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return name.isprintable()


def check_tree(root):
    """One line per entry of a stack directory that a stack may not hold (at most
    :data:`MAX_TREE_PROBLEMS`, then a count): a name or link target that is not printable
    UTF-8, a FIFO, device or socket, a file larger than :data:`MAX_FILE_BYTES`, text in
    UTF-16/32. Names starting with ``.`` are skipped as the hashes skip them."""
    problems = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in list(dirnames):
            if not _good_name(name):
                problems.append("%s: the directory name %s is not printable UTF-8; rename it" % (shown(dirpath), shown(name)))
                dirnames.remove(name)
            elif name.startswith("."):
                dirnames.remove(name)
        for name in sorted(filenames):
            if name.startswith(".") and name not in DOT_FILES_KEPT:
                continue
            if not _good_name(name):
                problems.append("%s: the file name %s is not printable UTF-8; rename it" % (shown(dirpath), shown(name)))
                continue
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                if not _good_name(os.readlink(full)):
                    problems.append("%s: the symlink's target %s is not printable UTF-8" % (shown(full), shown(os.readlink(full))))
            elif not stat.S_ISREG(st.st_mode):
                problems.append("%s: a FIFO, device or socket; a stack holds only files, directories and symlinks" % shown(full))
            elif st.st_size > MAX_FILE_BYTES:
                problems.append("%s: %d bytes; a stack file may have at most %d" % (shown(full), st.st_size, MAX_FILE_BYTES))
            else:
                with open(full, "rb") as f:
                    head = f.read(4)
                if head.startswith(_BOMS):
                    problems.append("%s: UTF-16/32 text is not supported; save it as UTF-8" % shown(full))
    if len(problems) > MAX_TREE_PROBLEMS:
        problems[MAX_TREE_PROBLEMS:] = ["%s: %d more entries like these" % (shown(root), len(problems) - MAX_TREE_PROBLEMS)]
    return problems


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


def _entries_hash(entries, spec_parts):
    h = hashlib.sha256()
    for rel, kind, digest in entries:
        h.update(("%s\0%s\0%s\n" % (rel, kind, digest)).encode("utf-8"))
    h.update(b"spec\0")
    h.update(canonical_json(spec_parts))
    return "sha256:" + h.hexdigest()


def part_hash(root, spec_parts):
    """sha256 over a directory's entries and a canonical JSON of the spec sections it ships."""
    return _entries_hash(tree_entries(root), spec_parts)


def csctl_dirhash(files):
    """csctl's hash-mode string for ``[(relative posix path, content bytes)]``.

    Go's ``dirhash.Hash1`` (sha256 over sorted lines ``"<hex sha256>  <path>\\n"``, standard
    base64), then csctl's clean-up (no ``/``, ``+``, ``=``, lower case) and its first 7 characters.
    """
    h = hashlib.sha256()
    for rel, data in sorted(files, key=lambda f: f[0].encode("utf-8")):
        h.update(("%s  %s\n" % (hashlib.sha256(data).hexdigest(), rel)).encode("utf-8"))
    text = base64.b64encode(h.digest()).decode("ascii")
    for ch in "/=+":
        text = text.replace(ch, "")
    return text.lower()[:7]


# --------------------------------------------------------------------------- YAML scalars in place
_KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[^\s#:'\"-][^:#]*?|'[^']*'|\"[^\"]*\")\s*:(?=\s|$)")
_SCALAR = re.compile(r"^(?P<pre>\s*)(?P<value>\"[^\"]*\"|'[^']*'|[^\s#][^#]*?)?(?P<post>\s+#.*|\s*)$")


def _unquote(key):
    key = key.strip()
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
        return key[1:-1]
    return key


def _find_scalar(lines, keys):
    """Index of the line holding ``keys`` (a path of block-mapping keys) and the span of its value.

    Returns ``(line index, start, end)`` of the scalar text (quotes included) or None when the
    path is not a plain block-style scalar. Only block mappings are followed, by indentation.
    """
    start, end, parent_indent = 0, len(lines), -1
    found = None
    for want in keys:
        child_indent = None
        found = None
        for i in range(start, end):
            line = lines[i].rstrip("\r\n")
            stripped = line.strip()
            if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
                continue
            indent = len(line) - len(line.lstrip(" "))
            if indent <= parent_indent:
                end = i
                break
            if child_indent is None:
                child_indent = indent
            if indent != child_indent:
                continue
            m = _KEY_LINE.match(line)
            if m and _unquote(m.group("key")) == want:
                found = (i, m.end())
                # the block of this key ends at the next line indented <= child_indent
                nested_end = end
                for k in range(i + 1, end):
                    other = lines[k].rstrip("\r\n")
                    if other.strip() and not other.strip().startswith("#") and \
                            len(other) - len(other.lstrip(" ")) <= child_indent:
                        nested_end = k
                        break
                start, end, parent_indent = i + 1, nested_end, child_indent
                break
        if found is None:
            return None
    i, col = found
    line = lines[i].rstrip("\r\n")
    m = _SCALAR.match(line[col:])
    if not m or m.group("value") is None or m.group("value")[0] in "|>&*!{[":
        return None
    return i, col + m.start("value"), col + m.end("value")


def yaml_scalar(text, keys):
    """The plain text of the block-style scalar at ``keys`` (quotes removed), or None."""
    lines = text.splitlines(True)
    hit = _find_scalar(lines, keys)
    if hit is None:
        return None
    i, a, b = hit
    return _unquote(lines[i][a:b])


def set_yaml_scalar(text, keys, value):
    """``text`` with the scalar at ``keys`` replaced by ``value`` (its quoting kept); None when absent.

    Everything else — comments, key order, indentation — stays byte for byte.
    """
    lines = text.splitlines(True)
    hit = _find_scalar(lines, keys)
    if hit is None:
        return None
    i, a, b = hit
    old = lines[i][a:b]
    quote = old[0] if old[:1] in ("'", '"') and len(old) >= 2 and old[-1] == old[0] else ""
    lines[i] = lines[i][:a] + quote + value + quote + lines[i][b:]
    return "".join(lines)


# --------------------------------------------------------------------------- loading
def _load_yaml(path, what, max_aliases=0):
    """A stack's YAML file through yamlio: UTF-8, bounded; ``max_aliases`` 0 where the format has no anchors."""
    if not HAS_YAML:  # pragma: no cover
        raise missing_library("PyYAML", "for cluster stacks", YAML_IMPORT_ERROR, StackError)
    try:
        return yamlio.load_file(path, max_aliases=max_aliases)
    except FileNotFoundError:
        raise StackError("%s missing" % what, ["%s: %s is missing" % (path, what)]) from None
    except IsADirectoryError:
        raise StackError("bad %s" % what, ["%s: is a directory, not a file" % path]) from None
    except OSError as exc:
        raise StackError("bad %s" % what, ["%s: cannot read: %s" % (path, exc.strerror or exc)]) from None
    except yamlio.YamlInputError as exc:
        raise StackError("bad YAML", exc.problems) from None


def _version_number(value, field, path):
    m = _VN.match(value) if isinstance(value, str) else None
    if not m:
        raise StackError("bad version", ["%s: %s is %s, expected v<N> (v1, v2, ...)" % (path, field, excerpt(value))])
    return int(m.group(1))


def is_dev_version(value):
    """True for csctl's hash-mode versions ``v0-sha.<hash>``."""
    return isinstance(value, str) and bool(_DEV.match(value))


def _check_version(value, field, path, problems, dev_ok):
    if dev_ok and is_dev_version(value):
        return
    try:
        _version_number(value, field, path)
    except StackError as exc:
        if dev_ok:
            problems.append("%s: %s is %s, expected v<N> (v1, v2, ...) or v0-sha.<hash>" % (path, field, excerpt(value)))
        else:
            problems.extend(exc.problems)


def load_metadata(path, dev_ok=True):
    doc = _load_yaml(path, "metadata.yaml")
    problems = []
    if not isinstance(doc, dict):
        raise StackError("bad metadata", ["%s: must be a mapping" % path])
    if doc.get("apiVersion") != METADATA_API_VERSION:
        problems.append("%s: apiVersion is %s, expected %r" % (path, excerpt(doc.get("apiVersion")), METADATA_API_VERSION))
    versions = doc.get("versions") if isinstance(doc.get("versions"), dict) else {}
    if not isinstance(doc.get("versions"), dict):
        problems.append("%s: versions is %s, expected a mapping (clusterStack, kubernetes, components)"
                        % (path, excerpt(doc.get("versions"))))
    components = versions.get("components") if isinstance(versions.get("components"), dict) else {}
    if versions and not isinstance(versions.get("components"), dict):
        problems.append("%s: versions.components is %s, expected a mapping (%s)"
                        % (path, excerpt(versions.get("components")), ", ".join(COMPONENTS)))
    _check_version(versions.get("clusterStack"), "versions.clusterStack", path, problems, dev_ok)
    for c in COMPONENTS:
        _check_version(components.get(c), "versions.components.%s" % c, path, problems, dev_ok)
    if not isinstance(versions.get("kubernetes"), str) or not _KUBE.match(versions.get("kubernetes")):
        problems.append("%s: versions.kubernetes is %s, expected vX.Y.Z" % (path, excerpt(versions.get("kubernetes"))))
    extra = sorted(str(k) for k in set(components) - set(COMPONENTS))
    if extra:
        problems.append("%s: unknown components %s (known: %s)" % (path, excerpt(", ".join(extra), 200), ", ".join(COMPONENTS)))
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
    versions = doc["versions"]
    problems = ["%s: hashes.%s is %s, expected sha256:<hex>" % (path, p, excerpt(doc["hashes"][p]))
                for p in PARTS if not isinstance(doc["hashes"][p], str)]
    for field in ("clusterStack", "kubernetes"):
        if versions.get(field) is not None and not isinstance(versions.get(field), str):
            problems.append("%s: versions.%s is %s, expected a string" % (path, field, excerpt(versions.get(field))))
    components = versions.get("components")
    if components is not None and not isinstance(components, dict):
        problems.append("%s: versions.components is %s, expected a mapping" % (path, excerpt(components)))
    elif components:
        problems.extend("%s: versions.components.%s is %s, expected a string" % (path, c, excerpt(components.get(c)))
                        for c in COMPONENTS if components.get(c) is not None and not isinstance(components.get(c), str))
    if problems:
        raise StackError("bad release record", problems)
    return doc


def load_csctl_config(path):
    """csctl.yaml as csctl reads it: provider type, cluster stack name and Kubernetes version."""
    doc = _load_yaml(path, "csctl.yaml")
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
        raise StackError("bad csctl config", ["%s: expected a mapping with 'config'" % path])
    cfg = doc["config"]
    provider = cfg.get("provider") if isinstance(cfg.get("provider"), dict) else {}
    problems = []
    ptype = provider.get("type")
    if not isinstance(ptype, str) or not _DNS1123.match(ptype):
        problems.append("%s: config.provider.type is %s, expected a lower-case DNS label" % (path, excerpt(ptype)))
    name = cfg.get("clusterStackName")
    if not isinstance(name, str) or not _DNS1123.match(name):
        problems.append("%s: config.clusterStackName is %s, expected a lower-case DNS label" % (path, excerpt(name)))
    kube = cfg.get("kubernetesVersion")
    if not isinstance(kube, str) or not _KUBE.match(kube):
        problems.append("%s: config.kubernetesVersion is %s, expected vX.Y.Z" % (path, excerpt(kube)))
    if problems:
        raise StackError("bad csctl config", problems)
    return doc


def detect_layout(path):
    """``mooring``, ``csctl`` or ``seed`` for a stack directory; None when it is none of these."""
    if os.path.isfile(os.path.join(path, "installer.yaml")):
        return "mooring"
    if os.path.isfile(os.path.join(path, "csctl.yaml")):
        return "csctl"
    if os.path.isfile(os.path.join(path, "metadata.yaml")):
        return "seed"
    return None


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
            if not _DNS1123.match(value):
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
        if self.layout != "mooring":
            return self.kubernetes
        return "v" + str(self.spec["kubernetes"]["version"]).lstrip("v")

    # ---- files
    def files(self):
        """``[(relative posix path, kind, absolute path)]`` of every file of the stack but the record files."""
        out = []
        for dirpath, dirnames, filenames in os.walk(self.path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in filenames:
                if name.startswith(".") and name not in DOT_FILES_KEPT:
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, self.path).replace(os.sep, "/")
                if rel in RECORD_FILES:
                    continue
                mode = os.lstat(full).st_mode
                if stat.S_ISLNK(mode):
                    out.append((rel, "link", full))
                elif stat.S_ISREG(mode):
                    out.append((rel, "file", full))
        return sorted(out)

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
        marks = {"clusterStack": _CLUSTER_CLASS_MARK, "clusterAddon": _CLUSTER_ADDON_MARK}
        cluster_stack = versions["clusterStack"] if versions else marks["clusterStack"]
        field = self.chart_version_field(rel)
        if field:
            if versions is None:
                value = marks[field]
            else:
                value = versions["clusterStack"] if field == "clusterStack" else versions["components"]["clusterAddon"]
            current = yaml_scalar(text, ["version"])
            # csctl's own placeholders (``<< .ClusterClassVersion >>``) are left to csctl
            if current is not None and (versions is None or not _CSCTL_PLACEHOLDER.match(current)):
                text = set_yaml_scalar(text, ["version"], value)
        return self._class_name_pattern().sub(self.name + "-" + cluster_stack, text)

    def _content(self, rel, kind, full, versions=None):
        """Bytes of a file as hashed (``versions`` None: version fields normalised) or as it must be."""
        if kind == "link":
            return os.readlink(full).encode("utf-8")
        with open(full, "rb") as f:
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
                "clusterAddon": _entries_hash(entries["clusterAddon"],
                                              {k: v for k, v in spec.items() if k not in NOT_IN_CLUSTER_ADDON}),
                "nodeImage": _entries_hash(entries["nodeImage"], {k: spec[k] for k in NODE_IMAGE_ADDONS if k in spec}),
                "clusterClass": _entries_hash(entries["clusterClass"], spec),
            }
        entries = {p: [] for p in PARTS}
        for rel, kind, full in self.files():
            digest = hashlib.sha256(self._content(rel, kind, full)).hexdigest()
            entries[self.part_of(rel)].append((rel, kind, digest))
        kube = {"kubernetes": self.kubernetes}
        return {
            "clusterAddon": _entries_hash(entries["clusterAddon"], {}),
            "nodeImage": _entries_hash(entries["nodeImage"], kube),
            "clusterClass": _entries_hash(entries["clusterClass"], kube),
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
        for rel, kind, full in self.files():
            field = self.chart_version_field(rel)
            if field and kind == "file" and found[field] is None:
                value = yaml_scalar(_chart_text(full), ["version"])
                if value and (_VN.match(value) or _DEV.match(value)):
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
                new = _dump(doc)
            if new != old:
                edits[self.metadata_path] = new
        for rel, kind, full in self.files():
            if kind != "file":
                continue
            with open(full, "rb") as f:
                data = f.read()
            if b"\0" in data:
                continue
            if self.chart_version_field(rel):
                old = _chart_text(full, data)
            else:
                try:
                    old = data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
            new = self.rewrite_text(rel, old, versions)
            if new != old:
                edits[full] = new
        return edits


def _chart_text(path, data=None):
    """The text of a stack chart's Chart.yaml, which carries a version: UTF-8, else a StackError."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    try:
        yamlio.decode(data, path)
    except yamlio.YamlInputError as exc:
        raise StackError("bad chart", exc.problems) from None
    return data.decode("utf-8")  # as it is, a byte-order mark included


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
    try:
        doc = _load_yaml(path, "csctl.yaml")
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


# --------------------------------------------------------------------------- versions
def _bumped(base, moved):
    return "v%d" % (base + 1 if moved else base)


def plan_versions(stack):
    """Decide versions from hashes: returns a dict describing the plan.

    ``due``: True when files must be (re)written; ``changed``: the parts whose content differs
    from the last release; ``versions``: what the stack must say; ``edits``: ``{path: text}`` of
    the files carrying versions that must change; ``reasons``: one line per decision;
    ``mode``: ``stable`` or ``hash`` (csctl's ``v0-sha.<hash>`` dev versions).
    """
    hashes = stack.hashes()
    release = load_release(stack.release_path)
    current = stack.current_versions(release)
    mode = "hash" if is_dev_version(current["clusterStack"]) else "stable"
    reasons = []
    recorded = release["versions"] if release else None
    same_mode = bool(recorded) and is_dev_version(recorded.get("clusterStack")) == (mode == "hash")
    first = release is None or not same_mode
    if mode == "hash":
        dev = stack.dev_version()
        if first:
            changed = list(PARTS)
            versions = {"clusterStack": dev, "kubernetes": stack.spec_kubernetes(),
                        "components": {c: dev for c in COMPONENTS}}
            reasons.append("%s: no hash-mode release recorded yet; %s is taken as the first release" % (stack.name, dev))
        else:
            changed = [p for p in PARTS if hashes[p] != release["hashes"].get(p)]
            rc = recorded.get("components") or {}
            versions = {"clusterStack": dev if changed else recorded["clusterStack"],
                        "kubernetes": stack.spec_kubernetes(),
                        "components": {c: dev if c in changed else rc.get(c, dev) for c in COMPONENTS}}
    elif first:
        changed = list(PARTS)
        versions = copy.deepcopy(current)
        problems = []
        _check_version(versions["clusterStack"], "clusterStack", stack.path, problems, False)
        for c in COMPONENTS:
            _check_version(versions["components"][c], "components.%s" % c, stack.path, problems, False)
        if problems:
            raise StackError("stack %s has no stable versions to record" % stack.name, problems)
        reasons.append("%s: no release recorded yet; %s is taken as the first release" % (stack.name, versions["clusterStack"]))
    else:
        base_stack = _version_number(recorded.get("clusterStack"), "versions.clusterStack", stack.release_path)
        base = {c: _version_number((recorded.get("components") or {}).get(c), "versions.components.%s" % c,
                                   stack.release_path) for c in COMPONENTS}
        changed = [p for p in PARTS if hashes[p] != release["hashes"].get(p)]
        versions = {"clusterStack": _bumped(base_stack, changed), "kubernetes": stack.spec_kubernetes(),
                    "components": {c: _bumped(base[c], c in changed) for c in COMPONENTS}}
    if not first:
        rc = recorded.get("components") or {}
        for p in changed:
            if p in COMPONENTS:
                reasons.append("%s: %s content changed: %s -> %s" % (stack.name, p, rc.get(p), versions["components"][p]))
            else:
                reasons.append("%s: %s content changed" % (stack.name, p))
        if changed:
            reasons.append("%s: clusterStack %s -> %s" % (stack.name, recorded.get("clusterStack"), versions["clusterStack"]))
    edits = stack.version_edits(versions)
    if first and edits:
        reasons.append("%s: %s carry other versions; 'mooring stack version' sets them to %s"
                       % (stack.name, ", ".join(sorted(os.path.relpath(p, stack.path) for p in edits)),
                          versions["clusterStack"]))
    if not first and not changed and edits:
        reasons.append("%s: %s carry versions that no content change justifies (%s); they are put back"
                       % (stack.name, ", ".join(sorted(os.path.relpath(p, stack.path) for p in edits)),
                          canonical_json(versions).decode("utf-8")))
    release_doc = {"apiVersion": RELEASE_API_VERSION, "kind": RELEASE_KIND,
                   "versions": versions, "hashes": dict(sorted(hashes.items()))}
    due = first or bool(changed) or bool(edits) or release_doc["versions"] != recorded
    if not due:
        reasons.append("%s: up to date at %s" % (stack.name, versions["clusterStack"]))
    return {"stack": stack, "due": due, "changed": changed, "versions": versions, "hashes": hashes,
            "edits": edits, "reasons": reasons, "first": first, "mode": mode}


def unrecorded(plan):
    """Whether a bump is due but not recorded (``--check`` fails, the export refuses).

    A stack without a release record (as upstream stacks come: their record is a remote
    release, and their build sets chart versions) is taken as it is: its versions are the first
    release, and files that carry other versions are only reported; the first ``mooring stack
    version`` records it and puts them in step.
    """
    return plan["due"] and not plan["first"]


def check_versions(stack):
    """Raise StackError when a bump is due but not recorded (see :func:`unrecorded`)."""
    plan = plan_versions(stack)
    if unrecorded(plan):
        raise StackError("stack %s needs a version bump" % stack.name, plan["reasons"] + [
            "run 'mooring stack version %s' and commit the files it writes" % stack.path])
    return plan


_DUMPERS = {}


def _dumper():
    """SafeDumper that never writes anchors (a value used twice is written twice)."""
    if "no-aliases" not in _DUMPERS:
        class _NoAliases(yaml.SafeDumper):
            def ignore_aliases(self, data):
                return True

        _DUMPERS["no-aliases"] = _NoAliases
    return _DUMPERS["no-aliases"]


def _dump(doc):
    return yaml.dump(doc, Dumper=_dumper(), sort_keys=False, default_flow_style=False)


def _old_file(path):
    """(bytes, mode) of the regular file at ``path``, or None when there is none; StackError
    for anything else in the way (a directory, a symlink, a FIFO: never read, never replaced)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "a symlink" if stat.S_ISLNK(st.st_mode) else \
            "not a regular file"
        raise StackError("cannot write %s" % shown(path), ["%s: is %s; refusing to replace it with a file" % (shown(path), what)])
    with open(path, "rb") as f:
        return f.read(), stat.S_IMODE(st.st_mode)


def _put(path, data, mode):
    """``data`` at ``path`` through a temporary file in its directory and a rename."""
    fd, tmp = tempfile.mkstemp(prefix=".%s-" % os.path.basename(path), dir=os.path.dirname(path))
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def commit_files(changes, root):
    """Write ``changes`` (``[(path, bytes)]``, every path under ``root``) all or nothing.

    Files whose content is already right are left alone. Every path is checked to stay under
    ``root`` (symlinks resolved) and to be a regular file or absent; every new content is written
    to a temporary file in its directory first, then all are renamed; when a rename fails, the
    files already renamed get their old content back (or are removed) and the directories this
    call created are removed. An existing file keeps its mode (new ones: 0644). Returns the paths
    written."""
    todo = []
    for path, data in changes:
        fileio.under_root(root, os.path.relpath(path, root))
        old = _old_file(path)
        if old is None or old[0] != data:
            todo.append((path, data, old))
    made, temps, done = [], [], []
    try:
        for path, data, old in todo:
            missing = []
            d = os.path.dirname(path)
            while not os.path.isdir(d):
                missing.append(d)
                d = os.path.dirname(d)
            for d in reversed(missing):
                os.mkdir(d, 0o755)
                made.append(d)
            fd, tmp = tempfile.mkstemp(prefix=".%s-" % os.path.basename(path), dir=os.path.dirname(path))
            temps.append(tmp)
            os.fchmod(fd, old[1] if old else 0o644)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        for (path, _data, old), tmp in zip(todo, temps):
            os.replace(tmp, path)
            done.append((path, old))
    except BaseException:
        for path, old in reversed(done):
            if old is None:
                os.unlink(path)
            else:
                _put(path, old[0], old[1])
        for tmp in temps:
            if os.path.lexists(tmp):
                os.unlink(tmp)
        for d in reversed(made):
            os.rmdir(d)
        raise
    return [path for path, _data, _old in todo]


def apply_versions(plan):
    """Write the files carrying versions and release.yaml for a plan, all or nothing
    (:func:`commit_files`); returns the paths written."""
    stack = plan["stack"]
    if not plan["due"]:
        return []
    release = {"apiVersion": RELEASE_API_VERSION, "kind": RELEASE_KIND,
               "versions": plan["versions"], "hashes": dict(sorted(plan["hashes"].items()))}
    changes = [(path, plan["edits"][path].encode("utf-8")) for path in sorted(plan["edits"])]
    changes.append((stack.release_path,
                    ("# Written by 'mooring stack version'; do not edit.\n" + _dump(release)).encode("utf-8")))
    written = commit_files(changes, stack.path)
    if stack.metadata is not None:
        stack.metadata = load_metadata(stack.metadata_path, dev_ok=stack.layout != "mooring")
    return written


# --------------------------------------------------------------------------- export
def _require(doc, path, keys, problems):
    for key in keys:
        if doc.get(key) in (None, ""):
            problems.append("%s: '%s' is required" % (path, key))


def load_node_image(stack):
    path = os.path.join(stack.path, PART_DIRS["nodeImage"], "image.yaml")
    doc = _load_yaml(path, "node-image/image.yaml") or {}
    problems = []
    if not isinstance(doc, dict):
        raise StackError("bad node image", ["%s: must be a mapping" % path])
    _require(doc, path, ("name", "kubernetes", "containerd"), problems)
    if str(doc.get("kubernetes")) != stack.spec_kubernetes():
        problems.append("%s: kubernetes %s differs from the stack's %s" % (path, excerpt(doc.get("kubernetes")), stack.spec_kubernetes()))
    containerd = str((stack.spec.get("containerd") or {}).get("version", ""))
    if containerd and str(doc.get("containerd")).lstrip("v") != containerd.lstrip("v"):
        problems.append("%s: containerd %s differs from the installer spec's %s" % (path, excerpt(doc.get("containerd")), containerd))
    if problems:
        raise StackError("bad node image", problems)
    return doc


def load_addon_values(stack):
    path = os.path.join(stack.path, PART_DIRS["clusterAddon"], "values.yaml")
    doc = _load_yaml(path, "cluster-addon/values.yaml", max_aliases=yamlio.MAX_ALIASES) or {}  # Helm values: anchors allowed
    if not isinstance(doc, dict):
        raise StackError("bad add-on values", ["%s: must map add-on name to Helm values" % path])
    addons = {k for k in stack.spec if k not in NOT_IN_CLUSTER_ADDON}
    unknown = sorted(str(k) for k in set(doc) - addons)
    if unknown:
        raise StackError("bad add-on values", ["%s: %s not in the installer spec (add-ons: %s)"
                                               % (path, _plain(", ".join(unknown)), ", ".join(sorted(addons)))])
    bad = sorted(str(k) for k, v in doc.items() if v is not None and not isinstance(v, dict))
    if bad:
        raise StackError("bad add-on values", ["%s: the values of %s must be a mapping (Helm values)"
                                               % (path, excerpt(", ".join(bad), 200))])
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


_CSCTL_MARKS = {_CLUSTER_CLASS_MARK: "clusterStack", _CLUSTER_ADDON_MARK: "clusterAddon",
                "<< .NodeImageVersion >>": "nodeImage"}


def _release_copy(chart_dir, dest, versions):
    """Copy the chart to ``dest`` as csctl packages it: ``version`` is the stack version and
    csctl's ``<< .XVersion >>`` placeholders are filled. The stack's own files are not touched."""
    shutil.copytree(chart_dir, dest, symlinks=True)
    chart_yaml = os.path.join(dest, "Chart.yaml")
    fill = {mark: (versions["clusterStack"] if part == "clusterStack" else versions["components"][part])
            for mark, part in _CSCTL_MARKS.items()}
    for dirpath, _dirs, files in os.walk(dest):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
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
            "version will not give clusters a new class" % (stack.name, _plain(", ".join(map(str, classes))), expected)]


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
        "clusterclass.yaml": yaml.dump_all(export.objects, Dumper=_dumper(), sort_keys=False, default_flow_style=False,
                                           explicit_start=True),
        "metadata.yaml": _dump({"apiVersion": METADATA_API_VERSION, "versions": export.versions}),
    }
    if export.addon_values is not None:
        files["cluster-addon-values.yaml"] = _dump(export.addon_values)
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


def write_rendered(export, out_dir):
    """Write one :class:`Export` into ``out_dir`` (:func:`write_export`); returns the paths written."""
    return write_export(out_dir, {"": export_files(export)})
