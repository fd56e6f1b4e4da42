# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The catalog itself, semantic ordering and version resolution."""

from __future__ import annotations

import random
import re

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.mooring.cluster.plugins.module_utils.lock import catalog as cat
from ansible_collections.mooring.cluster.plugins.module_utils.lock import catalogshape
from ansible_collections.mooring.cluster.plugins.module_utils.lock.errors import CatalogError, ResolveError

SPEC_ADDONS = ("kubernetes", "etcd", "containerd", "calico", "cilium", "flannel", "localPathProvisioner", "longhorn",
               "openebs", "ingressNginx", "contour", "metricsServer", "registry")


@pytest.fixture(scope="module")
def catalog():
    return cat.load_catalog()


def test_shipped_catalog_is_valid_and_covers_every_addon(catalog):
    assert set(catalog.names()) == set(SPEC_ADDONS)
    assert catalogshape.check_catalog(catalog.addons) == []


def test_every_claimed_architecture_of_a_binary_has_a_sha256(catalog):
    for name in ("kubernetes", "etcd", "containerd"):
        for version in catalog.versions(name):
            contents = cat.addon_contents(catalog, name, version, catalog.addons[name]["architectures"])
            binaries = list(contents["artifacts"])
            assert binaries, (name, version)
            for art in binaries:
                assert re.match(r"^[0-9a-f]{64}$", art["sha256"] or ""), (name, version, art)


def test_three_newest_kubernetes_minors_with_several_patches(catalog):
    by_minor = {}
    for version in catalog.versions("kubernetes"):
        by_minor.setdefault(cat.minor_of(version), []).append(version)
    newest = sorted(by_minor, key=lambda m: tuple(map(int, m.split("."))))[-3:]
    assert all(len(by_minor[m]) >= 3 for m in newest), by_minor


def test_known_upstream_checksum_is_carried_through(catalog):
    # kubeadm v1.36.4 linux/amd64, from ../shared/upstream/kubespray-checksums.yml
    contents = cat.addon_contents(catalog, "kubernetes", "1.36.4", ["amd64"])
    kubeadm = [a for a in contents["artifacts"] if a["name"] == "kubeadm"][0]
    assert kubeadm["url"] == "https://dl.k8s.io/release/v1.36.4/bin/linux/amd64/kubeadm"
    assert kubeadm["sha256"] == "10d054585907f2c8bb823c84f6a66b3bd2a474c3d795475f04e9a44f78650fe6"


def test_duplicate_versions_are_rejected(tmp_path):
    (tmp_path / "x.yml").write_text(yaml.safe_dump({
        "name": "registry", "category": "registry", "architectures": ["amd64"],
        "versions": [{"version": "1.0.0"}, {"version": "1.0.0"}],
    }))
    with pytest.raises(CatalogError) as err:
        cat.load_catalog(str(tmp_path))
    assert "catalog: registry.versions[1].version: must be a version listed once, not '1.0.0'" in err.value.problems


def test_missing_arch_checksum_is_rejected(tmp_path):
    (tmp_path / "x.yml").write_text(yaml.safe_dump({
        "name": "tool", "category": "registry", "architectures": ["amd64", "arm64"],
        "artifacts": [{"name": "tool", "kind": "binary", "url": "https://example.invalid/{version}/{arch}/tool"}],
        "versions": [{"version": "1.0.0", "sha256": {"tool": {"amd64": "a" * 64}}}],
    }))
    with pytest.raises(CatalogError) as err:
        cat.load_catalog(str(tmp_path))
    assert "catalog: tool.versions[0].sha256.tool.arm64: is missing (no checksum for architecture arm64)" in str(err.value)


@pytest.mark.parametrize("ordered", [
    ["1.9.0", "1.10.0", "1.10.1"],
    ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"],
    ["0.0.9", "0.0.30", "0.0.31"],
])
def test_semantic_ordering_not_lexical(ordered):
    shuffled = list(ordered)
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled, key=cat.version_key) == ordered


def _catalog_with(versions):
    addons = {
        "kubernetes": {"name": "kubernetes", "category": "kubernetes", "architectures": ["amd64"],
                       "versions": [{"version": v} for v in versions]},
    }
    return cat.Catalog(addons)


@given(st.permutations(["1.30.2", "1.31.0", "1.31.10", "1.31.9", "1.32.0-rc.1", "1.29.15"]))
def test_resolution_does_not_depend_on_listing_order(versions):
    catalog = _catalog_with(versions)
    assert cat.resolve_version(catalog, "kubernetes", "latest") == "1.31.10"
    assert cat.resolve_version(catalog, "kubernetes", "1.31.x") == "1.31.10"
    assert cat.resolve_version(catalog, "kubernetes", "1.30.x") == "1.30.2"
    assert cat.resolve_version(catalog, "kubernetes", "1.32.0-rc.1") == "1.32.0-rc.1"


def test_unknown_version_lists_nearest(catalog):
    with pytest.raises(ResolveError) as err:
        cat.resolve_version(catalog, "kubernetes", "1.35.99")
    message = str(err.value)
    assert message.startswith("spec.kubernetes.version: kubernetes 1.35.99 is not in the catalog; nearest available: 1.35.8")


def test_unknown_minor_lists_available_minors(catalog):
    with pytest.raises(ResolveError) as err:
        cat.resolve_version(catalog, "kubernetes", "1.20.x")
    assert "available minors: 1.36.x, 1.35.x, 1.34.x" in str(err.value)


def test_incompatible_pair_names_both_and_the_range(catalog):
    with pytest.raises(ResolveError) as err:
        cat.resolve_versions(catalog, {"kubernetes": "1.36.x", "calico": "3.29.7", "containerd": "2.1.x"})
    assert err.value.problems == [
        "spec.calico.version: calico 3.29.7 supports Kubernetes >=1.29.0,<1.33.0, but kubernetes resolves to 1.36.4; "
        "choose a compatible pair"
    ]


def test_overlay_adds_and_replaces(tmp_path, catalog):
    overlay = tmp_path / "overlay.yml"
    overlay.write_text(yaml.safe_dump({"name": "containerd", "versions": [
        {"version": "1.6.20", "artifacts": [{"name": "containerd", "kind": "deb", "arch": "amd64",
                                            "url": "http://127.0.0.1:8080/containerd.deb", "sha256": "b" * 64}]},
    ]}))
    merged = cat.load_catalog(None, [str(overlay)])
    assert "1.6.20" in merged.versions("containerd")
    assert len(merged.versions("containerd")) == len(catalog.versions("containerd")) + 1
    contents = cat.addon_contents(merged, "containerd", "1.6.20", ["amd64"])
    urls = [a["url"] for a in contents["artifacts"]]
    assert "http://127.0.0.1:8080/containerd.deb" in urls


def test_supported_versions_shape(catalog):
    data = catalog.supported_versions()["supportedVersions"]
    assert data["kubernetes"][0] == "latest"
    assert data["kubernetes"][1] == "1.36.4"
