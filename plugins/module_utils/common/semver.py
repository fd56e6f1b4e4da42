# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the one reading of a semantic version (SemVer 2.0, an optional leading ``v``).

The catalog's versions (:mod:`lock.catalog`), a Kubernetes version given to kubeadm (:mod:`cluster.kubeadm`) and a
solution's version (:mod:`solutions.k8s`) are all read here; each module words its own error. Go-template
``semverCompare`` (:mod:`spec.templatesemver`) follows Masterminds' looser grammar on purpose and is not this.
"""

from __future__ import annotations

import functools
import re

# X.Y.Z without leading zeros, then an optional -prerelease (dot-separated identifiers) and +build.
PATTERN = (r"v?(?P<major>0|[1-9][0-9]*)\.(?P<minor>0|[1-9][0-9]*)\.(?P<patch>0|[1-9][0-9]*)"
           r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?")
_VERSION = re.compile(PATTERN + r"\Z")
MAX_LENGTH = 256


@functools.lru_cache(maxsize=4096)
def parse(text):
    """``(major, minor, patch, prerelease or None)`` of ``text``; ValueError when it is not a semantic version."""
    match = _VERSION.match(text) if isinstance(text, str) and len(text) <= MAX_LENGTH else None
    if not match:
        raise ValueError("not a semantic version (X.Y.Z)")
    return int(match.group("major")), int(match.group("minor")), int(match.group("patch")), match.group("pre")


@functools.lru_cache(maxsize=4096)
def precedence(text):
    """A sort key in SemVer 2.0 precedence: a prerelease before its release, numeric identifiers before others and
    compared as numbers, build metadata ignored. ValueError as :func:`parse`."""
    major, minor, patch, pre = parse(text)
    if pre is None:
        return major, minor, patch, (1,)
    return major, minor, patch, (0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")))


def is_exact(text):
    """True when ``text`` is one exact semantic version (not a range or a wildcard such as ``1.35.x``)."""
    try:
        parse(str(text))
    except ValueError:
        return False
    return True
