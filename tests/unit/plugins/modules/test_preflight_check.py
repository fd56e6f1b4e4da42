# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight_check module run as Ansible runs it: a subprocess given its arguments file.

Host scope really gathers on the machine running the test (read-only).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MODULE = Path(__file__).resolve().parents[4] / "plugins" / "modules" / "preflight_check.py"


def run_module(tmp_path, args):
    f = tmp_path / "args.json"
    f.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    proc = subprocess.run([sys.executable, str(MODULE), str(f)], capture_output=True, text=True, timeout=120,
                          check=False)
    return json.loads(proc.stdout)


def facts(hostname, machine_id):
    return {"hostname": hostname, "machine_id": machine_id, "cpus": 8, "memory_mb": 32000, "swap_mb": 0,
            "disks": {}, "listening": {}, "kernel": {"bridge_netfilter": True, "overlayfs": True},
            "cgroup": "v2", "init": "systemd", "systemd": True, "time_sync": True,
            "distribution": {"id": "debian", "version_id": "12"}, "reach": {}}


def test_host_scope_gathers_this_machine_read_only(tmp_path):
    out = run_module(tmp_path, {"roles": ["workers"], "peers": {"self": "127.0.0.1"}, "peer_port": 1})
    assert out.get("failed") is not True, out
    assert out["changed"] is False
    assert out["roles"] == ["workers"]
    assert out["facts"]["hostname"] == Path("/proc/sys/kernel/hostname").read_text().strip()
    assert out["facts"]["reach"]["self"]["ok"] is False  # nothing listens on port 1
    checks = {r["check"] for r in out["checks"]}
    assert {"cpu", "memory", "disk", "swap", "ports", "distribution"} <= checks


def test_inventory_scope_reports_duplicate_machine_id(tmp_path):
    hosts = {
        "h1": {"facts": facts("h1", "a" * 32), "checks": []},
        "h2": {"facts": facts("h2", "a" * 32), "checks": []},
        "h3": {"unreachable": True, "msg": "Failed to connect"},
    }
    out = run_module(tmp_path, {"scope": "inventory", "hosts": hosts})
    assert out["changed"] is False and out["passed"] is False
    got = {(f["host"], f["check"]) for f in out["failures"]}
    assert got == {("h1", "machine_id"), ("h2", "machine_id"), ("h3", "reachability")}
    assert any(line.startswith("h1 machine_id: machine-id aaaaaaaaaaaa is also used by h2")
               for line in out["failure_lines"])
    assert out["report_lines"][-1] == out["summary"] == "preflight: 3 host(s), 3 failure(s), 0 warning(s)"


def test_bad_settings_fail_naming_the_field(tmp_path):
    out = run_module(tmp_path, {"thresholds": {"masters": {"cpus": 2}}})
    assert out["failed"] is True
    assert "thresholds: unknown role 'masters'" in out["msg"]


HOST_PREFLIGHT = {
    "apiVersion": "troubleshoot.sh/v1beta2", "kind": "HostPreflight", "metadata": {"name": "ours"},
    "spec": {
        "collectors": [{"cpu": {}}, {"memory": {}}, {"blockDevices": {}}],
        "analyzers": [
            {"cpu": {"checkName": "A CPU at least",
                     "outcomes": [{"fail": {"when": "count < 1", "message": "none"}}, {"pass": {"message": "some"}}]}},
            {"memory": {"outcomes": [{"fail": {"when": "> 1Ei", "message": "impossible"}},
                                     {"warn": {"when": "< 1Ei", "message": "less than an exbibyte"}}]}},
        ]}}


def test_spec_scope_reads_a_file_and_names_what_mooring_does_not_run(tmp_path):
    import yaml  # pylint: disable=import-outside-toplevel
    spec = tmp_path / "preflight.yaml"
    spec.write_text(yaml.safe_dump_all([HOST_PREFLIGHT]))
    out = run_module(tmp_path, {"scope": "spec", "host_preflight_file": str(spec)})
    assert out.get("failed") is not True, out
    assert out["collectors"] == ["cpu", "memory"] and out["analyzers"] == ["cpu", "memory"]
    assert out["documents"] == [HOST_PREFLIGHT]
    assert out["unsupported"] == ["%s: collector blockDevices is not supported by mooring.cluster; not run" % spec]
    bad = dict(HOST_PREFLIGHT, kind="Preflight")
    out = run_module(tmp_path, {"scope": "spec", "host_preflight": [HOST_PREFLIGHT, bad]})
    assert out["failed"] is True and out["problems"] == [
        "host_preflight: document 2: kind: must be HostPreflight, not 'Preflight'"]
    # Documents given inline (the spec's) and in a file: each source is named, and numbered on its own.
    spec.write_text(yaml.safe_dump_all([bad]))
    out = run_module(tmp_path, {"scope": "spec", "host_preflight": [HOST_PREFLIGHT], "host_preflight_file": str(spec)})
    assert out["failed"] is True and out["problems"] == [
        "%s: document 1: kind: must be HostPreflight, not 'Preflight'" % spec]
    spec.write_text(yaml.safe_dump_all([dict(HOST_PREFLIGHT, spec={"collectors": [{"sysctl": {}}]})]))
    out = run_module(tmp_path, {"scope": "spec", "host_preflight": [HOST_PREFLIGHT], "host_preflight_file": str(spec)})
    assert out["unsupported"] == ["host_preflight: collector blockDevices is not supported by mooring.cluster; not run"]
    assert out["collectors"] == ["cpu", "memory", "sysctl"] and out["analyzers"] == ["cpu", "memory"]
    assert len(out["documents"]) == 2


def test_host_scope_runs_the_documents_beside_the_built_in_checks(tmp_path):
    out = run_module(tmp_path, {"roles": ["workers"], "host_preflight": [HOST_PREFLIGHT]})
    assert out.get("failed") is not True, out
    got = {r["check"]: (r["status"], r["message"]) for r in out["checks"]}
    assert got["A CPU at least"] == ("pass", "some")
    assert got["Amount of Memory"] == ("warn", "less than an exbibyte")
    assert "cpu" in got and "memory" in got  # the built-in checks are still there
    collected = out["host_preflight"]["collected"]
    assert collected["host-collectors/system/cpu.json"]["logicalCount"] >= 1
    assert collected["host-collectors/system/memory.json"]["total"] > 0


KURL_FILE = """apiVersion: troubleshoot.sh/v1beta2
kind: HostPreflight
metadata: {name: templated}
spec:
  collectors:
    - tcpPortStatus:
        collectorName: Kubernetes API TCP Port Status
        port: 6443
        exclude: '{{kurl and .IsPrimary (not .IsUpgrade) | not }}'
    - tcpConnect:
        collectorName: Kubernetes API TCP Connection Status
        address: {{kurl .Installer.Spec.Kubernetes.LoadBalancerAddress }}:6443
        exclude: '{{kurl not .IsJoin }}'
    - diskUsage:
        collectorName: Docker Disk Usage
        path: /var/lib/docker
        exclude: '{{kurl not .Installer.Spec.Docker.Version }}'
  analyzers:
    - tcpPortStatus:
        collectorName: Kubernetes API TCP Port Status
        outcomes:
          - pass: {message: "port {{ .Port }} free on {{kurl .Installer.Spec.Kubernetes.Version }}"}
"""


def test_spec_scope_evaluates_kurls_templates_for_each_kind_of_host_and_run(tmp_path):
    spec = tmp_path / "preflight.yaml"
    spec.write_text(KURL_FILE)
    installer = {"kubernetes": {"version": "1.33.9", "loadBalancerAddress": "10.0.0.100"}}

    def excludes(out, key):
        return [next(iter(c.values()))["exclude"] for c in out[key][0]["spec"]["collectors"]]

    out = run_module(tmp_path, {"scope": "spec", "host_preflight_file": str(spec), "installer": installer,
                                "primary_hosts": ["10.0.0.11"], "secondary_hosts": ["10.0.0.21"]})
    assert out.get("failed") is not True, out
    assert excludes(out, "documents") == ["false", "true", "true"]          # install, primary
    assert excludes(out, "documents_secondary") == ["true", "true", "true"]  # install, secondary
    tcp = out["documents"][0]["spec"]["collectors"][1]["tcpConnect"]
    assert tcp["address"] == "10.0.0.100:6443"
    message = out["documents"][0]["spec"]["analyzers"][0]["tcpPortStatus"]["outcomes"][0]["pass"]["message"]
    assert message == "port {{ .Port }} free on 1.33.9"  # troubleshoot's own template left for it
    join = run_module(tmp_path, {"scope": "spec", "host_preflight_file": str(spec), "installer": installer, "run": "join"})
    assert excludes(join, "documents") == ["false", "false", "true"]
    upgrade = run_module(tmp_path, {"scope": "spec", "host_preflight_file": str(spec), "installer": installer, "run": "upgrade"})
    assert excludes(upgrade, "documents")[0] == "true"
    spec.write_text(KURL_FILE.replace("{{kurl not .IsJoin }}", "{{kurl nosuchfunc .IsJoin }}"))
    bad = run_module(tmp_path, {"scope": "spec", "host_preflight_file": str(spec)})
    assert bad["failed"] is True and str(spec) in bad["msg"] and "nosuchfunc" in bad["msg"]
