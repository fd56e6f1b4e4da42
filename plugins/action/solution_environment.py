# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.solution_environment: the Kubernetes objects of an environment change."""

from __future__ import annotations

import json

from ansible_collections.mooring.cluster.plugins.module_utils.solutions.k8s import plan_changes
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        args = json.loads(json.dumps(args))  # plain Python types (no templating tags) for the backends
        out = plan_changes(**args)
        out["changed"] = False
        return out
