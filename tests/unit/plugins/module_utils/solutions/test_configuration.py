# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MetalK8s's SolutionsConfiguration as input: read (good and bad documents, each bad one refused with
its field), archives identified by their manifest, and the plan of imports and activations."""

from __future__ import annotations

import io
import os
import sys
import tarfile

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import configuration, k8s
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import example  # noqa: E402

HEAD = "apiVersion: solutions.metalk8s.scality.com/v1alpha1\nkind: SolutionsConfiguration\n"


def read(tmp_path, text, name="config.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return configuration.read_configuration(str(path))


def test_a_good_document_is_read_with_paths_made_absolute(tmp_path):
    doc = read(tmp_path, HEAD + "archives:\n  - /srv/a.iso\n  - sub/../b.iso\n  - c.iso\n"
                                "active:\n  example: latest\n  other: 1.2.3-rc.1\n")
    assert doc == {"source": str(tmp_path / "config.yaml"),
                   "archives": ["/srv/a.iso", str(tmp_path / "b.iso"), str(tmp_path / "c.iso")],
                   "active": {"example": "latest", "other": "1.2.3-rc.1"}}


@pytest.mark.parametrize("text", [HEAD, HEAD + "archives: []\nactive: {}\n", HEAD + "archives:\nactive:\n"])
def test_an_empty_document_asks_for_nothing(tmp_path, text):
    assert read(tmp_path, text)["archives"] == [] and read(tmp_path, text)["active"] == {}


@pytest.mark.parametrize("text, problems", [
    ("apiVersion: solutions.mooring.io/v1alpha1\nkind: SolutionsConfiguration\n",
     ["apiVersion: must be one of solutions.metalk8s.scality.com/v1alpha1, not 'solutions.mooring.io/v1alpha1'"]),
    ("apiVersion: solutions.metalk8s.scality.com/v1alpha1\nkind: Solution\n",
     ["kind: must be one of SolutionsConfiguration, not 'Solution'"]),
    ("kind: SolutionsConfiguration\n", ["apiVersion: is missing"]),
    (HEAD + "archives: /srv/a.iso\n", ["archives: must be a list, not a string"]),
    (HEAD + "archives: [/a.iso, 3, '']\n",
     ["archives[1]: must be a non-empty string, not a number", "archives[2]: must be a non-empty string, not a string"]),
    (HEAD + "archives: [/a.iso, /b/../a.iso]\n", ["archives[1]: must name another archive than archives[0], not /a.iso again"]),
    (HEAD + "active: [example]\n", ["active: must be a mapping, not a list"]),
    (HEAD + "active: {example: newest, Other: 1.0.0, third: 1.0}\n",
     ["active.Other: must be keyed by a solution name: an RFC 1123 DNS label",
      "active.example: must be a version (X.Y.Z[-pre][+build]) or latest, not 'newest'",
      "active.third: must be a version (X.Y.Z[-pre][+build]) or latest, not 1.0"]),
    (HEAD + "archive: [/a.iso]\n", ["archive: is not a known field (known: apiVersion, kind, archives, active)"]),
    ("- archives\n", ["(document): must be a mapping with apiVersion, kind, archives and active, not a list"]),
])
def test_a_bad_document_is_refused_one_line_per_problem_naming_its_field(tmp_path, text, problems):
    with pytest.raises(SolutionError) as info:
        read(tmp_path, text)
    where = str(tmp_path / "config.yaml")
    assert len(info.value.problems) == len(problems), info.value.problems
    for got, want in zip(info.value.problems, problems):
        assert got.startswith("%s: %s" % (where, want)), got


@pytest.mark.parametrize("text, message", [
    ("a: [", "is not valid YAML"), ("a: &x 1\nb: *x\n", "aliases (*name) are not allowed here"),
])
def test_unreadable_yaml_is_one_line(tmp_path, text, message):
    with pytest.raises(SolutionError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        read(tmp_path, text)


# -- archives -------------------------------------------------------------------------------


def _tar_with_manifest(path, text):
    with tarfile.open(path, "w") as tar:
        data = text.encode("utf-8")
        info = tarfile.TarInfo("./manifest.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return str(path)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("archives")
    return {v: example.build(str(d), v, fmt="iso" if v == "1.0.0" else "tar") for v in example.VERSIONS}


def test_an_archive_is_identified_by_its_manifest(built, tmp_path):
    path, summary = built["1.0.0"]
    assert configuration.archive_identity(path) == {"name": "example", "version": "1.0.0", "sha256": None}
    assert configuration.archive_identity(built["2.0.0"][0], sha256=True)["sha256"] == built["2.0.0"][1]["archive_sha256"]
    mk = _tar_with_manifest(tmp_path / "mk.tar", "apiVersion: solutions.metalk8s.scality.com/v1alpha1\nkind: Solution\n"
                            "metadata: {name: %s}\nspec: {version: 1.0.0-dev}\n" % ("m" * 63))
    assert configuration.archive_identity(mk)["name"] == "m" * 63


@pytest.mark.parametrize("manifest, message", [
    (None, "manifest.yaml: missing"),
    ("metadata: {name: x}\nspec: {version: '1.0'}\n", "manifest.yaml: spec.version: must be a semantic version"),
    ("metadata: {name: X}\nspec: {version: 1.0.0}\n", "manifest.yaml: metadata.name: must be an RFC 1123 DNS label"),
    ("spec: {version: 1.0.0}\n", "manifest.yaml: metadata: must be a mapping, not nothing"),
    ("a: &x 1\nb: *x\n", "aliases"),
])
def test_an_archive_without_a_readable_name_and_version_is_refused(tmp_path, manifest, message):
    path = tmp_path / "bad.tar"
    if manifest is None:
        with tarfile.open(path, "w") as tar:
            tar.addfile(tarfile.TarInfo("other"), io.BytesIO(b""))
    else:
        _tar_with_manifest(path, manifest)
    with pytest.raises(SolutionError, match=message):
        configuration.archive_identity(str(path))


# -- the plan -------------------------------------------------------------------------------


def _stored(*records, active=None):
    cfg = k8s.load_config("")
    for name, version, path, sha in records:
        cfg = k8s.update_config(cfg, "import", name, version, {"path": path, "sha256": sha})
    for name, version in (active or {}).items():
        cfg = k8s.update_config(cfg, "activate", name, version)
    return cfg


def _doc(archives, active):
    return {"source": "/c.yaml", "archives": archives, "active": active}


def _held(name, version, sha=None):
    return {"name": name, "version": version, "sha256": sha}


def test_plan_imports_what_is_not_recorded_and_resolves_latest_by_semver():
    stored = _stored(("example", "1.9.0", "/a/example-1.9.0.iso", "a" * 64), active={"example": "1.9.0"})
    doc = _doc(["/a/example-1.9.0.iso", "/a/example-1.10.0.iso", "/a/other-0.1.0.iso"],
               {"example": "latest", "other": "0.1.0"})
    contents = {"/a/example-1.9.0.iso": _held("example", "1.9.0"), "/a/example-1.10.0.iso": _held("example", "1.10.0"),
                "/a/other-0.1.0.iso": _held("other", "0.1.0")}
    plan = configuration.plan_configuration(doc, stored, contents)
    assert plan == {"imports": ["/a/example-1.10.0.iso", "/a/other-0.1.0.iso"],
                    "active": {"example": "1.10.0", "other": "0.1.0"},
                    "activate": {"example": "1.10.0", "other": "0.1.0"}}


def test_plan_of_what_is_there_is_empty_and_keeps_imported_versions_for_latest():
    stored = _stored(("example", "2.0.0", "/old/example.iso", "b" * 64), ("example", "1.0.0", "/a/e1.iso", "a" * 64),
                     active={"example": "2.0.0"})
    doc = _doc(["/a/e1.iso"], {"example": "latest"})  # 2.0.0 is imported, though not listed
    plan = configuration.plan_configuration(doc, stored, {"/a/e1.iso": _held("example", "1.0.0")})
    assert plan == {"imports": [], "active": {"example": "2.0.0"}, "activate": {}}


@pytest.mark.parametrize("held, imports", [
    (_held("example", "1.0.0"), []),                       # same path, no sha256 read: imported
    (_held("example", "1.0.0", "a" * 64), []),              # same sha256
    (_held("example", "1.0.0", "c" * 64), ["/a/e1.iso"]),   # rebuilt under the same version: the import refuses it
    (_held("example", "1.1.0"), ["/a/e1.iso"]),             # the file now holds another version
])
def test_plan_compares_by_path_and_by_sha256_where_known(held, imports):
    stored = _stored(("example", "1.0.0", "/a/e1.iso", "a" * 64))
    assert configuration.plan_configuration(_doc(["/a/e1.iso"], {}), stored, {"/a/e1.iso": held})["imports"] == imports


def test_plan_an_archive_moved_is_imported_again_unless_its_sha256_matches():
    stored = _stored(("example", "1.0.0", "/old/e1.iso", "a" * 64))
    doc = _doc(["/new/e1.iso"], {})
    assert configuration.plan_configuration(doc, stored, {"/new/e1.iso": _held("example", "1.0.0")})["imports"] == [
        "/new/e1.iso"]
    assert configuration.plan_configuration(doc, stored, {"/new/e1.iso": _held("example", "1.0.0", "a" * 64)})[
        "imports"] == []


@pytest.mark.parametrize("active, contents, problems", [
    ({"example": "3.0.0"}, {"/a.iso": _held("example", "1.0.0")},
     ["/c.yaml: active.example: must be a version an archive holds (1.0.0), not '3.0.0'"]),
    ({"other": "latest"}, {"/a.iso": _held("example", "1.0.0")},
     ["/c.yaml: active.other: must be a version an archive holds (none holds other), not 'latest'"]),
    ({}, {}, ["/c.yaml: archives[0]: /a.iso was not read: its name and version are unknown"]),
])
def test_plan_refuses_an_active_version_no_archive_holds(active, contents, problems):
    with pytest.raises(SolutionError) as info:
        configuration.plan_configuration(_doc(["/a.iso"], active), _stored(), contents)
    assert info.value.problems == problems


def test_plan_refuses_two_archives_holding_one_version():
    doc = _doc(["/a.iso", "/b.iso"], {"example": "1.0.0"})
    with pytest.raises(SolutionError) as info:
        configuration.plan_configuration(doc, _stored(), {"/a.iso": _held("example", "1.0.0"),
                                                          "/b.iso": _held("example", "1.0.0")})
    assert info.value.problems == [
        "/c.yaml: archives[1]: must hold another version than archives[0], not example 1.0.0 again"]


def test_plan_from_a_file_and_real_archives(built, tmp_path):
    (tmp_path / "iso").mkdir()
    os.symlink(built["1.0.0"][0], tmp_path / "iso" / "example-1.0.0.iso")
    doc = read(tmp_path, HEAD + "archives: [iso/example-1.0.0.iso, %s]\nactive: {example: latest}\n" % built["2.0.0"][0])
    contents = {p: configuration.archive_identity(p) for p in doc["archives"]}
    plan = configuration.plan_configuration(doc, _stored(), contents)
    assert plan["imports"] == [str(tmp_path / "iso" / "example-1.0.0.iso"), built["2.0.0"][0]]
    assert plan["activate"] == {"example": "2.0.0"}
