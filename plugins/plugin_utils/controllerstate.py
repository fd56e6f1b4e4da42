# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the controller's own state in one encrypted archive, and back.

What makes the cluster's trust lives on the controller: the PKI directory (the CAs' and the service-account
private keys), the lock, the bundle signing key and the run reports. :func:`pack` puts them - as named items,
each a file or a directory - into one tar with ``MANIFEST.json`` first (every file's item, path, mode, size and
sha256), encrypted with age (pyrage) to one or more recipients: age X25519 public keys (``age1...``, from
``age-keygen``) or SSH public keys (``ssh-ed25519 ...``, ``ssh-rsa ...``). Nothing unencrypted is written.

:func:`unpack` decrypts with an identity file, checks every member against the manifest (no extra, missing,
changed, linked or special member; no path that leaves its item) and every destination (a directory item into
a missing or empty directory, a file item onto a missing file or one with exactly its bytes) before it writes
anything: a refused restore leaves every destination as it was.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import time

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.tarsafe import open_tar

try:
    import pyrage
    PYRAGE_ERROR = None
except ImportError as _exc:  # pragma: no cover - requirements.txt has it
    pyrage = None
    PYRAGE_ERROR = _exc

FORMAT = "mooring.controller-backup/v1"
MANIFEST = "MANIFEST.json"
# The controller's state is keys, certificates, locks and reports: megabytes. Anything far larger is not one.
MAX_ARCHIVE = 256 * 1024 * 1024
MAX_FILES = 20000
MAX_KEY_FILE = 64 * 1024
ITEM_KINDS = ("file", "directory")


class ControllerStateError(MooringError):
    """The archive cannot be made or restored; nothing was written."""


def _need_pyrage():
    if pyrage is None:
        raise missing_library("pyrage", "to encrypt and decrypt the controller backup (age)", PYRAGE_ERROR,
                              ControllerStateError)


# ----------------------------------------------------------------------------------------------- keys
def recipients(values):
    """age recipients from ``values``: each an ``age1...`` or SSH public key, or a file holding such lines."""
    _need_pyrage()
    found = []
    for value in values or ():
        lines = [value]
        if not value.startswith(("age1", "ssh-")) and os.path.isfile(value):
            lines = _read_key_file(value, secret=False).decode("utf-8", "replace").splitlines()
        for line in (ln.strip() for ln in lines):
            if not line or line.startswith("#"):
                continue
            try:
                found.append(pyrage.ssh.Recipient.from_str(line) if line.startswith("ssh-")
                             else pyrage.x25519.Recipient.from_str(line))
            except pyrage.RecipientError as exc:
                raise ControllerStateError("recipient %r: not an age (age1...) or SSH public key (%s)"
                                           % (line[:40], exc)) from None
    if not found:
        raise ControllerStateError("no recipient: give an age public key (age-keygen), an SSH public key or a file of them")
    return found


def identities(path):
    """The private keys in ``path``: an age identity file (``AGE-SECRET-KEY-1...`` lines) or an OpenSSH key."""
    _need_pyrage()
    data = _read_key_file(path, secret=True)
    if b"-----BEGIN" in data:
        try:
            return [pyrage.ssh.Identity.from_buffer(data)]
        except pyrage.IdentityError as exc:
            raise ControllerStateError("identity %s: not an unencrypted OpenSSH private key (%s)" % (path, exc)) from None
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line.startswith("AGE-SECRET-KEY-"):
            try:
                found.append(pyrage.x25519.Identity.from_str(line))
            except pyrage.IdentityError:
                raise ControllerStateError("identity %s: a line is not a valid age secret key" % path) from None
    if not found:
        raise ControllerStateError("identity %s: no age secret key (AGE-SECRET-KEY-1...) or OpenSSH private key in it" % path)
    return found


def _read_key_file(path, secret):
    st, kind = fileio.file_kind(path)
    if kind != "file":
        raise ControllerStateError("%s is not a regular file" % path)
    if secret and st.st_mode & 0o077:
        raise ControllerStateError("identity %s is readable by others (mode %04o); chmod 600 it first"
                                   % (path, stat.S_IMODE(st.st_mode)))
    if st.st_size > MAX_KEY_FILE:
        raise ControllerStateError("%s is larger than %d bytes; not a key file" % (path, MAX_KEY_FILE))
    with open(path, "rb") as handle:
        return handle.read(MAX_KEY_FILE + 1)


# --------------------------------------------------------------------------------------------- pack
def _walk(item, root):
    """``(kind, [(relative path, absolute path, stat)], [(relative directory, mode)])`` of the item: its regular
    files and, for a directory, every directory in it (the item's own as ``""``); a link or special file is refused."""
    st, kind = fileio.file_kind(root)
    if os.path.islink(root) or kind == "special":
        raise ControllerStateError("%s %s: not a regular file or directory" % (item, root))
    if kind == "file":
        return "file", [("", root, st)], []
    files, directories = [], []
    for here, dirs, names in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(here, root)
        directories.append(("" if rel == "." else rel, stat.S_IMODE(os.lstat(here).st_mode)))
        for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(here, d))]:
            path = os.path.join(here, name)
            lst = os.lstat(path)
            if not stat.S_ISREG(lst.st_mode):
                raise ControllerStateError("%s %s: %s is a link or special file; the archive holds regular files only"
                                           % (item, root, os.path.relpath(path, root)))
            files.append((os.path.relpath(path, root), path, lst))
    return "directory", files, directories


def pack(items, recipient_values, dest, now=None):
    """Archive ``items`` (``{name: path}``; a missing path is skipped and named in ``skipped``) to ``dest``,
    encrypted to ``recipient_values``. Returns ``{path, items, skipped, files, bytes, sha256}``."""
    keys = recipients(recipient_values)
    now = time.time() if now is None else now
    manifest = {"format": FORMAT, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
                "items": {}, "files": [], "directories": []}
    members, skipped, total = [], [], 0
    for name in sorted(items):
        fileio.safe_name(name, "item")
        path = items[name]
        if not path or not os.path.lexists(path):
            skipped.append(name)
            continue
        kind, files, directories = _walk(name, os.path.abspath(path))
        manifest["items"][name] = {"kind": kind, "source": os.path.abspath(path)}
        manifest["directories"] += [{"item": name, "path": rel, "mode": "%04o" % mode} for rel, mode in directories]
        for rel, absolute, st in files:
            with open(absolute, "rb") as handle:
                data = handle.read(MAX_ARCHIVE + 1)
            total += len(data)
            if total > MAX_ARCHIVE or len(manifest["files"]) >= MAX_FILES:
                raise ControllerStateError("the controller state is larger than %d bytes or %d files; not an archive "
                                           "of keys and locks (is a bundle or cache inside %s?)" % (MAX_ARCHIVE, MAX_FILES, path))
            manifest["files"].append({"item": name, "path": rel, "mode": "%04o" % stat.S_IMODE(st.st_mode),
                                      "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
            members.append((_member(name, rel), data, stat.S_IMODE(st.st_mode)))
    if not manifest["items"]:
        raise ControllerStateError("nothing to archive: none of %s exists" % ", ".join(
            "%s (%s)" % (n, items[n]) for n in sorted(items)))
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, mode in [(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode() + b"\n", 0o600)] + members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, int(now)
            tar.addfile(info, io.BytesIO(data))
    cipher = pyrage.encrypt(plain.getvalue(), keys)
    fileio.write_atomic(dest, cipher, mode=0o600)
    return {"path": dest, "items": sorted(manifest["items"]), "skipped": skipped, "files": len(manifest["files"]),
            "bytes": total, "sha256": hashlib.sha256(cipher).hexdigest()}


def _member(item, rel):
    return "items/%s" % item + ("/" + rel if rel else "")


# ------------------------------------------------------------------------------------------- unpack
def read_archive(path, identity_path):
    """``(manifest, {member name: bytes})`` of the archive, decrypted and checked against its manifest."""
    keys = identities(identity_path)
    st, kind = fileio.file_kind(path)
    if kind != "file":
        raise ControllerStateError("%s is not a regular file" % path)
    if st.st_size > MAX_ARCHIVE * 2:
        raise ControllerStateError("%s is larger than %d bytes; not a controller backup" % (path, MAX_ARCHIVE * 2))
    with open(path, "rb") as handle:
        cipher = handle.read(MAX_ARCHIVE * 2 + 1)
    try:
        plain = pyrage.decrypt(cipher, keys)
    except pyrage.DecryptError as exc:
        raise ControllerStateError("%s cannot be decrypted with %s: not encrypted to this key, or damaged (%s)"
                                   % (path, identity_path, exc)) from None
    data = {}
    try:
        with open_tar(fileobj=io.BytesIO(plain), mode="r:") as tar:
            for info in tar:
                if not info.isfile() or info.name in data or len(data) > MAX_FILES:
                    raise ControllerStateError("%s: member %s is not a single regular file" % (path, info.name[:200]))
                data[info.name] = tar.extractfile(info).read()
    except (tarfile.TarError, MooringError) as exc:
        raise ControllerStateError("%s: not a controller backup (%s)" % (path, exc)) from None
    manifest = _manifest(path, data)
    wanted = {}
    for entry in manifest["files"]:
        member = _member(entry["item"], entry["path"])
        body = data.get(member)
        if body is None:
            raise ControllerStateError("%s: %s is in the manifest but not in the archive" % (path, member))
        if len(body) != entry["size"] or hashlib.sha256(body).hexdigest() != entry["sha256"]:
            raise ControllerStateError("%s: %s does not match its manifest entry (size or sha256)" % (path, member))
        wanted[member] = body
    extra = sorted(set(data) - set(wanted) - {MANIFEST})
    if extra:
        raise ControllerStateError("%s: %s not in the manifest" % (path, ", ".join(extra[:5])))
    return manifest, wanted


def _manifest(path, data):
    try:
        manifest = json.loads(data.get(MANIFEST, b"").decode("utf-8"))
    except ValueError:
        raise ControllerStateError("%s: no readable %s" % (path, MANIFEST)) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ControllerStateError("%s: %s is not %s" % (path, MANIFEST, FORMAT))
    items = manifest.get("items")
    if not isinstance(items, dict) or not isinstance(manifest.get("files"), list):
        raise ControllerStateError("%s: %s has no items and files" % (path, MANIFEST))
    for name, item in items.items():
        fileio.safe_name(name, "item")
        if not isinstance(item, dict) or item.get("kind") not in ITEM_KINDS:
            raise ControllerStateError("%s: item %s has no kind (file or directory)" % (path, name))
    for entry in manifest["files"]:
        rel = entry.get("path") if isinstance(entry, dict) else None
        if entry.get("item") not in items or not isinstance(rel, str) or not isinstance(entry.get("mode"), str):
            raise ControllerStateError("%s: a manifest entry names no item, path or mode" % path)
        parts = rel.split("/") if rel else []
        if (items[entry["item"]]["kind"] == "file") != (rel == "") or any(p in ("", ".", "..") for p in parts):
            raise ControllerStateError("%s: manifest path %r of %s leaves its item" % (path, rel, entry["item"]))
        if not 0 <= int(entry["mode"], 8) <= 0o777:
            raise ControllerStateError("%s: manifest mode %r of %s" % (path, entry["mode"], rel))
    for entry in manifest.get("directories") or []:
        rel = entry.get("path") if isinstance(entry, dict) else None
        if entry.get("item") not in items or items[entry["item"]]["kind"] != "directory" or not isinstance(rel, str) \
                or any(p in ("", ".", "..") for p in (rel.split("/") if rel else [])) \
                or not 0 <= int(str(entry.get("mode")), 8) <= 0o777:
            raise ControllerStateError("%s: manifest directory %r is not one of its items'" % (path, rel))
    return manifest


def unpack(path, identity_path, targets, check_mode=False):
    """Restore the archive's items to ``targets`` (``{item: path}``; every item needs one). Returns
    ``{items, files, written, unchanged}``. Refused, with nothing written, when a directory item's destination
    is not empty or a file item's destination holds other bytes."""
    manifest, members = read_archive(path, identity_path)
    missing = sorted(set(manifest["items"]) - {k for k, v in targets.items() if v})
    if missing:
        raise ControllerStateError("%s holds %s: give a destination for each" % (path, ", ".join(missing)))
    plan, problems = [], []
    for name in sorted(manifest["items"]):
        dest = os.path.abspath(targets[name])
        if manifest["items"][name]["kind"] == "directory" and os.path.lexists(dest) \
                and (not os.path.isdir(dest) or os.path.islink(dest) or os.listdir(dest)):
            problems.append("%s: %s is not empty; a restore never overwrites one (move it away first)" % (name, dest))
        for entry in (e for e in manifest["files"] if e["item"] == name):
            target = os.path.join(dest, *entry["path"].split("/")) if entry["path"] else dest
            body = members[_member(name, entry["path"])]
            if manifest["items"][name]["kind"] == "file" and os.path.lexists(target):
                if fileio.read_if_exists(target) != body or os.path.islink(target):
                    problems.append("%s: %s exists with other content; a restore never overwrites it" % (name, target))
                    continue
                plan.append((target, None, entry))
                continue
            plan.append((target, body, entry))
    if problems:
        raise ControllerStateError("restore refused", problems=["restore of %s refused, nothing written: %s" % (path, p)
                                                                for p in problems])
    written = []
    if not check_mode:
        # Parents first (sorted), each 0700 while files go in, then the recorded modes, deepest first.
        made = sorted((os.path.join(os.path.abspath(targets[d["item"]]), *d["path"].split("/")) if d["path"]
                       else os.path.abspath(targets[d["item"]]), int(d["mode"], 8)) for d in manifest.get("directories") or [])
        for directory, _mode in made:
            os.makedirs(directory, mode=0o700, exist_ok=True)
    for target, body, entry in plan:
        if body is None:
            continue
        written.append(target)
        if not check_mode:
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            fileio.write_atomic(target, body, mode=int(entry["mode"], 8))
    if not check_mode:
        for directory, mode in reversed(made):
            os.chmod(directory, mode)
    return {"items": sorted(manifest["items"]), "files": len(plan), "written": written,
            "unchanged": [t for t, b, _e in plan if b is None], "created": manifest.get("created")}
