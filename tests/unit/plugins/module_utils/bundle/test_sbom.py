# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bundle's CycloneDX SBOM: a real bundle built from file:// artifacts (a binary, a release
archive, a manifest, a .deb, container image archives), its SBOM checked with
cyclonedx-python-lib's own validator and against the signed manifest inside the bundle."""

import hashlib
import io
import json
import os
import shutil
import tarfile
import uuid

import pytest
from bundle_testlib import make_deb, make_lock
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as b
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import sbom
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import dump_lock
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main as cli_main

IMAGE_DIGEST = "sha256:" + "ab" * 32
# The package's own files, not artifacts: its record and the flat apt repository index.
NOT_ARTIFACTS = ("package.json", "Packages", "Release")
APT_DEB = []  # the .deb apt_stand_in hands out (made by the fixture)


def sha(data):
    return hashlib.sha256(data).hexdigest()


def make_tgz(path, members):
    with tarfile.open(str(path), "w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return path


def artifact(path, name, kind="binary", arch="amd64", digest=True):
    return {"name": name, "kind": kind, "arch": arch, "url": "file://%s" % path,
            "sha256": sha(path.read_bytes()) if digest else None, "size": None, "dest": path.name}


def make_lock_site(addons):
    return make_lock(addons, "site-a")


@pytest.fixture
def addons(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "tool").write_bytes(b"\x7fELF tool v1" + bytes(range(256)) * 100)
    # A crictl release archive: the install record gives it its own version (1.31.0), not the add-on's.
    crictl = make_tgz(src / "crictl-v1.31.0-linux-amd64.tar.gz", [("crictl", b"\x7fELF crictl")])
    (src / "manifest.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    (src / "hello.tar").write_bytes(b"an oci archive stand-in; the builder does not parse it" * 50)
    (src / "pause.tar").write_bytes(b"another image archive stand-in" * 50)
    deb = make_deb(src, "mooring-test-pkg", "1.2-3")
    (src / "apt").mkdir()
    APT_DEB[:] = [str(make_deb(src / "apt", "mooring-apt-pkg", "1:4.5-6"))]
    return src, {
        "alpha": {"version": "1.0.0", "category": "cri",
                  "artifacts": [artifact(src / "tool", "tool"), artifact(crictl, "crictl", kind="archive")],
                  "images": [{"ref": "localhost/test/hello:1.0", "digest": IMAGE_DIGEST,
                              "archive": {"url": "file://%s" % (src / "hello.tar"),
                                          "sha256": sha((src / "hello.tar").read_bytes()), "format": "oci-archive"}},
                             {"ref": "registry.example/sub/pause:3.10", "digest": None,  # trusted on first use
                              "archive": {"url": "file://%s" % (src / "pause.tar"), "sha256": None,
                                          "format": "docker-archive"}}],
                  "packages": {}},
        "beta": {"version": "2.0.0", "category": "cni",
                 "artifacts": [artifact(src / "manifest.yaml", "manifest", kind="manifest", arch="all"),
                               artifact(deb, "mooring-test-pkg", kind="deb")],
                 "images": [], "packages": {"debian": ["mooring-test-pkg", "mooring-apt-pkg"]}},
    }


def apt_stand_in(names, dest):
    """Stands in for `apt-get download` (no Debian archive is reachable from unit tests): drops the real .deb
    the fixture made, under apt's file name for it."""
    assert list(names) == ["mooring-apt-pkg"]
    shutil.copy(APT_DEB[0], os.path.join(dest, "mooring-apt-pkg_1%3a4.5-6_all.deb"))


def build(tmp_path, lock, out="out.bundle", **kw):
    kw.setdefault("apt_download", apt_stand_in)
    return b.build_bundle(lock, str(tmp_path / out), key_path=str(tmp_path / "k" / "s.key"),
                          cache_dir=str(tmp_path / "cache"), **kw)


def signed_manifest(bundle_path):
    with tarfile.open(bundle_path) as tar:
        return json.loads(tar.extractfile("bundle.json").read())


def walk(components):
    for component in components:
        yield component
        yield from walk(component.get("components") or [])


def props(component):
    return {p["name"]: p["value"] for p in component.get("properties") or []}


def test_sbom_lists_every_artifact_and_validates(tmp_path, addons):
    src, spec = addons
    lock = make_lock_site(spec)
    result = build(tmp_path, lock)
    path = str(tmp_path / "out.bundle.cdx.json")
    assert result["sbom"] == path and result["sbom_changed"] and os.path.isfile(path)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None  # the library's own validator
    doc = json.loads(text)
    assert (doc["bomFormat"], doc["specVersion"], doc["version"]) == ("CycloneDX", "1.6", 1)
    assert doc["serialNumber"] == "urn:uuid:%s" % uuid.uuid5(sbom.SERIAL_NAMESPACE, result["id"])
    assert "timestamp" not in doc["metadata"]
    root = doc["metadata"]["component"]
    assert (root["name"], root["version"], root["type"]) == ("site-a", result["id"], "file")
    assert props(root)["mooring:lock:digest"] == lock["digest"] and props(root)["mooring:signer"] == result["signer"]
    tools = {t["name"]: t for t in doc["metadata"]["tools"]["components"]}
    assert tools["mooring.cluster"]["version"] == sbom.tool_version() and "cyclonedx-python-lib" in tools

    manifest = signed_manifest(str(tmp_path / "out.bundle"))
    components = {c["bom-ref"]: c for c in walk(doc["components"])}
    # Every add-on package, with the sha256 of its tar as the signed manifest has it.
    for name, package in manifest["packages"].items():
        addon = components["addon:%s" % name]
        assert addon["version"] == spec[name]["version"]
        assert addon["hashes"] == [{"alg": "SHA-256", "content": package["sha256"]}]
        assert props(addon)["mooring:path"] == package["file"]
        # Every artifact of the package (every file but its own index files), nested in its add-on.
        artifacts = [f for f in package["files"] if f["path"].rsplit("/", 1)[-1] not in NOT_ARTIFACTS]
        nested = {c["bom-ref"] for c in addon.get("components") or []}
        assert nested == {"file:%s" % f["path"] for f in artifacts}
        for entry in artifacts:
            component = components["file:%s" % entry["path"]]
            assert component["hashes"] == [{"alg": "SHA-256", "content": entry["sha256"]}]
            assert props(component)["mooring:addon"] == name
    assert len(components) == 2 + 7  # alpha: tool, crictl, 2 images; beta: manifest, 2 debs
    # Every URL of the lock (artifacts and image archives) is a distribution reference, with its sha256.
    by_url = {}
    for component in components.values():
        for ref in component.get("externalReferences") or []:
            assert ref["type"] == "distribution"
            by_url[ref["url"]] = component
    for addon in spec.values():
        for art in addon["artifacts"]:
            assert by_url[art["url"]]["hashes"][0]["content"] == art["sha256"]
        for image in addon["images"]:
            archive = image["archive"]["url"][len("file://"):]
            with open(archive, "rb") as handle:
                assert by_url[image["archive"]["url"]]["hashes"][0]["content"] == sha(handle.read())

    tool = components["file:alpha/bin/amd64/tool"]
    assert (tool["type"], tool["name"], tool["version"]) == ("application", "tool", "1.0.0")
    assert tool["purl"] == "pkg:generic/tool@1.0.0?arch=amd64&checksum=sha256:%s" % spec["alpha"]["artifacts"][0]["sha256"]
    crictl = components["file:alpha/archives/amd64/crictl-v1.31.0-linux-amd64.tar.gz"]
    assert (crictl["type"], crictl["version"]) == ("file", "1.31.0")
    deb = components["file:beta/debs/mooring-test-pkg_1.2-3_all.deb"]
    assert (deb["type"], deb["name"], deb["version"]) == ("library", "mooring-test-pkg", "1.2-3")
    assert deb["purl"] == "pkg:deb/debian/mooring-test-pkg@1.2-3?arch=all"
    apt = components["file:beta/debs/mooring-apt-pkg_1%3a4.5-6_all.deb"]
    assert apt["purl"] == "pkg:deb/debian/mooring-apt-pkg@1:4.5-6?arch=all" and props(apt)["mooring:source"] == "apt"
    assert "externalReferences" not in apt  # fetched by apt: no URL in the lock
    hello = components["file:alpha/images/localhost_test_hello_1.0.oci-archive.tar"]
    assert (hello["type"], hello["name"], hello["version"]) == ("container", "localhost/test/hello", "1.0")
    assert hello["purl"] == "pkg:oci/hello@sha256:%s?repository_url=localhost/test/hello&tag=1.0" % ("ab" * 32)
    pause = components["file:alpha/images/registry.example_sub_pause_3.10.docker-archive.tar"]
    assert pause["purl"] == "pkg:oci/pause?repository_url=registry.example/sub/pause&tag=3.10"
    assert props(pause)["mooring:trustedOnFirstUse"] == "true" and "mooring:trustedOnFirstUse" not in props(hello)
    # The dependency graph: bundle -> add-ons -> artifacts.
    deps = {d["ref"]: set(d.get("dependsOn") or []) for d in doc["dependencies"]}
    assert deps[root["bom-ref"]] == {"addon:alpha", "addon:beta"}
    assert deps["addon:beta"] == {c["bom-ref"] for c in components["addon:beta"]["components"]}


def test_rebuild_leaves_sbom_untouched_and_restores_a_deleted_one(tmp_path, addons):
    _src, spec = addons
    first = build(tmp_path, make_lock_site(spec))
    path = tmp_path / "out.bundle.cdx.json"
    content, st = path.read_bytes(), os.stat(str(path))
    again = build(tmp_path, make_lock_site(spec))
    assert not again["changed"] and not again["sbom_changed"] and again["sbom"] == str(path)
    st2 = os.stat(str(path))
    assert (st2.st_ino, st2.st_mtime_ns) == (st.st_ino, st.st_mtime_ns) and path.read_bytes() == content
    # Only the SBOM missing: it is written again, identical; the bundle is left alone.
    bundle_st = os.stat(str(tmp_path / "out.bundle"))
    path.unlink()
    third = build(tmp_path, make_lock_site(spec))
    assert third["changed"] and third["sbom_changed"] and third["id"] == first["id"]
    assert path.read_bytes() == content
    assert os.stat(str(tmp_path / "out.bundle")).st_mtime_ns == bundle_st.st_mtime_ns


def test_sbom_is_reproducible_from_a_cold_cache(tmp_path, addons):
    _src, spec = addons
    build(tmp_path, make_lock_site(spec), out="one.bundle")
    shutil.rmtree(str(tmp_path / "cache"))
    build(tmp_path, make_lock_site(spec), out="two.bundle")
    assert (tmp_path / "one.bundle.cdx.json").read_bytes() == (tmp_path / "two.bundle.cdx.json").read_bytes()


def test_check_mode_writes_no_sbom(tmp_path, addons):
    _src, spec = addons
    predicted = build(tmp_path, make_lock_site(spec), check_mode=True)
    assert predicted["changed"] and predicted["sbom_changed"] and predicted["sbom"] == str(tmp_path / "out.bundle.cdx.json")
    assert not (tmp_path / "out.bundle.cdx.json").exists() and not (tmp_path / "out.bundle").exists()
    build(tmp_path, make_lock_site(spec))
    assert not build(tmp_path, make_lock_site(spec), check_mode=True)["changed"]
    (tmp_path / "out.bundle.cdx.json").unlink()
    checked = build(tmp_path, make_lock_site(spec), check_mode=True)
    assert checked["changed"] and checked["sbom_changed"]
    assert not (tmp_path / "out.bundle.cdx.json").exists()


def test_validation_failure_is_an_error(tmp_path, addons):
    _src, spec = addons
    build(tmp_path, make_lock_site(spec))
    good = json.loads((tmp_path / "out.bundle.cdx.json").read_text())
    sbom.validate(json.dumps(good))
    bad = json.loads(json.dumps(good))
    bad["components"][0]["hashes"][0]["content"] = "not a digest"
    with pytest.raises(sbom.SbomError, match=r"^SBOM: not valid CycloneDX 1\.6 JSON at /components/0/hashes/0/content: "):
        sbom.validate(json.dumps(bad))
    bad = dict(good, bomFormat="SPDX")
    with pytest.raises(MooringError, match="at /bomFormat"):
        sbom.validate(json.dumps(bad).encode("utf-8"))
    with pytest.raises(sbom.SbomError, match="not JSON"):
        sbom.validate(b"{not json")


def test_sbom_refused_by_the_validator_writes_nothing(tmp_path, addons, monkeypatch):
    _src, spec = addons
    real_render = sbom.render

    def corrupting_render(manifest, bundle_id, packages):
        """Stands in for a library that emits a BOM its own schema refuses (the real one does not)."""
        doc = json.loads(real_render(manifest, bundle_id, packages))
        doc["metadata"]["component"]["type"] = "bundle"
        data = json.dumps(doc).encode("utf-8")
        sbom.validate(data, "bundle %s: SBOM" % bundle_id[:16])
        return data

    monkeypatch.setattr(sbom, "render", corrupting_render)
    with pytest.raises(sbom.SbomError, match=r"SBOM: not valid CycloneDX 1\.6 JSON at /metadata/component/type"):
        build(tmp_path, make_lock_site(spec))
    assert not (tmp_path / "out.bundle").exists() and not (tmp_path / "out.bundle.cdx.json").exists()


def test_missing_library_names_the_pip_package_and_writes_nothing(tmp_path, addons, monkeypatch):
    _src, spec = addons
    # Stands in for a controller without the library (it is installed here).
    monkeypatch.setattr(sbom, "HAS_CYCLONEDX", False)
    monkeypatch.setattr(sbom, "CYCLONEDX_IMPORT_ERROR", ImportError("No module named 'cyclonedx'"))
    with pytest.raises(sbom.SbomError, match=r"pip install 'cyclonedx-python-lib'"):
        build(tmp_path, make_lock_site(spec))
    assert sorted(os.listdir(str(tmp_path))) == ["src"]


def test_source_date_epoch(tmp_path, addons, monkeypatch):
    _src, spec = addons
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    build(tmp_path, make_lock_site(spec))
    doc = json.loads((tmp_path / "out.bundle.cdx.json").read_text())
    assert doc["metadata"]["timestamp"].startswith("2023-11-14T22:13:20")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(sbom.SbomError, match="SOURCE_DATE_EPOCH='yesterday'"):
        build(tmp_path, make_lock_site(spec), out="other.bundle")
    assert not (tmp_path / "other.bundle").exists()


def test_sbom_path_taken_by_a_directory_is_refused_first(tmp_path, addons):
    _src, spec = addons
    (tmp_path / "out.bundle.cdx.json").mkdir()
    with pytest.raises(b.BundleError, match="its SBOM path .*out.bundle.cdx.json exists and is not a regular file"):
        build(tmp_path, make_lock_site(spec))
    assert not (tmp_path / "cache").exists() and not (tmp_path / "k").exists()


def test_urls_a_uri_cannot_hold_are_encoded(tmp_path):
    odd = tmp_path / "src" / "odd%zz#a#b|x"
    odd.parent.mkdir()
    odd.write_bytes(b"odd")
    lock = make_lock_site({"gamma": {"version": "0.1.0", "category": "other", "images": [], "packages": {},
                                     "artifacts": [dict(artifact(odd, "odd", kind="manifest", arch="all"), dest="odd")]}})
    build(tmp_path, lock)
    doc = json.loads((tmp_path / "out.bundle.cdx.json").read_text())
    component = next(c for c in walk(doc["components"]) if c["bom-ref"] == "file:gamma/manifests/odd")
    assert component["externalReferences"][0]["url"] == "file://%s/odd%%25zz#a%%23b%%7Cx" % odd.parent
    assert sbom.uri("https://dl.k8s.io/v1.31.4/bin/linux/amd64/kubeadm") == "https://dl.k8s.io/v1.31.4/bin/linux/amd64/kubeadm"
    assert sbom.uri("http://[::1]:8088/a%41") == "http://[::1]:8088/a%41"


def test_cli_prints_the_sbom(tmp_path, addons, capsys, monkeypatch):
    _src, spec = addons
    spec["beta"]["packages"] = {"debian": ["mooring-test-pkg"]}  # no apt-get download from the CLI test
    lock_path = tmp_path / "installer.lock.yaml"
    lock_path.write_text(dump_lock(make_lock_site(spec)))
    monkeypatch.setenv("MOORING_CACHE_DIR", str(tmp_path / "cc"))
    out = str(tmp_path / "cli.bundle")
    argv = ["bundle", "build", str(lock_path), "-o", out, "--key", str(tmp_path / "cli" / "s.key"), "-q"]
    assert cli_main(argv) == 0
    assert "%s.cdx.json: written (CycloneDX 1.6 SBOM)" % out in capsys.readouterr().out
    assert cli_main(argv) == 0
    assert "%s.cdx.json: unchanged" % out in capsys.readouterr().out
    assert cli_main(argv + ["--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["sbom"] == out + ".cdx.json" and result["sbom_changed"] is False
