# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile controller backups restored as a restore does (ids ``backup-``; entries.py ``restore``:
``controllerstate.unpack`` of ARCHIVE with the age IDENTITY, trusting the PEM public key SIGNER, to the TARGETS
a JSON file names): each refused with exit 1 and one line that names the problem, nothing written.

Every case's ``setup`` makes its own keys (an age identity with pyrage, the bundle signing key with
common/ed25519.py), a small controller state under ``{work}/old`` (a PKI directory with a 0700 and a 0755
directory, 0600 and 0644 files; a lock; the signing key itself) and a genuine archive of it with
``controllerstate.pack``. A hostile archive is that archive decrypted, changed and encrypted again to the
operator's public key (all age needs): forged by another key, unsigned, old (v1), with a signature over another
manifest, truncated, not age at all; or a manifest whose shape is wrong but which the trusted key signed (as a
buggy signer would), so the shape is checked behind a valid signature. The bounds: a manifest of one file more
than MAX_FILES; more members than that; exactly as many files as ``pack`` accepts (read back, refused only for a
missing destination); a forged 48 MiB manifest (refused within the harness's memory bound). Then the
destinations in the way: an item under another item's file, a destination under an existing file, two items on
one path, a symlink, none given. Two genuine restores (into missing destinations; onto an empty directory and files with the same bytes)
end with exit 0 and exactly the packed bytes and modes. The same surfaces are tested in-process in
tests/unit/plugins/plugin_utils/test_controllerstate.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile

from .harness import Case, snapshot

RESTORE = ("{work}/b.age", "{work}/operator.key", "{work}/trusted.pub", "{work}/targets.json")
REFUSED = r"restore of \S*/b\.age refused, nothing written: "
MANY = 20000  # controllerstate.MAX_FILES
PADDED = 48 << 20  # a forged manifest's bytes: a quarter of the harness's memory bound


def _libs():
    """Imported when a case is laid out, not when the corpus is collected (pyrage is the controller's)."""
    import pyrage

    from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519
    from ansible_collections.mooring.cluster.plugins.plugin_utils import controllerstate
    return pyrage, ed25519, controllerstate


def _write(path, data, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)
    os.chmod(path, mode)


def _signing_key(directory, name):
    """A fresh Ed25519 key as the bundle signing key is kept: NAME.key (0600) and NAME.pub; the key object."""
    _pyrage, ed25519, _cs = _libs()
    key = ed25519.new_private_key()
    ed25519.write_private_key(os.path.join(directory, name + ".key"), key)
    _write(os.path.join(directory, name + ".pub"), ed25519.public_pem(key))
    return key


def _identity(path):
    """A fresh age identity written to ``path`` (0600, as a restore demands); its public key (``age1...``)."""
    pyrage = _libs()[0]
    identity = pyrage.x25519.Identity.generate()
    _write(path, ("# made by the bad-input harness\n%s\n" % identity).encode(), mode=0o600)
    return str(identity.to_public())


def _state(work):
    """The old controller's state, the operator's identity, the trusted key and a genuine archive of the state at
    ``{work}/genuine.age``; what a builder needs to forge or change it."""
    old = os.path.join(work, "old")
    _write(os.path.join(old, "pki", "ca.key"), b"-----BEGIN EC PRIVATE KEY-----\nCAKEY\n", mode=0o600)
    _write(os.path.join(old, "pki", "ca.crt"), b"CERT\n")
    _write(os.path.join(old, "pki", "etcd", "members", "server.key"), bytes(range(256)) * 2, mode=0o600)
    os.chmod(os.path.join(old, "pki", "etcd", "members"), 0o700)
    os.chmod(os.path.join(old, "pki", "etcd"), 0o755)  # noqa: S103 - a directory a restore must not narrow
    os.chmod(os.path.join(old, "pki"), 0o700)
    _write(os.path.join(old, "lock.yaml"), b"digest: abc\n")
    key = _signing_key(old, "bundle-signing")
    with open(os.path.join(old, "bundle-signing.pub"), "rb") as handle:
        _write(os.path.join(work, "trusted.pub"), handle.read())
    state = {"work": work, "key": key, "recipient": _identity(os.path.join(work, "operator.key")),
             "items": {"pki": os.path.join(old, "pki"), "lock": os.path.join(old, "lock.yaml"),
                       "signing_key": os.path.join(old, "bundle-signing.key")},
             "genuine": os.path.join(work, "genuine.age")}
    _libs()[2].pack(state["items"], [state["recipient"]], state["genuine"], os.path.join(old, "bundle-signing.key"))
    return state


def _opened(state):
    """``(manifest bytes, signature, [(member, bytes)])`` of the genuine archive."""
    pyrage, _ed, controllerstate = _libs()
    with open(state["genuine"], "rb") as handle:
        plain = pyrage.decrypt(handle.read(), controllerstate.identities(os.path.join(state["work"], "operator.key")))
    with tarfile.open(fileobj=io.BytesIO(plain), mode="r:") as tar:
        found = [(info.name, tar.extractfile(info).read()) for info in tar]
    named = dict(found)
    members = [m for m in found if m[0] not in ("MANIFEST.json", "MANIFEST.json.sig")]
    return named["MANIFEST.json"], named.get("MANIFEST.json.sig"), members


def _seal(state, body, members, key=None, signature=None, unsigned=False):
    """``{work}/b.age``: MANIFEST.json ``body`` (bytes, or a dict dumped as a backup dumps it), signed with
    ``key`` (the trusted key unless said otherwise) or carrying ``signature``, then ``members``; encrypted to the
    operator's public key only."""
    pyrage, ed25519, controllerstate = _libs()
    if isinstance(body, dict):
        body = json.dumps(body, indent=1, sort_keys=True).encode() + b"\n"
    if signature is None:
        signature = ed25519.sign(key or state["key"], controllerstate.SIGNED_PREFIX + body)
    head = [("MANIFEST.json", body, 0o600)] + ([] if unsigned else [("MANIFEST.json.sig", signature, 0o600)])
    plain = controllerstate.tar_bytes(head + [(name, data, 0o600) for name, data in members])
    cipher = pyrage.encrypt(plain, [pyrage.x25519.Recipient.from_str(state["recipient"])])
    _write(os.path.join(state["work"], "b.age"), cipher)


def _targets(work, **changed):
    """The new controller's destinations under ``{work}/new`` (``None`` drops one)."""
    new = os.path.join(work, "new")
    found = {"pki": os.path.join(new, "pki"), "lock": os.path.join(new, "lock.yaml"),
             "signing_key": os.path.join(new, "cfg", "signing.key")}
    found.update({name: os.path.join(work, path) for name, path in changed.items() if path is not None})
    return {name: path for name, path in found.items() if changed.get(name, "") is not None}


def _case(name, problem, build=None, targets=None, before=None, argv=RESTORE, refused=False, **options):
    """A restore of ``{work}/b.age`` (the genuine archive unless ``build(state)`` writes another), to
    ``targets(work)`` (default :func:`_targets`), after ``before(state)``; ``problem`` is a pattern of the one
    error line (``refused``: a destination's, after the restore's own prefix)."""
    def setup(work):
        state = _state(work)
        if build is None:
            os.rename(state["genuine"], os.path.join(work, "b.age"))
        else:
            build(state)
        _write(os.path.join(work, "targets.json"), json.dumps((targets or _targets)(work)).encode())
        if before is not None:
            before(state)
    if problem is not None:  # one line, the whole of stderr
        options["stderr"] = r"\Aerror: %s(?:%s)[^\n]*\n\Z" % (REFUSED if refused else "", problem)
    return Case("backup-" + name, argv, setup=setup, entry="restore", **options)


# --------------------------------------------------------------------------------- builders
def _forged(state):
    """The forger has the operator's public key and a signing key of his own: a CA key and signing key of his."""
    work = state["work"]
    _write(os.path.join(work, "evil", "pki", "ca.key"), b"FORGED CA KEY\n", mode=0o600)
    _signing_key(os.path.join(work, "evil"), "own")
    own = os.path.join(work, "evil", "own.key")
    _libs()[2].pack({"pki": os.path.join(work, "evil", "pki"), "signing_key": own}, [state["recipient"]],
                    os.path.join(work, "b.age"), own)


def _unsigned(state):
    body, _sig, members = _opened(state)
    _seal(state, body, members, unsigned=True)


def _v1(state):
    body, _sig, members = _opened(state)
    manifest = json.loads(body)
    manifest["format"] = "mooring.controller-backup/v1"
    del manifest["signer"]
    _seal(state, manifest, members, unsigned=True)


def _other_manifest(state):
    """A genuine signature by the trusted key, of another manifest (this one, dated otherwise), on this one."""
    _pyrage, ed25519, controllerstate = _libs()
    body, _sig, members = _opened(state)
    other = json.loads(body)
    other["created"] = "2031-01-01T00:00:00Z"
    other = json.dumps(other, indent=1, sort_keys=True).encode() + b"\n"
    _seal(state, body, members, signature=ed25519.sign(state["key"], controllerstate.SIGNED_PREFIX + other))


def _truncated(state):
    with open(state["genuine"], "rb") as handle:
        cipher = handle.read()
    _write(os.path.join(state["work"], "b.age"), cipher[:len(cipher) * 2 // 3])


def _plain_tar(state):
    """The archive as it is before age: a tar, its manifest signed; never encrypted."""
    body, sig, members = _opened(state)
    plain = _libs()[2].tar_bytes([("MANIFEST.json", body, 0o600), ("MANIFEST.json.sig", sig, 0o600)]
                                 + [(n, d, 0o600) for n, d in members])
    _write(os.path.join(state["work"], "b.age"), plain)


def _wrong_identity(state):
    os.rename(state["genuine"], os.path.join(state["work"], "b.age"))
    _identity(os.path.join(state["work"], "operator.key"))  # the same file, another key


def _resigned(change, add=()):
    """The genuine manifest changed by ``change(manifest)``, ``add`` members appended, signed by the trusted key."""
    def build(state):
        body, _sig, members = _opened(state)
        manifest = json.loads(body)
        change(manifest)
        _seal(state, manifest, members + list(add))
    return build


def _pki_file(manifest, name="ca.key"):
    """The index of the pki item's entry for ``name`` in ``files``."""
    return next(i for i, e in enumerate(manifest["files"]) if e["item"] == "pki" and e["path"] == name)


def _set_entry(key, value):
    def change(manifest):
        manifest["files"][_pki_file(manifest)][key] = value
    return _resigned(change)


def _replace_entry(value):
    def change(manifest):
        manifest["files"][_pki_file(manifest)] = value
    return _resigned(change)


def _entry(path, data, item="pki"):
    return {"item": item, "path": path, "mode": "0600", "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _file_then_under_it(manifest):
    manifest["files"] += [_entry("a", b"A\n"), _entry("a/b", b"B\n")]


def _many_files(total, members):
    """Empty files in the pki item up to ``total`` files, listed in the manifest; their members only when
    ``members``."""
    def build(state):
        body, _sig, old = _opened(state)
        manifest = json.loads(body)
        names = ["many/f%05d" % i for i in range(total - len(manifest["files"]))]
        manifest["files"] += [_entry(n, b"") for n in names]
        _seal(state, manifest, old + ([("items/pki/" + n, b"") for n in names] if members else []))
    return build


def _many_members(state):
    """The genuine manifest and signature, then more members than a backup may hold, none in the manifest."""
    body, sig, members = _opened(state)
    _seal(state, body, members + [("items/pki/x%05d" % i, b"") for i in range(MANY + 1)], signature=sig)


def _forged_padded(state):
    """A forger's manifest padded to ``PADDED`` bytes (under the archive bound, MAX_ARCHIVE), signed by his key: it
    is refused for its size, as soon as its tar header is read, before the signature is checked."""
    _pyrage, ed25519, controllerstate = _libs()
    body, _sig, members = _opened(state)
    manifest = json.loads(body)
    manifest["pad"] = "p" * PADDED
    forger = ed25519.new_private_key()
    manifest["signer"] = ed25519.key_fingerprint(ed25519.public_raw(forger))
    _seal(state, manifest, members, key=forger)


# ------------------------------------------------------------------------------ destinations
def _existing_file(state):
    _write(os.path.join(state["work"], "file"), b"x\n")


def _outside_symlink(state):
    """{work}/new/pki a symlink to the tree's empty ``outside/`` (a restore through it would write there)."""
    os.makedirs(os.path.join(state["work"], "new"))
    os.symlink(os.path.join(os.path.dirname(state["work"]), "outside"), os.path.join(state["work"], "new", "pki"))


# ------------------------------------------------------------------------------- round trips
def _tree(root):
    """What is at ``root`` as the harness snapshots it (kind, mode, sha256 by relative path; root's own mode as
    ``.``), or of root itself (a file) as ``""``."""
    if not os.path.isdir(root):
        return {"": snapshot(os.path.dirname(root))[os.path.basename(root)]}
    return dict(snapshot(root), **{".": ("dir", os.lstat(root).st_mode & 0o7777)})


def _same_as_packed(written):
    """A check: every item restored with the packed bytes and modes, ``written`` files written (stdout)."""
    def check(work, stdout):
        targets = _targets(work)
        old = os.path.join(work, "old")
        packed = {"pki": os.path.join(old, "pki"), "lock": os.path.join(old, "lock.yaml"),
                  "signing_key": os.path.join(old, "bundle-signing.key")}
        for name, source in packed.items():
            assert _tree(targets[name]) == _tree(source), "%s: %r != %r" % (name, _tree(targets[name]), _tree(source))
        assert len(json.loads(stdout)) == written, stdout
    return check


def _same_bytes_other_mode(state):
    """An empty pki directory (0755: the packed 0700 comes back), the lock with its bytes and another mode, the
    signing key as it was: the lock's mode is restored, the signing key left alone."""
    targets = _targets(state["work"])
    os.makedirs(targets["pki"], mode=0o755)
    os.chmod(targets["pki"], 0o755)  # noqa: S103 - wider than packed: the restore narrows it
    with open(state["items"]["lock"], "rb") as handle:
        _write(targets["lock"], handle.read(), mode=0o600)
    with open(state["items"]["signing_key"], "rb") as handle:
        _write(targets["signing_key"], handle.read(), mode=0o600)


# ------------------------------------------------------------------------------------ cases
CASES = [
    # who made it
    _case("forged-with-recipient-public-key", r"\S*/b\.age: the signature of MANIFEST\.json verifies with none of the "
          r"trusted signers \(SHA256:\S+\); it names 'SHA256:\S+' \(unverified\), which is not trusted; refusing it",
          build=_forged, absent=["FORGED CA KEY"]),
    _case("unsigned", r"\S*/b\.age: unsigned \(no MANIFEST\.json\.sig after MANIFEST\.json\); refusing it", build=_unsigned),
    _case("v1-unsigned-format", r"\S*/b\.age: a mooring\.controller-backup/v1 backup is not signed, so nothing tells "
          r"it from one forged with the recipient's public key; a restore refuses it", build=_v1),
    _case("signature-of-another-manifest", r"\S*/b\.age: the signature of MANIFEST\.json verifies with none of the "
          r"trusted signers .*it names SHA256:\S+, a trusted key: changed after it was signed, or damaged",
          build=_other_manifest),
    # what it is
    _case("truncated", r"\S*/b\.age cannot be decrypted with \S*/operator\.key: not encrypted to this key, or "
          r"damaged \(", build=_truncated),
    _case("not-age-plain-tar", r"\S*/b\.age cannot be decrypted with \S*/operator\.key: .*damaged", build=_plain_tar),
    _case("wrong-identity", r"\S*/b\.age cannot be decrypted with \S*/operator\.key: not encrypted to this key",
          build=_wrong_identity),
    _case("signer-is-private-key", r"trusted signer \S*/old/bundle-signing\.key is a private key: give its public key",
          argv=RESTORE[:2] + ("{work}/old/bundle-signing.key",) + RESTORE[3:],
          absent=["PRIVATE KEY-----"]),
    # its manifest, signed by the trusted key
    _case("mode-not-octal", r"\S*/b\.age: MANIFEST\.json: files\[\d+\]\.mode: must be an octal mode from 0000 to "
          r"0777 \(a string\), not 'rw-r--r--'", build=_set_entry("mode", "rw-r--r--")),
    _case("mode-setuid", r"\S*/b\.age: MANIFEST\.json: files\[\d+\]\.mode: must be an octal mode from 0000 to 0777 "
          r"\(a string\), not '4755'", build=_set_entry("mode", "4755")),
    _case("entry-not-mapping", r"\S*/b\.age: MANIFEST\.json: files\[\d+\]: must be a mapping, not a list",
          build=_replace_entry(["pki", "ca.key", "0600"])),
    _case("path-dotdot", r"\S*/b\.age: MANIFEST\.json: files\[\d+\]\.path: must be a relative path inside its item "
          r".*not '\.\./\.\./\.\./outside/x'", build=_set_entry("path", "../../../outside/x")),
    _case("path-absolute", r"\S*/b\.age: MANIFEST\.json: files\[\d+\]\.path: must be a relative path inside its item "
          r".*not '/etc/cron\.d/x'", build=_set_entry("path", "/etc/cron.d/x")),
    _case("file-then-file-under-it", r"pki: \S*/new/pki/a/b is under \S*/new/pki/a, which item pki restores as a "
          r"file", build=_resigned(_file_then_under_it, [("items/pki/a", b"A\n"), ("items/pki/a/b", b"B\n")]),
          refused=True),
    _case("manifest-too-many-files", r"\S*/b\.age: MANIFEST\.json: files: must list at most %d files, not %d"
          % (MANY, MANY + 1), build=_many_files(MANY + 1, members=False)),
    _case("too-many-members", r"\S*/b\.age: not a controller backup \(more than %d members \(%d files, MANIFEST\.json "
          r"and its signature\)\)" % (MANY + 2, MANY), build=_many_members),
    _case("forged-48MiB-manifest", r"\S*/b\.age: not a controller backup \(member 'MANIFEST\.json' is 5\d{7} bytes, more "
          r"than a manifest's 16777216\)", build=_forged_padded),
    # At the bound: as many files as pack() accepts (MAX_FILES) read back, to be refused only for the missing
    # destination.
    _case("as-many-files-as-pack-allows", r"\S*/b\.age holds lock, pki, signing_key: give a destination for each",
          build=_many_files(MANY, members=True), targets=lambda work: {}),
    # the destinations
    _case("item-under-another-items-file", r"signing_key: \S*/new/a/b is under \S*/new/a, which item lock restores "
          r"as a file", targets=lambda work: _targets(work, lock="new/a", signing_key="new/a/b"), refused=True),
    _case("destination-under-existing-file", r"lock: \S*/file/lock\.yaml cannot be made: \S*/work/file is not a "
          r"directory", targets=lambda work: _targets(work, lock="file/lock.yaml"), before=_existing_file,
          refused=True),
    _case("two-items-one-path", r"signing_key: \S*/new/same is also a file of lock with other content or mode",
          targets=lambda work: _targets(work, lock="new/same", signing_key="new/same"), refused=True),
    _case("symlinked-target", r"pki: \S*/new/pki is a symlink; a restore never writes through one",
          before=_outside_symlink, refused=True),
    _case("missing-destination", r"\S*/b\.age holds signing_key: give a destination for each",
          targets=lambda work: _targets(work, signing_key=None)),
    # genuine
    _case("round-trip-into-missing-destinations", None, exit=(0,), writes=["{work}/new"], stderr=r"\A\Z",
          check=_same_as_packed(written=5)),
    _case("round-trip-onto-same-bytes", None, exit=(0,), writes=["{work}/new"], stderr=r"\A\Z",
          before=_same_bytes_other_mode, check=_same_as_packed(written=4)),
]
