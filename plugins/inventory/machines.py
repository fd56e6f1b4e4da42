# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: machines
short_description: Discovered machines with scheduled cluster roles
version_added: 0.1.0
description:
  - Reads the machine list written by the C(mooring.cluster.discover) playbook, or the hosts
    other inventory sources already added (for example C(openstack.cloud.openstack)), and puts
    every machine in C(control_plane) and C(etcd), or C(workers).
  - The control plane has an odd size (O(control_plane_count)). It is scheduled once at least
    that many eligible machines exist, on the first ones in a stable order (name, then MAC);
    until then every machine is in C(unscheduled) and a warning says why.
  - Assignments are kept in O(state_file); an existing machine never changes its role when
    machines are added or removed. A missing control-plane machine is reported, never replaced
    silently; the C(mooring.cluster.replace_control_plane) playbook replaces it.
  - The file name must end in C(machines.yml) or C(machines.yaml).
options:
  plugin:
    description: Marks the file as this plugin's configuration.
    type: str
    required: true
    choices: [mooring.cluster.machines]
  machines_file:
    description:
      - The machine list (YAML) written by the C(mooring.cluster.discover) playbook.
      - A relative path is taken from the directory of this configuration file.
    type: str
  use_inventory_hosts:
    description:
      - Also treat every host already in the inventory (from sources given before this one) as a
        machine. Its C(mooring_machine) variable (name, address, mac, cpus, memory_mb), or else
        the C(openstack) variable of C(openstack.cloud.openstack) (flavor vcpus and ram), describes it.
    type: bool
    default: false
  state_file:
    description:
      - Where the role assignments persist (JSON). Created when the control plane is scheduled.
      - A relative path is taken from the directory of this configuration file.
    type: str
    required: true
  control_plane_count:
    description: Size of the control plane (and etcd cluster). Odd so etcd keeps a quorum.
    type: int
    default: 3
    choices: [1, 3, 5]
  min_cpus:
    description: Fewest CPUs a control-plane machine may have.
    type: int
    default: 2
  min_memory_mb:
    description: Least memory (MiB) a control-plane machine may have.
    type: int
    default: 1700
  replace_control_plane:
    description:
      - C(LOST=REPLACEMENT) (machine names or ids) moves the control-plane role of the missing
        machine LOST to the discovered, eligible machine REPLACEMENT and records it in O(state_file).
      - Set only by the C(mooring.cluster.replace_control_plane) playbook; nothing else ever moves
        a control-plane role. Running it again after the replacement changes nothing.
    type: str
    env:
      - name: MOORING_REPLACE_CONTROL_PLANE
  write_state:
    description: Write new assignments to O(state_file). V(false) only shows what would be scheduled.
    type: bool
    default: true
"""

EXAMPLES = r"""
# inventory/cluster.machines.yml
plugin: mooring.cluster.machines
machines_file: machines.yaml
state_file: schedule.json
control_plane_count: 3

# ansible-inventory -i inventory/openstack.yml -i inventory/cluster.machines.yml --graph
"""

import os  # noqa: E402

from ansible.errors import AnsibleParserError  # noqa: E402
from ansible.module_utils.common.text.converters import to_native  # noqa: E402
from ansible.plugins.inventory import BaseInventoryPlugin  # noqa: E402
from ansible.utils.display import Display  # noqa: E402

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.infra import scheduling  # noqa: E402

display = Display()

GROUPS = {scheduling.CONTROL_PLANE: ("control_plane", "etcd"), scheduling.WORKER: ("workers",)}
UNSCHEDULED = "unscheduled"


class InventoryModule(BaseInventoryPlugin):
    NAME = "mooring.cluster.machines"

    def verify_file(self, path):
        return super().verify_file(path) and os.path.basename(path).endswith(
            ("machines.yml", "machines.yaml"))

    def _path(self, value, base):
        value = os.path.expanduser(value)
        return value if os.path.isabs(value) else os.path.join(base, value)

    def _machines_from_inventory(self):
        found = []
        for host in self.inventory.hosts.values():
            hv = host.get_vars()
            desc = dict(hv.get("mooring_machine") or {})
            flavor = (hv.get("openstack") or {}).get("flavor") or {}
            desc.setdefault("name", host.name)
            desc.setdefault("address", hv.get("ansible_host"))
            desc.setdefault("cpus", flavor.get("vcpus"))
            desc.setdefault("memory_mb", flavor.get("ram"))
            found.append(desc)
        return found

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        self._read_config_data(path)
        base = os.path.dirname(os.path.abspath(path))
        raws = []
        if self.get_option("use_inventory_hosts"):
            raws.extend(self._machines_from_inventory())
        if self.get_option("machines_file"):
            doc = loader.load_from_file(self._path(self.get_option("machines_file"), base)) or {}
            if not isinstance(doc, dict) or doc.get("kind") != "MachineList":
                raise AnsibleParserError("%s is not a MachineList written by mooring.cluster.discover"
                                         % self.get_option("machines_file"))
            raws.extend(doc.get("machines") or [])
        state_path = self._path(self.get_option("state_file"), base)
        try:
            state = scheduling.load_state(state_path)
            replaced = None
            if self.get_option("replace_control_plane"):
                lost, sep, repl = self.get_option("replace_control_plane").partition("=")
                if not sep or not lost or not repl:
                    raise scheduling.SchedulingError("bad replacement", [
                        "replace_control_plane %r must be LOST=REPLACEMENT" % self.get_option("replace_control_plane")])
                new_state, message = scheduling.replace_control_plane(
                    state, lost.strip(), repl.strip(), raws, self.get_option("min_cpus"), self.get_option("min_memory_mb"))
                replaced = {"changed": new_state != state, "message": message}
                state = new_state
            result = scheduling.schedule(
                raws, state, self.get_option("control_plane_count"),
                self.get_option("min_cpus"), self.get_option("min_memory_mb"))
            written = False
            if self.get_option("write_state") and result["state"]["machines"]:
                written = scheduling.save_state(state_path, result["state"])
        except MooringError as exc:
            raise AnsibleParserError(to_native(exc)) from exc
        self._populate(result, {m["name"]: scheduling.normalize_machine(m) for m in raws})
        self.inventory.set_variable("all", "mooring_schedule_replaced", replaced)
        self.inventory.set_variable("all", "mooring_schedule_changed", written)

    def _populate(self, result, machines):
        for group in ("control_plane", "etcd", "workers", UNSCHEDULED):
            self.inventory.add_group(group)
        for name, machine in sorted(machines.items()):
            self.inventory.add_host(name)
            if machine["address"]:
                self.inventory.set_variable(name, "ansible_host", machine["address"])
            self.inventory.set_variable(name, "mooring_machine", machine)
            role = result["roles"].get(name)
            self.inventory.set_variable(name, "mooring_machine_role", role)
            for group in GROUPS.get(role, (UNSCHEDULED,)):
                self.inventory.add_child(group, name)
        self.inventory.set_variable("all", "mooring_schedule_messages", result["messages"])
        self.inventory.set_variable("all", "mooring_schedule_missing", result["missing"])
        for message in result["messages"]:
            if message.startswith("control plane scheduled"):
                display.vv("mooring.cluster.machines: %s" % message)
            else:
                display.warning("mooring.cluster.machines: %s" % message)
