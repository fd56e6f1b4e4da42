# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ctr command lines, ``ctr images ls`` parsing and the import/remove/push decisions.

The ``ensure_images`` tests drive a FAKE ctr (an in-memory image store) to check the
decide-then-act logic; real containerd is exercised by the molecule scenario `solutions`.
"""

from __future__ import annotations

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common import ctr as c

BASE = ["ctr", "--address", "/run/containerd/containerd.sock", "--namespace", "k8s.io"]
D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64
IMG = {"ref": "solutions.mooring.local/example-1.0.0/example-app:1.0.0", "digest": D1, "file": "/x/app.oci.tar"}
IMG2 = {"ref": "solutions.mooring.local/example-1.0.0/example-operator:1.0.0", "digest": D2, "file": "/x/op.oci.tar"}

ID = "sha256:78a995d86271fe53828b7e371be24bdf55e04093609b07f6570237737ac4e691"
LS = (
    "REF                         TYPE                                       DIGEST  SIZE    PLATFORMS   LABELS\n"
    "%s application/vnd.oci.image.manifest.v1+json %s 757.0 B linux/amd64 io.cri-containerd.image=managed\n"
    "solutions.mooring.local/example-1.0.0/example-app:1.0.0 application/vnd.oci.image.manifest.v1+json"
    " %s 757.0 B linux/amd64 io.cri-containerd.image=managed\n"
) % (ID, D1, D1)


@pytest.mark.parametrize(
    "cmd, expected",
    [
        (c.list_cmd(BASE), BASE + ["images", "ls"]),
        (c.import_cmd(BASE, IMG), BASE + ["images", "import", "--base-name",
                                          "solutions.mooring.local/example-1.0.0/example-app", "/x/app.oci.tar"]),
        (c.import_cmd(BASE, dict(IMG, ref="10.0.0.5:5000/example-1.0.0/app:1.0"), "native"),
         BASE + ["images", "import", "--base-name", "10.0.0.5:5000/example-1.0.0/app", "--snapshotter", "native",
                 "/x/app.oci.tar"]),
        (c.remove_cmd(BASE, ["a:1", "b:2"]), BASE + ["images", "rm", "a:1", "b:2"]),
        (c.push_cmd(BASE, "r:5000/x/y:1"), BASE + ["images", "push", "r:5000/x/y:1"]),
        (c.push_cmd(BASE, "r:5000/x/y:1", plain_http=True, skip_verify=True),
         BASE + ["images", "push", "--plain-http", "--skip-verify", "r:5000/x/y:1"]),
        (c.base_cmd("/usr/bin/ctr", "/s.sock", "default"), ["/usr/bin/ctr", "--address", "/s.sock", "--namespace",
                                                            "default"]),
    ],
)
def test_command_lines(cmd, expected):
    assert cmd == expected


def test_parse_images_ls():
    assert c.parse_images_ls(LS) == {
        ID: D1,
        "solutions.mooring.local/example-1.0.0/example-app:1.0.0": D1,
    }
    assert c.parse_images_ls("REF TYPE DIGEST SIZE PLATFORMS LABELS\n") == {}
    assert c.parse_images_ls("") == {}
    with pytest.raises(c.ContainerdError, match="unexpected `ctr images ls` output"):
        c.parse_images_ls("NAME DIGEST\nx y\n")


@pytest.mark.parametrize(
    "ref, plain, url",
    [
        ("10.0.0.5:5000/example-1.0.0/app:1.0", True, "http://10.0.0.5:5000/v2/example-1.0.0/app/manifests/1.0"),
        ("registry.local/example-2.0.0/team/app:v2", False,
         "https://registry.local/v2/example-2.0.0/team/app/manifests/v2"),
    ],
)
def test_manifest_url(ref, plain, url):
    assert c.manifest_url(ref, plain) == url


class FakeCtr:
    """FAKE ctr: an in-memory image store that records every command it is given."""

    def __init__(self, images=None, archives=None, fail_on=None):
        self.images = dict(images or {})
        self.archives = archives or {}
        self.calls = []
        self.fail_on = fail_on

    def __call__(self, cmd):
        self.calls.append(cmd)
        verb = cmd[5:7]
        if self.fail_on and self.fail_on in cmd:
            return 1, "", "ctr: boom"
        if verb == ["images", "ls"]:
            rows = ["REF TYPE DIGEST SIZE PLATFORMS LABELS"]
            rows += ["%s application/vnd.oci.image.manifest.v1+json %s 1 B linux/amd64 -" % kv
                     for kv in sorted(self.images.items())]
            return 0, "\n".join(rows) + "\n", ""
        if verb == ["images", "import"]:
            ref, digest = self.archives[cmd[-1]]
            self.images[ref] = digest
            return 0, "unpacking %s (%s)...done\n" % (ref, digest), ""
        if verb == ["images", "rm"]:
            for ref in cmd[7:]:
                self.images.pop(ref, None)
            return 0, "", ""
        if verb == ["images", "push"]:
            return 0, "", ""
        raise AssertionError(cmd)


def _fake():
    return FakeCtr(archives={IMG["file"]: (IMG["ref"], D1), IMG2["file"]: (IMG2["ref"], D2)})


def test_import_then_idempotent():
    ctr = _fake()
    out = c.ensure_images(ctr, [IMG, IMG2])
    assert out["changed"] and out["imported"] == [IMG["ref"], IMG2["ref"]]
    assert out["before"] == {IMG["ref"]: None, IMG2["ref"]: None}
    assert out["after"] == {IMG["ref"]: D1, IMG2["ref"]: D2}
    calls = len(ctr.calls)
    again = c.ensure_images(ctr, [IMG, IMG2])
    assert not again["changed"] and again["imported"] == []
    assert len(ctr.calls) == calls + 1  # only the listing


def test_check_mode_changes_nothing():
    ctr = _fake()
    out = c.ensure_images(ctr, [IMG], check_mode=True)
    assert out["changed"] and out["after"] == {IMG["ref"]: D1}
    assert ctr.images == {}
    assert all(cmd[5:7] == ["images", "ls"] for cmd in ctr.calls)


def test_wrong_digest_is_reimported():
    ctr = _fake()
    ctr.images[IMG["ref"]] = D2
    out = c.ensure_images(ctr, [IMG])
    assert out["imported"] == [IMG["ref"]] and ctr.images[IMG["ref"]] == D1


def test_import_yielding_other_digest_fails():
    ctr = FakeCtr(archives={IMG["file"]: (IMG["ref"], D2)})
    with pytest.raises(c.ContainerdError, match="containerd reports digest"):
        c.ensure_images(ctr, [IMG])


def test_remove_and_idempotent():
    ctr = _fake()
    ctr.images.update({IMG["ref"]: D1, "other:1": D2})
    out = c.ensure_images(ctr, [IMG, IMG2], state="absent")
    assert out["changed"] and out["removed"] == [IMG["ref"]]
    assert ctr.images == {"other:1": D2}
    assert not c.ensure_images(ctr, [IMG, IMG2], state="absent")["changed"]


def test_failure_names_the_command():
    ctr = FakeCtr(archives={IMG["file"]: (IMG["ref"], D1)}, fail_on="import")
    with pytest.raises(c.ContainerdError, match="images import .* failed \\(exit 1\\): ctr: boom"):
        c.ensure_images(ctr, [IMG])


def test_push_only_what_the_registry_lacks():
    ctr = _fake()
    registry = {IMG["ref"]: D1}
    out = c.ensure_images(ctr, [IMG, IMG2], push=True, plain_http=True, registry_digest=registry.get)
    assert out["pushed"] == [IMG2["ref"]]
    assert ctr.calls[-1] == BASE + ["images", "push", "--plain-http", IMG2["ref"]]
    registry[IMG2["ref"]] = D2
    assert not c.ensure_images(ctr, [IMG, IMG2], push=True, registry_digest=registry.get)["changed"]


# ---------------------------------------------------------------- bundle image archives
@pytest.mark.parametrize("kwargs,expected", [
    ({}, ["ctr", "--address", "/run/containerd/containerd.sock", "--namespace", "k8s.io", "images", "list", "--quiet"]),
    ({"ctr": "/usr/bin/ctr", "address": "/x.sock", "namespace": "default"},
     ["/usr/bin/ctr", "--address", "/x.sock", "--namespace", "default", "images", "list", "--quiet"]),
])
def test_ctr_list_argv(kwargs, expected):
    assert c.list_refs_cmd(c.base_cmd(**kwargs)) == expected


def test_ctr_import_argv():
    assert c.import_archive_cmd(c.base_cmd(), "/b/img.tar") == [
        "ctr", "--address", "/run/containerd/containerd.sock", "--namespace", "k8s.io", "images", "import",
        "--no-unpack=false", "/b/img.tar"]


@pytest.mark.parametrize("ref,present,missing", [
    ("localhost/mooring/hello:1.0", ["localhost/mooring/hello:1.0"], False),
    ("localhost/mooring/hello:1.0", ["localhost/mooring/hello:1.1"], True),
    ("busybox:1.36", ["docker.io/library/busybox:1.36"], False),
    ("library/busybox:1.36", ["docker.io/library/busybox:1.36"], False),
    ("registry.k8s.io/pause:3.10.1", [], True),
])
def test_images_to_import(ref, present, missing):
    assert bool(c.missing_images([{"ref": ref, "path": "/p"}], present)) is missing


class FakeArchiveCtr:
    """A FAKE ctr for bundle archives: ``list --quiet`` prints the store, ``import`` adds what the
    archive names (``names``: path -> ref), or fails (``broken``: paths)."""

    def __init__(self, present, names, broken=()):
        self.store, self.names, self.broken, self.calls = list(present), names, set(broken), []

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[-2:] == ["list", "--quiet"]:
            return 0, "".join(r + "\n" for r in self.store), ""
        if argv[5:8] == ["images", "import", "--no-unpack=false"]:
            if argv[-1] in self.broken:
                return 1, "", "ctr: unexpected EOF"
            self.store.append(self.names[argv[-1]])
            return 0, "", ""
        return 1, "", "unexpected %r" % argv


ARCHIVES = [{"ref": "registry.k8s.io/pause:3.10.1", "path": "/b/pause.tar"},
            {"ref": "busybox:1.36", "path": "/b/busybox.tar"}]
NAMES = {"/b/pause.tar": "registry.k8s.io/pause:3.10.1", "/b/busybox.tar": "docker.io/library/busybox:1.36"}


def test_import_archives_imports_only_what_is_missing_and_checks_it_is_listed():
    run = FakeArchiveCtr(["docker.io/library/busybox:1.36"], NAMES)
    result = c.import_archives(run, ARCHIVES)
    assert result["changed"] and result["imported"] == ["registry.k8s.io/pause:3.10.1"]
    assert result["present"] == ["busybox:1.36"]
    assert [a[-1] for a in run.calls if "import" in a] == ["/b/pause.tar"]
    again = c.import_archives(FakeArchiveCtr(run.store, NAMES), ARCHIVES)
    assert not again["changed"] and again["imported"] == []


def test_import_archives_check_mode_imports_nothing():
    run = FakeArchiveCtr([], NAMES)
    result = c.import_archives(run, ARCHIVES, check_mode=True)
    assert result["changed"] and not any("import" in a for a in run.calls)


def test_import_archives_failures_name_the_archive_and_keep_the_result():
    with pytest.raises(c.ContainerdError, match="ctr images import /b/pause.tar failed: ctr: unexpected EOF") as err:
        c.import_archives(FakeArchiveCtr([], NAMES, broken=["/b/pause.tar"]), ARCHIVES)
    assert err.value.result["imported"] == ["registry.k8s.io/pause:3.10.1", "busybox:1.36"]
    misnamed = dict(NAMES, **{"/b/pause.tar": "registry.k8s.io/pause:other"})
    with pytest.raises(c.ContainerdError, match="imported /b/pause.tar but registry.k8s.io/pause:3.10.1 is not listed"):
        c.import_archives(FakeArchiveCtr([], misnamed), ARCHIVES)
    with pytest.raises(c.ContainerdError, match="cannot list containerd images"):
        c.import_archives(lambda argv: (1, "", "connection refused"), ARCHIVES)


def test_archive_problem_names_the_first_image_without_ref_and_path():
    good = {"ref": "localhost/mooring/hello:1.0", "path": "/b/hello.tar"}
    assert c.archive_problem([good], "images") is None
    assert c.archive_problem(None, "images.archives") is None
    assert c.archive_problem([good, {"ref": "x:1"}], "images.archives") == (
        "images.archives[1]: both 'ref' and 'path' are required, got {'ref': 'x:1'}")
    assert c.archive_problem([{"path": "/b/a.tar", "ref": ""}], "images").startswith("images[0]: both")
