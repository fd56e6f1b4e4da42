# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile HostPreflight analyzers (ids ``preflight-``, entries.py ``preflight``) and host collectors with hostile
parameters or a hostile fake root (ids ``collect-``, entries.py ``collect``; no program is ever started).

An analyzer over input that does not fit (a quantity past the float range, a result of the wrong shape, JSON
nested 100000 deep, a pattern Go's regexp refuses, a text over the 1 MiB a regex searches) is handled: exit 0 and
one ``FAIL <check>: Analyzer Failed: <the problem>`` line of bounded length; a pattern that backtracks for hours in
Python's ``re`` gives its verdict within the harness's CPU bound. A spec that cannot be loaded at all is exit 1
with one line. A collector whose parameter does not fit is one ``ERROR <type> <name>: <field>: why`` line, before
anything is written; a FIFO, /dev/zero or an oversized file where a file is read is refused unread, and nothing is
read or written outside the fake root. The analyzers' and collectors' own behaviour is tested in
tests/unit/plugins/module_utils/cluster/test_hostpreflight.py, test_hostcollect.py and common/test_linre.py.
"""

from __future__ import annotations

import json
import os
import re

from .harness import Case

MIB = 1024 * 1024
OUT = "host-collectors/run-host/out.txt"
DEEP = "[" * 100000 + "]" * 100000          # JSON nested 100000 deep (json.loads recurses once per level)
REGEX_OUTCOMES = [{"fail": {"when": "true", "message": "matched"}}, {"pass": {"when": "false", "message": "no match"}}]
GROUP_OUTCOMES = [{"fail": {"when": "Word == aaaa", "message": "matched"}}, {"pass": {"message": "no match"}}]


def hostpreflight(analyzers=(), collectors=()):
    """A HostPreflight document as JSON text (YAML reads JSON)."""
    return json.dumps({"apiVersion": "troubleshoot.sh/v1beta2", "kind": "HostPreflight", "metadata": {"name": "bad"},
                       "spec": {"collectors": list(collectors), "analyzers": list(analyzers)}}) + "\n"


def _preflight(name, analyzer, collected, result, text=None):
    """One analyzer over ``collected`` (a mapping, dumped as JSON, or ``text``): exit 0, and its result is the one
    line ``result`` (a regex) after the plan's count."""
    files = {"hp.yaml": hostpreflight([analyzer]), "collected.json": text if text is not None else json.dumps(collected, ensure_ascii=False)}
    return Case("preflight-" + name, ["{work}/hp.yaml", "{work}/collected.json"], files=files, entry="preflight",
                exit=(0,), stdout=r"\A0 collectors, 1 analyzers\n%s\n\Z" % result, stderr=r"\A\Z")


def _failed(title, problem):
    """The line of a check that failed on its input: ``problem`` is a regex, the whole line under 300 characters."""
    return r"(?=[^\n]{0,300}\n)FAIL %s: Analyzer Failed: %s" % (re.escape(title), problem)


def _when(kind, when, data, problem, title):
    """``kind``'s analyzer with one ``when`` over ``data`` at its collector's default result path."""
    paths = {"memory": "system/memory.json", "diskUsage": "diskUsage/diskUsage.json", "cpu": "system/cpu.json",
             "hostServices": "system/systemctl_services.json", "kernelModules": "system/kernel_modules.json",
             "filesystemPerformance": "filesystemPerformance/filesystemPerformance.json",
             "sysctl": "system/sysctl.json", "hostOS": "system/hostos_info.json"}
    analyzer = {kind: {"outcomes": [{"fail": {"when": when, "message": "bad host"}}, {"pass": {"message": "good host"}}]}}
    return analyzer, {"host-collectors/" + paths[kind]: data}, _failed(title, problem)


def _text(mode, pattern, text, verdict):
    """textAnalyze in ``mode`` (regex or regexGroups) with ``pattern`` over one file holding ``text``."""
    analyzer = {"textAnalyze": {"fileName": OUT, mode: pattern,
                                "outcomes": REGEX_OUTCOMES if mode == "regex" else GROUP_OUTCOMES}}
    return analyzer, {OUT: text}, verdict


def _refused(pattern, problem, mode="regex"):
    """A pattern refused: the line quotes it as Go does (cut to 60 characters) and names the problem."""
    shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
    return _text(mode, pattern, "aaaa", _failed("Regular Expression", "regex `%s`: %s[^\n]*" % (re.escape(shown), problem)))


MATCHED = "FAIL Regular Expression: matched"
NO_MATCH = "PASS Regular Expression: no match"
NESTED = _failed("JSON Compare", re.escape("the collected result or the value is nested too deeply"))
DEEP_FILE = {"fileName": "host-collectors/run-host/deep.txt", "path": "a", "value": "1",
             "outcomes": [{"pass": {"when": "true", "message": "same"}}, {"warn": {"when": "false", "message": "differs"}}]}
CPU = {"logicalCount": 4, "physicalCount": 2, "flags": ["sse2"], "machineArch": "x86_64"}
FSPERF = {"jobs": [{"jobname": "fsperf", "sync": {"lat_ns": {"min": 1, "max": 9, "mean": 5, "percentile": {"99.000000": 9}}}}]}
# The issue's pattern: Python's re runs past 30 s over 31 word characters and a '!', doubling with each more.
ISSUE = r"^(\w+\s?)*$"
ISSUE_GROUPS = r"^(?P<Word>\w+\s?)*$"
# A line of word characters and a '!' as long as the collected file's 1 MiB bound lets it be.
LINE = "a" * (MIB - len(json.dumps({OUT: ""})) - 1) + "!"
# A text past the 1 MiB a regex searches, from a file of a third of that: a mapping is searched as its JSON, and
# each 'é' of it is six characters there ("\u00e9").
WIDE = {"k": "\u00e9" * 180000}
# A result read as its JSON, whose one 200,000-character string YAML aliases 999 times (1.2 GB once dumped).
ALIASED = "x: &s \"%s\"\n%s: [%s]\n" % ("\u00e9" * 200000, OUT, ", ".join(["*s"] * 999))

ANALYZERS = [
    # quantities and numbers past every range
    ("memory-when-1e999", *_when("memory", "< 1e999", {"total": 4}, re.escape("could not parse quantity '1e999' (out of range)"),
                                 "Amount of Memory")),
    ("disk-when-1e999Gi", *_when("diskUsage", "available < 1e999Gi", {"total_bytes": 10, "used_bytes": 1},
                                 re.escape("could not parse quantity '1e999Gi' (out of range)"), "Disk Usage")),
    ("memory-when-1e300Ei", *_when("memory", ">= 1e300Ei", {"total": 4}, re.escape("could not parse quantity '1e300Ei' (out of range)"),
                                   "Amount of Memory")),
    ("cpu-when-5000-digits", *_when("cpu", "count < " + "9" * 5000, CPU, r"'9{60,80}\.\.\. is not an integer", "Number of CPUs")),
    ("hostos-when-5000-digit-version", *_when("hostOS", "ubuntu >= " + "9" * 5000, {"platform": "ubuntu", "platformVersion": "22.04"},
                                              re.escape("Exceeds the limit (4300 digits) for integer string conversion") + r"[^\n]*",
                                              "Host OS Info")),
    # a when of 50,000 parts: the message quotes it, bounded
    ("memory-when-50000-parts", *_when("memory", "< " + "1 " * 50000, {"total": 4}, r"expected 2 space-separated parts, got '< 1 1 1[ 1]*\.\.\.",
                                       "Amount of Memory")),
    # a when that makes Python's re backtrack quadratically (its value's spaces and newlines overlap \s+ and .+)
    ("sysctl-when-backtracks", *_when("sysctl", "net.ipv4.ip_forward =" + " " * 100000 + "\n\n", {"net.ipv4.ip_forward": "1"},
                                      r"expected '<parameter> <op> <value>': [^\n]*", "Sysctl")),
    # collected results of the wrong shape or type
    ("services-of-strings", *_when("hostServices", "ufw = active", ["ufw.service loaded active running"],
                                   re.escape("the hostServices result must be a list of units (mappings of Unit, Load, Active, Sub)"),
                                   "Host Services")),
    ("services-a-mapping", *_when("hostServices", "ufw = active", {"ufw.service": "active"},
                                  re.escape("the hostServices collector's result is dict, not a list as troubleshoot writes it"),
                                  "Host Services")),
    ("cpu-result-a-string", *_when("cpu", "count < 2", "four",
                                   re.escape("the cpu collector's result is str, not a mapping as troubleshoot writes it"),
                                   "Number of CPUs")),
    ("modules-of-strings", *_when("kernelModules", "overlay = loaded", {"overlay": "loaded"},
                                  re.escape("the kernelModules result must map each module to {size, instances, status}"),
                                  "Kernel Modules")),
    ("fsperf-jobs-of-strings", *_when("filesystemPerformance", "p99 > 10ms", {"jobs": ["fsperf"]},
                                      re.escape("no fdatasync latencies of the fio job fsperf in the result"), "Filesystem Performance")),
    # a duration past Go's range (about 292 years): troubleshoot's ParseDuration refuses it
    ("fsperf-when-huge-duration", *_when("filesystemPerformance", "p99 > %sh" % ("9" * 400), FSPERF, r"'9{20,80}\.\.\. is not a duration: out of range",
                                         "Filesystem Performance")),
    # JSON nested 100000 deep: in the collected file, and in the value
    ("json-collected-deep", {"jsonCompare": DEEP_FILE}, {DEEP_FILE["fileName"]: DEEP}, NESTED),
    ("json-value-deep", {"jsonCompare": dict(DEEP_FILE, value=DEEP)}, {DEEP_FILE["fileName"]: "{}"}, NESTED),
    ("json-collected-not-json", {"jsonCompare": DEEP_FILE}, {DEEP_FILE["fileName"]: "[" * 500 + "x"},
     _failed("JSON Compare", re.escape("host-collectors/run-host/deep.txt is not JSON"))),
    # patterns that backtrack catastrophically in Python's re: the verdict, within the CPU bound
    ("regex-issue-31-bytes", *_text("regex", ISSUE, "a" * 30 + "!", NO_MATCH)),
    ("regex-groups-issue-31-bytes", *_text("regexGroups", ISSUE_GROUPS, "a" * 30 + "!", NO_MATCH)),
    ("regex-issue-1MiB-line", *_text("regex", ISSUE, LINE, NO_MATCH)),
    ("regex-groups-issue-1MiB-line", *_text("regexGroups", ISSUE_GROUPS, LINE, NO_MATCH)),
    ("regex-star-of-star", *_text("regex", r"(a*)*b", "a" * 100000 + "!b", MATCHED)),
    ("regex-alternation-plus", *_text("regex", r"^(a|aa)+$", "a" * 100000 + "b", NO_MATCH)),
    ("regex-nested-plus", *_text("regex", r"(x+x+)+y", "x" * 100000 + "!y", NO_MATCH)),
    ("regex-repeated-dot-star", *_text("regex", r"(.*a){20}", "a" * 100000 + "b", MATCHED)),
    ("regex-groups-nested-plus", *_text("regexGroups", r"(?P<Word>(a+)+)$", "a" * 100000 + "!", NO_MATCH)),
    ("regex-groups-1MiB-match", *_text("regexGroups", r"(?P<Word>a{4})!", LINE, MATCHED)),
    # patterns Go's regexp refuses, and bounds
    ("regex-backreference", *_refused(r"(a)\1", re.escape(r"backreference \1 is not RE2 syntax"))),
    ("regex-lookahead", *_refused(r"(?=a)", re.escape("lookahead (?=...) is not RE2 syntax"))),
    ("regex-groups-lookbehind", *_refused(r"(?<=a)(?P<Word>b)", re.escape("lookbehind (?<=...) is not RE2 syntax"), "regexGroups")),
    ("regex-groups-repeat-of-repeat", *_refused(r"(?P<Word>a{1000}{1000})", "invalid nested repetition operator", "regexGroups")),
    ("regex-groups-copies-1000x1000", *_refused(r"(?P<Word>(?:a{1000}){1000})", "invalid repeat count: nested counted repeats",
                                                "regexGroups")),
    ("regex-repeat-1001", *_refused(r"a{1001}", re.escape("invalid repeat count {1001} (at most 1000, as Go)"))),
    ("regex-program-too-large", *_refused(r"\d{1000}" * 5, "more than 5000 instructions")),
    ("regex-nested-groups", *_refused("(" * 101 + ")" * 101, "groups nest more than 100 deep")),
    ("regex-too-long", *_text("regex", "x" * 16385, "aaaa", _failed("Regular Expression", "regex of 16385 characters is longer than 16384"))),
    ("regex-not-a-string", *_text("regex", 404, "404", _failed("Regular Expression", "regex must be a string, not int"))),
    ("regex-text-over-1MiB", *_text("regex", "x", WIDE, _failed("Regular Expression", re.escape(
        "%s: the result is more than 1048576 characters as JSON" % OUT)))),
    ("regex-aliased-result", {"textAnalyze": {"fileName": OUT, "regex": "x", "outcomes": REGEX_OUTCOMES}}, None,
     _failed("Regular Expression", re.escape(OUT) + r": the result is more than 1048576 characters as JSON")),
    ("filename-glob-of-stars", {"textAnalyze": {"fileName": "*a" * 3000 + "b", "regex": "a", "outcomes": REGEX_OUTCOMES}},
     {"a" * 1000: "a"}, "WARN Regular Expression: No matching files"),
]

CASES = [_preflight(name, analyzer, collected, result, ALIASED if name == "regex-aliased-result" else None)
         for name, analyzer, collected, result in ANALYZERS]
CASES += [
    # a spec that cannot be loaded, and collected results that are not a mapping: exit 1, one line
    Case("preflight-json-value-deep-yaml", ["{work}/hp.yaml", "{work}/collected.json"], entry="preflight",
         files={"hp.yaml": hostpreflight([{"jsonCompare": dict(DEEP_FILE, value="@")}]).replace('"@"', DEEP), "collected.json": "{}"},
         stderr=r"\Aerror: \S*hp\.yaml: nested deeper than 64 levels \(line 1, column \d+\)\n\Z"),
    Case("preflight-collected-a-list", ["{work}/hp.yaml", "{work}/collected.json"], entry="preflight",
         files={"hp.yaml": hostpreflight([_when("cpu", "count < 2", CPU, "", "")[0]]), "collected.json": json.dumps([CPU] * 1000)},
         stdout=r"\A0 collectors, 1 analyzers\n\Z", stderr=r"\Aerror: \S*collected\.json: the collected results must be a mapping\n\Z"),
    Case("preflight-analyzer-outcomes-a-string", ["{work}/hp.yaml"], entry="preflight",
         files={"hp.yaml": hostpreflight([{"memory": {"outcomes": "x" * 100000}}])},
         stderr=r"\Aerror: \S*hp\.yaml: document 1: spec\.analyzers\[0\]\.memory\.outcomes: must be a non-empty list of "
                r"fail/warn/pass outcomes, not 'x{70,80}\.\.\.\n\Z"),
]


# ------------------------------------------------------------------------------------------ collectors


def _fifo(rel):
    def setup(work):
        path = os.path.join(work, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.mkfifo(path)
    return setup


def _link(rel, target):
    """A symbolic link at ``rel`` to the absolute ``target`` (``{outside}`` is the case tree's sibling of work)."""
    def setup(work):
        path = os.path.join(work, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target.format(outside=os.path.join(os.path.dirname(work), "outside")), path)
    return setup


def _routes(count):
    """/proc/net/route with ``count`` host routes 10.0.0.0, 10.0.0.1, ... (little-endian hex, as the kernel)."""
    head = "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
    return head + "".join("cali%d\t%08X\t00000000\t0005\t0\t0\t0\tFFFFFFFF\t0\t0\t0\n"
                          % (i, int.from_bytes(bytes([10, 0, i >> 8, i & 255]), "little")) for i in range(count))


RELEASE = "6.1.0-bad"
FSPERF_SPEC = {"directory": "/data", "fileSize": "4Ki", "operationSize": 1024}
FS = "filesystemPerformance filesystemPerformance: "


def _collect(name, collectors, result, files=None, setup=None, count=0, raw=None, confined=False, **options):
    """``collectors`` over the fake root ``{work}/root``: exit 0, ``collected COUNT results`` and the ERROR line
    ``result`` (a regex; every line under 300 characters). ``raw`` replaces strings of the spec's JSON (a YAML value
    JSON cannot spell). A ``confined`` case reaches out of the fake root: refused with ``result``, or run as on a
    host whose root is the fake root (one result; anything it writes stays under {work}/root)."""
    spec = hostpreflight(collectors=collectors)
    for key, value in (raw or {}).items():
        spec = spec.replace(key, value)
    tree = {"hp.yaml": spec, "root/proc/sys/kernel/osrelease": RELEASE + "\n"}
    tree.update({"root/" + k: v for k, v in (files or {}).items()})
    lines = r"(?=(?:[^\n]{0,300}\n)*\Z)" + (r"ERROR %s\n" % result if result else "")
    stdout = r"\Acollected %d results\n%s\Z" % (count, lines)
    if confined:
        stdout = r"\A(?:collected 1 results\n|collected 0 results\n%s)\Z" % lines
        options["writes"] = ("{work}/root",)
    return Case("collect-" + name, ["{work}/hp.yaml", "{work}/root"], files=tree, setup=setup, entry="collect", exit=(0,),
                stdout=stdout, stderr=r"\A\Z", **options)


CASES += [
    _collect("fsperf-filesize-1e999", [{"filesystemPerformance": dict(FSPERF_SPEC, fileSize="1e999")}],
             re.escape(FS + "fileSize: could not parse quantity '1e999' (out of range)")),
    _collect("fsperf-filesize-1e300Ei", [{"filesystemPerformance": dict(FSPERF_SPEC, fileSize="1e300Ei")}],
             re.escape(FS + "fileSize: could not parse quantity '1e300Ei' (out of range)")),
    _collect("fsperf-filesize-400-digits", [{"filesystemPerformance": dict(FSPERF_SPEC, fileSize="9" * 400)}],
             re.escape(FS + "fileSize: could not parse quantity '") + r"9{70,80}\.\.\. \(out of range\)"),
    _collect("fsperf-filesize-yaml-inf", [{"filesystemPerformance": dict(FSPERF_SPEC, fileSize="@")}],
             re.escape(FS + "fileSize: could not parse quantity inf"), raw={'"@"': ".inf"}),
    _collect("fsperf-timeout-negative", [{"filesystemPerformance": dict(FSPERF_SPEC, timeout="-5s")}],
             re.escape(FS + "timeout '-5s' is not a duration (e.g. 10s, 500ms, 2m)")),
    _collect("fsperf-timeout-zero", [{"filesystemPerformance": dict(FSPERF_SPEC, timeout="0s")}],
             re.escape(FS + "timeout: must be more than 0, not '0s'")),
    # a duration past Go's range (about 292 years): troubleshoot's ParseDuration refuses it, as the analyzer's
    _collect("fsperf-timeout-400-digits", [{"filesystemPerformance": dict(FSPERF_SPEC, timeout="9" * 400 + "s")}],
             re.escape(FS + "timeout '") + r"9{20,80}[^\n]*", files={"data": None}),
    _collect("fsperf-runtime-400-digits", [{"filesystemPerformance": dict(FSPERF_SPEC, runTime=int("9" * 400))}],
             re.escape(FS) + r"runTime\b[^\n]*"),
    _collect("fsperf-operation-size-4000-digits", [{"filesystemPerformance": dict(FSPERF_SPEC, operationSize=int("9" * 4000))}],
             re.escape(FS + "operationSize: must be between 1 and 67108864, not ") + r"[^\n]{1,100}"),
    _collect("tcpconnect-timeout-overflow", [{"tcpConnect": {"address": "127.0.0.1:1", "timeout": "1e999s"}}],
             re.escape("tcpConnect connect: timeout '1e999s' is not a duration (e.g. 10s, 500ms, 2m)")),
    # a spec the YAML reader refuses: an integer of more than 4300 digits
    Case("collect-fsperf-filesize-5000-digits", ["{work}/hp.yaml", "{work}/root"], entry="collect",
         files={"hp.yaml": hostpreflight(collectors=[{"filesystemPerformance": dict(FSPERF_SPEC, fileSize="@")}]).replace(
             '"@"', "9" * 5000), "root": None},
         stderr=r"\Aerror: \S*hp\.yaml: [^\n]*4300 digits[^\n]*\n\Z"),
    # FIFOs, devices and oversized files where a file is read: refused unread
    _collect("cpuinfo-fifo", [{"cpu": {}}], r"cpu: \S*/root/proc/cpuinfo is not a regular file", setup=_fifo("root/proc/cpuinfo")),
    _collect("mountinfo-fifo", [{"cgroups": {}}], r"cgroups: \S*/root/proc/self/mountinfo is not a regular file",
             setup=_fifo("root/proc/self/mountinfo")),
    _collect("os-release-dev-zero", [{"hostOS": {}}], re.escape("hostOS: no ID in /etc/os-release"),
             setup=_link("root/etc/os-release", "/dev/zero")),
    _collect("meminfo-5MiB", [{"memory": {}}], r"memory: \S*/root/proc/meminfo is larger than 4194304 bytes; not read",
             files={"proc/meminfo": "MemTotal: 1 kB\n" + "x" * (5 * MIB)}),
    _collect("certificate-dev-zero", [{"certificate": {"certificatePath": "/pki/a.crt", "keyPath": "/pki/a.key"}}],
             r"certificate certificate: key-pair-invalid: pki/a\.crt resolves outside \S*/root", count=1,
             files={"pki/a.key": "-----BEGIN PRIVATE KEY-----\n"}, setup=_link("root/pki/a.crt", "/dev/zero")),
    # (kernelModules reads modules.builtin and modules.dep; a FIFO or device there is not read: as if missing, the
    # directory's *.ko files count)
    _collect("modules-dep-dev-zero", [{"kernelModules": {}}], None, count=1,
             files={"lib/modules/%s/modules.builtin" % RELEASE: "kernel/fs/overlay.ko\n", "proc/modules": ""},
             setup=_link("root/lib/modules/%s/modules.dep" % RELEASE, "/dev/zero")),
    # paths out of the fake root: by .. and by an absolute symbolic link
    _collect("fsperf-directory-dotdot", [{"filesystemPerformance": dict(FSPERF_SPEC, directory="/../../outside/fsperf")}],
             re.escape(FS) + r"\.\./\.\./outside/fsperf resolves outside \S*/root", confined=True),
    _collect("fsperf-directory-symlink-out", [{"filesystemPerformance": dict(FSPERF_SPEC, directory="/data/fsperf")}],
             re.escape(FS) + r"data/fsperf resolves outside \S*/root", setup=_link("root/data", "{outside}"), confined=True),
    _collect("modules-dir-symlink-to-slash", [{"kernelModules": {}}], r"kernelModules: [^\n]*",
             files={"proc/modules": ""}, setup=_link("root/lib/modules/" + RELEASE, "/"), confined=True),
    # 3000 routes in the pool: a search for a free /32 that is quadratic in the routes
    _collect("subnet-3000-routes", [{"subnetAvailable": {"CIDRRangeAlloc": "10.0.0.0/8", "desiredCIDR": 32}}], None,
             files={"proc/net/route": _routes(3000)}, count=1),
]
