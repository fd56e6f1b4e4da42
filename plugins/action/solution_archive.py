# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.solution_archive: validate an archive on the controller."""

from __future__ import annotations

import json
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.archive import export_images, validate_archive
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.k8s import render_crds

ARGUMENT_SPEC = {
    "path": {"type": "path", "required": True},
    "pubkey": {"type": "path"},
    "require_signature": {"type": "bool", "default": True},
    "export_dir": {"type": "path"},
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
        check_mode = bool(self._task.check_mode)
        try:
            summary = validate_archive(args["path"], pubkey_path=args["pubkey"],
                                       require_signature=args["require_signature"])
            images, changed = [], False
            if args["export_dir"]:
                dest = os.path.join(args["export_dir"], "%s-%s" % (summary["name"], summary["version"]))
                images, changed = export_images(args["path"], summary, args["image_prefix"], dest,
                                                check_mode=check_mode)
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
        result.update({
            "changed": changed,
            "name": summary["name"],
            "version": summary["version"],
            "display_name": summary["display_name"],
            "archive_sha256": summary["archive_sha256"],
            "signed": summary["signed"],
            "signature_verified": summary["signature_verified"],
            "warnings_archive": summary["warnings"],
            "images": [{"ref": i["ref"], "digest": i["digest"], "file": i["file"]} for i in images],
            "image_names": ["%s:%s" % (i["name"], i["tag"]) for i in summary["images"]],
            "crds": render_crds(summary),
            "solution": summary,
        })
        return result
