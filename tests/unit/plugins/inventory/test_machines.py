# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mooring.cluster.machines inventory plugin, loaded by ansible-core's real InventoryManager."""

from __future__ import annotations

import json

import pytest
import yaml
from ansible.inventory.manager import InventoryManager  # the plugin loader is initialised in tests/unit/conftest.py
from ansible.parsing.dataloader import DataLoader


def machine(n, cpus=2, memory_mb=4096):
    return {"name": "h%d" % n, "address": "10.89.10.%d" % (10 + n), "mac": "0a:00:00:00:00:%02x" % n,
            "cpus": cpus, "memory_mb": memory_mb, "disks": {"sda": "10.00 GB"}}


def write(tmp_path, machines, **options):
    doc = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "MachineList", "machines": machines}
    (tmp_path / "machines.yaml").write_text(yaml.safe_dump(doc))
    config = {"plugin": "mooring.cluster.machines", "machines_file": "machines.yaml",
              "state_file": "state/schedule.json"}
    config.update(options)
    path = tmp_path / "cluster.machines.yml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def groups(source):
    inv = InventoryManager(loader=DataLoader(), sources=[source])
    out = {g: sorted(h.name for h in inv.groups[g].get_hosts()) for g in ("control_plane", "etcd", "workers", "unscheduled")}
    return inv, out


def test_waits_for_enough_machines_then_schedules_and_persists(tmp_path):
    source = write(tmp_path, [machine(1), machine(2)])
    inv, g = groups(source)
    assert g == {"control_plane": [], "etcd": [], "workers": [], "unscheduled": ["h1", "h2"]}
    assert "2 of 3" in inv.groups["all"].get_vars()["mooring_schedule_messages"][0]
    assert not (tmp_path / "state" / "schedule.json").exists()

    source = write(tmp_path, [machine(4), machine(3), machine(2), machine(1)])
    inv, g = groups(source)
    assert g == {"control_plane": ["h1", "h2", "h3"], "etcd": ["h1", "h2", "h3"], "workers": ["h4"], "unscheduled": []}
    assert inv.groups["all"].get_vars()["mooring_schedule_changed"] is True
    assert groups(source)[0].groups["all"].get_vars()["mooring_schedule_changed"] is False
    state = json.loads((tmp_path / "state" / "schedule.json").read_text())
    assert state["controlPlaneCount"] == 3
    h1 = inv.get_host("h1").get_vars()
    assert h1["ansible_host"] == "10.89.10.11"
    assert h1["mooring_machine_role"] == "control_plane"

    # h1 disappears, h0 (sorting first) arrives: nobody changes role, h1 is reported missing.
    source = write(tmp_path, [machine(0), machine(2), machine(3), machine(4)])
    inv, g = groups(source)
    assert g["control_plane"] == ["h2", "h3"]
    assert g["workers"] == ["h0", "h4"]
    assert inv.groups["all"].get_vars()["mooring_schedule_missing"] == {"h1": "control_plane"}


def test_write_state_false_leaves_no_file(tmp_path):
    source = write(tmp_path, [machine(1)], control_plane_count=1, write_state=False)
    g = groups(source)[1]
    assert g["control_plane"] == ["h1"]
    assert not (tmp_path / "state").exists()


def test_even_count_is_refused_by_the_option_choices(tmp_path):
    source = write(tmp_path, [machine(1), machine(2)], control_plane_count=2)
    inv = InventoryManager(loader=DataLoader(), sources=[source])
    # a failed source leaves the inventory empty (ansible-core turns the parse error into a warning)
    assert "h1" not in inv.hosts


def test_not_a_machine_list_is_an_error(tmp_path):
    source = write(tmp_path, [])
    (tmp_path / "machines.yaml").write_text("kind: Something\n")
    from ansible.plugins.loader import inventory_loader
    plugin = inventory_loader.get("mooring.cluster.machines")
    from ansible.errors import AnsibleParserError
    from ansible.inventory.data import InventoryData
    with pytest.raises(AnsibleParserError, match="not a MachineList"):
        plugin.parse(InventoryData(), DataLoader(), source)


def test_hosts_from_an_earlier_inventory_source(tmp_path):
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": {
        "vm-b": {"ansible_host": "192.0.2.2", "openstack": {"flavor": {"vcpus": 4, "ram": 8192}}},
        "vm-a": {"ansible_host": "192.0.2.1", "openstack": {"flavor": {"vcpus": 4, "ram": 8192}}},
        "vm-c": {"ansible_host": "192.0.2.3", "openstack": {"flavor": {"vcpus": 1, "ram": 8192}}},
    }}}))
    config = tmp_path / "cluster.machines.yml"
    config.write_text(yaml.safe_dump({"plugin": "mooring.cluster.machines", "use_inventory_hosts": True,
                                      "state_file": "schedule.json", "control_plane_count": 1}))
    inv = InventoryManager(loader=DataLoader(), sources=[str(tmp_path / "hosts.yml"), str(config)])
    assert [h.name for h in inv.groups["control_plane"].get_hosts()] == ["vm-a"]
    assert sorted(h.name for h in inv.groups["workers"].get_hosts()) == ["vm-b", "vm-c"]


def test_replace_control_plane_only_when_asked(tmp_path, monkeypatch):
    source = write(tmp_path, [machine(1), machine(2), machine(3), machine(4)])
    groups(source)
    source = write(tmp_path, [machine(2), machine(3), machine(4), machine(5)])  # h1 lost, h5 new
    inv, g = groups(source)
    assert g["control_plane"] == ["h2", "h3"] and g["workers"] == ["h4", "h5"]
    assert inv.groups["all"].get_vars()["mooring_schedule_replaced"] is None

    monkeypatch.setenv("MOORING_REPLACE_CONTROL_PLANE", "h1=h5")
    inv, g = groups(source)
    assert g["control_plane"] == ["h2", "h3", "h5"] and g["etcd"] == ["h2", "h3", "h5"] and g["workers"] == ["h4"]
    assert inv.groups["all"].get_vars()["mooring_schedule_replaced"]["changed"] is True
    assert inv.groups["all"].get_vars()["mooring_schedule_missing"] == {}

    inv, g = groups(source)  # again: nothing left to do
    assert inv.groups["all"].get_vars()["mooring_schedule_replaced"]["changed"] is False
    assert g["control_plane"] == ["h2", "h3", "h5"]

    monkeypatch.setenv("MOORING_REPLACE_CONTROL_PLANE", "h1")
    inv = InventoryManager(loader=DataLoader(), sources=[source])
    assert "h2" not in inv.hosts  # malformed request: the source fails, nothing is scheduled
