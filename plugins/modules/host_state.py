#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: host_state
short_description: Bring a host to the state a role wants in one pass, changing only what differs
version_added: 0.1.0
description:
  - A role states as data everything it manages on a host - system groups and users, directories, files with
    their content, mode, owner and group, sysctls, kernel modules, swap and systemd units - and this module reads
    the host's real state of every item, every run, and changes only the items that differ. There is no stamp or
    digest file that short-cuts the reading.
  - One round trip for the whole list. RV(changes) has one line per changed item (what would change in check
    mode); with C(--diff) the content differences of non-secret files are shown.
  - Files given with O(files[].src) are read on the controller by the action plugin; O(secrets) are files whose
    content is never logged or shown in a diff (private keys).
  - A started unit is restarted when its process is older than its O(units[].binary) or any of its
    O(units[].files) (C(restart=stale)), so a run killed between writing a file and restarting is finished by
    the next run. C(systemctl daemon-reload) runs when a file under a systemd directory changed or systemd says a
    unit file changed.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.flow
options:
  install:
    description:
      - Binaries and release archive members from an unpacked air-gap bundle, installed first (before every other
        item, so a unit's O(units[].binary) is the new one) with the same plan, write and version check as
        M(mooring.cluster.bundle_install), in this module's one round trip. Each file written is a line of
        RV(changes), as C(file DEST) followed by C(installed).
    type: dict
    suboptions:
      bundle: {description: 'The unpacked bundle''s summary (M(mooring.cluster.bundle_unpack)).', type: dict, required: true}
      names: {description: 'Artifact names to install; each must be in the bundle unless in O(install.optional).', type: list, elements: str, required: true}
      optional: {description: 'Names that may be absent from the bundle (reported in RV(absent)).', type: list, elements: str, default: []}
      arch: {description: 'The host''s architecture in the catalog''s terms (default from the host).', type: str}
      check_versions: {description: 'Ask each binary for its version and compare it with the lock''s.', type: bool, default: true}
      running_unit: {description: 'A unit whose running binaries must not be swapped (as M(mooring.cluster.bundle_install)).', type: str}
      host: {description: 'The host''s name in messages.', type: str}
  groups:
    description: System groups that must exist.
    type: list
    elements: dict
    default: []
    suboptions:
      name: {description: 'Group name.', type: str, required: true}
      system: {description: 'A system group.', type: bool, default: true}
  users:
    description: System users that must exist (created without a home directory).
    type: list
    elements: dict
    default: []
    suboptions:
      name: {description: 'User name.', type: str, required: true}
      group: {description: 'Primary group (default the user''s name).', type: str}
      home: {description: 'Home directory recorded for the user.', type: str}
      shell: {description: 'Login shell.', type: str, default: /usr/sbin/nologin}
      system: {description: 'A system user.', type: bool, default: true}
  directories:
    description: Directories with their mode, owner and group (created with their parents).
    type: list
    elements: dict
    default: []
    suboptions:
      path: {description: 'Absolute path.', type: str, required: true}
      mode: {description: 'Octal mode as a string.', type: str, default: '0755'}
      owner: {description: 'Owner.', type: str, default: root}
      group: {description: 'Group.', type: str, default: root}
  files:
    description: Files with their content, mode, owner and group.
    type: list
    elements: dict
    default: []
    suboptions:
      path: {description: 'Absolute path on the host.', type: str, required: true}
      content: {description: 'The content. One of O(files[].content) and O(files[].src).', type: str}
      src: {description: 'A file on the controller whose content is wanted (read by the action plugin).', type: str}
      mode: {description: 'Octal mode as a string.', type: str, default: '0644'}
      owner: {description: 'Owner.', type: str, default: root}
      group: {description: 'Group.', type: str, default: root}
      validate: {description: 'A command (argv) run on the new content before it replaces the file; C(%s) is its path.', type: list, elements: str}
      state:
        description:
          - V(absent) removes the file (no content needed). A started unit that lists it in O(units[].files) is restarted
            after the removal (C(restart=stale)).
        type: str
        choices: [present, absent]
        default: present
  secrets:
    description: Files whose content is secret (private keys) - never logged, never in a diff. Same fields as O(files).
    type: list
    elements: dict
    default: []
    suboptions:
      path: {description: 'Absolute path on the host.', type: str, required: true}
      content: {description: 'The content (never logged: the module declares it no_log).', type: str}
      src: {description: 'A file on the controller whose content is wanted (read by the action plugin).', type: str}
      mode: {description: 'Octal mode as a string.', type: str, default: '0600'}
      owner: {description: 'Owner.', type: str, default: root}
      group: {description: 'Group.', type: str, default: root}
      validate: {description: 'Not used for secrets.', type: list, elements: str}
      state: {description: 'As O(files[].state).', type: str, choices: [present, absent], default: present}
  sysctl:
    description: Kernel settings (name to value) set now when they differ.
    type: dict
    default: {}
  sysctl_file:
    description: A C(/etc/sysctl.d) file that keeps O(sysctl) across reboots (written when it differs).
    type: str
  kernel_modules:
    description: Kernel modules loaded now when missing (keep them across reboots with a file in O(files)).
    type: list
    elements: dict
    default: []
    suboptions:
      name: {description: 'Module name.', type: str, required: true}
      unless: {description: 'A path whose presence means the module''s feature is built in (no load needed).', type: str}
  swap_off:
    description: Turn swap off now and comment out the swap entries of C(/etc/fstab).
    type: bool
    default: false
  units:
    description: Systemd units, handled after every file (so a changed unit file is loaded first).
    type: list
    elements: dict
    default: []
    suboptions:
      name: {description: 'Unit name.', type: str, required: true}
      enabled: {description: 'Enabled at boot (null leaves it).', type: bool}
      state: {description: 'Running state (null leaves it).', type: str, choices: [started, stopped]}
      restart:
        description: V(stale) restarts a started unit whose process is older than its binary or files; V(never) leaves it.
        type: str
        choices: [stale, never]
        default: stale
      binary: {description: 'The executable the unit runs.', type: str}
      files: {description: 'Files the process reads at start.', type: list, elements: str, default: []}
      ready: {description: 'A command (argv) that must succeed after a start or restart.', type: list, elements: str}
      ready_timeout: {description: 'Seconds to wait for O(units[].ready).', type: int, default: 60}
      requires: {description: 'A path that must exist for the unit to be handled (its program); else it is left alone.', type: str}
  packages:
    description: Debian packages (V(name) or V(name=version)) whose installation is reported in
      RV(packages_missing) (read only; apt installs them).
    type: list
    elements: str
    default: []
  images:
    description:
      - Image archives of an unpacked bundle made present in containerd, last (after O(units), so containerd runs
        the installed binary). The namespace is listed (C(ctr images list --quiet)); each archive whose reference
        is not listed is imported (C(ctr images import), no registry) and checked listed after, one line in
        RV(changes) each; RV(images) says which were imported and which were present.
    type: dict
    suboptions:
      archives:
        description: The images, each with C(ref) and C(path) (the archive on the host); other keys are ignored.
        type: list
        elements: dict
        required: true
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
  exists:
    description: Paths whose existence is reported in RV(exists) (read before anything changes).
    type: list
    elements: str
    default: []
seealso:
  - module: mooring.cluster.bundle_install
"""

EXAMPLES = r"""
- name: Containerd's configuration and unit
  mooring.cluster.host_state:
    directories:
      - {path: /etc/containerd, mode: '0755'}
    files:
      - {path: /etc/containerd/config.toml, content: "{{ lookup('template', 'config.toml.j2') }}", mode: '0600'}
    units:
      - {name: containerd, enabled: true, state: started, binary: /usr/local/bin/containerd,
         files: [/etc/containerd/config.toml]}
"""

RETURN = r"""
images:
  description: With O(images) - C(imported) (references imported by this run) and C(present) (already there).
  returned: when O(images) is given
  type: dict
changes:
  description: One line per changed item (in check mode, per item that would change).
  returned: always
  type: list
  elements: str
  sample: ["file /etc/containerd/config.toml: content", "unit containerd: restarted (/etc/containerd/config.toml changed after the process started)"]
exists:
  description: For each path of O(exists), whether it existed before this task.
  returned: always
  type: dict
changed_files:
  description: Paths of the files and secrets written or whose mode or owner was fixed.
  returned: always
  type: list
  elements: str
packages_missing:
  description: The packages of O(packages) that are not installed (at the version given).
  returned: always
  type: list
  elements: str
stale:
  description: For each running unit with O(units[].restart=never), why its process is not what is installed
    (its binary or files changed after it started); units that are up to date are not listed.
  returned: always
  type: dict
installed:
  description: The destinations O(install) wrote (in check mode, would write).
  returned: always
  type: list
  elements: str
versions:
  description: What each binary of O(install) reports as its version.
  returned: always
  type: dict
artifacts:
  description: Per artifact of O(install) its name, version (from the lock) and files.
  returned: always
  type: list
  elements: dict
absent:
  description: Names of O(install.optional) that the bundle does not carry.
  returned: always
  type: list
  elements: str
units:
  description: Each handled unit's ActiveState after this task (V(active) when it was started or would be in check mode).
  returned: always
  type: dict
"""

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import install as host_install  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common import ctr, host_state  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402

_FILE = dict(
    path=dict(type="str", required=True),
    content=dict(type="str"),
    src=dict(type="str"),
    mode=dict(type="str", default="0644"),
    owner=dict(type="str", default="root"),
    group=dict(type="str", default="root"),
    validate=dict(type="list", elements="str"),
    state=dict(type="str", choices=["present", "absent"], default="present"),
)

_SECRET = dict(_FILE, content=dict(type="str", no_log=True), mode=dict(type="str", default="0600"))


class HostStateModule(MooringModule):
    """Converges this host's groups, users, directories, files, sysctl, kernel modules, units, install and images."""

    argument_spec = dict(
        groups=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str", required=True), system=dict(type="bool", default=True))),
        users=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str", required=True), group=dict(type="str"), home=dict(type="str"),
            shell=dict(type="str", default="/usr/sbin/nologin"), system=dict(type="bool", default=True))),
        directories=dict(type="list", elements="dict", default=[], options=dict(
            path=dict(type="str", required=True), mode=dict(type="str", default="0755"),
            owner=dict(type="str", default="root"), group=dict(type="str", default="root"))),
        files=dict(type="list", elements="dict", default=[], options=_FILE),
        # Only the content is secret: the paths and modes stay readable in the changes and the run report.
        secrets=dict(type="list", elements="dict", default=[], options=_SECRET, no_log=False),
        sysctl=dict(type="dict", default={}),
        sysctl_file=dict(type="str"),
        kernel_modules=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str", required=True), unless=dict(type="str"))),
        swap_off=dict(type="bool", default=False),
        units=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str", required=True), enabled=dict(type="bool"),
            state=dict(type="str", choices=["started", "stopped"]),
            restart=dict(type="str", choices=["stale", "never"], default="stale"),
            binary=dict(type="str"), files=dict(type="list", elements="str", default=[]),
            ready=dict(type="list", elements="str"), ready_timeout=dict(type="int", default=60),
            requires=dict(type="str"))),
        exists=dict(type="list", elements="str", default=[]),
        install=dict(type="dict", options=dict(
            bundle=dict(type="dict", required=True), names=dict(type="list", elements="str", required=True),
            optional=dict(type="list", elements="str", default=[]), arch=dict(type="str"),
            check_versions=dict(type="bool", default=True), running_unit=dict(type="str"),
            host=dict(type="str"))),
        packages=dict(type="list", elements="str", default=[]),
        images=dict(type="dict", options=dict(
            archives=dict(type="list", elements="dict", required=True), **ctr.IMPORT_OPTIONS)),
    )
    errors = (MooringError, OSError)

    def failure(self, exc):
        return dict(self.installed, msg=str(exc), changed=bool(self.installed["installed"]))

    def run(self):
        self.installed = dict(installed=[], versions={}, artifacts=[], absent=[])
        problem = ctr.archive_problem((self.params["images"] or {}).get("archives"), "images.archives")
        if problem:
            self.fail(problem)
        for item in self.params["files"] + self.params["secrets"]:
            if item["content"] is None and item["state"] != "absent":
                self.fail("file %s: no content (src is read by the action plugin on the controller)" % item["path"])
        self.install()
        out = host_state.converge(self.params, self.command, check_mode=self.check_mode, diff=self.module._diff)
        images = self.params["images"]
        if images:
            found = ctr.import_archives(self.command, images["archives"], images["ctr"], images["address"],
                                        images["namespace"], check_mode=self.check_mode)
            out["changes"] += ["image %s: imported" % ref for ref in found["imported"]]
            out["images"] = dict(imported=found["imported"], present=found["present"])
        diffs = out.pop("diffs")
        out["changes"] = ["file %s: installed" % dest for dest in self.installed["installed"]] + out["changes"]
        result = dict(changed=bool(out["changes"]), **out)
        result.update(self.installed)
        if diffs:
            result["diff"] = diffs
        return result

    def install(self):
        """The ``install`` option: artifacts from the unpacked bundle (kept in ``self.installed`` for a failure)."""
        want = self.params["install"]
        if not want:
            return
        self.installed, problems = host_install.install(
            want["bundle"], want["names"], self.command, optional=want["optional"], arch=want["arch"],
            versions=want["check_versions"], running_unit=want["running_unit"], host=want["host"],
            check_mode=self.check_mode)
        if problems:
            self.fail("installed binaries do not match the lock: %s" % "; ".join(problems),
                      changed=bool(self.installed["installed"]), **self.installed)


def main():
    HostStateModule().execute()


if __name__ == "__main__":
    main()
