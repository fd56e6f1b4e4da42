# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.preflight_check: the module on the host, its exchange timed on the controller.

The module reports the host's clock when it started and when it replied; with the controller's clock when
the module was sent and when its answer came back, the host's clock offset from the controller's is
estimated as NTP does and judged with the inventory's checks (MooringAction.execute_timed).
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    _requires_connection = True

    def act(self, args, task_vars):
        return self.execute_timed("mooring.cluster.preflight_check", args, task_vars)
