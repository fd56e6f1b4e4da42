# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller backup: real age encryption (pyrage) and real Ed25519 signatures of real files, restored into
empty directories; forged, unsigned and hostile archives refused with one line and nothing written."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519
from ansible_collections.mooring.cluster.plugins.plugin_utils import controllerstate
from ansible_collections.mooring.cluster.plugins.plugin_utils.controllerstate import MANIFEST, SIGNATURE, SIGNED_PREFIX, ControllerStateError

pyrage = pytest.importorskip("pyrage")
pytest.importorskip("cryptography")


def _tree(root):
    """{relative path: (bytes, mode)} of every file under root (or of root itself when it is a file)."""
    if os.path.isfile(root):
        with open(root, "rb") as handle:
            return {"": (handle.read(), os.stat(root).st_mode & 0o777)}
    found = {}
    for here, _dirs, names in os.walk(root):
        found[os.path.relpath(here, root) + "/"] = (None, os.stat(here).st_mode & 0o777)
        for name in names:
            path = os.path.join(here, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = (handle.read(), os.stat(path).st_mode & 0o777)
    return found


def _snapshot(root):
    """Everything under root as lstat sees it: {path: (kind, bytes or link target, mode)}; links not followed."""
    found = {}
    for here, dirs, names in os.walk(root):
        for name in dirs + names:
            path = os.path.join(here, name)
            st = os.lstat(path)
            if os.path.islink(path):
                found[path] = ("link", os.readlink(path), None)
            elif os.path.isdir(path):
                found[path] = ("dir", None, st.st_mode & 0o7777)
            else:
                with open(path, "rb") as handle:
                    found[path] = ("file", handle.read(), st.st_mode & 0o7777)
    return found


def _key_pair(directory, name):
    """A real Ed25519 key pair as the bundle signing key is kept: NAME.key (0600) and NAME.pub."""
    key = ed25519.new_private_key()
    ed25519.write_private_key(str(directory / (name + ".key")), key)
    (directory / (name + ".pub")).write_bytes(ed25519.public_pem(key))
    return key, str(directory / (name + ".key")), str(directory / (name + ".pub"))


@pytest.fixture()
def state(tmp_path):
    pki = tmp_path / "old" / "pki"
    (pki / "etcd" / "members" / "etcd-1").mkdir(parents=True)
    os.chmod(pki, 0o700)  # and etcd/ stays 0755: both must come back as they were
    os.chmod(pki / "etcd" / "members", 0o700)  # as mooring's PKI has it; a restore must not widen it
    (pki / "ca.key").write_bytes(b"-----BEGIN EC PRIVATE KEY-----\nCAKEY\n")
    (pki / "ca.key").chmod(0o600)
    (pki / "ca.crt").write_bytes(b"CERT\n")
    (pki / "etcd" / "members" / "etcd-1" / "server.key").write_bytes(os.urandom(300))
    (pki / "etcd" / "members" / "etcd-1" / "server.key").chmod(0o600)
    lock = tmp_path / "old" / "installer.lock.yaml"
    lock.write_text("digest: abc\n")
    key, key_path, pub_path = _key_pair(tmp_path / "old", "bundle-signing")
    identity = pyrage.x25519.Identity.generate()
    keyfile = tmp_path / "operator.key"
    keyfile.write_text("# created: now\n%s\n" % identity)
    keyfile.chmod(0o600)
    items = {"pki": str(pki), "lock": str(lock), "signing_key": key_path, "reports": str(tmp_path / "old" / "none")}
    return {"items": items, "recipient": str(identity.to_public()), "identity": str(keyfile), "tmp": tmp_path,
            "key": key, "key_path": key_path, "pub": pub_path}


@pytest.fixture()
def archive(state):
    path = str(state["tmp"] / "backup.age")
    controllerstate.pack(state["items"], [state["recipient"]], path, state["key_path"])
    return path


def _new_targets(tmp_path, name="new"):
    base = tmp_path / name
    return {"pki": str(base / "pki"), "lock": str(base / "lock.yaml"), "signing_key": str(base / "cfg" / "signing.key")}


def _open(state, path):
    """(manifest bytes, signature, [(member, bytes)]) of an archive, decrypted with the operator's identity."""
    with open(path, "rb") as handle:
        plain = pyrage.decrypt(handle.read(), controllerstate.identities(state["identity"]))
    members = []
    with tarfile.open(fileobj=io.BytesIO(plain)) as tar:
        for info in tar:
            members.append((info.name, tar.extractfile(info).read()))
    found = dict(members)
    return found[MANIFEST], found.get(SIGNATURE), [m for m in members if m[0] not in (MANIFEST, SIGNATURE)]


def _seal(state, path, body, members, key=None, signature=None, unsigned=False):
    """Encrypt a hand-made archive to the operator's public key - all a forger needs: MANIFEST.json ``body`` (bytes,
    or a dict dumped as the backup does), signed with ``key`` (default: the trusted key) unless ``signature`` or
    ``unsigned`` says otherwise, then ``members``."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body, indent=1, sort_keys=True).encode() + b"\n"
    if signature is None:
        signature = ed25519.sign(key or state["key"], SIGNED_PREFIX + body)
    entries = [(MANIFEST, body, 0o600)] + ([] if unsigned else [(SIGNATURE, signature, 0o600)])
    plain = controllerstate.tar_bytes(entries + [(n, d, 0o600) for n, d in members])
    recipient = pyrage.x25519.Recipient.from_str(state["recipient"])
    with open(path, "wb") as handle:
        handle.write(pyrage.encrypt(plain, [recipient]))
    return path


def _refused(state, path, targets, match, signers=None):
    """Restore ``path``: refused with one line matching ``match``, the destinations' tree unchanged."""
    root = str(state["tmp"] / "new")
    before = _snapshot(root)
    with pytest.raises(ControllerStateError) as err:
        controllerstate.unpack(path, state["identity"], targets, signers or [state["pub"]])
    assert "\n" not in str(err.value), str(err.value)
    assert len(err.value.problems) == 1
    assert _snapshot(root) == before
    assert re.search(match, str(err.value)), str(err.value)
    return str(err.value)


@pytest.fixture()
def targets(state):
    """The new controller's destinations, with something already there: an empty PKI directory and a sentinel."""
    found = _new_targets(state["tmp"])
    os.makedirs(found["pki"])
    (state["tmp"] / "new" / "sentinel").write_bytes(b"keep\n")
    return found


# ---------------------------------------------------------------------------------------- genuine
def test_round_trip_into_empty_directories_byte_for_byte(state):
    archive = str(state["tmp"] / "backup.age")
    done = controllerstate.pack(state["items"], [state["recipient"]], archive, state["key_path"])
    fingerprint = ed25519.key_fingerprint(ed25519.public_raw(state["key"]))
    assert done["items"] == ["lock", "pki", "signing_key"] and done["skipped"] == ["reports"] and done["files"] == 5
    assert done["signer"] == fingerprint
    assert os.stat(archive).st_mode & 0o777 == 0o600
    with open(archive, "rb") as handle:
        assert b"CAKEY" not in handle.read()  # encrypted, not merely packed
    targets = _new_targets(state["tmp"])
    checked = controllerstate.unpack(archive, state["identity"], targets, [state["pub"]], check_mode=True)
    assert len(checked["written"]) == 5 and not os.path.exists(state["tmp"] / "new")
    restored = controllerstate.unpack(archive, state["identity"], targets, [state["pub"]])
    assert len(restored["written"]) == 5 and restored["signer"] == fingerprint and restored["created"].endswith("Z")
    for name in ("pki", "lock", "signing_key"):
        assert _tree(targets[name]) == _tree(state["items"][name]), name
    # Again onto what it wrote: the files are the same, nothing is written, the pki directory is not empty.
    with pytest.raises(ControllerStateError, match="pki: .* is not empty"):
        controllerstate.unpack(archive, state["identity"], targets, [state["pub"]])


def test_the_signature_covers_the_manifest_which_covers_every_file(state, archive):
    body, signature, members = _open(state, archive)
    assert [m[0] for m in members][:1] == ["items/lock"]
    assert ed25519.verify(ed25519.public_raw(state["key"]), SIGNED_PREFIX + body, signature)
    manifest = json.loads(body)
    assert manifest["format"] == "mooring.controller-backup/v2" and manifest["signer"].startswith("SHA256:")
    assert len(manifest["files"]) == len(members) == 5 and all(len(f["sha256"]) == 64 for f in manifest["files"])


def test_several_trusted_signers_and_pem_text(state, archive, tmp_path):
    _other, _k, other_pub = _key_pair(tmp_path, "replaced")
    with open(state["pub"]) as handle:
        pem = handle.read()
    done = controllerstate.unpack(archive, state["identity"], _new_targets(tmp_path), [other_pub, pem])
    assert done["signer"] == ed25519.key_fingerprint(ed25519.public_raw(state["key"]))


def test_a_file_with_the_same_bytes_and_another_mode_gets_its_mode_back(state, archive, tmp_path):
    targets = {"pki": str(tmp_path / "n" / "pki"), "lock": str(tmp_path / "n" / "lock.yaml"),
               "signing_key": str(tmp_path / "n" / "signing.key")}
    os.makedirs(tmp_path / "n")
    shutil.copyfile(state["items"]["lock"], targets["lock"])
    os.chmod(targets["lock"], os.stat(state["items"]["lock"]).st_mode & 0o777)
    shutil.copyfile(state["items"]["signing_key"], targets["signing_key"])
    os.chmod(targets["signing_key"], 0o644)
    done = controllerstate.unpack(archive, state["identity"], targets, [state["pub"]])
    assert done["unchanged"] == [targets["lock"]] and targets["signing_key"] in done["written"]
    assert os.stat(targets["signing_key"]).st_mode & 0o777 == 0o600


# -------------------------------------------------------------------------------- forged, unsigned
def test_a_backup_forged_with_the_recipients_public_key_is_refused(state, targets, tmp_path):
    """The forger has the operator's public key (all age needs) and a signing key of his own; his archive would write
    his CA key and his bundle signing key."""
    evil = tmp_path / "evil"
    (evil / "pki").mkdir(parents=True)
    (evil / "pki" / "ca.key").write_bytes(b"FORGED CA KEY\n")
    _key, forger_key, _pub = _key_pair(evil, "bundle-signing")
    forged = str(tmp_path / "forged.age")
    controllerstate.pack({"pki": str(evil / "pki"), "signing_key": forger_key}, [state["recipient"]], forged, forger_key)
    message = _refused(state, forged, targets, r"verifies with none of the trusted signers \(SHA256:")
    assert "(unverified), which is not trusted" in message  # it names the key it claims, marked as such


def test_an_unsigned_backup_is_refused(state, archive, targets, tmp_path):
    body, _signature, members = _open(state, archive)
    _refused(state, _seal(state, str(tmp_path / "u.age"), body, members, unsigned=True), targets,
             r"unsigned \(no MANIFEST.json.sig after MANIFEST.json\); refusing it")


def test_a_v1_backup_is_refused_saying_it_is_unsigned(state, archive, targets, tmp_path):
    body, _signature, members = _open(state, archive)
    manifest = json.loads(body)
    manifest["format"] = "mooring.controller-backup/v1"
    del manifest["signer"]
    _refused(state, _seal(state, str(tmp_path / "v1.age"), manifest, members, unsigned=True), targets,
             r"a mooring.controller-backup/v1 backup is not signed, so nothing tells it from one forged")


def test_a_signature_of_the_bare_manifest_is_not_a_backup_signature(state, archive, targets, tmp_path):
    """What the bundle signing key signs for a bundle (a JSON document's bytes) never counts for a backup."""
    body, _signature, members = _open(state, archive)
    bare = ed25519.sign(state["key"], body)
    _refused(state, _seal(state, str(tmp_path / "b.age"), body, members, signature=bare), targets, "none of the trusted")


def test_restore_needs_a_trusted_signer_and_only_a_public_key(state, archive, tmp_path):
    targets = _new_targets(tmp_path)
    with pytest.raises(ControllerStateError, match="no trusted signer: a restore needs the public key"):
        controllerstate.unpack(archive, state["identity"], targets, [])
    with pytest.raises(ControllerStateError, match="bundle-signing.key is a private key: give its public key"):
        controllerstate.unpack(archive, state["identity"], targets, [state["key_path"]])
    with pytest.raises(ControllerStateError, match="lock.yaml: not a PEM Ed25519 public key"):
        controllerstate.unpack(archive, state["identity"], targets, [state["items"]["lock"]])
    with pytest.raises(ControllerStateError, match="nowhere.pub does not exist"):
        controllerstate.unpack(archive, state["identity"], targets, [str(tmp_path / "nowhere.pub")])
    assert not os.path.exists(tmp_path / "new")


def test_a_backup_needs_an_existing_ed25519_signing_key(state, tmp_path):
    dest = tmp_path / "b.age"
    with pytest.raises(ControllerStateError, match="signing key .*missing.key does not exist: a backup is signed"):
        controllerstate.pack(state["items"], [state["recipient"]], str(dest), str(tmp_path / "missing.key"))
    with pytest.raises(ControllerStateError, match="signing key .*lock.yaml: cannot load it"):
        controllerstate.pack(state["items"], [state["recipient"]], str(dest), state["items"]["lock"])
    assert not dest.exists()


# ----------------------------------------------------------------------------------- destinations
def test_an_item_under_another_items_file_is_refused_before_anything_is_written(state, archive, tmp_path):
    """lock is restored as a file at a/; signing_key would go to a/b: nothing at all is written (it used to write
    a, then fail on a/b)."""
    base = tmp_path / "new"
    base.mkdir()
    targets = {"pki": str(base / "pki"), "lock": str(base / "a"), "signing_key": str(base / "a" / "b")}
    _refused(state, archive, targets, r"signing_key: .*/new/a/b is under .*/new/a, which item lock restores as a file")
    targets = {"pki": str(base / "lock.yaml" / "pki"), "lock": str(base / "lock.yaml"), "signing_key": str(base / "k")}
    _refused(state, archive, targets, r"pki: .*/new/lock.yaml/pki is under .*/new/lock.yaml, which item lock restores")


def test_an_existing_file_where_a_directory_must_be_is_refused(state, archive, tmp_path):
    base = tmp_path / "new"
    base.mkdir()
    (base / "file").write_bytes(b"x\n")
    targets = {"pki": str(base / "pki"), "lock": str(base / "file" / "lock.yaml"), "signing_key": str(base / "k")}
    _refused(state, archive, targets, r"lock: .*/new/file/lock.yaml cannot be made: .*/new/file is not a directory")


def test_a_directory_items_destination_that_is_a_file_is_refused(state, archive, tmp_path):
    base = tmp_path / "new"
    base.mkdir()
    (base / "pki").write_bytes(b"x\n")
    targets = {"pki": str(base / "pki"), "lock": str(base / "lock.yaml"), "signing_key": str(base / "k")}
    _refused(state, archive, targets, r"pki: .*/new/pki is not a directory; a restore never replaces it")


def test_two_items_writing_one_path_differently_are_refused(state, archive, tmp_path):
    base = tmp_path / "new"
    base.mkdir()
    targets = {"pki": str(base / "pki"), "lock": str(base / "same"), "signing_key": str(base / "same")}
    _refused(state, archive, targets, r"signing_key: .*/new/same is also a file of lock with other content or mode")


def test_a_symlinked_target_is_refused_as_a_symlink(state, archive, tmp_path):
    base = tmp_path / "new"
    (base / "real-pki").mkdir(parents=True)
    os.symlink(str(base / "real-pki"), str(base / "pki"))  # an empty directory behind it: still refused
    targets = {"pki": str(base / "pki"), "lock": str(base / "lock.yaml"), "signing_key": str(base / "k")}
    _refused(state, archive, targets, r"pki: .*/new/pki is a symlink; a restore never writes through one")
    os.remove(base / "pki")
    shutil.copyfile(state["items"]["lock"], str(base / "real-lock"))
    os.symlink(str(base / "real-lock"), str(base / "lock.yaml"))  # the very bytes behind it: still refused
    _refused(state, archive, targets, r"lock: .*/new/lock.yaml is a symlink; a restore never writes through one")


def test_a_non_empty_target_or_a_different_file_refuses_everything(state, archive, tmp_path):
    targets = _new_targets(tmp_path)
    os.makedirs(targets["pki"])
    with open(os.path.join(targets["pki"], "ca.crt"), "w") as handle:
        handle.write("someone else's\n")
    with open(targets["lock"], "w") as handle:
        handle.write("digest: other\n")
    with pytest.raises(ControllerStateError) as err:
        controllerstate.unpack(archive, state["identity"], targets, [state["pub"]])
    assert len(err.value.problems) == 2
    assert "lock: %s exists with other content" % targets["lock"] in err.value.problems[0]
    assert "pki: %s is not empty" % targets["pki"] in err.value.problems[1]
    assert not os.path.exists(targets["signing_key"])  # nothing written
    with open(targets["lock"]) as handle:
        assert handle.read() == "digest: other\n"


# --------------------------------------------------------------------------- hostile archives
def _mutate(change):
    """A case: the genuine archive's manifest changed by ``change(manifest, members)`` and signed again by the
    trusted key (as a buggy or misused signer would): its shape is checked even then."""
    def build(state, archive, path):
        body, _signature, members = _open(state, archive)
        manifest = json.loads(body)
        change(manifest, members)
        return _seal(state, path, manifest, members)
    return build


def _files(index, key, value):
    def change(manifest, _members):
        manifest["files"][index][key] = value
    return _mutate(change)


def _raw(body_of, members_of=None, **seal):
    def build(state, archive, path):
        body, _signature, members = _open(state, archive)
        return _seal(state, path, body_of(body), members_of(members) if members_of else members, **seal)
    return build


def _symlink_member(state, archive, path):
    body, signature, members = _open(state, archive)
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in [(MANIFEST, body), (SIGNATURE, signature)] + members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("items/pki/evil")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        tar.addfile(link)
    with open(path, "wb") as handle:
        handle.write(pyrage.encrypt(plain.getvalue(), [pyrage.x25519.Recipient.from_str(state["recipient"])]))
    return path


def _del(key):
    def change(manifest, _members):
        del manifest[key]
    return _mutate(change)


def _set(key, value):
    def change(manifest, _members):
        manifest[key] = value
    return _mutate(change)


def _item(name, value):
    def change(manifest, _members):
        manifest["items"][name] = value
    return _mutate(change)


def _append(key, value):
    def change(manifest, _members):
        manifest[key].append(value)
    return _mutate(change)


def _tampered(state, archive, path):
    """The holder of the identity puts his own CA key in, with its size and sha256 in the manifest, keeps the
    genuine signature and re-encrypts: the signature no longer verifies."""
    body, signature, members = _open(state, archive)
    manifest = json.loads(body)
    forged = b"FORGED CA KEY\n"
    entry = next(e for e in manifest["files"] if e["path"] == "ca.key")
    entry.update(size=len(forged), sha256=hashlib.sha256(forged).hexdigest())
    members = [(n, forged if n == "items/pki/ca.key" else d) for n, d in members]
    return _seal(state, path, manifest, members, signature=signature)


def _entry(index):
    return "files\\[%d\\]" % index


HOSTILE = {
    "tampered after signing": (_tampered, r"verifies with none of the trusted signers .*a trusted key: changed after it was"),
    "signature too short": (_raw(lambda b: b, signature=b"\x01" * 63), r"MANIFEST.json.sig is 63 bytes, not a 64-byte"),
    "signature of zeros": (_raw(lambda b: b, signature=b"\x00" * 64), r"verifies with none of the trusted signers"),
    "manifest not JSON": (_raw(lambda b: b"{not json"), r"MANIFEST.json is not JSON"),
    "manifest nested too deep": (_raw(lambda b: b"[" * 100000 + b"]" * 100000), r"MANIFEST.json is not JSON"),
    "manifest a list": (_raw(lambda b: b"[]"), r"MANIFEST.json: must be a JSON object, not a list"),
    "format v3": (_set("format", "mooring.controller-backup/v3"), r"format: must be mooring.controller-backup/v2"),
    "no signer": (_del("signer"), r"MANIFEST.json: signer: is missing"),
    "signer not the key": (_set("signer", "SHA256:" + "A" * 43), r"names signer SHA256:A+ but was signed by SHA256:"),
    "items not a mapping": (_set("items", ["pki"]), r"MANIFEST.json: items: must be a mapping, not a list"),
    "item not a mapping": (_item("pki", "directory"), r"MANIFEST.json: items.pki: must be a mapping, not a string"),
    "item name escapes": (_item("../etc", {"kind": "directory"}), r"items.'../etc': must be a safe item name"),
    "item kind unknown": (_item("pki", {"kind": "link"}), r"items.pki.kind: must be one of file, directory, not 'link'"),
    "files not a list": (_set("files", {"a": 1}), r"MANIFEST.json: files: must be a list, not a mapping"),
    "file entry not a mapping": (_append("files", ["lock", "", "0600"]), r"%s: must be a mapping, not a list" % _entry(5)),
    "directory entry not a mapping": (_append("directories", "pki"), r"directories\[\d+\]: must be a mapping, not a string"),
    "mode not octal": (_files(0, "mode", "0x1ff"), r"%s.mode: must be an octal mode from 0000 to 0777 .*'0x1ff'" % _entry(0)),
    "mode with digit 9": (_files(1, "mode", "0699"), r"%s.mode: must be an octal mode" % _entry(1)),
    "mode setuid": (_files(1, "mode", "4755"), r"%s.mode: must be an octal mode from 0000 to 0777" % _entry(1)),
    "mode a number": (_files(1, "mode", 420), r"%s.mode: must be an octal mode .*not 420" % _entry(1)),
    "size a string": (_files(2, "size", "5"), r"%s.size: must be a size \(a whole number >= 0\), not '5'" % _entry(2)),
    "size a boolean": (_files(2, "size", True), r"%s.size: must be a size" % _entry(2)),
    "sha256 a number": (_files(2, "sha256", 7), r"%s.sha256: must be a sha256" % _entry(2)),
    "item a list": (_files(2, "item", ["pki"]), r"%s.item: must be the name of one of the items" % _entry(2)),
    "path leaves its item": (_files(2, "path", "../../etc/cron.d/x"), r"%s.path: must be a relative path inside" % _entry(2)),
    "path absolute": (_files(2, "path", "/etc/passwd"), r"%s.path: must be a relative path inside" % _entry(2)),
    "path with NUL": (_files(2, "path", "ca\x00.key"), r"%s.path: must be a relative path inside" % _entry(2)),
    "path name too long": (_files(2, "path", "x" * 300), r"%s.path: must be a relative path inside" % _entry(2)),
    "path of a file item": (_files(0, "path", "x"), r"%s.path: must be '' \(item lock is a file\)" % _entry(0)),
    "unknown field": (_files(0, "owner", "root"), r"%s.owner: is not a known field" % _entry(0)),
    "file listed twice": (_mutate(lambda m, _x: m["files"].append(dict(m["files"][1]))), r"%s.path: .* is listed twice" % _entry(5)),
    "directory mode not octal": (_mutate(lambda m, _x: m["directories"][0].update(mode="rwx")), r"directories\[0\].mode: must be an octal"),
    "directory of a file item": (_append("directories", {"item": "lock", "path": "", "mode": "0700"}),
                                 r"directories\[\d+\].item: must be the name of one of the directory items \(pki\)"),
    "file item without its file": (_mutate(lambda m, _x: m["files"].pop(0)), r"items.lock: is a file item that no entry"),
    "member changed": (_raw(lambda b: b, lambda ms: [(n, d + b"!") for n, d in ms]), r"does not match its manifest entry"),
    "member missing": (_raw(lambda b: b, lambda ms: ms[1:]), r"items/lock is in the manifest but not in the archive"),
    "extra member": (_raw(lambda b: b, lambda ms: ms + [("items/pki/extra", b"x")]), r"items/pki/extra' not in the manifest"),
    "member twice": (_raw(lambda b: b, lambda ms: ms + ms[:1]), r"hostile.age: not a controller backup \(member 'items/lock' twice\)"),
    "symlink member": (_symlink_member, r"member 'items/pki/evil' is not a regular file"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_with_one_line_and_nothing_written(state, archive, targets, tmp_path, case):
    build, match = HOSTILE[case]
    _refused(state, build(state, archive, str(tmp_path / "hostile.age")), targets, match)


# ------------------------------------------------------------------------------------- keys
def test_a_wrong_key_is_refused(state, archive, tmp_path):
    other = tmp_path / "other.key"
    other.write_text(str(pyrage.x25519.Identity.generate()) + "\n")
    other.chmod(0o600)
    with pytest.raises(ControllerStateError, match="cannot be decrypted with .*other.key: not encrypted to this key"):
        controllerstate.unpack(archive, str(other), _new_targets(tmp_path), [state["pub"]])
    assert not os.path.exists(tmp_path / "new")


def test_a_changed_archive_and_a_loose_identity_are_refused(state, archive, tmp_path):
    with open(archive, "rb") as handle:
        data = bytearray(handle.read())
    data[-40] ^= 1
    with open(archive, "wb") as handle:
        handle.write(bytes(data))
    with pytest.raises(ControllerStateError, match="cannot be decrypted"):
        controllerstate.unpack(archive, state["identity"], _new_targets(tmp_path), [state["pub"]])
    os.chmod(state["identity"], 0o644)
    with pytest.raises(ControllerStateError, match="readable by others"):
        controllerstate.unpack(archive, state["identity"], _new_targets(tmp_path), [state["pub"]])


def test_every_item_needs_a_destination_and_links_are_refused(state, archive, tmp_path):
    with pytest.raises(ControllerStateError, match="holds lock, pki, signing_key: give a destination"):
        controllerstate.unpack(archive, state["identity"], {}, [state["pub"]])
    os.symlink("/etc/passwd", os.path.join(state["items"]["pki"], "link"))
    with pytest.raises(ControllerStateError, match="link is a link or special file"):
        controllerstate.pack(state["items"], [state["recipient"]], str(tmp_path / "b2.age"), state["key_path"])
    with pytest.raises(ControllerStateError, match="not an age .* or SSH public key"):
        controllerstate.recipients(["age1nope"])


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_an_ssh_key_pair_works_as_recipient_and_identity(state, tmp_path):
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    archive = str(tmp_path / "backup.age")
    controllerstate.pack(state["items"], [str(key) + ".pub"], archive, state["key_path"])
    restored = controllerstate.unpack(archive, str(key), _new_targets(tmp_path), [state["pub"]])
    assert len(restored["written"]) == 5
