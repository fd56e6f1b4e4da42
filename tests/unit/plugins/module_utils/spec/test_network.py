# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The spec's network settings (spec/network.py) and the spec stage's errors (spec/errors.py)."""

from __future__ import annotations

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.spec import errors
from ansible_collections.mooring.cluster.plugins.module_utils.spec.network import (
    cidr_problems,
    endpoint_problems,
    network_problems,
)


def test_good_networks_have_no_problem():
    kube = {"podCIDR": "10.32.0.0/16", "serviceCIDR": "10.96.0.0/16", "controlPlaneEndpoint": "api.example:6443"}
    assert network_problems(kube) == []


@pytest.mark.parametrize("kube, start", [
    ({"podCIDR": "10.32.0.1/16"}, "spec.kubernetes.podCIDR: '10.32.0.1/16' is not a network in CIDR notation"),
    ({"podCIDR": "10.32.0.0/16", "serviceCIDR": "10.32.0.0/24"}, "spec.kubernetes.serviceCIDR: '10.32.0.0/24' overlaps podCIDR"),
    ({"podCIDR": "fd00::/56", "serviceCIDR": "10.96.0.0/16"}, "spec.kubernetes.serviceCIDR: IPv4, but podCIDR is IPv6"),
    ({"serviceCIDR": "10.96.0.0/30"}, "spec.kubernetes.serviceCIDR: '10.96.0.0/30' holds 4 address(es)"),
])
def test_cidr_problems(kube, start):
    found = cidr_problems(kube)
    assert len(found) == 1 and found[0].startswith(start), found


@pytest.mark.parametrize("kube, start", [
    ({"controlPlaneEndpoint": "0.0.0.0:6443"}, "spec.kubernetes.controlPlaneEndpoint: '0.0.0.0:6443': 0.0.0.0 is the unspecified"),
    ({"controlPlaneEndpoint": "a b"}, "spec.kubernetes.controlPlaneEndpoint: 'a b' is not HOST[:PORT]"),
    ({"haEndpoint": {"mode": "vip"}}, "spec.kubernetes.haEndpoint: mode vip needs spec.kubernetes.controlPlaneEndpoint"),
    ({"controlPlaneEndpoint": "api.example:6443", "haEndpoint": {"mode": "vip"}},
     "spec.kubernetes.controlPlaneEndpoint: 'api.example:6443' is not IP:PORT"),
])
def test_endpoint_problems(kube, start):
    found = endpoint_problems(kube)
    assert len(found) == 1 and found[0].startswith(start), found


def test_the_spec_errors_are_mooring_errors():
    for cls in (errors.SpecError, errors.EndpointError, errors.KurlHashError, errors.KurlTemplateError, errors.ObjectHashError):
        assert issubclass(cls, MooringError), cls
    assert issubclass(errors.ObjectHashError, ValueError) and issubclass(errors.KurlHashError, ValueError)
