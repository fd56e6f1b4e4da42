# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.lock_values: the values the playbooks take from the lock, on the controller."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import host_address
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.run.values import lock_values
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import load_lock
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    """Read the lock (digest checked), return :func:`lock_values`; changes nothing, so check mode runs it too."""

    def act(self, args, task_vars):
        lock = load_lock(args["path"])
        addresses = args["addresses"]
        if addresses is None:  # every inventory host's address (the proxy's NO_PROXY), else its name
            hostvars = task_vars.get("hostvars") or {}
            # The one reading of a host's address from the inventory (mooring_address, else ansible_host), as the SANs'.
            addresses = [a for h in (task_vars.get("groups") or {}).get("all", [])
                         for a in (sum(host_address(h, hostvars), []) or [h])]
        values = lock_values(lock, control_plane_address=args["control_plane_address"],
                             groups=args["groups"], arch=args["arch"], where=args["path"], addresses=addresses)
        if args["with_lock"]:
            values["lock"] = lock
        return values
