#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: etcd_restart
short_description: Restart one etcd member when what runs is not what is installed, behind health gates
version_added: 0.1.0
description:
  - Reads the member's real state on the host - the running process's executable (replaced binaries show as
    deleted), systemd's C(NeedDaemonReload), and whether any of O(files) is newer than the process - and restarts
    the member only when something is stale (or O(force)). A run that failed or was killed between installing
    and restarting is finished by the next run.
  - >-
    Before the restart, a gate - every other member healthy and holding quorum without this one, O(checks) good
    looks in a row with the raft index advancing and no member restarting or freshly started - must hold within
    O(timeout); otherwise the module fails without touching the member, naming what it saw, for example
    C(etcd-3 flapped: down 4 of the last 6 checks; etcd-2 not restarted).
  - After the restart, the same gate over every member, this one included, before it returns.
  - >-
    Run it with C(throttle: 1) (the etcd role does): the gate, restart and wait of one member then finish before
    the next member's gate starts.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.etcd_client
  - mooring.cluster.etcd_gate
options:
  name:
    description: This member's name.
    type: str
    required: true
  endpoints:
    description: Every member's client URL (C(https://) only).
  unit:
    description: The systemd unit of the member.
    type: str
    default: etcd
  binary:
    description: The etcd executable the unit runs.
    type: path
    default: /usr/local/bin/etcd
  files:
    description: Files the member reads at start (environment, unit, certificates, keys); newer than the process means stale.
    type: list
    elements: path
    default: []
  force:
    description: Restart even when nothing is stale.
    type: bool
    default: false
  data_dir:
    description:
      - The member's data directory. When given, a member that is to restart must have O(min_free_mib) MiB free
        there plus the size of its database, else the module fails before the gate, naming the space, and the
        member is left running as it is (etcd started on a nearly full disk fails at its first write-ahead log
        segment and stays down). Checked in check mode too.
    type: path
  min_free_mib:
    description: MiB that must be free in O(data_dir), beyond the database's size, for a restart.
    type: int
    default: 128
  checks:
    default: 3
  min_uptime:
    default: 5
  timeout:
    default: 120
"""

EXAMPLES = r"""
- name: Restart this member if its binary, unit or files changed, one member at a time
  mooring.cluster.etcd_restart:
    name: etcd-2
    etcdctl: /usr/local/bin/etcdctl
    endpoints: [https://10.0.0.21:2379, https://10.0.0.22:2379, https://10.0.0.23:2379]
    cacert: /etc/kubernetes/pki/etcd/ca.crt
    cert: /etc/kubernetes/pki/etcd/healthcheck-client.crt
    key: /etc/kubernetes/pki/etcd/healthcheck-client.key
    files: [/etc/etcd/etcd.env, /etc/systemd/system/etcd.service]
  throttle: 1
"""

RETURN = r"""
reasons:
  description: Why the member was (or, in check mode, would be) restarted; empty when nothing was stale.
  returned: always
  type: list
  elements: str
  sample: ["/usr/local/bin/etcd was replaced after the process started"]
versions:
  description: etcd server version per client URL after the restart (empty when not restarted).
  returned: always
  type: dict
gate:
  description: The latest looks of the gate before the restart (problems and what each member looked like).
  returned: when restarted
  type: list
  elements: dict
"""

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdgate import (  # noqa: E402
    gate_client,
    gate_kwargs,
    restart_space_problem,
    wait_health,
)
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdoptions import client_argument_spec, gate_argument_spec  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule  # noqa: E402
from ansible_collections.mooring.cluster.plugins.module_utils.common.service import stale_reasons, unit_state  # noqa: E402


class EtcdRestart(MooringModule):
    """Restarts an etcd member whose binary or files changed, between two health gates."""

    def spec(self):
        gate = gate_argument_spec()
        gate["checks"]["default"] = 3
        gate["min_uptime"]["default"] = 5
        gate["timeout"]["default"] = 120
        return dict(
            client_argument_spec(),
            **gate,
            name={"type": "str", "required": True},
            unit={"type": "str", "default": "etcd"},
            binary={"type": "path", "default": "/usr/local/bin/etcd"},
            files={"type": "list", "elements": "path", "default": []},
            force={"type": "bool", "default": False},
            data_dir={"type": "path"},
            min_free_mib={"type": "int", "default": 128},
        )

    def run(self):
        p = self.params
        props = unit_state(self.module.run_command, p["unit"])
        reasons = stale_reasons(props, binary=p["binary"], files=p["files"])
        if p["force"] and not reasons:
            reasons = ["restart requested"]
        space = restart_space_problem(p["name"], p["data_dir"], p["min_free_mib"]) if reasons and p["data_dir"] else None
        if space:
            self.fail("%s (%s). It keeps running as it was." % (space, "; ".join(reasons)), reasons=reasons)
        if not reasons or self.check_mode:
            return dict(changed=bool(reasons), reasons=reasons, versions={})
        before, after = self.restart(props, reasons)
        for when, state in (("before", before), ("after", after)):
            if state.get("incidents"):
                self.module.warn("%s: the gate %s its restart waited until the cluster settled: %s" % (
                    p["name"], when, state["incidents"]))
        return dict(changed=True, reasons=reasons, versions=after["versions"], gate=before.get("looks", []))

    def restart(self, props, reasons):
        """Gate, restart the unit, gate again; returns the two gates' states."""
        p, run, name = self.params, self.module.run_command, self.params["name"]
        base = gate_client(p)
        kwargs = gate_kwargs(p)
        before = {}
        if props.get("ActiveState") == "active":
            # Only a running member can take quorum down with it; a stopped one is just started.
            try:
                before = wait_health(run, base, require="all", exclude=name, **kwargs)
            except MooringError as exc:
                self.fail("%s; %s not restarted (%s). Nothing was changed on it." % (
                    str(exc), name, "; ".join(reasons)), reasons=reasons)
        if props.get("NeedDaemonReload") == "yes":
            rc, out, err = run(["systemctl", "daemon-reload"])
            if rc != 0:
                self.fail("systemctl daemon-reload failed: %s" % (err or out).strip()[:300], reasons=reasons)
        rc, out, err = run(["systemctl", "restart", p["unit"]])
        if rc != 0:
            rc_j, journal, _e = run(["journalctl", "-u", p["unit"], "-n", "20", "--no-pager", "-o", "cat"])
            self.fail("%s: systemctl restart %s failed: %s; last log lines: %s" % (
                name, p["unit"], (err or out).strip()[:300], journal.strip()[-1500:] if rc_j == 0 else "?"),
                reasons=reasons)
        try:
            after = wait_health(run, base, require="all", settling=name, **kwargs)
        except MooringError as exc:
            self.fail("%s was restarted (%s) but the cluster did not settle: %s" % (
                name, "; ".join(reasons), str(exc)), reasons=reasons)
        return before, after


def main():
    EtcdRestart().execute()


if __name__ == "__main__":
    main()
