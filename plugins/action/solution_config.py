# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.solution_config: the next SolutionsConfiguration, decided on the controller."""

from __future__ import annotations

import json

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.k8s import (
    available_images,
    dump_config,
    imported_versions,
    load_config,
    update_config,
)

ARGUMENT_SPEC = {
    "current": {"type": "str", "default": ""},
    "action": {"type": "str", "required": True, "choices": ["import", "remove", "activate", "deactivate", "show"]},
    "name": {"type": "str"},
    "version": {"type": "str"},
    "archive": {"type": "dict", "options": {
        "path": {"type": "str", "required": True},
        "sha256": {"type": "str", "required": True},
        "images": {"type": "list", "elements": "str", "default": []},
    }},
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
            config = load_config(args["current"])
            if args["action"] != "show":
                if not args["name"]:
                    raise MooringError("name is required for action %s" % args["action"])
                if args["action"] != "deactivate" and not args["version"]:
                    raise MooringError("version is required for action %s" % args["action"])
                config = update_config(config, args["action"], args["name"], args["version"], args["archive"])
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
        name = args["name"]
        result.update({
            "changed": False,
            "config": config,
            "content": dump_config(config),
            "imported": imported_versions(config, name) if name else [],
            "available": available_images(config, name) if name else {},
            "active": config["active"].get(name) if name else None,
        })
        return result
