# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""bundle_unpack's decide-then-act on real bundles and directories (no AnsibleModule needed)."""

import os

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as b
from ansible_collections.mooring.cluster.plugins.module_utils.common import digest
from ansible_collections.mooring.cluster.plugins.module_utils.common.host_state import HostState
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import lock_digest
from ansible_collections.mooring.cluster.plugins.modules.bundle_unpack import decide_and_act, repositories


@pytest.fixture
def built(tmp_path):
    src = tmp_path / "tool"
    src.write_bytes(os.urandom(5000))
    addons = {"alpha": {"version": "1", "artifacts": [{
        "name": "tool", "kind": "binary", "arch": "amd64", "url": "file://%s" % src,
        "sha256": digest.sha256_file(str(src))[0], "dest": "tool"}], "images": [], "packages": {}}}
    lock = {"kind": "InstallerLock", "hash": "h", "architectures": ["amd64"], "addons": addons}
    lock["digest"] = lock_digest(lock)
    out = b.build_bundle(lock, str(tmp_path / "b.tar"), key_path=str(tmp_path / "k.key"),
                         cache_dir=str(tmp_path / "cache"))
    return tmp_path, out


def params(tmp_path, **kw):
    base = {"src": str(tmp_path / "b.tar"), "dest": str(tmp_path / "root"), "pubkey": str(tmp_path / "k.pub"),
            "id": None, "remove_src": False, "pubkey_content": None, "missing": "fail", "apt_source": None,
            "packages": []}
    base.update(kw)
    return base


def test_check_mode_writes_nothing_then_apply_then_noop(built):
    tmp_path, out = built
    changed, present, summary = decide_and_act(params(tmp_path, id=out["id"]), check_mode=True)
    assert changed and not present and summary["id"] == out["id"] and not (tmp_path / "root").exists()
    changed, present, summary = decide_and_act(params(tmp_path, id=out["id"], remove_src=True), check_mode=False)
    assert changed and not present and (tmp_path / "root" / out["id"] / "alpha" / "bin" / "amd64" / "tool").exists()
    assert not (tmp_path / "b.tar").exists()
    # Already unpacked: no src needed, nothing changes.
    assert decide_and_act(params(tmp_path, id=out["id"]), check_mode=False)[:2] == (False, True)
    assert decide_and_act(params(tmp_path, id=out["id"]), check_mode=True)[:2] == (False, True)


def test_refused_copy_is_deleted_and_nothing_unpacked(built):
    tmp_path, out = built
    path = tmp_path / "b.tar"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(b.BundleError, match="refused copy"):
        decide_and_act(params(tmp_path, id=out["id"], remove_src=True), check_mode=False)
    assert not path.exists()
    assert not (tmp_path / "root").exists() or os.listdir(str(tmp_path / "root")) == []


def test_untrusted_key_refused(built):
    tmp_path, out = built
    other = Ed25519PrivateKey.generate()
    (tmp_path / "other.pub").write_bytes(other.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    with pytest.raises(b.SignatureError):
        decide_and_act(params(tmp_path, pubkey=str(tmp_path / "other.pub")), check_mode=False)


def test_missing_src_names_what_to_do(built):
    tmp_path, _out = built
    with pytest.raises(b.BundleError, match="copy the bundle first"):
        decide_and_act(params(tmp_path, src=str(tmp_path / "nope.tar"), id="a" * 64), check_mode=False)


def test_locate_keeps_the_trusted_key_and_reports_a_bundle_not_here(built):
    tmp_path, out = built
    pem = (tmp_path / "k.pub").read_text()
    key = tmp_path / "etc" / "mooring" / "trusted.pub"
    incoming = tmp_path / "root" / "incoming"
    where = params(tmp_path, src=str(incoming / "b.tar"), id=out["id"], pubkey=str(key), pubkey_content=pem,
                   missing="report")
    # Check mode: would write the key and make the incoming directory; nothing is written.
    assert decide_and_act(where, check_mode=True) == (True, False, None)
    assert not key.exists() and not incoming.exists()
    assert decide_and_act(where, check_mode=False) == (True, False, None)
    assert key.read_text() == pem and key.stat().st_mode & 0o7777 == 0o644
    assert incoming.stat().st_mode & 0o7777 == 0o700
    assert decide_and_act(where, check_mode=False) == (False, False, None)
    # The copy lands; the same call unpacks it; then it is found, and a loosened key mode is put back.
    (tmp_path / "b.tar").rename(incoming / "b.tar")
    changed, present, summary = decide_and_act(dict(where, missing="fail"), check_mode=False)
    assert changed and not present and summary["id"] == out["id"]
    key.chmod(0o666)
    changed, present, summary = decide_and_act(where, check_mode=False)
    assert changed and present and summary["id"] == out["id"] and key.stat().st_mode & 0o7777 == 0o644
    assert decide_and_act(where, check_mode=False)[:2] == (False, True)


def test_a_trusted_key_that_is_not_ed25519_is_refused_before_anything_is_written(built):
    tmp_path, out = built
    key = tmp_path / "trusted.pub"
    with pytest.raises(b.SignatureError):
        decide_and_act(params(tmp_path, id=out["id"], pubkey=str(key), pubkey_content="not a key\n",
                              missing="report"), check_mode=False)
    assert not key.exists()


def test_repositories_point_apt_at_the_unpacked_bundle_and_list_missing_packages(built):
    tmp_path, out = built
    summary = decide_and_act(params(tmp_path, id=out["id"]), check_mode=False)[2]
    summary = dict(summary, repos=["/var/lib/mooring/bundles/%s/alpha/repo" % out["id"]])
    source = tmp_path / "apt" / "mooring-bundle.list"
    calls = []

    def dpkg(argv):
        calls.append(argv)
        return 0, "alpha-tools\t1.0\tii \nbeta\t2.0\trc \n", ""

    where = params(tmp_path, id=out["id"], apt_source=str(source), packages=["alpha-tools", "beta", "gamma=1"])
    check = HostState(dpkg, check_mode=True)
    assert repositories(check, where, summary) == ["beta", "gamma=1"]
    assert check.changes == ["file %s: created" % source] and not source.exists()
    state = HostState(dpkg, check_mode=False)
    repositories(state, where, summary)
    assert source.read_text().splitlines()[-1] == "deb [trusted=yes] file:%s ./" % summary["repos"][0]
    assert source.stat().st_mode & 0o7777 == 0o644 and str(source) in state.changed_paths
    again = HostState(dpkg, check_mode=False)
    repositories(again, where, summary)
    assert again.changes == []
    source.write_text("deb http://elsewhere ./\n")
    fixed = HostState(dpkg, check_mode=False)
    repositories(fixed, where, summary)
    assert fixed.changes == ["file %s: content" % source] and "elsewhere" not in source.read_text()
    assert calls[0][:2] == ["dpkg-query", "-W"]
