# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.installer: all work happens on the controller."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import write_text_if_changed
from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import load_catalog
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import build_lock, dump_lock
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import parse_installer

ARGSPEC = dict(
    src=dict(type="path"),
    definition=dict(type="dict"),
    lock=dict(type="path"),
    catalog=dict(type="path"),
    catalog_overlay=dict(type="list", elements="path", default=[]),
    architectures=dict(type="list", elements="str", default=["amd64"], choices=["amd64", "arm64", "ppc64le"]),
    resolve=dict(type="bool", default=True),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self.validate_argument_spec(
            argument_spec=ARGSPEC,
            mutually_exclusive=[("src", "definition")],
            required_one_of=[("src", "definition")],
        )[1]
        try:
            if args["src"]:
                path = self._find_needle("files", args["src"])
                with open(path, "r", encoding="utf-8") as handle:
                    installer = parse_installer(handle.read())
            else:
                installer = parse_installer(args["definition"])
            result.update(hash=installer.hash, spec_digest=installer.digest, source=installer.source,
                          unsupported=installer.unsupported, changed=False)
            if not args["resolve"]:
                return result
            catalog = load_catalog(args["catalog"], args["catalog_overlay"])
            lock = build_lock(installer, catalog, args["architectures"])
        except (MooringError, OSError) as exc:
            raise AnsibleActionFail(to_native(exc)) from exc
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
            if result["changed"] and not self._task.check_mode:
                write_text_if_changed(args["lock"], text)
        return result
