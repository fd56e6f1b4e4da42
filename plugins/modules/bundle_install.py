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
        M(mooring.cluster.upgrade) (which replaces them one host at a time after draining it). A missing file, or
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

import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import install as host_install  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec=dict(
            bundle=dict(type="dict", required=True),
            names=dict(type="list", elements="str", required=True),
            optional=dict(type="list", elements="str", default=[]),
            arch=dict(type="str"),
            check_versions=dict(type="bool", default=True),
            running_unit=dict(type="str"),
            host=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    arch = p["arch"] or host_install.host_arch()
    entries = host_install.select(p["bundle"].get("installs"), names=p["names"], arch=arch)
    present = {e["name"] for e in entries}
    missing = [n for n in p["names"] if n not in present and n not in p["optional"]]
    if missing:
        module.fail_json(msg="the bundle %s carries no %s for %s: build it from a lock that lists %s"
                         % (p["bundle"].get("id", "?"), ", ".join(missing), arch, ", ".join(missing)))
    try:
        todo = host_install.plan(entries)
        written = [f["dest"] for _e, f, _s in todo]
        # Swapping is replacing a binary that is there with other bytes; a missing file is restored.
        swapped = [f["dest"] for _e, f, state in todo if state == "content" and os.path.lexists(f["dest"])]
        unit = p["running_unit"]
        if unit and swapped and module.run_command(["systemctl", "is-active", "--quiet", unit])[0] == 0:
            module.fail_json(msg="%s: %s is running and the bundle has other binaries for it (%s); nothing was "
                             "installed or restarted. Run mooring.cluster.upgrade with this lock and bundle to "
                             "replace them one host at a time (drain, restart, gate)."
                             % (p["host"] or os.uname().nodename, unit, ", ".join(swapped)))
        if not module.check_mode:
            host_install.apply(todo)
        versions, problems = {}, []
        if p["check_versions"] and not (module.check_mode and todo):
            def run(argv):
                return module.run_command(argv, environ_update={"LC_ALL": "C"})
            versions, problems = host_install.check_versions(entries, run)
    except (host_install.InstallError, OSError) as exc:
        module.fail_json(msg=str(exc))
    artifacts = [{"name": e["name"], "version": e.get("version"), "addon": e.get("addon"),
                  "files": [f["dest"] for f in e.get("files") or []]} for e in entries]
    result = dict(changed=bool(written), installed=written, versions=versions, artifacts=artifacts,
                  absent=sorted(n for n in p["names"] if n not in present))
    if problems:
        module.fail_json(msg="installed binaries do not match the lock: %s" % "; ".join(problems), **result)
    if module._diff and written:
        result["diff"] = dict(before="", after="".join("%s\n" % d for d in written))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
