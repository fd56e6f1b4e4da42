# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every CLI command over the shared corpus of bad inputs (``cases_*.py`` beside this file).

Each case runs ``mooring`` (or, for what the CLI does not reach, an entry of entries.py) in a
forked child bounded to 2 CPU seconds and 200 MB more than it starts with (harness.py): no
traceback, a one-line error, exit 1 (2 for usage), nothing written outside what the case
allows. The corpus must stay at 200 cases or more, and at 10 or more for each surface
(``SURFACES``: the id prefixes).
"""

from __future__ import annotations

import importlib
import os

import pytest

from . import harness

_HERE = os.path.dirname(os.path.abspath(__file__))
_MODULES = sorted(f[:-3] for f in os.listdir(_HERE) if f.startswith("cases_") and f.endswith(".py"))
CASES = [c for m in _MODULES for c in importlib.import_module("%s.%s" % (__package__, m)).CASES]


SURFACES = ("spec-", "lock-", "bundle-", "pki-", "stack-", "solution-", "template-", "preflight-", "collect-",
            "redact-", "support-", "backup-")


def test_corpus_size_and_unique_ids():
    ids = [c.id for c in CASES]
    assert len(set(ids)) == len(ids), sorted({i for i in ids if ids.count(i) > 1})
    assert len(CASES) >= 200, len(CASES)
    counts = {prefix: sum(1 for i in ids if i.startswith(prefix)) for prefix in SURFACES}
    assert min(counts.values()) >= 10, counts


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path):
    harness.run(case, tmp_path)
