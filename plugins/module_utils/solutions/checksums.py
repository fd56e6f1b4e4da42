# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: SHA256SUMS, the checksum list of a solution archive."""


from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt, shown
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SUMS, safe_path

_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")


def parse_sums(text):
    """{path: sha256 hex} and a list of problems from SHA256SUMS content."""
    sums, problems = {}, []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _SUM_LINE.match(line)
        if not m:
            problems.append("%s: line %d: expected '<64 lowercase hex>  <path>'" % (SUMS, n))
            continue
        digest, raw = m.group(1), m.group(2)
        path, bad = safe_path(raw)
        if bad or path != raw:
            problems.append("%s: line %d: %s: %s" % (SUMS, n, excerpt(raw, 200), bad or "path is not in normal form"))
            continue
        if path in sums:
            problems.append("%s: line %d: %s is listed twice" % (SUMS, n, shown(path)))
            continue
        sums[path] = digest
    return sums, problems


def file_sha256(path):
    """The SHA-256 (hex) of the file at ``path``."""
    return sha256_file(path)[0]
