# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: reading a solution archive that is an ISO 9660 image (pycdlib).

Files are named by their Rock Ridge names; a hard-linked file is read as a regular file under each name.
"""


from __future__ import annotations

import posixpath

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import (
    HAS_PYCDLIB,
    MAX_ENTRIES,
    PYCDLIB_IMPORT_ERROR,
    Entry,
    SolutionError,
    pycdlib,
    require,
    unpacked_budget,
)


class IsoReader:
    """An ISO 9660 image with Rock Ridge names (pycdlib); every file's data lies inside the image."""

    format = "iso"

    def __init__(self, fp, path, size):
        require(HAS_PYCDLIB, "pycdlib", PYCDLIB_IMPORT_ERROR)
        self.path = path
        self._fp = fp
        self._iso = pycdlib.PyCdlib()
        try:
            self._iso.open_fp(fp)
        except Exception as exc:  # pycdlib raises several unrelated types on corrupt images
            fp.close()
            raise SolutionError("%s: cannot read the ISO 9660 image: %s" % (path, excerpt(str(exc), 200))) from None
        try:
            if not self._iso.has_rock_ridge():
                raise SolutionError(
                    "%s: the ISO 9660 image has no Rock Ridge names; build it with `mooring solution build`" % path
                )
            self.entries = []
            self._list(size)
        except SolutionError:
            self.close()
            raise
        except Exception as exc:  # pycdlib: several unrelated types on corrupt images
            self.close()
            raise SolutionError("%s: cannot read the ISO 9660 image: %s" % (path, excerpt(str(exc), 200))) from None

    def _list(self, size):
        """List every member by its Rock Ridge name. A hard-linked file (``hardlink``, then
        genisoimage/mkisofs) is several records of one extent, each a regular file here: its data
        counts once against the image's size, and once per name against :func:`layout.unpacked_budget`."""
        extents = {}  # extent -> the longest length a record gives its data
        unique = total = 0
        budget = unpacked_budget(size)
        for dirpath, dirs, files in self._iso.walk(rr_path="/"):
            base = dirpath.strip("/")
            if len(self.entries) + len(dirs) + len(files) > MAX_ENTRIES:
                raise SolutionError("%s: more than %d members, the limit" % (self.path, MAX_ENTRIES))
            for d in dirs:
                self.entries.append(Entry(posixpath.join(base, d), "dir"))
            for f in files:
                rr = "/" + posixpath.join(base, f)
                rec = self._iso.get_record(rr_path=rr)
                rel = posixpath.join(base, f)
                if rec.is_symlink():
                    target = rec.rock_ridge.symlink_path().decode("utf-8", "replace")
                    self.entries.append(Entry(rel, "symlink", 0, target, rr))
                    continue
                length, extent = rec.get_data_length(), rec.extent_location()
                if length > extents.get(extent, 0):
                    unique += length - extents.get(extent, 0)
                    extents[extent] = length
                total += length
                if length > size or unique > size:
                    raise SolutionError("%s: %s: declares %d bytes of data, more than the image holds"
                                        % (self.path, excerpt(rel, 120), length))
                if total > budget:
                    raise SolutionError("%s: %s: the files up to here hold %d bytes (a hard-linked file once per name), "
                                        "more than the %d bytes an image of %d bytes may hold"
                                        % (self.path, excerpt(rel, 120), total, budget, size))
                self.entries.append(Entry(rel, "file", length, None, rr))

    def stream(self, entry, out):
        try:
            self._iso.get_file_from_iso_fp(out, rr_path=entry.raw)
        except SolutionError:
            raise
        except Exception as exc:  # pycdlib: several unrelated types on corrupt images
            raise SolutionError("%s: %s: cannot read the member: %s"
                                % (self.path, excerpt(entry.path, 120), excerpt(str(exc), 200))) from None

    def close(self):
        try:
            self._iso.close()
        except Exception:  # noqa: BLE001, S110 - closing a half-open image; nothing to report
            pass
        finally:
            self._fp.close()
