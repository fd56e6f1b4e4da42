# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host preflights in troubleshoot.sh's format (``troubleshoot.sh/v1beta2`` ``HostPreflight``), as kURL and
Embedded Cluster users write them: the documents read and checked (:func:`load`), the collectors' result
paths (:func:`result_path`) and the analyzers' names. The analyzers' ``when`` conditions are
:mod:`hostconditions`, their evaluation over what the collectors gathered :mod:`hostanalyze`.

What a collector gathered is a mapping of troubleshoot's own result paths (``host-collectors/system/cpu.json``,
``host-collectors/tcpPortStatus/<name>.json``, ...) to their content (parsed JSON, or text), so a
``textAnalyze`` or ``jsonCompare`` written against troubleshoot's paths reads the same file here.

Outcomes are evaluated as troubleshoot does: in order, the first whose ``when`` holds wins, an outcome
without ``when`` always holds, no match gives no result, and a ``when`` that does not parse makes the
check fail ("Analyzer Failed: ..."). ``textAnalyze`` in ``regex`` mode visits every outcome (the last
that holds wins), as upstream; its ``regex`` and ``regexGroups`` are Go's regular expressions, matched in time
linear in the text (:mod:`common.linre`), so a pattern that would make a backtracking engine run for hours
costs milliseconds, and one Go refuses (a backreference, a lookahead) fails the check. Input that does not
fit (a quantity past the float range, a collector result of the wrong shape, JSON nested too deeply) fails
the check with one line, never a traceback.
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import Shape, field

API_VERSION = "troubleshoot.sh/v1beta2"
KIND = "HostPreflight"


class HostPreflightError(MooringError):
    """A HostPreflight document that cannot be run (nothing is collected or changed on any host)."""


# Collector type -> (result path, or a pattern with {name}; the name used when collectorName is empty).
COLLECTORS = {
    "cpu": ("host-collectors/system/cpu.json", None),
    "memory": ("host-collectors/system/memory.json", None),
    "diskUsage": ("host-collectors/diskUsage/{name}.json", "diskUsage"),
    "hostOS": ("host-collectors/system/hostos_info.json", None),
    "hostServices": ("host-collectors/system/systemctl_services.json", None),
    "time": ("host-collectors/system/time.json", None),
    "tcpPortStatus": ("host-collectors/tcpPortStatus/{name}.json", "tcpPortStatus"),
    "udpPortStatus": ("host-collectors/udpPortStatus/{name}.json", "udpPortStatus"),
    "tcpConnect": ("host-collectors/connect/{name}.json", "connect"),
    "tcpLoadBalancer": ("host-collectors/tcpLoadBalancer/{name}.json", "tcpLoadBalancer"),
    "http": ("host-collectors/http/{name}.json", "result"),
    "certificate": ("host-collectors/certificate/{name}.json", "certificate"),
    "filesystemPerformance": ("host-collectors/filesystemPerformance/{name}.json", "filesystemPerformance"),
    "kernelModules": ("host-collectors/system/kernel_modules.json", None),
    "sysctl": ("host-collectors/system/sysctl.json", None),
    "subnetAvailable": ("host-collectors/subnetAvailable/{name}.json", "result"),
    "subnetContainsIP": ("host-collectors/subnetContainsIP/{name}.json", "result"),
    "ipv4Interfaces": ("host-collectors/system/ipv4Interfaces.json", None),
    "dns": ("host-collectors/dns/{name}/result.json", "dns"),
    "cgroups": ("host-collectors/system/cgroups.json", None),
    "run": ("host-collectors/run-host/{name}.txt", "run-host"),
}
# Analyzer type -> the collector it reads (None: it names its file itself) and its default title.
ANALYZERS = {
    "cpu": ("cpu", "Number of CPUs"),
    "memory": ("memory", "Amount of Memory"),
    "diskUsage": ("diskUsage", "Disk Usage"),
    "hostOS": ("hostOS", "Host OS Info"),
    "hostServices": ("hostServices", "Host Services"),
    "time": ("time", "Time"),
    "tcpPortStatus": ("tcpPortStatus", "TCP Port Status"),
    "udpPortStatus": ("udpPortStatus", "UDP Port Status"),
    "tcpConnect": ("tcpConnect", "TCP Connection Attempt"),
    "tcpLoadBalancer": ("tcpLoadBalancer", "TCP Load Balancer"),
    "http": ("http", "HTTP Request"),
    "certificate": ("certificate", "Certificate Key Pair"),
    "filesystemPerformance": ("filesystemPerformance", "Filesystem Performance"),
    "kernelModules": ("kernelModules", "Kernel Modules"),
    "sysctl": ("sysctl", "Sysctl"),
    "subnetAvailable": ("subnetAvailable", "Subnet Available"),
    "subnetContainsIP": ("subnetContainsIP", "Subnet Contains IP"),
    "ipv4Interfaces": ("ipv4Interfaces", "IPv4 Interfaces"),
    "textAnalyze": (None, "Regular Expression"),
    "jsonCompare": (None, "JSON Compare"),
}
OUTCOMES = ("fail", "warn", "pass")


# ------------------------------------------------------------------------------------------ documents


def _go_bool(value):
    """troubleshoot's ``exclude``: a YAML bool, or a string as Go's ParseBool reads it; anything else
    (an empty or unreadable string) is false."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value in ("1", "t", "T", "TRUE", "true", "True")
    return False


def result_path(kind, spec):
    """The result path collector ``kind`` with ``spec`` writes."""
    pattern, default = COLLECTORS[kind]
    name = (spec or {}).get("collectorName") or default
    return pattern.format(name=str(name).replace(" ", "_")) if default else pattern


class HostPreflightShape(Shape):
    """The shape of one HostPreflight document (``where`` names it: ``SOURCE: document N``): its apiVersion and
    kind, ``spec.collectors`` and ``spec.analyzers`` (lists of single-key mappings ``{type: body}``) and each
    analyzer's outcomes. Each check raises :class:`HostPreflightError`; :func:`load` gathers them."""

    error = HostPreflightError

    def document(self, doc):
        """The document's ``spec`` (a mapping), once it is a HostPreflight of :data:`API_VERSION`."""
        self.mapping(doc, "")
        if doc.get("apiVersion") != API_VERSION:
            self.expected("apiVersion", API_VERSION, doc.get("apiVersion"), show_value=True)
        if doc.get("kind") != KIND:
            self.expected("kind", KIND, doc.get("kind"), show_value=True)
        return self.mapping(doc.get("spec"), "spec")

    def entry(self, item, path, what):
        """``(type, body)`` of a collector or analyzer item: a mapping with exactly one key, whose body is a
        mapping (or empty)."""
        if not isinstance(item, dict) or len(item) != 1:
            self.expected(path, "a mapping with exactly one key (the %s type)" % what, item, show_value=True)
        (kind, body), = item.items()
        body = {} if body is None else body
        return kind, self.mapping(body, field(path, kind))

    def outcomes(self, outcomes, path):
        """An analyzer's outcomes: a non-empty list of ``{fail|warn|pass: {when, message, uri}}``."""
        if not isinstance(outcomes, list) or not outcomes:
            self.expected(path, "a non-empty list of fail/warn/pass outcomes", outcomes, show_value=True)
        for i, o in enumerate(outcomes):
            if not isinstance(o, dict) or len(o) != 1 or next(iter(o)) not in OUTCOMES \
                    or not isinstance(next(iter(o.values())) or {}, dict):
                self.expected(field(path, i), "one of fail, warn, pass with when/message/uri", o, show_value=True)
        return outcomes


def load(documents, source="preflight_spec"):
    """``{collectors, analyzers, warnings}`` of HostPreflight ``documents`` (parsed YAML: one document or a
    list). ``collectors`` / ``analyzers``: ``[(type, spec)]`` of the types mooring runs, in order, excluded
    ones left out; every other type is named once in ``warnings``. A document that is not a HostPreflight,
    or an item that is not one single-key mapping, is an error: :class:`HostPreflightError` listing every
    problem (raised before any host is touched)."""
    docs = documents if isinstance(documents, list) else [documents]
    found = {"collectors": [], "analyzers": [], "problems": [], "unknown": []}
    for n, doc in enumerate(docs, 1):
        shape = HostPreflightShape("%s: document %d" % (source, n))
        try:
            spec = shape.document(doc)
        except HostPreflightError as exc:
            found["problems"].extend(exc.problems)
            continue
        for name, known in (("collectors", COLLECTORS), ("analyzers", ANALYZERS)):
            _load_items(shape, spec, name, known, found)
    if found["problems"]:
        raise HostPreflightError("host preflight documents cannot be run", found["problems"])
    warnings = ["%s: %s is not supported by mooring.cluster; not run" % (source, u) for u in dict.fromkeys(found["unknown"])]
    return {"collectors": found["collectors"], "analyzers": found["analyzers"], "warnings": warnings}


def _load_items(shape, spec, name, known, found):
    """The items of ``spec.<name>`` into ``found[name]`` (those of a type mooring runs and not excluded),
    the other types into ``found["unknown"]``, each item's shape problem into ``found["problems"]``."""
    try:
        items = shape.listing(spec.get(name) or [], "spec.%s" % name)
    except HostPreflightError as exc:
        found["problems"].extend(exc.problems)
        return
    for i, item in enumerate(items):
        at = "spec.%s[%d]" % (name, i)
        try:
            kind, body = shape.entry(item, at, name[:-1])
            if kind not in known:
                found["unknown"].append("%s %s" % (name[:-1], kind))
                continue
            if name == "analyzers":
                shape.outcomes(body.get("outcomes"), "%s.%s.outcomes" % (at, kind))
        except HostPreflightError as exc:
            found["problems"].extend(exc.problems)
            continue
        if not _go_bool(body.get("exclude")):
            found[name].append((kind, body))
