# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.controller_state: the controller's state archived with age, or restored."""

from __future__ import annotations

import os

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.sign import default_key_path, public_key_path
from ansible_collections.mooring.cluster.plugins.plugin_utils import controllerstate
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction
from ansible_collections.mooring.cluster.plugins.plugin_utils.report import INVENTORY_DIR_SUBDIR


def default_items(task_vars):
    """Where this controller keeps each item, from the variables the other playbooks read."""
    inventory_dir = task_vars.get("inventory_dir") or ""
    signing_key = task_vars.get("bundle_signing_key") or default_key_path()
    items = {
        "pki": task_vars.get("mooring_pki_dir") or (os.path.join(inventory_dir, "pki") if inventory_dir else ""),
        "lock": task_vars.get("mooring_lock") or task_vars.get("bundle_lock") or "",  # the old name until 0.4.0
        "signing_key": signing_key,
        "signing_pub": public_key_path(signing_key),
        "reports": os.path.join(inventory_dir, INVENTORY_DIR_SUBDIR) if inventory_dir else "",
        # What install writes on the controller from the PKI and the lock: the admin kubeconfig (a credential) and
        # the rendered add-on manifests (the record of what was applied).
        "kubeconfig": task_vars.get("mooring_kubeconfig") or (os.path.join(inventory_dir, "admin.conf") if inventory_dir else ""),
        "rendered": task_vars.get("mooring_addons_render_dir") or (os.path.join(inventory_dir, "rendered") if inventory_dir else ""),
    }
    return {name: os.path.expanduser(str(path)) if path else "" for name, path in items.items()}


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        defaults = default_items(task_vars)
        items = {n: p for n, p in dict(defaults, **(args["items"] or {})).items() if p}
        if args["state"] == "archived":
            # Signed with the bundle signing key: the one the archive's signing_key item holds, unless named.
            key_path = args["signing_key"] or items.get("signing_key") or defaults["signing_key"]
            if self.check_mode:  # the keys checked, nothing read or written
                controllerstate.recipients(args["recipients"])
                _key, signer = controllerstate.signing_key(key_path)
                return {"changed": True, "paths": items, "skipped": [], "files": 0, "sha256": "", "signer": signer}
            done = controllerstate.pack(items, args["recipients"], args["path"], key_path)
            return {"changed": True, "paths": {n: items[n] for n in done["items"]}, "skipped": done["skipped"],
                    "files": done["files"], "bytes": done["bytes"], "sha256": done["sha256"], "signer": done["signer"]}
        if not args["identity"]:
            raise controllerstate.ControllerStateError("state=restored needs identity (the private key the archive was encrypted to)")
        if not args["trusted_signers"]:
            raise controllerstate.ControllerStateError(
                "state=restored needs trusted_signers (controller_restore: -e controller_backup_signers=FILE): the public "
                "key of the bundle signing key that signed the backup - bundle-signing.pub, also on every host as "
                "/etc/mooring/bundle-signing.pub; the archive's own copy is never trusted")
        done = controllerstate.unpack(args["path"], args["identity"], items, args["trusted_signers"],
                                      check_mode=self.check_mode)
        return {"changed": bool(done["written"]), "paths": {n: items[n] for n in done["items"]},
                "files": done["files"], "written": done["written"], "unchanged": done["unchanged"],
                "signer": done["signer"], "created": done["created"]}
