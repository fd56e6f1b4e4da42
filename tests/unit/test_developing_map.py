# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/DEVELOPING.md's map names every backend file, so a newcomer finds each one from there."""

from __future__ import annotations

import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_every_backend_file_is_on_the_map():
    with open(os.path.join(ROOT, "docs", "DEVELOPING.md"), encoding="utf-8") as handle:
        text = handle.read()
    files = []
    for package in ("module_utils", "plugin_utils"):
        for folder, _dirs, names in os.walk(os.path.join(ROOT, "plugins", package)):
            files += [os.path.join(folder, n) for n in names if n.endswith(".py") and n != "__init__.py"]
    assert len(files) > 50, files
    missing = sorted(os.path.relpath(f, ROOT) for f in files if os.path.basename(f) not in text)
    assert not missing, "docs/DEVELOPING.md does not name: %s" % ", ".join(missing)


def _modules_with(base):
    folder = os.path.join(ROOT, "plugins", "modules")
    found = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            text = handle.read()
        if "(%s)" % base in text:
            found[name[:-3]] = text
    return found


def test_host_modules_are_as_the_guide_says():
    """Every host module's main() is Name().execute() (the OpenStack ones too, whose base is a MooringModule); the
    OpenStack base holds the two modules the guide names."""
    with open(os.path.join(ROOT, "docs", "DEVELOPING.md"), encoding="utf-8") as handle:
        text = handle.read()
    mooring = _modules_with("MooringModule")
    assert len(mooring) >= 10, sorted(mooring)
    assert not [n for n, t in mooring.items() if "().execute()" not in t]
    openstack = _modules_with("MooringOpenStackModule")
    assert openstack and all("`%s`" % n in text for n in openstack), sorted(openstack)
    assert not [n for n, t in openstack.items() if "().execute()" not in t]
    with open(os.path.join(ROOT, "plugins", "module_utils", "infra", "openstack_module.py"), encoding="utf-8") as handle:
        assert "class MooringOpenStackModule(MooringModule):" in handle.read()


def test_the_module_budget_is_the_benchmark_s():
    with open(os.path.join(ROOT, "docs", "DEVELOPING.md"), encoding="utf-8") as handle:
        text = handle.read()
    with open(os.path.join(ROOT, "benchmarks", "install_bench.py"), encoding="utf-8") as handle:
        bench = handle.read()
    budget = int(bench.split("\nBUDGET = ", 1)[1].split()[0])
    assert "budget <= %d on the busiest host" % budget in text
