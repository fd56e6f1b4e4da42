# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Python library missing on the controller is reported with the pip package to install."""

from __future__ import annotations

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError, missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.lock import resolve
from ansible_collections.mooring.cluster.plugins.module_utils.spec import schema
from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import SpecError


def test_the_message_names_the_pip_package_and_the_runtime_list():
    error = missing_library("jsonschema", "to validate installer specs", ImportError("No module named 'jsonschema'"), SpecError)
    assert isinstance(error, SpecError) and isinstance(error, MooringError)
    text = str(error)
    assert "pip install 'jsonschema'" in text
    assert "requirements.txt" in text
    assert "No module named 'jsonschema'" in text
    assert "\n" not in text


def test_an_installer_spec_without_jsonschema_says_what_to_install(monkeypatch):
    monkeypatch.setattr(schema, "HAS_JSONSCHEMA", False)
    monkeypatch.setattr(schema, "JSONSCHEMA_IMPORT_ERROR", ImportError("No module named 'jsonschema'"))
    with pytest.raises(SpecError, match=r"pip install 'jsonschema'"):
        resolve.read_installer("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nmetadata: {name: x}\n"
                               "spec: {kubernetes: {version: 1.35.x}, calico: {version: latest}}\n")
