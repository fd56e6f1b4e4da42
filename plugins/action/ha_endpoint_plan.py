# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.ha_endpoint_plan: the keepalived VIP plan, decided on the controller."""

from __future__ import annotations

import json

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.endpoint import interfaces_from_ip_json, plan
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import host_address
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import EndpointError
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    """Every inventory host's address from the inventory, the control-plane hosts' interfaces from their facts."""

    def act(self, args, task_vars):
        groups = task_vars.get("groups") or {}
        hosts = args["control_plane"] if args["control_plane"] is not None else list(groups.get("control_plane") or [])
        control_plane = []
        for host in hosts:
            data = (args["addresses"] or {}).get(host)
            if data is None:
                raise EndpointError("addresses.%s: no interfaces reported for control-plane host %s" % (host, host))
            if isinstance(data, str):
                try:
                    data = json.loads(data)
                except ValueError:
                    raise EndpointError("addresses.%s: not the JSON of ip -j addr" % host) from None
            control_plane.append({"name": host, "interfaces": interfaces_from_ip_json(data)})
        hostvars = task_vars.get("hostvars") or {}
        # The one reading of a host's address from the inventory (mooring_address, else ansible_host), as the SANs'.
        known = {host: host_address(host, hostvars)[0] for host in groups.get("all") or []}
        return plan(args["vip"], args["port"], control_plane, known, router_id=args["router_id"],
                    interface=args["interface"] or None)
