# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures the solution tests share."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import metalk8s  # noqa: E402


@pytest.fixture(scope="session")
def built_iso(tmp_path_factory):
    """A MetalK8s ISO built once (its source tree ``src-1.0.0`` beside it); tests copy, never change, it."""
    return metalk8s.build(str(tmp_path_factory.mktemp("metalk8s")), "1.0.0")
