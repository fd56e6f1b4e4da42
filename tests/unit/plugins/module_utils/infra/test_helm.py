# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""infra/helm.py: a cluster-class chart (tests/data/charts/cluster-class-example) rendered with
the real helm that ``scripts/tools.sh helm`` provides, every object validated against the CRD
schemas (tests/data/capi, the ClusterClass of a release with variables and patches); helm's
failures as one HelmError line. No helm is a failure here, never a skip."""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter

import pytest
from capi_schema import SCHEMAS, load_schemas, validate
from helm_support import helm_binary

from ansible_collections.mooring.cluster.plugins.module_utils.infra import helm as h

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
CHART = os.path.join(ROOT, "tests", "data", "charts", "cluster-class-example")
RELEASE = "openstack-example-1-33"
CHART_VERSION = "v2"
CC_SCHEMAS = load_schemas("clusterclass-v1beta1-variables.yaml")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
KINDS = Counter({"ClusterClass": 1, "KubeadmControlPlaneTemplate": 1, "KubeadmConfigTemplate": 1,
                 "OpenStackClusterTemplate": 1, "OpenStackMachineTemplate": 2})


def render(helm_bin, values=None, **kwargs):
    return h.template(CHART, RELEASE, values or {}, namespace="clusters", kube_version="v1.33.9", helm=helm_bin, **kwargs)


def by_name(objects):
    return {(o["kind"], o["metadata"]["name"]): o for o in objects}


def test_example_chart_renders_valid_objects():
    helm_bin = helm_binary()
    objects = render(helm_bin)
    assert Counter(o["kind"] for o in objects) == KINDS
    prefix = "%s-%s" % (RELEASE, CHART_VERSION)
    for obj in objects:
        name = obj["metadata"]["name"]
        assert validate(obj, CC_SCHEMAS) == [], name
        assert DNS1123_SUBDOMAIN.match(name) and len(name) <= 63, name
        assert name == prefix or name.startswith(prefix + "-"), name
        assert obj["metadata"]["namespace"] == "clusters"
        if obj["kind"] == "OpenStackMachineTemplate":  # the CRD's CEL rule, which jsonschema cannot run
            spec = obj["spec"]["template"]["spec"]
            assert spec.get("flavor") or spec.get("flavorID")
    # every reference of the ClusterClass points at an object of the chart
    exported = {(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objects}
    cc = next(o for o in objects if o["kind"] == "ClusterClass")
    spec = cc["spec"]
    refs = [spec["controlPlane"]["ref"], spec["controlPlane"]["machineInfrastructure"]["ref"], spec["infrastructure"]["ref"]]
    for md in spec["workers"]["machineDeployments"]:
        refs += [md["template"]["bootstrap"]["ref"], md["template"]["infrastructure"]["ref"]]
    kcp = next(o for o in objects if o["kind"] == "KubeadmControlPlaneTemplate")
    refs.append(kcp["spec"]["template"]["spec"]["machineTemplate"]["infrastructureRef"])
    for ref in refs:
        assert (ref["apiVersion"], ref["kind"], ref["name"]) in exported
    assert kcp["spec"]["template"]["spec"]["version"] == "v1.33.9"


def test_variables_and_patches_come_from_the_chart():
    helm_bin = helm_binary()
    objects = render(helm_bin)
    spec = next(o for o in objects if o["kind"] == "ClusterClass")["spec"]
    variables = {v["name"]: v for v in spec["variables"]}
    assert len(variables) >= 3 and len(spec["patches"]) >= 3
    assert variables["worker_flavor"]["schema"]["openAPIV3Schema"]["default"] == "SCS-4V-8-50"  # from values.yaml
    assert variables["dns_nameservers"]["schema"]["openAPIV3Schema"]["default"] == ["9.9.9.9", "149.112.112.112"]
    assert variables["worker_root_disk"]["schema"]["openAPIV3Schema"]["default"] == 50
    kinds = {(o["apiVersion"], o["kind"]) for o in objects}
    classes = {md["class"] for md in spec["workers"]["machineDeployments"]}
    from_variable = from_template = 0
    for patch in spec["patches"]:
        # Cluster API's own Go templates pass through helm unrendered
        assert "{{" in patch.get("enabledIf", "{{")
        for definition in patch["definitions"]:
            selector = definition["selector"]
            assert (selector["apiVersion"], selector["kind"]) in kinds
            assert set(selector["matchResources"].get("machineDeploymentClass", {}).get("names", [])) <= classes
            for jp in definition["jsonPatches"]:
                assert jp["path"].startswith("/spec/template/spec/")
                value_from = jp["valueFrom"]
                if "variable" in value_from:
                    from_variable += 1
                    assert value_from["variable"] in variables
                else:
                    from_template += 1
                    assert "{{ ." in value_from["template"]
    assert from_variable >= 3 and from_template >= 2
    kct = next(o for o in objects if o["kind"] == "KubeadmConfigTemplate")
    assert kct["spec"]["template"]["spec"]["joinConfiguration"]["nodeRegistration"]["name"] == "{{ local_hostname }}"


def test_values_override_the_chart_defaults():
    helm_bin = helm_binary()
    values = {"worker": {"class": "big-worker", "rootDiskGiB": 0},
              "network": {"externalNetworkID": "0c5f1f5e-3a4f-4a8e-9bd5-5a5b5f0c1e2d", "dnsNameservers": ["10.0.0.53"]}}
    objects = by_name(render(helm_bin, values))
    prefix = "%s-%s" % (RELEASE, CHART_VERSION)
    worker = objects[("OpenStackMachineTemplate", prefix + "-big-worker")]
    assert "rootVolume" not in worker["spec"]["template"]["spec"]
    assert worker["spec"]["template"]["spec"]["flavor"] == "SCS-4V-8-50"  # not overridden: deep merge
    ost = objects[("OpenStackClusterTemplate", prefix + "-cluster")]["spec"]["template"]["spec"]
    assert ost["externalNetwork"] == {"id": "0c5f1f5e-3a4f-4a8e-9bd5-5a5b5f0c1e2d"}
    assert ost["managedSubnets"][0]["dnsNameservers"] == ["10.0.0.53"]
    for obj in objects.values():
        assert validate(obj, CC_SCHEMAS) == []


def test_old_clusterclass_schema_has_no_variables():
    """Why the newer ClusterClass schema is needed; and that it still catches mistakes."""
    helm_bin = helm_binary()
    cc = next(o for o in render(helm_bin) if o["kind"] == "ClusterClass")
    assert any("Additional properties" in e and "variables" in e for e in validate(cc, SCHEMAS))
    bad = dict(cc, spec=dict(cc["spec"]))
    bad["spec"]["variables"] = [{k: v for k, v in cc["spec"]["variables"][0].items() if k != "required"}]
    bad["spec"]["patches"] = [{"name": "p", "definitions": [{"selector": cc["spec"]["patches"][0]["definitions"][0]["selector"],
                                                             "jsonPatches": [{"path": "/spec/template/spec/flavor", "value": "x"}]}]}]
    errors = validate(bad, CC_SCHEMAS)
    assert any("'required' is a required property" in e for e in errors), errors
    assert any("'op' is a required property" in e for e in errors), errors


def test_template_error_is_one_helm_error(tmp_path):
    helm_bin = helm_binary()
    chart = tmp_path / "cluster-class"
    shutil.copytree(CHART, str(chart))
    (chart / "templates" / "broken.yaml").write_text("kind: {{ include \"no-such-template\" . }}\n")
    with pytest.raises(h.HelmError) as err:
        h.template(str(chart), RELEASE, {}, helm=helm_bin)
    message = str(err.value)
    assert len(err.value.problems) == 1 and "\n" not in message
    assert message.startswith("helm template of %s failed (exit 1): " % chart)
    assert "broken.yaml" in message and "no-such-template" in message


def test_dependencies_must_be_vendored(tmp_path):
    helm_bin = helm_binary()
    chart = tmp_path / "cluster-class"
    shutil.copytree(CHART, str(chart))
    with open(chart / "Chart.yaml", "a", encoding="utf-8") as f:
        f.write("dependencies:\n  - name: common\n    version: 2.0.0\n    repository: https://charts.example.invalid\n")
    with pytest.raises(h.HelmError, match=r"helm template of .*cluster-class failed .*missing in charts/ directory"):
        h.template(str(chart), RELEASE, {}, helm=helm_bin)


def test_missing_helm_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv(h.HELM_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(h.HelmError) as err:
        h.template(CHART, RELEASE, {})
    assert str(err.value) == "helm is needed to render %s; install Helm 3.8+ or set MOORING_HELM" % CHART
    monkeypatch.setenv(h.HELM_ENV, str(tmp_path / "helm"))
    with pytest.raises(h.HelmError, match="MOORING_HELM names .*/helm, which is not an executable file"):
        h.template(CHART, RELEASE, {})


def test_not_a_chart(tmp_path):
    with pytest.raises(h.HelmError, match="is not a Helm chart: it has no Chart.yaml"):
        h.template(str(tmp_path), RELEASE, {}, helm="/nonexistent")


def fake_helm(tmp_path, script):
    path = tmp_path / "helm"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return str(path)


def test_arguments_and_isolation(tmp_path, monkeypatch):
    """Offline flags: namespace always, the values file, kube-version; private helm homes."""
    monkeypatch.setenv(h.HELM_ENV, fake_helm(tmp_path, 'cat "$7" >/dev/null\n'
                                                       'printf -- "---\\n---\\nargs: \'%s\'\\nhome: \'%s\'\\n---\\n" "$*" "$HELM_CONFIG_HOME"\n'))
    objects = h.template(CHART, RELEASE, {"a": 1})
    assert len(objects) == 1  # empty documents dropped
    args = objects[0]["args"].split()
    assert args[:4] == ["template", RELEASE, CHART, "--namespace"] and args[4] == "default"
    assert args[5] == "--values" and args[6].endswith("values.yaml") and "--kube-version" not in args
    assert objects[0]["home"].startswith(os.path.dirname(args[6]))
    assert not os.path.exists(args[6])  # the temporary directory is gone
    objects = h.template(CHART, RELEASE, {}, namespace="ns", kube_version="1.33")
    assert objects[0]["args"].split()[4] == "ns" and objects[0]["args"].split()[-2:] == ["--kube-version", "1.33"]


def test_output_that_is_not_objects(tmp_path):
    with pytest.raises(h.HelmError, match="printed a document that is not an object: 'just a string'"):
        h.template(CHART, RELEASE, {}, helm=fake_helm(tmp_path, "echo 'just a string'\n"))
    with pytest.raises(h.HelmError, match="printed invalid YAML"):
        h.template(CHART, RELEASE, {}, helm=fake_helm(tmp_path, "echo 'a: [b'\n"))


def test_stderr_tail_and_timeout(tmp_path):
    script = "echo one >&2; echo two >&2; echo three >&2; echo four >&2; exit 3\n"
    with pytest.raises(h.HelmError) as err:
        h.template(CHART, RELEASE, {}, helm=fake_helm(tmp_path, script))
    assert str(err.value) == "helm template of %s failed (exit 3): two; three; four" % CHART
    script = "echo 'a warning' >&2; echo 'Error: bad chart' >&2; echo '  in detail:' >&2; echo '' >&2; echo 'Use --debug flag' >&2; exit 1\n"
    with pytest.raises(h.HelmError) as err:
        h.template(CHART, RELEASE, {}, helm=fake_helm(tmp_path, script))
    assert str(err.value) == "helm template of %s failed (exit 1): Error: bad chart; in detail:" % CHART
    with pytest.raises(h.HelmError, match=r"did not finish within 0.5s"):
        h.template(CHART, RELEASE, {}, helm=fake_helm(tmp_path, "exec sleep 5\n"), timeout=0.5)
