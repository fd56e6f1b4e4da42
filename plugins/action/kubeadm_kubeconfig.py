# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.kubeadm_kubeconfig: the admin kubeconfig, on the controller, from the PKI."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm import kubeadm
from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
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
        text = kubeadm.client_kubeconfig(args["server"], _read(os.path.join(pki, "ca.crt")),
                                         _read(os.path.join(pki, "kubeconfig", "admin.crt")),
                                         _read(os.path.join(pki, "kubeconfig", "admin.key")),
                                         cluster_name=args["cluster_name"])
        try:
            changed = fileio.write_if_changed(args["dest"], text, 0o600, dir_mode=0o700, check_mode=self.check_mode)
        except OSError as exc:
            raise AnsibleActionFail("%s: cannot write (%s)" % (args["dest"], exc.strerror)) from None
        return {"changed": changed, "dest": args["dest"]}
