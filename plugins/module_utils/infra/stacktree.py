# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the on-disk layout of a cluster stack: its layouts, parts and
files, the checks of its tree, and writing files into it all or nothing (:func:`commit_files`).

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
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import hashlib
import os
import re
import stat

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt

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

CSCTL_PLACEHOLDER = re.compile(r"^<<\s*\.[A-Za-z]+\s*>>\Z")
# Hashes see the versions a bump rewrites as csctl's own placeholders, so that a tree written
# with those placeholders hashes exactly as csctl hashes it.
CLUSTER_CLASS_MARK = "<< .ClusterClassVersion >>"
CLUSTER_ADDON_MARK = "<< .ClusterAddonVersion >>"


class StackError(MooringError):
    """A cluster stack is malformed, out of date or cannot be exported; nothing was written."""


def plain(text, limit=200):
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


def link_problem(path):
    """The one line that refuses the symlink at ``path``: a stack holds no links, so that nothing
    outside it reaches helm or the export, and its hashes cover content, not a link's target."""
    try:
        target = shown(os.readlink(path))
    except OSError:
        target = "?"
    return ("%s: a symlink (to %s); a stack holds only files and directories, so that nothing outside it reaches "
            "the export or its version: put the file itself there" % (shown(path), target))


def _not_plain(path, st):
    """The line for an entry that is neither a regular file nor a directory, else None."""
    if stat.S_ISLNK(st.st_mode):
        return link_problem(path)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return "%s: a FIFO, device or socket; a stack holds only files and directories" % shown(path)
    return None


def check_tree(root):
    """One line per entry of a stack directory that a stack may not hold (at most
    :data:`MAX_TREE_PROBLEMS`, then a count): a symlink (to a file or a directory, anywhere, names
    starting with ``.`` included), a FIFO, device or socket, a name that is not printable UTF-8, a
    file larger than :data:`MAX_FILE_BYTES`, text in UTF-16/32. The name, size and text checks skip
    names starting with ``.`` as the hashes skip them; links and special files are refused there too
    (a chart's dot files are copied for helm)."""
    problems = []
    for dirpath, dirnames, filenames in os.walk(root):
        hidden = any(part.startswith(".") for part in os.path.relpath(dirpath, root).split(os.sep) if part != ".")
        dirnames.sort()
        for name in list(dirnames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full):  # os.walk lists a link to a directory here, and does not follow it
                problems.append(link_problem(full))
                dirnames.remove(name)
            elif not hidden and not name.startswith(".") and not _good_name(name):
                problems.append("%s: the directory name %s is not printable UTF-8; rename it" % (shown(dirpath), shown(name)))
                dirnames.remove(name)
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            problem = _not_plain(full, st)
            if problem:
                problems.append(problem)
                continue
            if hidden or (name.startswith(".") and name not in DOT_FILES_KEPT):
                continue
            if not _good_name(name):
                problems.append("%s: the file name %s is not printable UTF-8; rename it" % (shown(dirpath), shown(name)))
            elif st.st_size > MAX_FILE_BYTES:
                problems.append("%s: %d bytes; a stack file may have at most %d" % (shown(full), st.st_size, MAX_FILE_BYTES))
            else:
                with open_plain(full) as f:
                    head = f.read(4)
                if head.startswith(_BOMS):
                    problems.append("%s: UTF-16/32 text is not supported; save it as UTF-8" % shown(full))
    if len(problems) > MAX_TREE_PROBLEMS:
        problems[MAX_TREE_PROBLEMS:] = ["%s: %d more entries like these" % (shown(root), len(problems) - MAX_TREE_PROBLEMS)]
    return problems


def open_plain(path):
    """``path`` opened for reading (binary) when it is a regular file, never through a symlink (the
    last component is not followed); StackError naming it otherwise (a link put there after the
    tree was checked, a FIFO: never read from)."""
    try:
        return fileio.open_regular(path, "stack file", os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))[0]
    except fileio.NotRegularFileError:
        raise StackError("stack file %s is not a file" % shown(path), [_not_plain(path, os.lstat(path))]) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StackError("stack file %s is a symlink" % shown(path), [link_problem(path)]) from None
        raise


def walk_plain(root, keep=()):
    """``(relative posix path, absolute path)`` of every regular file under ``root``, sorted; names
    starting with ``.`` skipped (but the file names in ``keep``). A symlink (to a file or a
    directory) or a special file is a StackError naming it, never followed and never skipped."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames):
            if os.path.islink(os.path.join(dirpath, name)):
                raise StackError("stack %s holds a symlink" % shown(root), [link_problem(os.path.join(dirpath, name))])
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            full = os.path.join(dirpath, name)
            problem = _not_plain(full, os.lstat(full))
            if problem:
                raise StackError("stack %s holds what a stack may not" % shown(root), [problem])
            if not name.startswith(".") or name in keep:
                out.append((os.path.relpath(full, root).replace(os.sep, "/"), full))
    return sorted(out)


def tree_entries(root):
    """``[(relative posix path, "file", digest)]`` for every regular file under ``root``, sorted.

    Files by content; names starting with ``.`` are skipped (editor and OS noise); modes, owners
    and times are never looked at. A symlink is a StackError (:func:`walk_plain`): a hash covers
    what is in the directory, never what a link points to.
    """
    if not os.path.isdir(root):
        return []
    entries = []
    for rel, full in walk_plain(root):
        digest = hashlib.sha256()
        with open_plain(full) as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        entries.append((rel, "file", digest.hexdigest()))
    return entries


def detect_layout(path):
    """``mooring``, ``csctl`` or ``seed`` for a stack directory; None when it is none of these."""
    if os.path.isfile(os.path.join(path, "installer.yaml")):
        return "mooring"
    if os.path.isfile(os.path.join(path, "csctl.yaml")):
        return "csctl"
    if os.path.isfile(os.path.join(path, "metadata.yaml")):
        return "seed"
    return None


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


def _make_dirs(path, made):
    """Make the missing directories above ``path`` (0755), outermost first; ``made`` gets each one made."""
    missing = []
    d = os.path.dirname(path)
    while not os.path.isdir(d):
        missing.append(d)
        d = os.path.dirname(d)
    for d in reversed(missing):
        os.mkdir(d, 0o755)
        made.append(d)


def _recorder(done, path, old):
    """An exit callback that records ``(path, old)`` once the rename before it succeeded."""
    def record(exc_type, _exc, _tb):
        if exc_type is None:
            done.append((path, old))
    return record


def _stage_and_rename(todo, made, done):
    """Every new content to a temporary file (:func:`fileio.atomic_output`), then all renamed in
    ``todo``'s order when the stack of outputs closes; ``done`` gets each file renamed. When a
    temporary file cannot be written, or a rename fails, the later renames do not happen and every
    temporary file left is removed."""
    with contextlib.ExitStack() as outputs:
        for path, _data, _old in todo:
            _make_dirs(path, made)
        # entered last to first, so that they close (rename) first to last
        for path, data, old in reversed(todo):
            outputs.push(_recorder(done, path, old))
            handle = outputs.enter_context(fileio.atomic_output(path, old[1] if old else 0o644))
            handle.write(data)
            handle.close()  # one open file at a time; the rename comes when the stack closes


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
    made, done = [], []
    try:
        _stage_and_rename(todo, made, done)
    except BaseException:
        for path, old in reversed(done):
            if old is None:
                os.unlink(path)
            else:
                fileio.write_atomic(path, old[0], old[1])
        for d in reversed(made):
            os.rmdir(d)
        raise
    return [path for path, _data, _old in todo]
