# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: what preflight decides on the controller once every host has answered.

The cross-host checks (unique hostnames and machine-ids, reachability, clocks), the ignore list, and
:func:`run_inventory`, which merges them with each host's own results and renders the report.
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflight import DEFAULT_MAX_CLOCK_OFFSET, HOSTNAME_RE, result
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflightclock import judge_clock
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflightreport import render_report


def judge_inventory(hosts, max_clock_offset=DEFAULT_MAX_CLOCK_OFFSET):
    """Cross-host results, judged once on the controller.

    ``hosts`` maps inventory name to ``{"facts": {...}}`` or, for a host preflight could not
    reach, ``{"unreachable": "why"}``. Returns ``{host: [results]}``.
    """
    out = {h: [] for h in hosts}
    by_name = {}
    by_id = {}
    for h, data in sorted(hosts.items()):
        facts = data.get("facts")
        if facts is None:
            out[h].append(result("reachability", "fail", "preflight could not run on this host: %s"
                                 % (data.get("unreachable") or "no result")))
            continue
        by_name.setdefault(facts.get("hostname", ""), []).append(h)
        by_id.setdefault(facts.get("machine_id", ""), []).append(h)
    for h, data in sorted(hosts.items()):
        facts = data.get("facts")
        if facts is None:
            continue
        hn = facts.get("hostname", "")
        others = [o for o in by_name.get(hn, []) if o != h]
        if not HOSTNAME_RE.match(hn) or len(hn) > 253:
            out[h].append(result("hostname", "fail", "hostname %r is not a valid lowercase DNS name (RFC 1123): "
                                 "Kubernetes node names must be; set one with hostnamectl" % hn))
        elif others:
            out[h].append(result("hostname", "fail", "hostname %r is also used by %s: give every host its own "
                                 "hostname (hostnamectl set-hostname)" % (hn, ", ".join(others))))
        else:
            out[h].append(result("hostname", "pass", "%s (unique)" % hn))
        mid = facts.get("machine_id", "")
        others = [o for o in by_id.get(mid, []) if o != h]
        if not mid:
            out[h].append(result("machine_id", "fail", "/etc/machine-id is empty: run `systemd-machine-id-setup`"))
        elif others:
            out[h].append(result("machine_id", "fail", "machine-id %s is also used by %s (cloned image?): run "
                                 "`rm /etc/machine-id && systemd-machine-id-setup` on one of them"
                                 % (mid[:12], ", ".join(others))))
        else:
            out[h].append(result("machine_id", "pass", "%s (unique)" % mid[:12]))
        reach = facts.get("reach") or {}
        failed = ["%s (%s: %s)" % (p, r["address"], r.get("error") or "no answer")
                  for p, r in sorted(reach.items()) if not r.get("ok")]
        if failed:
            out[h].append(result("reachability", "fail", "cannot reach %s: open the firewall between the hosts"
                                 % ", ".join(failed)))
        else:
            out[h].append(result("reachability", "pass", "reaches %d peer(s)" % len(reach)))
        if facts.get("clock"):  # measured by the action plugin, from the controller
            out[h].append(judge_clock(facts["clock"], max_clock_offset))
    return out


def apply_ignore(host, results, ignore):
    """Mark results named in ``ignore`` (CHECK or HOST:CHECK) as ``ignored`` - all but those with ``ignorable``
    false (a host OS the bundle cannot install onto), which stay failed."""
    names = {e for e in ignore if ":" not in e}
    names |= {e.split(":", 1)[1] for e in ignore if ":" in e and e.split(":", 1)[0] == host}
    out = []
    for r in results:
        if r["check"] in names and r["status"] in ("warn", "fail"):
            if r.get("ignorable", True):
                r = dict(r, status="ignored", message="%s [%s, ignored by preflight_ignore]" % (r["message"], r["status"]))
            else:
                r = dict(r, message="%s [preflight_ignore cannot skip this one]" % r["message"])
        out.append(r)
    return out


def split_registered(registered):
    """(host results, judge_inventory input) from each host's registered host-scope result.

    ``registered`` maps host to what ``register:`` captured: a successful result carries
    ``facts`` and ``results``; an unreachable or failed one carries ``msg``.
    """
    host_results = {}
    inv = {}
    for h, r in sorted((registered or {}).items()):
        r = r or {}
        if r.get("facts") is not None and not r.get("failed") and not r.get("unreachable"):
            host_results[h] = list(r.get("checks") or [])
            inv[h] = {"facts": r["facts"]}
        else:
            inv[h] = {"unreachable": r.get("msg") or ("skipped" if r.get("skipped") else "no result")}
    return host_results, inv


def run_inventory(registered, ignore=(), max_clock_offset=DEFAULT_MAX_CLOCK_OFFSET):
    """Everything the controller decides: merged results, the report text and the summary."""
    host_results, inv = split_registered(registered)
    cross = judge_inventory(inv, max_clock_offset)
    merged = {h: apply_ignore(h, rs, list(ignore)) for h, rs in merge_results(host_results, cross).items()}
    text, summary = render_report(merged)
    return merged, text, summary


def merge_results(host_results, inventory_results):
    """Per-host results followed by the cross-host ones, one list per host."""
    out = {}
    for h in sorted(set(host_results) | set(inventory_results)):
        out[h] = list(host_results.get(h, [])) + list(inventory_results.get(h, []))
    return out
