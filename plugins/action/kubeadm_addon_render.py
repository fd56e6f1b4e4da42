# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_addon_render: patch an add-on's upstream objects on the controller."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import addons
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

try:
    import yaml

    HAS_YAML = True
except ImportError:  # a controller requirement
    HAS_YAML = False

ARGUMENT_SPEC = {
    "name": {"type": "str", "required": True},
    "manifest": {"type": "str"},
    "options": {"type": "dict", "default": {}},
    "images": {"type": "list", "elements": "raw", "default": []},
    "cluster": {"type": "dict", "default": {}},
    "unpinned_images": {"type": "str", "default": "fail", "choices": ["fail", "report"]},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        if not HAS_YAML:
            raise AnsibleActionFail("PyYAML is required on the controller to read add-on manifests")
        try:
            objects = None
            if args["manifest"]:
                try:
                    objects = [d for d in yaml.safe_load_all(args["manifest"]) if d]
                except yaml.YAMLError as exc:
                    raise AnsibleActionFail("add-on %s: the manifest is not YAML: %s" % (args["name"], exc)) from None
            out = addons.render_addon(args["name"], objects, args["options"], args["images"], args["cluster"])
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
        out["unpinned"] = []
        if out["problems"] and args["unpinned_images"] == "report":
            out["unpinned"], out["problems"] = out["problems"], []
        if out["problems"]:
            raise AnsibleActionFail("add-on %s: %s" % (args["name"], "; ".join(out["problems"])))
        out["objects"] = addons.apply_order(out["objects"])
        result.update(out)
        result["changed"] = False
        return result
