# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: writing controller-side files atomically."""

from __future__ import annotations

import os
import tempfile


def write_text_if_changed(path, text, mode=0o644):
    """Write ``text`` to ``path`` through a temporary file and a rename; True when it changed.

    Nothing is written when the file already holds exactly ``text``. The directory is created
    when missing. ``mode`` applies to the new file (these files hold nothing secret).
    """
    try:
        with open(path, "r", encoding="utf-8") as handle:
            if handle.read() == text:
                return False
    except OSError:
        pass
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".%s-" % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True
