# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.solution_archive: validate an archive on the controller."""

from __future__ import annotations

import os

from ansible_collections.mooring.cluster.plugins.module_utils.solutions.images import export_images
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.k8s import render_crds
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.operatordeploy import rendered_manifests
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.validate import validate_archive
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    PLAIN_ARGS = True

    def act(self, args, task_vars):
        summary = validate_archive(args["path"], pubkey_path=args["pubkey"],
                                   require_signature=args["require_signature"], sha256sum=args["sha256sum"],
                                   trusted_sha256=args["trusted_sha256"], require_trust=args["require_trust"],
                                   allow_broad_rbac=args["allow_broad_rbac"])
        images, changed = [], False
        if args["export_dir"]:
            dest = os.path.join(args["export_dir"], "%s-%s" % (summary["name"], summary["version"]))
            images, changed = export_images(args["path"], summary, args["image_prefix"], dest,
                                            check_mode=self.check_mode)
        return {
            "changed": changed,
            "name": summary["name"],
            "version": summary["version"],
            "display_name": summary["display_name"],
            "archive_sha256": summary["archive_sha256"],
            "signed": summary["signed"],
            "signature_verified": summary["signature_verified"],
            "flavour": summary["flavour"],
            "trust": summary["trust"],
            "warnings_archive": summary["warnings"],
            "broad_rbac": summary["broad_rbac"],
            "images": [{"ref": i["ref"], "digest": i["digest"], "file": i["file"]} for i in images],
            "image_names": ["%s:%s" % (i["name"], i["tag"]) for i in summary["images"]],
            "crds": render_crds(summary),
            "operator_rendered": rendered_manifests(summary, args["image_prefix"]),
            "solution": summary,
        }
