# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Solution archives against hostile input: decompression bombs refused from their headers,
key pairs written all or nothing, build outputs checked before anything is written, manifests
read with yamlio's bounds (the CLI side is in tests/unit/plugins/plugin_utils/cli/badinput)."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import sys
import tarfile
import time
import zlib

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.solutions import archive as solution_archive
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import build as solution_build
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import images as solution_images
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import keys as solution_keys
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import layout as solution_layout
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import manifest as solution_manifest
from ansible_collections.mooring.cluster.plugins.module_utils.solutions import validate as solution_validate
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "solutions"))
import example  # noqa: E402


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return example.write_source(str(tmp_path_factory.mktemp("src") / "example"), "1.0.0")


@pytest.fixture
def src(pristine, tmp_path):
    dest = str(tmp_path / "src")
    shutil.copytree(pristine, dest)
    return dest


def gzip_zeros(out, size, piece=64 << 20):
    """Stream ``size`` zero bytes through gzip into ``out``: one gzip member of ``piece`` zeros,
    compressed once and written ``size // piece`` times (a multi-member gzip stream, which every
    gzip reader reads as one stream), so a GiB costs a fraction of a second to make."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = c.compress(bytes(piece)) + c.flush()
    for _count in range(size // piece):
        out.write(block)


def gzip_bytes(data):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


# --------------------------------------------------------------------------- bombs
def test_a_small_tar_gz_with_a_1gib_member_is_refused_at_once(tmp_path):
    path = str(tmp_path / "bomb.tar.gz")
    ti = tarfile.TarInfo("images/big")
    ti.size = 1 << 30
    with open(path, "wb") as f:
        f.write(gzip_bytes(ti.tobuf(format=tarfile.PAX_FORMAT)))
        gzip_zeros(f, 1 << 30)
    assert os.path.getsize(path) < 2 * 1024 * 1024
    start = time.process_time()
    with pytest.raises(SolutionError) as info:
        solution_validate.validate_archive(path)
    assert time.process_time() - start < 2
    assert str(info.value) == ("%s: refused: member 'images/big' declares 1073741824 bytes, past the budget of %d bytes for "
                               "this archive (a compressed tar may unpack to 100 times its size, at least 64 MiB)"
                               % (path, max(100 * os.path.getsize(path), 64 << 20)))


def test_a_huge_pax_header_is_refused_before_it_is_read(tmp_path):
    path = str(tmp_path / "pax.tar.gz")
    ti = tarfile.TarInfo("x")
    ti.type = tarfile.XHDTYPE
    ti.size = 900 << 20
    with open(path, "wb") as f:
        f.write(gzip_bytes(ti.tobuf(format=tarfile.USTAR_FORMAT)))
        gzip_zeros(f, 1 << 20, piece=1 << 20)
    start = time.process_time()
    with pytest.raises(SolutionError, match=r"pax\.tar\.gz: refused: a pax extended header of 943718400 bytes at offset 0 \(at most 1048576\)$"):
        solution_validate.validate_archive(path)
    assert time.process_time() - start < 2


def test_a_legitimate_compressed_archive_within_the_ratio_is_read(src, tmp_path):
    """A tar.gz whose members unpack to far more than 100 times its size, but under the 64 MiB
    floor, is read and validated (here an extra blob of 8 MiB of zeros)."""
    zeros = bytes(8 << 20)
    digest = hashlib.sha256(zeros).hexdigest()
    with open(os.path.join(src, "images", "example-app", "1.0.0", "blobs", "sha256", digest), "wb") as f:
        f.write(zeros)
    out = str(tmp_path / "ok.tar.gz")
    solution_build.build_archive(src, out)
    assert os.path.getsize(out) * 100 < len(zeros)
    assert solution_validate.validate_archive(out)["name"] == "example"


def test_trailing_data_and_truncation_are_refused(src, tmp_path):
    out = str(tmp_path / "ok.tar.gz")
    solution_build.build_archive(src, out)
    with open(out, "rb") as f:
        data = f.read()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(data[:-20])  # the gzip trailer and a bit of the end blocks
    with pytest.raises(SolutionError, match="cannot read the tar archive: 'Compressed file ended"):
        solution_validate.validate_archive(str(cut))
    trailing = tmp_path / "trailing.tar.gz"
    with open(str(trailing), "wb") as f:
        f.write(data)
        gzip_zeros(f, 64 << 20)
    with pytest.raises(SolutionError, match="more than 1048576 bytes after the end of the tar archive"):
        solution_validate.validate_archive(str(trailing))


def test_plain_tar_cut_inside_a_header_is_refused(src, tmp_path):
    out = str(tmp_path / "ok.tar")
    solution_build.build_archive(src, out)
    with open(out, "rb") as f:
        data = f.read()
    reader = solution_archive.open_archive(out)
    offsets = [e.raw.offset for e in reader.entries]
    reader.close()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[:offsets[5] + 100])  # in the middle of the sixth member's header
    with pytest.raises(SolutionError, match="cut off or corrupt after 5 members|cannot read the tar archive"):
        solution_validate.validate_archive(str(cut))


@pytest.mark.parametrize("make, message", [
    (os.mkfifo, "not a regular file (a FIFO, device or socket)"),
    (os.mkdir, "is a directory, not the archive file"),
])
def test_special_archive_paths_are_refused_without_reading(make, message, tmp_path):
    path = str(tmp_path / "a.tar")
    make(path)
    start = time.process_time()
    with pytest.raises(SolutionError) as info:
        solution_validate.validate_archive(path)
    assert str(info.value).startswith("%s: %s" % (path, message)) and time.process_time() - start < 2


def test_manifest_alias_bomb_in_an_unsigned_archive(src, tmp_path):
    levels = "".join("a%d: &a%d [%s]\n" % (i, i, ",".join(["*a%d" % (i - 1)] * 10) if i else "x,x,x,x,x,x,x,x,x,x")
                     for i in range(10))
    with open(os.path.join(src, "manifest.yaml"), "w") as f:
        f.write(levels + "spec: *a9\n")
    out = str(tmp_path / "bomb.tar")
    with tarfile.open(out, "w") as tar:
        tar.add(src, arcname=".")
    start = time.process_time()
    with pytest.raises(SolutionError) as info:
        solution_validate.validate_archive(out)
    assert time.process_time() - start < 2
    assert info.value.problems[0].startswith("%s: manifest.yaml: aliases (*name) are not allowed here (line 2" % out)


def test_problems_are_capped(src, tmp_path):
    out = str(tmp_path / "many.tar")
    with tarfile.open(out, "w") as tar:
        for i in range(100):
            ti = tarfile.TarInfo("../x%d" % i)
            tar.addfile(ti, io.BytesIO(b""))
    with pytest.raises(SolutionError) as info:
        solution_validate.validate_archive(out)
    assert len(info.value.problems) == solution_layout.MAX_PROBLEMS_SHOWN + 1
    assert info.value.problems[-1].endswith("more problems not shown")


def test_names_that_become_paths(src, tmp_path):
    for name in ("example\n", "a/b", ".."):
        assert any("metadata.name" in p for p in solution_manifest.check_manifest_data(
            dict(example.manifest("1.0.0"), metadata={"name": name})))
    data = example.manifest("1.0.0")
    data["spec"]["version"] = "1.0.0-" + "a" * 200
    problems = solution_manifest.check_manifest_data(data)
    assert len(problems) == 1 and problems[0].startswith("manifest.yaml: solution name and version 'example-1.0.0-aaa")
    assert "is not a safe name" in problems[0] and len(problems[0]) < 220


def test_export_images_refuses_an_unsafe_summary(src, tmp_path):
    out = str(tmp_path / "e.tar")
    summary = solution_build.build_archive(src, out)
    bad = dict(summary, images=[dict(summary["images"][0], tag="../../x")])
    with pytest.raises(ValueError, match="image file name .* is not a safe name"):
        solution_images.export_images(out, bad, "p", str(tmp_path / "dest"))
    with pytest.raises(ValueError, match="solution name and version"):
        solution_images.export_images(out, dict(summary, name="../x"), "p", str(tmp_path / "dest2"))


# --------------------------------------------------------------------------- keygen
def listing(d):
    return sorted(os.listdir(str(d)))


def test_keygen_writes_both_keys(tmp_path):
    solution_build.generate_key(str(tmp_path / "k.pem"), str(tmp_path / "k.pub"))
    assert listing(tmp_path) == ["k.pem", "k.pub"]
    assert os.stat(str(tmp_path / "k.pem")).st_mode & 0o777 == 0o600
    assert os.stat(str(tmp_path / "k.pub")).st_mode & 0o777 == 0o644
    key = solution_keys.load_private_key(str(tmp_path / "k.pem"))
    assert solution_keys.load_public_key(str(tmp_path / "k.pub")) == solution_keys.ed25519.public_raw(key)


@pytest.mark.parametrize("private, public", [
    ("k.pem", "k.pem"), ("k.pem", "./k.pem"), ("k.pem", "{tmp}/k.pem"), ("sub/../k.pem", "k.pem"), ("k.pem", "link/k.pem"),
])
def test_keygen_refuses_one_path_for_both(private, public, tmp_path, monkeypatch):
    monkeypatch.chdir(str(tmp_path))
    os.mkdir("sub")
    os.symlink(str(tmp_path), "link")
    with pytest.raises(SolutionError, match="are the same file"):
        solution_build.generate_key(private.format(tmp=tmp_path), public.format(tmp=tmp_path))
    assert listing(tmp_path) == ["link", "sub"]


@pytest.mark.parametrize("existing", ["k.pem", "k.pub"])
def test_keygen_never_overwrites(existing, tmp_path):
    (tmp_path / existing).write_text("old")
    with pytest.raises(SolutionError, match="%s: already exists" % existing):
        solution_build.generate_key(str(tmp_path / "k.pem"), str(tmp_path / "k.pub"))
    assert listing(tmp_path) == [existing] and (tmp_path / existing).read_text() == "old"


def test_keygen_missing_directory_writes_nothing(tmp_path):
    with pytest.raises(SolutionError, match="nodir does not exist"):
        solution_build.generate_key(str(tmp_path / "k.pem"), str(tmp_path / "nodir" / "k.pub"))
    assert listing(tmp_path) == []


def test_keygen_is_all_or_nothing_when_the_second_rename_fails(tmp_path, monkeypatch):
    real = solution_build._place_new
    calls = []

    def failing(tmp, path):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", path)
        return real(tmp, path)

    monkeypatch.setattr(solution_build, "_place_new", failing)
    with pytest.raises(OSError, match="No space left"):
        solution_build.generate_key(str(tmp_path / "k.pem"), str(tmp_path / "k.pub"))
    assert len(calls) == 2
    assert listing(tmp_path) == []  # the private key placed first is gone again, no temporary left


def test_keygen_does_not_replace_a_file_that_appears_meanwhile(tmp_path, monkeypatch):
    real = solution_build._place_new

    def racing(tmp, path):
        if path.endswith("k.pub"):
            (tmp_path / "k.pub").write_text("theirs")
        return real(tmp, path)

    monkeypatch.setattr(solution_build, "_place_new", racing)
    with pytest.raises(FileExistsError):
        solution_build.generate_key(str(tmp_path / "k.pem"), str(tmp_path / "k.pub"))
    assert listing(tmp_path) == ["k.pub"] and (tmp_path / "k.pub").read_text() == "theirs"


# --------------------------------------------------------------------------- build outputs
@pytest.mark.parametrize("out, prepare, message", [
    ("nodir/x.tar", None, "nodir does not exist"),
    ("file/x.tar", lambda t: (t / "file").write_text("x"), "file is not a directory"),
    ("d.tar", lambda t: (t / "d.tar").mkdir(), "d.tar: is a directory"),
    ("f.tar", lambda t: os.mkfifo(str(t / "f.tar")), "f.tar: exists and is not a regular file"),
])
def test_build_output_refused_before_anything_is_written(out, prepare, message, src, tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    if prepare:
        prepare(work)
    before = listing(work)
    with pytest.raises(SolutionError, match=message):
        solution_build.build_archive(src, str(work / out))
    assert listing(work) == before


def test_build_writes_through_a_temporary_next_to_the_output(src, tmp_path, monkeypatch):
    seen = []
    real = solution_build.validate_archive

    def spy(path, **kwargs):
        seen.append(os.path.dirname(path))
        assert not os.path.exists(str(tmp_path / "x.tar"))  # not in place before it is validated
        return real(path, **kwargs)

    monkeypatch.setattr(solution_build, "validate_archive", spy)
    solution_build.build_archive(src, str(tmp_path / "x.tar"))
    assert seen == [str(tmp_path)] and listing(tmp_path) == ["src", "x.tar"]


def test_build_refuses_a_source_name_that_is_not_utf8(src, tmp_path):
    with open(os.path.join(os.fsencode(src), b"a\xffb"), "wb") as f:
        f.write(b"x")
    with pytest.raises(SolutionError) as info:
        solution_build.build_archive(src, str(tmp_path / "x.tar"))
    assert info.value.problems == ["%s: the file name 'a\\udcffb' is not printable UTF-8" % src]
    assert listing(tmp_path) == ["src"]
