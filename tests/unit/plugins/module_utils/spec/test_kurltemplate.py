# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""kURL's {{kurl ...}} host preflight templates: Go text/template subset, Sprig functions, errors."""

from __future__ import annotations

import copy
import textwrap

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import KurlTemplateError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.kurltemplate import (
    has_templates,
    render_text,
    render_tree,
    template_data,
)
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatevalues import MAX_STEPS, Budget

INSTALLER = {
    "apiVersion": "cluster.kurl.sh/v1beta1",
    "kind": "Installer",
    "metadata": {"name": "lab"},
    "spec": {
        "kubernetes": {"version": "1.29.4", "loadBalancerAddress": "10.0.0.10:6443"},
        "containerd": {"version": "1.6.33"},
        "openebs": {"version": "3.10.0", "isLocalPVEnabled": True},
        "ekco": {"version": "0.28.0", "enableInternalLoadBalancer": False},
        "rook": {"version": "1.12.8", "isBlockStorageEnabled": True, "blockDeviceFilter": "sd[b-z]"},
        "kurl": {"airgap": True, "hostPreflights": None},
    },
}
DATA = template_data(INSTALLER, primary_hosts=["10.0.0.1", "10.0.0.2"], secondary_hosts=["10.0.0.3"])


def render(text, data=None):
    return render_text(text, DATA if data is None else data)


def error_of(text, data=None, source="hp.yaml"):
    with pytest.raises(KurlTemplateError) as err:
        render_text(text, DATA if data is None else data, source)
    return str(err.value)


def test_template_data():
    data = template_data(INSTALLER, is_primary=False, is_join=True, primary_hosts=["a"], secondary_hosts=("b", "c"))
    assert data == {
        "Installer": INSTALLER, "IsPrimary": False, "IsJoin": True, "IsUpgrade": False, "IsCluster": True,
        "PrimaryHosts": ["a"], "SecondaryHosts": ["b", "c"], "RemoteHosts": ["a", "b", "c"],
    }
    alone = template_data(None, primary_hosts=["a"])
    assert (alone["Installer"], alone["IsPrimary"], alone["IsCluster"], alone["RemoteHosts"]) == ({}, True, False, ["a"])
    assert template_data(INSTALLER)["IsCluster"] is False


@pytest.mark.parametrize("text, expected", [
    # fields, Go names against JSON keys, case-insensitive
    ("{{kurl .Installer.Spec.Kubernetes.LoadBalancerAddress }}", "10.0.0.10:6443"),
    ("{{kurl .Installer.Spec.OpenEBS.Version}}", "3.10.0"),
    ("{{kurl .Installer.APIVersion}} {{kurl .Installer.ApiVersion}} {{kurl .Installer.Metadata.Name}}",
     "cluster.kurl.sh/v1beta1 cluster.kurl.sh/v1beta1 lab"),
    ("{{kurl .Installer.Spec.Rook.IsBlockStorageEnabled}} {{kurl .Installer.Spec.Ekco.EnableInternalLoadBalancer}}", "true false"),
    ("{{kurl .Installer.Spec.Kurl.Airgap}}", "true"),
    ("{{kurl .IsPrimary}} {{kurl .IsJoin}} {{kurl .IsUpgrade}} {{kurl .IsCluster}}", "true false false true"),
    ("{{kurl .RemoteHosts}} {{kurl .SecondaryHosts}}", "[10.0.0.1 10.0.0.2 10.0.0.3] [10.0.0.3]"),
    ("{{kurl (.Installer.Spec).Rook.Version}} {{kurl $.Installer.Spec.Rook.Version}}", "1.12.8 1.12.8"),
    ("{{kurl .Installer.Spec.Containerd}}", "map[version:1.6.33]"),
    # absent add-on / field: "" and false, never an error
    ("[{{kurl .Installer.Spec.Docker.Version}}]", "[]"),
    ("[{{kurl .Installer.Spec.Weave.PodCIDRRange.Deeper}}]", "[]"),
    ("[{{kurl .Installer.Spec.Kurl.HostPreflights}}]", "[]"),
    ("{{kurl not .Installer.Spec.Docker.Version}} {{kurl not .Installer.Spec.Docker}}", "true true"),
    ("{{kurl if .Installer.Spec.Docker.Version}}yes{{kurl else}}no{{kurl end}}", "no"),
    ("{{kurl len .Installer.Spec.Docker.Version}} {{kurl empty .Installer.Spec.Velero}}", "0 true"),
    ("{{kurl eq .Installer.Spec.Docker.Version \"\"}} {{kurl eq .Installer.Spec.Kurl.Proxy false}} {{kurl eq .Installer.Spec.X 0}}",
     "true true true"),
    ("{{kurl eq .Installer.Spec.Docker.Version \"20\"}}", "false"),
    # plain {{ ... }} is troubleshoot's, left alone
    ("p99 {{ .P99 }} {{kurl .IsPrimary}} {{ not .IsInstalled }}", "p99 {{ .P99 }} true {{ not .IsInstalled }}"),
    ("no templates {{ here }}", "no templates {{ here }}"),
])
def test_fields_and_empty_values(text, expected):
    assert render(text) == expected


@pytest.mark.parametrize("text, expected", [
    # and / or return the deciding operand, as Go does
    ("{{kurl and 1 \"x\" 2}}", "2"),
    ("{{kurl and 1 0 2}}", "0"),
    ("{{kurl and \"a\" \"\" \"b\"}}", ""),
    ("{{kurl and .IsPrimary .Installer.Spec.Rook.Version}}", "1.12.8"),
    ("{{kurl or 0 \"\" \"x\" \"y\"}}", "x"),
    ("{{kurl or 0 false}}", "false"),
    ("{{kurl or .Installer.Spec.Docker.Version \"none\"}}", "none"),
    ("{{kurl or .IsPrimary (index .RemoteHosts 99)}}", "true"),   # short-circuit: index not evaluated
    ("{{kurl and .IsJoin (index .RemoteHosts 99)}}", "false"),
    ("{{kurl .IsUpgrade | and .IsPrimary}}", "false"),
    ("{{kurl .IsPrimary | or false}}", "true"),
])
def test_and_or_return_the_deciding_operand(text, expected):
    assert render(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("{{kurl not .IsPrimary}}", "false"),
    ("{{kurl not 0}} {{kurl not \"\"}} {{kurl not (list)}} {{kurl not nil}}", "true true true true"),
    ("{{kurl eq 1 1}} {{kurl eq \"a\" \"b\"}} {{kurl eq 3 1 2 3}} {{kurl eq true true}} {{kurl eq nil nil}}", "true false true true true"),
    ("{{kurl ne 1 2}} {{kurl ne \"a\" \"a\"}}", "true false"),
    ("{{kurl lt 1 2}} {{kurl lt \"b\" \"a\"}} {{kurl le 2 2}} {{kurl gt 2.5 1.5}} {{kurl ge 1 2}}", "true false true true false"),
    ("{{kurl len .RemoteHosts}} {{kurl len \"h\u00e9\"}} {{kurl len .Installer.Spec.Rook}}", "3 3 3"),
    ("{{kurl index .RemoteHosts 1}} {{kurl index .Installer \"spec\" \"rook\" \"version\"}} {{kurl index \"abc\" 0}}", "10.0.0.2 1.12.8 97"),
    ("[{{kurl index .Installer \"spec\" \"docker\" \"version\"}}]", "[]"),
    ("{{kurl print \"a\" 1 2 \"b\" true}}", "a1 2btrue"),
    ("{{kurl print nil}} {{kurl print 1.5 1e6 0.0001 0.00001 100000.0 -2.25}}", "<nil> 1.5 1e+06 0.0001 1e-05 100000 -2.25"),
    ("{{kurl println 1 \"a\"}}", "1 a\n"),
    ("{{kurl printf \"%s=%d %v %q %t\" \"n\" 3 .SecondaryHosts \"a\\\"b\" false}}", "n=3 [10.0.0.3] \"a\\\"b\" false"),
    ("{{kurl printf \"%5s|%-4d|%04d|%.2f|%x|%.1s|%%\" \"ab\" 7 -5 3.14159 255 \"xyz\"}}", "   ab|7   |-005|3.14|ff|x|%"),
    ("{{kurl printf \"%d %s\" \"x\" 1}} {{kurl printf \"%d\"}} {{kurl printf \"a\" 1}}",
     "%!d(string=x) %!s(int=1) %!d(MISSING) a%!(EXTRA int=1)"),
    ("{{kurl .Installer.Spec.Docker.Version | printf \"[%s]\"}}", "[]"),
    ("{{kurl semverCompare \">= 1.29.0\" .Installer.Spec.Kubernetes.Version}}", "true"),
    ("{{kurl default \"none\" .Installer.Spec.Docker.Version}} {{kurl default \"none\" .Installer.Spec.Rook.Version}}", "none 1.12.8"),
    ("{{kurl .Installer.Spec.Docker.Version | default \"20.10.17\"}} {{kurl default 5 0}} {{kurl default \"d\"}}", "20.10.17 5 d"),
    ("{{kurl empty \"\"}} {{kurl empty 0}} {{kurl empty (list)}} {{kurl empty \"x\"}} {{kurl empty false}}", "true true true false true"),
    ("{{kurl contains \"b-z\" .Installer.Spec.Rook.BlockDeviceFilter}} {{kurl contains \"q\" \"abc\"}}", "true false"),
    ("{{kurl hasPrefix \"10.\" (index .RemoteHosts 0)}} {{kurl hasSuffix \".3\" (index .RemoteHosts 0)}}", "true false"),
    ("[{{kurl trim \"  a b \\n\"}}] {{kurl trimSuffix \"/\" \"lb/\"}} {{kurl trimPrefix \"v\" \"v1.2\"}} {{kurl trimSuffix \"x\" \"lb\"}}",
     "[a b] lb 1.2 lb"),
    ("{{kurl lower \"AbC\"}} {{kurl upper \"AbC\"}} {{kurl \"MiXeD\" | lower | upper}}", "abc ABC MIXED"),
    ("{{kurl toString 12}} {{kurl toString true}} {{kurl toString \"s\"}} [{{kurl toString .Installer.Spec.Docker.Version}}]", "12 true s []"),
    ("{{kurl quote \"a\\\"b\" 1 nil}} {{kurl quote .Installer.Spec.Docker.Version}} {{kurl squote \"x\"}}", "\"a\\\"b\" \"1\" \"\" 'x'"),
    ("{{kurl ternary \"yes\" \"no\" .IsPrimary}} {{kurl ternary \"yes\" \"no\" .IsJoin}} {{kurl .IsUpgrade | ternary 1 2}}", "yes no 2"),
    ("{{kurl list 1 \"a\" true}} {{kurl list | len}} {{kurl list \"x\" \"y\" | len}}", "[1 a true] 0 2"),
    ("{{kurl has \"10.0.0.3\" .RemoteHosts}} {{kurl has \"10.9.9.9\" .RemoteHosts}} {{kurl has 1 (list \"1\")}} {{kurl has 1 (list 1)}}",
     "true false false true"),
    ("{{kurl has \"x\" .Installer.Spec.Docker.Hosts}}", "false"),
    ("{{kurl join \",\" .RemoteHosts}} {{kurl coalesce \"\" .Installer.Spec.Docker.Version \"c\"}}", "10.0.0.1,10.0.0.2,10.0.0.3 c"),
])
def test_functions(text, expected):
    assert render(text) == expected


@pytest.mark.parametrize("literal, expected", [
    ('"tab\\there"', "tab\there"),
    ('"\\u00e9\\x41\\101\\\\ \\""', '\u00e9AA\\ "'),
    ("`raw\\n {{ }}`", "raw\\n {{ }}"),
    ("0x1F", "31"), ("0o17", "15"), ("017", "15"), ("-3", "-3"), ("+4", "4"), ("1_000", "1000"),
    ("2.50", "2.5"), ("1e3", "1000"), (".5", "0.5"),
    ("true", "true"), ("false", "false"),
])
def test_literals(literal, expected):
    assert render("{{kurl %s}}" % literal) == expected


@pytest.mark.parametrize("flags, expected", [
    (dict(), "install"),
    (dict(is_join=True), "join-primary"),
    (dict(is_join=True, is_primary=False), "join-secondary"),
    (dict(is_upgrade=True), "upgrade"),
])
def test_if_else_if_else(flags, expected):
    text = ("{{kurl if not .IsPrimary}}join-secondary{{kurl else if .IsUpgrade}}upgrade"
            "{{kurl else if .IsJoin}}join-primary{{kurl else}}install{{kurl end}}")
    assert render(text, template_data(INSTALLER, **flags)) == expected


def test_nested_if_and_with():
    text = ("{{kurl with .Installer.Spec.Rook}}{{kurl if .IsBlockStorageEnabled}}{{kurl .Version}} on {{kurl .BlockDeviceFilter}}"
            "{{kurl end}}{{kurl end}}|{{kurl with .Installer.Spec.Docker.Version}}docker{{kurl else}}no docker{{kurl end}}"
            "|{{kurl with $ek := .Installer.Spec.Ekco}}{{kurl $ek.Version}} {{kurl $.IsPrimary}}{{kurl end}}")
    assert render(text) == "1.12.8 on sd[b-z]|no docker|0.28.0 true"
    assert render("{{kurl with .Installer.Spec.Docker}}docker{{kurl else with .IsPrimary}}primary {{kurl .}}{{kurl end}}") == "primary true"


def test_range():
    text = "{{kurl range $i, $h := .RemoteHosts}}{{kurl $i}}={{kurl $h}}{{kurl if $.IsPrimary}}*{{kurl end}};{{kurl end}}"
    assert render(text) == "0=10.0.0.1*;1=10.0.0.2*;2=10.0.0.3*;"
    assert render("{{kurl range .PrimaryHosts}}[{{kurl .}}]{{kurl end}}") == "[10.0.0.1][10.0.0.2]"
    assert render("{{kurl range $h := .SecondaryHosts}}{{kurl $h}} of {{kurl len $.RemoteHosts}}{{kurl end}}") == "10.0.0.3 of 3"
    empty = template_data(INSTALLER)
    assert render("{{kurl range .RemoteHosts}}{{kurl .}}{{kurl else}}single node{{kurl end}}", empty) == "single node"
    assert render("{{kurl range .Installer.Spec.Docker.Hosts}}x{{kurl else}}none{{kurl end}}") == "none"
    assert render("{{kurl range $k, $v := .Installer.Spec.Ekco}}{{kurl $k}}={{kurl $v}},{{kurl end}}") == \
        "enableInternalLoadBalancer=false,version=0.28.0,"
    assert render("{{kurl range 5}}{{kurl if eq . 1}}{{kurl continue}}{{kurl end}}{{kurl if eq . 3}}{{kurl break}}{{kurl end}}"
                  "{{kurl .}}{{kurl end}}") == "02"


def test_variables():
    assert render("{{kurl $lb := .Installer.Spec.Kubernetes.LoadBalancerAddress}}[{{kurl $lb}}]") == "[10.0.0.10:6443]"
    assert render("{{kurl $n := 1}}{{kurl $n = 2}}{{kurl $n}}") == "2"
    assert render("{{kurl $x := 1}}{{kurl if true}}{{kurl $x = 5}}{{kurl $y := 7}}{{kurl $y}}{{kurl end}}{{kurl $x}}") == "75"
    assert render("{{kurl if $v := .Installer.Spec.Rook.Version}}{{kurl $v}}{{kurl else}}{{kurl $v}}none{{kurl end}}") == "1.12.8"
    assert render("{{kurl range .PrimaryHosts}}{{kurl $.IsPrimary}}{{kurl end}}") == "truetrue"


@pytest.mark.parametrize("text, expected", [
    ("{{kurl and .IsPrimary (not .IsUpgrade) | not }}", "false"),
    ("{{kurl .IsPrimary | not}}", "false"),
    ("{{kurl .IsJoin | not | not}}", "false"),
    ("{{kurl and .Installer.Spec.Ekco.Version .Installer.Spec.Ekco.EnableInternalLoadBalancer | not}}", "true"),
    ("{{kurl (and .IsPrimary .IsCluster) | not}}", "false"),
    ("{{kurl .Installer.Spec.Kubernetes.LoadBalancerAddress | trimSuffix \"6443\" | trimSuffix \":\"}}", "10.0.0.10"),
    ("{{kurl semverCompare \"1.6.0 - 1.6.4\" .Installer.Spec.Containerd.Version | not}}", "true"),
    ("{{kurl \"x\" | printf \"%s-%s\" \"a\"}}", "a-x"),
    ("https://{{kurl .Installer.Spec.Kubernetes.LoadBalancerAddress | trimSuffix \"/\" }}/healthz", "https://10.0.0.10:6443/healthz"),
])
def test_pipelines(text, expected):
    assert render(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("a  \n {{kurl- .IsPrimary}}", "atrue"),
    ("{{kurl .IsPrimary -}} \n\t b", "trueb"),
    ("a \n{{kurl- .IsPrimary -}}\n b", "atrueb"),
    ("x\n  {{kurl- if .IsJoin -}}\n  join\n{{kurl- else -}}\n  install\n{{kurl- end }}\n", "xinstall\n"),
    ("a {{kurl -1}} b", "a -1 b"),   # "-" not followed by a space is a number sign, not a trim marker
    ("a {{kurl/* a comment, {{kurl not evaluated }} */}} b", "a  b"),
    ("a {{kurl- /* trimmed both sides */ -}} b", "ab"),
    ("a\n{{kurl/* multi\nline */}}b", "a\nb"),
])
def test_trim_markers_and_comments(text, expected):
    assert render(text) == expected


@pytest.mark.parametrize("constraint, version, expected", [
    (">= 20.10.17", "20.10.17", True),
    (">= 20.10.17", "20.10.5", False),
    (">=20.10.17", "v20.10.18", True),
    ("> v1.96.2", "1.96.2", False),
    ("> v1.96.2", "1.97.0", True),
    ("< 1.29.0", "1.28.15", True),
    ("< 1.24", "1.24.0", False),
    ("< 1.24", "1.23.17", True),
    ("= 1.2", "1.2.9", True),
    ("= 1.2", "1.3.0", False),
    ("1.2.3", "1.2.3", True),
    ("!= 1.2.3", "1.2.4", True),
    ("!= 1.2.3", "1.2.3", False),
    ("~1.2", "1.2.7", True),
    ("~1.2.3", "1.3.0", False),
    ("~> 1.2.3", "1.2.9", True),
    ("^1.2", "1.9.0", True),
    ("^1.2", "2.0.0", False),
    ("^0.2.3", "0.2.9", True),
    ("^0.2.3", "0.3.0", False),
    ("1.2.x", "1.2.99", True),
    ("1.2.x", "1.3.0", False),
    ("1.x", "1.99.0", True),
    ("*", "5.0.0", True),
    (">= 1.2, < 1.4", "1.3.5", True),
    (">= 1.2 < 1.4", "1.4.0", False),
    ("< 1.0 || >= 2.0", "2.1.0", True),
    ("< 1.0 || >= 2.0", "1.5.0", False),
    ("1.6.0 - 1.6.4", "1.6.4", True),
    ("1.6.0 - 1.6.4", "1.6.5", False),
    ("> 1.2", "1.2.5", False),
    ("> 1.2", "1.3.0", True),
    ("<= 1.2", "1.2.9", True),
    ("<= 1.2", "1.3.0", False),
    (">= 1.2.3", "1.3.0-beta.1", False),        # a pre-release only matches a constraint naming one
    (">= 1.2.3-alpha", "1.2.3-beta", True),
    (">= 1.2.3-beta.2", "1.2.3-beta.11", True),  # numeric identifiers compare as numbers
    ("< 1.2.3", "1.2.3-rc.1", False),
    ("< 1.2.3-rc.2", "1.2.3-rc.1", True),
    (">= 1.2.3-rc.1", "1.2.3", True),
    ("= 1.2.3", "v1.2.3+build.7", True),         # build metadata ignored
    (">= 1.0.0", "1.35.x", False),               # not a version: false (Sprig would fail the template)
    (">= 1.0.0", "", False),
    (">= 1.0.0", "latest", False),
])
def test_semver_compare(constraint, version, expected):
    data = dict(DATA, Constraint=constraint, Version=version)
    assert render_text("{{kurl semverCompare .Constraint .Version}}", data) == ("true" if expected else "false")


@pytest.mark.parametrize("constraint", ["bad", ">= 1.2.3.4", "1.2.3 ||", ">== 1.0", ">= 1.2.3abc", ">=1.0<2.0", ""])
def test_semver_compare_bad_constraint(constraint):
    message = error_of("{{kurl semverCompare %s \"1.2.3\"}}" % yaml.safe_dump(constraint, default_style='"').strip())
    assert "error calling semverCompare: improper constraint" in message


# ---------------------------------------------------------------- a kURL-shaped host preflight document

HOST_PREFLIGHT = textwrap.dedent("""\
    apiVersion: troubleshoot.sh/v1beta2
    kind: HostPreflight
    metadata:
      name: lab-host-checks
    spec:
      collectors:
        - tcpLoadBalancer:
            collectorName: "API server load balancer"
            port: 6443
            address: {{kurl .Installer.Spec.Kubernetes.LoadBalancerAddress }}
            timeout: 2m
            # first primary of an HA install only
            exclude: '{{kurl and .Installer.Spec.Kubernetes.LoadBalancerAddress .IsPrimary (not .IsJoin) (not .IsUpgrade) | not }}'
        - tcpPortStatus:
            collectorName: "etcd peer port"
            port: 2380
            exclude: '{{kurl and .IsPrimary (not .IsUpgrade) | not }}'
        - diskUsage:
            collectorName: "docker disk"
            path: /var/lib/docker
            exclude: '{{kurl not .Installer.Spec.Docker.Version}}'
        - certificate:
            collectorName: "apiserver key pair"
            certificatePath: /etc/kubernetes/pki/apiserver.crt
            keyPath: /etc/kubernetes/pki/apiserver.key
            exclude: '{{kurl or (not .IsPrimary) (not .IsUpgrade) }}'
        - tcpConnect:
            collectorName: "API via internal load balancer"
            address: '{{kurl .Installer.Spec.Kubernetes.MasterAddress }}'
            exclude: '{{kurl and .IsJoin (and .Installer.Spec.Ekco.Version .Installer.Spec.Ekco.EnableInternalLoadBalancer | not) | not }}'
      analyzers:
        - hostOS:
            checkName: "Docker on Ubuntu 22.04"
            exclude: '{{kurl or (not .Installer.Spec.Docker.Version) (semverCompare ">= 20.10.17" .Installer.Spec.Docker.Version) }}'
            outcomes:
              - fail:
                  when: "ubuntu = 22.04"
                  message: docker before 20.10.17 does not run on ubuntu 22.04
        - blockDevices:
            includeUnmountedPartitions: true
            outcomes:
              - pass:
                  when: '{{kurl if .Installer.Spec.Rook.BlockDeviceFilter }}{{kurl .Installer.Spec.Rook.BlockDeviceFilter }}{{kurl else }}.*{{kurl end }} == 1'
                  message: One available block device
              - pass:
                  when: '{{kurl $f := .Installer.Spec.Rook.BlockDeviceFilter }}{{kurl with $f }}{{kurl . }}{{kurl else }}.*{{kurl end }} > 1'
                  message: Several available block devices
        - filesystemPerformance:
            collectorName: etcd disk
            outcomes:
              - pass:
                  when: "p99 < 10ms"
                  message: "Write latency is ok (p99 {{ .P99 }})"
    """)

ROLES = {
    "install": dict(),
    "join-primary": dict(is_join=True),
    "join-secondary": dict(is_join=True, is_primary=False),
    "upgrade": dict(is_upgrade=True),
}
# exclude of: load balancer, etcd port, docker disk, certificate, internal LB connect, docker hostOS
EXCLUDES = {
    "install": ["false", "false", "true", "true", "true", "true"],
    "join-primary": ["true", "false", "true", "true", "false", "true"],
    "join-secondary": ["true", "true", "true", "true", "false", "true"],
    "upgrade": ["true", "true", "true", "false", "true", "true"],
}


def _excludes(document):
    found = [list(c.values())[0]["exclude"] for c in document["spec"]["collectors"]]
    return found + [document["spec"]["analyzers"][0]["hostOS"]["exclude"]]


@pytest.mark.parametrize("role", sorted(ROLES))
def test_host_preflight_text_per_role(role):
    data = template_data(INSTALLER, primary_hosts=["10.0.0.1"], secondary_hosts=["10.0.0.3"], **ROLES[role])
    document = yaml.safe_load(render_text(HOST_PREFLIGHT, data, "lab-host-checks.yaml"))
    assert _excludes(document) == EXCLUDES[role]
    collectors, analyzers = document["spec"]["collectors"], document["spec"]["analyzers"]
    assert collectors[0]["tcpLoadBalancer"]["address"] == "10.0.0.10:6443"
    assert collectors[4]["tcpConnect"]["address"] == ""
    assert [o["pass"]["when"] for o in analyzers[1]["blockDevices"]["outcomes"]] == ["sd[b-z] == 1", "sd[b-z] > 1"]
    assert analyzers[2]["filesystemPerformance"]["outcomes"][0]["pass"]["message"] == "Write latency is ok (p99 {{ .P99 }})"


@pytest.mark.parametrize("docker, exclude", [(None, "true"), ("20.10.5", "false"), ("20.10.17", "true"), ("24.0.9", "true")])
def test_host_preflight_docker_version(docker, exclude):
    installer = copy.deepcopy(INSTALLER)
    del installer["spec"]["rook"]
    if docker:
        installer["spec"]["docker"] = {"version": docker}
    document = yaml.safe_load(render_text(HOST_PREFLIGHT, template_data(installer)))
    assert _excludes(document)[2] == ("false" if docker else "true")
    assert _excludes(document)[5] == exclude
    assert [o["pass"]["when"] for o in document["spec"]["analyzers"][1]["blockDevices"]["outcomes"]] == [".* == 1", ".* > 1"]


def test_host_preflight_without_load_balancer():
    installer = copy.deepcopy(INSTALLER)
    del installer["spec"]["kubernetes"]["loadBalancerAddress"]
    document = yaml.safe_load(render_text(HOST_PREFLIGHT, template_data(installer)))
    assert document["spec"]["collectors"][0]["tcpLoadBalancer"]["address"] is None  # "address: " reads as null
    assert _excludes(document)[0] == "true"


@pytest.mark.parametrize("role", sorted(ROLES))
def test_render_tree_per_role(role):
    # an unquoted {{kurl ...}} is YAML only once rendered as text (as kURL does); quoted, the parsed tree renders too
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(HOST_PREFLIGHT)
    address = "address: {{kurl .Installer.Spec.Kubernetes.LoadBalancerAddress }}"
    parsed = yaml.safe_load(HOST_PREFLIGHT.replace(address, address.replace(": ", ": '") + "'"))
    before = copy.deepcopy(parsed)
    assert has_templates(parsed)
    data = template_data(INSTALLER, primary_hosts=["10.0.0.1"], secondary_hosts=["10.0.0.3"], **ROLES[role])
    rendered = render_tree(parsed, data, "lab-host-checks.yaml")
    assert parsed == before
    assert rendered is not parsed and rendered["spec"] is not parsed["spec"]
    assert _excludes(rendered) == EXCLUDES[role]
    assert not has_templates(rendered)
    assert rendered["spec"]["collectors"][1]["tcpPortStatus"]["port"] == 2380
    assert rendered["spec"]["analyzers"][2] == parsed["spec"]["analyzers"][2]
    assert yaml.safe_load(yaml.safe_dump(rendered)) == rendered


def test_render_tree_keys_and_scalars():
    value = {"{{kurl .Installer.Metadata.Name}}-check": [1, None, True, "{{kurl .IsPrimary}}", ("{{kurl .IsJoin}}",)], "n": 2.5}
    assert render_tree(value, DATA) == {"lab-check": [1, None, True, "true", ("false",)], "n": 2.5}
    assert render_tree("{{kurl .IsCluster}}", DATA) == "true"
    assert render_tree(7, DATA) == 7


def test_render_tree_error_names_the_path():
    parsed = {"spec": {"collectors": [{"cpu": {}}, {"tcpPortStatus": {"exclude": "{{kurl nope .IsPrimary}}"}}]}}
    with pytest.raises(KurlTemplateError) as err:
        render_tree(parsed, DATA, "spec.kurl.hostPreflights")
    assert str(err.value) == ('spec.kurl.hostPreflights at spec.collectors[1].tcpPortStatus.exclude: line 1: '
                              'function "nope" not defined: {{kurl nope .IsPrimary}}')


@pytest.mark.parametrize("value, expected", [
    ("{{kurl .IsPrimary}}", True), ("{{ .P99 }}", False), ("", False), (None, False), (3, False),
    ({"a": ["x", {"b": "{{kurl .IsJoin}}"}]}, True), ({"{{kurl .IsJoin}}": 1}, True), ({"a": ["{{kurl"]}, True),
    ({"a": ["x", {"b": "{{ .IsJoin }}"}]}, False), (["{{kur l"], False),
])
def test_has_templates(value, expected):
    assert has_templates(value) is expected


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("text, problem, action", [
    ("{{kurl foo .IsPrimary}}", 'function "foo" not defined', "{{kurl foo .IsPrimary}}"),
    ("{{kurl html \"x\"}}", 'function "html" not defined', '{{kurl html "x"}}'),
    ("{{kurl .IsPrimary", "unclosed action", "{{kurl .IsPrimary"),
    ("{{kurl .IsPrimary\nmore: {{kurl .IsJoin}}", "unclosed action", "{{kurl .IsPrimary more:"),
    ("{{kurl end}}", "unexpected {{kurl end}}", "{{kurl end}}"),
    ("{{kurl else}}", "unexpected {{kurl else}}", "{{kurl else}}"),
    ("{{kurl if .IsJoin}}a", "unexpected end of template: missing {{kurl end}}", "{{kurl if .IsJoin}}"),
    ("{{kurl range .RemoteHosts}}{{kurl if .}}a{{kurl end}}", "missing {{kurl end}}", "{{kurl range .RemoteHosts}}"),
    ("{{kurl if .IsJoin}}{{kurl else}}{{kurl else}}{{kurl end}}", "a second else", "{{kurl else}}"),
    ("{{kurl if .IsJoin}}{{kurl end .IsJoin}}", "unexpected \".IsJoin\" after end", "{{kurl end .IsJoin}}"),
    ("{{kurl range .RemoteHosts}}{{kurl else if .IsJoin}}{{kurl end}}", "unexpected \"if\" after else", "{{kurl else if .IsJoin}}"),
    ("{{kurl }}", "missing value for command", "{{kurl }}"),
    ("{{kurl | not}}", "missing value for command", "{{kurl | not}}"),
    ("{{kurl (not .IsJoin}}", "unclosed left paren", "{{kurl (not .IsJoin}}"),
    ("{{kurl not .IsJoin)}}", "unexpected \")\" in action", "{{kurl not .IsJoin)}}"),
    ("{{kurl \"open}}", "unterminated quoted text", "{{kurl \"open}}"),
    ("{{kurl \"bad \\q\"}}", "invalid escape", "{{kurl \"bad \\q\"}}"),
    ("{{kurl \"bad \\'\"}}", "invalid escape", "{{kurl \"bad \\'\"}}"),
    ("{{kurl .IsJoin\"x\"}}", "bad character", "{{kurl .IsJoin\"x\"}}"),
    ("{{kurl eq 1 2x}}", "bad character", "{{kurl eq 1 2x}}"),
    ("{{kurl eq \"a\"\"b\"}}", 'unexpected ""b"" in operand', "{{kurl eq \"a\"\"b\"}}"),
    ("{{kurl # x}}", "unexpected character \"#\"", "{{kurl # x}}"),
    ("{{kurl 'a'}}", "unexpected character \"'\"", "{{kurl 'a'}}"),
    ("{{kurl 0b12}}", "bad number syntax", "{{kurl 0b12}}"),
    ("{{kurl $x}}", "undefined variable \"$x\"", "{{kurl $x}}"),
    ("{{kurl $x = 1}}", "undefined variable \"$x\"", "{{kurl $x = 1}}"),
    ("{{kurl $a, $b := .RemoteHosts}}", "too many declarations in action", "{{kurl $a, $b := .RemoteHosts}}"),
    ("{{kurl break}}", "outside of range", "{{kurl break}}"),
    ("{{kurl define \"x\"}}{{kurl end}}", "{{kurl define}} is not supported", "{{kurl define \"x\"}}"),
    ("{{kurl template \"x\"}}", "{{kurl template}} is not supported", "{{kurl template \"x\"}}"),
    ("{{kurl/* open }}", "unclosed comment", "{{kurl/* open }}"),
    ("{{kurl/* open", "unclosed comment", "{{kurl/* open"),
    ("exclude: '{{kurl not .IsJoin'\nnext: {{kurl .IsPrimary}}", "unclosed action", "{{kurl not .IsJoin' next:"),
    ("{{kurl range $a, $b, $c := .RemoteHosts}}{{kurl end}}", "too many declarations in range", "{{kurl range $a, $b, $c := .RemoteHosts}}"),
    ("{{kurl/* c */ .IsJoin}}", "comment ends before closing delimiter", "{{kurl/* c */ .IsJoin}}"),
    ("{{kurl \"x\".Foo}}", "unexpected . after term", "{{kurl \"x\".Foo}}"),
    ("{{kurl 1.Foo}}", "bad character \"F\" after \"1.\"", "{{kurl 1.Foo}}"),
    # evaluation
    ("{{kurl .IsJoin.Foo}}", "can't evaluate field Foo in type bool", "{{kurl .IsJoin.Foo}}"),
    ("{{kurl .Installer.Spec.Rook.Version.Major}}", "can't evaluate field Major in type string", "{{kurl .Installer.Spec.Rook.Version.Major}}"),
    ("{{kurl .NoSuchField}}", "can't evaluate field NoSuchField in type data", "{{kurl .NoSuchField}}"),
    ("{{kurl range .RemoteHosts}}{{kurl .Name}}{{kurl end}}", "can't evaluate field Name in type string", "{{kurl .Name}}"),
    ("{{kurl not}}", "wrong number of args for not: want 1 got 0", "{{kurl not}}"),
    ("{{kurl .IsJoin | not .IsPrimary}}", "wrong number of args for not: want 1 got 2", "{{kurl .IsJoin | not .IsPrimary}}"),
    ("{{kurl and}}", "wrong number of args for and: want at least 1 got 0", "{{kurl and}}"),
    ("{{kurl .IsJoin .IsPrimary}}", "can't give argument to non-function .IsJoin", "{{kurl .IsJoin .IsPrimary}}"),
    ("{{kurl \"x\" | .IsJoin}}", "can't give argument to non-function .IsJoin", "{{kurl \"x\" | .IsJoin}}"),
    ("{{kurl nil}}", "nil is not a command", "{{kurl nil}}"),
    ("{{kurl eq 1 \"1\"}}", "error calling eq: incompatible types for comparison: int and string", "{{kurl eq 1 \"1\"}}"),
    ("{{kurl eq 1}}", "error calling eq: missing argument for comparison", "{{kurl eq 1}}"),
    ("{{kurl eq .RemoteHosts .RemoteHosts}}", "non-comparable type", "{{kurl eq .RemoteHosts .RemoteHosts}}"),
    ("{{kurl lt true false}}", "invalid type for comparison", "{{kurl lt true false}}"),
    ("{{kurl lt 1 1.5}}", "incompatible types for comparison", "{{kurl lt 1 1.5}}"),
    ("{{kurl len .IsJoin}}", "len of type bool", "{{kurl len .IsJoin}}"),
    ("{{kurl index .RemoteHosts 3}}", "index out of range: 3", "{{kurl index .RemoteHosts 3}}"),
    ("{{kurl index .IsJoin 0}}", "can't index item of type bool", "{{kurl index .IsJoin 0}}"),
    ("{{kurl index .Installer.Spec.Docker.Hosts 0}}", "can't index item of type string with int", "{{kurl index .Installer.Spec.Docker.Hosts 0}}"),
    ("{{kurl range .IsJoin}}{{kurl end}}", "range can't iterate over false", "{{kurl range .IsJoin}}"),
    ("{{kurl range \"abc\"}}{{kurl end}}", "range can't iterate over abc", "{{kurl range \"abc\"}}"),
    ("{{kurl lower 3}}", "error calling lower: wrong type for value; expected string; got int", "{{kurl lower 3}}"),
    ("{{kurl semverCompare \">= 1\" 1.5}}", "expected string; got float64", "{{kurl semverCompare \">= 1\" 1.5}}"),
    ("{{kurl ternary 1 2 \"yes\"}}", "expected bool; got string", "{{kurl ternary 1 2 \"yes\"}}"),
    ("{{kurl has \"a\" \"abc\"}}", "cannot find has on type string", "{{kurl has \"a\" \"abc\"}}"),
])
def test_errors(text, problem, action):
    message = error_of(text)
    assert message.startswith("hp.yaml: line 1: ")
    assert problem in message
    assert message.endswith(": " + action)
    assert "\n" not in message


def test_error_line_and_clipping():
    text = "a: 1\nb: 2\nc: '{{kurl and .IsPrimary (not .IsUpgrade) (eq .Installer.Spec.Kubernetes.Version \"1.29.4\") (wrong 1) | not }}'\n"
    message = error_of(text, source="spec.kurl.hostPreflights")
    assert message.startswith('spec.kurl.hostPreflights: line 3: function "wrong" not defined: {{kurl and .IsPrimary (not .IsUpgrade)')
    assert message.endswith("...")
    assert len(message.split('not defined: ')[1]) == 80
    deep = "x\n{{kurl if .IsPrimary}}\n{{kurl range .RemoteHosts}}\n\n{{kurl .Bad}}\n{{kurl end}}{{kurl end}}"
    assert error_of(deep).startswith("hp.yaml: line 5: can't evaluate field Bad in type string: {{kurl .Bad}}")
    assert error_of("\n\n{{kurl if .IsJoin}}\n{{kurl end}}\n{{kurl end}}").startswith("hp.yaml: line 5: unexpected {{kurl end}}")
    assert error_of("{{kurl if .IsJoin}}\n\n{{kurl end}}{{kurl if .IsJoin}}\n").startswith("hp.yaml: line 3: unexpected end of template")


def test_error_is_a_mooring_error():
    with pytest.raises(MooringError) as err:
        render_text("{{kurl foo}}", DATA)
    assert str(err.value) == 'template: line 1: function "foo" not defined: {{kurl foo}}'
    assert err.value.problems == [str(err.value)]
    # errors in a branch not taken still fail at parse time, as Go's do
    assert "not defined" in error_of("{{kurl if false}}{{kurl foo}}{{kurl end}}")
    # evaluation errors only where evaluated
    assert render("{{kurl if false}}{{kurl .IsJoin.Foo}}{{kurl end}}ok") == "ok"


def test_a_kurl_shaped_file_uses_a_sliver_of_the_evaluation_budget():
    budget = Budget()
    render_text(HOST_PREFLIGHT, DATA, "hp.yaml", budget)
    assert MAX_STEPS - budget.left < 1000 and budget.tokens < 500 and budget.output < 4000


@pytest.mark.parametrize("text, expected", [
    # as Go's walkRange: the variables hold the value ranged over until the first element (an else reads them)
    ("{{kurl range $h := .SecondaryHosts}}{{kurl $h}}{{kurl else}}[{{kurl $h}}]{{kurl end}}", "[[]]"),
    ("{{kurl range $i, $h := .SecondaryHosts}}{{kurl else}}{{kurl $i}}{{kurl $h}}{{kurl end}}", "[][]"),
    # range $x = ... sets the variable outside the range (it keeps the last element)
    ("{{kurl $x := 0}}{{kurl range $x = .PrimaryHosts}}{{kurl end}}{{kurl $x}}", "b"),
    ("{{kurl $x := 0}}{{kurl range $x = .SecondaryHosts}}{{kurl end}}{{kurl $x}}", "[]"),
    ("{{kurl range $i, $h := .PrimaryHosts}}{{kurl $y := $h}}{{kurl $i}}{{kurl $y}}{{kurl end}}", "0a1b"),
])
def test_range_variables_as_go_sets_them(text, expected):
    assert render(text, template_data(INSTALLER, primary_hosts=["a", "b"])) == expected
