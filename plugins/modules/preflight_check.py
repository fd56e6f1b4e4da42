#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: preflight_check
short_description: Gather and judge host preflight checks before installing a cluster
version_added: 0.1.0
description:
  - With O(scope=host) (run on every host), gathers the host's facts (CPUs, memory, free
    disk, swap, listening ports, kernel features, cgroup version and driver, systemd, time
    sync, distribution, hostname, machine-id, TCP reachability of its peers, addresses and routes,
    and on etcd hosts the fdatasync latency of etcd's disk) and judges the single-host checks against
    thresholds for the host's roles - among them a default route, and the pod and service networks
    (O(networks)) overlapping none of the host's addresses and routes.
  - Its action plugin times the exchange on the controller, so that each host's clock offset from the
    controller's is estimated as NTP does (with an error bound of half the round trip); O(scope=inventory)
    judges it against O(max_clock_offset).
  - With O(scope=inventory) (run once, on the controller), judges what needs every host at
    once (unique hostnames and machine-ids, reachability, clock offsets) from the host-scope results, and
    returns one report for the whole inventory - a table host x check and one line per
    failure or warning saying what to do, and one line per thing the install configures.
  - Three outcomes besides pass - V(fail) blocks the install, V(warn) should be fixed, and
    V(install) means the host is not ready yet but the C(mooring.cluster.install) playbook configures it
    (swap off, br_netfilter and overlay loaded, forwarding on; see O(install_configures)).
    V(install) never makes RV(passed) false.
  - Never changes anything on any host. The module itself does not fail on failed checks;
    the P(mooring.cluster.preflight#role) role fails once with the report.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
    description: Read-only, but for the etcd disk test's temporary file; in check mode that test is left out.
  diff_mode:
    support: none
    description: Nothing is changed, so there is nothing to diff.
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.flow
options:
  scope:
    description:
      - V(host) gathers and judges this host, V(inventory) judges all hosts' results, V(spec) reads and checks
        O(host_preflight) and O(host_preflight_file) on the controller (a malformed document fails here, before
        any host is touched).
    type: str
    choices: [host, inventory, spec]
    default: host
  roles:
    description: The host's roles (O(scope=host)); a host with none is judged as a worker.
    type: list
    elements: str
    choices: [control_plane, etcd, workers]
    default: []
  thresholds:
    description:
      - Per role, C(cpus) and C(memory_mb), each a number (the minimum) or a mapping with
        C(min) (fail below) and C(recommended) (warn below). Merged over the built-in
        values (control_plane 2/4 CPUs, 1700/4096 MiB; etcd 2/2 CPUs, 2048/8192 MiB;
        workers 1/2 CPUs, 1024/2048 MiB). A host with several roles must meet the highest.
    type: dict
    default: {}
  disks:
    description:
      - Paths whose free space is checked (the nearest existing parent is measured). Each
        item has C(path), C(roles) (default all), C(min_free_mb), C(recommended_free_mb) and
        C(purpose). Omit for the defaults (C(/var/lib/etcd) on etcd hosts, C(/var/lib/containerd)
        and C(/var/lib/mooring) on all).
    type: list
    elements: dict
  ports:
    description:
      - TCP ports that must be free, per role. Omit for the defaults (control_plane 6443,
        10250, 10257, 10259; etcd 2379, 2380; workers 10250, 10256). A port held by one of our
        own components (kube-*, etcd) on a re-run is not a conflict.
    type: dict
  distributions:
    description:
      - Supported host operating systems, C(ID) from os-release to a list of C(VERSION_ID) values. Omit for the
        host OSes the bundle installs onto (Debian 12; the bundle carries Debian packages, installed with apt). A
        value can only narrow that list; one naming another OS or release fails before any host is touched.
      - A host of another OS family (no Debian packages, no apt) fails the C(distribution) check, which
        O(ignore) cannot skip; another release of the same family (Ubuntu, Debian 11) fails and can be ignored.
    type: dict
  kernel_features:
    description:
      - Optional kernel features the chosen add-ons use; each one missing is a warning.
    type: list
    elements: str
    choices: [ipvs, ipip, wireguard]
    default: []
  install_configures:
    description:
      - Checks the install configures (roles/kubeadm turns swap off, loads br_netfilter and
        overlay, sets the bridge netfilter and forwarding sysctls). Such a check that is not
        ready gets status V(install) instead of failing (for C(ip_forward), instead of warning).
      - A kernel module the install needs (br_netfilter, overlay) that is neither loaded,
        nor built in, nor has a module file for the running kernel under
        C(/lib/modules/RELEASE) still fails.
      - Set V([]) when hosts are prepared otherwise (preflight run alone, no install) to make
        these checks block again. Judged with O(scope=host), validated with O(scope=inventory).
    type: list
    elements: str
    choices: [swap, bridge_netfilter, overlayfs, ip_forward]
    default: [swap, bridge_netfilter, overlayfs, ip_forward]
  run:
    description:
      - O(scope=spec). The run the documents are for; kURL's C({{kurl ...}}) templates see it as C(.IsJoin) and
        C(.IsUpgrade).
    type: str
    choices: [install, join, upgrade]
    default: install
  installer:
    description:
      - O(scope=spec). The installer spec (the lock's C(spec)), which kURL's templates read as C(.Installer.Spec)
        (C(.Installer.Spec.Kubernetes.Version) is C(spec.kubernetes.version); an add-on the spec lacks reads as empty).
    type: dict
  primary_hosts:
    description: O(scope=spec). The control-plane hosts' addresses (C(.PrimaryHosts); C(.RemoteHosts) with the others).
    type: list
    elements: str
    default: []
  secondary_hosts:
    description: O(scope=spec). The other hosts' addresses (C(.SecondaryHosts)).
    type: list
    elements: str
    default: []
  networks:
    description:
      - The cluster's networks, C(pod) and C(service) (CIDRs), that must overlap none of the host's addresses and
        routes (the default route aside; on a re-run, the cluster's own CNI and kube-proxy devices' entries inside
        them are no clash). Omit for the installer spec's defaults (pod V(10.32.0.0/16), service V(10.96.0.0/16)).
    type: dict
  etcd_disk:
    description:
      - The write-latency test of etcd's disk, on hosts with one of its C(roles) (default V([etcd])) - C(path)
        (default V(/var/lib/etcd); its nearest existing parent is measured, a temporary file written there and
        removed), C(bytes) written (default 1 MiB) C(operation_bytes) at a time (default 2300, each followed by
        fdatasync), at most C(timeout_s) seconds (default 15). The 99th percentile of fdatasync above
        C(warn_p99_ms) (default 10, etcd's guidance) warns, above C(fail_p99_ms) (default 100) fails. Not run in
        check mode (it writes).
      - Merged over the defaults.
    type: dict
  kubernetes:
    description:
      - The Kubernetes the hosts are to run - C(version) (the lock's) and C(kubelet) (the installer spec's
        C(kubernetes.kubelet)). On a host with cgroup v1 (or hybrid), from Kubernetes 1.35 the C(cgroup) check fails
        (the kubelet refuses to start there) unless C(kubelet.failCgroupV1) is V(false), then it warns; O(ignore)
        cannot skip that failure. Before 1.35 cgroup v1 passes with a note; without a version it warns.
    type: dict
  max_clock_offset:
    description:
      - O(scope=inventory). Seconds a host's clock may be from the controller's; beyond it (with the measurement's
        error bound) the C(clock) check fails.
    type: float
    default: 2.0
  peers:
    description: The other hosts, name to address, whose TCP port O(peer_port) must answer.
    type: dict
    default: {}
  peer_port:
    description: Port probed on every peer.
    type: int
    default: 22
  ignore:
    description:
      - Checks whose warnings or failures are reported as C(ignored), as C(CHECK) or
        C(HOST:CHECK) (HOST = inventory name). Applied with O(scope=inventory).
    type: list
    elements: str
    default: []
  hosts:
    description:
      - O(scope=inventory) only. Every host's registered host-scope result, by inventory
        name; an unreachable or failed host's result is reported as such.
    type: dict
    default: {}
  host_preflight:
    description:
      - troubleshoot.sh C(HostPreflight) documents (C(apiVersion troubleshoot.sh/v1beta2)), as kURL and Embedded
        Cluster users write them. With O(scope=spec), read and checked on the controller (with O(host_preflight_file));
        with O(scope=host), their collectors run on the host and their analyzers judge what was collected, each
        check reported as C(pass), C(warn) or C(fail) beside the built-in checks. Collector and analyzer types
        mooring does not run are named once as warnings.
    type: list
    elements: raw
  host_preflight_file:
    description:
      - O(scope=spec) only. A YAML file on the controller with one or more C(HostPreflight) documents (read with a
        size bound), added to O(host_preflight).
    type: path
notes:
  - Decisions live in C(plugins/module_utils/cluster/preflight/preflight*.py) (settings, gather, judge, inventory, report); see docs/preflight.md.
"""

EXAMPLES = r"""
- name: Gather and judge this host
  mooring.cluster.preflight_check:
    roles: [control_plane, etcd]
    kernel_features: [ipip]
    peers:
      cp2: 10.0.0.12
      w1: 10.0.0.21
  register: preflight_host

- name: Judge the inventory once and build the report
  mooring.cluster.preflight_check:
    scope: inventory
    hosts: "{{ dict(ansible_play_hosts_all | zip(ansible_play_hosts_all | map('extract', hostvars, 'preflight_host'))) }}"
  delegate_to: localhost
  run_once: true
  register: preflight_report
"""

RETURN = r"""
facts:
  description: What was gathered on the host.
  returned: scope=host
  type: dict
  sample: {"hostname": "cp1", "cpus": 4, "memory_mb": 7900, "swap_mb": 0}
roles:
  description: The roles the host was judged for.
  returned: scope=host
  type: list
  elements: str
  sample: [control_plane, etcd]
checks:
  description:
    - O(scope=host) a list of C({check, status, message}); O(scope=inventory) a mapping
      of host to such lists, cross-host checks included. C(status) is pass, install (the
      install configures it), warn, fail or ignored.
  returned: always
  type: raw
  sample: [{"check": "swap", "status": "install", "message": "swap is on (2047 MiB): the install turns it off ..."}]
report:
  description: The report text, a host x check table followed by what to fix.
  returned: scope=inventory
  type: str
report_lines:
  description: RV(report) split into lines, for display.
  returned: scope=inventory
  type: list
  elements: str
failures:
  description: Every failed check, C({host, check, message}).
  returned: scope=inventory
  type: list
  elements: dict
warnings_found:
  description: Every check that warned, C({host, check, message}).
  returned: scope=inventory
  type: list
  elements: dict
configured_by_install:
  description: Every check not ready yet that the install configures, C({host, check, message}).
  returned: scope=inventory
  type: list
  elements: dict
failure_lines:
  description: Every failed check as one line, C(HOST CHECK - MESSAGE) (host, check name, colon, message).
  returned: scope=inventory
  type: list
  elements: str
warning_lines:
  description: Every check that warned as one line, C(HOST CHECK - MESSAGE) (host, check name, colon, message).
  returned: scope=inventory
  type: list
  elements: str
summary:
  description: One line, how many hosts, failures and warnings.
  returned: scope=inventory
  type: str
  sample: "preflight: 3 host(s), 0 failure(s), 9 warning(s)"
passed:
  description: True when no check failed (warnings and what the install configures allowed).
  returned: scope=inventory
  type: bool
unsupported:
  description: One line for each collector or analyzer type of the documents that mooring does not run (also warned).
  returned: scope=spec
  type: list
  elements: str
documents:
  description:
    - The HostPreflight documents read (from O(host_preflight_file) and O(host_preflight)), kURL's templates
      evaluated for a primary (control-plane) host, for the host scope.
  returned: scope=spec
  type: list
  elements: dict
documents_secondary:
  description: The same documents with the templates evaluated for a secondary host (C(.IsPrimary) false).
  returned: scope=spec
  type: list
  elements: dict
collectors:
  description: The collector types the documents run, in order (excluded and unsupported ones left out).
  returned: scope=spec
  type: list
  elements: str
analyzers:
  description: The analyzer types the documents run, in order.
  returned: scope=spec
  type: list
  elements: str
host_preflight:
  description:
    - What the HostPreflight documents gave on this host - C(results) (C({check, outcome, message, uri}) per
      analyzer that produced an outcome), C(errors) (collectors that failed) and C(collected) (each result by
      troubleshoot's path).
  returned: scope=host and O(host_preflight) given
  type: dict
"""

import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflight import (
    DEFAULT_INSTALL_CONFIGURES,
    INSTALL_CONFIGURABLE,
    host_roles,
    settings,
)
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflightgather import gather
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflightinventory import run_inventory
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflightjudge import judge_host
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostanalyze, hostcollect, hostpreflight
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule


def spec_documents(p):
    """The documents for a primary (control-plane) and a secondary host: kURL's ``{{kurl ...}}`` templates evaluated
    as kURL does for this run (O(run)), a file's text before it is parsed, inline documents scalar by scalar.
    On the controller only (scope spec): the host scope never loads YAML or template code."""
    from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio  # pylint: disable=import-outside-toplevel
    from ansible_collections.mooring.cluster.plugins.module_utils.spec import kurltemplate  # pylint: disable=import-outside-toplevel

    installer = {"apiVersion": "cluster.kurl.sh/v1beta1", "kind": "Installer", "spec": p["installer"] or {}}
    source = p["host_preflight_file"]
    text = yamlio.decode(yamlio.read_bytes(source), source) if source else None
    out = {}
    for variant, primary in (("primary", True), ("secondary", False)):
        data = kurltemplate.template_data(installer, is_primary=primary, is_join=p["run"] == "join",
                                          is_upgrade=p["run"] == "upgrade", primary_hosts=p["primary_hosts"],
                                          secondary_hosts=p["secondary_hosts"])
        budget = kurltemplate.Budget()  # one for every document of this variant: its bounds hold for them all
        docs = [kurltemplate.render_tree(d, data, source="host_preflight[%d]" % i, budget=budget)
                for i, d in enumerate(p["host_preflight"] or [])]
        if text is not None:
            docs += [d for d in yamlio.load(kurltemplate.render_text(text, data, source, budget), source, multi=True) if d is not None]
        out[variant] = docs
    inline = len(p["host_preflight"] or [])
    out["sources"] = [("host_preflight", 0, inline)] + ([(source, inline, None)] if text is not None else [])
    return out


class PreflightCheck(MooringModule):
    """Checks this host (scope host), the inventory's gathered hosts (scope inventory) or a host preflight spec."""

    argument_spec = {
        "scope": {"type": "str", "choices": ["host", "inventory", "spec"], "default": "host"},
        "roles": {"type": "list", "elements": "str", "choices": ["control_plane", "etcd", "workers"],
                  "default": []},
        "thresholds": {"type": "dict", "default": {}},
        "disks": {"type": "list", "elements": "dict"},
        "ports": {"type": "dict"},
        "distributions": {"type": "dict"},
        "kernel_features": {"type": "list", "elements": "str", "choices": ["ipvs", "ipip", "wireguard"],
                            "default": []},
        "install_configures": {"type": "list", "elements": "str", "choices": list(INSTALL_CONFIGURABLE),
                               "default": list(DEFAULT_INSTALL_CONFIGURES)},
        "peers": {"type": "dict", "default": {}},
        "peer_port": {"type": "int", "default": 22},
        "ignore": {"type": "list", "elements": "str", "default": []},
        "hosts": {"type": "dict", "default": {}},
        "host_preflight": {"type": "list", "elements": "raw"},
        "host_preflight_file": {"type": "path"},
        "run": {"type": "str", "choices": ["install", "join", "upgrade"], "default": "install"},
        "installer": {"type": "dict"},
        "primary_hosts": {"type": "list", "elements": "str", "default": []},
        "secondary_hosts": {"type": "list", "elements": "str", "default": []},
        "networks": {"type": "dict"},
        "etcd_disk": {"type": "dict"},
        "max_clock_offset": {"type": "float", "default": 2.0},
        "kubernetes": {"type": "dict"},
    }

    def __init__(self):
        self.received = time.time()  # the host's clock when the module starts (the action plugin timed the exchange)
        super().__init__()

    def failure(self, exc):
        return {"msg": str(exc), "problems": list(getattr(exc, "problems", None) or [])}

    def run(self):
        p = self.params
        if p["scope"] == "spec":
            return self.documents()
        cfg = settings(p["thresholds"], p["disks"], p["ports"], p["distributions"], p["kernel_features"],
                       p["ignore"], p["install_configures"], networks=p["networks"], etcd_disk=p["etcd_disk"],
                       max_clock_offset=p["max_clock_offset"], kubernetes=p["kubernetes"])
        if p["scope"] == "inventory":
            return self.inventory(cfg)
        return self.host(cfg)

    def documents(self):
        """Scope spec: the host preflight documents, checked, in both variants."""
        variants = spec_documents(self.params)
        # Each source is checked and numbered on its own, in both variants; the plan is the primary's.
        plans = [hostpreflight.load(variants["primary"][start:end], source=source)
                 for source, start, end in variants["sources"]]
        for source, start, end in variants["sources"]:
            hostpreflight.load(variants["secondary"][start:end], source=source)
        warnings = [w for plan in plans for w in plan["warnings"]]
        for warning in warnings:
            self.module.warn(warning)
        return dict(changed=False, documents=variants["primary"], documents_secondary=variants["secondary"],
                    unsupported=warnings, collectors=[k for plan in plans for k, _s in plan["collectors"]],
                    analyzers=[k for plan in plans for k, _s in plan["analyzers"]])

    def inventory(self, cfg):
        """Scope inventory: the cross-host checks and the report."""
        results, text, summary = run_inventory(self.params["hosts"], cfg["ignore"], cfg["max_clock_offset"])
        return dict(
            changed=False, checks=results, report=text, report_lines=text.splitlines(),
            failures=[{"host": h, "check": c, "message": m} for h, c, m in summary["failed"]],
            warnings_found=[{"host": h, "check": c, "message": m} for h, c, m in summary["warnings"]],
            configured_by_install=[{"host": h, "check": c, "message": m} for h, c, m in summary["install"]],
            failure_lines=["%s %s: %s" % f for f in summary["failed"]],
            warning_lines=["%s %s: %s" % w for w in summary["warnings"]],
            summary=text.splitlines()[-1], passed=not summary["failed"])

    def host(self, cfg):
        """Scope host: gather this host's facts and judge them (plus the host preflight spec, if any)."""
        p = self.params
        roles = host_roles(p["roles"])
        disk_paths = [d["path"] for d in cfg["disks"] if set(d["roles"]) & set(roles)]
        # The disk test writes (a temporary file, removed): not in a check run.
        etcd_disk = cfg["etcd_disk"] if set(roles) & set(cfg["etcd_disk"]["roles"]) and not self.check_mode else None
        facts = gather(run=self.module.run_command, disk_paths=disk_paths, peers=p["peers"],
                       peer_port=p["peer_port"], etcd_disk=etcd_disk, distributions=cfg["distributions"])
        checks = judge_host(facts, roles, cfg)
        extra = {}
        if p["host_preflight"]:
            plan = hostpreflight.load(p["host_preflight"])
            got = hostcollect.collect(plan["collectors"])  # its own bounded runner: timeouts, capped output
            results = hostanalyze.analyze_all(plan, got["collected"])
            checks += [{"check": r["check"], "status": r["outcome"], "message": r["message"]} for r in results]
            extra["host_preflight"] = {"results": results, "errors": got["errors"], "collected": got["collected"]}
        facts["clock"] = {"received": self.received, "replied": time.time()}  # the action plugin turns it into an offset
        return dict(changed=False, facts=facts, roles=roles, checks=checks, **extra)


def main():
    PreflightCheck().execute()


if __name__ == "__main__":
    main()
