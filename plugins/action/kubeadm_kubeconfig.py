# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_kubeconfig: the admin kubeconfig, on the controller, from the PKI."""

from __future__ import annotations

import os
import tempfile

from ansible.errors import AnsibleActionFail

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import kubeadm
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        raise AnsibleActionFail("%s: cannot read (%s); run mooring.cluster.pki first" % (path, exc.strerror)) from None


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        pki = args["pki_dir"]
        text = kubeadm.admin_kubeconfig(args["server"], _read(os.path.join(pki, "ca.crt")),
                                        _read(os.path.join(pki, "kubeconfig", "admin.crt")),
                                        _read(os.path.join(pki, "kubeconfig", "admin.key")), args["cluster_name"])
        current = None
        if os.path.exists(args["dest"]):
            current = _read(args["dest"])
        changed = current != text
        if changed and not self.check_mode:
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
        return {"changed": changed, "dest": args["dest"]}
