# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's route check is the lab's: tests/lab/lab.py loads the product's general guard by path (before
``make setup``, with no collection importable) and adds its own hint; the product module has no stand-in error."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

PROBE = r'''
import importlib.util, sys
spec = importlib.util.spec_from_file_location("mooring_lab", sys.argv[1])
lab = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lab)
assert "ansible_collections" not in sys.modules, "the collection was imported"
try:
    lab.route_check("192.0.2.1")  # TEST-NET-1: never a lab address; `ip route get` sends nothing
except lab.LabError as exc:
    print(str(exc))
else:
    print("NOT REFUSED")
'''


def test_the_lab_loads_the_guard_without_the_collection_and_adds_its_hint():
    run = subprocess.run([sys.executable, "-I", "-c", PROBE, os.path.join(ROOT, "tests", "lab", "lab.py")],
                         capture_output=True, text=True, check=False, env={"PATH": os.environ.get("PATH", "")})
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("refusing to connect to 192.0.2.1"), run.stdout
    assert "netavark" in run.stdout and "Nothing was sent" in run.stdout


def test_the_product_guard_has_no_stand_in_error_class():
    with open(os.path.join(ROOT, "plugins", "module_utils", "common", "netguard.py"), encoding="utf-8") as handle:
        text = handle.read()
    assert "except ImportError" not in text and "class MooringError" not in text and "mlab" not in text
