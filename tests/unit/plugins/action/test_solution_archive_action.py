# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The solution_archive action plugin on a MetalK8s-built ISO (real files; the plugin runs on the
controller only): its trust, its flavour, the exported images and the operator rendered with the
repository the images are imported under; refused without a trust anchor when one is required."""

from __future__ import annotations

import importlib
import os
import shutil
import sys

import pytest
from ansible.errors import AnsibleActionFail

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "solutions"))
import metalk8s  # noqa: E402

ARCHIVE = importlib.import_module("ansible_collections.mooring.cluster.plugins.action.solution_archive").ActionModule


@pytest.fixture(scope="module")
def iso(tmp_path_factory):
    # build() raises when skopeo or genisoimage is missing: a failure, not a skip
    return metalk8s.build(str(tmp_path_factory.mktemp("mk")), "1.0.0")


def test_a_metalk8s_iso_is_trusted_by_its_sha256sum_and_rendered(iso, tmp_path, action_plugin):
    out = action_plugin(ARCHIVE, {"path": iso, "require_trust": True, "export_dir": str(tmp_path),
                                  "image_prefix": "solutions.mooring.local"}).run(task_vars={})
    assert out["changed"] and out["flavour"] == "metalk8s"
    assert out["trust"] == {"kind": "sha256sum", "detail": os.path.join(os.path.dirname(iso), "SHA256SUM")}
    assert [i["ref"] for i in out["images"]] == [
        "solutions.mooring.local/example-solution-1.0.0/%s:%s" % it for it in metalk8s.image_list("1.0.0")]
    assert all(os.path.isfile(i["file"]) for i in out["images"])
    deployment = next(d for d in out["operator_rendered"] if d["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == (
        "solutions.mooring.local/example-solution-1.0.0/example-operator:1.0.0")


def test_without_an_anchor_the_import_is_refused_and_nothing_exported(iso, tmp_path, action_plugin):
    alone = tmp_path / "in" / os.path.basename(iso)
    alone.parent.mkdir()
    shutil.copy(iso, alone)
    with pytest.raises(AnsibleActionFail) as exc:
        action_plugin(ARCHIVE, {"path": str(alone), "require_trust": True, "export_dir": str(tmp_path / "out")}).run(task_vars={})
    assert "no trust anchor" in exc.value.message
    assert not (tmp_path / "out").exists()
