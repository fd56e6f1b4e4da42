# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller_state action: the backup signed with the bundle signing key found where the inventory says, a
restore refused in one line without a trusted signer; and the two playbooks as a user runs them (real
ansible-playbook, localhost only)."""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest

from ansible_collections.mooring.cluster.plugins.action import controller_state as action
from ansible_collections.mooring.cluster.plugins.module_utils.common import ed25519
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import argument_spec
from ansible_collections.mooring.cluster.plugins.plugin_utils.controllerstate import ControllerStateError

pyrage = pytest.importorskip("pyrage")
pytest.importorskip("cryptography")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)


def plugin(check_mode=False):
    p = object.__new__(action.ActionModule)
    p._task = types.SimpleNamespace(check_mode=check_mode)
    return p


def args(**given):
    found = {name: spec.get("default") for name, spec in argument_spec("controller_state").items()}
    found.update(given)
    return found


@pytest.fixture()
def controller(tmp_path):
    """An inventory directory with a PKI directory, a lock and the bundle signing key; the operator's age key."""
    inv = tmp_path / "inv"
    (inv / "pki").mkdir(parents=True)
    (inv / "pki" / "ca.key").write_bytes(b"CA\n")
    (inv / "pki" / "ca.key").chmod(0o600)
    (inv / "lock.yaml").write_text("digest: abc\n")
    key = ed25519.new_private_key()
    ed25519.write_private_key(str(inv / "bundle-signing.key"), key)
    (inv / "bundle-signing.pub").write_bytes(ed25519.public_pem(key))
    identity = pyrage.x25519.Identity.generate()
    (tmp_path / "operator.key").write_text("%s\n" % identity)
    (tmp_path / "operator.key").chmod(0o600)
    task_vars = {"inventory_dir": str(inv), "mooring_lock": str(inv / "lock.yaml"),
                 "bundle_signing_key": str(inv / "bundle-signing.key")}
    return {"tmp": tmp_path, "inv": inv, "vars": task_vars, "recipient": str(identity.to_public()),
            "identity": str(tmp_path / "operator.key"), "pub": str(inv / "bundle-signing.pub"),
            "signer": ed25519.key_fingerprint(ed25519.public_raw(key))}


def test_the_backup_is_signed_with_the_inventorys_bundle_signing_key(controller):
    archive = str(controller["tmp"] / "b.age")
    checked = plugin(check_mode=True).act(args(state="archived", path=archive, recipients=[controller["recipient"]]),
                                          controller["vars"])
    assert checked["signer"] == controller["signer"] and not os.path.exists(archive)
    done = plugin().act(args(state="archived", path=archive, recipients=[controller["recipient"]]), controller["vars"])
    assert done["signer"] == controller["signer"] and done["paths"]["signing_key"].endswith("bundle-signing.key")
    new = controller["tmp"] / "new"
    task_vars = {"inventory_dir": str(new), "mooring_lock": str(new / "lock.yaml"),
                 "bundle_signing_key": str(new / "bundle-signing.key")}
    restore = args(state="restored", path=archive, identity=controller["identity"])
    with pytest.raises(ControllerStateError) as err:
        plugin().act(restore, task_vars)
    assert str(err.value).startswith("state=restored needs trusted_signers (controller_restore: -e controller_backup_signers")
    assert "\n" not in str(err.value) and not os.path.exists(new)
    done = plugin().act(dict(restore, trusted_signers=[controller["pub"]]), task_vars)
    assert done["changed"] and done["signer"] == controller["signer"]
    assert (new / "pki" / "ca.key").read_bytes() == b"CA\n" and (new / "bundle-signing.key").exists()


def test_a_missing_signing_key_fails_the_backup_in_one_line(controller):
    archive = str(controller["tmp"] / "b.age")
    task_vars = dict(controller["vars"], bundle_signing_key=str(controller["tmp"] / "none.key"))
    with pytest.raises(ControllerStateError, match="signing key .*none.key does not exist"):
        plugin().act(args(state="archived", path=archive, recipients=[controller["recipient"]]), task_vars)
    assert not os.path.exists(archive)


def _playbook(*argv):
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    return subprocess.run([os.path.join(BIN, "ansible-playbook")] + list(argv), capture_output=True, text=True,
                          cwd=ROOT, check=False, env=env, stdin=subprocess.DEVNULL)


def test_the_playbooks_back_up_and_restore_trusting_the_signers_given(controller):
    tmp = controller["tmp"]
    for name, base in (("one", controller["inv"]), ("two", tmp / "two")):
        os.makedirs(tmp / name, exist_ok=True)
        (tmp / name / "hosts.yml").write_text(
            "all:\n  hosts:\n    localhost: {ansible_connection: local, ansible_python_interpreter: %s}\n"
            "  vars: {mooring_pki_dir: %s, mooring_lock: %s, bundle_signing_key: %s}\n"
            % (sys.executable, base / "pki", base / "lock.yaml", base / "bundle-signing.key"))
    archive = str(tmp / "b.age")
    run = _playbook("-i", str(tmp / "one" / "hosts.yml"), "mooring.cluster.controller_backup",
                    "-e", "controller_backup=%s" % archive, "-e", '{"controller_backup_recipients": ["%s"]}' % controller["recipient"])
    assert run.returncode == 0, run.stdout + run.stderr
    assert "signed by %s" % controller["signer"] in run.stdout
    restore = ["-i", str(tmp / "two" / "hosts.yml"), "mooring.cluster.controller_restore", "-e", "controller_backup=%s" % archive,
               "-e", "controller_backup_identity=%s" % controller["identity"]]
    run = _playbook(*restore)
    assert run.returncode != 0 and "needs trusted_signers" in run.stdout and not os.path.exists(tmp / "two" / "pki")
    run = _playbook(*restore + ["-e", "controller_backup_signers=%s" % controller["pub"]])
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp / "two" / "pki" / "ca.key").read_bytes() == b"CA\n"
    with open(controller["pub"], "rb") as handle:
        assert (tmp / "two" / "bundle-signing.pub").read_bytes() == handle.read()
