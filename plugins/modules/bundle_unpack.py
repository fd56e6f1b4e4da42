#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: bundle_unpack
short_description: Verify an air-gap bundle on a host, then unpack it under /var/lib/mooring/bundles/<id>
version_added: 0.1.0
description:
  - Before anything is written, reads the whole bundle once and checks the Ed25519 signature of
    C(bundle.json) with the host's trusted public key and the sha256 of every package. A tampered,
    truncated or unsigned bundle is refused and nothing under O(dest) changes. So is a bundle whose signed
    C(bundle.json) does not have the expected shape (types, keys, member names without C(..)), and an
    O(src) that is not a regular file (a FIFO or device is never read).
  - Then unpacks into a temporary directory, re-checking every file's sha256 against the signed manifest,
    and renames it to C(<dest>/<id>) only when all matched. A partial unpack is never left in place.
  - When C(<dest>/<id>) already holds that bundle (its C(bundle.json) hashes to O(id) and its signature
    verifies), nothing is done and O(src) is not needed.
  - Standard library only - hosts do not need C(python3-cryptography).
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
    description: Verifies the bundle (read-only) and reports whether it would be unpacked.
  diff_mode:
    support: full
    description: Shows the unpacked bundle directory before and after.
extends_documentation_fragment:
  - mooring.cluster.attributes
options:
  src:
    description: The bundle file on the host. Needed unless O(id) is already unpacked.
    type: path
  dest:
    description: Directory holding unpacked bundles.
    type: path
    default: /var/lib/mooring/bundles
  pubkey:
    description: Trusted Ed25519 public key file on the host (PEM).
    type: path
    default: /etc/mooring/bundle-signing.pub
  pubkey_content:
    description:
      - The trusted public key (PEM) as the controller holds it. It is kept in O(pubkey) (rewritten, mode 0644,
        when the file's content, mode or owner differs) and the bundle is verified against it, in this one
        round trip.
    type: str
  apt_source:
    description:
      - Once the bundle is unpacked here (found, or unpacked by this call), this apt sources list names its
        package repositories - one C(deb [trusted=yes] file:DIR ./) line each, mode 0644 - rewritten when its
        content, mode or owner differs (RV(apt_source_changed)).
    type: path
  packages:
    description: Host packages (C(name) or C(name=version)) reported in RV(packages_missing) when not installed.
    type: list
    elements: str
    default: []
  missing:
    description:
      - When O(id) is not unpacked here and O(src) does not exist, V(fail), or V(report) it (RV(present) false,
        RV(bundle) null, nothing unpacked) after making O(src)'s directory (mode 0700) for the copy.
    type: str
    choices: [fail, report]
    default: fail
  id:
    description: The expected bundle id (sha256 of its C(bundle.json), as returned by M(mooring.cluster.bundle_build)).
      A bundle with another id is refused.
    type: str
  remove_src:
    description: Delete O(src) after it was unpacked, and also when it was refused (nothing of it stays on the host).
    type: bool
    default: false
seealso:
  - module: mooring.cluster.bundle_build
  - module: mooring.cluster.bundle_verify
"""

EXAMPLES = r"""
- name: Unpack the copied bundle
  mooring.cluster.bundle_unpack:
    src: /var/lib/mooring/bundles/incoming/bundle.tar
    id: "{{ bundle.id }}"
    remove_src: true
  register: unpacked
"""

RETURN = r"""
arch:
  description: The host's architecture in the catalog's terms (V(amd64) for C(x86_64)).
  returned: always
  type: str
present:
  description: Whether O(id) was unpacked here (and verified) before this task.
  returned: always
  type: bool
changes:
  description: One line per item changed (or, in check mode, to change) - the trusted key, the apt source.
  returned: always
  type: list
  elements: str
apt_source_changed:
  description: Whether O(apt_source) was (or would be) written by this call.
  returned: always
  type: bool
packages_missing:
  description: The O(packages) not installed on the host (dpkg); empty until the bundle is unpacked here.
  returned: always
  type: list
  elements: str
ansible_facts:
  description: C(bundle_installed) - the same summary as RV(bundle), published for later roles once the bundle
    is unpacked on the host (not set when it is missing, nor in a check run that has not unpacked it).
  returned: when the bundle is unpacked on the host
  type: dict
bundle:
  description: Summary of the unpacked bundle - C(id), C(path) (its directory), C(hash), C(signer),
    C(sandbox_image) and per add-on C(dir), C(version), C(repo), C(packages), C(binaries), C(images).
  returned: success
  type: dict
  sample: {id: 436afbfa61618ceb45ee270770d75d7d41f671637e2a644a1534a1e227d49629,
           path: /var/lib/mooring/bundles/436afbfa61618ceb45ee270770d75d7d41f671637e2a644a1534a1e227d49629}
"""

import grp  # noqa: E402
import os  # noqa: E402
import pwd  # noqa: E402

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import host as backend  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import install as host_install  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.host_state import HostState  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402


def decide_and_act(params, check_mode, state=None):
    """(changed, present, summary): nothing to do when the bundle is already unpacked and verifies.

    ``state`` (a :class:`HostState`) keeps the trusted key as a file (content, mode, owner) and collects the
    change lines."""
    state = state or HostState(None, check_mode=check_mode)
    if params["pubkey_content"] is not None:
        public = backend.public_key_from_pem(params["pubkey_content"])  # refused before anything is written
        state.files([{"path": params["pubkey"], "content": params["pubkey_content"], "mode": "0644",
                      "owner": pwd.getpwuid(os.geteuid()).pw_name, "group": grp.getgrgid(os.getegid()).gr_name}])
    else:
        public = backend.read_public_key(params["pubkey"])
    key_changed = bool(state.changes)
    if params["id"]:
        current = backend.installed_bundle(params["dest"], params["id"], public)
        if current is not None:
            return key_changed, True, current
    if not params["src"] or not os.path.exists(params["src"]):
        if params["missing"] == "report" and params["src"]:
            incoming = os.path.dirname(params["src"])
            made = not os.path.isdir(incoming)
            if made and not check_mode:
                os.makedirs(incoming, mode=0o700)
            return key_changed or made, False, None
        raise backend.BundleError("bundle %s is not unpacked under %s and src %r does not exist; copy the bundle first"
                                  % (params["id"] or "?", params["dest"], params["src"]))
    if check_mode:
        summary = backend.verify_bundle(params["src"], public)
        if params["id"] and summary["id"] != params["id"]:
            raise backend.BundleError("%s: bundle id %s, expected %s; refusing it"
                                      % (params["src"], summary["id"], params["id"]))
        current = backend.installed_bundle(params["dest"], summary["id"], public)
        return key_changed or current is None, False, current or summary
    try:
        summary, changed = backend.unpack_bundle(params["src"], params["dest"], public, expected_id=params["id"])
    except backend.BundleError as exc:
        if params["remove_src"]:
            os.unlink(params["src"])
            raise backend.BundleError("%s (the refused copy %s was deleted)" % (exc, params["src"])) from exc
        raise
    if params["remove_src"]:
        os.unlink(params["src"])
    if changed:
        state.changes.append("bundle %s: unpacked" % summary["id"])
    return key_changed or changed, False, summary


def repositories(state, params, summary):
    """On a host where the bundle is unpacked: its repositories in O(apt_source); the O(packages) missing."""
    if params["apt_source"]:
        lines = ["# Managed by mooring.cluster: the package repositories of air-gap bundle %s" % summary["id"],
                 "# (verified before it was unpacked)."] + ["deb [trusted=yes] file:%s ./" % r for r in summary["repos"]]
        state.files([{"path": params["apt_source"], "content": "\n".join(lines) + "\n", "mode": "0644"}])
    return state.packages_missing(params["packages"])


class BundleUnpack(MooringModule):
    """Verifies and unpacks a bundle on this host."""

    argument_spec = dict(
        src=dict(type="path"),
        dest=dict(type="path", default="/var/lib/mooring/bundles"),
        pubkey=dict(type="path", default="/etc/mooring/bundle-signing.pub"),
        pubkey_content=dict(type="str"),
        apt_source=dict(type="path"),
        packages=dict(type="list", elements="str", default=[]),
        missing=dict(type="str", choices=["fail", "report"], default="fail"),
        id=dict(type="str"),
        remove_src=dict(type="bool", default=False),
    )
    errors = (backend.BundleError, MooringError, OSError)

    def run(self):
        state = HostState(self.module.run_command, check_mode=self.check_mode)
        missing = []
        changed, present, summary = decide_and_act(self.params, self.check_mode, state)
        here = summary is not None and (present or not self.check_mode)  # unpacked on this host
        if here:
            missing = repositories(state, self.params, summary)
        result = dict(changed=changed or bool(state.changes), present=present, bundle=summary, changes=state.changes,
                      apt_source_changed=self.params["apt_source"] in state.changed_paths, packages_missing=missing,
                      arch=host_install.host_arch())
        if here:
            result["ansible_facts"] = dict(bundle_installed=summary)  # what later roles read
        if self.module._diff and changed and summary:
            result["diff"] = dict(before="", after="%s\n" % os.path.join(self.params["dest"], summary["id"]))
        return result


def main():
    BundleUnpack().execute()


if __name__ == "__main__":
    main()
