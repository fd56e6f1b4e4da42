# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image directories (``images/<name>/<tag>/``) follow spec.images's name and tag rules whether or
not the manifest lists images: a MetalK8s manifest without spec.images lists every directory, and
such a directory must not bring a name the rules refuse (``images/Evil@sha256/x:y/``)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import build as solution_build
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.manifest import IMAGE_NAME_WHAT, TAG_WHAT, image_dir_problem
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.validate import validate_archive

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import example  # noqa: E402
import metalk8s  # noqa: E402

NAME_RULE = "the name %s must be " + IMAGE_NAME_WHAT + " (at most 128 characters)"
TAG_RULE = "the tag %s must be " + TAG_WHAT


@pytest.mark.parametrize("name, tag, wrong", [
    ("Evil@sha256", "x:y", [NAME_RULE % "'Evil@sha256'", TAG_RULE % "'x:y'"]),
    ("app", "..", [TAG_RULE % "'..'"]),
    ("app", "-1", [TAG_RULE % "'-1'"]),
    ("a" * 129, "1", [NAME_RULE % ("'" + "a" * 76 + "...")]),
    ("UPPER", "1", [NAME_RULE % "'UPPER'"]),
    ("team/app", "1.0", []),
    ("app", "v1_2-3.4", []),
])
def test_image_dir_rules(name, tag, wrong):
    problem = image_dir_problem(name, tag)
    assert problem == ("not an image directory images/NAME/TAG: " + "; ".join(wrong) if wrong else None)


def _iso_with(tmp_path, built_iso, spec_images):
    src = str(tmp_path / "src")
    shutil.copytree(os.path.join(os.path.dirname(built_iso), "src-1.0.0"), src, symlinks=True)
    shutil.copytree(os.path.join(src, "images", "example-app", "1.0.0"), os.path.join(src, "images", "Evil@sha256", "x:y"))
    if not spec_images:
        path = os.path.join(src, "manifest.yaml")
        with open(path) as f:
            data = yaml.safe_load(f)
        del data["spec"]["images"]  # MetalK8s then lists every image directory
        with open(path, "w") as f:
            yaml.safe_dump(data, f)
    return metalk8s.build_iso(src, str(tmp_path / os.path.basename(built_iso)), "1.0.0")


@pytest.mark.parametrize("spec_images", [False, True], ids=["without-spec-images", "with-spec-images"])
def test_a_metalk8s_image_directory_name_is_checked(built_iso, tmp_path, spec_images):
    iso = _iso_with(tmp_path, built_iso, spec_images)
    with pytest.raises(SolutionError) as info:
        validate_archive(iso)
    assert info.value.problems == ["%s: images/Evil@sha256/x:y: not an image directory images/NAME/TAG: %s; %s"
                                   % (iso, NAME_RULE % "'Evil@sha256'", TAG_RULE % "'x:y'")]


def test_a_mooring_image_directory_name_is_checked(tmp_path):
    src = example.write_source(str(tmp_path / "src"), "1.0.0")
    shutil.copytree(os.path.join(src, "images", "example-app", "1.0.0"), os.path.join(src, "images", "Evil", "x:y"))
    with pytest.raises(SolutionError) as info:
        solution_build.build_archive(src, str(tmp_path / "e.tar"))
    assert "images/Evil/x:y: not an image directory images/NAME/TAG: %s; %s" % (NAME_RULE % "'Evil'", TAG_RULE % "'x:y'") \
        in "\n".join(info.value.problems)
