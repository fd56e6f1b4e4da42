# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the support bundle assembled on the controller.

Input: each host's registered ``support_collect`` result (``files``, ``facts``, ``redacted``, ``errors``, and the
clock offset its action plugin measured) or why it could not be reached; the controller's own files (the
lock, the run reports), redacted here with the same patterns. Output: one ``tar.gz`` (0600, written
atomically) holding ``index.md`` at the top, ``hosts/<host>/...`` and ``controller/...``.

``index.md`` lists what was collected per host and the findings a helper looks at first
(:func:`findings`): certificates expired or expiring, an etcd member down or a unit failed, a disk over the
limit, a clock away from the controller's, a host that could not be reached or a part that could not be
read.
"""

from __future__ import annotations

import io
import tarfile
import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflightclock import judge_clock
from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import write_atomic
from ansible_collections.mooring.cluster.plugins.module_utils.common.redact import merge_counts, redact

DAY = 86400
WATCHED_UNITS = ("etcd", "containerd", "kubelet", "keepalived")


def _cert_findings(host, facts, now, expiry_days):
    out = []
    for cert in facts.get("certificates") or []:
        if not cert.get("not_after"):
            out.append(("warn", host, "certificate %s: expiry not read (%s)" % (cert["path"], cert.get("error") or "?")))
            continue
        left = (cert["not_after"] - now) / DAY
        when = time.strftime("%Y-%m-%d", time.gmtime(cert["not_after"]))
        if left < 0:
            out.append(("fail", host, "certificate %s expired on %s (%d days ago): renew it (mooring.cluster.certs_renew)"
                        % (cert["path"], when, -left)))
        elif left < expiry_days:
            out.append(("warn", host, "certificate %s expires on %s, in %d days: renew it (mooring.cluster.certs_renew)"
                        % (cert["path"], when, left)))
    return out


def _etcd_findings(host, facts):
    member = facts.get("etcd")
    if not member:
        return []
    if member.get("error") and not member.get("members"):
        return [("fail", host, "etcd: no member list through %s (%s)" % (member.get("endpoint", "?"), member["error"][:200]))]
    out = []
    for entry in member.get("health") or []:
        if not entry.get("health"):
            names = [m["name"] for m in member["members"] if entry.get("endpoint") in m["client_urls"]]
            out.append(("fail", host, "etcd member %s down: %s is not healthy (%s)" % (
                names[0] if names else "?", entry.get("endpoint"), (entry.get("error") or "no answer")[:200])))
    return out


def findings(hosts, now, expiry_days=30, disk_pct=80, max_clock_offset=2.0):
    """``[(severity, host, text)]``, severity ``fail`` or ``warn``, worst first (hosts in name order)."""
    out = []
    for host in sorted(hosts):
        data = hosts[host]
        if data.get("unreachable"):
            out.append(("fail", host, "not collected: %s" % data["unreachable"]))
            continue
        facts = data.get("facts") or {}
        out.extend(_cert_findings(host, facts, now, expiry_days))
        etcd_down = _etcd_findings(host, facts)
        out.extend(etcd_down)
        for unit, state in sorted((facts.get("units") or {}).items()):
            if unit in WATCHED_UNITS and state.get("LoadState") == "loaded" and state.get("ActiveState") != "active":
                out.append(("fail", host, "unit %s is %s (%s)" % (unit, state.get("ActiveState"), state.get("SubState"))))
        for disk in facts.get("disks") or []:
            if disk["used_pct"] > disk_pct:
                out.append(("warn", host, "disk %s (%s) is %.0f %% used, over %d %%"
                            % (disk["mount"], disk["fs"], disk["used_pct"], disk_pct)))
        if facts.get("clock"):
            judged = judge_clock(facts["clock"], max_clock_offset)
            if judged["status"] != "pass":
                out.append((judged["status"], host, judged["message"]))
        out.extend(("warn", host, "not read: %s" % line) for line in data.get("errors") or [])
    rank = {"fail": 0, "warn": 1}
    return sorted(out, key=lambda f: rank[f[0]])


def render_index(meta, hosts, found, controller_files, redacted):
    """``index.md``: when and from where, the findings, then per host what was collected."""
    lines = ["# mooring support bundle", "",
             "Collected %s UTC on the controller %s by `ansible-playbook mooring.cluster.support_bundle`." % (
                 time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(meta["now"])), meta.get("controller", "?")),
             "Hosts: %d (%d not reachable). Secrets redacted: %s." % (
                 len(hosts), sum(1 for h in hosts.values() if h.get("unreachable")),
                 ", ".join("%d %s" % (n, k) for k, n in sorted(redacted.items())) or "none found"),
             "", "## Findings", ""]
    lines.extend("- **%s** %s: %s" % (sev.upper(), host, text) for sev, host, text in found)
    if not found:
        lines.append("- none: no expired or expiring certificate, member down, failed unit, full disk or clock offset")
    lines += ["", "## Hosts", ""]
    for host in sorted(hosts):
        data = hosts[host]
        if data.get("unreachable"):
            lines.append("- `%s`: not reachable - %s" % (host, data["unreachable"]))
            continue
        bundles = (data.get("facts") or {}).get("bundles") or []
        lines.append("- `%s`: %s; bundle %s" % (host, ", ".join("`hosts/%s/%s`" % (host, n) for n in sorted(data["files"])),
                                                bundles[0]["id"] if bundles else "none"))
    lines += ["", "## Controller", ""]
    lines.extend("- `controller/%s`" % name for name in sorted(controller_files))
    if not controller_files:
        lines.append("- nothing (no lock or run reports given)")
    return "\n".join(lines) + "\n"


def assemble(hosts, controller_files, meta, expiry_days=30, disk_pct=80, max_clock_offset=2.0):
    """``(archive entries {path: text}, findings, redacted counts)``; controller files are redacted here."""
    redacted = {}
    for data in hosts.values():
        merge_counts(redacted, data.get("redacted") or {})
    cleaned = {}
    for name, text in controller_files.items():
        cleaned[name], counts = redact(text)
        merge_counts(redacted, counts)
    found = findings(hosts, meta["now"], expiry_days, disk_pct, max_clock_offset)
    entries = {"index.md": render_index(meta, hosts, found, cleaned, redacted)}
    for host, data in hosts.items():
        for name, text in (data.get("files") or {}).items():
            entries["hosts/%s/%s" % (host, name)] = text
    for name, text in cleaned.items():
        entries["controller/%s" % name] = text
    return entries, found, redacted


def write_archive(path, top, entries, mtime):
    """``entries`` as ``top/<path>`` in a gzip tar at ``path`` (0600, atomic), index.md first."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(entries, key=lambda n: (n != "index.md", n)):
            data = entries[name].encode("utf-8")
            info = tarfile.TarInfo("%s/%s" % (top, name))
            info.size, info.mode, info.mtime = len(data), 0o600, int(mtime)
            tar.addfile(info, io.BytesIO(data))
    write_atomic(path, buf.getvalue(), mode=0o600)
    return len(buf.getvalue())
