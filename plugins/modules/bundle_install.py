#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: bundle_install
short_description: Install upstream binaries and release archives from an unpacked air-gap bundle
version_added: 0.1.0
description:
  - Installs the artifacts named in O(names) exactly as the bundle's signed manifest records them
    (made on the controller by M(mooring.cluster.bundle_build) from the upstream release layouts) - bare
    binaries such as C(runc) or C(kubeadm), and the listed members of release archives such as
    C(etcd-vX.Y.Z-linux-ARCH.tar.gz), containerd's release archive, the CNI plugins or crictl.
  - A file is written only when its content (sha256) or mode differs from the record; each write goes to
    a temporary file that is checked against the sha256 and renamed into place.
  - After installing, each binary is asked for its own version and compared with the lock's version;
    a mismatch fails the task.
  - Standard library only.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
extends_documentation_fragment:
  - mooring.cluster.attributes
options:
  bundle:
    description: The unpacked bundle's summary, as returned by M(mooring.cluster.bundle_unpack) (its C(installs) list).
    type: dict
    required: true
  names:
    description: Artifact names to install (for example V(etcd), V(containerd), V(runc), V(cni-plugins), V(crictl),
      V(kubeadm), V(kubelet), V(kubectl)). Every name must be in the bundle unless listed in O(optional).
    type: list
    elements: str
    required: true
  optional:
    description: Names that may be absent from the bundle (reported in RV(absent) instead of failing).
    type: list
    elements: str
    default: []
  arch:
    description: The host's architecture in the catalog's terms; default from the host (C(x86_64) is V(amd64)).
    type: str
  check_versions:
    description: Ask each installed binary for its version and compare it with the lock's.
    type: bool
    default: true
  running_unit:
    description:
      - A systemd unit whose running binaries this task must not swap. When the unit is active and a file that
        is there would be replaced by other bytes, the task fails before writing anything, naming the files and
        the playbook C(mooring.cluster.upgrade) (which replaces them one host at a time after draining it). A missing file, or
        one whose mode differs, is restored.
    type: str
  host:
    description: The host's name in messages (the inventory name; default the node name).
    type: str
seealso:
  - module: mooring.cluster.bundle_unpack
  - module: mooring.cluster.bundle_build
"""

EXAMPLES = r"""
- name: Install etcd from the bundle
  mooring.cluster.bundle_install:
    bundle: "{{ bundle_installed }}"
    names: [etcd]
"""

RETURN = r"""
installed:
  description: Destinations written (or, in check mode, that would be written).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/etcd, /usr/local/bin/etcdctl]
versions:
  description: What each installed binary reports as its version (not in check mode before a first install).
  returned: always
  type: dict
  sample: {etcd: 3.6.14, etcdctl: 3.6.14}
artifacts:
  description: Per installed artifact its name, version (from the lock) and files.
  returned: always
  type: list
  elements: dict
absent:
  description: Names of O(optional) that the bundle does not carry.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import install as host_install  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


class BundleInstall(MooringModule):
    """Installs artifacts from the unpacked bundle."""

    argument_spec = dict(
        bundle=dict(type="dict", required=True),
        names=dict(type="list", elements="str", required=True),
        optional=dict(type="list", elements="str", default=[]),
        arch=dict(type="str"),
        check_versions=dict(type="bool", default=True),
        running_unit=dict(type="str"),
        host=dict(type="str"),
    )
    errors = (host_install.InstallError, OSError)

    def run(self):
        p = self.params
        result, problems = host_install.install(
            p["bundle"], p["names"], self.command, optional=p["optional"], arch=p["arch"], versions=p["check_versions"],
            running_unit=p["running_unit"], host=p["host"], check_mode=self.check_mode)
        written = result["installed"]
        result["changed"] = bool(written)
        if problems:
            self.fail("installed binaries do not match the lock: %s" % "; ".join(problems), **result)
        if self.module._diff and written:
            result["diff"] = dict(before="", after="".join("%s\n" % d for d in written))
        return result


def main():
    BundleInstall().execute()


if __name__ == "__main__":
    main()
