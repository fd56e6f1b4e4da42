# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.host_state: read the controller's files (src), then one module run on the host."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    _requires_connection = True

    def _with_content(self, items):
        out = []
        for item in items:
            item = dict(item)
            src = item.pop("src", None)
            if src is not None:
                if item.get("content") is not None:
                    raise OSError("file %s: content and src are mutually exclusive" % item["path"])
                with open(self.controller_file(src), encoding="utf-8") as handle:
                    item["content"] = handle.read()
            out.append({k: v for k, v in item.items() if v is not None})
        return out

    def act(self, args, task_vars):
        args = dict(args)
        args["files"] = self._with_content(args["files"])
        args["secrets"] = self._with_content(args["secrets"])
        for unit in args["units"]:
            for key in [k for k, v in unit.items() if v is None]:
                del unit[key]
        args = {k: v for k, v in args.items() if v is not None}
        result = self._execute_module(module_name="mooring.cluster.host_state", module_args=args,
                                      task_vars=task_vars)
        if result.get("failed"):
            result.setdefault("msg", "host_state failed")
        return result
