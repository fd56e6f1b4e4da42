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
