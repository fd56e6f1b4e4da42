# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the support bundle assembled on the controller.

Input: each host's registered ``support_collect`` result (``files``, ``facts``, ``redacted``, ``errors``, and the
clock offset its action plugin measured) or why it could not be reached (:func:`host_part`); the controller's own
files (the lock, the run reports), redacted here with the same patterns. Output: one ``tar.gz`` (0600, written
atomically) holding ``index.md`` at the top, ``hosts/<host>/...`` and ``controller/...``.

``index.md`` lists what was collected per host and the findings a helper looks at first
(:func:`findings`): certificates expired or expiring, an etcd member down or a unit failed, a disk over the
limit, a clock away from the controller's, a host that could not be reached or a part that could not be
read.

What a host returned is checked before it is used (:func:`check_part`, one ``Shape`` line per problem): a file
name that is not a relative path of safe names (:func:`member_name`: no ``..``, no absolute path, no control
character, bounded) or a field of the wrong type is left out and named by a ``FAIL`` finding for that host; the
rest of that host's part and the other hosts are still assembled. A host's text that ``index.md`` shows is one
line (:func:`shown`: control characters escaped) and redacted here, so it can neither forge a line of the index
nor carry a secret the host did not take out (its ``errors``, an etcd error, why it was not reached).
"""

from __future__ import annotations

import io
import math
import re
import tarfile
import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflightclock import judge_clock
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.support.support import MAX_TOTAL
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, PathEscapeError, excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import shown as _shown
from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import safe_name, write_atomic
from ansible_collections.mooring.cluster.plugins.module_utils.common.redact import merge_counts, redact
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field, type_name

DAY = 86400
WATCHED_UNITS = ("etcd", "containerd", "kubelet", "keepalived")
MAX_MEMBER = 255          # a file name below a host's directory (characters)
MAX_DEPTH = 8             # its parts
MAX_SHOWN = 300           # a host's text in one line of index.md
MAX_TEXT = 64 * 1024 * 1024  # one file's text
MAX_HOST_TEXT = MAX_TOTAL  # a host's files in all: what support_collect sends at most
MAX_NUMBER = 1e18         # a fact's number (a time, a percentage, an offset): anything larger is not one
_KIND = re.compile(r"^[a-z0-9-]{1,40}$")
_LAST_SECOND = 253402300799  # 9999-12-31 23:59:59 UTC: a later expiry is shown as that day


def shown(value, limit=MAX_SHOWN):
    """A host's text as one line of index.md (:func:`common.errors.shown`): never a line break that could start a
    line of its own."""
    return _shown(value, limit)


def member_name(name):
    """``name`` when it may be a member below a host's directory: a relative path of at most MAX_DEPTH parts,
    each a safe name (:func:`..common.fileio.safe_name`: no ``.`` or ``..``, no control character, no empty part),
    at most MAX_MEMBER characters in all; else PathEscapeError (one line)."""
    if not isinstance(name, str) or not 0 < len(name) <= MAX_MEMBER or name.count("/") >= MAX_DEPTH:
        raise PathEscapeError("file name %s is not a relative path of at most %d parts and %d characters"
                              % (excerpt(name), MAX_DEPTH, MAX_MEMBER))
    for part in name.split("/"):
        safe_name(part, "file name %s, part" % excerpt(name))
    return name


def host_part(result):
    """A host's registered support_collect result as given, or ``{"unreachable": why}`` when it gave none."""
    if not isinstance(result, dict):
        return {"unreachable": "no result (the registered result is %s, not a mapping)" % type_name(result)}
    if result.get("unreachable") or result.get("failed") or "files" not in result:
        why = result.get("msg") or ("skipped" if result.get("skipped") else "no result")
        return {"unreachable": shown(why)}
    return {k: result.get(k) for k in ("files", "facts", "redacted", "errors")}


class _Part(Shape):
    """What the index and the archive use of one host's result; each check raises the Shape line of its field."""

    def __init__(self):
        super().__init__("support_collect result")

    def number(self, value, path, optional=False):
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value) > MAX_NUMBER \
                or not math.isfinite(value):
            self.expected(path, "a number", value, show_value=isinstance(value, float))
        return value

    def records(self, value, path, check):
        """A list (or nothing) of mappings, each checked by ``check(item, where)``."""
        for i, item in enumerate(self.listing(value, path, optional=True)):
            check(self.mapping(item, field(path, i)), field(path, i))
        return value or []

    def _certificate(self, cert, where):
        self.text(cert.get("path"), field(where, "path"), limit=4096)
        self.number(cert.get("not_after"), field(where, "not_after"), optional=True)
        self.text(cert.get("error"), field(where, "error"), optional=True, empty=True, limit=4096)

    def certificates(self, value, path):
        return self.records(value, path, self._certificate)

    def units(self, value, path):
        for unit, state in self.mapping(value, path, optional=True).items():
            self.text(unit, path, limit=256)
            for key in ("LoadState", "ActiveState", "SubState"):
                self.text(self.mapping(state, field(path, unit)).get(key), field(field(path, unit), key),
                          optional=True, empty=True, limit=256)
        return value or {}

    def _member(self, member, where):
        self.text(member.get("name"), field(where, "name"), optional=True, empty=True, limit=256)
        for j, url in enumerate(self.listing(member.get("client_urls"), field(where, "client_urls"), optional=True)):
            self.text(url, field(field(where, "client_urls"), j), limit=1024)

    def _health(self, entry, where):
        self.text(entry.get("endpoint"), field(where, "endpoint"), optional=True, empty=True)
        self.boolean(entry.get("health"), field(where, "health"), optional=True)
        self.text(entry.get("error"), field(where, "error"), optional=True, empty=True, limit=4096)

    def etcd(self, value, path):
        if value is None:
            return None
        self.mapping(value, path)
        self.text(value.get("endpoint"), field(path, "endpoint"), optional=True, empty=True)
        self.text(value.get("error"), field(path, "error"), optional=True, empty=True, limit=4096)
        self.records(value.get("members"), field(path, "members"), self._member)
        self.records(value.get("health"), field(path, "health"), self._health)
        return value

    def _disk(self, disk, where):
        self.text(disk.get("mount"), field(where, "mount"), limit=4096)
        self.text(disk.get("fs"), field(where, "fs"), empty=True, limit=4096)
        self.number(disk.get("used_pct"), field(where, "used_pct"))

    def disks(self, value, path):
        return self.records(value, path, self._disk)

    def clock(self, value, path):
        if value is None:
            return None
        self.mapping(value, path)
        self.number(value.get("offset"), field(path, "offset"))
        self.number(value.get("error"), field(path, "error"))
        return value

    def _bundle(self, bundle, where):
        self.text(bundle.get("id"), field(where, "id"), limit=256)

    def bundles(self, value, path):
        return self.records(value, path, self._bundle)

    def cluster_findings(self, value, path):
        """``[[severity, text]]``: what a control-plane host judged of the cluster it read."""
        for i, item in enumerate(self.listing(value, path, optional=True)):
            where = field(path, i)
            if not isinstance(item, list) or len(item) != 2:
                self.expected(where, "a [severity, text] pair", item)
            self.one_of(item[0], field(where, 0), ("fail", "warn"))
            self.text(item[1], field(where, 1), limit=4 * MAX_SHOWN)
        return [tuple(item) for item in value or []]


def _file_text(shape, files, name):
    try:
        member_name(name)
    except PathEscapeError as exc:
        shape.fail("files", str(exc))
    return shape.text(files[name], field("files", name), limit=MAX_TEXT, empty=True)


def _count(shape, kind, n):
    shape.pattern(kind, "redacted", _KIND, "a kind of secret (a-z, 0-9, -)")
    return shape.count(n, field("redacted", kind))


_FACTS = (("certificates", []), ("units", {}), ("etcd", None), ("disks", []), ("clock", None), ("bundles", []),
          ("cluster_findings", []))


def check_part(part):
    """``(part, problems)``: ``part`` with each field, file and fact of the wrong shape left out, and one line per
    problem (``support_collect result: PATH: must be EXPECTED, not FOUND (left out)``)."""
    if "unreachable" in part:
        return {"unreachable": shown(part["unreachable"]) or "no result"}, []
    shape, problems = _Part(), []
    checked = {"files": {}, "facts": {}, "redacted": {}, "errors": []}

    def keep(check, *args):
        try:
            return True, check(*args)
        except MooringError as exc:
            problems.append("%s (left out)" % exc)
            return False, None

    files, total = keep(shape.mapping, part.get("files"), "files")[1] or {}, 0
    for i, name in enumerate(sorted(files, key=str)):
        ok, text = keep(_file_text, shape, files, name)
        total += len(text) if ok else 0
        if total > MAX_HOST_TEXT:
            problems.append("support_collect result: files: more than %d characters in all; %s and the %d after it "
                            "left out" % (MAX_HOST_TEXT, excerpt(name), len(files) - i - 1))
            break
        if ok:
            checked["files"][name] = text
    facts = keep(shape.mapping, part.get("facts"), "facts", True)[1] or {}
    for name, empty in _FACTS:
        ok, value = keep(getattr(shape, name), facts.get(name), field("facts", name))
        checked["facts"][name] = value if ok else empty
    for kind, n in sorted((keep(shape.mapping, part.get("redacted"), "redacted", True)[1] or {}).items(), key=str):
        ok, n = keep(_count, shape, kind, n)
        if ok:
            checked["redacted"][kind] = n
    for i, line in enumerate(keep(shape.listing, part.get("errors"), "errors", True)[1] or []):
        ok, line = keep(shape.text, line, field("errors", i), False, 4096, True)
        if ok:
            checked["errors"].append(line)
    return checked, problems


def _cert_findings(host, facts, now, expiry_days):
    out = []
    for cert in facts.get("certificates") or []:
        path = shown(cert["path"])
        if cert.get("not_after") is None:
            out.append(("warn", host, "certificate %s: expiry not read (%s)" % (path, shown(cert.get("error") or "?"))))
            continue
        left = (cert["not_after"] - now) / DAY
        when = time.strftime("%Y-%m-%d", time.gmtime(min(max(cert["not_after"], 0), _LAST_SECOND)))
        if left < 0:
            out.append(("fail", host, "certificate %s expired on %s (%d days ago): renew it (mooring.cluster.certs_renew)"
                        % (path, when, -left)))
        elif left < expiry_days:
            out.append(("warn", host, "certificate %s expires on %s, in %d days: renew it (mooring.cluster.certs_renew)"
                        % (path, when, left)))
    return out


def _etcd_findings(host, facts):
    member = facts.get("etcd")
    if not member:
        return []
    members = member.get("members") or []
    if member.get("error") and not members:
        endpoint = shown(member.get("endpoint") or "?")
        return [("fail", host, "etcd: no member list through %s (%s)" % (endpoint, shown(member["error"], 200)))]
    out = []
    for entry in member.get("health") or []:
        if not entry.get("health"):
            names = [m.get("name") for m in members if entry.get("endpoint") in (m.get("client_urls") or [])]
            out.append(("fail", host, "etcd member %s down: %s is not healthy (%s)" % (
                shown(names[0] if names else "?"), shown(entry.get("endpoint")), shown(entry.get("error") or "no answer", 200))))
    return out


def findings(hosts, now, expiry_days=30, disk_pct=80, max_clock_offset=2.0):
    """``[(severity, host, text)]``, severity ``fail`` or ``warn``, worst first (hosts in name order). ``hosts``: each
    host's part as :func:`check_part` leaves it; a ``problems`` list in it becomes one ``fail`` line each."""
    out = []
    for host in sorted(hosts):
        data = hosts[host]
        if data.get("unreachable"):
            out.append(("fail", host, "not collected: %s" % shown(data["unreachable"])))
            continue
        out.extend(("fail", host, shown(line, 4 * MAX_SHOWN)) for line in data.get("problems") or [])
        facts = data.get("facts") or {}
        out.extend(_cert_findings(host, facts, now, expiry_days))
        out.extend(_etcd_findings(host, facts))
        for unit, state in sorted((facts.get("units") or {}).items()):
            if unit in WATCHED_UNITS and state.get("LoadState") == "loaded" and state.get("ActiveState") != "active":
                out.append(("fail", host, "unit %s is %s (%s)" % (unit, shown(state.get("ActiveState")),
                                                                  shown(state.get("SubState")))))
        for disk in facts.get("disks") or []:
            if disk["used_pct"] > disk_pct:
                out.append(("warn", host, "disk %s (%s) is %.0f %% used, over %d %%"
                            % (shown(disk["mount"]), shown(disk["fs"]), disk["used_pct"], disk_pct)))
        if facts.get("clock"):
            judged = judge_clock(facts["clock"], max_clock_offset)
            if judged["status"] != "pass":
                out.append((judged["status"], host, judged["message"]))
        out.extend(("warn", host, "not read: %s" % shown(line)) for line in data.get("errors") or [])
    rank = {"fail": 0, "warn": 1}
    return sorted(out, key=lambda f: rank[f[0]])


def take_cluster(parts, cluster):
    """``(files, source, findings)`` of the cluster's state: ``cluster`` (the controller's reading: ``{files, source,
    findings}``) when it has files, else the first host's ``cluster/`` files (``kubectl`` there) with what that host
    judged (its ``cluster_findings`` fact); every host's ``cluster/`` files leave its part either way (one copy, at the
    archive's top)."""
    cluster = cluster or {}
    files, source, found = dict(cluster.get("files") or {}), cluster.get("source") or "", list(cluster.get("findings") or [])
    why = cluster.get("error") or "no kubeconfig given"
    for host in sorted(parts):
        theirs = {n: t for n, t in (parts[host].get("files") or {}).items() if n.startswith("cluster/")}
        for name in theirs:
            del parts[host]["files"][name]
        if theirs and not files:
            files, source = theirs, "kubectl on %s (the controller's kubeconfig: %s)" % (host, why)
            found = list((parts[host].get("facts") or {}).get("cluster_findings") or [])
    if not files:
        source = "not read: the controller's kubeconfig: %s; no control-plane host read it" % why
    return files, source, found


def render_index(meta, hosts, found, controller_files, redacted, cluster=("", {})):
    """``index.md``: when and from where, the findings, then per host what was collected."""
    lines = ["# mooring support bundle", "",
             "Collected %s UTC on the controller %s by `ansible-playbook mooring.cluster.support_bundle`." % (
                 time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(meta["now"])), shown(meta.get("controller", "?"))),
             "Hosts: %d (%d not reachable). Secrets redacted: %s." % (
                 len(hosts), sum(1 for h in hosts.values() if h.get("unreachable")),
                 ", ".join("%d %s" % (n, k) for k, n in sorted(redacted.items())) or "none found"),
             "", "## Findings", ""]
    lines.extend("- **%s** %s: %s" % (sev.upper(), shown(host), shown(text, 4 * MAX_SHOWN)) for sev, host, text in found)
    if not found:
        lines.append("- none: no expired or expiring certificate, member down, failed unit, full disk or clock offset; "
                     "no node NotReady, container failing or PVC pending")
    lines += ["", "## Hosts", ""]
    for host in sorted(hosts):
        data = hosts[host]
        if data.get("unreachable"):
            lines.append("- `%s`: not reachable - %s" % (shown(host), shown(data["unreachable"])))
            continue
        bundles = (data.get("facts") or {}).get("bundles") or []
        names = ", ".join("`hosts/%s/%s`" % (host, n) for n in sorted(data.get("files") or {}))
        lines.append("- `%s`: %s; bundle %s" % (shown(host), names or "no file", shown(bundles[0]["id"]) if bundles else "none"))
    lines += ["", "## Cluster", "", "Read through %s." % shown(cluster[0], 4 * MAX_SHOWN), ""]
    lines.extend("- `%s`" % shown(name) for name in sorted(cluster[1]))
    lines += ["", "## Controller", ""]
    lines.extend("- `controller/%s`" % shown(name) for name in sorted(controller_files))
    if not controller_files:
        lines.append("- nothing (no lock or run reports given)")
    return "\n".join(lines) + "\n"


def _redacted(text, total):
    text, counts = redact(text)
    merge_counts(total, counts)
    return text


def assemble(hosts, controller_files, meta, expiry_days=30, disk_pct=80, max_clock_offset=2.0, cluster=None):
    """``(archive entries {path: text}, findings, redacted counts)``. ``hosts``: each host's :func:`host_part`,
    checked here (:func:`check_part`); ``cluster``: the controller's reading of the API server (:func:`take_cluster`).
    Every controller file and the cluster's files, and every host text the index shows, are redacted here (the
    hosts' files were, on the hosts)."""
    redacted, parts, refused = {}, {}, []
    hosts = {str(name): result for name, result in hosts.items()}  # inventory names are strings; anything else as one
    for host in sorted(hosts):
        part, problems = check_part(hosts[host])
        if part.get("unreachable"):
            part["unreachable"] = _redacted(part["unreachable"], redacted)
        part["errors"] = [_redacted(line, redacted) for line in part.get("errors") or []]
        try:
            safe_name(host, "host")
        except PathEscapeError as exc:  # an inventory name that cannot be a directory of the archive
            problems.append("%s (its files left out)" % exc)
            part["files"] = {}
        part["problems"] = problems
        merge_counts(redacted, part.get("redacted") or {})
        parts[host] = part
    cleaned = {}
    for name, text in controller_files.items():
        try:
            cleaned[member_name(name)] = _redacted(text, redacted)
        except PathEscapeError as exc:
            refused.append(("fail", "controller", "%s (left out)" % exc))
    cluster_files, source, cluster_found = take_cluster(parts, cluster)
    cluster_files = {name: _redacted(text, redacted) for name, text in cluster_files.items()}
    found = refused + [(sev, host, _redacted(text, redacted))
                       for sev, host, text in findings(parts, meta["now"], expiry_days, disk_pct, max_clock_offset)]
    found += [(sev, "cluster", _redacted(text, redacted)) for sev, text in cluster_found]
    found.sort(key=lambda f: {"fail": 0, "warn": 1}[f[0]])
    entries = {"index.md": render_index(meta, parts, found, cleaned, redacted, (_redacted(source, redacted), cluster_files))}
    entries.update(cluster_files)
    for host, data in parts.items():
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
            data = entries[name].encode("utf-8", "backslashreplace")  # a lone surrogate from a host's JSON: shown
            info = tarfile.TarInfo("%s/%s" % (top, name))
            info.size, info.mode, info.mtime = len(data), 0o600, int(mtime)
            tar.addfile(info, io.BytesIO(data))
    write_atomic(path, buf.getvalue(), mode=0o600)
    return len(buf.getvalue())
