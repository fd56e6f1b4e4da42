# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.pki: the cluster PKI, made on the controller."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki import ensure_pki, request_from_inventory
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import load_lock
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import DEFAULTS

# Cluster-wide values every certificate request needs, in one place: an explicit option wins, then
# the lock's kubernetes options (the installer spec), then the spec's defaults. Every playbook passes
# the same lock, so no two playbooks can disagree on the API server's SANs.
_CLUSTER_VALUES = (
    # option, key in the lock's kubernetes options, default
    ("control_plane_endpoint", "controlPlaneEndpoint", ""),
    ("cluster_domain", "clusterDomain", DEFAULTS["kubernetes"]["clusterDomain"]),
    ("service_cidr", "serviceCIDR", DEFAULTS["kubernetes"]["serviceCIDR"]),
)

_MEMBER = {
    "name": {"type": "str", "required": True},
    "addresses": {"type": "list", "elements": "str", "default": []},
    "names": {"type": "list", "elements": "str", "default": []},
}
ARGUMENT_SPEC = {
    "path": {"type": "path", "required": True},
    "lock": {"type": "path"},
    "control_plane_endpoint": {"type": "str"},
    "cluster_domain": {"type": "str"},
    "service_cidr": {"type": "str"},
    "control_plane": {"type": "list", "elements": "dict", "default": [], "options": _MEMBER},
    "etcd": {"type": "list", "elements": "dict", "default": [], "options": _MEMBER},
    "kubelets": {"type": "list", "elements": "str", "default": []},
    "key_type": {"type": "str", "default": "ecdsa", "choices": ["ecdsa", "rsa"]},
    "ca_validity_days": {"type": "int", "default": 3650},
    "validity_days": {"type": "int", "default": 365},
    "renew_before_days": {"type": "int", "default": 30},
    "force": {"type": "list", "elements": "str", "default": []},
    "from_inventory": {"type": "bool", "default": False},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        request = {k: args[k] for k in ARGUMENT_SPEC if k not in ("path", "force", "from_inventory", "lock")}
        try:
            options = load_lock(args["lock"])["addons"]["kubernetes"].get("options", {}) if args["lock"] else {}
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
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
        try:
            out = ensure_pki(args["path"], request, check_mode=bool(self._task.check_mode), force=args["force"])
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
        diff = out.pop("diff")
        if self._task.diff and out["changed"]:
            result["diff"] = diff
        result.update(out)
        # The hosts as the certificates see them: feed these to the roles (etcd_members ...).
        result["control_plane"] = request["control_plane"]
        result["etcd"] = request["etcd"]
        result["kubelets"] = request["kubelets"]
        return result
