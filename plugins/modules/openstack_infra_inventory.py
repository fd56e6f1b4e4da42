#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: openstack_infra_inventory
short_description: Write the Ansible inventory of a cluster's OpenStack servers
version_added: 0.1.0
description:
  - Reads the servers of a plan made by M(mooring.cluster.openstack_infra_plan) back from the
    cloud (fixed and floating addresses, IDs) and writes a YAML inventory with the groups
    later playbooks use, C(control_plane), C(etcd) (the control-plane hosts when etcd is
    stacked) and C(workers), and the variable C(mooring_control_plane_endpoint)
    (the load balancer VIP when there is one, otherwise the first control-plane node).
  - The file is replaced atomically and only when its content changes.
author:
  - Mooring maintainers (@mooring)
requirements:
  - openstacksdk
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.openstack
options:
  plan:
    description: The C(plan) returned by M(mooring.cluster.openstack_infra_plan).
    type: dict
    required: true
  path:
    description: Inventory file to write (YAML). Its directory must exist.
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Write the inventory of the created servers
  mooring.cluster.openstack_infra_inventory:
    cloud: mycloud
    plan: "{{ demo_plan.plan }}"
    path: "{{ playbook_dir }}/inventory/openstack.yml"
"""

RETURN = r"""
inventory:
  description: The inventory written, as data.
  returned: success
  type: dict
  sample: {"all": {"vars": {"mooring_control_plane_endpoint": "172.24.4.20:6443"}}}
endpoint:
  description: The control-plane endpoint (C(host:6443)).
  returned: success
  type: str
  sample: 172.24.4.20:6443
"""

import os
import tempfile
import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.mooring.cluster.plugins.module_utils.infra import openstack as infra
from ansible_collections.mooring.cluster.plugins.module_utils.infra import openstackcloud
from ansible_collections.mooring.cluster.plugins.module_utils.infra.openstack_module import (
    MooringOpenStackModule,
)

try:
    import yaml
    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError:
    HAS_YAML = False
    YAML_IMPORT_ERROR = traceback.format_exc()

HEADER = "# Written by mooring.cluster.openstack_infra_inventory; do not edit.\n"


class OpenStackInfraInventoryModule(MooringOpenStackModule):
    argument_spec = dict(
        plan=dict(type="dict", required=True),
        path=dict(type="path", required=True),
    )

    def run(self):
        if not HAS_YAML:
            self.fail(missing_required_lib("PyYAML"), exception=YAML_IMPORT_ERROR)
        plan = self.params["plan"]
        path = self.params["path"]
        vip = None
        if plan.get("load_balancer"):
            lb = self.conn.load_balancer.find_load_balancer(plan["load_balancer"]["name"],
                                                            ignore_missing=True)
            vip = lb.vip_address if lb is not None else None
        servers = openstackcloud.SdkCloud(self.conn).server_addresses(plan)
        inventory = infra.build_inventory(plan, servers, endpoint=vip)
        text = HEADER + yaml.safe_dump(inventory, default_flow_style=False, sort_keys=True)
        before = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                before = f.read()
        changed = before != text
        if changed and not self.check_mode:
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)))
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            self.module.atomic_move(tmp, path)
        result = dict(changed=changed, inventory=inventory,
                      endpoint=inventory["all"]["vars"]["mooring_control_plane_endpoint"])
        if self.module._diff:
            result["diff"] = dict(before=before or "", after=text, before_header=path,
                                  after_header=path)
        return result


def main():
    OpenStackInfraInventoryModule().execute()


if __name__ == "__main__":
    main()
