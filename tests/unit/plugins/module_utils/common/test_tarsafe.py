# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""common/tarsafe: ordinary archives read as tarfile reads them; every header past a bound refused
from its block, before tarfile reads what it announces (the 2 GiB bombs of release archives,
bundles and packages are in the tests of their readers, tests/unit/plugins/module_utils/bundle)."""

from __future__ import annotations

import ast
import gzip
import io
import os
import tarfile

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common import tarsafe
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

END = bytes(2 * tarfile.BLOCKSIZE)


def block(name, size, kind=tarfile.REGTYPE, edit=None):
    """One GNU-format header block (a negative size is written in base-256); ``edit(bytearray)`` may change
    bytes, the checksum is computed after it."""
    info = tarfile.TarInfo(name)
    info.type = kind
    buf = bytearray(info.tobuf(tarfile.GNU_FORMAT))
    size_field = size.to_bytes(12, "big", signed=True)
    buf[124:136] = bytes([0o377 if size < 0 else 0o200]) + size_field[1:]
    if edit:
        edit(buf)
    buf[148:156] = b" " * 8
    buf[148:156] = b"%06o\0 " % sum(buf)
    return bytes(buf[:tarfile.BLOCKSIZE])


def padded(data):
    return data + bytes(-len(data) % tarfile.BLOCKSIZE)


def pax(records, kind=tarfile.XHDTYPE):
    """A pax header (block and records) holding ``records``."""
    body = b""
    for key, value in records:
        line = b" %s=%s\n" % (key.encode(), value.encode())
        length = len(line) + 1
        while len(str(length)) + len(line) != length:  # a record's length counts its own digits
            length = len(str(length)) + len(line)
        body += b"%d%s" % (length, line)
    return block("././@PaxHeader", len(body), kind) + padded(body)


def member(name, data=b""):
    return block(name, len(data)) + padded(data)


def read(data, mode="r:"):
    with tarsafe.open_tar(fileobj=io.BytesIO(data), mode=mode) as tar:
        return [(m.name, m.size, m.linkname, tar.extractfile(m).read() if m.isfile() else None) for m in tar]


def refused(data, message, mode="r:"):
    with pytest.raises(tarsafe.HeaderBoundError) as info:
        read(data, mode)
    assert str(info.value) == message


def ordinary(fmt):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt, pax_headers={"comment": "x"} if fmt == tarfile.PAX_FORMAT else None) as tar:
        for name, data in [("a", b"one"), ("dir" * 40 + "/" + "long" * 20, b"two" * 300), ("empty", b"")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("link")
        link.type, link.linkname = tarfile.SYMTYPE, "target/" + "t" * (90 if fmt == tarfile.USTAR_FORMAT else 120)
        tar.addfile(link)
        if fmt == tarfile.PAX_FORMAT:
            info = tarfile.TarInfo("ünïcode")
            info.size = 2
            tar.addfile(info, io.BytesIO(b"ok"))
    return buf.getvalue()


@pytest.mark.parametrize("fmt", [tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT], ids=["pax", "gnu", "ustar"])
@pytest.mark.parametrize("mode", ["r:", "r|", "r:*", "r|*", "gz"])
def test_an_ordinary_archive_reads_as_tarfile_reads_it(fmt, mode):
    data = ordinary(fmt)
    if mode == "gz":
        data, mode = gzip.compress(data), "r:gz"
    with tarfile.open(fileobj=io.BytesIO(data), mode=mode) as tar:
        expected = [(m.name, m.size, m.linkname, tar.extractfile(m).read() if m.isfile() else None) for m in tar]
    assert read(data, mode) == expected and len(expected) >= 4


KINDS = [(tarfile.XHDTYPE, "pax extended header"), (tarfile.XGLTYPE, "pax global header"),
         (tarfile.SOLARIS_XHDTYPE, "Solaris extended header"), (tarfile.GNUTYPE_LONGNAME, "GNU long name"),
         (tarfile.GNUTYPE_LONGLINK, "GNU long link name")]


@pytest.mark.parametrize("kind,what", KINDS, ids=[k[1] for k in KINDS])
@pytest.mark.parametrize("mode", ["r:", "r|"])
def test_an_extended_header_over_1mib_is_refused_from_its_block(kind, what, mode):
    # Only the block is there: tarfile would try to read 2 GiB; refused before that read.
    data = member("first", b"x") + block("././@LongLink", 2 << 30, kind) + END
    refused(data, "a %s of 2147483648 bytes at offset 1024 (at most 1048576)" % what, mode)


def test_the_refusal_is_not_swallowed_while_tarfile_tries_compressions():
    # tarfile.open("r:*") tries gzip, bzip2, xz, then plain, and takes a ReadError as "not this one".
    data = gzip.compress(block("././@PaxHeader", tarsafe.MAX_HEADER + 1, tarfile.XHDTYPE) + END)
    for mode in ("r:*", "r|*", "r:gz", "r|gz"):
        refused(data, "a pax extended header of 1048577 bytes at offset 0 (at most 1048576)", mode)
    assert issubclass(tarsafe.HeaderBoundError, MooringError)
    assert not issubclass(tarsafe.HeaderBoundError, (tarfile.TarError, OSError))


def test_a_negative_size_is_refused_in_a_block_and_in_a_pax_record():
    # In a block tarfile would step backwards (or read everything, for a pax header); in a pax record it
    # replaces the block's size.
    refused(member("a", b"x") + block("b", -1024) + END, "a member of -1024 bytes at offset 1024 (not a possible size)")
    refused(block("././@PaxHeader", -1024, tarfile.XHDTYPE) + END, "a member of -1024 bytes at offset 0 (not a possible size)")
    refused(pax([("size", "-1024")]) + member("b") + END, "a member of -1024 bytes at offset 0 (not a possible size)")
    refused(block("b", tarsafe.MAX_SIZE + 1) + END, "a member of %d bytes at offset 0 (not a possible size)" % (tarsafe.MAX_SIZE + 1))


def test_a_chain_of_small_headers_is_refused():
    # 2000 empty pax headers in front of one member: tarfile recurses once per header (RecursionError).
    refused(pax([]) * 2000 + member("a") + END, "more than 8 headers for the member at offset 0")
    # g, x, L and K in front of one member are fine.
    chain = (pax([("comment", "g")], tarfile.XGLTYPE) + pax([("mtime", "1")])
             + block("././@LongLink", 5, tarfile.GNUTYPE_LONGNAME) + padded(b"name\0")
             + block("././@LongLink", 7, tarfile.GNUTYPE_LONGLINK) + padded(b"target\0")
             + block("short", 0, tarfile.SYMTYPE) + END)
    assert read(chain) == [("name", 0, "target", None)]


def test_old_gnu_sparse_extension_blocks_are_bounded():
    # An old GNU sparse header says "an extension block follows", and each extension block says so again.
    def extended(buf):
        buf[482] = 1
    extension = bytearray(tarfile.BLOCKSIZE)
    extension[504] = 1
    data = block("sparse", 0, tarfile.GNUTYPE_SPARSE, extended) + bytes(extension) * (tarsafe.MAX_MEMBER_HEADERS // 512 + 10)
    refused(data + END, "more than 4194304 bytes of headers for the member at offset 0 (pax, GNU long names, sparse maps)")


def test_a_gnu_sparse_1_0_map_is_bounded():
    # The map is read from the member's data, 512 bytes at a time, until it has as many numbers as it says.
    sparse = pax([("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"), ("GNU.sparse.name", "f"),
                  ("GNU.sparse.realsize", "10")])
    data = sparse + member("f", b"1000000000\n" + b"1000000\n" * (1 << 20)) + END
    refused(data, "more than 4194304 bytes of headers for the member at offset 0 (pax, GNU long names, sparse maps)")


def test_pax_global_headers_are_bounded_in_all():
    # tarfile keeps every global key and applies it to each later member.
    many = pax([("k%d" % n, "v") for n in range(tarsafe.MAX_GLOBAL_KEYS + 1)], tarfile.XGLTYPE)
    refused(many + member("a") + END, "pax global headers with more than 64 keys (at offset 0)")
    big = pax([("comment", "x" * (600 << 10))], tarfile.XGLTYPE)
    data = big + member("a") + big + member("b") + END
    refused(data, "pax global headers of more than 1048576 bytes in all (the one at offset %d)" % (len(big) + 512))
    assert [m[0] for m in read(big + member("a") + END)] == ["a"]


def test_the_collection_reads_no_tar_but_through_tarsafe():
    """docs/DEVELOPING.md: every tar that is read is opened with tarsafe.open_tar; tarfile.open only writes."""
    root = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "plugins")
    readers = []
    for here, _dirs, files in os.walk(root):
        for name in (f for f in files if f.endswith(".py")):
            path = os.path.join(here, name)
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), path)
            for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
                func = call.func
                if not (isinstance(func, ast.Attribute) and func.attr in ("open", "TarFile")
                        and isinstance(func.value, ast.Name) and func.value.id == "tarfile"):
                    continue
                mode = next((k.value for k in call.keywords if k.arg == "mode"), call.args[1] if len(call.args) > 1 else None)
                modes = [mode.body, mode.orelse] if isinstance(mode, ast.IfExp) else [mode]  # "w:gz" if gz else "w"
                if not all(isinstance(m, ast.Constant) and str(m.value)[:1] in "wxa" for m in modes):
                    readers.append("%s:%d" % (os.path.relpath(path, root), call.lineno))
    assert readers == []
