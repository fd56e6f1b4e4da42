# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""skopeo dir: images (MetalK8s's image format): checks, export to an OCI archive, the ISO reader.

The images are made with the real skopeo, hard-linked with hardlink and put in an ISO with
genisoimage (tests/solutions/metalk8s.py), as MetalK8s's build does. Those tests need the Debian
packages skopeo, genisoimage and util-linux, and are skipped, naming what is missing, without them.
The checks run through a minimal validation object (files, read, digest, bad) over a tree or an archive.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import images as solution_images
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import skopeodir
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.archive import open_archive
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import Entry, SolutionError, unpacked_budget
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.oci import ImageChecks

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import example  # noqa: E402
import metalk8s  # noqa: E402


@pytest.fixture()
def tools():
    """Not a skip: `make setup` installs these tools, and a test that skips in CI proves nothing."""
    metalk8s.require_tools()


needs_tools = pytest.mark.usefixtures("tools")
APP = "images/example-app/1.0.0"
IMAGES = metalk8s.image_list("1.0.0")


class Files(ImageChecks):
    """What the validation gives ImageChecks (files, read, digest, bad) over ``data`` ({path: bytes})."""

    def __init__(self, data):
        self.data = data
        self.files = {p: Entry(p, "file", len(b)) for p, b in data.items()}
        self.problems = []

    @classmethod
    def tree(cls, root):
        data = {}
        for dirpath, _dirs, names in os.walk(root):
            for name in names:
                full = os.path.join(dirpath, name)
                with open(full, "rb") as f:
                    data[os.path.relpath(full, root).replace(os.sep, "/")] = f.read()
        return cls(data)

    @classmethod
    def archive(cls, path):
        reader = open_archive(path)
        try:
            data = {}
            for e in reader.entries:
                if e.kind == "file":
                    buf = io.BytesIO()
                    reader.stream(e, buf)
                    data[e.path] = buf.getvalue()
            return cls(data)
        finally:
            reader.close()

    def bad(self, path, message):
        self.problems.append("%s: %s" % (path, message))

    def read(self, path, limit):
        if len(self.data[path]) > limit:
            self.bad(path, "%d bytes, more than the limit of %d" % (len(self.data[path]), limit))
            return None
        return self.data[path]

    def digest(self, path):
        return hashlib.sha256(self.data[path]).hexdigest()


def normalised(images, flavour="metalk8s"):
    """The part of a normalised manifest ImageChecks.images reads."""
    return {"flavour": flavour, "spec": {"images": [{"name": n, "tag": t} for n, t in images]}}


def manifest_digest(root, image=APP):
    with open(os.path.join(root, image, "manifest.json"), "rb") as f:
        return "sha256:" + hashlib.sha256(f.read()).hexdigest()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    metalk8s.require_tools()
    root = tmp_path_factory.mktemp("dirimages")
    metalk8s.write_dir_images(str(root / "images"), "1.0.0")
    return str(root)


@pytest.fixture
def tree(pristine, tmp_path):
    dest = str(tmp_path / "tree")
    shutil.copytree(pristine, dest)
    return dest


@pytest.fixture(scope="module")
def iso(tmp_path_factory):
    return metalk8s.build(str(tmp_path_factory.mktemp("iso")), "1.0.0")


# -- a real skopeo dir: image ------------------------------------------------------------
@needs_tools
def test_skopeo_dir_images_validate_with_skopeos_digest(tree):
    files = Files.tree(tree)
    digests = files.images(normalised(IMAGES))
    assert files.problems == []
    assert sorted(digests) == sorted(IMAGES)
    for name, tag in IMAGES:
        out = subprocess.run(["skopeo", "inspect", "dir:%s/images/%s/%s" % (tree, name, tag)],
                             check=True, capture_output=True, text=True).stdout
        assert digests[(name, tag)] == json.loads(out)["Digest"] == manifest_digest(tree, "images/%s/%s" % (name, tag))
    assert Files.tree(tree).dir_image(APP) == manifest_digest(tree)


@needs_tools
def test_oci_manifests_in_dir_images_validate_and_export(tmp_path):
    """skopeo's dir: with ``--format oci`` (OCI image manifests) in a MetalK8s ISO: valid, and
    exported to containerd's OCI archives as they are."""
    iso = metalk8s.build(str(tmp_path), "1.0.0", manifest_format="oci")
    files = Files.archive(iso)
    assert json.loads(files.data[APP + "/manifest.json"])["config"]["mediaType"] == \
        "application/vnd.oci.image.config.v1+json"
    digests = files.images(normalised(IMAGES))
    assert files.problems == []
    assert digests[("example-app", "1.0.0")] == "sha256:" + files.digest(APP + "/manifest.json")
    summary = {"name": "example", "version": "1.0.0", "flavour": "metalk8s",
               "images": [{"name": n, "tag": t, "digest": digests[(n, t)]} for n, t in IMAGES]}
    exported, _changed = solution_images.export_images(iso, summary, "registry.local:5000", str(tmp_path / "out"))
    assert len(exported) == len(IMAGES)
    for img in exported:
        with tarfile.open(img["file"]) as tar:
            desc = json.load(tar.extractfile("index.json"))["manifests"][0]
        assert desc["digest"] == img["digest"] and desc["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
        raw = subprocess.run(["skopeo", "inspect", "--raw", "oci-archive:" + img["file"]],
                             check=True, capture_output=True).stdout
        assert raw == files.data["images/%s/%s/manifest.json" % (img["name"], img["tag"])]


@needs_tools
def test_the_fixture_hard_links_shared_blobs(pristine):
    app, alias = os.path.join(pristine, APP), os.path.join(pristine, "images/example-app/latest")
    for name in os.listdir(app):
        assert os.path.samefile(os.path.join(app, name), os.path.join(alias, name))


def _path(tree, rel):
    return os.path.join(tree, APP, rel)


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _manifest(tree):
    with open(_path(tree, "manifest.json"), "rb") as f:
        return json.loads(f.read())


def _blob(tree, which):
    man = _manifest(tree)
    desc = man["config"] if which == "config" else man["layers"][0]
    return _path(tree, desc["digest"].split(":", 1)[1])


def _rewrite_config(tree, fn):
    """Replace the config blob by ``fn(config)`` (a new blob, the manifest pointing at it)."""
    man = _manifest(tree)
    with open(_blob(tree, "config"), "rb") as f:
        config = json.loads(f.read())
    os.unlink(_blob(tree, "config"))
    data = json.dumps(fn(config)).encode()
    digest = hashlib.sha256(data).hexdigest()
    _write(_path(tree, digest), data)
    man["config"].update(digest="sha256:" + digest, size=len(data))
    _write(_path(tree, "manifest.json"), json.dumps(man).encode())


def _without(config, key):
    config.pop(key)
    return config


def _same_size_other_content(path):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[-1] ^= 0xFF
    os.unlink(path)  # the blob may be a hard link: never write through it
    _write(path, bytes(data))


def _grow(path):
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    _write(path, data + b"x")


def _set_manifest(tree, **fields):
    man = _manifest(tree)
    man.update(fields)
    os.unlink(_path(tree, "manifest.json"))
    _write(_path(tree, "manifest.json"), json.dumps(man).encode())


LIST = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.list.v2+json",
        "manifests": [{"mediaType": "application/vnd.docker.distribution.manifest.v2+json", "size": 1,
                       "digest": "sha256:" + "0" * 64, "platform": {"architecture": "amd64", "os": "linux"}}]}
INDEX = {"schemaVersion": 2, "manifests": LIST["manifests"]}

BROKEN = [
    ("version-missing", lambda t: os.unlink(_path(t, "version")), [APP + "/version: missing"]),
    ("version-text", lambda t: _write(_path(t, "version"), b"Directory Transport Version: 2.0\n"),
     [APP + "/version: must be 'Directory Transport Version: 1.<digits>' and a newline, not 'Directory Transport"]),
    ("version-no-newline", lambda t: _write(_path(t, "version"), b"Directory Transport Version: 1.1"),
     [APP + "/version: must be"]),
    ("version-too-long", lambda t: _write(_path(t, "version"), b"Directory Transport Version: 1.1\n" + b" " * 64),
     [APP + "/version: 97 bytes, more than the limit of 64"]),
    ("manifest-missing", lambda t: os.unlink(_path(t, "manifest.json")), [APP + "/manifest.json: missing"]),
    ("manifest-not-json", lambda t: _write(_path(t, "manifest.json"), b"{nope"), [APP + "/manifest.json: not valid JSON"]),
    ("manifest-not-object", lambda t: _write(_path(t, "manifest.json"), b"[]"),
     [APP + "/manifest.json: an image manifest must be a JSON object"]),
    ("manifest-schema-1", lambda t: _set_manifest(t, schemaVersion=1), [APP + "/manifest.json: schemaVersion must be 2"]),
    ("manifest-media-type", lambda t: _set_manifest(t, mediaType="text/plain"),
     [APP + "/manifest.json: mediaType 'text/plain' is not one of"]),
    ("manifest-list", lambda t: _write(_path(t, "manifest.json"), json.dumps(LIST).encode()),
     [APP + "/manifest.json: a manifest list (image index) is not a dir: image; copy one platform"]),
    ("oci-index", lambda t: _write(_path(t, "manifest.json"), json.dumps(INDEX).encode()),
     [APP + "/manifest.json: a manifest list"]),
    ("config-missing", lambda t: os.unlink(_blob(t, "config")),
     ["blob referenced by %s/manifest.json (config) is missing" % APP]),
    ("layer-missing", lambda t: os.unlink(_blob(t, "layer")),
     ["blob referenced by %s/manifest.json (layers[0]) is missing" % APP]),
    ("layer-size", lambda t: _grow(_blob(t, "layer")), ["size is", "the descriptor in %s/manifest.json says" % APP]),
    ("layer-digest", lambda t: _same_size_other_content(_blob(t, "layer")), ["content does not match its digest"]),
    ("config-no-os", lambda t: _rewrite_config(t, lambda c: _without(c, "os")),
     ["an image config must be a JSON object with architecture and os"]),
    ("config-no-arch", lambda t: _rewrite_config(t, lambda c: _without(c, "architecture")), ["with architecture and os"]),
    ("extra-file", lambda t: _write(_path(t, "signature-1"), b"sig"),
     [APP + "/signature-1: not referenced by %s/manifest.json" % APP]),
    ("extra-blob", lambda t: _write(_path(t, "0" * 64), b""), [APP + "/" + "0" * 64 + ": not referenced by"]),
    ("nested-file", lambda t: (os.makedirs(_path(t, "sub")), _write(_path(t, "sub/x"), b"x")),
     [APP + "/sub/x: unexpected file under images/ (expected images/<name>/<tag>/ directories in skopeo's dir: format)"]),
    ("file-above-tag", lambda t: _write(os.path.join(t, "images/example-app/notes"), b"x"),
     ["images/example-app/notes: unexpected file under images/"]),
    ("unlisted-image", lambda t: shutil.copytree(os.path.join(t, APP), os.path.join(t, "images/other/1.0.0")),
     ["images/other/1.0.0: image not listed in manifest.yaml spec.images"]),
    ("listed-image-missing", lambda t: shutil.rmtree(os.path.join(t, APP)),
     [APP + ": image example-app:1.0.0 listed in manifest.yaml spec.images is missing"]),
]


@needs_tools
@pytest.mark.parametrize("case, mutate, expected", BROKEN, ids=[c[0] for c in BROKEN])
def test_broken_dir_image_is_refused_with_its_path(case, mutate, expected, tree):
    mutate(tree)
    files = Files.tree(tree)
    digests = files.images(normalised(IMAGES))
    text = "\n".join(files.problems)
    for part in expected:
        assert part in text, (case, files.problems)
    assert all(p.startswith("images/") for p in files.problems), files.problems
    assert ("example-operator", "1.0.0") in digests  # the other images stay good
    if case not in ("unlisted-image", "nested-file", "file-above-tag"):
        assert ("example-app", "1.0.0") not in digests


@needs_tools
def test_without_a_manifest_the_files_say_the_format(tree):
    _write(os.path.join(tree, "images", "stray"), b"x")
    files = Files.tree(tree)
    assert files.images(None) == {}
    assert files.problems == ["images/stray: %s" % skopeodir.DirImageChecks.dir_unexpected]


def test_oci_layouts_keep_their_checks(tmp_path):
    src = example.write_source(str(tmp_path / "src"), "1.0.0")
    for manifest in (normalised([(i, "1.0.0") for i in example.IMAGES], "mooring"),
                     {"spec": {"images": [{"name": i, "tag": "1.0.0"} for i in example.IMAGES]}}):
        files = Files.tree(src)
        assert sorted(files.images(manifest)) == [("example-app", "1.0.0"), ("example-operator", "1.0.0")]
        assert files.problems == []
    files = Files.tree(src)
    files.images(None)
    assert files.problems == []


def test_image_dirs_and_flavour():
    paths = ["manifest.yaml", "images/a/1/manifest.json", "images/a/1/version", "images/a/2/" + "0" * 64,
             "images/b/x/version", "images/c/1/sub/file", "images/d", "images/e/f", "operator/deploy/x.yaml"]
    assert skopeodir.image_dirs(paths) == [("a", "1"), ("a", "2"), ("b", "x")]
    assert skopeodir.image_flavour(paths) == "metalk8s"
    assert skopeodir.image_flavour(["images/a/1/index.json", "images/a/1/blobs/sha256/" + "0" * 64]) == "mooring"
    assert skopeodir.image_flavour(["manifest.yaml"]) == "mooring"
    assert skopeodir.dir_image_key("images/a/1/manifest.json") == ("a", "1")
    assert skopeodir.dir_image_key("images//1/x") is None


# -- the ISO as MetalK8s builds it --------------------------------------------------------
@needs_tools
def test_iso_lists_hard_linked_blobs_as_regular_files(iso):
    src = os.path.join(os.path.dirname(iso), "src-1.0.0")
    files = Files.archive(iso)
    on_disk = Files.tree(src)
    assert files.data == on_disk.data  # every file, hard-linked or not, with its content
    linked = [p for p in files.data if p.startswith("images/example-app/latest/")]
    assert len(linked) == 4 and all(os.stat(os.path.join(src, p)).st_nlink >= 2 for p in linked)
    digests = files.images(normalised(IMAGES))
    assert files.problems == [] and sorted(digests) == sorted(IMAGES)
    with open(iso, "rb") as f:
        expected = "%s  %s\n" % (hashlib.sha256(f.read()).hexdigest(), os.path.basename(iso))
    with open(os.path.join(os.path.dirname(iso), "SHA256SUM")) as f:
        assert f.read() == expected


def _iso_with_links(tmp_path, links, size):
    """An ISO of one ``size``-byte file under ``links`` names (hard links)."""
    folder = tmp_path / "root" / "images" / "big" / "1"
    folder.mkdir(parents=True)
    (folder / "0").write_bytes(hashlib.sha256(b"seed").digest() * (size // 32))
    for i in range(1, links):
        os.link(folder / "0", folder / str(i))
    return metalk8s.build_iso(str(tmp_path / "root"), str(tmp_path / "links.iso"), "1.0.0")


@needs_tools
def test_iso_hard_links_count_once_against_the_image_size(tmp_path):
    out = _iso_with_links(tmp_path, 4, 1024 * 1024)
    assert os.path.getsize(out) < 3 * 1024 * 1024  # the four names hold 4 MiB, the image far less
    files = Files.archive(out)
    assert len(files.data) == 4 and len(set(files.data.values())) == 1


@needs_tools
def test_iso_hard_links_past_the_budget_are_refused(tmp_path):
    size = 128 * 1024
    out = _iso_with_links(tmp_path, 700, size)  # 87.5 MiB by name in an image of less than 1 MiB
    budget = unpacked_budget(os.path.getsize(out))
    assert budget < 700 * size
    with pytest.raises(SolutionError, match="the files up to here hold %d bytes .*more than the %d bytes"
                       % ((budget // size + 1) * size, budget)):
        open_archive(out)


# -- export for containerd, checked with skopeo -------------------------------------------
@needs_tools
def test_export_turns_dir_images_into_oci_archives(iso, tmp_path):
    files = Files.archive(iso)
    digests = files.images(normalised(IMAGES))
    summary = {"name": "example", "version": "1.0.0", "flavour": "metalk8s",
               "images": [{"name": n, "tag": t, "digest": digests[(n, t)]} for n, t in IMAGES]}
    dest = str(tmp_path / "export")
    images, changed = solution_images.export_images(iso, summary, "registry.local:5000", dest)
    assert changed
    assert [i["ref"] for i in images] == ["registry.local:5000/example-1.0.0/%s:%s" % i for i in IMAGES]
    for img in images:
        root = "images/%s/%s/" % (img["name"], img["tag"])
        raw = subprocess.run(["skopeo", "inspect", "--raw", "oci-archive:" + img["file"]],
                             check=True, capture_output=True).stdout
        assert raw == files.data[root + "manifest.json"]
        out = str(tmp_path / "copy" / img["name"] / img["tag"])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run(["skopeo", "--insecure-policy", "copy", "--quiet", "oci-archive:" + img["file"], "dir:" + out],
                       check=True)
        copied = Files.tree(out)
        assert "sha256:" + copied.digest("manifest.json") == img["digest"]
        assert {p: b for p, b in copied.data.items() if p != "version"} == \
            {p[len(root):]: b for p, b in files.data.items() if p.startswith(root) and not p.endswith("/version")}
        with tarfile.open(img["file"]) as tar:
            index = json.load(tar.extractfile("index.json"))
            assert sorted(tar.getnames())[-2:] == ["index.json", "oci-layout"]
        desc = index["manifests"][0]
        assert desc["digest"] == img["digest"] and desc["mediaType"] == "application/vnd.docker.distribution.manifest.v2+json"
        assert desc["annotations"] == {"io.containerd.image.name": img["ref"], "org.opencontainers.image.ref.name": img["tag"]}
    again, changed2 = solution_images.export_images(iso, summary, "registry.local:5000", dest)
    assert not changed2 and again == images
