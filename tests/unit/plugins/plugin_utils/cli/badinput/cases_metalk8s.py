# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile MetalK8s-shaped Solution archives for ``mooring solution validate`` (ids ``metalk8s-``).

The good archive is the example solution as MetalK8s's tooling builds it (tests/solutions/metalk8s.py:
skopeo dir: images hard-linked, genisoimage, SHA256SUM beside the ISO), built once and copied into
``{work}/src`` by each case; each case breaks one thing and packs the tree again, as an ISO with its
SHA256SUM (so the validation reaches what is broken) or, for members an ISO cannot hold, as a tar.
The bounds are mooring's own: the same limits hold whatever the archive's format.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import sys
import tarfile
import tempfile

import yaml

from .cases_solution import REFUSED, ROOT, alias_bomb, gzip_member, one_line, rbac_binding, write, zeros_gzip
from .harness import Case

sys.path.insert(0, os.path.join(ROOT, "tests", "solutions"))
import metalk8s  # noqa: E402

ISO = "example-solution-1.0.0.iso"
APP = "images/example-app/1.0.0"


@functools.cache
def _pristine():
    """The MetalK8s source tree of example-solution 1.0.0, built once per test process."""
    return metalk8s.write_source(os.path.join(tempfile.mkdtemp(prefix="mooring-metalk8s-"), "src"), "1.0.0")


def source(work):
    src = os.path.join(work, "src")
    shutil.copytree(_pristine(), src, symlinks=True)
    return src


def iso_case(cid, mutate, stderr, argv_tail=(), after=None):
    """``solution validate`` of the MetalK8s ISO built from the source after ``mutate(src)``, its
    SHA256SUM beside it; ``after(work)`` changes what is around the ISO."""
    def setup(work):
        src = source(work)
        if mutate is not None:
            mutate(src)
        metalk8s.build_iso(src, os.path.join(work, ISO), "1.0.0")
        shutil.rmtree(src)
        if after is not None:
            after(work)
    return Case("solution-validate-metalk8s-" + cid, ["solution", "validate", "{work}/" + ISO] + list(argv_tail),
                setup=setup, stderr=stderr)


def manifest_text(text):
    return lambda src: write(os.path.join(src, "manifest.yaml"), text)


def edit_manifest(fn):
    def mutate(src):
        path = os.path.join(src, "manifest.yaml")
        with open(path) as f:
            data = yaml.safe_load(f)
        fn(data)
        write(path, yaml.safe_dump(data, sort_keys=False))
    return mutate


def operator_text(text):
    return lambda src: write(os.path.join(src, "operator", "deploy", "operator.yaml"), text)


def _flip_byte(work):
    path = os.path.join(work, ISO)
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 1]))


def _sidecar(content=None, fifo=False):
    def after(work):
        path = os.path.join(work, "SHA256SUM")
        os.unlink(path)
        if fifo:
            os.mkfifo(path)
        elif content is not None:
            write(path, content)
    return after


def _links(src):
    """One 2 MiB blob hard-linked 150 times: 300 MiB declared, 2 MiB stored."""
    blob = os.path.join(src, APP, "0" * 64)
    write(blob, os.urandom(2 << 20))
    for i in range(150):
        os.link(blob, os.path.join(src, APP, "%064x" % (i + 1)))


def _tar_case(cid, members, stderr, name="a.tar", gz=False):
    def setup(work):
        out = os.path.join(work, name)
        if gz:
            with open(out, "wb") as f:
                for ti, data in members:
                    f.write(gzip_member(ti.tobuf(format=tarfile.PAX_FORMAT)))
                    f.write(zeros_gzip(ti.size) if data is None else gzip_member(data))
            return
        with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
            for ti, data in members:
                tar.addfile(ti, io.BytesIO(data))
    return Case("solution-validate-metalk8s-" + cid, ["solution", "validate", "{work}/" + name,
                                                      "--trusted-sha256", "0" * 64], setup=setup, stderr=stderr)


def _member(name, data=b"", size=None):
    ti = tarfile.TarInfo(name)
    ti.size = len(data) if size is None else size
    return ti, data


METALK8S_API = "apiVersion: solutions.metalk8s.scality.com/v1alpha1\n"


def operator_docs(fname, *docs):
    return lambda src: write(os.path.join(src, "operator", "deploy", fname), yaml.safe_dump_all(list(docs)))


def _evil_image_dir(spec_images):
    def mutate(src):
        shutil.copytree(os.path.join(src, APP), os.path.join(src, "images", "Evil@sha256", "x:y"))
        if not spec_images:
            edit_manifest(lambda m: m["spec"].pop("images"))(src)
    return mutate


M_REFUSED = REFUSED.replace("example-1.0.0", "example-solution-1.0.0")
EVERYONE = [{"kind": "Group", "name": "system:authenticated"}, {"kind": "Group", "name": "system:anonymous"}]
WIDENED = rbac_binding("example-operator", [{"kind": "ServiceAccount", "name": "example-operator"},
                                            {"kind": "User", "name": "system:anonymous"}],
                       kind="RoleBinding", role_kind="Role", name="example-operator")
EVIL_DIR = (r"images/Evil@sha256/x:y: not an image directory images/NAME/TAG: the name 'Evil@sha256' must be an image name.*; "
            r"the tag 'x:y' must be an image tag")

# An ISO trusted only by its SHA256SUM: its operator's RBAC and its image directories are checked as any archive's.
METALK8S_TRUST = [
    iso_case("rbac-admin-to-everyone", operator_docs("everyone.yaml", rbac_binding(subjects=EVERYONE)),
             one_line(r"operator/deploy/everyone.yaml: document 1 \(ClusterRoleBinding everyone\): binds the ClusterRole "
                      r"cluster-admin \(every right on the cluster\) to group system:authenticated \(every signed-in user\), "
                      r"group system:anonymous \(anonymous requests\)" + M_REFUSED)),
    iso_case("rbac-role-binding-widened", operator_docs("role_binding.yaml", WIDENED),
             one_line(r"operator/deploy/role_binding.yaml: document 1 \(RoleBinding example-operator\): grants the Role "
                      r"example-operator to user system:anonymous" + M_REFUSED)),
    iso_case("rbac-allowed-for-another-archive", operator_docs("everyone.yaml", rbac_binding(subjects=EVERYONE)),
             one_line(r"binds the ClusterRole cluster-admin" + M_REFUSED), argv_tail=["--allow-broad-rbac", "example-1.0.0"]),
    iso_case("rbac-list", operator_docs("everyone.yaml", {"apiVersion": "v1", "kind": "List", "metadata": {"name": "l"},
                                                          "items": [rbac_binding(subjects=EVERYONE)]}),
             one_line(r"operator/deploy/everyone.yaml: document 1: 'List': a list of objects is not allowed")),
    iso_case("image-dir-not-a-name-without-spec-images", _evil_image_dir(False), one_line(EVIL_DIR)),
    iso_case("image-dir-not-a-name-with-spec-images", _evil_image_dir(True), one_line(EVIL_DIR)),
]

CASES = [
    iso_case("manifest-alias-bomb", manifest_text(METALK8S_API + alias_bomb()), r"manifest.yaml: aliases \(\*name\) are not allowed"),
    iso_case("manifest-too-large", manifest_text(METALK8S_API + "# " + "x" * 70000 + "\n"),
             r"manifest.yaml: \d+ bytes, more than the limit of 65536"),
    iso_case("manifest-deep", manifest_text(METALK8S_API + "spec: " + "[" * 10000 + "]" * 10000 + "\n"),
             r"manifest.yaml: nested deeper than 64"),
    iso_case("name-traversal", edit_manifest(lambda m: m["metadata"].update(name="../../etc")),
             r"manifest.yaml: metadata.name: must be an RFC 1123 DNS label .*, not '\.\./\.\./etc'"),
    iso_case("name-huge", edit_manifest(lambda m: m["metadata"].update(name="x" * 50000)),
             r"manifest.yaml: metadata.name: must be an RFC 1123 DNS label .*, not 'x{20,80}\.\.\.$"),
    iso_case("image-string-traversal", edit_manifest(lambda m: m["spec"]["images"].append("../../x:1")),
             r"manifest.yaml: spec.images\[3\].name: must be an image name: .*, not '\.\./\.\./x'"),
    iso_case("image-string-registry", edit_manifest(lambda m: m["spec"]["images"].append("evil.example/x:1")),
             r"manifest.yaml: spec.images\[3\].name: must be one directory name"),
    iso_case("image-string-no-tag", edit_manifest(lambda m: m["spec"]["images"].append("x" * 5000)),
             r"manifest.yaml: spec.images\[3\]: must be at most 258 characters, not 5000$"),
    iso_case("operator-image-map-junk", edit_manifest(lambda m: m["spec"]["operator"].update(image={"name": 5, "x": 1})),
             r"manifest.yaml: spec.operator.image.tag: is missing$"),
    iso_case("dir-manifest-deep-json", lambda src: write(os.path.join(src, APP, "manifest.json"), "[" * 100000 + "]" * 100000),
             r"images/example-app/1.0.0/manifest.json: not valid JSON: nested too deeply"),
    iso_case("dir-manifest-huge", lambda src: write(os.path.join(src, APP, "manifest.json"), " " * (5 << 20)),
             r"images/example-app/1.0.0/manifest.json: \d+ bytes, more than the limit of \d+"),
    iso_case("dir-version-huge", lambda src: write(os.path.join(src, APP, "version"), "Directory Transport Version: 1.1\n" * 1000),
             r"images/example-app/1.0.0/version: \d+ bytes, more than the limit of 64"),
    iso_case("dir-hard-link-bomb", _links, r"hold \d+ bytes \(a hard-linked file once per name\), more than the \d+ bytes an image of \d+ bytes may hold"),
    iso_case("operator-template-lookup", operator_text("kind: Deployment\nx: {{ lookup('pipe', 'id') }}\n"),
             r"operator/deploy/operator.yaml: template expression .*lookup.*: only \{\{ repository \}\} is rendered"),
    iso_case("operator-template-block", operator_text("{% for i in range(10**9) %}x{% endfor %}\n"),
             r"operator/deploy/operator.yaml: template expression .*: only \{\{ repository \}\} is rendered"),
    iso_case("operator-alias-bomb", operator_text(alias_bomb(levels=8) + "kind: Role\n"),
             r"operator/deploy/operator.yaml: aliases expand to more than"),
    iso_case("product-huge", lambda src: write(os.path.join(src, "product.txt"), "NAME=x\n" * 20000),
             r"product.txt: \d+ bytes, more than the limit of 65536"),
    iso_case("one-byte-changed", None, r"the archive changed after its checksum was made", after=_flip_byte),
    iso_case("no-anchor", None, r"no trust anchor: the archive is not signed", after=_sidecar()),
    iso_case("sidecar-fifo", None, r"SHA256SUM: not a regular file", after=_sidecar(fifo=True)),
    iso_case("sidecar-huge", None, r"SHA256SUM: \d+ bytes; the limit is 1048576", after=_sidecar("0" * (2 << 20))),
    iso_case("sidecar-garbage", None, r"SHA256SUM: line 1: must be '<64 hex>  <file name>', not", after=_sidecar(os.urandom(64).hex() + "\n")),
    iso_case("sidecar-two-digests", None, r"SHA256SUM: example-solution-1.0.0.iso is listed twice with different digests",
             after=_sidecar("%s  %s\n%s  %s\n" % ("0" * 64, ISO, "1" * 64, ISO))),
    iso_case("sums-dev-zero", None, r"/dev/zero: not a regular file", argv_tail=["--sha256sum", "/dev/zero"]),
    iso_case("trusted-garbage", None, r"trusted sha256: must be 64 lowercase hex digits, not 'x{20,80}\.\.\.",
             argv_tail=["--trusted-sha256", "x" * 5000], after=_sidecar()),
    _tar_case("tar-traversal", [_member("manifest.yaml", METALK8S_API.encode()),
                                _member(APP + "/../../../../etc/cron.d/x", b"x")],
              r"images/example-app/1.0.0/\.\./\.\./\.\./\.\./etc/cron.d/x: '\.\.' in the path"),
    _tar_case("tgz-blob-bomb", [_member(APP + "/" + "a" * 64, None, size=1 << 30)],
              r"a.tar.gz: refused: member 'images/example-app/1.0.0/a{64}' declares 1073741824 bytes, past the budget",
              name="a.tar.gz", gz=True),
]
CASES += METALK8S_TRUST
