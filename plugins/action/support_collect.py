# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.support_collect: the module on the host, its exchange timed on the controller
(the host's clock offset for the support bundle's index; MooringAction.execute_timed)."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    _requires_connection = True

    def act(self, args, task_vars):
        return self.execute_timed("mooring.cluster.support_collect", args, task_vars)
