# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host preflights in troubleshoot.sh's format (``troubleshoot.sh/v1beta2`` ``HostPreflight``), as kURL and
Embedded Cluster users write them: the documents read and checked, and the analyzers evaluated on the
controller over what the host collectors gathered.

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

import fnmatch
import ipaddress
import json
import math
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common import linre
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt
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


# ------------------------------------------------------------------------------------------ conditions


class ConditionError(MooringError):
    """A ``when`` (or a quantity or duration) that does not parse: the check fails, naming it."""


_SI = {"": 1, "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18,
       "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?(?:[eE][0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")


def quantity(text):
    """Bytes of a Kubernetes quantity (``4G`` = 4*10^9, ``4Gi`` = 4*2^30, ``1e9``); a fraction of a byte or
    anything else does not parse."""
    m = _QUANTITY.match(str(text).strip())
    if not m:
        raise ConditionError("could not parse quantity %s" % excerpt(text))
    value = float(m.group(1)) * _SI[m.group(2) or ""]
    if not math.isfinite(value):
        raise ConditionError("could not parse quantity %s (out of range)" % excerpt(text))
    if value != int(value):
        raise ConditionError("could not parse quantity %s (not a whole number of bytes)" % excerpt(text))
    return int(value)


_OPS = {
    "=": lambda a, b: a == b, "==": lambda a, b: a == b, "===": lambda a, b: a == b,
    "!=": lambda a, b: a != b, "!==": lambda a, b: a != b,
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
}
_NO_NE = ("=", "==", "===", "<", ">", "<=", ">=")


def _compare(op, actual, expected, allowed=tuple(_OPS)):
    if op not in allowed:
        raise ConditionError("unsupported operator %s" % excerpt(op))
    return _OPS[op](actual, expected)


def _int(text):
    try:
        return int(text, 10)
    except (TypeError, ValueError):  # a literal of more than 4300 digits too (Python 3.11's limit)
        raise ConditionError("%s is not an integer" % excerpt(text)) from None


def _tokens(when, count):
    parts = when.split(" ")
    if len(parts) != count:
        raise ConditionError("expected %d space-separated parts, got %s" % (count, excerpt(when)))
    return parts


_X86_LEVELS = [
    ("x86-64", {"cmov", "cx8", "fpu", "fxsr", "mmx", "syscall", "sse", "sse2"}),
    ("x86-64-v2", {"cx16", "lahf_lm", "popcnt", "ssse3", "sse4_1", "sse4_2"}),
    ("x86-64-v3", {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"}),
    ("x86-64-v4", {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}),
]


def _cpu(when, data):
    parts = when.split(" ")
    if len(parts) == 2:
        parts = ["count"] + parts
    if len(parts) != 3:
        raise ConditionError("unable to parse conditional %s" % excerpt(when))
    subject, op, value = parts
    flags = set(data.get("flags") or [])
    if op.lower() == "supports":
        names = [name for name, _f in _X86_LEVELS]
        if value not in names:
            raise ConditionError("unknown microarchitecture level %s" % excerpt(value))
        need = set().union(*(f for _n, f in _X86_LEVELS[:names.index(value) + 1]))
        return need <= flags
    if op.lower() == "hasflags":
        return set(filter(None, value.split(","))) <= flags
    subject = subject.lower()
    if subject == "machinearch":
        return _compare(op, data.get("machineArch"), value, ("=", "==", "===", "!=", "!=="))
    counts = {"logical": data.get("logicalCount") or 0, "physical": data.get("physicalCount") or 0}
    counts["count"] = max(counts.values())
    if subject not in counts:
        raise ConditionError("unknown cpu subject %s" % excerpt(subject))
    return _compare(op, counts[subject], _int(value))


def _memory(when, data):
    op, value = _tokens(when, 2)
    return _compare(op, int(data.get("total") or 0), quantity(value), _NO_NE)


def _disk_usage(when, data):
    stat, op, value = _tokens(when, 3)
    total, used = int(data.get("total_bytes") or 0), int(data.get("used_bytes") or 0)
    stat = stat.lower()
    if stat in ("total", "used", "available"):
        actual = {"total": total, "used": used, "available": total - used}[stat]
        return _compare(op, actual, quantity(value), _NO_NE)
    if stat in ("used/total", "available/total"):
        ratio = (used if stat == "used/total" else total - used) / float(total) if total else 0.0
        try:
            expected = float(value[:-1]) / 100.0 if value.endswith("%") else float(value)
        except ValueError:
            raise ConditionError("%s is not a ratio or percentage" % excerpt(value)) from None
        return _compare(op, ratio, expected, _NO_NE)
    raise ConditionError("unknown disk usage statistic %s" % excerpt(stat))


def _version(text):
    """Leading numeric x.y.z of a version, zero-padded to three parts (``22.04`` -> (22, 4, 0))."""
    m = re.match(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", str(text or ""))
    if not m:
        raise ConditionError("%s is not a version" % excerpt(text))
    return tuple(int(p or 0) for p in m.groups())


def _host_os(when, data):
    parts = when.split(" ")
    if not parts or len(parts) % 3:
        raise ConditionError("expected '<name> <op> <version>' optionally followed by '&& <op> <version>' or "
                             "'|| <op> <version>': %s" % excerpt(when))
    subject = parts[0]
    if subject == "kernelVersion":
        actual = _version(data.get("kernelVersion"))
    elif subject.endswith("-kernel") and subject.count("-") == 2:
        if subject != "%s-%s-kernel" % (data.get("platform"), data.get("platformVersion")):
            return False
        actual = _version(data.get("kernelVersion"))
    elif subject in (data.get("platform"), data.get("platformFamily")):
        actual = _version(data.get("platformVersion"))
    else:
        return False
    ors, ands = [], [(parts[1], parts[2])]
    for i in range(3, len(parts), 3):
        joiner, op, ver = parts[i:i + 3]
        if joiner == "||":
            ors.append(ands)
            ands = []
        elif joiner != "&&":
            raise ConditionError("expected && or || in %s" % excerpt(when))
        ands.append((op, ver))
    ors.append(ands)
    return any(all(_compare(op, actual, _version(ver)) for op, ver in group) for group in ors)


def _host_services(when, data):
    service, op, state = _tokens(when, 3)
    if any(not isinstance(u, dict) for u in data):
        raise ConditionError("the hostServices result must be a list of units (mappings of Unit, Load, Active, Sub)")
    unit = next((u for u in data or [] if u.get("Unit") == service or str(u.get("Unit", "")).startswith(service)), None)
    if op not in ("=", "==", "!=", "<>"):
        raise ConditionError("unsupported operator %s" % excerpt(op))
    if unit is None:
        return False
    wanted = state.split(",")
    matches = [w in ("", "*") or w == unit.get(k) for w, k in zip(wanted, ("Active", "Sub", "Load"))]
    return all(matches) if op in ("=", "==") else not all(matches)


def _time(when, data):
    keyword, op, value = _tokens(when, 3)
    if keyword == "timezone":
        return _compare(op, data.get("timezone"), value, ("=", "==", "===", "!="))
    if keyword == "ntp":
        states = {"%s+%s" % (s, a) for s in ("synchronized", "unsynchronized") for a in ("active", "inactive")}
        if value not in states:
            raise ConditionError("unknown ntp state %s" % excerpt(value))
        actual = "%s+%s" % ("synchronized" if data.get("ntp_synchronized") else "unsynchronized",
                            "active" if data.get("ntp_active") else "inactive")
        return _compare(op, actual, value, ("=", "==", "==="))
    raise ConditionError("unknown time keyword %s" % excerpt(keyword))


def _status(when, data):
    status = data.get("status") if isinstance(data, dict) else str(data or "").strip()
    return when == status


def _http(when, data):
    if when == "error":
        return "error" in data
    _kw, op, value = _tokens(when, 3)
    if _kw != "statusCode":
        raise ConditionError("expected 'error' or 'statusCode <op> <code>': %s" % excerpt(when))
    response = data.get("response")
    return bool(response) and _compare(op, int(response.get("status") or 0), _int(value), ("=", "==", "==="))


_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)$")
MAX_DURATION_NS = 2 ** 63 - 1
_NS = {"ns": 1, "us": 10 ** 3, "µs": 10 ** 3, "ms": 10 ** 6, "s": 10 ** 9, "m": 60 * 10 ** 9, "h": 3600 * 10 ** 9}
PERCENTILES = {"p1": "1.000000", "p5": "5.000000", "p10": "10.000000", "p20": "20.000000", "p30": "30.000000",
               "p40": "40.000000", "p50": "50.000000", "p60": "60.000000", "p70": "70.000000", "p80": "80.000000",
               "p90": "90.000000", "p95": "95.000000", "p99": "99.000000", "p995": "99.500000",
               "p999": "99.900000", "p9995": "99.950000", "p9999": "99.990000"}


def duration_ns(text):
    """Nanoseconds of a Go duration (``10ms``, ``1.5s``, ``2m``)."""
    m = _DURATION.match(text)
    if not m:
        raise ConditionError("%s is not a duration (e.g. 10ms)" % excerpt(text))
    ns = float(m.group(1)) * _NS[m.group(2)]
    if not ns <= MAX_DURATION_NS:  # Go's time.Duration is an int64 of nanoseconds (about 292 years)
        raise ConditionError("%s is not a duration: out of range" % excerpt(text))
    return ns


def fsperf_latencies(data):
    """The fdatasync latencies (ns) of troubleshoot's fio job ``fsperf``: min, max, average and percentiles."""
    job = next((j for j in _mapping(data).get("jobs") or [] if _mapping(j).get("jobname") == "fsperf"), None)
    lat = _mapping(_mapping(_mapping(job).get("sync")).get("lat_ns"))
    if not lat:
        raise ConditionError("no fdatasync latencies of the fio job fsperf in the result")
    out = {"min": lat.get("min"), "max": lat.get("max"), "average": lat.get("mean")}
    pct = _mapping(lat.get("percentile"))
    out.update({k: pct.get(v) for k, v in PERCENTILES.items()})
    return out


def _fs_performance(when, data):
    if when == "fileNotCollected":
        return False
    keyword, op, value = _tokens(when, 3)
    latencies = fsperf_latencies(data)
    if keyword.lower() not in latencies or latencies[keyword.lower()] is None:
        raise ConditionError("unknown latency %s" % excerpt(keyword))
    return _compare(op, float(latencies[keyword.lower()]), duration_ns(value), _NO_NE)


def _kernel_modules(when, data):
    modules, op, statuses = _tokens(when, 3)
    wanted = set(statuses.split(","))
    names = modules.split(",")
    if any(data.get(name) is not None and not isinstance(data[name], dict) for name in names):
        raise ConditionError("the kernelModules result must map each module to {size, instances, status}")
    ok = [(data.get(name) or {}).get("status") in wanted for name in names]
    if op in ("=", "=="):
        return all(ok)
    if op in ("!=", "<>"):
        return not all(ok)
    raise ConditionError("unsupported operator %s" % excerpt(op))


_SYSCTL_OP = re.compile(r"[><=]=*")


def _sysctl(when, data):
    """``<parameter> <op> <value>``, read by splitting (a regular expression over blanks backtracks)."""
    parts = when.split(None, 1)
    op = _SYSCTL_OP.match(parts[1]) if len(parts) == 2 else None
    value = parts[1][op.end():] if op else ""
    if not op or not value[:1].isspace() or not value.strip() or "\n" in value.strip():
        raise ConditionError("expected '<parameter> <op> <value>': %s" % excerpt(when))
    name, op = parts[0], op.group(0)
    if name not in data:
        raise ConditionError("sysctl parameter %s was not collected" % name)
    if op in ("=", "==", "==="):
        return str(data[name]).strip() == value.strip()
    return _compare(op, _int(str(data[name]).strip()), _int(value.strip()))


def _subnet_contains(when, data):
    if when not in ("true", "false"):
        raise ConditionError("expected true or false: %s" % excerpt(when))
    return bool(data.get("contains")) == (when == "true")


def _ipv4_interfaces(when, data):
    keyword, op, value = _tokens(when, 3)
    if keyword != "count":
        raise ConditionError("expected 'count <op> <n>': %s" % excerpt(when))
    return _compare(op, len(data or []), _int(value), _NO_NE)


_CHECKS = {
    "cpu": _cpu, "memory": _memory, "diskUsage": _disk_usage, "hostOS": _host_os, "hostServices": _host_services,
    "time": _time, "tcpPortStatus": _status, "udpPortStatus": _status, "tcpConnect": _status,
    "tcpLoadBalancer": _status, "subnetAvailable": _status, "certificate": _status, "http": _http,
    "filesystemPerformance": _fs_performance, "kernelModules": _kernel_modules, "sysctl": _sysctl,
    "subnetContainsIP": _subnet_contains, "ipv4Interfaces": _ipv4_interfaces,
}


# Collector -> the type of its result (the rest are mappings); a result of another type fails the check.
_RESULT_TYPES = {"hostServices": list, "ipv4Interfaces": list, "tcpPortStatus": (dict, str), "udpPortStatus": (dict, str),
                 "tcpConnect": (dict, str), "tcpLoadBalancer": (dict, str), "subnetAvailable": (dict, str),
                 "certificate": (dict, str)}


def _mapping(value):
    """``value`` if it is a mapping, else an empty one (a nested part of a result read leniently)."""
    return value if isinstance(value, dict) else {}


# ------------------------------------------------------------------------------------------ analysis


def _result(title, outcome, body):
    return {"check": title, "outcome": outcome, "message": str(body.get("message") or ""), "uri": body.get("uri") or ""}


def _first(title, outcomes, holds):
    """troubleshoot's rule: the first outcome whose ``when`` holds (no ``when``: always); None if none does."""
    for item in outcomes:
        (outcome, body), = item.items()
        body = body or {}
        when = str(body.get("when") or "")
        if not when or holds(when):
            return _result(title, outcome, body)
    return None


def _collected_for(kind, spec, collected):
    """The result the analyzer reads: its collector's default path, or the one named by ``collectorName``."""
    source = ANALYZERS[kind][0]
    pattern, default = COLLECTORS[source]
    if default is None:
        return collected.get(pattern)
    return collected.get(pattern.format(name=spec.get("collectorName") or default))


def _select_files(spec, collected):
    key = "/".join(p.strip("/") for p in (spec.get("collectorName") or "", spec.get("fileName") or "") if p)
    return {path: content for path, content in collected.items()
            if path.startswith(key) or fnmatch.fnmatchcase(path, key)}


def _text(content, path):
    """A collected result as the text a regex reads: itself, or its JSON (built only up to the bound on the text)."""
    if isinstance(content, str):
        return content
    chunks, size = [], 0
    for chunk in json.JSONEncoder(sort_keys=True).iterencode(content):
        size += len(chunk)
        if size > linre.MAX_TEXT:
            raise ConditionError("%s: the result is more than %d characters as JSON" % (path, linre.MAX_TEXT))
        chunks.append(chunk)
    return "".join(chunks)


def _search(pattern, path, text, groups):
    """``regex`` (whether it matches) or ``regexGroups`` (the named groups of the match, {} without one) over
    one file's ``text``, in linear time; a pattern Go refuses or a text over the bound is a ConditionError."""
    regex = linre.compile(pattern) if isinstance(pattern, str) else linre.Regex(pattern)
    try:
        if not groups:
            return regex.found(text)
        m = regex.search(text)
    except linre.RegexError as exc:
        raise ConditionError("%s: %s" % (path, exc)) from None
    return m.groupdict() if m else {}


def _text_analyze(title, spec, collected):
    files = _select_files(spec, collected)
    if not files:
        return None if spec.get("ignoreIfNoFiles") else _result(title, "warn", {"message": "No matching files"})
    results = []
    for path, content in sorted(files.items()):
        text = _text(content, path)
        if spec.get("regex"):
            matched = _search(spec["regex"], path, text, False)
            last = None
            for item in spec["outcomes"]:
                (outcome, body), = item.items()
                body = body or {}
                when = str(body.get("when") or ("true" if outcome == "pass" else "false")).lower() == "true"
                if when == matched:
                    last = _result(title, outcome, body)
            if last:
                results.append(last)
        elif spec.get("regexGroups"):
            groups = _search(spec["regexGroups"], path, text, True)
            results.append(_first(title, spec["outcomes"], lambda when, g=groups: _group_holds(when, g)))
    results = [r for r in results if r]
    if not results:
        return _result(title, "fail", {"message": "Invalid analyzer"})
    return max(results, key=lambda r: OUTCOMES[::-1].index(r["outcome"]))  # the worst file decides


def _group_holds(when, groups):
    name, op, value = _tokens(when, 3)
    if name not in groups or groups[name] is None:
        return False
    if value in ("''", '""'):
        value = ""
    if re.match(r"^-?\d+$", value):
        if not re.match(r"^-?\d+$", groups[name]):
            return False
        return _compare(op, _int(groups[name]), _int(value), _NO_NE)
    return _compare(op, groups[name], value, ("=", "==", "==="))


def _at(data, path):
    for part in [p for p in str(path).split(".") if p]:
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


def _json_equal(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return sorted(json.dumps(x, sort_keys=True) for x in a) == sorted(json.dumps(x, sort_keys=True) for x in b)
    return a == b


def _json_compare(title, spec, collected):
    key = "/".join(p.strip("/") for p in (spec.get("collectorName") or "", spec.get("fileName") or "") if p)
    if key not in collected:
        raise ConditionError("file %s was not collected" % key)
    content = collected[key]
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            raise ConditionError("%s is not JSON" % key) from None
    try:
        expected = json.loads(spec.get("value") if isinstance(spec.get("value"), str) else json.dumps(spec.get("value")))
    except ValueError:
        raise ConditionError("value is not a JSON literal") from None
    equal = _json_equal(_at(content, spec.get("path") or ""), expected)
    for item in spec["outcomes"]:
        (outcome, body), = item.items()
        body = body or {}
        when = str(body.get("when") or ("true" if outcome == "pass" else "false")).lower() == "true"
        if when == equal:
            return _result(title, outcome, body)
    return _result(title, "fail", {"message": "Invalid analyzer"})


def analyze(kind, spec, collected):
    """One analyzer over the collected results: ``{check, outcome, message, uri}``, or None when no outcome
    holds (troubleshoot then reports nothing for it)."""
    title = spec.get("checkName") or ANALYZERS[kind][1]
    try:
        if kind == "textAnalyze":
            return _text_analyze(title, spec, collected)
        if kind == "jsonCompare":
            return _json_compare(title, spec, collected)
        data = _collected_for(kind, spec, collected)
        outcomes = spec["outcomes"]
        if data is None:
            if kind == "filesystemPerformance" and (next(iter(outcomes[0].values())) or {}).get("when") == "fileNotCollected":
                return _result(title, next(iter(outcomes[0])), next(iter(outcomes[0].values())) or {})
            raise ConditionError("the %s collector's result was not collected" % ANALYZERS[kind][0])
        wanted = _RESULT_TYPES.get(ANALYZERS[kind][0], dict)
        if not isinstance(data, wanted):
            raise ConditionError("the %s collector's result is %s, not %s as troubleshoot writes it" % (
                ANALYZERS[kind][0], type(data).__name__, "a list" if wanted is list else "a mapping"))
        return _first(title, outcomes, lambda when: _CHECKS[kind](when, data))
    except (MooringError, ipaddress.AddressValueError, TypeError, ValueError, KeyError, ArithmeticError, re.error) as exc:
        return _result(title, "fail", {"message": "Analyzer Failed: %s" % _one_line(exc)})
    except RecursionError:
        return _result(title, "fail", {"message": "Analyzer Failed: the collected result or the value is nested too deeply"})


def _one_line(exc):
    """An exception's text on one line (a multi-line problem list joined with "; ")."""
    problems = getattr(exc, "problems", None)
    text = "; ".join(problems) if problems else str(exc)
    return " ".join(text.split()) or type(exc).__name__


def analyze_all(plan, collected):
    """Every analyzer of ``plan`` (:func:`load`) over one host's ``collected`` results, in order; checks whose
    outcomes all miss are left out, as troubleshoot leaves them out."""
    return [r for r in (analyze(kind, spec, collected) for kind, spec in plan["analyzers"]) if r]
