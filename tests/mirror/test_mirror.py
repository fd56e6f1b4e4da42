# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""End to end on the controller against the real test mirror served over http on 127.0.0.1.

Resolves a real lock (the collection's catalog + an overlay pointing at the served mirror),
builds the bundle over http, verifies it and unpacks it. Skipped (saying why) when the mirror
has not been built on this machine (`make mirror`; CI builds it in the bundle_containerd scenario).
"""

import json
import os
import re
import subprocess
import sys

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as b
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import format as fmt
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import host as h
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import build_lock
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import parse_installer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MIRROR = os.environ.get("MOORING_MIRROR_DIR") or os.path.join(
    os.environ.get("MOORING_CACHE_DIR", "/var/cache/mooring"), "mirror")

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(MIRROR, "mirror.json")),
                                reason="test mirror not built at %s (run `make mirror`)" % MIRROR)

INSTALLER = {
    "apiVersion": "cluster.mooring.io/v1beta1",
    "kind": "Installer",
    "metadata": {"name": "mirror-http"},
    "spec": {"kubernetes": {"version": "latest"}, "containerd": {"version": "1.6.20"},
             "etcd": {"version": "3.5.1"}, "flannel": {"version": "latest"}},
}


@pytest.fixture
def served(tmp_path):
    overlay = tmp_path / "overlay"
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "mirror", "serve.py"), "--mirror", MIRROR,
                             "--port", "0", "--overlay", str(overlay)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        yield url, str(overlay)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_bundle_from_mirror_over_http(tmp_path, served):
    url, overlay = served
    lock = build_lock(parse_installer(INSTALLER), load_catalog(None, [overlay]))
    artifacts = lock["addons"]["containerd"]["artifacts"] + lock["addons"]["etcd"]["artifacts"]
    assert artifacts and all(a["url"].startswith(url) and len(a["sha256"]) == 64 for a in artifacts)
    # This overlay lists etcd as bare binaries (etcd/vX.Y.Z/linux-amd64/etcd); upstream ships an archive, so
    # the build refuses it rather than carry a file that nothing installs (the scenarios use the
    # upstream-shaped overlay: etcd-vX.Y.Z-linux-amd64.tar.gz).
    with pytest.raises(MooringError, match=r"'etcd': upstream ships it as an archive, the catalog entry says 'binary'"):
        b.build_bundle(lock, str(tmp_path / "e.tar"), key_path=str(tmp_path / "k.key"),
                       cache_dir=str(tmp_path / "cache"), addons=["etcd"])
    assert not (tmp_path / "e.tar").exists()
    out = b.build_bundle(lock, str(tmp_path / "b.tar"), key_path=str(tmp_path / "k.key"),
                         cache_dir=str(tmp_path / "cache"), addons=["containerd"])
    assert out["changed"] and out["sandbox_image"].startswith("registry.k8s.io/pause:")
    pub = h.read_public_key(str(tmp_path / "k.pub"))
    summary, changed = h.unpack_bundle(str(tmp_path / "b.tar"), str(tmp_path / "root"), pub)
    assert changed
    assert {"containerd", "runc", "containernetworking-plugins", "iptables"} <= set(summary["packages"])
    assert [i["ref"] for i in summary["images"]] == ["localhost/mooring/hello:1.0"]
    # The release archive is installed where its upstream layout says (an install record), not
    # handed to roles as a loose archive.
    assert [x for x in summary["archives"] if x["addon"] == "containerd"] == []
    installs = [x for x in summary["installs"] if x["addon"] == "containerd"]
    assert [x["name"] for x in installs] == ["containerd"]
    assert installs[0]["path"].endswith("/containerd/archives/amd64/containerd-1.6.20-linux-amd64.tar.gz")
    assert sorted(f["dest"] for f in installs[0]["files"]) == [
        "/usr/local/bin/containerd", "/usr/local/bin/containerd-shim-runc-v2", "/usr/local/bin/ctr"]
    with open(os.path.join(summary["addons"]["containerd"]["dir"], "debs", "Packages")) as handle:
        assert "Package: containerd\n" in handle.read()


def test_mirror_mismatch_over_http_names_the_artifact(tmp_path, served):
    _url, overlay = served
    lock = build_lock(parse_installer(INSTALLER), load_catalog(None, [overlay]))
    lock["addons"]["etcd"]["artifacts"][0]["sha256"] = "0" * 64
    with pytest.raises(fmt.ChecksumError, match="artifact etcd/etcd.*expected 0{64}, got [0-9a-f]{64}"):
        b.build_bundle(lock, str(tmp_path / "b.tar"), key_path=str(tmp_path / "k.key"),
                       cache_dir=str(tmp_path / "cache"), addons=["etcd"])
    assert not (tmp_path / "b.tar").exists()


# The demo's lock and a user's lock (inventories/example/installer.yaml, flannel as its CNI), both from
# the real catalog, the demo's with the mirror's overlay: each add-on the mirror builds from upstream
# source has the same version, artifacts (name, kind, arch, where they land) and images; only URLs,
# checksums and the images' archives differ, and what fromsource.py could not build is named there.
# The same for the versions the lab upgrades from (tests/lab/previous.yaml), pinned in both specs.
# The lab spec pins versions where the proxy does not serve the newest (local-path-provisioner): the user's spec is
# compared at the same pins.


def _shape(addon):
    arts = sorted((a["name"], a["kind"], a["arch"], a["dest"]) for a in addon["artifacts"])
    return {"version": addon["version"], "category": addon["category"], "artifacts": arts,
            "images": sorted(i["ref"] for i in addon["images"]), "packages": addon["packages"]}


@pytest.mark.parametrize("upgrade_from", [None, "patch"])
def test_demo_lock_differs_from_a_users_only_in_urls_and_checksums(upgrade_from):
    import yaml

    sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import labspec
    from fromsource import BUILT_ADDONS  # the mirror's own module (same folder)

    with open(os.path.join(MIRROR, "from-source.json")) as f:
        unbuilt = json.load(f)["unbuilt"]
    with open(os.path.join(ROOT, "inventories", "example", "installer.yaml")) as f:
        user = yaml.safe_load(f)
    user["spec"]["flannel"] = user["spec"].pop("calico")
    for addon, version in (labspec.previous(upgrade_from) if upgrade_from else {}).items():
        user["spec"][addon]["version"] = version
    demo_spec = yaml.safe_load(labspec.spec_text(upgrade_from))
    for name in BUILT_ADDONS:
        pinned = str((demo_spec["spec"].get(name) or {}).get("version", "latest"))
        if name in user["spec"] and re.fullmatch(r"\d+\.\d+\.\d+", pinned):
            user["spec"][name]["version"] = pinned
    users = build_lock(parse_installer(user), load_catalog(None))
    demo = build_lock(parse_installer(demo_spec), load_catalog(None, [os.path.join(MIRROR, "upstream-overlay")]))
    for name in BUILT_ADDONS:
        want, got = _shape(users["addons"][name]), _shape(demo["addons"][name])
        missing = {"%s/%s" % (name, a[0]) for a in want["artifacts"] if a not in got["artifacts"]}
        missing |= {"%s/%s" % (name, r) for r in want["images"] if r not in got["images"]}
        assert missing == {k for k in unbuilt if k.startswith(name + "/")}, name
        want["artifacts"] = [a for a in want["artifacts"] if "%s/%s" % (name, a[0]) not in unbuilt]
        want["images"] = [r for r in want["images"] if "%s/%s" % (name, r) not in unbuilt]
        assert got == want, name
        for art in demo["addons"][name]["artifacts"]:
            assert art["url"].startswith("file://") and len(art["sha256"]) == 64, art
        for image in demo["addons"][name]["images"]:
            assert image["archive"]["url"].startswith("file://") and len(image["archive"]["sha256"]) == 64, image
    # Nothing the user's catalog resolves is left unbuilt but what the proxy does not serve.
    # (sigs.k8s.io/cri-tools v1.35.0 is not served here; kubeadm 1.35 does not need crictl.)
    assert set(unbuilt) <= {"kubernetes/crictl"}, unbuilt


def test_go_commands_retry_what_the_proxy_fails_for_now(tmp_path, monkeypatch):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gobuild

    monkeypatch.setattr(gobuild, "PAUSE", 0)
    count = tmp_path / "count"
    fake = tmp_path / "go"
    fake.write_text("#!/bin/sh\necho x >> %s\n[ $(wc -l < %s) -ge 2 ] && { echo built; exit 0; }\n"
                    "echo 'reading https://proxy.golang.org/sumdb/sum.golang.org/lookup/k8s.io/a@v0.1.0: 404 Not Found' >&2\n"
                    "exit 1\n" % (count, count))
    fake.chmod(0o700)
    assert gobuild._run([str(fake), "build"], str(tmp_path), dict(os.environ)) == "built\n"
    assert count.read_text().count("x") == 2
    refused = tmp_path / "refused"
    refused.write_text("#!/bin/sh\necho x >> %s.n\necho '403 Forbidden server response: This module version is not "
                       "available.' >&2\nexit 1\n" % refused)
    refused.chmod(0o700)
    with pytest.raises(gobuild.BuildError, match="not available"):
        gobuild._run([str(refused), "build"], str(tmp_path), dict(os.environ))
    assert (tmp_path / "refused.n").read_text().count("x") == 1
