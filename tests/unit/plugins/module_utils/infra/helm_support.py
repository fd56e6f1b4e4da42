# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real helm for the tests that render charts."""

from __future__ import annotations

import functools
import os
import subprocess

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.infra import helm as h

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))


@functools.cache
def helm_binary():
    """$MOORING_HELM (scripts/test.sh sets it), else whatever scripts/tools.sh fetches.

    Called in each test's body, not as a fixture: no helm is a FAILED test with the reason, not
    a setup ERROR and never a skip."""
    path = os.environ.get(h.HELM_ENV)
    if path:
        if not os.access(path, os.X_OK):
            pytest.fail("%s=%s is not executable" % (h.HELM_ENV, path))
        return path
    try:
        proc = subprocess.run([os.path.join(ROOT, "scripts", "tools.sh"), "helm"], capture_output=True, text=True,
                              timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail("helm is needed for these tests and scripts/tools.sh helm could not run: %s" % exc)
    if proc.returncode != 0:
        pytest.fail("helm is needed for these tests; scripts/tools.sh helm failed: %s" % proc.stderr.strip())
    return proc.stdout.strip()
