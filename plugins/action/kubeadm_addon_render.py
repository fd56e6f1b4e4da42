# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_addon_render: patch an add-on's upstream objects on the controller."""

from __future__ import annotations

import json

import yaml  # a controller requirement (the base class reads the option docs with it too)
from ansible.errors import AnsibleActionFail

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.addons import addons
from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        objects = None
        if args["manifest"]:
            try:
                objects = [d for d in yaml.safe_load_all(args["manifest"]) if d]
            except yaml.YAMLError as exc:
                raise AnsibleActionFail("add-on %s: the manifest is not YAML: %s" % (args["name"], exc)) from None
        out = addons.render_addon(args["name"], objects, args["options"], args["images"], args["cluster"])
        out["unpinned"] = []
        if out["problems"] and args["unpinned_images"] == "report":
            out["unpinned"], out["problems"] = out["problems"], []
        if out["problems"]:
            raise AnsibleActionFail("add-on %s: %s" % (args["name"], "; ".join(out["problems"])))
        out["objects"] = addons.apply_order(out["objects"])
        out["changed"] = False
        if args["dest"]:
            kept = out["objects"] if out["kind"] == "manifest" else out["values"]
            text = json.dumps(kept, indent=4, sort_keys=True, separators=(",", ": ")) + "\n"
            out["changed"] = fileio.write_if_changed(args["dest"], text, mode=0o644, check_mode=self.check_mode)
            out["dest"] = args["dest"]
        return out
