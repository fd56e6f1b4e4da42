# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.bundle_build: the bundle is built on the controller."""

from __future__ import annotations

import os

from ansible.utils.display import Display

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as backend
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import sbom
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.host import bundle_id_of
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import check_lock, load_lock
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction

display = Display()


def _digest_or_absent(path):
    """``sha256:<hex>`` of a regular file (the SBOM is small), else ``absent``."""
    if not os.path.isfile(path):
        return "absent"
    try:
        return "sha256:%s" % sha256_file(path)[0]
    except OSError:
        return "absent"


class ActionModule(MooringAction):
    MUTUALLY_EXCLUSIVE = (("lock", "lock_data"),)
    REQUIRED_ONE_OF = (("lock", "lock_data"),)

    def act(self, args, task_vars):
        # Relative paths are the user's, from the directory ansible runs in (as with the CLI); what
        # this returns is absolute, so later tasks (modules run elsewhere) find the same files.
        for name in ("lock", "dest", "key", "cache_dir"):
            if args.get(name):
                args[name] = os.path.abspath(args[name])
        before = bundle_id_of(args["dest"])
        sbom_before = _digest_or_absent(sbom.sbom_path(args["dest"])) if self._task.diff else None
        if args["lock_data"] is not None:
            lock = check_lock(args["lock_data"], "lock (as mooring.cluster.lock_values read it)")
        else:
            lock = load_lock(args["lock"])
        result = backend.build_bundle(
            lock, args["dest"], key_path=args["key"], cache_dir=args["cache_dir"], addons=args["addons"],
            distro=args["distro"], progress=lambda text: display.display("bundle_build: %s" % text),
            check_mode=self.check_mode, verify_cache=args["verify_cache"])
        if self._task.diff and result["changed"]:
            if self.check_mode:
                sbom_after = "(would be written)" if result["sbom_changed"] else sbom_before
            else:
                sbom_after = _digest_or_absent(result["sbom"])
            result["diff"] = {"before": "bundle id: %s\nsbom: %s\n" % (before, sbom_before),
                              "after": "bundle id: %s\nsbom: %s\n" % (result.get("id", "?"), sbom_after),
                              "before_header": args["dest"], "after_header": args["dest"]}
        return result
