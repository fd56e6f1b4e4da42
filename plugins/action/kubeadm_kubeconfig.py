# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_kubeconfig: the admin kubeconfig, on the controller, from the PKI."""

from __future__ import annotations

import os
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import kubeadm
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

ARGUMENT_SPEC = {
    "pki_dir": {"type": "path", "required": True},
    "server": {"type": "str", "required": True},
    "dest": {"type": "path", "required": True},
    "cluster_name": {"type": "str", "default": "kubernetes"},
}


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        raise AnsibleActionFail("%s: cannot read (%s); run mooring.cluster.pki first" % (path, exc.strerror)) from None


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        pki = args["pki_dir"]
        try:
            text = kubeadm.admin_kubeconfig(args["server"], _read(os.path.join(pki, "ca.crt")),
                                            _read(os.path.join(pki, "kubeconfig", "admin.crt")),
                                            _read(os.path.join(pki, "kubeconfig", "admin.key")), args["cluster_name"])
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
        current = None
        if os.path.exists(args["dest"]):
            current = _read(args["dest"])
        changed = current != text
        if changed and not self._task.check_mode:
            directory = os.path.dirname(os.path.abspath(args["dest"]))
            os.makedirs(directory, mode=0o700, exist_ok=True)
            fd, tmp_path = tempfile.mkstemp(dir=directory, prefix=".kubeconfig-")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                os.chmod(tmp_path, 0o600)
                os.replace(tmp_path, args["dest"])
            except OSError as exc:
                os.unlink(tmp_path)
                raise AnsibleActionFail("%s: cannot write (%s)" % (args["dest"], exc.strerror)) from None
        result.update({"changed": changed, "dest": args["dest"]})
        return result
