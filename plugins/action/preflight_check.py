# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.preflight_check: the module on the host, its exchange timed on the controller.

The module reports the host's clock when it started and when it replied; with the controller's clock when
the module was sent and when its answer came back, the host's clock offset from the controller's is
estimated as NTP does (preflight.clock_offset) and judged with the inventory's checks.
"""

from __future__ import annotations

import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight import clock_offset
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    _requires_connection = True

    def act(self, args, task_vars):
        args = {k: v for k, v in args.items() if v is not None}
        sent = time.time()
        result = self._execute_module(module_name="mooring.cluster.preflight_check", module_args=args,
                                      task_vars=task_vars)
        back = time.time()
        clock = (result.get("facts") or {}).get("clock") or {}
        if "received" in clock and "replied" in clock:
            result["facts"]["clock"] = clock_offset(sent, clock["received"], clock["replied"], back)
        return result
