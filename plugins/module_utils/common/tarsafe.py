# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: reading a tar whose member headers are measured before they are read.

Standard library only (hosts use it). Python's tarfile reads a pax extended header or a GNU long
name whole, as one ``read()`` of the size its header block declares, before anything else can
look at it: a tar.gz of a few MiB declaring a 2 GiB pax header costs 2 GiB of memory and a minute
of decompression. Every tar this collection reads (release archives, bundles and their packages,
a .deb's control archive, solution archives) is opened through :func:`open_tar`, which is
``tarfile.open`` (any read mode: plain, gzip, bzip2, xz; a path or a file object; random access
or a stream) with these bounds, each checked before the bytes it is about are read:

- a pax extended or global header, a Solaris extended header or a GNU long name or link name
  larger than :data:`MAX_HEADER` is refused from its 512-byte header block;
- a size below 0 or above :data:`MAX_SIZE` (in a header block, or in the pax ``size`` that
  replaces it) is refused: tarfile would step backwards through the archive or read it all;
- the headers in front of one member (pax, GNU long names, old GNU sparse extension blocks and
  sparse maps) are read through a budget of :data:`MAX_MEMBER_HEADERS` bytes and at most
  :data:`MAX_CHAIN` headers, so a chain of small ones is refused as well as one large one;
- pax global headers (which tarfile keeps and applies to every later member) are at most
  :data:`MAX_HEADER` bytes in all and at most :data:`MAX_GLOBAL_KEYS` keys per archive.

A refusal is :class:`HeaderBoundError` with one line naming the header, its size and its offset
in the (uncompressed) tar, but not the archive: the caller knows the archive's name and raises
its own error with it. It is neither a ``tarfile.TarError`` nor an ``OSError``, so
``tarfile.open`` does not swallow it while it tries one compression after another.
"""

from __future__ import annotations

import tarfile

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

# The largest pax extended or global header, GNU long name or long link name.
MAX_HEADER = 1 << 20
# What the headers in front of one member may read in all, and how many of them there may be.
MAX_MEMBER_HEADERS = 4 * MAX_HEADER
MAX_CHAIN = 8
# Keys of pax global headers an archive may set (tarfile applies each to every later member).
MAX_GLOBAL_KEYS = 64
# The largest member size there can be (a file size is a signed 64-bit number).
MAX_SIZE = (1 << 63) - 1

_GLOBAL = tarfile.XGLTYPE  # for _proc_member, where "tarfile" is the TarFile, as tarfile names it
_EXTENDED = {tarfile.XHDTYPE: "pax extended header", tarfile.XGLTYPE: "pax global header",
             tarfile.SOLARIS_XHDTYPE: "Solaris extended header", tarfile.GNUTYPE_LONGNAME: "GNU long name",
             tarfile.GNUTYPE_LONGLINK: "GNU long link name"}


class HeaderBoundError(MooringError):
    """A tar header past the bounds of this module (one line, without the archive's name)."""


class _HeaderReads(object):
    """The file object tarfile reads one member's headers through: a read past the member's budget
    (:data:`MAX_MEMBER_HEADERS`) is refused before it is made."""

    def __init__(self, fileobj, offset):
        self.fileobj = fileobj
        self.offset = offset
        self.left = MAX_MEMBER_HEADERS
        self.headers = 0

    def read(self, size=-1):
        if size is None or size < 0 or size > self.left:
            raise HeaderBoundError("more than %d bytes of headers for the member at offset %d (pax, GNU long "
                                   "names, sparse maps)" % (MAX_MEMBER_HEADERS, self.offset))
        self.left -= size
        return self.fileobj.read(size)

    def tell(self):
        return self.fileobj.tell()

    def __getattr__(self, name):
        return getattr(self.fileobj, name)


def _check_size(info):
    if not 0 <= info.size <= MAX_SIZE:
        raise HeaderBoundError("a member of %d bytes at offset %d (not a possible size)" % (info.size, info.offset))


class _BoundedInfo(tarfile.TarInfo):
    """tarfile's TarInfo, measuring each header block before tarfile reads what the block announces."""

    def _proc_member(self, tarfile):
        # tarfile's hook for subclasses (the parameter is the TarFile, named as tarfile names it): every
        # header block, a member's own and each pax or GNU header in front of it, passes here after its
        # 512 bytes are parsed and before anything more is read.
        _check_size(self)
        kind = _EXTENDED.get(self.type)
        if kind and self.size > MAX_HEADER:
            raise HeaderBoundError("a %s of %d bytes at offset %d (at most %d)" % (kind, self.size, self.offset, MAX_HEADER))
        if self.type == _GLOBAL:
            tarfile.global_header_bytes += self.size
            if tarfile.global_header_bytes > MAX_HEADER:
                raise HeaderBoundError("pax global headers of more than %d bytes in all (the one at offset %d)"
                                       % (MAX_HEADER, self.offset))
        reads = tarfile.fileobj
        if isinstance(reads, _HeaderReads):  # a header after a pax or GNU one: the same member's budget
            return self._proc_counted(tarfile, reads)
        reads = tarfile.fileobj = _HeaderReads(tarfile.fileobj, self.offset)
        try:
            member = self._proc_counted(tarfile, reads)
        finally:
            tarfile.fileobj = reads.fileobj
        _check_size(member)  # a pax "size" replaces the one of the header block
        if len(tarfile.pax_headers) > MAX_GLOBAL_KEYS:
            raise HeaderBoundError("pax global headers with more than %d keys (at offset %d)"
                                   % (MAX_GLOBAL_KEYS, self.offset))
        return member

    def _proc_counted(self, tarfile, reads):
        reads.headers += 1
        if reads.headers > MAX_CHAIN:
            raise HeaderBoundError("more than %d headers for the member at offset %d" % (MAX_CHAIN, reads.offset))
        return super()._proc_member(tarfile)


class BoundedTarFile(tarfile.TarFile):
    """``tarfile.TarFile`` whose headers are read through the bounds of this module."""

    tarinfo = _BoundedInfo

    def __init__(self, *args, **kwargs):
        self.global_header_bytes = 0  # before TarFile reads the first member
        super().__init__(*args, **kwargs)


def open_tar(name=None, mode="r", fileobj=None, **kwargs):
    """``tarfile.open(name, mode, fileobj, ...)`` with every header measured before it is read (see the
    module docstring). Raises what tarfile raises, and :class:`HeaderBoundError` for a header past the bounds
    (from here or from any later read of a member header: iterating, ``getmember``, ``next``)."""
    return BoundedTarFile.open(name, mode, fileobj, **kwargs)
