# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.bundle_build: the bundle is built on the controller."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as backend
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import load_lock

display = Display()

ARGUMENT_SPEC = {
    "lock": {"type": "path", "required": True},
    "dest": {"type": "path", "required": True},
    "addons": {"type": "list", "elements": "str", "default": []},
    "key": {"type": "path"},
    "cache_dir": {"type": "path"},
    "distro": {"type": "str", "default": "debian", "choices": ["debian"]},
    "verify_cache": {"type": "bool", "default": False},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        # Relative paths are the user's, from the directory ansible runs in (as with the CLI); what
        # this returns is absolute, so later tasks (modules run elsewhere) find the same files.
        for name in ("lock", "dest", "key", "cache_dir"):
            if args.get(name):
                args[name] = os.path.abspath(args[name])
        before = backend.bundle_id_of(args["dest"])
        try:
            lock = load_lock(args["lock"])
            out = backend.build_bundle(
                lock, args["dest"], key_path=args["key"], cache_dir=args["cache_dir"], addons=args["addons"],
                distro=args["distro"], progress=lambda text: display.display("bundle_build: %s" % text),
                check_mode=bool(self._task.check_mode), verify_cache=args["verify_cache"])
        except (MooringError, OSError) as exc:
            raise AnsibleActionFail(to_native(exc)) from exc
        result.update(out)
        if self._task.diff and out["changed"]:
            result["diff"] = {"before": "bundle id: %s\n" % before, "after": "bundle id: %s\n" % out.get("id", "?"),
                              "before_header": args["dest"], "after_header": args["dest"]}
        return result
