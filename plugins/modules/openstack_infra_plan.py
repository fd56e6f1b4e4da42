#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: openstack_infra_plan
short_description: Validate and plan the OpenStack infrastructure of a cluster
version_added: 0.1.0
description:
  - Turns the cluster's infrastructure data model into the list of OpenStack resources
    (network, subnet, router, security groups and rules per node role, server groups,
    ports with fixed IPs, servers, floating IPs, load balancer) that the
    C(mooring.cluster.openstack_infra) role creates with C(openstack.cloud) modules.
  - Validates the request against the cloud before anything is created and fails naming
    every problem (unknown flavor, image or external network, CIDR overlapping an existing
    subnet, quota that would be exceeded, missing Cinder or Octavia).
  - Reads only; it never changes the cloud. C(changes) reports what applying the plan would
    create (or, with O(state=absent), delete), which is the plan shown in check mode.
author:
  - Mooring maintainers (@mooring)
requirements:
  - openstacksdk
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.openstack
options:
  state:
    description: Whether the infrastructure should exist (V(present)) or be torn down (V(absent)).
    type: str
    choices: [present, absent]
    default: present
  name:
    description: Cluster name; prefixes every resource name. Lower case letters, digits and dashes.
    type: str
    required: true
  image:
    description:
      - Node image. Keys C(name), C(existing) (use an image already in Glance),
        C(file) or C(url) (upload), C(checksum) (C(sha256:<hex>), required to upload),
        C(disk_format) (default C(qcow2)), C(container_format) (default C(bare)).
    type: dict
    required: true
  network:
    description: Node network. Keys C(cidr) (default C(10.42.0.0/24)) and C(dns_nameservers).
    type: dict
    default: {}
  external_network:
    description: Name of the external network the router uplinks to (and floating IPs come from).
    type: str
    required: true
  api_allowed_cidrs:
    description: CIDRs allowed to reach the Kubernetes API (TCP 6443).
    type: list
    elements: str
    default: []
  ssh_allowed_cidrs:
    description: CIDRs allowed to reach SSH (TCP 22) on every node.
    type: list
    elements: str
    default: []
  nodeport_allowed_cidrs:
    description: CIDRs allowed to reach NodePorts (30000-32767) on workers.
    type: list
    elements: str
    default: []
  cni:
    description:
      - CNI whose overlay ports open between nodes. Keys C(name) (C(calico), C(flannel),
        C(cilium), C(weave)) and C(mode) (C(vxlan) or, for calico, C(bgp)).
      - calico/vxlan opens UDP 4789, flannel and cilium UDP 8472, calico/bgp TCP 179.
    type: dict
    default: {}
  keypair:
    description: Nova keypair. Keys C(name) and C(public_key) (public key text only).
    type: dict
    required: true
  nodes:
    description:
      - Servers per role; keys C(control_plane), C(etcd) (0 = etcd stacked on the control
        plane) and C(workers), each with C(count), C(flavor), C(boot_volume_size)
        (GiB, 0 = boot from the image), C(volume_type) and C(floating_ip).
    type: dict
    required: true
  load_balancer:
    description: Octavia load balancer for the API. Keys C(enabled) and C(provider).
    type: dict
    default: {}
  user_data:
    description:
      - Immutable host configuration for cloud-init, keys C(users), C(packages) and
        C(sysctls) only. Anything that looks like a key, certificate, token or password is
        refused.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Validate and plan the cluster's OpenStack resources
  mooring.cluster.openstack_infra_plan:
    cloud: mycloud
    name: demo
    image: {name: debian-12, existing: true}
    external_network: public
    api_allowed_cidrs: [203.0.113.0/24]
    ssh_allowed_cidrs: [203.0.113.0/24]
    keypair: {name: demo, public_key: "{{ lookup('file', '~/.ssh/id_ed25519.pub') }}"}
    nodes:
      control_plane: {count: 3, flavor: m1.medium, floating_ip: true}
      workers: {count: 2, flavor: m1.small}
  register: demo_plan
"""

RETURN = r"""
plan:
  description: Every resource to create, by kind, with names and properties.
  returned: success
  type: dict
  sample: {"network": {"name": "demo-net", "cidr": "10.42.0.0/24"}, "servers": []}
changes:
  description: Resources (C(kind/name)) that applying O(state) would create, delete or keep.
  returned: success
  type: dict
  sample: {"create": ["network/demo-net"], "delete": [], "keep": []}
"""

from ansible_collections.mooring.cluster.plugins.module_utils.infra import openstack as infra
from ansible_collections.mooring.cluster.plugins.module_utils.infra import openstackcloud, openstackspec
from ansible_collections.mooring.cluster.plugins.module_utils.infra.openstack_module import (
    MooringOpenStackModule,
)

SPEC_KEYS = ("name", "image", "network", "external_network", "api_allowed_cidrs",
             "ssh_allowed_cidrs", "nodeport_allowed_cidrs", "cni", "keypair", "nodes",
             "load_balancer", "user_data")


class OpenStackInfraPlanModule(MooringOpenStackModule):
    argument_spec = dict(
        state=dict(type="str", default="present", choices=["present", "absent"]),
        name=dict(type="str", required=True),
        image=dict(type="dict", required=True),
        network=dict(type="dict", default={}),
        external_network=dict(type="str", required=True),
        api_allowed_cidrs=dict(type="list", elements="str", default=[]),
        ssh_allowed_cidrs=dict(type="list", elements="str", default=[]),
        nodeport_allowed_cidrs=dict(type="list", elements="str", default=[]),
        cni=dict(type="dict", default={}),
        keypair=dict(type="dict", required=True, no_log=False),
        nodes=dict(type="dict", required=True),
        load_balancer=dict(type="dict", default={}),
        user_data=dict(type="dict", default={}),
    )

    def run(self):
        present = self.params["state"] == "present"
        spec = {k: self.params[k] for k in SPEC_KEYS}
        if present:
            spec = openstackspec.normalize(spec)
        else:  # tearing down needs the names only, not the image file any more
            spec = openstackspec.normalize(spec, file_exists=lambda path: True)
        plan = infra.build_plan(spec)
        cloud = openstackcloud.SdkCloud(self.conn)
        existing = cloud.existing(plan)
        if present:
            openstackcloud.check_cloud(plan, cloud, {n for kind, n in existing if kind == "server"})
            if plan["image"]["file"] and ("image", plan["image"]["name"]) not in existing:
                openstackcloud.verify_file_checksum(plan["image"]["file"], plan["image"]["checksum"])
        changes = infra.resource_changes(plan, existing, self.params["state"])
        return dict(changed=False, plan=plan, changes=changes)


def main():
    OpenStackInfraPlanModule().execute()


if __name__ == "__main__":
    main()
