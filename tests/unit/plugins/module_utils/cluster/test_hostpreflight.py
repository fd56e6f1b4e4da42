# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""troubleshoot.sh HostPreflight documents and their analyzers, over results shaped as troubleshoot's host
collectors write them (paths and JSON as upstream)."""

from __future__ import annotations

import time

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostanalyze as ha
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostconditions as hc
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostpreflight as hp

DOC = yaml.safe_load("""
apiVersion: troubleshoot.sh/v1beta2
kind: HostPreflight
metadata: {name: ours}
spec:
  collectors:
    - cpu: {}
    - memory: {}
    - diskUsage: {collectorName: ephemeral, path: /var/lib/kubelet}
    - tcpPortStatus: {collectorName: kubelet, port: 10250}
    - blockDevices: {}
    - time: {exclude: "true"}
  analyzers:
    - cpu:
        checkName: At least 2 CPUs
        outcomes:
          - fail: {when: "count < 2", message: needs 2}
          - pass: {message: enough}
    - memory:
        outcomes:
          - fail: {when: "< 4G", message: too little}
          - warn: {when: "< 8Gi", message: little}
          - pass: {message: plenty}
    - diskUsage:
        collectorName: ephemeral
        outcomes:
          - fail: {when: "used/total > 80%", message: full}
          - warn: {when: "available < 30Gi", message: small}
          - pass: {message: ok}
    - tcpPortStatus:
        collectorName: kubelet
        outcomes:
          - fail: {when: address-in-use, message: in use}
          - pass: {when: connected, message: free}
    - blockDevices:
        outcomes: [{pass: {}}]
""")
COLLECTED = {
    "host-collectors/system/cpu.json": {"logicalCount": 2, "physicalCount": 1, "machineArch": "x86_64",
                                        "flags": ["fpu", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2", "syscall",
                                                  "cx16", "lahf_lm", "popcnt", "ssse3", "sse4_1", "sse4_2"]},
    "host-collectors/system/memory.json": {"total": 6 * 2 ** 30},
    "host-collectors/diskUsage/ephemeral.json": {"total_bytes": 100 * 2 ** 30, "used_bytes": 85 * 2 ** 30},
    "host-collectors/tcpPortStatus/kubelet.json": {"status": "address-in-use", "message": "bind: address already in use"},
}


def test_a_document_runs_what_mooring_supports_and_names_the_rest_once():
    plan = hp.load(DOC)
    assert [k for k, _s in plan["collectors"]] == ["cpu", "memory", "diskUsage", "tcpPortStatus"]  # time excluded
    assert [k for k, _s in plan["analyzers"]] == ["cpu", "memory", "diskUsage", "tcpPortStatus"]
    assert plan["warnings"] == ["preflight_spec: collector blockDevices is not supported by mooring.cluster; not run",
                                "preflight_spec: analyzer blockDevices is not supported by mooring.cluster; not run"]
    assert hp.result_path("diskUsage", {"collectorName": "ephemeral"}) == "host-collectors/diskUsage/ephemeral.json"
    assert hp.result_path("cpu", {"collectorName": "x"}) == "host-collectors/system/cpu.json"


def test_each_check_gets_troubleshoots_outcome():
    results = ha.analyze_all(hp.load(DOC), COLLECTED)
    assert [(r["check"], r["outcome"], r["message"]) for r in results] == [
        ("At least 2 CPUs", "pass", "enough"),
        ("Amount of Memory", "warn", "little"),          # 6 GiB: not < 4G (10^9), but < 8Gi
        ("Disk Usage", "fail", "full"),                  # 85 % used
        ("TCP Port Status", "fail", "in use"),
    ]


@pytest.mark.parametrize("doc, problem", [
    ({"apiVersion": "troubleshoot.sh/v1beta1", "kind": "HostPreflight", "spec": {}},
     "apiVersion: must be troubleshoot.sh/v1beta2, not 'troubleshoot.sh/v1beta1'"),
    ({"apiVersion": hp.API_VERSION, "kind": hp.KIND, "spec": {"collectors": [{"cpu": {}, "memory": {}}]}},
     "spec.collectors[0]: must be a mapping with exactly one key (the collector type), not {"),
    ({"apiVersion": hp.API_VERSION, "kind": hp.KIND, "spec": {"analyzers": [{"cpu": {"outcomes": []}}]}},
     "spec.analyzers[0].cpu.outcomes: must be a non-empty list of fail/warn/pass outcomes, not []"),
    ({"apiVersion": hp.API_VERSION, "kind": hp.KIND, "spec": {"analyzers": [{"cpu": {"outcomes": [{"maybe": {}}]}}]}},
     "spec.analyzers[0].cpu.outcomes[0]: must be one of fail, warn, pass with when/message/uri, not {'maybe': {}}"),
    ("text", "document 2: must be a mapping, not a string"),
])
def test_a_malformed_document_is_one_clear_error(doc, problem):
    with pytest.raises(hp.HostPreflightError) as err:
        hp.load([DOC, doc])
    assert len(err.value.problems) == 1 and problem in err.value.problems[0]
    assert err.value.problems[0].startswith("preflight_spec: document 2")


def test_every_malformed_item_is_listed_in_one_style():
    doc = {"apiVersion": hp.API_VERSION, "kind": hp.KIND,
           "spec": {"collectors": [{"cpu": 3}, {"memory": {}}], "analyzers": "cpu"}}
    with pytest.raises(hp.HostPreflightError) as err:
        hp.load([doc, {"apiVersion": hp.API_VERSION, "kind": hp.KIND, "spec": []}])
    assert err.value.problems == [
        "preflight_spec: document 1: spec.collectors[0].cpu: must be a mapping, not a number",
        "preflight_spec: document 1: spec.analyzers: must be a list, not a string",
        "preflight_spec: document 2: spec: must be a mapping, not a list",
    ]


@pytest.mark.parametrize("text, value", [("4G", 4 * 10 ** 9), ("4Gi", 4 * 2 ** 30), ("1e9", 10 ** 9), ("512", 512),
                                         ("1.5Ki", 1536)])
def test_quantities_are_kubernetes_quantities(text, value):
    assert hc.quantity(text) == value


def analyzer(kind, when, collected, **spec):
    outcomes = [{"fail": {"when": when, "message": "hit"}}]
    return ha.analyze(kind, dict(spec, outcomes=outcomes), collected)


@pytest.mark.parametrize("when, hit", [
    ("count < 3", True), ("< 2", False), ("logical >= 2", True), ("physical == 1", True),
    ("supports x86-64-v2", True), ("supports x86-64-v3", False), ("hasFlags sse4_2,popcnt", True),
    ("hasFlags avx2", False), ("machineArch == x86_64", True), ("machineArch != aarch64", True),
])
def test_cpu_conditions(when, hit):
    assert (analyzer("cpu", when, COLLECTED) is not None) == hit


@pytest.mark.parametrize("kind, when, data, hit", [
    ("diskUsage", "available < 16Gi", {"total_bytes": 100 * 2 ** 30, "used_bytes": 85 * 2 ** 30}, True),
    ("diskUsage", "available/total < 0.1", {"total_bytes": 100, "used_bytes": 85}, False),
    ("time", "ntp == unsynchronized+inactive", {"timezone": "UTC", "ntp_synchronized": False, "ntp_active": False}, True),
    ("time", "timezone != UTC", {"timezone": "UTC"}, False),
    ("http", "error", {"error": {"message": "connection refused"}}, True),
    ("http", "statusCode == 200", {"response": {"status": 200, "body": "ok"}}, True),
    ("http", "statusCode == 200", {"response": {"status": 503}}, False),
    ("hostOS", "ubuntu >= 20.04 && < 23", {"platform": "ubuntu", "platformFamily": "debian", "platformVersion": "22.04"}, True),
    ("hostOS", "debian < 12 || >= 13", {"platform": "debian", "platformFamily": "debian", "platformVersion": "12"}, False),
    ("hostOS", "centos >= 7", {"platform": "debian", "platformFamily": "debian", "platformVersion": "12"}, False),
    ("kernelModules", "br_netfilter,overlay = loaded,loadable", {"br_netfilter": {"status": "loadable"},
                                                                 "overlay": {"status": "loaded"}}, True),
    ("kernelModules", "ip_vs != loaded", {"br_netfilter": {"status": "loaded"}}, True),
    ("sysctl", "net.ipv4.ip_forward = 0", {"net.ipv4.ip_forward": "0"}, True),
    ("sysctl", "fs.inotify.max_user_instances < 1024", {"fs.inotify.max_user_instances": "128"}, True),
    ("ipv4Interfaces", "count == 0", [], True),
    ("hostServices", "ufw = active", [{"Unit": "ufw.service", "Load": "loaded", "Active": "active", "Sub": "exited"}], True),
    ("hostServices", "firewalld != inactive,dead", [{"Unit": "firewalld.service", "Active": "inactive", "Sub": "dead"}], False),
    ("subnetAvailable", "no-subnet-available", {"status": "no-subnet-available"}, True),
    ("certificate", "key-pair-mismatch", "key-pair-mismatch\n", True),
])
def test_conditions_of_each_analyzer(kind, when, data, hit):
    path = hp.result_path(hp.ANALYZERS[kind][0], {})
    assert (analyzer(kind, when, {path: data}) is not None) == hit


def test_filesystem_performance_reads_fios_fdatasync_percentiles():
    lat = {"min": 100000, "max": 40000000, "mean": 2000000, "percentile": {"99.000000": 12000000}}
    fio = {"jobs": [{"jobname": "fsperf", "sync": {"lat_ns": lat}}]}
    path = "host-collectors/filesystemPerformance/filesystemPerformance.json"
    assert analyzer("filesystemPerformance", "p99 > 10ms", {path: fio})["outcome"] == "fail"
    assert analyzer("filesystemPerformance", "average > 10ms", {path: fio}) is None
    missing = ha.analyze("filesystemPerformance", {"outcomes": [{"warn": {"when": "fileNotCollected", "message": "no fio"}},
                                                                {"pass": {}}]}, {})
    assert missing["outcome"] == "warn" and missing["message"] == "no fio"


def test_a_when_that_does_not_parse_fails_the_check_and_a_missing_result_too():
    bad = analyzer("memory", "!= 4G", COLLECTED)
    assert bad["outcome"] == "fail" and bad["message"] == "Analyzer Failed: unsupported operator '!='"
    gone = analyzer("memory", "< 4G", {})
    assert gone["message"] == "Analyzer Failed: the memory collector's result was not collected"


def test_text_analyze_over_a_run_collectors_output():
    collected = {"host-collectors/run-host/ping.txt": "3 packets transmitted, 3 received, 0% packet loss\n"}
    regex = {"collectorName": "host-collectors/run-host", "fileName": "ping.txt", "regex": "100% packet loss",
             "outcomes": [{"fail": {"when": "true", "message": "lost"}}, {"pass": {"when": "false", "message": "fine"}}]}
    assert ha.analyze("textAnalyze", regex, collected)["message"] == "fine"
    groups = {"fileName": "host-collectors/run-host/ping.txt", "regexGroups": r"(?P<Loss>\d+)% packet loss",
              "outcomes": [{"fail": {"when": "Loss > 5", "message": "lossy"}}, {"pass": {"message": "ok"}}]}
    assert ha.analyze("textAnalyze", groups, collected)["message"] == "ok"
    none = dict(regex, fileName="other.txt")
    assert ha.analyze("textAnalyze", none, collected) == {"check": "Regular Expression", "outcome": "warn",
                                                          "message": "No matching files", "uri": ""}
    assert ha.analyze("textAnalyze", dict(none, ignoreIfNoFiles=True), collected) is None


def test_json_compare_over_the_cgroups_collector():
    collected = {"host-collectors/system/cgroups.json": {"cgroup-enabled": True, "cgroup-v2": {"enabled": True},
                                                         "allControllers": ["memory", "cpu"]}}
    spec = {"fileName": "host-collectors/system/cgroups.json", "path": "cgroup-v2.enabled", "value": "true",
            "outcomes": [{"fail": {"when": "false", "message": "v1"}}, {"pass": {"when": "true", "message": "v2"}}]}
    assert ha.analyze("jsonCompare", spec, collected)["message"] == "v2"
    order = dict(spec, path="allControllers", value='["cpu", "memory"]')
    assert ha.analyze("jsonCompare", order, collected)["message"] == "v2"  # lists compare in any order


# ------------------------------------------------------------------------------------------ Go's regexp, bounded input


def text_analyzer(mode, pattern, content, path="host-collectors/run-host/out.txt"):
    spec = {"fileName": path, mode: pattern,
            "outcomes": [{"fail": {"when": "true", "message": "matched"}}, {"pass": {"when": "false", "message": "clean"}}]}
    if mode == "regexGroups":
        spec["outcomes"] = [{"fail": {"when": "Word == aaaa", "message": "matched"}}, {"pass": {"message": "clean"}}]
    return ha.analyze("textAnalyze", spec, {path: content})


@pytest.mark.parametrize("mode", ["regex", "regexGroups"])
def test_a_pattern_that_backtracks_for_minutes_in_python_takes_milliseconds(mode):
    start = time.process_time()
    hostile = text_analyzer(mode, r"^(?P<Word>\w+\s?)*$", "a" * 31 + "!")       # the case: re ran past 30 s
    long = text_analyzer(mode, r"^(?P<Word>\w+\s?)*$", "a" * 20000 + "!")
    assert time.process_time() - start < 5.0
    assert hostile["message"] == long["message"] == "clean"
    assert text_analyzer(mode, r"(?P<Word>a+)$", "aaaa")["message"] == "matched"


@pytest.mark.parametrize("mode", ["regex", "regexGroups"])
def test_a_pattern_go_refuses_fails_the_check_with_one_line(mode):
    result = text_analyzer(mode, r"(?P<Word>a)(?=b)", "ab")
    assert result["outcome"] == "fail"
    assert result["message"] == ("Analyzer Failed: regex `(?P<Word>a)(?=b)`: lookahead (?=...) is not RE2 syntax "
                                 "(troubleshoot's Go regexp refuses it too)")
    assert text_analyzer(mode, 404, "404")["message"] == "Analyzer Failed: regex must be a string, not int"


def test_text_analyze_reads_gos_dollar_and_a_bounded_text():
    assert text_analyzer("regex", "ok$", "ok\n")["message"] == "clean"            # Go: $ is the end of the text
    assert text_analyzer("regex", "(?m)ok$", "ok\n")["message"] == "matched"
    big = text_analyzer("regex", "x", "a" * (1024 * 1024 + 1))
    assert big["message"] == ("Analyzer Failed: host-collectors/run-host/out.txt: text of 1048577 characters is longer "
                              "than the 1048576 a regex searches")


@pytest.mark.parametrize("kind, when, data, message", [
    ("memory", "< 1e999", {"total": 4}, "could not parse quantity '1e999' (out of range)"),
    ("diskUsage", "available < 1e999Gi", {"total_bytes": 10, "used_bytes": 1}, "could not parse quantity '1e999Gi' (out of range)"),
    ("cpu", "count < " + "9" * 5000, COLLECTED["host-collectors/system/cpu.json"], "'99999999999"),
    ("hostServices", "ufw = active", ["ufw.service loaded active running"],
     "the hostServices result must be a list of units (mappings of Unit, Load, Active, Sub)"),
    ("hostServices", "ufw = active", {"ufw.service": "active"}, "the hostServices collector's result is dict, not a list"),
    ("cpu", "count < 2", "four", "the cpu collector's result is str, not a mapping as troubleshoot writes it"),
    ("kernelModules", "overlay = loaded", {"overlay": "loaded"}, "must map each module to {size, instances, status}"),
    ("filesystemPerformance", "p99 > 10ms", {"jobs": ["fsperf"]}, "no fdatasync latencies of the fio job fsperf in the result"),
])
def test_input_past_a_range_or_of_the_wrong_shape_fails_the_check_with_one_line(kind, when, data, message):
    path = hp.result_path(hp.ANALYZERS[kind][0], {})
    result = analyzer(kind, when, {path: data})
    assert result["outcome"] == "fail" and result["message"].startswith("Analyzer Failed: ")
    assert message in result["message"] and "\n" not in result["message"] and len(result["message"]) < 300


def test_json_nested_too_deeply_fails_the_check_not_the_run():
    deep = "[" * 100000 + "]" * 100000
    path = "host-collectors/run-host/deep.txt"
    spec = {"fileName": path, "path": "a", "value": "1", "outcomes": [{"pass": {"when": "true", "message": "same"}}]}
    message = "Analyzer Failed: the collected result or the value is nested too deeply"
    assert ha.analyze("jsonCompare", spec, {path: deep})["message"] == message
    nested = {}
    for _k in range(100000):
        nested = {"a": nested}
    assert ha.analyze("jsonCompare", dict(spec, value=nested), {path: "{}"})["message"] == message
    assert text_analyzer("regex", "a", nested)["message"] == message
