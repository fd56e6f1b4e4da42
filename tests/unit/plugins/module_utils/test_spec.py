# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Installer spec validation, defaults and kURL input."""

from __future__ import annotations

import textwrap

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.errors import SpecError
from ansible_collections.mooring.cluster.plugins.module_utils.spec import parse_installer

GOOD = textwrap.dedent("""
    apiVersion: cluster.mooring.io/v1beta1
    kind: Installer
    metadata: {name: demo}
    spec:
      kubernetes: {version: 1.35.x}
      calico: {version: latest}
""")


def problems(text):
    with pytest.raises(SpecError) as err:
        parse_installer(textwrap.dedent(text))
    return err.value.problems


def test_good_spec_gets_defaults():
    installer = parse_installer(GOOD)
    assert installer.source == "mooring"
    assert installer.addons["kubernetes"]["podCIDR"] == "10.32.0.0/16"
    assert installer.addons["calico"]["encapsulation"] == "VXLAN"
    assert installer.requested_versions() == {"kubernetes": "1.35.x", "calico": "latest"}
    assert len(installer.hash) == 7


def test_every_problem_reported_at_once_with_paths():
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: 1.31.z, podCIDR: 10.0.0.0/8}
          etcd: {version: latest, topology: sideways}
          weave: {version: latest}
          calico: {version: latest, colour: blue}
    """)
    assert "spec.kubernetes.version: '1.31.z' is not an exact version, 'latest' or 'X.Y.x'" in found
    assert "spec.etcd.topology: 'sideways' is not one of external, stacked" in found
    assert any(p.startswith("spec.weave: unknown add-on 'weave' (known: calico, cilium,") for p in found)
    assert any(p.startswith("spec.calico.colour: unknown field 'colour' (allowed: encapsulation, mtu, version)")
               for p in found)
    assert len(found) == 4


def test_exactly_one_cni():
    assert problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec: {kubernetes: {version: latest}}
    """) == ["spec: exactly one CNI add-on is required (calico, cilium, flannel); found none"]
    assert problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec: {kubernetes: {version: latest}, calico: {version: latest}, flannel: {version: latest}}
    """) == ["spec: exactly one CNI add-on is required (calico, cilium, flannel); found calico and flannel"]


def test_cidrs_checked():
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: latest, podCIDR: 10.0.0.0/8, serviceCIDR: 10.96.0.0/12}
          calico: {version: latest}
    """)
    assert found == ["spec.kubernetes.serviceCIDR: '10.96.0.0/12' overlaps podCIDR '10.0.0.0/8'; choose disjoint ranges"]
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: latest, podCIDR: 10.32.0.1/16}
          calico: {version: latest}
    """)
    assert found[0].startswith("spec.kubernetes.podCIDR: '10.32.0.1/16' is not a network in CIDR notation")


@pytest.mark.parametrize("text, expected", [
    ("- a\n- b\n", "the installer document must be a mapping with apiVersion, kind and spec"),
    ("a: [\n", "the installer document is not valid YAML"),
    ("apiVersion: v1\nkind: Pod\nspec: {}\n", "apiVersion: 'v1' must be 'cluster.mooring.io/v1beta1'"),
    ("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\n", "spec: required"),
    ("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nspec: {calico: {version: latest}}\n",
     "spec.kubernetes: required"),
    ("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nspec: {kubernetes: {}, calico: {version: 3}}\n",
     "spec.calico.version: 3 is not of type string"),
])
def test_bad_input_never_a_traceback(text, expected):
    with pytest.raises(SpecError) as err:
        parse_installer(text)
    assert any(p.startswith(expected) for p in err.value.problems), err.value.problems


def test_yaml_1_2_yes_is_a_string():
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: latest}
          calico: {version: latest}
          metricsServer: {version: latest, insecureKubeletTLS: yes}
    """)
    assert found == ["spec.metricsServer.insecureKubeletTLS: 'yes' is not of type boolean"]


def test_kurl_document_is_mapped_and_unsupported_named():
    installer = parse_installer(textwrap.dedent("""
        apiVersion: cluster.kurl.sh/v1beta1
        kind: Installer
        metadata: {name: kurl}
        spec:
          kubernetes: {version: 1.35.x, serviceCIDR: 10.96.0.0/16, haCluster: false}
          flannel: {version: latest, podCIDR: 10.40.0.0/16}
          containerd: {version: 2.1.x}
          kotsadm: {version: latest}
          ekco: {version: latest}
    """))
    assert installer.source == "kurl"
    assert installer.addons["kubernetes"]["podCIDR"] == "10.40.0.0/16"
    assert installer.addons["kubernetes"]["serviceCIDR"] == "10.96.0.0/16"
    assert installer.unsupported == ["spec.ekco", "spec.kotsadm", "spec.kubernetes.haCluster"]
    with pytest.raises(SpecError) as err:
        installer.require_supported()
    assert err.value.problems == ["spec.ekco: not supported by mooring.cluster",
                                  "spec.kotsadm: not supported by mooring.cluster",
                                  "spec.kubernetes.haCluster: not supported by mooring.cluster"]


def test_kurl_hash_of_kurl_document_is_kurls_published_example():
    installer = parse_installer("apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nmetadata: {name: x}\n"
                                "spec:\n  kubernetes:\n    version: 1.15.3\n")
    assert installer.hash == "3138d30"
