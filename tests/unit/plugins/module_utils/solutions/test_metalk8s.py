# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MetalK8s's Solution manifest, product.txt and ``{{ repository }}`` (solutions/metalk8s.py)."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import metalk8s

# As scality/metalk8s-solution-example's manifest.py writes one (images as a set of "name:tag").
MANIFEST = {
    "apiVersion": "solutions.metalk8s.scality.com/v1alpha1",
    "kind": "Solution",
    "metadata": {
        "name": "example-solution",
        "labels": {},
        "annotations": {
            "solutions.metalk8s.scality.com/display-name": "Example Solution",
            "solutions.metalk8s.scality.com/build-timestamp": "2026-11-29T06:00:00Z",
            "solutions.metalk8s.scality.com/development-release": "0",
        },
    },
    "spec": {
        "images": ["base-server:1.0.0", "example-solution-operator:1.0.0"],
        "operator": {"image": {"name": "example-solution-operator", "tag": "1.0.0"}, "metrics": {"enabled": True}},
        "version": "1.0.0",
    },
}
DIRS = [("base-server", "1.0.0"), ("example-solution-operator", "1.0.0")]


def problems(data):
    warnings = []
    return metalk8s.MetalK8sManifestShape().problems(data, warnings), warnings


def test_the_example_manifest_is_accepted_and_normalised():
    found, warnings = problems(MANIFEST)
    assert found == [] and warnings == []
    n = metalk8s.normalise(MANIFEST, DIRS)
    assert n["flavour"] == "metalk8s"
    assert n["metadata"]["display_name"] == "Example Solution"
    assert n["spec"]["images"] == [{"name": "base-server", "tag": "1.0.0"},
                                   {"name": "example-solution-operator", "tag": "1.0.0"}]
    assert n["spec"]["operator"]["image"] == {"name": "example-solution-operator", "tag": "1.0.0"}


def test_images_as_maps_and_listed_twice():
    data = copy.deepcopy(MANIFEST)
    data["spec"]["images"] = [{"name": "base-server", "tag": "1.0.0"}, "base-server:1.0.0",
                              {"name": "example-solution-operator", "tag": "1.0.0"}]
    assert problems(data)[0] == []
    assert [i["name"] for i in metalk8s.normalise(data, DIRS)["spec"]["images"]] == [
        "base-server", "example-solution-operator"]


def test_metalk8s_defaults_when_images_and_operator_are_absent():
    data = copy.deepcopy(MANIFEST)
    del data["spec"]["images"], data["spec"]["operator"]
    assert problems(data)[0] == []
    n = metalk8s.normalise(data, [("b", "2"), ("a", "1")])
    assert n["spec"]["images"] == [{"name": "a", "tag": "1"}, {"name": "b", "tag": "2"}]
    assert n["spec"]["operator"]["image"] == {"name": "example-solution-operator", "tag": "1.0.0"}


def test_keys_metalk8s_ignores_are_carried_and_named():
    data = copy.deepcopy(MANIFEST)
    data["spec"]["somethingNew"] = 1
    data["status"] = {}
    found, warnings = problems(data)
    assert found == []
    assert "manifest.yaml: spec.somethingNew: carried, not used by mooring" in warnings
    assert "manifest.yaml: status: carried, not used by mooring" in warnings


@pytest.mark.parametrize("path,value,field", [
    (("kind",), "Solutions", "kind"),
    (("metadata", "name"), "Example", "metadata.name"),
    (("metadata", "name"), "x" * 64, "metadata.name"),
    (("metadata", "name"), "-x", "metadata.name"),
    (("spec", "version"), "1.0", "spec.version"),
    (("spec", "version"), 1.0, "spec.version"),
    (("spec", "images"), "base-server:1.0.0", "spec.images"),
    (("spec", "images"), ["base-server"], "spec.images[0]"),
    (("spec", "images"), ["library/base:1"], "spec.images[0].name"),
    (("spec", "images"), ["base:bad/tag"], "spec.images[0]"),
    (("spec", "operator"), {"image": {"name": "op"}}, "spec.operator.image"),
    (("metadata", "labels"), {"a": 1}, "metadata.labels.a"),
    (("metadata", "annotations"), ["x"], "metadata.annotations"),
])
def test_what_metalk8s_cannot_use_is_refused_with_its_field(path, value, field):
    data = copy.deepcopy(MANIFEST)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    found, _warnings = problems(data)
    assert len(found) == 1, found
    assert found[0].startswith("manifest.yaml: %s" % field), found


def test_a_missing_name_or_version_is_refused():
    data = copy.deepcopy(MANIFEST)
    del data["metadata"]["name"], data["spec"]["version"]
    found = problems(data)[0]
    assert any("metadata" in p and "name" in p for p in found) and any("version" in p for p in found)


def test_product_txt():
    info, warnings = metalk8s.parse_product(
        b'NAME=Example\nVERSION=1.0.0-dev\nREQUIRE_METALK8S=">=2.0"\nARCHIVE_LAYOUT_VERSION=1\n# note\nnot a line\n')
    assert info == {"NAME": "Example", "VERSION": "1.0.0-dev", "REQUIRE_METALK8S": ">=2.0",
                    "ARCHIVE_LAYOUT_VERSION": "1"}
    assert warnings == ["product.txt: line 6: not KEY=VALUE, ignored: 'not a line'"]
    assert metalk8s.parse_product(b"\xff\xfe")[1] == ["product.txt: not UTF-8 text; not shown"]


@pytest.mark.parametrize("text", ["image: {{ repository }}/op:1", "image: {{repository}}/op:1",
                                  "image: {{- repository -}}/op:1"])
def test_repository_is_rendered(text):
    rendered, problem = metalk8s.render_repository(text, "operator/deploy/operator.yaml")
    assert problem is None
    assert rendered == "image: %s/op:1" % metalk8s.REPOSITORY_SENTINEL
    assert metalk8s.without_repository(rendered.split(": ", 1)[1]) == "op:1"


@pytest.mark.parametrize("text", ["image: {{ registry }}/op:1", "{% if x %}a{% endif %}",
                                  "{{ repository | lower }}", "{# comment #}"])
def test_any_other_template_expression_is_refused(text):
    rendered, problem = metalk8s.render_repository(text, "operator/deploy/operator.yaml")
    assert rendered is None
    assert problem.startswith("operator/deploy/operator.yaml: template expression ")
    assert problem.endswith("only {{ repository }} is rendered in operator manifests")


def test_fill_repository_reaches_every_string():
    s = metalk8s.REPOSITORY_SENTINEL
    obj = {"a": [s + "/x:1", {"b": "REPO=" + s}], "n": 3}
    assert metalk8s.fill_repository(obj, "reg/example-1.0.0") == {
        "a": ["reg/example-1.0.0/x:1", {"b": "REPO=reg/example-1.0.0"}], "n": 3}
