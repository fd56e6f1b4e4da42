# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the controller's own state in one signed, encrypted archive, and back.

What makes the cluster's trust lives on the controller: the PKI directory (the CAs' and the service-account
private keys), the lock, the bundle signing key and the run reports. :func:`pack` puts them - as named items,
each a file or a directory - into one tar: ``MANIFEST.json`` first (the format, the signer's fingerprint, every
file's item, path, mode, size and sha256, every directory's mode), then ``MANIFEST.json.sig``, the Ed25519
signature of :data:`SIGNED_PREFIX` + ``MANIFEST.json``'s bytes by the controller's bundle signing key
(``common/ed25519.py``), then the files. The tar is encrypted with age (pyrage) to one or more recipients: age
X25519 public keys (``age1...``, from ``age-keygen``) or SSH public keys (``ssh-ed25519 ...``). Nothing
unencrypted is written.

age only hides the archive: anyone with a recipient's public key can make one. The signature says who made it.
It covers the whole plaintext that a restore writes - the manifest holds every file's size and sha256 and the
restore refuses a member the manifest does not list - so it need not cover the recipients or the ciphertext:
re-encrypting a genuine archive to another key changes neither what is restored nor who signed it.

:func:`unpack` takes the trusted signers' public keys (never the archive's own ``signing_pub``), decrypts with an
identity file, verifies the signature before it reads the manifest, checks the manifest's shape (one line naming
the wrong entry), every member against it (no extra, missing, changed, linked or special member; no path that
leaves its item) and every destination (a directory item into a missing or empty directory, a file item onto a
missing file or one with exactly its bytes, no symlink, no item under another item's file, no two items writing
one path differently) before it writes anything: a refused restore leaves every destination as it was.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
import tarfile
import time

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519, fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, PathEscapeError, excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field, type_name
from ansible_collections.mooring.cluster.plugins.module_utils.common.tarsafe import open_tar
from ansible_collections.mooring.cluster.plugins.plugin_utils.controllerkeys import (
    ControllerStateError,
    identities,
    pyrage,
    recipients,
    regular_file,
    signing_key,
    trusted_signers,
)

FORMAT = "mooring.controller-backup/v2"
# v1 (mooring.cluster 0.2.0) was encrypted but not signed: anyone holding a recipient's public key could make one.
UNSIGNED_FORMATS = ("mooring.controller-backup/v1",)
MANIFEST = "MANIFEST.json"
SIGNATURE = "MANIFEST.json.sig"
# What is signed: this line, then MANIFEST.json's bytes. The bundle signing key also signs bundle.json (whose bytes
# begin with "{"), so a backup's signature never verifies as a bundle's, nor a bundle's as a backup's.
SIGNED_PREFIX = b"mooring.controller-backup/v2 MANIFEST.json\n"
# The controller's state is keys, certificates, locks and reports: megabytes. Anything far larger is not one.
MAX_ARCHIVE = 64 * 1024 * 1024
MAX_FILES = 20000
# An archive of MAX_ARCHIVE bytes of files: age adds 16 bytes per 64 KiB, tar a header and padding per member.
MAX_CIPHER = MAX_ARCHIVE + (MAX_FILES + 2) * 1024 + 1024 * 1024
# 20,000 files and their directories take about 5 MB of manifest.
MAX_MANIFEST = 16 * 1024 * 1024
MAX_NAME_BYTES = 255
ITEM_KINDS = ("file", "directory")
_MODE = re.compile(r"[0-7]{3,4}\Z")
_FINGERPRINT = re.compile(r"SHA256:[A-Za-z0-9+/]{43}\Z")


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


def pack(items, recipient_values, dest, signing_key_path, now=None):
    """Archive ``items`` (``{name: path}``; a missing path is skipped and named in ``skipped``) to ``dest``, signed
    with the Ed25519 key at ``signing_key_path`` and encrypted to ``recipient_values``.
    Returns ``{path, items, skipped, files, bytes, sha256, signer}``."""
    keys = recipients(recipient_values)
    key, signer = signing_key(signing_key_path)
    now = time.time() if now is None else now
    manifest = {"format": FORMAT, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)), "signer": signer,
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
                data = handle.read(min(st.st_size, MAX_ARCHIVE) + 1)  # read(n) reserves n bytes
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
    body = json.dumps(manifest, indent=1, sort_keys=True).encode() + b"\n"
    signature = ed25519.sign(key, SIGNED_PREFIX + body)
    cipher = pyrage.encrypt(tar_bytes([(MANIFEST, body, 0o600), (SIGNATURE, signature, 0o600)] + members, now), keys)
    fileio.write_atomic(dest, cipher, mode=0o600)
    return {"path": dest, "items": sorted(manifest["items"]), "skipped": skipped, "files": len(manifest["files"]),
            "bytes": total, "sha256": hashlib.sha256(cipher).hexdigest(), "signer": signer}


def tar_bytes(members, now=0):
    """The plain tar of ``members`` (``[(name, bytes, mode)]``, in that order)."""
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, mode in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, int(now)
            tar.addfile(info, io.BytesIO(data))
    return plain.getvalue()


def _member(item, rel):
    return "items/%s" % item + ("/" + rel if rel else "")


# ------------------------------------------------------------------------------------------- unpack
class BackupShape(Shape):
    """The shape of a backup's MANIFEST.json, field by field (common/shape.py):
    ``ARCHIVE: MANIFEST.json: PATH: must be EXPECTED, not FOUND``."""

    error = ControllerStateError

    def __init__(self, archive):
        super().__init__("%s: %s" % (archive, MANIFEST))

    def mode(self, value, path):
        """An octal permission string, at most 0777 (no setuid, setgid or sticky bit): the mode as an int."""
        what = "an octal mode from 0000 to 0777 (a string)"
        self.pattern(value, path, _MODE, what)
        if int(value, 8) > 0o777:
            self.expected(path, what, value, show_value=True)
        return int(value, 8)

    def relative(self, value, path):
        """A path inside its item: ``""`` (the item itself) or names joined by ``/`` (no ``.``, ``..``, NUL or empty
        name, each at most 255 bytes, each one a file name this system can write)."""
        self.text(value, path, empty=True, limit=4096)
        for part in value.split("/") if value else ():
            try:
                size = len(part.encode("utf-8", "surrogateescape"))
            except UnicodeEncodeError:
                size = None
            if part in ("", ".", "..") or "\x00" in part or size is None or size > MAX_NAME_BYTES:
                self.expected(path, "a relative path inside its item (names joined by '/'; no '', '.', '..' or NUL; "
                              "each at most %d bytes)" % MAX_NAME_BYTES, value, show_value=True)
        return value

    def item_of(self, entry, path, items, kinds=ITEM_KINDS):
        name = entry.get("item")
        if not isinstance(name, str) or name not in items or items[name]["kind"] not in kinds:
            self.expected(path, "the name of one of the %sitems (%s)" % (
                "directory " if kinds == ("directory",) else "",
                ", ".join(n for n in sorted(items) if items[n]["kind"] in kinds) or "none"), name, show_value=True)
        return name

    def manifest(self, manifest):
        if not isinstance(manifest, dict):
            self.fail("", "must be a JSON object, not %s" % type_name(manifest))
        self.keys(manifest, "", required=("format", "created", "signer", "items", "files"),
                  allowed=("directories",))
        if manifest["format"] != FORMAT:
            self.expected("format", FORMAT, manifest["format"], show_value=True)
        self.text(manifest["created"], "created", limit=64)
        self.pattern(manifest["signer"], "signer", _FINGERPRINT, "a key fingerprint (SHA256:...)")
        items = self.mapping(manifest["items"], "items")
        if not items:
            self.fail("items", "must name at least one item")
        for name in sorted(items):
            where = field("items", name)
            try:
                fileio.safe_name(name, "item")
            except PathEscapeError:
                self.expected(where, "a safe item name (letters, digits and . _ - + ~ : @)", name, show_value=True)
            self.keys(items[name], where, required=("kind",), allowed=("source",))
            self.one_of(items[name]["kind"], where + ".kind", ITEM_KINDS)
            self.text(items[name].get("source"), where + ".source", optional=True, limit=4096)
        seen = set()
        files = self.listing(manifest["files"], "files")
        if len(files) > MAX_FILES:
            self.fail("files", "must list at most %d files, not %d" % (MAX_FILES, len(files)))
        for i, entry in enumerate(files):
            where = field("files", i)
            self.keys(entry, where, required=("item", "path", "mode", "size", "sha256"), allowed=())
            name = self.item_of(entry, where + ".item", items)
            rel = self.relative(entry["path"], where + ".path")
            if (items[name]["kind"] == "file") != (rel == ""):
                self.fail(where + ".path", "must be %s, not %s" % (
                    "'' (item %s is a file)" % name if rel else "a file inside directory item %s" % name, excerpt(rel)))
            if (name, rel) in seen:
                self.fail(where + ".path", "%s of item %s is listed twice" % (excerpt(rel), name))
            seen.add((name, rel))
            self.mode(entry["mode"], where + ".mode")
            self.count(entry["size"], where + ".size", what="a size (a whole number >= 0)")
            self.sha256(entry["sha256"], where + ".sha256")
        for name in sorted(items):
            if items[name]["kind"] == "file" and (name, "") not in seen:
                self.fail(field("items", name), "is a file item that no entry of files holds")
        directories = self.listing(manifest.get("directories"), "directories", optional=True)
        if len(directories) > MAX_FILES:
            self.fail("directories", "must list at most %d directories, not %d" % (MAX_FILES, len(directories)))
        for i, entry in enumerate(directories):
            where = field("directories", i)
            self.keys(entry, where, required=("item", "path", "mode"), allowed=())
            name = self.item_of(entry, where + ".item", items, ("directory",))
            rel = self.relative(entry["path"], where + ".path")
            if (name, rel) in seen:
                self.fail(where + ".path", "%s of item %s is listed twice (or is also a file)" % (excerpt(rel), name))
            seen.add((name, rel))
            self.mode(entry["mode"], where + ".mode")
        return manifest


def read_archive(path, identity_path, trusted):
    """``(manifest, {member name: bytes}, signer)`` of the archive: decrypted, its signature verified with one of
    ``trusted`` (:func:`trusted_signers`), then checked against its manifest."""
    keys = identities(identity_path)
    st = regular_file(path)
    if st.st_size > MAX_CIPHER:
        raise ControllerStateError("%s is larger than %d bytes; not a controller backup" % (path, MAX_CIPHER))
    with open(path, "rb") as handle:
        cipher = handle.read(st.st_size + 1)  # never more than the file holds: read(n) reserves n bytes
    try:
        plain = pyrage.decrypt(cipher, keys)
    except pyrage.DecryptError as exc:
        raise ControllerStateError("%s cannot be decrypted with %s: not encrypted to this key, or damaged (%s)"
                                   % (path, identity_path, exc)) from None
    del cipher
    data, signer = {}, None
    for name, body in _members(path, plain):
        if name in data:
            raise ControllerStateError("%s: not a controller backup (member %s twice)" % (path, excerpt(name, 200)))
        data[name] = body
        if len(data) == 2:  # the manifest and its signature come first: verified before any item is read
            signer = _verify(path, data.get(MANIFEST), data.get(SIGNATURE), trusted)
    if signer is None:
        signer = _verify(path, data.get(MANIFEST), data.get(SIGNATURE), trusted)
    manifest = _manifest(path, data[MANIFEST])
    if manifest["signer"] != signer:
        raise ControllerStateError("%s: %s names signer %s but was signed by %s; refusing it"
                                   % (path, MANIFEST, manifest["signer"], signer))
    wanted = {}
    for entry in manifest["files"]:
        member = _member(entry["item"], entry["path"])
        body = data.get(member)
        if body is None:
            raise ControllerStateError("%s: %s is in the manifest but not in the archive" % (path, member))
        if len(body) != entry["size"] or hashlib.sha256(body).hexdigest() != entry["sha256"]:
            raise ControllerStateError("%s: %s does not match its manifest entry (size or sha256)" % (path, member))
        wanted[member] = body
    extra = sorted(set(data) - set(wanted) - {MANIFEST, SIGNATURE})
    if extra:
        raise ControllerStateError("%s: %s not in the manifest" % (path, ", ".join(excerpt(e, 100) for e in extra[:5])))
    return manifest, wanted, signer


def _members(path, plain):
    """``(name, bytes)`` of each member of the decrypted tar, in order. Refused: a member that is not a regular file,
    more members than :func:`pack` writes, a first or second member (the manifest, its signature) over
    :data:`MAX_MANIFEST` bytes."""
    try:
        with open_tar(fileobj=io.BytesIO(plain), mode="r:") as tar:
            for count, info in enumerate(tar):
                if count >= MAX_FILES + 2:
                    raise ControllerStateError("more than %d members (%d files, %s and its signature)"
                                               % (MAX_FILES + 2, MAX_FILES, MANIFEST))
                if not info.isfile():
                    raise ControllerStateError("member %s is not a regular file" % excerpt(info.name, 200))
                if count < 2 and info.size > MAX_MANIFEST:
                    raise ControllerStateError("member %s is %d bytes, more than a manifest's %d"
                                               % (excerpt(info.name, 200), info.size, MAX_MANIFEST))
                yield info.name, tar.extractfile(info).read()
    except (tarfile.TarError, MooringError) as exc:
        raise ControllerStateError("%s: not a controller backup (%s)" % (path, exc)) from None


def _claimed(body, key):
    """What the unverified manifest says of ``key`` (a short string), for an error message only."""
    try:
        value = json.loads(body.decode("utf-8")).get(key)
    except (ValueError, RecursionError, AttributeError):
        return None
    return value if isinstance(value, str) and len(value) <= 80 else None


def _verify(path, body, signature, trusted):
    """The fingerprint of the trusted key whose signature of ``SIGNED_PREFIX + body`` is ``signature``; else refused."""
    if body is None:
        raise ControllerStateError("%s: no %s; not a controller backup" % (path, MANIFEST))
    if signature is None:
        fmt = _claimed(body, "format")
        if fmt in UNSIGNED_FORMATS:
            raise ControllerStateError(
                "%s: a %s backup is not signed, so nothing tells it from one forged with the recipient's public key; "
                "a restore refuses it: make a new backup with this version on the old controller, or extract it by hand "
                "with age if you trust it (docs/controller-backup.md)" % (path, fmt))
        raise ControllerStateError("%s: unsigned (no %s after %s); refusing it" % (path, SIGNATURE, MANIFEST))
    if len(signature) != ed25519.SIGNATURE_SIZE:
        raise ControllerStateError("%s: %s is %d bytes, not a %d-byte Ed25519 signature; refusing it"
                                   % (path, SIGNATURE, len(signature), ed25519.SIGNATURE_SIZE))
    for fingerprint in sorted(trusted):
        if ed25519.verify(trusted[fingerprint], SIGNED_PREFIX + body, signature):
            return fingerprint
    claimed = _claimed(body, "signer")
    if claimed in trusted:
        why = "; it names %s, a trusted key: changed after it was signed, or damaged" % claimed
    else:
        why = "; it names %s (unverified), which is not trusted" % excerpt(claimed) if claimed else ""
    raise ControllerStateError("%s: the signature of %s verifies with none of the trusted signers (%s)%s; refusing it"
                               % (path, MANIFEST, ", ".join(sorted(trusted)), why))


def _manifest(path, body):
    try:
        manifest = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError):
        raise ControllerStateError("%s: %s is not JSON" % (path, MANIFEST)) from None
    return BackupShape(path).manifest(manifest)


def unpack(path, identity_path, targets, signers, check_mode=False):
    """Restore the archive's items to ``targets`` (``{item: path}``; every item needs one), the archive signed by
    one of ``signers`` (:func:`trusted_signers`' values). Returns ``{items, files, written, unchanged, created,
    signer}``. Refused, with nothing written, when a destination is in the way (see :func:`plan`)."""
    trusted = trusted_signers(signers)
    manifest, members, signer = read_archive(path, identity_path, trusted)
    missing = sorted(set(manifest["items"]) - {k for k, v in targets.items() if v})
    if missing:
        raise ControllerStateError("%s holds %s: give a destination for each" % (path, ", ".join(missing)))
    files, directories, problems = plan(manifest, members, {n: os.path.abspath(targets[n]) for n in manifest["items"]})
    if problems:
        raise ControllerStateError("restore refused", problems=["restore of %s refused, nothing written: %s" % (path, p)
                                                                for p in problems])
    writes = [(target, body, mode) for target, (_item, body, mode, same) in sorted(files.items()) if not same]
    if not check_mode:
        # Directories first (sorted: parents first), each 0700 while files go in, then their modes, deepest first.
        for directory in sorted(directories):
            os.makedirs(directory, mode=0o700, exist_ok=True)
        for target, body, mode in writes:
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            fileio.write_atomic(target, body, mode=mode)
        for directory in sorted(directories, reverse=True):
            os.chmod(directory, directories[directory][1])
    return {"items": sorted(manifest["items"]), "files": len(files), "written": [w[0] for w in writes],
            "unchanged": sorted(t for t, f in files.items() if f[3]), "created": manifest["created"], "signer": signer}


def plan(manifest, members, dests):
    """``(files, directories, problems)``: ``files`` ``{target: (item, body, mode, unchanged)}``, ``directories``
    ``{path: (item, mode)}`` and one line per destination in the way. Nothing is written; every check a write
    could fail is here: a symlink at a destination, a directory item's destination that is not a missing or empty
    directory, a file item's destination with other bytes, an item under another item's file or under an existing
    file, two items writing one path differently, a parent that cannot be written in."""
    items, problems = manifest["items"], []
    files, directories = {}, {}
    for name in sorted(items):
        dest = dests[name]
        if os.path.islink(dest):
            problems.append("%s: %s is a symlink; a restore never writes through one (give the real path)" % (name, dest))
            continue
        if items[name]["kind"] == "directory" and os.path.lexists(dest):
            if not os.path.isdir(dest):
                problems.append("%s: %s is not a directory; a restore never replaces it (move it away first)" % (name, dest))
                continue
            try:
                inside = os.listdir(dest)
            except OSError as exc:
                problems.append("%s: %s cannot be read (%s)" % (name, dest, exc.strerror))
                continue
            if inside:
                problems.append("%s: %s is not empty; a restore never overwrites one (move it away first)" % (name, dest))
                continue
        for entry in manifest.get("directories") or ():
            if entry["item"] == name:
                target = os.path.join(dest, *entry["path"].split("/")) if entry["path"] else dest
                known = directories.setdefault(target, (name, int(entry["mode"], 8)))
                if known[1] != int(entry["mode"], 8):
                    problems.append("%s: %s is also a directory of %s with another mode" % (name, target, known[0]))
        for entry in (e for e in manifest["files"] if e["item"] == name):
            target = os.path.join(dest, *entry["path"].split("/")) if entry["path"] else dest
            body, mode = members[_member(name, entry["path"])], int(entry["mode"], 8)
            known = files.get(target)
            if known is not None:
                if known[1:3] != (body, mode):
                    problems.append("%s: %s is also a file of %s with other content or mode" % (name, target, known[0]))
                continue
            problem, same = _file_problem(target, body, mode)
            if problem:
                problems.append("%s: %s" % (name, problem))
            files[target] = (name, body, mode, same)
    for target in sorted(set(files) & set(directories)):
        problems.append("%s: %s is a file of %s and a directory of %s" % (
            files[target][0], target, files[target][0], directories[target][0]))
    problems += _ancestor_problems(files, directories, dests)
    return files, directories, problems


def _file_problem(target, body, mode):
    """``(problem or None, unchanged)`` of writing ``body`` at ``target``: an existing regular file with exactly
    these bytes and mode is left alone; with these bytes and another mode it is rewritten (its mode restored)."""
    if not os.path.lexists(target):
        return None, False
    if os.path.islink(target):
        return "%s is a symlink; a restore never writes through one" % target, False
    st = os.lstat(target)
    if not stat.S_ISREG(st.st_mode):
        return "%s exists and is not a regular file; a restore never replaces it" % target, False
    if st.st_size != len(body) or fileio.read_if_exists(target) != body:
        return "%s exists with other content; a restore never overwrites it" % target, False
    return None, stat.S_IMODE(st.st_mode) == mode


def _ancestor_problems(files, directories, dests):
    """No planned path under a planned file; the nearest existing parent of each item's destination (an existing
    directory item's own) a directory this process can write in."""
    problems, owner, named = [], {t: f[0] for t, f in files.items()}, set()
    for path in sorted(set(files) | set(directories)):
        item = (files.get(path) or directories[path])[0]
        parent = os.path.dirname(path)
        while item not in named and parent != os.path.dirname(parent):
            if parent in owner:
                problems.append("%s: %s is under %s, which item %s restores as a file" % (item, path, parent, owner[parent]))
                named.add(item)  # its first path only: the others are under it
            parent = os.path.dirname(parent)
    for name in sorted(dests):
        dest = dests[name]
        if dest in directories and os.path.isdir(dest) and not os.path.islink(dest):
            # An existing empty directory item: files go in it and its mode is set (chmod needs its owner).
            if not os.access(dest, os.W_OK | os.X_OK) or os.geteuid() not in (0, os.stat(dest).st_uid):
                problems.append("%s: %s is not writable by this user, or not its own (its mode is restored)" % (name, dest))
            continue
        parent = os.path.dirname(dest)
        while not os.path.lexists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            problems.append("%s: %s cannot be made: %s is not a directory" % (name, dest, parent))
        elif not os.access(parent, os.W_OK | os.X_OK):
            problems.append("%s: %s cannot be made: %s is not writable by this user" % (name, dest, parent))
    return problems
