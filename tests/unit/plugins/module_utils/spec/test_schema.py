# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The installer schema's patterns match the whole value: a trailing newline is never accepted."""

from __future__ import annotations

import copy
import re

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.spec.schema import API_VERSION, KIND, SCHEMA, schema_problems

BASE = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "t"}, "spec": {"kubernetes": {"version": "1.35.x"}}}

# (the field's path, a document with a good value there): every field of SCHEMA that has a pattern
FIELDS = [
    ("metadata.name", {"metadata": {"name": "demo"}}),
    ("spec.kubernetes.version", {"spec": {"kubernetes": {"version": "1.35.x"}}}),
    ("spec.calico.version", {"spec": {"calico": {"version": "v3.28.0"}}}),
    ("spec.kubernetes.clusterDomain", {"spec": {"kubernetes": {"version": "latest", "clusterDomain": "cluster.local"}}}),
    ("spec.kubernetes.clusterName", {"spec": {"kubernetes": {"version": "latest", "clusterName": "lab"}}}),
    ("spec.kubernetes.haEndpoint.interface", {"spec": {"kubernetes": {"version": "latest", "haEndpoint": {"mode": "vip", "interface": "eth0"}}}}),
    ("spec.kubernetes.kubelet.evictionHard.'memory.available'",
     {"spec": {"kubernetes": {"version": "latest", "kubelet": {"evictionHard": {"memory.available": "100Mi"}}}}}),
    ("spec.etcd.backup.schedule", {"spec": {"etcd": {"version": "latest", "backup": {"schedule": "*-*-* 00/12:00:00"}}}}),
    ("spec.localPathProvisioner.path", {"spec": {"localPathProvisioner": {"version": "latest", "path": "/opt/local-path"}}}),
    ("spec.openebs.path", {"spec": {"openebs": {"version": "latest", "path": "/var/openebs"}}}),
    ("spec.registry.storageSize", {"spec": {"registry": {"version": "latest", "storageSize": "10Gi"}}}),
    ("spec.proxy.http", {"spec": {"proxy": {"http": "http://proxy.example:3128"}}}),
    ("spec.proxy.https", {"spec": {"proxy": {"https": "https://proxy.example:3128/"}}}),
    ("spec.proxy.noProxy[0]", {"spec": {"proxy": {"http": "http://proxy.example:3128", "noProxy": [".example.com"]}}}),
]


def _merged(extra):
    document = copy.deepcopy(BASE)
    for key, value in extra.items():
        if isinstance(value, dict):
            document[key].update(copy.deepcopy(value))
    return document


def _set(document, path, suffix):
    """``document`` with ``suffix`` added to the string at ``path`` (as a problem names it)."""
    keys = [quoted or (int(index) if index else word) for quoted, index, word in re.findall(r"'([^']+)'|\[(\d+)\]|([A-Za-z]+)", path)]
    holder = document
    for key in keys[:-1]:
        holder = holder[key]
    holder[keys[-1]] += suffix
    return document


def _patterns(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern":
                yield value
            else:
                yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


def test_every_pattern_is_anchored_both_ends():
    """Matched whole (re.fullmatch), a pattern means what it means to any JSON schema tool only when anchored."""
    patterns = set(_patterns(SCHEMA))
    assert len(patterns) == 9
    for pattern in patterns:
        assert pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$"), pattern


@pytest.mark.parametrize("path, extra", FIELDS, ids=[f[0] for f in FIELDS])
def test_a_good_value_passes(path, extra):
    assert schema_problems(_merged(extra)) == []


@pytest.mark.parametrize("suffix", ["\n", "\r\n", "\nmore"])
@pytest.mark.parametrize("path, extra", FIELDS, ids=[f[0] for f in FIELDS])
def test_a_value_with_a_newline_is_refused(path, extra, suffix):
    problems = schema_problems(_set(_merged(extra), path, suffix))
    assert len(problems) == 1, problems
    assert problems[0].startswith("%s: must be " % path), problems
    assert "\n" not in problems[0] and "\\n" in problems[0]


def test_a_path_must_be_absolute_and_on_one_line():
    document = _merged({"spec": {"openebs": {"version": "latest", "path": "var/openebs"}}})
    assert schema_problems(document) == [
        "spec.openebs.path: must be an absolute path (starting with /, on one line), not 'var/openebs'"]
    document["spec"]["openebs"]["path"] = "/var/open\x00ebs"
    assert schema_problems(document)[0].startswith("spec.openebs.path: must be an absolute path")
