# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inputs the bundle tests build for real (imported by the test modules beside it)."""

from __future__ import annotations

import bz2
import lzma
import os
import resource
import struct
import subprocess
import tarfile
import time
import zlib

from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import lock_digest


def make_deb(where, name, version="1.0-1"):
    """A real .deb (dpkg-deb) named NAME_VERSION_all.deb in ``where``, with one file in it."""
    root = where / ("deb-" + name)
    (root / "DEBIAN").mkdir(parents=True)
    (root / "usr" / "share" / name).mkdir(parents=True)
    (root / "usr" / "share" / name / "README").write_text("test package %s\n" % name)
    (root / "DEBIAN" / "control").write_text(
        "Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: test <t@example.invalid>\n"
        "Description: test package\n" % (name, version))
    out = where / ("%s_%s_all.deb" % (name, version))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(root), str(out)], check=True,
                   capture_output=True)
    return out


def make_lock(addons, name="t"):
    """A lock holding ``addons`` (add-on name -> locked add-on), its digest computed."""
    lock = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "InstallerLock", "metadata": {"name": name},
            "spec": {}, "hash": "abcdef0", "specDigest": "0" * 64, "architectures": ["amd64"], "addons": addons}
    lock["digest"] = lock_digest(lock)
    return lock


def tar_header(name, size, kind=tarfile.REGTYPE):
    """One ustar header block of type ``kind`` declaring ``size`` bytes, and nothing else."""
    info = tarfile.TarInfo(name)
    info.size, info.type = size, kind
    return info.tobuf(tarfile.USTAR_FORMAT)


def sparse_header_bomb(path, size=2 << 30, kind=tarfile.XHDTYPE):
    """A plain tar on a sparse file (4 KiB on disk): one header declaring ``size`` bytes of ``kind`` (a pax
    extended header by default), the declared bytes holes, then the end-of-archive blocks."""
    with open(str(path), "wb") as handle:
        handle.write(tar_header("././@PaxHeader", size, kind))
    os.truncate(str(path), 512 + size + 1024)


def zero_bomb_tgz(path, member="bin/containerd", size=1 << 30, kind=tarfile.REGTYPE):
    """A tar.gz whose one header (a member by default, or ``kind``: a pax header...) declares ``size`` bytes and
    is followed by as many zeros, streamed: deflate's output for 1 MiB of zeros after a full flush is one fixed
    block, repeated; nothing near ``size`` is ever held or written."""
    raw = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    info = tarfile.TarInfo(member)
    info.size, info.mode, info.type = size, 0o755, kind
    header = info.tobuf(tarfile.GNU_FORMAT)
    chunk = bytes(1 << 20)
    block = None
    crc = zlib.crc32(header)
    with open(str(path), "wb") as out:
        out.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")
        out.write(raw.compress(header) + raw.flush(zlib.Z_FULL_FLUSH))
        for _count in range(size // len(chunk)):
            block = block or raw.compress(chunk) + raw.flush(zlib.Z_FULL_FLUSH)
            out.write(block)
            crc = zlib.crc32(chunk, crc)
        tail = bytes(2 * tarfile.BLOCKSIZE)
        out.write(raw.compress(tail) + raw.flush(zlib.Z_FINISH))
        out.write(struct.pack("<II", zlib.crc32(tail, crc) & 0xffffffff, (len(header) + size + 1024) & 0xffffffff))


def pax_header_bomb(path, compression, size=2 << 30):
    """A tar whose first header is a pax extended header declaring ``size`` bytes: plain on a sparse file
    (:func:`sparse_header_bomb`) or gzip-compressed with every declared byte there (:func:`zero_bomb_tgz`); xz and
    bzip2 hold the header block and 1 MiB of zeros only (a reader that measures the header stops at it)."""
    if compression == "tar":
        sparse_header_bomb(path, size)
    elif compression == "gz":
        zero_bomb_tgz(path, "././@PaxHeader", size, tarfile.XHDTYPE)
    else:
        data = tar_header("././@PaxHeader", size, tarfile.XHDTYPE) + bytes(1 << 20)
        with open(str(path), "wb") as out:
            out.write(lzma.compress(data, preset=1) if compression == "xz" else bz2.compress(data, 1))
    return str(path)


class Measured(object):
    """The CPU time (not wall time: a busy machine cannot fail it) and the growth of this process's peak memory (KiB)
    over a ``with`` block."""

    def __enter__(self):
        self.rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self.started = time.process_time()
        return self

    def __exit__(self, *exc):
        self.seconds = time.process_time() - self.started
        self.rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - self.rss
        return False
