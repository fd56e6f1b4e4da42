# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the ``when`` conditions of troubleshoot's host analyzers, one reader per collector
(:data:`CHECKS`), and the quantities and durations they compare, read as troubleshoot reads them. A condition
that does not parse is :class:`ConditionError`, which fails the check naming it.
"""

from __future__ import annotations

import math
import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, excerpt


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
NO_NE = ("=", "==", "===", "<", ">", "<=", ">=")


def compare(op, actual, expected, allowed=tuple(_OPS)):
    if op not in allowed:
        raise ConditionError("unsupported operator %s" % excerpt(op))
    return _OPS[op](actual, expected)


def go_int(text):
    try:
        return int(text, 10)
    except (TypeError, ValueError):  # a literal of more than 4300 digits too (Python 3.11's limit)
        raise ConditionError("%s is not an integer" % excerpt(text)) from None


def tokens(when, count):
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
        return compare(op, data.get("machineArch"), value, ("=", "==", "===", "!=", "!=="))
    counts = {"logical": data.get("logicalCount") or 0, "physical": data.get("physicalCount") or 0}
    counts["count"] = max(counts.values())
    if subject not in counts:
        raise ConditionError("unknown cpu subject %s" % excerpt(subject))
    return compare(op, counts[subject], go_int(value))


def _memory(when, data):
    op, value = tokens(when, 2)
    return compare(op, int(data.get("total") or 0), quantity(value), NO_NE)


def _disk_usage(when, data):
    stat, op, value = tokens(when, 3)
    total, used = int(data.get("total_bytes") or 0), int(data.get("used_bytes") or 0)
    stat = stat.lower()
    if stat in ("total", "used", "available"):
        actual = {"total": total, "used": used, "available": total - used}[stat]
        return compare(op, actual, quantity(value), NO_NE)
    if stat in ("used/total", "available/total"):
        ratio = (used if stat == "used/total" else total - used) / float(total) if total else 0.0
        try:
            expected = float(value[:-1]) / 100.0 if value.endswith("%") else float(value)
        except ValueError:
            raise ConditionError("%s is not a ratio or percentage" % excerpt(value)) from None
        return compare(op, ratio, expected, NO_NE)
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
    return any(all(compare(op, actual, _version(ver)) for op, ver in group) for group in ors)


def _host_services(when, data):
    service, op, state = tokens(when, 3)
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
    keyword, op, value = tokens(when, 3)
    if keyword == "timezone":
        return compare(op, data.get("timezone"), value, ("=", "==", "===", "!="))
    if keyword == "ntp":
        states = {"%s+%s" % (s, a) for s in ("synchronized", "unsynchronized") for a in ("active", "inactive")}
        if value not in states:
            raise ConditionError("unknown ntp state %s" % excerpt(value))
        actual = "%s+%s" % ("synchronized" if data.get("ntp_synchronized") else "unsynchronized",
                            "active" if data.get("ntp_active") else "inactive")
        return compare(op, actual, value, ("=", "==", "==="))
    raise ConditionError("unknown time keyword %s" % excerpt(keyword))


def _status(when, data):
    status = data.get("status") if isinstance(data, dict) else str(data or "").strip()
    return when == status


def _http(when, data):
    if when == "error":
        return "error" in data
    _kw, op, value = tokens(when, 3)
    if _kw != "statusCode":
        raise ConditionError("expected 'error' or 'statusCode <op> <code>': %s" % excerpt(when))
    response = data.get("response")
    return bool(response) and compare(op, int(response.get("status") or 0), go_int(value), ("=", "==", "==="))


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
    job = next((j for j in mapping_or_empty(data).get("jobs") or [] if mapping_or_empty(j).get("jobname") == "fsperf"), None)
    lat = mapping_or_empty(mapping_or_empty(mapping_or_empty(job).get("sync")).get("lat_ns"))
    if not lat:
        raise ConditionError("no fdatasync latencies of the fio job fsperf in the result")
    out = {"min": lat.get("min"), "max": lat.get("max"), "average": lat.get("mean")}
    pct = mapping_or_empty(lat.get("percentile"))
    out.update({k: pct.get(v) for k, v in PERCENTILES.items()})
    return out


def _fs_performance(when, data):
    if when == "fileNotCollected":
        return False
    keyword, op, value = tokens(when, 3)
    latencies = fsperf_latencies(data)
    if keyword.lower() not in latencies or latencies[keyword.lower()] is None:
        raise ConditionError("unknown latency %s" % excerpt(keyword))
    return compare(op, float(latencies[keyword.lower()]), duration_ns(value), NO_NE)


def _kernel_modules(when, data):
    modules, op, statuses = tokens(when, 3)
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
    return compare(op, go_int(str(data[name]).strip()), go_int(value.strip()))


def _subnet_contains(when, data):
    if when not in ("true", "false"):
        raise ConditionError("expected true or false: %s" % excerpt(when))
    return bool(data.get("contains")) == (when == "true")


def _ipv4_interfaces(when, data):
    keyword, op, value = tokens(when, 3)
    if keyword != "count":
        raise ConditionError("expected 'count <op> <n>': %s" % excerpt(when))
    return compare(op, len(data or []), go_int(value), NO_NE)


CHECKS = {
    "cpu": _cpu, "memory": _memory, "diskUsage": _disk_usage, "hostOS": _host_os, "hostServices": _host_services,
    "time": _time, "tcpPortStatus": _status, "udpPortStatus": _status, "tcpConnect": _status,
    "tcpLoadBalancer": _status, "subnetAvailable": _status, "certificate": _status, "http": _http,
    "filesystemPerformance": _fs_performance, "kernelModules": _kernel_modules, "sysctl": _sysctl,
    "subnetContainsIP": _subnet_contains, "ipv4Interfaces": _ipv4_interfaces,
}


# Collector -> the type of its result (the rest are mappings); a result of another type fails the check.
RESULT_TYPES = {"hostServices": list, "ipv4Interfaces": list, "tcpPortStatus": (dict, str), "udpPortStatus": (dict, str),
                "tcpConnect": (dict, str), "tcpLoadBalancer": (dict, str), "subnetAvailable": (dict, str),
                "certificate": (dict, str)}


def mapping_or_empty(value):
    """``value`` if it is a mapping, else an empty one (a nested part of a result read leniently)."""
    return value if isinstance(value, dict) else {}
