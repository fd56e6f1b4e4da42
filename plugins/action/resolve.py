# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.resolve (formerly mooring.cluster.installer): all work happens on the controller.

The arguments are the stub's (plugins/modules/resolve.py) documented options.
"""

from __future__ import annotations

import os

from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import write_if_changed
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import dump_lock
from ansible_collections.mooring.cluster.plugins.module_utils.lock.resolve import read_installer, resolve
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    MUTUALLY_EXCLUSIVE = (("src", "definition"),)
    REQUIRED_ONE_OF = (("src", "definition"),)

    def act(self, args, task_vars):
        if args["src"]:
            installer = read_installer(path=self.controller_file(args["src"]))
        else:
            installer = read_installer(args["definition"])
        result = dict(hash=installer.hash, spec_digest=installer.digest, source=installer.source,
                      unsupported=installer.unsupported, changed=False)
        if installer.warnings:
            result["warnings"] = list(installer.warnings)
        if not args["resolve"]:
            return result
        lock = resolve(installer, args["catalog"], args["catalog_overlay"], args["architectures"])
        result.update(lock=lock, digest=lock["digest"],
                      versions={name: addon["version"] for name, addon in lock["addons"].items()})
        if args["lock"]:
            text = dump_lock(lock)
            before = ""
            if os.path.exists(args["lock"]):
                with open(args["lock"], "r", encoding="utf-8") as handle:
                    before = handle.read()
            result["changed"] = before != text
            if self._task.diff and result["changed"]:
                result["diff"] = dict(before=before, after=text, before_header=args["lock"], after_header=args["lock"])
            if result["changed"] and not self.check_mode:
                write_if_changed(args["lock"], text)
        return result
