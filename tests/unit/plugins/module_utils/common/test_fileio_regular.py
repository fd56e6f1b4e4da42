# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""open_regular / read_regular (bounded, regular files only) and atomic_output."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


def test_read_regular_bounds(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    assert fileio.read_regular(str(path), 5) == b"12345"
    with pytest.raises(fileio.TooLargeError, match="the limit is 4"):
        fileio.read_regular(str(path), 4)


def test_directory_and_fifo_are_refused_without_blocking(tmp_path):
    with pytest.raises(fileio.NotRegularFileError, match="is a directory"):
        fileio.read_regular(str(tmp_path), 10, what="spec")
    fifo = tmp_path / "fifo"
    os.mkfifo(str(fifo))
    with pytest.raises(fileio.NotRegularFileError, match="not a regular file") as info:
        fileio.open_regular(str(fifo))
    assert isinstance(info.value, MooringError) and isinstance(info.value, OSError)


def test_empty_refused_when_asked(tmp_path):
    path = tmp_path / "empty"
    path.write_bytes(b"")
    with pytest.raises(fileio.NotRegularFileError, match="empty file"):
        fileio.open_regular(str(path), "bundle", allow_empty=False)


def test_missing_raises_its_own_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        fileio.open_regular(str(tmp_path / "nope"))


def test_nofollow_refuses_a_symlink(tmp_path):
    (tmp_path / "t").write_bytes(b"x")
    os.symlink("t", str(tmp_path / "l"))
    with pytest.raises(OSError):
        fileio.open_regular(str(tmp_path / "l"), flags=os.O_NOFOLLOW)


def test_atomic_output_mode_and_failure_leave_nothing(tmp_path):
    path = tmp_path / "out"
    with fileio.atomic_output(str(path), mode=0o600) as handle:
        handle.write(b"secret")
    assert path.read_bytes() == b"secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    def refuse(tmp):
        raise ValueError("no")

    with pytest.raises(ValueError), fileio.atomic_output(str(path), check=refuse) as handle:
        handle.write(b"other")
    assert path.read_bytes() == b"secret"
    assert sorted(os.listdir(str(tmp_path))) == ["out"]
