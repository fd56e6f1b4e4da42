# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: opening a solution archive, one reader interface over tar and ISO 9660.

:func:`open_archive` opens only a regular file (once, never a FIFO or a directory), tells ISO 9660
from tar by content and the compression by its magic bytes, and returns a reader
(:class:`solutions.tarread.TarReader` or :class:`solutions.isoread.IsoReader`) with ``entries``
(:class:`solutions.layout.Entry`), ``stream(entry, out)``, ``format`` and ``close()``.
"""


from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.isoread import IsoReader
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.tarread import TarReader

_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


def open_archive(path):
    """A reader for the archive at ``path`` (ISO 9660 or tar, detected by content).

    Only a regular file is opened (a directory, FIFO, device or socket is refused without
    reading from it); it is opened once and read through that descriptor."""
    fp, st = fileio.open_input(path, "archive", SolutionError)
    try:
        head = fp.read(6)
        fp.seek(0x8001)
        iso = fp.read(5) == b"CD001"
        fp.seek(0)
    except OSError as exc:
        fp.close()
        raise SolutionError("%s: cannot read the archive: %s" % (path, exc.strerror or exc)) from None
    if iso:
        return IsoReader(fp, path, st.st_size)
    for magic, name in _COMPRESSED:
        if head.startswith(magic):
            return TarReader(fp, path, st.st_size, name)
    return TarReader(fp, path, st.st_size)
