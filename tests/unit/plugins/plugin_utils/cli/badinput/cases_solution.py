# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad solution archives, sources, outputs and keys for ``mooring solution validate|build|keygen``
(ids ``solution-``).

Good inputs come from the example solution (tests/solutions/example.py), written into
``{work}`` by each case's setup; each case then breaks one thing. Archives are packed here with
tarfile (and pycdlib for ISO images) so that a case can hold what ``solution build`` never writes.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import io
import os
import shutil
import tarfile
import zlib

import yaml

from .harness import Case

_HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(_HERE, "..", "..", "..", "..", "..", ".."))


@functools.cache
def _example():
    spec = importlib.util.spec_from_file_location("mooring_example_solution", os.path.join(ROOT, "tests", "solutions", "example.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def source(work, version="1.0.0"):
    """The example solution's source tree at ``{work}/src``."""
    return _example().write_source(os.path.join(work, "src"), version)


def manifest_data(version="1.0.0"):
    return _example().manifest(version)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def sums(src):
    lines = []
    for dirpath, _dirs, files in os.walk(src):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), src).replace(os.sep, "/")
            if rel in ("SHA256SUMS", "SHA256SUMS.sig"):
                continue
            with open(os.path.join(dirpath, f), "rb") as fh:
                lines.append("%s  %s\n" % (hashlib.sha256(fh.read()).hexdigest(), rel))
    return "".join(sorted(lines, key=lambda x: x[66:]))


def pack(src, out, extra=(), mode="w", sums_text=None):
    """A tar of ``src`` as it is, SHA256SUMS generated (or ``sums_text``), plus raw members ``(TarInfo, bytes or None)``."""
    write(os.path.join(src, "SHA256SUMS"), sums(src) if sums_text is None else sums_text)
    with tarfile.open(out, mode, format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirs, files in os.walk(src):
            dirs.sort()
            for f in sorted(files):
                full = os.path.join(dirpath, f)
                tar.add(full, arcname=os.path.relpath(full, src))
        for ti, data in extra:
            tar.addfile(ti, io.BytesIO(data) if data is not None else None)
    return out


def member(name, kind=tarfile.REGTYPE, data=b"", linkname=""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.linkname = linkname
    if kind == tarfile.REGTYPE:
        ti.size = len(data)
        return ti, data
    return ti, None


def alias_bomb(levels=9, width=10):
    lines = ["a0: &a0 [%s]" % ",".join(["x"] * width)]
    lines += ["a%d: &a%d [%s]" % (i, i, ",".join(["*a%d" % (i - 1)] * width)) for i in range(1, levels + 1)]
    return "\n".join(lines) + "\nspec: *a%d\n" % levels


def zeros_gzip(size, piece=64 << 20):
    """``size`` zero bytes streamed through gzip, as a multi-member gzip stream (one member of
    ``piece`` zeros compressed once and repeated: every gzip reader reads the members as one stream)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = c.compress(bytes(piece)) + c.flush()
    return block * (size // piece)


def gzip_member(data):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


ARCHIVE = "{work}/a.tar"


def validate_case(cid, mutate, stderr, extra_argv=(), name="a.tar", mode="w", extra=None):
    """``solution validate`` of the example, packed after ``mutate(src)``, plus ``extra(work)`` members."""
    def setup(work):
        src = source(work)
        if mutate is not None:
            mutate(src)
        pack(src, os.path.join(work, name), extra(work) if extra else (), mode=mode)
    return Case("solution-validate-" + cid, ["solution", "validate", "{work}/" + name] + list(extra_argv),
                setup=setup, stderr=stderr)


def set_manifest(text):
    def mutate(src):
        write(os.path.join(src, "manifest.yaml"), text)
    return mutate


def edit_manifest(fn):
    def mutate(src):
        data = manifest_data()
        fn(data)
        write(os.path.join(src, "manifest.yaml"), yaml.safe_dump(data, sort_keys=False))
    return mutate


def _set(path, value):
    def fn(data):
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return fn


# (id, manifest text or mutation, stderr regex): each manifest refused, named, in one line.
MANIFESTS = [
    ("alias-bomb-unsigned", set_manifest(alias_bomb()), r"manifest.yaml: aliases \(\*name\) are not allowed"),
    ("alias-one", set_manifest("a: &a {name: x}\nmetadata: *a\n"), r"manifest.yaml: aliases \(\*name\) are not allowed"),
    ("list", set_manifest("- a\n- b\n"), r"manifest.yaml: \(document\): must be a mapping"),
    ("string", set_manifest("just a string\n"), r"manifest.yaml: \(document\): must be a mapping"),
    ("empty", set_manifest(""), r"manifest.yaml: \(document\): must be a mapping"),
    ("deep-nesting", set_manifest("spec: " + "[" * 10000 + "]" * 10000 + "\n"), r"manifest.yaml: nested deeper than 64"),
    ("deep-nesting-block", set_manifest("".join("%sk:\n" % ("  " * i) for i in range(100)) + "  " * 100 + "v\n"),
     r"manifest.yaml: nested deeper than 64"),
    ("utf16", set_manifest(("\ufeff" + yaml.safe_dump(manifest_data())).encode("utf-16-le")), r"manifest.yaml: UTF-16/32"),
    ("latin1", set_manifest("metadata: {name: caf\xe9}\n".encode("latin-1")), r"manifest.yaml: not UTF-8 \(byte 0xe9"),
    ("nul", set_manifest(b"kind: Solution\x00\n"), r"manifest.yaml: NUL byte"),
    ("too-large", set_manifest("# " + "x" * 70000 + "\n"), r"manifest.yaml: \d+ bytes, more than the limit of 65536"),
    ("name-slash", edit_manifest(_set(["metadata", "name"], "a/b")), r"manifest.yaml: metadata.name: must be a name of .*, not 'a/b'"),
    ("name-dotdot", edit_manifest(_set(["metadata", "name"], "..")), r"manifest.yaml: metadata.name: must be a name of .*, not '\.\.'"),
    ("name-newline", edit_manifest(_set(["metadata", "name"], "example\n")), r"manifest.yaml: metadata.name: must be a name of .*, not 'example\\n'"),
    ("name-huge", edit_manifest(_set(["metadata", "name"], "x" * 50000)), r"manifest.yaml: metadata.name: must be a name of .*, not 'x{20,80}\.\.\.$"),
    ("name-int", edit_manifest(_set(["metadata", "name"], 5)), r"manifest.yaml: metadata.name: must be a name of .*, not 5$"),
    ("version-slash", edit_manifest(_set(["spec", "version"], "1.0.0/../x")), r"spec.version: must be a semantic version .*, not '1.0.0/\.\./x'"),
    ("version-newline", edit_manifest(_set(["spec", "version"], "1.0.0\n")), r"manifest.yaml: spec.version: must be a semantic version .*, not '1.0.0\\n'"),
    ("version-long", edit_manifest(_set(["spec", "version"], "1.0.0-" + "a" * 200)),
     r"solution name and version 'example-1.0.0-a+\.\.\. is not a safe name"),
    ("image-dotdot", edit_manifest(lambda d: d["spec"]["images"].append({"name": "a/../b", "tag": "1"})),
     r"spec.images\[2\].name: must be an image name: .*, not 'a/\.\./b'"),
    ("image-tag-dotdot", edit_manifest(lambda d: d["spec"]["images"].append({"name": "b", "tag": ".."})),
     r"spec.images\[2\].tag: must be an image tag: .*, not '\.\.'"),
    ("image-tag-slash", edit_manifest(lambda d: d["spec"]["images"].append({"name": "b", "tag": "1/../../x"})),
     r"spec.images\[2\].tag: must be an image tag: .*, not '1/\.\./\.\./x'"),
    ("image-name-absolute", edit_manifest(lambda d: d["spec"]["images"].append({"name": "/etc/b", "tag": "1"})),
     r"spec.images\[2\].name: must be an image name: .*, not '/etc/b'"),
    ("images-not-list", edit_manifest(_set(["spec", "images"], {"a": 1})), r"spec.images: must be a list, not a mapping"),
    ("spec-huge-list", edit_manifest(_set(["spec"], list(range(5000)))), r"manifest.yaml: spec: must be a mapping, not a list"),
    ("unknown-field-huge", edit_manifest(_set(["spec", "x" * 5000], 1)), r"spec\.'x{20,60}\.\.\.: is not a known field \(known: images, operator, version\)"),
]


def _index_deep(src):
    root = os.path.join(src, "images", "example-app", "1.0.0")
    write(os.path.join(root, "index.json"), "[" * 100000 + "]" * 100000)


def _operator_bomb(src):
    write(os.path.join(src, "operator", "deploy", "rbac.yaml"), alias_bomb(levels=8) + "kind: Role\n")


def _operator_spec_list(src):
    write(os.path.join(src, "operator", "deploy", "deployment.yaml"),
          "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: [1, 2]\n")


def _operator_containers_int(src):
    write(os.path.join(src, "operator", "deploy", "deployment.yaml"),
          "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: {spec: {containers: 5}}}\n")


def _sums_long_line(work):
    src = source(work)
    pack(src, os.path.join(work, "a.tar"), sums_text=sums(src) + "%s  %s\n" % ("0" * 64, "a/" * 300000))


def _many_traversals(work):
    return [member("../evil%d" % i, data=b"x") for i in range(200)]


def _special_members(kind):
    def extra(work):
        ti = tarfile.TarInfo("images/dev")
        ti.type = kind
        return [(ti, None)]
    return extra


def _sparse(work):
    ti = tarfile.TarInfo("operator/deploy/sparse.yaml")
    ti.type = tarfile.GNUTYPE_SPARSE
    return [(ti, None)]


MEMBERS = [
    ("member-absolute", lambda w: [member("/etc/passwd", data=b"root")], r"/etc/passwd: absolute path \(path traversal\)"),
    ("member-dotdot", lambda w: [member("../../etc/cron.d/x", data=b"x")], r"\.\./\.\./etc/cron.d/x: '\.\.' in the path"),
    ("member-dotdot-inside", lambda w: [member("images/../../x", data=b"x")], r"images/\.\./\.\./x: '\.\.' in the path"),
    ("member-symlink-outside", lambda w: [member("operator/deploy/l.yaml", tarfile.SYMTYPE, linkname="../../../../etc/shadow")],
     r"operator/deploy/l.yaml: symlink to '\.\./\.\./\.\./\.\./etc/shadow' escapes the archive root"),
    ("member-symlink-absolute", lambda w: [member("images/x", tarfile.SYMTYPE, linkname="/etc")],
     r"images/x: symlink to '/etc' escapes"),
    ("member-hardlink-outside", lambda w: [member("images/h", tarfile.LNKTYPE, linkname="../etc/passwd")],
     r"images/h: hard link to '\.\./etc/passwd' escapes"),
    ("member-fifo", _special_members(tarfile.FIFOTYPE), r"images/dev: devices, FIFOs and other special files are not allowed"),
    ("member-chardev", _special_members(tarfile.CHRTYPE), r"images/dev: devices, FIFOs and other special files are not allowed"),
    ("member-sparse", _sparse, r"operator/deploy/sparse.yaml: sparse files are not allowed"),
    ("member-name-not-utf8", lambda w: [member("operator/deploy/a\udcffb.yaml", data=b"x")], r"the name is not UTF-8"),
    ("member-name-newline", lambda w: [member("operator/deploy/a\nb.yaml", data=b"x")],
     r"'operator/deploy/a\\nb.yaml': control or other non-printable character"),
    ("member-name-long", lambda w: [member("operator/deploy/" + "a" * 3000 + ".yaml", data=b"x")],
     r": operator/deploy/a{20,200}\.\.\.: path longer than 512 characters"),
    ("member-many-bad", _many_traversals, r"\d+ more problems not shown"),
]


def _bomb_tar_gz(work, size=1 << 30):
    """A ~1 MB tar.gz whose one member declares (and holds) ``size`` zero bytes."""
    ti = tarfile.TarInfo("images/big")
    ti.size = size
    with open(os.path.join(work, "bomb.tar.gz"), "wb") as f:
        f.write(gzip_member(ti.tobuf(format=tarfile.PAX_FORMAT)))
        f.write(zeros_gzip(size))


def _pax_bomb(work):
    ti = tarfile.TarInfo("x")
    ti.type = tarfile.XHDTYPE
    ti.size = 900 << 20
    with open(os.path.join(work, "bomb.tar.gz"), "wb") as f:
        f.write(gzip_member(ti.tobuf(format=tarfile.USTAR_FORMAT)))
        f.write(zeros_gzip(1 << 20, piece=1 << 20))


def _trailing(work):
    src = source(work)
    pack(src, os.path.join(work, "bomb.tar.gz"), mode="w:gz")
    with open(os.path.join(work, "bomb.tar.gz"), "ab") as f:
        f.write(zeros_gzip(64 << 20))


def _truncated(name, mode, keep):
    def setup(work):
        out = pack(source(work), os.path.join(work, name), mode=mode)
        with open(out, "rb") as f:
            data = f.read()
        write(out, data[:int(len(data) * keep)])
    return setup


def _iso(work, cut=None, garbage=False):
    import pycdlib  # noqa: PLC0415 - the ISO cases only

    out = os.path.join(work, "a.iso")
    if garbage:
        write(out, b"\0" * 0x8001 + b"CD001" + bytes(range(256)) * 16)
        return
    iso = pycdlib.PyCdlib()
    iso.new(interchange_level=3, rock_ridge="1.09")
    data = yaml.safe_dump(manifest_data()).encode()
    iso.add_fp(io.BytesIO(data), len(data), "/F1.;1", rr_name="manifest.yaml")
    iso.write(out)
    iso.close()
    if cut:
        with open(out, "rb") as f:
            blob = f.read()
        write(out, blob[:cut])


def _fifo(name):
    def setup(work):
        os.mkfifo(os.path.join(work, name))
    return setup


def one_line(pattern):
    """A stderr regex: exactly one ``error:`` line, matching ``pattern``."""
    return r"\Aerror: [^\n]*" + pattern + r"[^\n]*\n\Z"


RBAC = "rbac.authorization.k8s.io"
EVERYONE = {"kind": "Group", "apiGroup": RBAC, "name": "system:authenticated"}
OPERATOR_SA = {"kind": "ServiceAccount", "name": "example-operator"}


def rbac_binding(role="cluster-admin", subjects=(EVERYONE,), kind="ClusterRoleBinding", role_kind="ClusterRole", name="everyone"):
    return {"apiVersion": RBAC + "/v1", "kind": kind, "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role}, "subjects": list(subjects)}


def operator_docs(*docs, fname="extra.yaml"):
    def mutate(src):
        write(os.path.join(src, "operator", "deploy", fname), yaml.safe_dump_all(list(docs)))
    return mutate


def operator_text(text, fname="extra.yaml"):
    def mutate(src):
        write(os.path.join(src, "operator", "deploy", fname), text)
    return mutate


REFUSED = r".*; refused: a solution may not grant that unless the operator allows it for this archive \(allow_broad_rbac: \[example-1.0.0\]"
ALIASED = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: aliased, annotations: {who: &everyone system:authenticated, role: &admin cluster-admin}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: *admin}
subjects: [{kind: Group, apiGroup: rbac.authorization.k8s.io, name: *everyone}]
"""

# (id, mutation of the source, extra argv, stderr regex): an operator's binding that grants broadly,
# refused in one line naming the member and the object, unless --allow-broad-rbac names the archive.
RBAC_CASES = [
    ("rbac-admin-to-authenticated", operator_docs(rbac_binding()), [],
     r"operator/deploy/extra.yaml: document 1 \(ClusterRoleBinding everyone\): binds the ClusterRole cluster-admin "
     r"\(every right on the cluster\) to group system:authenticated \(every signed-in user\)" + REFUSED),
    ("rbac-admin-to-anonymous-user", operator_docs(rbac_binding(subjects=[{"kind": "User", "name": "system:anonymous"}])), [],
     r"document 1 \(ClusterRoleBinding everyone\): binds the ClusterRole cluster-admin .* to user system:anonymous" + REFUSED),
    ("rbac-role-to-unauthenticated",
     operator_docs(rbac_binding("view", [{"kind": "Group", "name": "system:unauthenticated"}], kind="RoleBinding")), [],
     r"document 1 \(RoleBinding everyone\): grants the ClusterRole view to group system:unauthenticated" + REFUSED),
    ("rbac-admin-to-own-service-account", operator_docs(rbac_binding(subjects=[OPERATOR_SA])), [],
     r"binds the ClusterRole cluster-admin \(every right on the cluster\) to ServiceAccount example-operator" + REFUSED),
    ("rbac-admin-in-a-namespace", operator_docs(rbac_binding(subjects=[OPERATOR_SA], kind="RoleBinding")), [],
     r"document 1 \(RoleBinding everyone\): binds the ClusterRole cluster-admin" + REFUSED),
    ("rbac-every-service-account", operator_docs(rbac_binding("edit", [{"kind": "Group", "name": "system:serviceaccounts"}])), [],
     r"grants the ClusterRole edit to group system:serviceaccounts \(every service account of the cluster\)" + REFUSED),
    ("rbac-in-the-operator-s-own-file", operator_docs(rbac_binding("example-operator", [OPERATOR_SA, EVERYONE], name="example-operator"),
                                                      fname="rbac.yaml"), [],
     r"operator/deploy/rbac.yaml: document 1 \(ClusterRoleBinding example-operator\): grants the ClusterRole example-operator "
     r"to group system:authenticated" + REFUSED),
    ("rbac-through-a-yaml-alias", operator_text(ALIASED), [],
     r"operator/deploy/extra.yaml: document 1 \(ClusterRoleBinding aliased\): binds the ClusterRole cluster-admin .* to group "
     r"system:authenticated" + REFUSED),
    ("rbac-hidden-in-a-list", operator_docs({"apiVersion": "v1", "kind": "List", "metadata": {"name": "hidden"},
                                             "items": [rbac_binding()]}), [],
     r"operator/deploy/extra.yaml: document 1: 'List': a list of objects is not allowed in operator manifests"),
    ("rbac-hidden-in-a-binding-list", operator_docs({"apiVersion": RBAC + "/v1", "kind": "ClusterRoleBindingList",
                                                     "metadata": {"name": "hidden"}, "items": [rbac_binding()]}), [],
     r"document 1: 'ClusterRoleBindingList': a list of objects is not allowed"),
    ("rbac-allowed-for-another-version", operator_docs(rbac_binding()), ["--allow-broad-rbac", "example-2.0.0"],
     r"binds the ClusterRole cluster-admin" + REFUSED),
    ("rbac-allowed-by-name-only", operator_docs(rbac_binding()), ["--allow-broad-rbac", "example"],
     r"binds the ClusterRole cluster-admin" + REFUSED),
    ("rbac-allow-not-a-name", None, ["--allow-broad-rbac", "example\n1.0.0"],
     r"allow_broad_rbac: must be a list of archives named <name>-<version> \(e.g. example-1.0.0\), not \['example\\n1.0.0'\]"),
    ("image-dir-not-a-name", lambda src: shutil.copytree(os.path.join(src, "images", "example-app", "1.0.0"),
                                                         os.path.join(src, "images", "Evil@sha256", "x:y")), [],
     r"images/Evil@sha256/x:y: not an image directory images/NAME/TAG: the name 'Evil@sha256' must be an image name.*; "
     r"the tag 'x:y' must be an image tag"),
]


def _solution_cases():
    cases = [validate_case("manifest-" + cid, mutate, stderr) for cid, mutate, stderr in MANIFESTS]
    cases += [validate_case(cid, None, stderr, extra=extra) for cid, extra, stderr in MEMBERS]
    cases += [validate_case(cid, mutate, one_line(stderr), extra_argv=argv) for cid, mutate, argv, stderr in RBAC_CASES]
    cases += [
        validate_case("index-deep-json", _index_deep, r"images/example-app/1.0.0/index.json: not valid JSON: nested too deeply"),
        Case("solution-validate-sums-long-line", ["solution", "validate", ARCHIVE], setup=_sums_long_line,
             stderr=r"SHA256SUMS: line \d+: 'a/a/a/.{20,200}\.\.\.: path longer than 512 characters"),
        validate_case("operator-alias-bomb", _operator_bomb, r"operator/deploy/rbac.yaml: aliases expand to more than"),
        validate_case("operator-spec-list", _operator_spec_list, r"no container runs the operator image"),
        validate_case("operator-containers-int", _operator_containers_int, r"no container runs the operator image"),
        validate_case("manifest-bomb-tgz", set_manifest(alias_bomb()), r"manifest.yaml: aliases", name="a.tar.gz", mode="w:gz"),
        validate_case("manifest-bomb-bz2", set_manifest(alias_bomb()), r"manifest.yaml: aliases", name="a.tar.bz2", mode="w:bz2"),
        validate_case("manifest-bomb-xz", set_manifest(alias_bomb()), r"manifest.yaml: aliases", name="a.tar.xz", mode="w:xz"),
        Case("solution-validate-gzip-bomb-1gib-member", ["solution", "validate", "{work}/bomb.tar.gz"], setup=_bomb_tar_gz,
             stderr=r"bomb.tar.gz: refused: member 'images/big' declares 1073741824 bytes, past the budget"),
        Case("solution-validate-gzip-pax-header-bomb", ["solution", "validate", "{work}/bomb.tar.gz"], setup=_pax_bomb,
             stderr=r"bomb.tar.gz: refused: a pax extended header of 943718400 bytes at offset 0 \(at most 1048576\)"),
        Case("solution-validate-gzip-trailing-zeros", ["solution", "validate", "{work}/bomb.tar.gz"], setup=_trailing,
             stderr=r"bomb.tar.gz: more than 1048576 bytes after the end of the tar archive"),
        Case("solution-validate-truncated-tar-gz", ["solution", "validate", "{work}/a.tar.gz"],
             setup=_truncated("a.tar.gz", "w:gz", 0.5), stderr=r"a.tar.gz: cannot read the tar archive: 'Compressed file ended"),
        Case("solution-validate-truncated-tar", ["solution", "validate", ARCHIVE],
             setup=_truncated("a.tar", "w", 0.3), stderr=r"a.tar: (cut off or corrupt after \d+ members|cannot read the tar archive)"),
        Case("solution-validate-truncated-tar-bz2", ["solution", "validate", "{work}/a.tar.bz2"],
             setup=_truncated("a.tar.bz2", "w:bz2", 0.5), stderr=r"a.tar.bz2: cannot read the tar archive"),
        Case("solution-validate-not-an-archive", ["solution", "validate", ARCHIVE], files={"a.tar": "hello world\n" * 100},
             stderr=r"a.tar: not an ISO 9660 image or a tar archive"),
        Case("solution-validate-gzip-not-tar", ["solution", "validate", "{work}/a.tgz"], files={"a.tgz": gzip_member(b"hello\n" * 300)},
             stderr=r"a.tgz: gzip-compressed, but not a tar archive"),
        Case("solution-validate-gzip-garbage", ["solution", "validate", "{work}/a.tgz"], files={"a.tgz": b"\x1f\x8b" + b"\xff" * 100},
             stderr=r"a.tgz: cannot read the tar archive"),
        Case("solution-validate-empty-file", ["solution", "validate", ARCHIVE], files={"a.tar": b""},
             stderr=r"a.tar: not an ISO 9660 image or a tar archive"),
        Case("solution-validate-zeros", ["solution", "validate", ARCHIVE], files={"a.tar": b"\0" * 10240},
             stderr=r"a.tar: the archive is empty"),
        Case("solution-validate-directory", ["solution", "validate", "{work}/a.tar"], files={"a.tar": None},
             stderr=r"a.tar: is a directory, not the archive file"),
        Case("solution-validate-fifo", ["solution", "validate", "{work}/a.tar"], setup=_fifo("a.tar"),
             stderr=r"a.tar: not a regular file \(a FIFO, device or socket\)"),
        Case("solution-validate-dev-zero", ["solution", "validate", "/dev/zero"], stderr=r"/dev/zero: not a regular file"),
        Case("solution-validate-missing", ["solution", "validate", "{work}/nope.tar"], stderr=r"nope.tar: no such archive file"),
        Case("solution-validate-iso-truncated", ["solution", "validate", "{work}/a.iso"],
             setup=lambda w: _iso(w, cut=40000), stderr=r"a.iso: cannot read the ISO 9660 image"),
        Case("solution-validate-iso-garbage", ["solution", "validate", "{work}/a.iso"],
             setup=lambda w: _iso(w, garbage=True), stderr=r"a.iso: cannot read the ISO 9660 image"),
        Case("solution-validate-pubkey-fifo", ["solution", "validate", ARCHIVE, "--pubkey", "{work}/k.pub"],
             setup=lambda w: (pack(source(w), os.path.join(w, "a.tar")), os.mkfifo(os.path.join(w, "k.pub"))),
             stderr=r"k.pub: not a regular file; give the Ed25519 public key file"),
        Case("solution-validate-pubkey-directory", ["solution", "validate", ARCHIVE, "--pubkey", "{work}/k.pub"],
             files={"k.pub": None}, setup=lambda w: pack(source(w), os.path.join(w, "a.tar")),
             stderr=r"k.pub: is a directory, not an Ed25519 public key file"),
        Case("solution-validate-pubkey-huge", ["solution", "validate", ARCHIVE, "--pubkey", "{work}/k.pub"],
             files={"k.pub": b"-" * 200000}, setup=lambda w: pack(source(w), os.path.join(w, "a.tar")),
             stderr=r"k.pub: 200000 bytes, too large for an Ed25519 public key"),
        Case("solution-validate-pubkey-garbage", ["solution", "validate", ARCHIVE, "--pubkey", "{work}/k.pub"],
             files={"k.pub": bytes(range(256))}, setup=lambda w: pack(source(w), os.path.join(w, "a.tar")),
             stderr=r"k.pub: the public key is not an Ed25519 key"),
    ]
    return cases


# --------------------------------------------------------------------------- build
def build_case(cid, argv_tail, stderr, setup_more=None, files=None, mutate=None):
    def setup(work):
        src = source(work)
        if mutate is not None:
            mutate(src)
        if setup_more is not None:
            setup_more(work)
    return Case("solution-build-" + cid, ["solution", "build", "{work}/src"] + list(argv_tail), setup=setup, files=files,
                stderr=stderr)


def _old_archive(work):
    """A valid archive at {work}/out.tar that a refused build must leave as it is."""
    from ansible_collections.mooring.cluster.plugins.module_utils.solutions import build  # noqa: PLC0415

    other = _example().write_source(os.path.join(work, "old-src"), "2.0.0")
    build.build_archive(other, os.path.join(work, "out.tar"))


def _bad_name(src):
    write(os.path.join(src, "foo\udcffbar"), b"x")


BUILDS = [
    build_case("output-missing-dir", ["-o", "{work}/nodir/out.tar"], r"nodir/out.tar: the directory .*/nodir does not exist"),
    build_case("output-below-file", ["-o", "{work}/file/out.tar"], r"file/out.tar: the directory .*/file is not a directory",
               files={"file": "x"}),
    build_case("output-is-directory", ["-o", "{work}/out.tar"], r"out.tar: is a directory; give the archive's file name",
               files={"out.tar": None}),
    build_case("output-is-fifo", ["-o", "{work}/out.tar"], r"out.tar: exists and is not a regular file; refusing to replace it",
               setup_more=_fifo("out.tar")),
    build_case("output-dev-null", ["-o", "/dev/null", "--format", "tar"], r"/dev/null: exists and is not a regular file"),
    build_case("output-unknown-extension", ["-o", "{work}/out.zip"], r"out.zip: cannot tell the archive format"),
    build_case("manifest-alias-bomb", ["-o", "{work}/out.tar"], r"out.tar: manifest.yaml: aliases \(\*name\) are not allowed",
               mutate=set_manifest(alias_bomb())),
    build_case("manifest-name-dotdot-keeps-old", ["-o", "{work}/out.tar"], r"out.tar: not built|metadata.name: must be a name of .*, not '\.\.'",
               mutate=edit_manifest(_set(["metadata", "name"], "..")), setup_more=_old_archive),
    build_case("manifest-utf16", ["-o", "{work}/out.tar.gz"], r"out.tar.gz: manifest.yaml: UTF-16/32",
               mutate=set_manifest(("\ufeff" + yaml.safe_dump(manifest_data())).encode("utf-16-le"))),
    build_case("image-name-dotdot", ["-o", "{work}/out.iso"], r"spec.images\[2\].name: must be an image name: .*, not 'x/\.\./y'",
               mutate=edit_manifest(lambda d: d["spec"]["images"].append({"name": "x/../y", "tag": "1"}))),
    build_case("source-name-not-utf8", ["-o", "{work}/out.tar"], r"src: the file name .* is not printable UTF-8",
               mutate=_bad_name),
    build_case("source-fifo", ["-o", "{work}/out.tar"], r"operator/deploy/f.yaml: only regular files are allowed",
               mutate=lambda src: os.mkfifo(os.path.join(src, "operator", "deploy", "f.yaml"))),
    build_case("source-symlink", ["-o", "{work}/out.tar"], r"operator/deploy/p.yaml: only regular files are allowed",
               mutate=lambda src: os.symlink("/etc/passwd", os.path.join(src, "operator", "deploy", "p.yaml"))),
    build_case("key-fifo", ["-o", "{work}/out.tar", "--key", "{work}/k.pem"],
               r"k.pem: not a regular file; give the Ed25519 private key file", setup_more=_fifo("k.pem")),
    build_case("key-is-public", ["-o", "{work}/out.tar", "--key", "{work}/k.pem"],
               r"k.pem: cannot load the Ed25519 private key \(unencrypted PEM\)",
               files={"k.pem": "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n"
                               "-----END PUBLIC KEY-----\n"}),
    build_case("key-missing", ["-o", "{work}/out.tar", "--key", "{work}/nope.pem"],
               r"nope.pem: cannot load the Ed25519 private key: No such file"),
    Case("solution-build-source-not-dir", ["solution", "build", "{work}/src", "-o", "{work}/out.tar"], files={"src": "x"},
         stderr=r"src: not a directory"),
]


# --------------------------------------------------------------------------- keygen
def _link_to_work(work):
    os.symlink(work, os.path.join(work, "here"))


def _dangling(work):
    os.symlink(os.path.join(work, "..", "outside", "k.pub"), os.path.join(work, "k.pub"))


def _hardlinked(work):
    write(os.path.join(work, "k.pem"), "x")
    os.link(os.path.join(work, "k.pem"), os.path.join(work, "k2.pem"))


SAME = r"are the same file; the private and the public key need two paths"
KEYGEN = [
    ("same-path", ["k.pem", "k.pem"], {}, None, SAME),
    ("same-path-dot", ["k.pem", "./k.pem"], {}, None, SAME),
    ("same-path-absolute", ["k.pem", "{work}/k.pem"], {}, None, SAME),
    ("same-path-dotdot", ["sub/../k.pem", "k.pem"], {"sub": None}, None, SAME),
    ("same-path-symlinked-dir", ["k.pem", "here/k.pem"], {}, _link_to_work, SAME),
    ("same-path-existing", ["k.pem", "{work}/k.pem"], {"k.pem": "old"}, None, SAME),
    ("same-file-hardlinks", ["k.pem", "k2.pem"], {}, _hardlinked, SAME),
    ("existing-private", ["k.pem", "k.pub"], {"k.pem": "old private"}, None,
     r"k.pem: already exists; refusing to overwrite it with a new private key"),
    ("existing-public", ["k.pem", "k.pub"], {"k.pub": "old public"}, None,
     r"k.pub: already exists; refusing to overwrite it with a new public key"),
    ("existing-both", ["k.pem", "k.pub"], {"k.pem": "a", "k.pub": "b"}, None, r"k.pem: already exists"),
    ("public-dangling-symlink", ["k.pem", "k.pub"], {}, _dangling, r"k.pub: already exists"),
    ("private-is-directory", ["keys", "k.pub"], {"keys": None}, None, r"keys: already exists"),
    ("public-is-cwd", ["k.pem", "."], {}, None, r"\.: already exists"),
    ("private-missing-dir", ["nodir/k.pem", "k.pub"], {}, None, r"nodir/k.pem: the directory .*/nodir does not exist"),
    ("public-missing-dir", ["k.pem", "nodir/k.pub"], {}, None, r"nodir/k.pub: the directory .*/nodir does not exist"),
    ("private-below-file", ["file/k.pem", "k.pub"], {"file": "x"}, None, r"file/k.pem: the directory .*/file is not a directory"),
    ("public-below-file", ["k.pem", "file/k.pub"], {"file": "x"}, None, r"file/k.pub: the directory .*/file is not a directory"),
]


def _keygen_cases():
    return [Case("solution-keygen-" + cid, ["solution", "keygen"] + argv, files=files, setup=setup, stderr=stderr)
            for cid, argv, files, setup, stderr in KEYGEN]


CASES = _solution_cases() + BUILDS + _keygen_cases()
