# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MetalK8s Solution ISOs, built as MetalK8s's tooling builds them (tests/solutions/metalk8s.py:
skopeo dir: images hard-linked, genisoimage, SHA256SUM beside the ISO), through
``validate_archive``, the CLI and the image export."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import images as solution_images
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import k8s, operatordeploy
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.isoread import IsoReader
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.validate import validate_archive
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import metalk8s  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    # build() raises when skopeo or genisoimage is missing: a failure, not a skip
    return metalk8s.build(str(tmp_path_factory.mktemp("metalk8s")), "1.0.0")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def rebuild(tmp_path, built, change):
    """A copy of the built source tree, changed by ``change(src)``, made into an ISO with its SHA256SUM."""
    src = str(tmp_path / "src")
    shutil.copytree(os.path.join(os.path.dirname(built), "src-1.0.0"), src, symlinks=True)
    change(src)
    return metalk8s.build_iso(src, str(tmp_path / os.path.basename(built)), "1.0.0")


def test_a_metalk8s_iso_with_its_sha256sum_is_valid(built):
    s = validate_archive(built)
    assert (s["name"], s["version"], s["flavour"], s["format"]) == ("example-solution", "1.0.0", "metalk8s", "iso")
    assert s["trust"] == {"kind": "sha256sum", "detail": os.path.join(os.path.dirname(built), "SHA256SUM")}
    assert s["display_name"] == "Example Solution" and s["product"]["NAME"] == "example-solution"
    assert s["ui"] == ["ui/deployment.yaml"]
    assert [(i["name"], i["tag"]) for i in s["images"]] == metalk8s.image_list("1.0.0")
    app = os.path.join(os.path.dirname(built), "src-1.0.0", "images", "example-app", "1.0.0", "manifest.json")
    assert {i["digest"] for i in s["images"] if i["name"] == "example-app"} == {"sha256:" + sha256(app)}
    kinds = sorted(d["kind"] for d in s["operator"]["manifests"])
    assert kinds == ["CustomResourceDefinition", "Deployment", "Role", "RoleBinding", "ServiceAccount"]
    deployment = next(d for d in s["operator"]["manifests"] if d["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "example-operator:1.0.0"


def test_the_operator_is_rendered_with_the_repository_it_is_imported_under(built):
    s = validate_archive(built)
    rendered = operatordeploy.rendered_manifests(s, "solutions.mooring.local")
    deployment = next(d for d in rendered if d["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == (
        "solutions.mooring.local/example-solution-1.0.0/example-operator:1.0.0")
    assert "repository.solution.invalid" not in yaml.safe_dump_all(rendered)


def test_its_operator_gets_metalk8s_operator_config(built):
    """The ConfigMap the operator of a MetalK8s archive reads holds
    MetalK8s's OperatorConfig (its apiVersion, only ``repositories``), mooring's own archives keep theirs."""
    s = validate_archive(built)
    available = {"1.0.0": [{"name": n, "tag": t} for n, t in metalk8s.image_list("1.0.0")]}
    objs = k8s.render_solution("prod", s, "solutions.mooring.local", available)
    cm = next(o for o in objs if o["metadata"]["name"] == "example-solution-operator-config")
    assert yaml.safe_load(cm["data"]["operator.yaml"]) == {
        "apiVersion": "solutions.metalk8s.scality.com/v1alpha1",
        "kind": "OperatorConfig",
        "repositories": {"1.0.0": [{
            "endpoint": "solutions.mooring.local/example-solution-1.0.0",
            "images": sorted("%s:%s" % it for it in metalk8s.image_list("1.0.0")),
        }]},
    }
    assert k8s.operator_config("prod", "x", "p", available)["apiVersion"] == "solutions.mooring.io/v1alpha1"


def test_the_cli_accepts_it_beside_its_sha256sum_and_with_sha256sum(built, tmp_path, capsys):
    assert cli.main(["solution", "validate", built]) == 0
    assert "valid solution example-solution 1.0.0 (MetalK8s iso, 3 images, signature absent); trusted by sha256sum" in \
        capsys.readouterr().out
    moved = str(tmp_path / os.path.basename(built))
    shutil.copy(built, moved)
    sums = str(tmp_path / "sums")
    shutil.copy(os.path.join(os.path.dirname(built), "SHA256SUM"), sums)
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(built, alone / os.path.basename(built))
    assert cli.main(["solution", "validate", str(alone / os.path.basename(built)), "--sha256sum", sums]) == 0
    assert "trusted by sha256sum (%s)" % sums in capsys.readouterr().out


def test_one_byte_changed_is_refused(built, tmp_path, capsys):
    copy = tmp_path / os.path.basename(built)
    shutil.copy(built, copy)
    shutil.copy(os.path.join(os.path.dirname(built), "SHA256SUM"), tmp_path / "SHA256SUM")
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    assert cli.main(["solution", "validate", str(copy)]) == 1
    assert "the archive changed after its checksum was made" in capsys.readouterr().err


def test_no_anchor_is_refused_unless_named_as_trusted(built, tmp_path, capsys):
    alone = tmp_path / os.path.basename(built)
    shutil.copy(built, alone)
    assert cli.main(["solution", "validate", str(alone)]) == 1
    assert "no trust anchor" in capsys.readouterr().err
    assert cli.main(["solution", "validate", str(alone), "--trusted-sha256", sha256(built)]) == 0
    assert "trusted by named" in capsys.readouterr().out
    assert cli.main(["solution", "validate", str(alone), "--trusted-sha256", "0" * 64]) == 1
    assert "not the trusted " + "0" * 64 in capsys.readouterr().err


def test_images_as_maps_and_metalk8s_defaults(built, tmp_path):
    maps = rebuild(tmp_path / "maps", built, lambda src: _manifest(src, lambda m: m["spec"].update(
        images=[{"name": n, "tag": t} for n, t in metalk8s.image_list("1.0.0")])))
    assert len(validate_archive(maps)["images"]) == 3

    def defaults(m):
        del m["spec"]["images"], m["spec"]["operator"]
    # MetalK8s's defaults: every image directory; the operator image <name>-operator:<version>
    with pytest.raises(SolutionError) as exc:
        validate_archive(rebuild(tmp_path / "defaults", built, lambda src: _manifest(src, defaults)))
    assert "spec.operator.image: example-solution-operator:1.0.0 is not listed in spec.images" in "\n".join(exc.value.problems)


def _manifest(src, change):
    path = os.path.join(src, "manifest.yaml")
    with open(path) as f:
        data = yaml.safe_load(f)
    change(data)
    with open(path, "w") as f:
        yaml.safe_dump(data, f)


def _append(src, rel, text):
    os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
    with open(os.path.join(src, rel), "a") as f:
        f.write(text)


@pytest.mark.parametrize("change,expected", [
    (lambda src: _append(src, "operator/deploy/operator.yaml", "# {{ lookup('pipe', 'id') }}\n"),
     """operator/deploy/operator.yaml: template expression "{{ lookup('pipe', 'id') }}": only {{ repository }} is rendered"""),
    (lambda src: _append(src, "extra.txt", "x"), "extra.txt: unexpected entry at the archive root"),
    (lambda src: _append(src, "SHA256SUMS", "x"), "SHA256SUMS: unexpected entry at the archive root"),
    (lambda src: _append(src, "operator/other/x.yaml", "a: 1\n"), "operator/other/x.yaml: unexpected file"),
    (lambda src: _manifest(src, lambda m: m["metadata"].update(name="Example")), "manifest.yaml: metadata.name: must be an RFC 1123"),
    (lambda src: _manifest(src, lambda m: m["spec"].update(version="1.0")), "manifest.yaml: spec.version: must be a semantic version"),
    (lambda src: _manifest(src, lambda m: m["spec"]["images"].append("nope:1")),
     "images/nope/1: image nope:1 listed in manifest.yaml spec.images is missing"),
])
def test_what_mooring_refuses_in_a_metalk8s_iso(built, tmp_path, change, expected):
    with pytest.raises(SolutionError) as exc:
        validate_archive(rebuild(tmp_path, built, change))
    assert any(expected in line for line in exc.value.problems), exc.value.problems


def test_a_sample_custom_resource_in_crds_is_carried_not_applied(built, tmp_path):
    cr = "apiVersion: example.solutions.mooring.io/v1\nkind: Example\nmetadata: {name: sample}\n"
    s = validate_archive(rebuild(tmp_path, built, lambda src: _append(src, "operator/deploy/crds/sample_cr.yaml", cr)))
    assert "Example" not in {d["kind"] for d in s["operator"]["manifests"]}
    assert any("a sample custom resource, carried, never applied" in w for w in s["warnings"])


def test_a_public_key_is_for_mooring_signatures_a_required_signature_refuses(built, tmp_path):
    """One solutions_pubkey for a cluster's mooring archives does not stop a MetalK8s import;
    asking for a signature does (a MetalK8s archive has none)."""
    from ansible_collections.mooring.cluster.plugins.module_utils.solutions import build  # noqa: PLC0415

    pub = str(tmp_path / "k.pub")
    build.generate_key(str(tmp_path / "k.pem"), pub)
    assert validate_archive(built, pubkey_path=pub)["trust"]["kind"] == "sha256sum"
    with pytest.raises(SolutionError) as exc:
        validate_archive(built, pubkey_path=pub, require_signature=True)
    assert any("a MetalK8s archive carries no signature" in line for line in exc.value.problems)


def test_export_turns_dir_images_into_oci_archives_for_containerd(built, tmp_path):
    s = validate_archive(built)
    images, changed = solution_images.export_images(built, s, "solutions.mooring.local", str(tmp_path / "out"))
    assert changed and [i["ref"] for i in images] == [
        "solutions.mooring.local/example-solution-1.0.0/%s:%s" % it for it in metalk8s.image_list("1.0.0")]
    assert [i["digest"] for i in images] == [i["digest"] for i in s["images"]]
    assert solution_images.export_images(built, s, "solutions.mooring.local", str(tmp_path / "out"))[1] is False


@pytest.mark.parametrize("depth", [9, 16, 30])
def test_directories_deeper_than_iso9660_with_repeated_names_are_read_at_their_rock_ridge_paths(built, tmp_path, depth):
    """genisoimage moves directories deeper than 8 levels under rr_moved and links them back (Rock Ridge CL/RE);
    pycdlib's own walk loses its way in them when names repeat (it listed 100,000 members at depth 16)."""
    deep = os.path.join("ui", *(["x"] * depth))

    def change(src):
        os.makedirs(os.path.join(src, deep))
        with open(os.path.join(src, deep, "f.txt"), "w") as f:
            f.write("at depth %d\n" % depth)

    iso = rebuild(tmp_path, built, change)
    assert validate_archive(iso)["name"] == "example-solution"
    reader = IsoReader(open(iso, "rb"), iso, os.path.getsize(iso))  # noqa: SIM115 - the reader closes it
    try:
        kinds = {e.path: e.kind for e in reader.entries}
        assert [kinds.get(os.path.join("ui", *(["x"] * n))) for n in range(1, depth + 1)] == ["dir"] * depth
        assert not [p for p in kinds if p.startswith("rr_moved")]
        out = tmp_path / "f.txt"
        with open(out, "wb") as f:
            reader.stream(next(e for e in reader.entries if e.path == os.path.join(deep, "f.txt")), f)
        assert out.read_text() == "at depth %d\n" % depth
    finally:
        reader.close()
