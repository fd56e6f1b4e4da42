# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one semantic-version reader the catalog, kubeadm and solutions share."""

from __future__ import annotations

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm
from ansible_collections.mooring.cluster.plugins.module_utils.common import semver
from ansible_collections.mooring.cluster.plugins.module_utils.lock import catalog
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import k8s


@pytest.mark.parametrize("text, parsed", [
    ("1.35.8", (1, 35, 8, None)),
    ("v1.35.0-rc.1", (1, 35, 0, "rc.1")),
    ("0.0.0+build.5", (0, 0, 0, None)),
    ("3.6.11-alpha-1.x", (3, 6, 11, "alpha-1.x")),
])
def test_parse(text, parsed):
    assert semver.parse(text) == parsed


@pytest.mark.parametrize("text", ["1.35", "01.2.3", "1.2.3\n", "1.2.3-", "1.2.3-a..b", "1.2.3+", " 1.2.3", "1.2.3" + "0" * 300,
                                  None, 1.2])
def test_not_a_version(text):
    with pytest.raises(ValueError):
        semver.parse(text)


def test_precedence_is_semver_2():
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
               "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0"]
    assert sorted(reversed(ordered), key=semver.precedence) == ordered
    assert semver.precedence("1.0.0+a") == semver.precedence("1.0.0+b")


def test_the_three_readers_agree():
    for text in ("1.35.8", "v1.31.4-rc.0"):
        assert catalog.parse_version(text) == semver.parse(text)
        assert kubeadm.parse_version(text) == semver.parse(text)[:3]
    assert catalog.version_key("1.0.0-rc.1") < catalog.version_key("1.0.0") == k8s.version_key("1.0.0")
    with pytest.raises(kubeadm.KubeadmError, match=r"kubernetes.version: '1.31' is not a Kubernetes version"):
        kubeadm.parse_version("1.31")
