# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster stacks against hostile and broken input: what a stack directory may hold, record
files of the wrong shape, writes all or nothing (``stack version`` in place, ``stack export``
through a staging directory), helm's output bounded. A stand-in for helm (a shell script that
prints one ClusterClass) replaces the real one: none of this needs a chart rendered."""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.infra import helm as h
from ansible_collections.mooring.cluster.plugins.module_utils.infra import stackbump, stackexport, stackrecords, stacks, stacktree
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
SEED = os.path.join(ROOT, "tests", "data", "stacks", "seed", "providers")
HELM_GOOD = ("#!/bin/sh\nver=$(sed -n 's/^version: *//p' \"$3/Chart.yaml\" | tr -d '\"')\n"
             "printf -- '---\\napiVersion: cluster.x-k8s.io/v1beta1\\nkind: ClusterClass\\nmetadata:\\n  name: %s-%s\\n' \"$2\" \"$ver\"\n")


def tree(root):
    """{relative path: sha256 or 'dir'} of everything under root."""
    out = {}
    for dirpath, dirs, files in os.walk(str(root)):
        for d in dirs:
            out[os.path.relpath(os.path.join(dirpath, d), str(root))] = "dir"
        for f in files:
            full = os.path.join(dirpath, f)
            if not os.path.isfile(full):  # a FIFO: never opened
                out[os.path.relpath(full, str(root))] = "special"
                continue
            with open(full, "rb") as fh:
                out[os.path.relpath(full, str(root))] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.fixture
def work(tmp_path):
    shutil.copytree(SEED, str(tmp_path / "providers"))
    return tmp_path


@pytest.fixture
def alpha(work):
    return work / "providers" / "openstack" / "alpha" / "1-28"


def beta_of(work, alpha):
    """A second seed stack (openstack-beta-1-28), recorded under its own name."""
    beta = work / "providers" / "openstack" / "beta" / "1-28"
    shutil.copytree(str(alpha), str(beta))
    stackbump.apply_versions(stackbump.plan_versions(stacks.Stack(str(beta))))
    return beta


def fake_helm(tmp_path, script=HELM_GOOD):
    path = tmp_path / "helm"
    path.write_text(script if script.startswith("#!") else "#!/bin/sh\n" + script)
    path.chmod(0o755)
    return str(path)


# --------------------------------------------------------------------------- what a stack may hold
def test_tree_problems_are_named_and_bounded(alpha):
    (alpha / "cluster-class" / "ok.yaml").write_text("x: 1\n")
    with open(os.path.join(os.fsencode(str(alpha)), b"cluster-class", b"a\xffb.yaml"), "wb") as f:
        f.write(b"x")
    os.mkfifo(str(alpha / "node-images" / "pipe"))
    (alpha / "cluster-class" / "templates" / "u16.yaml").write_bytes("\ufeffkind: X\n".encode("utf-16-le"))
    problems = stacktree.check_tree(str(alpha))
    assert problems == [
        "%s/cluster-class: the file name b'a\\xffb.yaml' is not printable UTF-8; rename it" % alpha,
        "%s/cluster-class/templates/u16.yaml: UTF-16/32 text is not supported; save it as UTF-8" % alpha,
        "%s/node-images/pipe: a FIFO, device or socket; a stack holds only files and directories" % alpha,
    ]
    before = tree(alpha)
    assert cli.main(["stack", "version", str(alpha)]) == 1
    assert tree(alpha) == before
    for i in range(30):
        with open(os.path.join(os.fsencode(str(alpha)), b"x%d\xfe" % i), "wb") as f:
            f.write(b"x")
    problems = stacktree.check_tree(str(alpha))
    assert len(problems) == stacktree.MAX_TREE_PROBLEMS + 1 and problems[-1].endswith("more entries like these")


def test_large_files_are_refused(alpha, monkeypatch):
    monkeypatch.setattr(stacktree, "MAX_FILE_BYTES", 100000)
    (alpha / "cluster-class" / "big.bin").write_bytes(b"x" * 100001)
    assert stacktree.check_tree(str(alpha)) == ["%s/cluster-class/big.bin: 100001 bytes; a stack file may have at most 100000" % alpha]


LINK_LINE = "a stack holds only files and directories, so that nothing outside it reaches the export or its version"


def secret(work):
    """A private key outside the stack, which a link in a stack must never bring into an export."""
    path = work / "outside" / "id_ed25519"
    path.parent.mkdir(exist_ok=True)
    path.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n-----END OPENSSH PRIVATE KEY-----\n")
    return str(path)


# (link relative to the stack, its target: "SECRET" for the key outside, "OUT" for the directory holding it)
LINKS = [
    ("cluster-class/templates/key.yaml", "SECRET"),
    ("cluster-class/files", "OUT"),
    ("cluster-class/.key", "SECRET"),
    ("cluster-class/.hidden/key", "SECRET"),
    ("cluster-class/values-copy.yaml", "values.yaml"),
    ("cluster-addon/values.yaml.d", "../cluster-class"),
    ("node-images/image.yaml", "SECRET"),
    ("topology.yaml", "/etc/passwd"),
    ("dangling.yaml", "/nonexistent/x"),
]


def _link(work, alpha, rel, target):
    target = {"SECRET": secret(work), "OUT": str(work / "outside")}.get(target, target)
    if target == str(work / "outside"):
        secret(work)
    path = alpha / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, str(path))
    return str(path), target


@pytest.mark.parametrize("rel, target", LINKS, ids=[r for r, _t in LINKS])
def test_a_symlink_anywhere_is_refused_in_one_line(work, alpha, rel, target, capsys):
    path, target = _link(work, alpha, rel, target)
    problems = stacktree.check_tree(str(alpha))
    assert problems == ["%s: a symlink (to %s); %s: put the file itself there" % (path, target, LINK_LINE)]
    mark = fake_helm(work, 'touch "%s"\nexit 1\n' % (work / "helm-ran"))
    before = tree(work)
    assert cli.main(["stack", "version", str(alpha)]) == 1
    err = capsys.readouterr().err
    assert "%s: a symlink (to %s)" % (path, target) in err and "Traceback" not in err
    assert cli.main(["stack", "export", str(alpha), "-o", str(work / "out"), "--helm", mark]) == 1
    assert tree(work) == before  # nothing written, helm never ran


def test_a_link_that_appears_after_the_check_never_reaches_helm_or_a_hash(work, alpha):
    stack = stacks.Stack(str(alpha))
    hashes = stack.hashes()
    prepared = stackexport.prepare_export(stack, None)
    os.symlink(secret(work), str(alpha / "cluster-class" / "templates" / "key.yaml"))
    with pytest.raises(stacktree.StackError) as info:
        stack.hashes()
    assert info.value.problems == ["%s/cluster-class/templates/key.yaml: a symlink (to %s); %s: put the file itself there"
                                   % (alpha, secret(work), LINK_LINE)]
    mark = work / "helm-ran"
    with pytest.raises(stacktree.StackError, match="cluster-class/templates/key.yaml: a symlink"):
        stackexport.render_export(stack, None, fake_helm(work, 'touch "%s"\nexit 1\n' % mark), prepared)
    assert not mark.exists()
    os.unlink(str(alpha / "cluster-class" / "templates" / "key.yaml"))
    os.symlink(str(work / "outside"), str(alpha / "cluster-class" / "files"))  # a directory link: os.walk lists it, never follows
    with pytest.raises(stacktree.StackError, match="cluster-class/files: a symlink"):
        stack.hashes()
    with pytest.raises(stacktree.StackError, match="cluster-class/files: a symlink"):
        stackexport.render_export(stack, None, fake_helm(work, 'touch "%s"\nexit 1\n' % mark), prepared)
    assert not mark.exists()
    os.unlink(str(alpha / "cluster-class" / "files"))
    assert stack.hashes() == hashes


def test_the_chart_copy_holds_only_the_stacks_own_files(work, alpha):
    copy = work / "copy"
    stackexport.copy_chart(str(alpha / "cluster-class"), str(copy))
    assert tree(copy) == tree(alpha / "cluster-class")
    os.symlink(secret(work), str(copy / "templates" / "key.yaml"))
    with pytest.raises(stacktree.StackError, match=r"cluster-class/templates/key.yaml: not a file or directory in the chart's copy"):
        stackexport.check_copy(str(copy), str(alpha / "cluster-class"))
    with pytest.raises(h.HelmError, match=r"templates/key.yaml is a symlink; a chart is rendered from its own files only"):
        h.template(str(copy), "r", {}, helm=fake_helm(work, 'touch "%s"\nexit 1\n' % (work / "helm-ran")))
    assert not (work / "helm-ran").exists()
    os.unlink(str(copy / "templates" / "key.yaml"))
    os.mkfifo(str(copy / "pipe"))
    with pytest.raises(h.HelmError, match=r"pipe is a FIFO, device or socket"):
        h.template(str(copy), "r", {}, helm=fake_helm(work))


def test_the_version_hash_sees_only_the_stack(work, alpha):
    stack = stacks.Stack(str(alpha))
    hashes, dev = stack.hashes(), stack.dev_version()
    (work / "providers" / "openstack" / "alpha" / "beside.yaml").write_text("x: 1\n")
    secret(work)
    assert stacks.Stack(str(alpha)).hashes() == hashes and stacks.Stack(str(alpha)).dev_version() == dev
    with pytest.raises(stacktree.StackError, match="a symlink"):
        stackrecords.part_hash(str(_with_link(alpha / "cluster-class", secret(work))), {})


def _with_link(directory, target):
    os.symlink(target, str(directory / "key.yaml"))
    return directory


@pytest.mark.parametrize("text, problem", [
    ("versions: {components: [1]}\n", "versions.components: must be a mapping (clusterAddon, nodeImage), not a list"),
    ("versions: x\n", "versions: must be a mapping (clusterStack, kubernetes, components), not a string"),
    ("versions: {components: {1: v1, clusterAddon: v1, nodeImage: v1}}\n", "versions.components[1]: is not a known field (known: clusterAddon, nodeImage)"),
    ("versions: {clusterStack: [v1]}\n", "versions.clusterStack: must be v<N> (v1, v2, ...) or v0-sha.<hash>, not ['v1']"),
    ("versions: {kubernetes: 1.28}\n", "versions.kubernetes: must be vX.Y.Z, not 1.28"),
    ('versions: {clusterStack: "v1\\n"}\n', "versions.clusterStack: must be v<N> (v1, v2, ...) or v0-sha.<hash>, not 'v1\\n'"),
])
def test_metadata_shapes(alpha, text, problem):
    (alpha / "metadata.yaml").write_text(text)
    with pytest.raises(stacktree.StackError) as info:
        stacks.Stack(str(alpha))
    assert "%s/metadata.yaml: %s" % (alpha, problem) in "\n".join(info.value.problems)


@pytest.mark.parametrize("old, new, problem", [
    ("  components:\n    clusterAddon: v2\n    nodeImage: v1\n", "  components: [1]\n", "versions.components: must be a mapping, not a list"),
    ("    nodeImage: v1\n", "    nodeImage: [v1]\n", "versions.components.nodeImage: must be a string, not a list"),
    ("  clusterStack: v2\n", "  clusterStack: 2\n", "versions.clusterStack: must be a string, not a number"),
    ("  nodeImage: sha256:", "  nodeImage: {a: 1}\n  x: sha256:", "hashes.nodeImage: must be sha256:<hex>, not a mapping"),
])
def test_release_shapes(alpha, old, new, problem):
    text = (alpha / "release.yaml").read_text()
    assert old in text
    (alpha / "release.yaml").write_text(text.replace(old, new, 1))
    with pytest.raises(stacktree.StackError) as info:
        stackbump.plan_versions(stacks.Stack(str(alpha)))
    assert "%s/release.yaml: %s" % (alpha, problem) in info.value.problems


def test_record_files_take_no_aliases(alpha):
    (alpha / "metadata.yaml").write_text((alpha / "metadata.yaml").read_text().replace("clusterStack: v2", "clusterStack: &v v2")
                                         + "x: *v\n")
    with pytest.raises(stacktree.StackError, match=r"metadata.yaml: aliases \(\*name\) are not allowed here"):
        stacks.Stack(str(alpha))


def test_chart_yaml_must_be_utf8(alpha):
    (alpha / "cluster-class" / "Chart.yaml").write_bytes("apiVersion: v2\nname: caf\xe9\nversion: v2\n".encode("latin-1"))
    before = tree(alpha)
    with pytest.raises(stacktree.StackError) as info:
        stackbump.plan_versions(stacks.Stack(str(alpha)))
    assert info.value.problems == ["%s/cluster-class/Chart.yaml: not UTF-8 (byte 0xe9 at offset 24)" % alpha]
    assert tree(alpha) == before


def test_version_with_a_bad_second_stack_writes_nothing(work, alpha):
    beta = beta_of(work, alpha)
    (alpha / "cluster-class" / "values.yaml").write_text("# tuned\n")  # alpha: a bump is due
    (beta / "metadata.yaml").write_text("versions: {components: [1]}\n")
    before = tree(work)
    assert cli.main(["stack", "version", str(work / "providers")]) == 1
    assert tree(work) == before
    (beta / "metadata.yaml").write_text((alpha / "metadata.yaml").read_text())
    assert cli.main(["stack", "version", str(work / "providers")]) == 0
    assert tree(work) != before


def fail_second_replace(monkeypatch):
    """Make the second ``os.replace`` fail (a disk filling up mid-commit); returns the real one."""
    real = os.replace
    calls = []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", dst)
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    return real


# --------------------------------------------------------------------------- all or nothing
def test_commit_files_puts_everything_back_when_a_rename_fails(tmp_path, monkeypatch):
    (tmp_path / "a").write_text("old a")
    (tmp_path / "a").chmod(0o755)
    (tmp_path / "c").write_text("same")
    changes = [(str(tmp_path / "a"), b"new a"), (str(tmp_path / "sub" / "b"), b"new b"), (str(tmp_path / "c"), b"same")]
    before = tree(tmp_path)
    real = fail_second_replace(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        stacktree.commit_files(changes, str(tmp_path))
    monkeypatch.setattr(os, "replace", real)
    assert tree(tmp_path) == before  # a restored, sub/ and its temporary removed, c never touched
    assert os.stat(str(tmp_path / "a")).st_mode & 0o777 == 0o755
    assert stacktree.commit_files(changes, str(tmp_path)) == [str(tmp_path / "a"), str(tmp_path / "sub" / "b")]
    assert (tmp_path / "a").read_text() == "new a" and os.stat(str(tmp_path / "a")).st_mode & 0o777 == 0o755


def test_commit_files_refuses_what_is_in_the_way(tmp_path):
    (tmp_path / "d").mkdir()
    os.symlink("/etc/passwd", str(tmp_path / "l"))
    os.symlink("..", str(tmp_path / "up"))
    for path, message in (("d", "is a directory"), ("l", "resolves outside"), ("up/x", "resolves outside")):
        with pytest.raises((stacktree.StackError, ValueError), match=message):
            stacktree.commit_files([(str(tmp_path / "new"), b"x"), (str(tmp_path / path), b"x")], str(tmp_path))
        assert not (tmp_path / "new").exists()
    os.symlink("d", str(tmp_path / "inside"))
    with pytest.raises(stacktree.StackError, match="is a symlink; refusing to replace it"):
        stacktree.commit_files([(str(tmp_path / "inside"), b"x")], str(tmp_path))


def test_export_stages_a_new_directory_and_renames_it(tmp_path, monkeypatch):
    out = tmp_path / "out"
    written = stackexport.write_export(str(out), {"a": {"x.yaml": "1\n"}, "b": {"x.yaml": "2\n"}})
    assert written == [str(out / "a" / "x.yaml"), str(out / "b" / "x.yaml")]
    assert sorted(os.listdir(str(tmp_path))) == ["out"]  # no staging directory left
    assert oct(os.stat(str(out)).st_mode & 0o777) == oct(0o777 & ~_umask())
    real = os.rename
    monkeypatch.setattr(os, "rename", lambda a, b: (_x for _x in ()).throw(OSError(5, "I/O error", b)))
    with pytest.raises(OSError):
        stackexport.write_export(str(tmp_path / "out2"), {"": {"x.yaml": "1\n"}})
    monkeypatch.setattr(os, "rename", real)
    assert sorted(os.listdir(str(tmp_path))) == ["out"]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_export_into_an_existing_directory_keeps_other_files(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("mine\n")
    (out / "a.yaml").write_text("old\n")
    assert stackexport.write_export(str(out), {"": {"a.yaml": "new\n", "b.yaml": "b\n"}}) == [str(out / "a.yaml"), str(out / "b.yaml")]
    assert (out / "mine.txt").read_text() == "mine\n" and (out / "a.yaml").read_text() == "new\n"
    assert stackexport.write_export(str(out), {"": {"a.yaml": "new\n", "b.yaml": "b\n"}}) == []  # nothing changed, nothing written
    before = tree(out)
    real = fail_second_replace(monkeypatch)
    with pytest.raises(OSError):
        stackexport.write_export(str(out), {"": {"a.yaml": "newer\n", "b.yaml": "newer\n"}})
    monkeypatch.setattr(os, "replace", real)
    assert tree(out) == before


def test_export_output_that_is_a_file(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(stacktree.StackError, match="out: exists and is not a directory"):
        stackexport.write_export(str(tmp_path / "out"), {"": {"a.yaml": "1\n"}})
    with pytest.raises(stacktree.StackError, match="the directory .*/nodir does not exist"):
        stackexport.write_export(str(tmp_path / "nodir" / "out"), {"": {"a.yaml": "1\n"}})


def test_cli_export_of_two_stacks(work, alpha, capsys):
    beta = beta_of(work, alpha)
    helm = fake_helm(work)
    out = work / "out"
    assert cli.main(["stack", "export", str(work / "providers"), "-o", str(out), "--helm", helm]) == 0
    assert sorted(os.listdir(str(out))) == ["openstack-alpha-1-28", "openstack-beta-1-28"]
    assert "name: openstack-beta-1-28-" in (out / "openstack-beta-1-28" / "clusterclass.yaml").read_text()
    assert "name: openstack-alpha-1-28-v2\n" in (out / "openstack-alpha-1-28" / "clusterclass.yaml").read_text()
    capsys.readouterr()
    assert cli.main(["stack", "export", str(work / "providers"), "-o", str(out), "--helm", helm]) == 0
    assert "wrote" not in capsys.readouterr().out
    # the second stack broken: nothing written, helm never run
    shutil.rmtree(str(out))
    (beta / "metadata.yaml").write_text("versions: {components: [1]}\n")
    mark = fake_helm(work, 'touch "%s"\nexit 1\n' % (work / "helm-ran"))
    before = tree(work)
    assert cli.main(["stack", "export", str(work / "providers"), "-o", str(out), "--helm", mark]) == 1
    assert "beta/1-28/metadata.yaml: versions.components: must be a mapping" in capsys.readouterr().err
    assert tree(work) == before


def test_cli_export_of_two_stacks_with_one_name(work, alpha, capsys):
    shutil.copytree(str(work / "providers"), str(work / "all" / "a" / "providers"))
    shutil.copytree(str(work / "providers"), str(work / "all" / "b" / "providers"))
    assert cli.main(["stack", "export", str(work / "all"), "-o", str(work / "out"), "--helm", fake_helm(work)]) == 1
    assert "are both the stack openstack-alpha-1-28" in capsys.readouterr().err
    assert not (work / "out").exists()


# --------------------------------------------------------------------------- helm's output
CHART = os.path.join(SEED, "openstack", "alpha", "1-28", "cluster-class")


@pytest.mark.parametrize("script, message", [
    ("cat <<'EOF'\na0: &a0 [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        "a%d: &a%d [%s]\n" % (i, i, ",".join(["*a%d" % (i - 1)] * 10)) for i in range(1, 9)) + "EOF\n",
     "printed invalid YAML: helm template output: aliases expand to more than"),
    ("printf 'kind: caf\\351\\n'\n", "printed invalid YAML: helm template output: not UTF-8 (byte 0xe9"),
    ("head -c 200000 /dev/zero | tr '\\0' x; echo\n", "printed a document that is not an object: 'xxxxx"),
])
def test_helm_output_is_bounded(tmp_path, script, message):
    with pytest.raises(h.HelmError) as info:
        h.template(CHART, "r", {}, helm=fake_helm(tmp_path, script))
    assert message in str(info.value) and len(str(info.value)) < 600


def test_helm_output_size_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(h, "MAX_OUTPUT_BYTES", 1000)
    with pytest.raises(h.HelmError, match="printed 2000 bytes, more than the limit of 1000"):
        h.template(CHART, "r", {}, helm=fake_helm(tmp_path, "head -c 2000 /dev/zero | tr '\\0' '\\n'\n"))
