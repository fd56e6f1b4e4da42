# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the run report for people: the Markdown file and the summary at the end of the run.

:func:`render_markdown` writes the report (:func:`plugin_utils.report.build_report`) as Markdown;
:func:`summary_lines` is the compact table printed at the end of the run.
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.plugin_utils.runlog import shorten

SUMMARY_LEFT_LIMIT = 110
_SPACE = re.compile(r"\s+")


def duration_text(seconds):
    """``seconds`` for people: ``12.3s``, ``4m05s`` or ``1h02m03s``."""
    seconds = float(seconds or 0)
    if seconds < 60:
        return "%.1fs" % seconds
    minutes, rest = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return "%dm%02ds" % (minutes, rest)
    return "%dh%02dm%02ds" % (minutes // 60, minutes % 60, rest)


def _cell(value):
    text = "-" if value in (None, "", [], {}) else str(value)
    return _SPACE.sub(" ", text).replace("|", "\\|").strip()


def _left(host):
    """What is left on one host, one line (the summary's last column)."""
    if host["unreachable"]:
        return "unreachable: %s" % host["unreachable"]["message"]
    if host["failure"]:
        return "failed at %s: %s" % (host["failure"]["task"] or "?", host["failure"]["message"])
    if host["status"] == "not_reached":
        return "not reached"
    if host["not_reached"]:
        return "not reached in: %s" % "; ".join(host["not_reached"])
    return "-"


def render_markdown(report):
    """The report (:func:`plugin_utils.report.build_report`) as a Markdown document."""
    lines = _head_markdown(report)
    lines += ["", "## Hosts", "", "| Host | Status | ok | changed | failed | skipped | unreachable | rescued | ignored "
              "| modules | controller | Time |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, host in report["hosts"].items():
        c = host["counts"]
        lines.append("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s |" % (
            _cell(name), host["status"], c["ok"], c["changed"], c["failed"], c["skipped"], c["unreachable"],
            c["rescued"], c["ignored"], host["modules"], host["controller"], duration_text(host["duration"])))
    lines += ["", "ok ... ignored: the PLAY RECAP's task counts. modules: module executions on the host (each loop item "
              "and retry; tasks delegated to it too). controller: executions on the controller for the host (delegated "
              "to localhost, or the local connection). set_fact, debug, include_role and other actions that never "
              "reach a host count in neither."]
    lines += ["", "## What is left", ""]
    if report["remaining"]:
        for item in report["remaining"]:
            who = ", ".join(item["hosts"]) if item["hosts"] else "run"
            task = " at `%s`" % item["task"].replace("`", "'") if item.get("task") else ""
            lines.append("- **%s** (%s)%s: %s" % (_cell(who), item["kind"], task, _cell(item["what"])))
    else:
        lines.append("Nothing: every host ran every play.")
    lines += ["", "## Changed tasks", ""]
    changed = [(name, host) for name, host in report["hosts"].items() if host["changed_tasks"]]
    for name, host in changed:
        lines.append("- **%s**" % _cell(name))
        lines.extend("  - %s" % _cell(task) for task in host["changed_tasks"])
        lines.extend("    - %s" % _cell(item) for item in host.get("changed_items") or ())
    if not changed:
        lines.append("None.")
    lines.extend(_versions_markdown(report))
    lines.extend(_addons_markdown(report.get("addons")))
    lines.extend(_preflight_markdown(report.get("preflight")))
    if report["roles"]:
        lines += ["", "## Time per role", "", "| Role | Time (wall) |", "|---|---|"]
        lines.extend("| %s | %s |" % (_cell(role), duration_text(t)) for role, t in report["roles"].items())
    return "\n".join(lines).rstrip("\n") + "\n"


def _head_markdown(report):
    """The title and the table of the run: outcome, times, inventory, lock, playbook."""
    title = "mooring.cluster.%s" % report["playbook"]
    lines = ["# Run report: %s%s" % (title, " (check mode: nothing was changed)" if report["check_mode"] else ""), ""]
    lock = report.get("lock") or {}
    lock_text = "-"
    if lock.get("error"):
        lock_text = "%s (not read: %s)" % (lock.get("path"), lock["error"])
    elif lock:
        lock_text = "%s (%s, hash %s)" % (lock.get("path"), lock.get("name") or "unnamed", lock.get("hash"))
    lines += ["| | |", "|---|---|"]
    for label, value in (("Outcome", "**%s**" % report["outcome"]), ("Check mode", "yes" if report["check_mode"] else "no"),
                         ("Started (UTC)", report["started"]), ("Finished (UTC)", report["finished"]),
                         ("Duration", duration_text(report["duration"])),
                         ("Inventory", ", ".join(report["inventory"])), ("Limit", report["limit"]),
                         ("Lock", lock_text), ("Playbook", report["playbook_path"]),
                         ("Schema", "%s %s" % (report["kind"], report["schema"]))):
        lines.append("| %s | %s |" % (label, _cell(value)))
    return lines


def _versions_markdown(report):
    """The versions from the lock and those the hosts report (nothing when there are none)."""
    lines = []
    versions = (report.get("lock") or {}).get("versions") or {}
    host_versions = [(name, host) for name, host in report["hosts"].items() if host["versions"] or host["artifacts"]]
    if versions or host_versions:
        lines += ["", "## Versions", ""]
    if versions:
        lines += ["From the lock:", "", "| Component | Version |", "|---|---|"]
        lines.extend("| %s | %s |" % (_cell(k), _cell(v)) for k, v in versions.items())
        lines.append("")
    if host_versions:
        lines += ["Installed on the hosts (the binaries' own report; the bundle's artifact versions):", "",
                  "| Host | Binaries | Artifacts |", "|---|---|---|"]
        for name, host in host_versions:
            lines.append("| %s | %s | %s |" % (
                _cell(name), _cell(", ".join("%s %s" % kv for kv in host["versions"].items())),
                _cell(", ".join("%s %s" % kv for kv in host["artifacts"].items()))))
    return lines


ADDON_STATE_TEXT = {"applied": "applied, and waited for until running", "rendered": "rendered only (not applied)"}


def _addons_markdown(addons):
    """Each add-on the run handled: applied to the cluster and running, or only rendered."""
    if not addons:
        return []
    lines = ["", "## Add-ons", "", "| Add-on | Version | What the run did |", "|---|---|---|"]
    lines.extend("| %s | %s | %s |" % (_cell(name), _cell(entry["version"]), ADDON_STATE_TEXT.get(entry["state"], entry["state"]))
                 for name, entry in addons.items())
    return lines


def _preflight_markdown(preflight):
    """The preflight's checks, one row per host and check (failures and warnings first on each host)."""
    if not preflight:
        return []
    verdict = "passed" if preflight["passed"] else "**failed**"
    lines = ["", "## Preflight", "", "%s (%s)" % (_cell(preflight["summary"]), verdict), ""]
    for line in preflight.get("unsupported") or ():
        lines.append("- not run: %s" % _cell(line))
    if preflight.get("unsupported"):
        lines.append("")
    lines += ["| Host | Check | Outcome | Message |", "|---|---|---|---|"]
    order = {"fail": 0, "warn": 1}
    for host, rows in preflight["hosts"].items():
        for row in sorted(rows, key=lambda r: order.get(r["status"], 2)):
            lines.append("| %s | %s | %s | %s |" % (_cell(host), _cell(row["check"]), row["status"], _cell(row["message"])))
    return lines


def summary_lines(report, paths=None):
    """The compact table printed at the end of the run, and the report's paths."""
    mode = " (check mode)" if report["check_mode"] else ""
    head = "MOORING REPORT mooring.cluster.%s: %s%s" % (report["playbook"], report["outcome"], mode)
    rows = [("HOST", "CHANGED", "MODULES", "CONTROLLER", "FAILED", "TIME", "LEFT")]
    for name, host in report["hosts"].items():
        rows.append((name, str(host["counts"]["changed"]), str(host["modules"]), str(host["controller"]),
                     str(host["counts"]["failed"] + host["counts"]["unreachable"]),
                     duration_text(host["duration"]), shorten(_left(host), SUMMARY_LEFT_LIMIT)))
    last = len(rows[0]) - 1
    widths = [max(len(row[i]) for row in rows) for i in range(last)]
    lines = [head]
    lines.extend("  " + "  ".join(row[i].ljust(widths[i]) for i in range(last)) + "  " + row[last] for row in rows)
    for item in report["remaining"]:
        if item["kind"] in ("kubeadm_boundary", "declared") or (item["kind"] == "not_reached" and not item["hosts"]):
            lines.append("  left: %s" % shorten(item["what"], SUMMARY_LEFT_LIMIT))
    if paths:
        lines.append("  report: %s" % paths["json"])
        lines.append("          %s" % paths["md"])
    return [line.rstrip() for line in lines]
