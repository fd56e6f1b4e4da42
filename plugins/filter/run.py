# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter run_state: the state one run passes between its steps, as one mapping.

The controller's steps (the lock, the bundle build, the plan) leave their results as variables of ``localhost``;
``playbooks/vars/run.yml`` reads them once, through this filter, as ``mooring_run``, and every play and role
takes them from there. :data:`RUN_STATE` is the whole structure: a key missing on the controller (a step that
has not run) is its default, never an undefined variable.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

# mooring_run key -> (the controller variable it comes from, its value when the step has not run)
RUN_STATE = {
    "lock_values": ("lock_values", None),           # mooring.cluster.lock_values: the lock's values for the roles
    "lock_pki": ("lock_pki", None),                 # the PKI plan: directory, etcd members
    "bundle": ("bundle_build_result", None),        # mooring.cluster.bundle_build: id, path, public_key_path
    "plan_only": ("mooring_plan_only", False),      # a check run that only plans (nothing reaches a host)
    "ha_endpoint_plan": ("mooring_ha_endpoint_plan", None),  # mooring.cluster.ha_endpoint_plan
    "remove_api": ("cluster_remove_api", ""),       # remove_node: the API endpoint the cluster keeps
    "remove_vip": ("cluster_remove_vip", False),    # remove_node: a keepalived VIP is configured
    "remove_leaving": ("cluster_remove_leaving", []),  # remove_node: the hosts that leave
}


def run_state_filter(controller_vars):
    """``mooring_run`` from the controller's variables (``hostvars['localhost']``)."""
    if not isinstance(controller_vars, Mapping):
        raise AnsibleFilterError("run_state: expected the controller's variables (hostvars['localhost']), not %s"
                                 % type(controller_vars).__name__)
    state = {}
    for key, (name, default) in RUN_STATE.items():
        value = controller_vars.get(name)
        state[key] = default if value is None else value
    return state


class FilterModule(object):
    def filters(self):
        return {"run_state": run_state_filter}
