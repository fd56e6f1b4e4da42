# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Installer spec validation, defaults and kURL input."""

from __future__ import annotations

import textwrap

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import SpecError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.installer import hash_installer, parse_installer

GOOD = textwrap.dedent("""
    apiVersion: cluster.mooring.io/v1beta1
    kind: Installer
    metadata: {name: demo}
    spec:
      kubernetes: {version: 1.35.x}
      calico: {version: latest}
""")


def problems(text):
    with pytest.raises(SpecError) as err:
        parse_installer(textwrap.dedent(text))
    return err.value.problems


def test_good_spec_gets_defaults():
    installer = parse_installer(GOOD)
    assert installer.source == "mooring"
    assert installer.addons["kubernetes"]["podCIDR"] == "10.32.0.0/16"
    assert installer.addons["calico"]["encapsulation"] == "VXLAN"
    assert installer.requested_versions() == {"kubernetes": "1.35.x", "calico": "latest"}
    assert len(installer.hash) == 7


def test_every_problem_reported_at_once_with_paths():
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: 1.31.z, podCIDR: 10.0.0.0/8}
          etcd: {version: latest, topology: sideways}
          weave: {version: latest}
          calico: {version: latest, colour: blue}
    """)
    assert "spec.kubernetes.version: must be an exact version, 'latest' or 'X.Y.x', not '1.31.z'" in found
    assert "spec.etcd.topology: must be one of external, stacked, not 'sideways'" in found
    assert any(p.startswith("spec.weave: is not a known add-on (known: calico, cilium,") for p in found)
    assert any(p.startswith("spec.calico.colour: is not a known field (known: encapsulation, mtu, version)")
               for p in found)
    assert len(found) == 4


def test_etcd_backup_schedule_and_keep_are_checked():
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: 1.33.x}
          etcd: {version: latest, backup: {schedule: "daily\\nExecStartPre=/bin/sh", keep: 0, target: x}}
    """)
    assert any(p.startswith("spec.etcd.backup.schedule: ") for p in found), found
    assert "spec.etcd.backup.keep: must be at least 1, not 0" in found, found
    assert any(p.startswith("spec.etcd.backup.target: is not a known field") for p in found), found
    installer = parse_installer(textwrap.dedent("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: 1.33.x}
          etcd: {version: latest, backup: {schedule: "*-*-* 00/12:00:00", keep: 5}}
          flannel: {version: latest}
    """))
    assert installer.options("etcd")["backup"] == {"schedule": "*-*-* 00/12:00:00", "keep": 5}


def test_exactly_one_cni():
    assert problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec: {kubernetes: {version: latest}}
    """) == ["spec: exactly one CNI add-on is required (calico, cilium, flannel), or kubernetes.cni: none to bring "
             "your own; found none"]
    assert problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec: {kubernetes: {version: latest}, calico: {version: latest}, flannel: {version: latest}}
    """) == ["spec: exactly one CNI add-on is required (calico, cilium, flannel), or kubernetes.cni: none to bring "
             "your own; found calico and flannel"]


def test_a_mooring_spec_may_bring_its_own_cni():
    installer = parse_installer(textwrap.dedent("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec: {kubernetes: {version: latest, cni: none}}
    """))
    assert installer.options("kubernetes")["cni"] == "none"
    assert problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec: {kubernetes: {version: latest, cni: none}, calico: {version: latest}}
    """) == ["spec.kubernetes.cni: 'none' says the cluster brings its own CNI, but spec.calico is one; remove one of them"]
    assert problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec: {kubernetes: {version: latest, cni: weave}, calico: {version: latest}}
    """) == ["spec.kubernetes.cni: must be one of none, not 'weave'"]


def test_cidrs_checked():
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: latest, podCIDR: 10.0.0.0/8, serviceCIDR: 10.96.0.0/12}
          calico: {version: latest}
    """)
    assert found == ["spec.kubernetes.serviceCIDR: '10.96.0.0/12' overlaps podCIDR '10.0.0.0/8'; choose disjoint ranges"]
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: latest, podCIDR: 10.32.0.1/16}
          calico: {version: latest}
    """)
    assert found[0].startswith("spec.kubernetes.podCIDR: '10.32.0.1/16' is not a network in CIDR notation")


@pytest.mark.parametrize("text, expected", [
    ("- a\n- b\n", "the installer document must be a mapping with apiVersion, kind and spec"),
    ("a: [\n", "the installer document is not valid YAML"),
    ("apiVersion: v1\nkind: Pod\nspec: {}\n", "apiVersion: must be 'cluster.mooring.io/v1beta1', not 'v1'"),
    ("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\n", "spec: is missing"),
    ("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nspec: {calico: {version: latest}}\n",
     "spec.kubernetes: is missing"),
    ("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nspec: {kubernetes: {}, calico: {version: 3}}\n",
     "spec.calico.version: must be a string, not a number"),
])
def test_bad_input_never_a_traceback(text, expected):
    with pytest.raises(SpecError) as err:
        parse_installer(text)
    assert any(p.startswith(expected) for p in err.value.problems), err.value.problems


def test_yaml_1_2_yes_is_a_string():
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: latest}
          calico: {version: latest}
          metricsServer: {version: latest, insecureKubeletTLS: yes}
    """)
    assert found == ["spec.metricsServer.insecureKubeletTLS: must be true or false, not a string"]


def test_kurl_document_is_mapped_and_unsupported_named():
    installer = parse_installer(textwrap.dedent("""
        apiVersion: cluster.kurl.sh/v1beta1
        kind: Installer
        metadata: {name: kurl}
        spec:
          kubernetes: {version: 1.35.x, serviceCIDR: 10.96.0.0/16, haCluster: false, loadBalancerAddress: lb.example:6443,
                       maxPodsPerNode: 200}
          flannel: {version: latest, podCIDR: 10.40.0.0/16}
          containerd: {version: 2.1.x}
          kotsadm: {version: latest, applicationSlug: sentry}
          ekco: {version: latest}
    """))
    assert installer.source == "kurl"
    assert installer.addons["kubernetes"]["podCIDR"] == "10.40.0.0/16"
    assert installer.addons["kubernetes"]["serviceCIDR"] == "10.96.0.0/16"
    assert installer.addons["kubernetes"]["controlPlaneEndpoint"] == "lb.example:6443"
    assert installer.addons["kubernetes"]["kubelet"] == {"maxPods": 200}
    assert installer.unsupported == ["spec.ekco", "spec.kotsadm", "spec.kubernetes.haCluster"]
    assert installer.warnings == ["spec.ekco: kURL add-on not supported by mooring.cluster; ignored",
                                  "spec.kotsadm: kURL add-on not supported by mooring.cluster; ignored",
                                  "spec.kubernetes.haCluster: kURL field not supported by mooring.cluster; ignored"]


def _kurl_with(kurl):
    """A kURL Installer whose settings section ``spec.kurl`` is ``kurl`` (flow YAML)."""
    return parse_installer(textwrap.dedent("""
        apiVersion: cluster.kurl.sh/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: 1.35.x}
          flannel: {version: latest}
          kurl: %s
    """ % kurl))


def test_kurl_proxy_fields_become_the_spec_s_proxy():
    installer = _kurl_with("{proxyAddress: 'http://10.128.0.70:3128', noProxyAddresses: [10.0.0.0/8], "
                           "additionalNoProxyAddresses: [.corporate.internal]}")
    assert installer.proxy == {"http": "http://10.128.0.70:3128", "https": "http://10.128.0.70:3128",
                               "noProxy": [".corporate.internal", "10.0.0.0/8"]}  # kURL field order
    assert not [w for w in installer.warnings if "proxy" in w.lower()]


@pytest.mark.parametrize("kurl, warned", [
    ("{proxyAddress: 'http://10.128.0.70:3128', noProxy: true}", False),  # kURL's flag: no proxy at all
    ("{additionalNoProxyAddresses: [.corp]}", True),                     # no-proxy list without a proxy
])
def test_kurl_without_a_usable_proxy_gets_none(kurl, warned):
    installer = _kurl_with(kurl)
    assert installer.proxy == {}
    assert any("no proxyAddress" in w for w in installer.warnings) is warned


def test_the_proxy_of_a_mooring_spec_is_checked():
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: 1.33.x}
          flannel: {version: latest}
          proxy: {http: "ftp://proxy:21", noProxy: ["a,b"], user: x}
    """)
    assert any(p.startswith("spec.proxy.http: must be a string matching ") and p.endswith(", not 'ftp://proxy:21'")
               for p in found), found
    assert any(p.startswith("spec.proxy.noProxy[0]: must be a string matching ") and p.endswith(", not 'a,b'") for p in found), found
    assert any(p.startswith("spec.proxy.user: is not a known field") for p in found), found
    assert problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec:
          kubernetes: {version: 1.33.x}
          flannel: {version: latest}
          proxy: {noProxy: [.corp]}
    """)


@pytest.mark.parametrize("head", [
    "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\n",
    "apiVersion: kurl.sh/v1beta1\nkind: Installer\n",
    "apiVersion: kurl.sh/v1beta1\n",          # kURL reads it without kind
    "apiVersion: cluster.kurl.sh/v1beta1\n",
    "",                                       # the bare body kURL's API receives
], ids=["cluster.kurl.sh", "kurl.sh", "kurl.sh-no-kind", "cluster.kurl.sh-no-kind", "bare-spec"])
def test_every_kurl_shape_is_read(head):
    text = head + "spec:\n  kubernetes: {version: 1.35.x}\n  weave: {version: 2.8.1, podCIDR: 10.50.0.0/16}\n"
    installer = parse_installer(text)
    assert installer.source == "kurl"
    assert installer.addons["kubernetes"]["cni"] == "none"
    assert installer.addons["kubernetes"]["podCIDR"] == "10.50.0.0/16"
    assert installer.unsupported == ["spec.weave"]
    assert len(installer.warnings) == 1 and installer.warnings[0].startswith(
        "spec.weave: kURL CNI not supported by mooring.cluster; the cluster is installed without a CNI")
    assert hash_installer(text)[2] == installer.warnings


def test_kurl_errors_keep_the_warnings():
    text = "apiVersion: cluster.kurl.sh/v1beta1\nspec:\n  kubernetes: latest\n  calico: {version: latest}\n  rook: {version: 1.12.x}\n"
    with pytest.raises(SpecError) as err:
        parse_installer(text)
    assert err.value.problems == ["spec.kubernetes: must be a mapping of the add-on's fields, not 'latest'"]
    assert err.value.warnings == ["spec.rook: kURL add-on not supported by mooring.cluster; ignored"]
    with pytest.raises(SpecError) as err:
        parse_installer("apiVersion: kurl.sh/v1beta1\nkind: Deployment\nspec: {rook: {version: 1.12.x}}\n")
    assert err.value.problems == ["kind: must be 'Installer', not 'Deployment'"]


def test_kurl_spec_without_a_cni_says_so_once():
    installer = parse_installer("apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\n"
                                "spec: {kubernetes: {version: latest}, docker: {version: 20.10.x}}\n")
    assert installer.warnings == [
        "spec.docker: kURL add-on not supported by mooring.cluster; ignored",
        "spec: no CNI add-on (calico or flannel); the cluster is installed without a CNI: install one yourself "
        "after the control plane is up"]


def test_kurl_hash_of_kurl_document_is_kurls_published_example():
    text = "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nmetadata: {name: x}\nspec:\n  kubernetes:\n    version: 1.15.3\n"
    assert hash_installer(text)[0] == "3138d30"
    # the same spec with a CNI is a valid installer whose hash covers the CNI too
    installer = parse_installer(text + "  flannel:\n    version: latest\n")
    assert installer.hash != "3138d30" and len(installer.hash) == 7


def test_hash_only_needs_an_installer_shape():
    with pytest.raises(SpecError) as err:
        hash_installer("apiVersion: v1\nkind: Pod\nspec: {}\n")
    assert "not an Installer document" in str(err.value)
    short, digest, warnings = hash_installer("apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nspec: {weave: {version: latest}}\n")
    assert digest.startswith(short) and len(short) == 7
    assert len(warnings) == 1 and warnings[0].startswith("spec.weave: kURL CNI not supported")


def test_hash_reads_the_text_as_kurl_did():
    # kurl.sh (js-yaml 4) reads 1_000 as the number 1000; the YAML 1.2 core schema keeps a string.
    text = ("apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nmetadata: {name: x}\n"
            "spec:\n  kubernetes:\n    version: 1.15.3\n  containerd:\n    version: 1_000\n")
    from ansible_collections.mooring.cluster.plugins.module_utils.spec.kurlhash import kurl_hash, kurl_hash_yaml
    assert hash_installer(text)[0] == kurl_hash_yaml(text)
    assert hash_installer(text)[0] == kurl_hash({"kubernetes": {"version": "1.15.3"}, "containerd": {"version": 1000}})
    assert hash_installer(text)[0] != kurl_hash({"kubernetes": {"version": "1.15.3"}, "containerd": {"version": "1_000"}})


def test_hash_ignores_metadata_and_key_order():
    a = parse_installer("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nmetadata: {name: a}\n"
                        "spec:\n  kubernetes: {version: latest, podCIDR: 10.32.0.0/16}\n  calico: {version: latest}\n")
    b = parse_installer("kind: Installer\nspec:\n  calico: {version: latest}\n  kubernetes: {podCIDR: 10.32.0.0/16, version: latest}\n"
                        "apiVersion: cluster.mooring.io/v1beta1\nmetadata: {name: b}\n")
    assert a.hash == b.hash


def test_kurl_ports_outside_the_nodeport_range_are_ignored_with_a_warning():
    installer = parse_installer("apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nspec:\n"
                                "  kubernetes: {version: latest}\n  calico: {version: latest}\n"
                                "  contour: {version: latest, httpPort: 80, httpsPort: 30443}\n"
                                "  localPathProvisioner: {version: latest}\n")
    assert installer.options("contour") == {"httpsNodePort": 30443}
    assert installer.unsupported == ["spec.contour.httpPort"]
    assert installer.warnings == [
        "spec.contour.httpPort: 80 is outside the NodePort range 30000-32767 (kURL widens the range, mooring.cluster "
        "keeps Kubernetes' default); ignored, the default port is used"]
    assert installer.requested_versions()["localPathProvisioner"] == "latest"


def test_a_bare_address_is_not_a_cidr():
    found = problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec: {kubernetes: {version: latest, serviceCIDR: 10.96.0.1}, calico: {version: latest}}
    """)
    assert found == ["spec.kubernetes.serviceCIDR: '10.96.0.1' is not a network in CIDR notation (no prefix length, "
                     "e.g. /16)"]
    assert problems("""
        apiVersion: cluster.mooring.io/v1beta1
        kind: Installer
        spec: {kubernetes: {version: latest}, calico: {version: latest}, contour: {version: latest, httpNodePort: 80}}
    """) == ["spec.contour.httpNodePort: must be at least 30000, not 80"]


HA = """
    apiVersion: cluster.mooring.io/v1beta1
    kind: Installer
    spec:
      kubernetes: {version: 1.35.x, %s}
      calico: {version: latest}
"""


@pytest.mark.parametrize("fields", [
    "controlPlaneEndpoint: '10.0.0.100:6443', haEndpoint: {mode: vip}",
    "controlPlaneEndpoint: '[fd00::100]:6443', haEndpoint: {mode: vip, interface: eth0, routerId: 7}",
])
def test_ha_endpoint_vip(fields):
    options = parse_installer(textwrap.dedent(HA % fields)).options("kubernetes")
    assert options["haEndpoint"]["mode"] == "vip"


@pytest.mark.parametrize("fields, expected", [
    ("haEndpoint: {mode: vip}", "spec.kubernetes.haEndpoint: mode vip needs spec.kubernetes.controlPlaneEndpoint"),
    ("controlPlaneEndpoint: 'api.example:6443', haEndpoint: {mode: vip}",
     "spec.kubernetes.controlPlaneEndpoint: 'api.example:6443' is not IP:PORT (IPv4) or [IPv6]:PORT"),
    ("controlPlaneEndpoint: 'fd00::1:6443', haEndpoint: {mode: vip}",
     "spec.kubernetes.controlPlaneEndpoint: 'fd00::1:6443' is not IP:PORT"),
    ("controlPlaneEndpoint: '10.0.0.1:6443', haEndpoint: {mode: proxy}", "spec.kubernetes.haEndpoint.mode"),
    ("controlPlaneEndpoint: '10.0.0.1:6443', haEndpoint: {mode: vip, routerId: 256}",
     "spec.kubernetes.haEndpoint.routerId"),
    ("controlPlaneEndpoint: '10.0.0.1:6443', haEndpoint: {}", "spec.kubernetes.haEndpoint"),
    ("controlPlaneEndpoint: '10.0.0.1:6443', haEndpoint: {mode: vip, interface: 'a b'}",
     "spec.kubernetes.haEndpoint.interface"),
])
def test_ha_endpoint_refused_naming_the_field(fields, expected):
    found = problems(HA % fields)
    assert len(found) == 1 and found[0].startswith(expected), found


def test_a_host_name_endpoint_is_fine_without_ha_endpoint():
    installer = parse_installer(textwrap.dedent(HA % "controlPlaneEndpoint: 'api.example:6443'"))
    assert "haEndpoint" not in installer.options("kubernetes")


@pytest.mark.parametrize("api_version", ["cluster.kurl.sh/v1beta", "kurl.sh/v1beta2", "cluster.kurl.sh/v1"])
def test_other_versions_of_kurls_groups_are_read_as_kurl_reads_them(api_version):
    """kURL does not check the apiVersion (its own test specs say cluster.kurl.sh/v1beta): such a spec is
    read, hashed as kURL hashes it (as cluster.kurl.sh/v1beta1: only kurl.sh/v1beta1 reads differently) and
    named in a warning that says which apiVersion to write."""
    body = "kind: Installer\nmetadata: {name: x}\nspec:\n  kubernetes: {version: 1.15.3}\n"
    installer = parse_installer("apiVersion: %s\n%s" % (api_version, body) + "  flannel: {version: latest}\n")
    assert installer.source == "kurl"
    assert installer.warnings[0] == ("apiVersion: '%s' is read as kURL reads it (kURL does not check the version); "
                                     "write cluster.kurl.sh/v1beta1" % api_version)
    short, _digest, warnings = hash_installer("apiVersion: %s\n%s" % (api_version, body))
    assert short == "3138d30" and warnings[0].startswith("apiVersion: '%s' is read as kURL" % api_version)
    with pytest.raises(SpecError, match="not an Installer document"):
        hash_installer("apiVersion: cluster.kurl.io/v1beta1\n" + body)


def test_an_empty_pod_or_service_cidr_is_unset():
    """kURL takes an empty string as unset: the default applies (the hash still reads the text as given)."""
    text = ("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nmetadata: {name: x}\n"
            "spec:\n  kubernetes: {version: latest, podCIDR: '', serviceCIDR: ''}\n  calico: {version: latest}\n")
    installer = parse_installer(text)
    assert installer.addons["kubernetes"]["podCIDR"] == "10.32.0.0/16"
    assert installer.addons["kubernetes"]["serviceCIDR"] == "10.96.0.0/16"
    assert installer.hash == hash_installer(text)[0]
    assert installer.hash != parse_installer(text.replace("podCIDR: '', serviceCIDR: ''", "")).hash
    kurl = parse_installer("apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nspec:\n"
                           "  kubernetes: {version: latest, serviceCIDR: ''}\n  flannel: {version: latest, podCIDR: ''}\n")
    assert kurl.addons["kubernetes"]["podCIDR"] == "10.32.0.0/16" and kurl.warnings == []


@pytest.mark.parametrize("fields, options", [
    ("kubelet: {failCgroupV1: false}", {"kubelet": {"failCgroupV1": False}}),
    ("kubelet: {failCgroupV1: true}", {"kubelet": {"failCgroupV1": True}}),
    ("kubelet: {evictionHard: {nodefs.available: '0%', imagefs.available: '0%', nodefs.inodesFree: '0%'}}",
     {"kubelet": {"evictionHard": {"nodefs.available": "0%", "imagefs.available": "0%", "nodefs.inodesFree": "0%"}}}),
    ("kubelet: {evictionHard: {memory.available: 100Mi, pid.available: '5.5%'}}",
     {"kubelet": {"evictionHard": {"memory.available": "100Mi", "pid.available": "5.5%"}}}),
    ("kubelet: {imageGCHighThresholdPercent: 100}", {"kubelet": {"imageGCHighThresholdPercent": 100}}),
    ("kubeProxy: {conntrackMaxPerCore: 0}", {"kubeProxy": {"conntrackMaxPerCore": 0}}),
    ("kubeProxy: {mode: nftables, conntrackMaxPerCore: 131072}",
     {"kubeProxy": {"mode": "nftables", "conntrackMaxPerCore": 131072}}),
])
def test_kubelet_and_kube_proxy_options_are_accepted(fields, options):
    got = parse_installer(textwrap.dedent(HA % fields)).options("kubernetes")
    assert {key: got[key] for key in options} == options


@pytest.mark.parametrize("fields, expected", [
    ("kubelet: {failCgroupV1: 'no'}", "spec.kubernetes.kubelet.failCgroupV1: must be true or false, not a string"),
    ("kubelet: {failCgroupV1: 0}", "spec.kubernetes.kubelet.failCgroupV1: must be true or false, not a number"),
    ("kubelet: {evictionHard: [nodefs.available]}", "spec.kubernetes.kubelet.evictionHard: must be a mapping, not a list"),
    ("kubelet: {evictionHard: {nodefs.available: 0}}",
     "spec.kubernetes.kubelet.evictionHard.'nodefs.available': must be a string, not a number"),
    ("kubelet: {evictionHard: {nodefs.available: ten}}",
     "spec.kubernetes.kubelet.evictionHard.'nodefs.available': must be a quantity (100Mi) or a percentage (10%), not 'ten'"),
    ("kubelet: {evictionHard: {disk.available: 1Gi}}",
     "spec.kubernetes.kubelet.evictionHard: must be one of memory.available, nodefs.available"),
    ("kubelet: {imageGCHighThresholdPercent: '100'}",
     "spec.kubernetes.kubelet.imageGCHighThresholdPercent: must be a whole number, not a string"),
    ("kubelet: {imageGCHighThresholdPercent: 80}", "spec.kubernetes.kubelet.imageGCHighThresholdPercent: must be at least 81"),
    ("kubelet: {imageGCHighThresholdPercent: 101}", "spec.kubernetes.kubelet.imageGCHighThresholdPercent: must be at most 100"),
    ("kubeProxy: {conntrackMaxPerCore: -1}", "spec.kubernetes.kubeProxy.conntrackMaxPerCore: must be at least 0, not -1"),
    ("kubeProxy: {conntrackMaxPerCore: 1.5}", "spec.kubernetes.kubeProxy.conntrackMaxPerCore: must be a whole number"),
    ("kubeProxy: {mode: userspace}", "spec.kubernetes.kubeProxy.mode: must be one of iptables, ipvs, nftables, not"),
    ("kubeProxy: {conntrack: {maxPerCore: 0}}", "spec.kubernetes.kubeProxy.conntrack: is not a known field (known: "
                                                "conntrackMaxPerCore, mode)"),
    ("kubeProxy: iptables", "spec.kubernetes.kubeProxy: must be a mapping, not a string"),
])
def test_kubelet_and_kube_proxy_options_are_refused_naming_the_field(fields, expected):
    found = problems(HA % fields)
    assert len(found) == 1 and found[0].startswith(expected), found


KURL_KUBERNETES = """
    apiVersion: cluster.kurl.sh/v1beta1
    kind: Installer
    spec:
      kubernetes: {version: 1.35.x, maxPodsPerNode: 200, evictionThresholdResources: %s}
      flannel: {version: latest}
"""


@pytest.mark.parametrize("text, eviction", [
    # kURL writes the string after `evictionHard:` in a kubelet patch: JSON or flow YAML.
    ("""'{"memory.available": "200Mi", "nodefs.available": "10%"}'""",
     {"memory.available": "200Mi", "nodefs.available": "10%"}),
    ("'{nodefs.available: 0%, imagefs.available: 0%}'", {"nodefs.available": "0%", "imagefs.available": "0%"}),
])
def test_kurl_eviction_threshold_resources_become_the_kubelets_eviction_hard(text, eviction):
    installer = parse_installer(textwrap.dedent(KURL_KUBERNETES % text))
    assert installer.addons["kubernetes"]["kubelet"] == {"maxPods": 200, "evictionHard": eviction}
    assert installer.warnings == [] and installer.unsupported == []


@pytest.mark.parametrize("text", ["'memory.available<100Mi'", "'{memory.available: 100}'", "'[1, 2]'", "'{{'", "5"])
def test_kurl_eviction_threshold_resources_that_are_no_mapping_are_ignored_with_a_warning(text):
    installer = parse_installer(textwrap.dedent(KURL_KUBERNETES % text))
    assert installer.addons["kubernetes"]["kubelet"] == {"maxPods": 200}
    assert installer.unsupported == ["spec.kubernetes.evictionThresholdResources"]
    assert len(installer.warnings) == 1
    assert installer.warnings[0].startswith("spec.kubernetes.evictionThresholdResources: ")
    assert installer.warnings[0].endswith("is not YAML text of a mapping of strings (kURL writes it into the "
                                          "kubelet's configuration); ignored")


def test_kurl_eviction_thresholds_are_checked_as_the_specs():
    found = problems(KURL_KUBERNETES % "'{disk.available: 10%}'")
    assert len(found) == 1 and found[0].startswith("spec.kubernetes.kubelet.evictionHard: must be one of "), found
