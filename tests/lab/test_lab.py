# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Self-tests of the lab's naming rules (run by scripts/integration.sh before any lab starts)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("mooring_lab", Path(__file__).with_name("lab.py"))
lab = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lab)


def test_subnet_index_is_deterministic_and_in_range():
    for name in ("preflight", "etcd", "lab", "a" * 60):
        idx = lab.subnet_index(name)
        assert 10 <= idx <= 249
        assert lab.subnet_index(name) == idx


def test_subnet_index_probes_past_taken():
    idx = lab.subnet_index("etcd")
    assert lab.subnet_index("etcd", taken=[idx]) == (idx + 1 if idx < 249 else 10)


def test_scenarios_in_the_tree_never_share_a_subnet(monkeypatch):
    monkeypatch.delenv("MOORING_LAB_SUBNET_INDEX", raising=False)
    names = lab.scenario_names()
    prefixes = [lab.lab_prefix(n) for n in names]
    assert len(set(prefixes)) == len(prefixes), dict(zip(names, prefixes))
    assert lab.lab_prefix("not-a-scenario") not in prefixes


def test_forced_subnet(monkeypatch):
    monkeypatch.setenv("MOORING_LAB_SUBNET_INDEX", "42")
    assert lab.lab_prefix("anything") == "10.89.42"
    assert lab.host_address("anything", 3) == "10.89.42.13"


@pytest.mark.parametrize("n,k,cp,workers", [
    (1, None, [1], [1]),
    (2, None, [1], [2]),
    (3, None, [1, 2, 3], [1, 2, 3]),
    (5, None, [1, 2, 3], [4, 5]),
    (5, 1, [1], [2, 3, 4, 5]),
])
def test_group_layout(n, k, cp, workers):
    g = lab.group_layout(n, k)
    assert g["control_plane"] == cp and g["etcd"] == cp and g["workers"] == workers


def test_group_layout_rejects_bad_control_plane():
    with pytest.raises(lab.LabError, match="between 1 and the number of hosts"):
        lab.group_layout(2, 3)


def test_platform_index():
    assert lab.platform_index("etcd", "etcd-3") == 3
    for bad in ("etcd3", "other-1", "etcd-0", "etcd-x", "etcd-201"):
        with pytest.raises(lab.LabError, match="MOORING_LAB"):
            lab.platform_index("etcd", bad)


def test_inventory_groups_and_addresses(tmp_path, monkeypatch):
    monkeypatch.setenv("MOORING_LAB_SUBNET_INDEX", "77")
    monkeypatch.setattr(lab, "ROOT", tmp_path)
    text = lab.write_inventory("t", 4, None).read_text()
    assert "    t-4:\n      ansible_host: 10.89.77.14\n" in text
    assert "    workers:\n      hosts:\n        t-4: {}\n" in text
    assert "    control_plane:\n      hosts:\n        t-1: {}\n        t-2: {}\n        t-3: {}\n" in text
