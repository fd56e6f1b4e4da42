# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: SHA-256 of files and streams, and the canonical JSON that is hashed.

Standard library only (hosts use it). One place for: the digest of a file, a writer and a
reader that hash what passes through them, and the canonical serialisation (sorted keys, no
whitespace, UTF-8) every digest over structured data is taken of (lock, package keys, stacks).
"""

from __future__ import annotations

import hashlib
import io
import json

CHUNK = 1 << 20


def canonical_json(value):
    """Sorted keys, no whitespace, UTF-8 bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sha256_file(path, counter=None):
    """``(hex digest, size)`` of the file at ``path``, read in chunks.

    ``counter`` (a dict), when given, gets the bytes read added to ``bytes_read``.
    """
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                break
            digest.update(chunk)
            size += len(chunk)
    if counter is not None:
        counter["bytes_read"] = counter.get("bytes_read", 0) + size
    return digest.hexdigest(), size


class HashingWriter(object):
    """Hashes what is written; passes it on to ``handle`` and/or keeps up to ``limit`` bytes in ``buf``."""

    def __init__(self, handle=None, limit=None):
        self.handle = handle
        self.digest = hashlib.sha256()
        self.size = 0
        self.limit = limit
        self.buf = io.BytesIO() if limit is not None else None

    def write(self, data):
        self.digest.update(data)
        self.size += len(data)
        if self.buf is not None and self.size <= self.limit:
            self.buf.write(data)
        if self.handle is not None:
            return self.handle.write(data)
        return len(data)

    def flush(self):
        if self.handle is not None:
            self.handle.flush()

    def hexdigest(self):
        return self.digest.hexdigest()


class HashingReader(object):
    """Wraps a file object: hashes what is read, can drain the rest."""

    def __init__(self, handle):
        self.handle = handle
        self.digest = hashlib.sha256()
        self.size = 0

    def read(self, size=-1):
        data = self.handle.read(size)
        self.digest.update(data)
        self.size += len(data)
        return data

    def drain(self):
        while self.read(CHUNK):
            pass

    def hexdigest(self):
        return self.digest.hexdigest()
