# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.solution_config: the next SolutionsConfiguration, decided on the controller."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.k8s import (
    available_images,
    dump_config,
    imported_versions,
    load_config,
    update_config,
)
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    PLAIN_ARGS = True

    def act(self, args, task_vars):
        config = load_config(args["current"])
        if args["action"] != "show":
            # Not REQUIRED_IF: these messages name the action (and deactivate needs no version).
            if not args["name"]:
                raise MooringError("name is required for action %s" % args["action"])
            if args["action"] != "deactivate" and not args["version"]:
                raise MooringError("version is required for action %s" % args["action"])
            config = update_config(config, args["action"], args["name"], args["version"], args["archive"])
        name = args["name"]
        return {
            "changed": False,
            "config": config,
            "content": dump_config(config),
            "imported": imported_versions(config, name) if name else [],
            "available": available_images(config, name) if name else {},
            "active": config["active"].get(name) if name else None,
        }
