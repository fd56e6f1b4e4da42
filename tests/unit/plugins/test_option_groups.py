# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A shared option group is one doc fragment and one argument spec, and they say the same (type, default, aliases);
every module that takes the group takes both."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.doc_fragments import api_server, containerd_client, etcd_client
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import etcdoptions
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm
from ansible_collections.mooring.cluster.plugins.module_utils.common import ctr

MODULES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "plugins", "modules")

GROUPS = [
    ("containerd_client", containerd_client, ctr.IMPORT_OPTIONS, ["bundle_image", "solution_images"]),
    ("api_server", api_server, kubeadm.API_SERVER_OPTIONS, ["k8s_health", "kubeadm_state"]),
    ("etcd_client", etcd_client, etcdoptions.client_argument_spec(), []),
]


def _differences(documented, spec):
    found = []
    for name in sorted(set(documented) | set(spec)):
        doc, code = documented.get(name), spec.get(name)
        if doc is None or code is None:
            found.append("%s: only in the %s" % (name, "spec" if doc is None else "fragment"))
            continue
        for key in ("type", "default", "aliases", "elements", "required"):
            if doc.get(key) != code.get(key) and not (key == "required" and not doc.get(key) and not code.get(key)):
                found.append("%s.%s: fragment %r, spec %r" % (name, key, doc.get(key), code.get(key)))
    return found


@pytest.mark.parametrize("name, fragment, spec, modules", GROUPS, ids=[g[0] for g in GROUPS])
def test_a_fragment_and_its_spec_say_the_same(name, fragment, spec, modules):
    documented = yaml.safe_load(fragment.ModuleDocFragment.DOCUMENTATION)["options"]
    assert _differences(documented, spec) == [], name
    for module in modules:
        with open(os.path.join(MODULES, module + ".py"), encoding="utf-8") as handle:
            text = handle.read()
        docs = yaml.safe_load(text.split('DOCUMENTATION = r"""', 1)[1].split('"""', 1)[0])
        assert "mooring.cluster.%s" % name in docs["extends_documentation_fragment"], module
        assert not set(docs["options"]) & set(documented), "%s documents the group's options again" % module


def test_the_check_sees_a_difference():
    assert _differences({"a": {"type": "str", "default": "x"}}, {"a": {"type": "str", "default": "y"}}) == [
        "a.default: fragment 'x', spec 'y'"]
    assert _differences({"a": {"type": "str"}}, {}) == ["a: only in the fragment"]
