# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: preflight's report - the host x check table and the list of what to do."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflight import CHECKS

CELL = {"pass": "ok", "install": "fix", "warn": "WARN", "fail": "FAIL", "ignored": "ign"}
# Short column headers, so the table stays narrow; the legend under it names them.
SHORT = {
    "cpu": "cpu", "memory": "mem", "disk": "disk", "swap": "swap", "ports": "ports", "bridge_netfilter": "brnf",
    "overlayfs": "ovl", "ip_forward": "fwd", "ipvs": "ipvs", "ipip": "ipip", "wireguard": "wg", "cgroup": "cgrp",
    "systemd": "sysd", "time_sync": "time", "distribution": "dist", "hostname": "name", "machine_id": "mid",
    "reachability": "reach", "default_route": "route", "networks": "nets", "etcd_disk": "fsync", "clock": "clock",
}
RANK = {"pass": 0, "install": 1, "ignored": 2, "warn": 3, "fail": 4}


def summarise(results_by_host):
    """{"failed": [(host, check, message)], "warnings": [...], "install": [...], "status": {host: {check: status}}}.

    ``install`` lists what the install will configure: neither a failure nor a warning.
    """
    status = {}
    failed = []
    warnings = []
    install = []
    for h in sorted(results_by_host):
        status[h] = {}
        for r in results_by_host[h]:
            cur = status[h].get(r["check"])
            if cur is None or RANK[r["status"]] > RANK[cur]:
                status[h][r["check"]] = r["status"]
            if r["status"] == "fail":
                failed.append((h, r["check"], r["message"]))
            elif r["status"] == "warn":
                warnings.append((h, r["check"], r["message"]))
            elif r["status"] == "install":
                install.append((h, r["check"], r["message"]))
    return {"failed": failed, "warnings": warnings, "install": install, "status": status}


def render_report(results_by_host):
    """The report: a host x check table, then one line per failure, warning and what the install configures."""
    s = summarise(results_by_host)
    checks = [c for c in CHECKS if any(c in st for st in s["status"].values())]
    width = max([len("host")] + [len(h) for h in s["status"]])
    colw = [max(len(SHORT[c]), 4) for c in checks]
    lines = ["  ".join(["host".ljust(width)] + [SHORT[c].ljust(w) for c, w in zip(checks, colw)]).rstrip()]
    lines.append("  ".join(["-" * width] + ["-" * w for w in colw]))
    for h, st in s["status"].items():
        lines.append("  ".join([h.ljust(width)] + [CELL.get(st.get(c), "-").ljust(w)
                                                   for c, w in zip(checks, colw)]).rstrip())
    legend = ["%s=%s" % (SHORT[c], c) for c in checks if SHORT[c] != c]
    if s["install"]:
        legend.append("%s=the install configures it" % CELL["install"])
    lines.append("(%s)" % ", ".join(legend))
    # Checks of HostPreflight documents (troubleshoot.sh): each by name, per host, with its outcome.
    extra = {h: [(c, v) for c, v in st.items() if c not in CHECKS] for h, st in s["status"].items()}
    if any(extra.values()):
        lines.append("")
        lines.append("Host preflights (troubleshoot.sh documents):")
        for h, items in extra.items():
            lines.extend("  %s %s: %s" % (h.ljust(width), CELL.get(v, v), c) for c, v in items)
    if s["failed"]:
        lines.append("")
        lines.append("FAIL (must fix):")
        lines.extend("  %s %s: %s" % item for item in s["failed"])
    if s["warnings"]:
        lines.append("")
        lines.append("WARN (should fix):")
        lines.extend("  %s %s: %s" % item for item in s["warnings"])
    if s["install"]:
        lines.append("")
        lines.append("FIX (not ready yet, the install configures it; nothing to do):")
        lines.extend("  %s %s: %s" % item for item in s["install"])
    lines.append("")
    lines.append("preflight: %d host(s), %d failure(s), %d warning(s)"
                 % (len(s["status"]), len(s["failed"]), len(s["warnings"])))
    return "\n".join(lines), s
