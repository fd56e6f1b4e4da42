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

    def _directories(self):
        """``{extent: (record, ISO path)}`` of every directory in the plain ISO 9660 tree, which Rock Ridge child links
        point into; a directory reached twice is a loop and refused."""
        root = self._iso.get_record(iso_path="/")
        found, todo = {}, [(root, "")]
        while todo:
            rec, iso_path = todo.pop()
            if rec.extent_location() in found:
                raise SolutionError("%s: %s: a directory reached twice (a loop in the image)" % (self.path, iso_path))
            found[rec.extent_location()] = (rec, iso_path)
            if len(found) > MAX_ENTRIES:
                raise SolutionError("%s: more than %d directories, the limit" % (self.path, MAX_ENTRIES))
            todo.extend((c, "%s/%s" % (iso_path, c.file_identifier().decode("ascii", "replace")))
                        for c in _children(rec) if c.is_dir())
        return found

    def _list(self, size):
        """List every member by its Rock Ridge name, walking the records themselves: a directory genisoimage moved
        under ``rr_moved`` (deeper than ISO 9660's 8 levels) is followed from its child link and read at its
        Rock Ridge path, ``rr_moved`` itself left out. (pycdlib's own walk finds a moved directory by its name in
        the moved directory's parent, and loops when names repeat down the tree.) A hard-linked file
        (``hardlink``, then genisoimage/mkisofs) is several records of one extent, each a regular file here: its
        data counts once against the image's size, and once per name against :func:`layout.unpacked_budget`."""
        directories = self._directories()
        extents = {}  # extent -> the longest length a record gives its data
        unique = total = 0
        budget = unpacked_budget(size)
        todo, visited = [(self._iso.get_record(iso_path="/"), "", "")], set()
        while todo:
            rec, base, iso_base = todo.pop()
            for child in _children(rec):
                rr = child.rock_ridge
                if rr is None or rr.relocated_record():  # no name here, or moved: reached from its child link
                    continue
                if len(self.entries) >= MAX_ENTRIES:
                    raise SolutionError("%s: more than %d members, the limit" % (self.path, MAX_ENTRIES))
                rel = posixpath.join(base, rr.name().decode("utf-8", "replace"))
                iso_path = "%s/%s" % (iso_base, child.file_identifier().decode("ascii", "replace"))
                if rr.child_link_record_exists():
                    if rr.child_link_extent() not in directories:
                        raise SolutionError("%s: %s: a Rock Ridge child link to no directory" % (self.path, excerpt(rel, 120)))
                    child, iso_path = directories[rr.child_link_extent()]
                elif child.is_dir() and not base and _only_moved(child):
                    continue  # genisoimage's rr_moved: it holds only what child links reach
                if child.is_dir():
                    if child.extent_location() in visited:
                        raise SolutionError("%s: %s: a directory reached twice (a loop in the image)"
                                            % (self.path, excerpt(rel, 120)))
                    visited.add(child.extent_location())
                    self.entries.append(Entry(rel, "dir"))
                    todo.append((child, rel, iso_path))
                    continue
                if child.is_symlink():
                    target = rr.symlink_path().decode("utf-8", "replace")
                    self.entries.append(Entry(rel, "symlink", 0, target, iso_path))
                    continue
                length, extent = child.get_data_length(), child.extent_location()
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
                self.entries.append(Entry(rel, "file", length, None, iso_path))

    def stream(self, entry, out):
        try:
            self._iso.get_file_from_iso_fp(out, iso_path=entry.raw)
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


def _children(rec):
    """A directory record's entries, without ``.`` and ``..``; a file in several extents (one record each, the same
    name) once."""
    last = None
    for child in rec.children:
        if child is None or child.is_dot() or child.is_dotdot():
            continue
        name = child.file_identifier()
        if name != last:
            last = name
            yield child


def _only_moved(rec):
    """Whether a directory holds only directories moved there (genisoimage's ``rr_moved``)."""
    kids = list(_children(rec))
    return bool(kids) and all(k.rock_ridge is not None and k.rock_ridge.relocated_record() for k in kids)
