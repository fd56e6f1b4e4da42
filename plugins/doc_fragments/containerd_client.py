# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options of the modules that talk to containerd through ctr (module_utils.common.ctr.IMPORT_OPTIONS)."""

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  namespace:
    description: containerd namespace (C(k8s.io) is the one the CRI plugin and kubelet use).
    type: str
    default: k8s.io
  address:
    description: containerd's socket.
    type: path
    default: /run/containerd/containerd.sock
  ctr:
    description: The C(ctr) command.
    type: str
    default: ctr
    aliases: [ctr_path]
"""
