# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: reading a solution archive that is a tar (plain, gzip, bzip2 or xz).

The reader trusts nothing in the file: every header is measured before tarfile reads what it
announces (``common/tarsafe.py``: no pax header or GNU long name over 1 MiB); no read goes past
the unpacked-size budget, and a member whose declared size would take the archive past that
budget (:data:`layout.MAX_UNPACKED_BYTES`, and for a compressed tar :data:`layout.MAX_RATIO`
times the file's size, at least :data:`layout.RATIO_FLOOR`) is refused from its header, before a
byte of it is decompressed. So a small compressed file that unpacks to gigabytes is refused at once.
"""


from __future__ import annotations

import bz2
import errno
import gzip
import tarfile
import zlib

from ansible_collections.mooring.cluster.plugins.module_utils.common import tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.fileio import TooLargeError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    MAX_ENTRIES,
    MAX_RATIO,
    MAX_TRAILER,
    RATIO_FLOOR,
    Entry,
    SolutionError,
    unpacked_budget,
)

try:
    import lzma

    _LZMA_ERRORS = (lzma.LZMAError,)
except ImportError:  # pragma: no cover - a Python built without lzma
    lzma = None
    _LZMA_ERRORS = ()


class _Bounded(object):
    """A file object for tarfile that refuses an unbounded read and anything past ``limit`` (TooLargeError) (the
    headers themselves are measured by common/tarsafe.py before tarfile reads them)."""

    def __init__(self, fp, limit):
        self._fp = fp
        self.limit = limit
        self.last_block = (None, b"")  # (offset, bytes) of the last block-sized read: the end marker

    def read(self, size=-1):
        if size is None or size < 0:
            raise TooLargeError(errno.EFBIG, "an unbounded read of the tar stream")
        where = self._fp.tell()
        if where + size > self.limit + 512 * 1024:  # a bit of slack for the end-of-archive blocks
            raise TooLargeError(errno.EFBIG, "the members unpack to more than %d bytes" % self.limit)
        data = self._fp.read(size)
        if size == tarfile.BLOCKSIZE:
            self.last_block = (where, data)
        return data

    def seek(self, pos, whence=0):
        if whence == 0 and pos > self.limit:
            raise TooLargeError(errno.EFBIG, "the members unpack to more than %d bytes" % self.limit)
        return self._fp.seek(pos, whence)

    def tell(self):
        return self._fp.tell()


_READ_ERRORS = (tarfile.TarError, OSError, EOFError, ValueError, OverflowError, zlib.error, UnicodeError,
                TooLargeError, tarsafe.HeaderBoundError) + _LZMA_ERRORS


class TarReader:
    """A tar (plain, gzip, bzip2 or xz), read through :class:`_Bounded` with its headers measured
    (common/tarsafe.py): members are listed from their headers only, and one whose size goes past
    the budget is refused from its header."""

    format = "tar"

    def __init__(self, fp, path, size, compression=None):
        self.path = path
        self._fp = fp
        if compression is None:
            limit = size
            inner = fp
        else:
            limit = unpacked_budget(size)
            if compression == "gzip":
                inner = gzip.GzipFile(fileobj=fp, mode="rb")
            elif compression == "bzip2":
                inner = bz2.BZ2File(fp, mode="rb")
            elif lzma is not None:
                inner = lzma.LZMAFile(fp, mode="rb")
            else:  # pragma: no cover
                fp.close()
                raise SolutionError("%s: an xz-compressed file, and this Python has no lzma module" % path)
        self._inner = inner
        self._bounded = _Bounded(inner, limit)
        self.entries = []
        try:
            self._tar = tarsafe.open_tar(fileobj=self._bounded, mode="r:")  # noqa: SIM115 - closed by close()
            self._list(limit)
        except tarfile.ReadError as exc:
            self.close()
            if not self.entries and str(exc) != "unexpected end of data" and not str(exc).startswith("zlib error"):
                what = "not an ISO 9660 image or a tar archive" if compression is None else \
                    "%s-compressed, but not a tar archive" % compression
                raise SolutionError("%s: %s" % (path, what)) from None
            raise SolutionError("%s: cannot read the tar archive: %s" % (path, excerpt(str(exc), 200))) from None
        except tarsafe.HeaderBoundError as exc:
            self.close()
            raise SolutionError("%s: refused: %s" % (path, exc)) from None
        except TooLargeError as exc:
            self.close()
            raise SolutionError("%s: refused: %s%s" % (path, exc, "" if compression is None else
                                                       " (a compressed tar may unpack to %d times its size, at least %d MiB)"
                                                       % (MAX_RATIO, RATIO_FLOOR >> 20))) from None
        except SolutionError:
            self.close()
            raise
        except _READ_ERRORS as exc:
            self.close()
            raise SolutionError("%s: cannot read the tar archive: %s" % (path, excerpt(str(exc) or type(exc).__name__, 200))) from None

    def _list(self, limit):
        total = 0
        while True:
            m = self._tar.next()
            if m is None:
                break
            if len(self.entries) >= MAX_ENTRIES:
                raise SolutionError("%s: more than %d members, the limit" % (self.path, MAX_ENTRIES))
            if m.isreg() and m.issparse():
                kind = "sparse"
            elif m.isreg():
                kind = "file"
            elif m.isdir():
                kind = "dir"
            elif m.issym():
                kind = "symlink"
            elif m.islnk():
                kind = "hardlink"
            else:
                kind = "other"
            size = m.size if kind == "file" else 0
            total += size
            if m.offset_data + m.size > limit or total > limit:
                raise TooLargeError(errno.EFBIG, "member %s declares %d bytes, past the budget of %d bytes for this archive"
                                    % (excerpt(m.name, 120), m.size, limit))
            self.entries.append(Entry(m.name, kind, size, m.linkname or None, m))
        self._check_end()

    def _check_end(self):
        """A tar must end with an end-of-archive block (tarfile stops quietly at a cut-off or
        corrupt header: that is refused here), and a compressed one where its compression says:
        what follows (the record's padding) is read to the end of the stream, so that a cut-off
        file is refused, and more than MAX_TRAILER bytes there are refused."""
        # the block tarfile read where it stopped (seeking back would make gzip start over)
        where, block = self._bounded.last_block
        if where != self._tar.offset or len(block) < tarfile.BLOCKSIZE or block.strip(b"\0"):
            raise SolutionError("%s: cut off or corrupt after %d members: no end-of-archive block at offset %d"
                                % (self.path, len(self.entries), self._tar.offset))
        if self._inner is self._fp:
            return
        left = MAX_TRAILER
        while True:
            chunk = self._inner.read(min(left + 1, 64 * 1024))
            if not chunk:
                return
            left -= len(chunk)
            if left < 0:
                raise SolutionError("%s: more than %d bytes after the end of the tar archive" % (self.path, MAX_TRAILER))

    def stream(self, entry, out):
        try:
            f = self._tar.extractfile(entry.raw)
            while True:
                chunk = f.read(1024 * 1024)
                if not chunk:
                    break
                out.write(chunk)
        except _READ_ERRORS as exc:
            raise SolutionError("%s: %s: cannot read the member: %s"
                                % (self.path, excerpt(entry.path, 120), excerpt(str(exc) or type(exc).__name__, 200))) from None

    def close(self):
        tar = getattr(self, "_tar", None)
        try:
            if tar is not None:
                tar.close()
            if self._inner is not self._fp:
                self._inner.close()
        except _READ_ERRORS:
            pass
        finally:
            self._fp.close()
