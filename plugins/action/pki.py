# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.pki: the cluster PKI, made on the controller."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pki import ensure_pki
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import request_from_inventory
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import load_lock
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import DEFAULTS
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction

# Cluster-wide values every certificate request needs, in one place: an explicit option wins, then
# the lock's kubernetes options (the installer spec), then the spec's defaults. Every playbook passes
# the same lock, so no two playbooks can disagree on the API server's SANs.
_CLUSTER_VALUES = (
    # option, key in the lock's kubernetes options, default
    ("control_plane_endpoint", "controlPlaneEndpoint", ""),
    ("cluster_domain", "clusterDomain", DEFAULTS["kubernetes"]["clusterDomain"]),
    ("service_cidr", "serviceCIDR", DEFAULTS["kubernetes"]["serviceCIDR"]),
)

# The options that are not part of the certificate request.
_NOT_REQUEST = ("path", "force", "from_inventory", "lock", "kubernetes_options", "new_ca", "reissue_broken")


class ActionModule(MooringAction):
    MUTUALLY_EXCLUSIVE = (("lock", "kubernetes_options"),)

    def act(self, args, task_vars):
        request = {k: v for k, v in args.items() if k not in _NOT_REQUEST}
        try:
            if args["kubernetes_options"] is not None:
                options = args["kubernetes_options"]
            else:
                options = load_lock(args["lock"])["addons"]["kubernetes"].get("options", {}) if args["lock"] else {}
        except KeyError:
            raise AnsibleActionFail("lock %s: it has no kubernetes add-on" % args["lock"]) from None
        for option, key, default in _CLUSTER_VALUES:
            if request[option] is None:
                request[option] = options.get(key) or default
        if args["from_inventory"]:
            derived = request_from_inventory(task_vars.get("groups") or {}, task_vars.get("hostvars") or {})
            for part, value in derived.items():
                if not request[part]:
                    request[part] = value
        result = ensure_pki(args["path"], request, check_mode=self.check_mode, force=args["force"],
                            new_ca=args["new_ca"], reissue_broken=args["reissue_broken"])
        diff = result.pop("diff")
        if self._task.diff and result["changed"]:
            result["diff"] = diff
        # The hosts as the certificates see them: feed these to the roles (etcd_members ...).
        result["control_plane"] = request["control_plane"]
        result["etcd"] = request["etcd"]
        result["kubelets"] = request["kubelets"]
        return result
