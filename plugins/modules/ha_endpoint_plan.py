# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: ha_endpoint_plan
short_description: Plan the keepalived virtual IP of a highly available API endpoint, on the controller
version_added: 0.1.0
description:
  - Runs on the controller. Decides, for the installer's C(kubernetes.haEndpoint) (mode C(vip)), which interface of
    each control-plane host holds the virtual IP's subnet, each host's VRRP priority (inventory order - the first host
    of O(control_plane) is preferred) and its unicast peers (the other control-plane hosts' addresses on that subnet;
    unicast, not multicast, so it also works on clouds).
  - Reads the interfaces and addresses the hosts reported (O(addresses), the JSON of C(ip -j addr)) and the address of
    every inventory host (C(mooring_address), else C(ansible_host)).
  - Fails, one line per problem naming host and address, when the VIP is outside every control-plane host's subnets,
    equals the address of any inventory host, a control-plane host has no interface on the VIP's subnet, or the given
    O(interface) is missing on a host. It changes nothing, so a playbook can run it before anything changes on any host.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  vip:
    description: The virtual IP (IPv4 or IPv6), the IP of the lock's C(controlPlaneEndpoint).
    type: str
    required: true
  port:
    description: The API server port behind the VIP (the local kube-apiserver the check asks).
    type: int
    default: 6443
  router_id:
    description: The VRRP virtual router id (1-255), unique among the VRRP instances on the subnet.
    type: int
    default: 51
  interface:
    description: The interface that holds the VIP on every control-plane host; default the one on the VIP's subnet.
    type: str
  control_plane:
    description: The control-plane hosts in inventory order; default the inventory group C(control_plane).
    type: list
    elements: str
  addresses:
    description:
      - Per control-plane host, the JSON list C(ip -j addr) printed on it (interfaces with their addresses and prefix
        lengths); loopback and link-local addresses are ignored.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Interfaces and addresses (read-only)
  ansible.builtin.command: ip -j addr
  register: mooring_ip_addr
  changed_when: false

- name: Plan the VIP (controller)
  mooring.cluster.ha_endpoint_plan:
    vip: "{{ mooring_lock_values.ha_endpoint.vip }}"
    port: "{{ mooring_lock_values.ha_endpoint.port }}"
    router_id: "{{ mooring_lock_values.ha_endpoint.router_id }}"
    interface: "{{ mooring_lock_values.ha_endpoint.interface }}"
    addresses: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, ['mooring_ip_addr', 'stdout'])
                   | map('from_json'))) }}"
  run_once: true
  register: mooring_ha_plan
"""

RETURN = r"""
vip:
  description: The virtual IP.
  returned: always
  type: str
  sample: 10.0.0.100
prefix:
  description: The prefix length of the VIP's subnet (the VIP is added as VIP/PREFIX).
  returned: always
  type: int
  sample: 24
port:
  description: The API server port.
  returned: always
  type: int
  sample: 6443
family:
  description: 4 or 6.
  returned: always
  type: int
  sample: 4
router_id:
  description: The VRRP virtual router id.
  returned: always
  type: int
  sample: 51
check_weight:
  description: How much a failing local API server check lowers a host's priority (more than the priorities' spread).
  returned: always
  type: int
  sample: 50
held_by:
  description:
    - The control-plane hosts that have the VIP on an interface now (keepalived's holder on a re-run; such an address
      is taken as the VIP held there, not as the host's own address - that comes from the inventory).
  returned: always
  type: list
  elements: str
  sample: [h1]
hosts:
  description: Per control-plane host - C(interface), source C(address), C(network), C(priority) and unicast C(peers).
  returned: always
  type: dict
  sample:
    h1: {interface: eth0, address: 10.0.0.11, network: 10.0.0.0/24, priority: 200, peers: [10.0.0.12, 10.0.0.13]}
"""
