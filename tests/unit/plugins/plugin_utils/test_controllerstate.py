# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller backup: real age encryption (pyrage) of real files, restored into empty directories."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ansible_collections.mooring.cluster.plugins.plugin_utils import controllerstate
from ansible_collections.mooring.cluster.plugins.plugin_utils.controllerstate import ControllerStateError

pyrage = pytest.importorskip("pyrage")


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
    key = tmp_path / "old" / "bundle-signing.key"
    key.write_bytes(b"SIGNING\n")
    key.chmod(0o600)
    identity = pyrage.x25519.Identity.generate()
    keyfile = tmp_path / "operator.key"
    keyfile.write_text("# created: now\n%s\n" % identity)
    keyfile.chmod(0o600)
    items = {"pki": str(pki), "lock": str(lock), "signing_key": str(key), "reports": str(tmp_path / "old" / "none")}
    return {"items": items, "recipient": str(identity.to_public()), "identity": str(keyfile), "tmp": tmp_path}


def _new_targets(tmp_path, name="new"):
    base = tmp_path / name
    return {"pki": str(base / "pki"), "lock": str(base / "lock.yaml"), "signing_key": str(base / "cfg" / "signing.key")}


def test_round_trip_into_empty_directories_byte_for_byte(state):
    archive = str(state["tmp"] / "backup.age")
    done = controllerstate.pack(state["items"], [state["recipient"]], archive)
    assert done["items"] == ["lock", "pki", "signing_key"] and done["skipped"] == ["reports"] and done["files"] == 5
    assert os.stat(archive).st_mode & 0o777 == 0o600
    with open(archive, "rb") as handle:
        assert b"CAKEY" not in handle.read()  # encrypted, not merely packed
    targets = _new_targets(state["tmp"])
    restored = controllerstate.unpack(archive, state["identity"], targets)
    assert len(restored["written"]) == 5
    for name in ("pki", "lock", "signing_key"):
        assert _tree(targets[name]) == _tree(state["items"][name]), name
    # Again onto what it wrote: the files are the same, nothing is written, the pki directory is not empty.
    with pytest.raises(ControllerStateError, match="pki: .* is not empty"):
        controllerstate.unpack(archive, state["identity"], targets)


def test_a_wrong_key_is_refused(state, tmp_path):
    archive = str(tmp_path / "backup.age")
    controllerstate.pack(state["items"], [state["recipient"]], archive)
    other = tmp_path / "other.key"
    other.write_text(str(pyrage.x25519.Identity.generate()) + "\n")
    other.chmod(0o600)
    with pytest.raises(ControllerStateError, match="cannot be decrypted with .*other.key: not encrypted to this key"):
        controllerstate.unpack(archive, str(other), _new_targets(tmp_path))
    assert not os.path.exists(tmp_path / "new")


def test_a_non_empty_target_or_a_different_file_refuses_everything(state, tmp_path):
    archive = str(tmp_path / "backup.age")
    controllerstate.pack(state["items"], [state["recipient"]], archive)
    targets = _new_targets(tmp_path)
    os.makedirs(targets["pki"])
    with open(os.path.join(targets["pki"], "ca.crt"), "w") as handle:
        handle.write("someone else's\n")
    with open(targets["lock"], "w") as handle:
        handle.write("digest: other\n")
    with pytest.raises(ControllerStateError) as err:
        controllerstate.unpack(archive, state["identity"], targets)
    assert len(err.value.problems) == 2
    assert "lock: %s exists with other content" % targets["lock"] in err.value.problems[0]
    assert "pki: %s is not empty" % targets["pki"] in err.value.problems[1]
    assert not os.path.exists(targets["signing_key"])  # nothing written
    with open(targets["lock"]) as handle:
        assert handle.read() == "digest: other\n"


def test_a_changed_archive_and_a_loose_identity_are_refused(state, tmp_path):
    archive = tmp_path / "backup.age"
    controllerstate.pack(state["items"], [state["recipient"]], str(archive))
    data = bytearray(archive.read_bytes())
    data[-40] ^= 1
    archive.write_bytes(bytes(data))
    with pytest.raises(ControllerStateError, match="cannot be decrypted"):
        controllerstate.unpack(str(archive), state["identity"], _new_targets(tmp_path))
    os.chmod(state["identity"], 0o644)
    with pytest.raises(ControllerStateError, match="readable by others"):
        controllerstate.unpack(str(archive), state["identity"], _new_targets(tmp_path))


def test_every_item_needs_a_destination_and_links_are_refused(state, tmp_path):
    archive = str(tmp_path / "backup.age")
    controllerstate.pack(state["items"], [state["recipient"]], archive)
    with pytest.raises(ControllerStateError, match="holds lock, pki, signing_key: give a destination"):
        controllerstate.unpack(archive, state["identity"], {})
    os.symlink("/etc/passwd", os.path.join(state["items"]["pki"], "link"))
    with pytest.raises(ControllerStateError, match="link is a link or special file"):
        controllerstate.pack(state["items"], [state["recipient"]], str(tmp_path / "b2.age"))
    with pytest.raises(ControllerStateError, match="not an age .* or SSH public key"):
        controllerstate.recipients(["age1nope"])


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_an_ssh_key_pair_works_as_recipient_and_identity(state, tmp_path):
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    archive = str(tmp_path / "backup.age")
    controllerstate.pack(state["items"], [str(key) + ".pub"], archive)
    restored = controllerstate.unpack(archive, str(key), _new_targets(tmp_path))
    assert len(restored["written"]) == 5
