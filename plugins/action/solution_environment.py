# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.solution_environment: the Kubernetes objects of an environment change."""

from __future__ import annotations

import json

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.k8s import plan_changes

ARGUMENT_SPEC = {
    "environment": {"type": "str", "required": True},
    "namespace": {"type": "str"},
    "description": {"type": "str", "default": ""},
    "action": {"type": "str", "required": True,
               "choices": ["create", "delete", "add", "upgrade", "downgrade", "remove"]},
    "current": {"type": "dict", "default": {}},
    "name": {"type": "str"},
    "version": {"type": "str"},
    "solution": {"type": "dict"},
    "previous": {"type": "dict"},
    "config": {"type": "str", "default": ""},
    "image_prefix": {"type": "str", "default": "solutions.mooring.local"},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        args = json.loads(json.dumps(args))  # plain Python types (no templating tags) for the backends
        try:
            out = plan_changes(**args)
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
        result.update(out)
        result["changed"] = False
        return result
