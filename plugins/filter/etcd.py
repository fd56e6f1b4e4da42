# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter etcd_upgrade_problems: the etcd members that may not go to a target etcd in one step."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.kubeadm import KubeadmError
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.skew import etcd_path


def etcd_upgrade_problems(versions, target, members=None):
    """One line per member that etcd's upgrade path refuses (empty: go on). ``versions``: client URL or member name
    -> the version it runs (mooring.cluster.etcd_health's ``versions``); ``members``: the PKI's etcd members
    (``name``, ``addresses``), to name a URL's member."""
    if not isinstance(versions, dict):
        raise AnsibleFilterError("etcd_upgrade_problems: expected a mapping of member -> version, not %s"
                                 % type(versions).__name__)
    names = {}
    for m in members or []:
        for address in m.get("addresses") or []:
            names["https://%s:2379" % address] = m.get("name")
    try:
        return etcd_path({names.get(k) or k: v for k, v in versions.items()}, target)
    except KubeadmError as exc:
        raise AnsibleFilterError(to_native(exc)) from exc


class FilterModule(object):
    def filters(self):
        return {"etcd_upgrade_problems": etcd_upgrade_problems}
