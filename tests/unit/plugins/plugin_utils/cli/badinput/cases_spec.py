# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad installer specs and catalog overlays for every ``mooring spec`` and ``mooring catalog``
command (ids ``spec-`` and ``overlay-``)."""

from __future__ import annotations

import os

from .harness import Case

GOOD = """apiVersion: cluster.mooring.io/v1beta1
kind: Installer
metadata: {name: t}
spec:
  kubernetes: {version: 1.35.x, podCIDR: 10.32.0.0/16, serviceCIDR: 10.96.0.0/16}
  etcd: {version: 3.6.x, topology: external}
  containerd: {version: 2.1.x}
  calico: {version: latest}
"""
KURL = "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nmetadata: {name: k}\nspec:\n  kubernetes: {version: 1.35.x}\n"


def bomb(levels=9, width=10, key="version"):
    lines = ["a0: &a0 [%s]" % ",".join(["x"] * width)]
    lines += ["a%d: &a%d [%s]" % (i, i, ",".join(["*a%d" % (i - 1)] * width)) for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n%s: *a%d\n" % (key, levels)


def spec_bomb(where):
    """A spec whose ``where`` (kubernetes.version, metadata, ...) is a billion-laughs alias."""
    anchors = "".join("x%d: &a%d [%s]\n" % (i, i, ",".join(["*a%d" % (i - 1)] * 10) if i else ",".join(["v"] * 10))
                      for i in range(10))
    head = anchors + "apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\n"
    if where == "metadata":
        return head + "metadata: {name: t, labels: *a9}\nspec: {kubernetes: {version: 1.35.x}, calico: {version: latest}}\n"
    if where == "kurl":
        return anchors + "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nspec:\n  kubernetes: {version: *a9}\n  rook: *a9\n"
    return head + "spec:\n  kubernetes: {version: *a9}\n  calico: {version: latest}\n"


# (id, file content, stderr regex): each is refused by validate, hash (where it cannot be hashed)
# and resolve, with the file named.
SPECS = [
    ("empty", b"", r"must be a mapping"),
    ("null", "~\n", r"must be a mapping"),
    ("scalar", "hello\n", r"must be a mapping"),
    ("list", "- a\n- b\n", r"must be a mapping"),
    ("int", "5\n", r"must be a mapping"),
    ("utf16-le", "\ufeffkind: Installer\n".encode("utf-16-le"), r"UTF-16"),
    ("utf16-be", "\ufeffkind: Installer\n".encode("utf-16-be"), r"UTF-16"),
    ("utf32", "\ufeffkind: Installer\n".encode("utf-32"), r"UTF-16/32"),
    ("latin1", "metadata: {name: caf\xe9}\n".encode("latin-1"), r"not UTF-8 \(byte 0xe9 at offset"),
    ("nul-bytes", b"kind: Installer\x00\x00\n", r"NUL byte at offset 15"),
    ("binary", bytes(range(256)) * 4, r"not UTF-8|NUL byte"),
    ("bad-yaml-bracket", "spec: {kubernetes: [\n", r"is not valid YAML"),
    ("bad-yaml-tab", "spec:\n\tkubernetes: {}\n", r"is not valid YAML"),
    ("bad-yaml-dup-key", "spec: {}\nspec: {}\n", r"is not valid YAML: found duplicated mapping key"),
    ("bad-yaml-undefined-alias", "spec: *nope\n", r"is not valid YAML"),
    ("bad-yaml-two-docs", GOOD + "---\n" + GOOD, r"is not valid YAML"),
    ("deep-nesting-flow", "spec: " + "[" * 10000 + "]" * 10000 + "\n", r"nested deeper than 64 levels"),
    ("deep-nesting-block", "".join("%sk:\n" % ("  " * i) for i in range(200)) + "  " * 200 + "v\n",
     r"nested deeper than 64 levels"),
    ("alias-bomb-version", spec_bomb("version"), r"aliases expand to more than"),
    ("alias-bomb-metadata", spec_bomb("metadata"), r"aliases expand to more than"),
    ("alias-bomb-kurl", spec_bomb("kurl"), r"aliases expand to more than"),
    ("alias-bomb-bare", bomb(), r"aliases expand to more than"),
    ("too-many-aliases", "a: &a 1\nb: [" + ",".join(["*a"] * 1500) + "]\n", r"more than 1000 aliases"),
    ("too-large", "# " + "x" * (1024 * 1024 + 10) + "\n", r"bytes; the limit is 262144"),
    ("many-keys", "spec:\n  kubernetes:\n" + "".join("    k%d: v\n" % i for i in range(60000)), r"bytes; the limit"),
    # under the installer's byte limit, over its value limit: refused after a bounded parse
    ("many-keys-small", "spec:\n  kubernetes:\n" + "".join("    k%d: v\n" % i for i in range(18000)), r"more than 10000 values"),
    ("wrong-kind", GOOD.replace("kind: Installer", "kind: Deployment"), r"kind"),
    ("wrong-api", GOOD.replace("cluster.mooring.io/v1beta1", "apps/v1"), r"apiVersion"),
    ("no-spec", "apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\n", r"spec"),
    ("spec-list", "apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nspec: [a]\n", r"spec"),
    ("spec-string", "apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\nspec: x\n", r"spec"),
    ("version-int", GOOD.replace("version: 1.35.x", "version: 135"), r"spec.kubernetes.version"),
    ("version-float", GOOD.replace("version: 1.35.x", "version: 1.35"), r"spec.kubernetes.version"),
    ("version-list", GOOD.replace("version: 1.35.x", "version: [1, 35]"), r"spec.kubernetes.version: must be a string, not a list"),
    ("version-long", GOOD.replace("version: 1.35.x", "version: " + "9" * 5000), r"integer string conversion"),
    ("version-long-string", GOOD.replace("version: 1.35.x", "version: v" + "9" * 5000), r"spec.kubernetes.version: must be .*, not 'v9{60,80}\.\.\."),
    ("version-mapping", GOOD.replace("version: 1.35.x", "version: {a: 1}"), r"spec.kubernetes.version: must be a string, not a mapping"),
    ("version-date", GOOD.replace("version: 1.35.x", "version: 2024-01-01"), r"spec.kubernetes.version"),
    ("addon-string", GOOD.replace("calico: {version: latest}", "calico: latest"), r"spec.calico"),
    ("addon-list", GOOD.replace("calico: {version: latest}", "calico: [latest]"), r"spec.calico"),
    ("addon-int-key", GOOD.replace("calico: {version: latest}", "calico: {1: latest}"), r"spec.calico"),
    ("unknown-addon", GOOD + "  rook: {version: 1.0.0}\n", r"spec.rook: is not a known add-on"),
    ("many-unknown-addons", GOOD + "".join("  addon%d: {version: 1.0.0}\n" % i for i in range(500)),
     r"more unknown key|more problem"),
    ("unknown-field", GOOD.replace("topology: external", "topology: external, colour: red"), r"spec.etcd.colour: is not a known field"),
    ("long-unknown-field", GOOD.replace("topology: external", "topology: external, %s: 1" % ("f" * 1000)), r"is not a known field"),
    ("topology-bad", GOOD.replace("topology: external", "topology: both"), r"spec.etcd.topology"),
    ("two-cnis", GOOD + "  flannel: {version: latest}\n", r"exactly one CNI"),
    ("no-cni", GOOD.replace("  calico: {version: latest}\n", ""), r"exactly one CNI"),
    ("no-kubernetes", GOOD.replace("  kubernetes: {version: 1.35.x, podCIDR: 10.32.0.0/16, serviceCIDR: 10.96.0.0/16}\n", ""),
     r"spec.kubernetes"),
    ("cidr-garbage", GOOD.replace("podCIDR: 10.32.0.0/16", "podCIDR: not-a-cidr"), r"spec.kubernetes.podCIDR"),
    ("cidr-bare-ip", GOOD.replace("serviceCIDR: 10.96.0.0/16", "serviceCIDR: 10.96.0.1"), r"spec.kubernetes.serviceCIDR"),
    ("cidr-host-bits", GOOD.replace("podCIDR: 10.32.0.0/16", "podCIDR: 10.32.0.1/16"), r"spec.kubernetes.podCIDR"),
    ("cidr-overlap", GOOD.replace("serviceCIDR: 10.96.0.0/16", "serviceCIDR: 10.32.0.0/24"), r"overlaps"),
    ("cidr-v6-pod-v4-service", GOOD.replace("podCIDR: 10.32.0.0/16", "podCIDR: 'fd00:10:32::/56'"),
     r"serviceCIDR: IPv4, but podCIDR is IPv6; .*same family"),
    ("cidr-v4-pod-v6-service", GOOD.replace("serviceCIDR: 10.96.0.0/16", "serviceCIDR: 'fd00:96::/108'"),
     r"serviceCIDR: IPv6, but podCIDR is IPv4"),
    ("cidr-dual-stack-list", GOOD.replace("podCIDR: 10.32.0.0/16", "podCIDR: '10.32.0.0/16,fd00::/56'"), r"podCIDR"),
    ("cidr-int", GOOD.replace("podCIDR: 10.32.0.0/16", "podCIDR: 10"), r"podCIDR"),
    ("cidr-service-too-small", GOOD.replace("serviceCIDR: 10.96.0.0/16", "serviceCIDR: 10.96.0.0/32"),
     r"spec.kubernetes.serviceCIDR: '10.96.0.0/32' holds 1 address\(es\); .*at least 16"),
    ("endpoint-not-ipv4", GOOD.replace("serviceCIDR: 10.96.0.0/16", "serviceCIDR: 10.96.0.0/16, controlPlaneEndpoint: '999.999.999.999:6443'"),
     r"controlPlaneEndpoint: '999.999.999.999:6443': '999.999.999.999' is not an IPv4 address"),
    ("endpoint-unspecified", GOOD.replace("serviceCIDR: 10.96.0.0/16", "serviceCIDR: 10.96.0.0/16, controlPlaneEndpoint: '0.0.0.0:6443'"),
     r"controlPlaneEndpoint: '0.0.0.0:6443': 0.0.0.0 is the unspecified address"),
    ("endpoint-port-range", GOOD.replace("serviceCIDR: 10.96.0.0/16", "serviceCIDR: 10.96.0.0/16, controlPlaneEndpoint: 'api.example:70000'"),
     r"controlPlaneEndpoint: 'api.example:70000': port 70000 is not 1-65535"),
    ("endpoint-garbage", GOOD.replace("serviceCIDR: 10.96.0.0/16", "serviceCIDR: 10.96.0.0/16, controlPlaneEndpoint: '::::'"),
     r"controlPlaneEndpoint"),
    ("kurl-addon-string", KURL + "  rook: 1.0\n  calico: latest\n", r"spec.calico"),
    ("kurl-kubernetes-string", "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nspec: {kubernetes: latest}\n",
     r"spec.kubernetes: must be a mapping"),
    ("kurl-kubernetes-list", "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nspec: {kubernetes: [1]}\n", r"spec.kubernetes"),
    ("kurl-int-keys", "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nspec: {kubernetes: {1: 2}}\n", r"spec.kubernetes"),
    ("kurl-metadata-list", "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nmetadata: [1]\nspec: {kubernetes: {version: x}}\n",
     r"spec.kubernetes.version|metadata"),
    ("kurl-k3s", "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nspec: {k3s: {version: 1.23.x}}\n", r"spec.kubernetes: is missing"),
    ("kurl-placeholder", "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nspec: {kubernetes: {version: __testver__}}\n",
     r"spec.kubernetes.version"),
]
# Refused by validate and resolve, but hashed (kURL hashes any Installer document): only the
# documents that fail before the hash are run through ``spec hash``.
HASHABLE = {"version-int", "version-float", "version-list", "version-long", "version-mapping", "version-date", "version-long-string",
            "addon-string", "addon-list", "addon-int-key", "unknown-addon", "many-unknown-addons", "unknown-field",
            "long-unknown-field", "topology-bad", "two-cnis", "no-cni", "no-kubernetes", "cidr-garbage", "cidr-bare-ip",
            "cidr-host-bits", "cidr-overlap", "cidr-v6-pod-v4-service", "cidr-v4-pod-v6-service", "cidr-dual-stack-list",
            "cidr-int", "cidr-service-too-small", "endpoint-garbage", "endpoint-not-ipv4", "endpoint-unspecified",
            "endpoint-port-range", "kurl-addon-string", "kurl-kubernetes-string", "kurl-kubernetes-list",
            "kurl-int-keys", "kurl-metadata-list", "kurl-k3s", "kurl-placeholder"}

CASES = []
for _id, _content, _err in SPECS:
    _files = {"installer.yaml": _content}
    CASES.append(Case("spec-validate-" + _id, ["spec", "validate", "installer.yaml"], files=_files,
                      stderr=r"error: installer\.yaml[: ].*(%s)" % _err))
    CASES.append(Case("spec-resolve-" + _id, ["spec", "resolve", "installer.yaml", "-o", "{work}/out/lock.yaml"], files=_files,
                      stderr=r"error: installer\.yaml[: ].*(%s)" % _err))
    if _id not in HASHABLE:
        CASES.append(Case("spec-hash-" + _id, ["spec", "hash", "installer.yaml"], files=_files,
                          stderr=r"error: installer\.yaml[: ].*(%s)" % _err))


def _fifo(work):
    os.mkfifo(os.path.join(work, "installer.yaml"))


def _symlink_outside(work):
    target = os.path.join(os.path.dirname(work), "outside", "secret")
    with open(target, "w", encoding="utf-8") as handle:
        handle.write("not a spec\n")
    os.symlink(target, os.path.join(work, "installer.yaml"))


CASES += [
    Case("spec-validate-missing", ["spec", "validate", "nope.yaml"], stderr=r"error: cannot read nope\.yaml: No such file"),
    Case("spec-hash-missing", ["spec", "hash", "nope.yaml"], stderr=r"error: cannot read nope\.yaml"),
    Case("spec-validate-directory", ["spec", "validate", "d"], files={"d": None}, stderr=r"error: cannot read d: Is a directory"),
    Case("spec-resolve-directory", ["spec", "resolve", "d"], files={"d": None}, stderr=r"error: cannot read d: Is a directory"),
    Case("spec-validate-fifo", ["spec", "validate", "installer.yaml"], setup=_fifo, stderr=r"installer\.yaml: not a regular file"),
    Case("spec-hash-fifo", ["spec", "hash", "installer.yaml"], setup=_fifo, stderr=r"installer\.yaml: not a regular file"),
    Case("spec-validate-dev-zero", ["spec", "validate", "/dev/zero"], stderr=r"/dev/zero: not a regular file"),
    Case("spec-validate-symlink-outside", ["spec", "validate", "installer.yaml"], setup=_symlink_outside,
         stderr=r"must be a mapping"),
    Case("spec-resolve-output-is-directory", ["spec", "resolve", "installer.yaml", "-o", "out"],
         files={"installer.yaml": GOOD, "out": None}, stderr=r"error: out: is a directory"),
    Case("spec-resolve-output-below-file", ["spec", "resolve", "installer.yaml", "-o", "afile/lock.yaml"],
         files={"installer.yaml": GOOD, "afile": "x"}, stderr=r"afile is not a directory"),
    Case("spec-resolve-output-deep-below-file", ["spec", "resolve", "installer.yaml", "-o", "afile/a/b/lock.yaml"],
         files={"installer.yaml": GOOD, "afile": "x"}, stderr=r"afile is not a directory"),
    Case("spec-resolve-unknown-version", ["spec", "resolve", "installer.yaml", "-o", "lock.yaml"],
         files={"installer.yaml": GOOD.replace("version: 1.35.x", "version: 1.99.x")},
         stderr=r"error: installer\.yaml: spec\.kubernetes\.version: 1\.99\.x matches no version"),
    Case("spec-resolve-missing-catalog", ["spec", "resolve", "installer.yaml", "--catalog", "nocat"],
         files={"installer.yaml": GOOD}, stderr=r"catalog path nocat does not exist"),
    Case("spec-unknown-command", ["spec", "frobnicate"], exit=(2,), stderr=r"invalid choice"),
    Case("spec-no-file", ["spec", "validate"], exit=(2,), stderr=r"required: file"),
    Case("spec-bad-arch", ["spec", "resolve", "installer.yaml", "--arch", "../x"], files={"installer.yaml": GOOD},
         exit=(2,), stderr=r"invalid choice"),
]

# --------------------------------------------------------------------------- overlays
OVERLAY_GOOD = "name: calico\nversions:\n  - {version: 3.31.7, kubernetes: '>=1.31.0,<1.37.0'}\n"
OVERLAYS = [
    ("versions-int", "name: calico\nversions: 5\n", r"add-on\.versions: must be a list"),
    ("versions-string", "name: calico\nversions: latest\n", r"add-on\.versions: must be a list"),
    ("versions-item-string", "name: calico\nversions: [3.31.7]\n", r"add-on\.versions\[0\]: must be a mapping"),
    ("version-list", "name: calico\nversions: [{version: [1]}]\n", r"add-on\.versions\[0\]\.version"),
    ("kubernetes-int", "name: calico\nversions: [{version: 9.9.9, kubernetes: 5}]\n", r"versions\[0\]\.kubernetes"),
    ("sha256-list", "name: calico\nversions: [{version: 9.9.9, sha256: [1]}]\n", r"versions\[0\]\.sha256: must be a mapping"),
    ("artifacts-string", "name: calico\nartifacts: x\nversions: [{version: 9.9.9}]\n", r"add-on\.artifacts: must be a list"),
    ("artifact-int", "name: calico\nartifacts: [1]\nversions: [{version: 9.9.9}]\n", r"add-on\.artifacts\[0\]: must be a mapping"),
    ("artifact-url-int", "name: calico\nartifacts: [{name: a, kind: file, url: 5}]\nversions: [{version: 9.9.9}]\n",
     r"artifacts\[0\]\.url: must be a string, not 5"),
    ("images-mapping", "name: calico\nimages: {a: b}\nversions: [{version: 9.9.9}]\n", r"add-on\.images: must be a list"),
    ("image-archive-list", "name: calico\nimages: [{ref: a, archive: [x]}]\nversions: [{version: 9.9.9}]\n",
     r"images\[0\]\.archive: must be a mapping"),
    ("packages-list", "name: calico\npackages: [a]\nversions: [{version: 9.9.9}]\n", r"add-on\.packages: must be a mapping"),
    ("packages-values", "name: calico\npackages: {debian: 5}\nversions: [{version: 9.9.9}]\n", r"packages\.debian: must be a list"),
    ("architectures-string", "name: calico\narchitectures: amd64\nversions: [{version: 9.9.9}]\n", r"architectures: must be a list"),
    ("name-int", "name: 5\nversions: [{version: 9.9.9}]\n", r"add-on\.name: must be a string, not 5"),
    ("name-traversal", "name: ../../../../tmp/x/ADDON\ncategory: cni\narchitectures: [amd64]\nversions: [{version: 1.0.0}]\n",
     r"add-on\.name: must be a safe name .*, not '\.\./\.\./\.\./\.\./tmp/x/ADDON'"),
    ("name-dotdot", "name: '..'\nversions: [{version: 1.0.0}]\n", r"add-on\.name: must be a safe name"),
    ("arch-traversal", "name: calico\narchitectures: [amd64, ../../../ESCAPED]\nversions: [{version: 9.9.9}]\n",
     r"architectures\[1\]: must be a safe name .*, not '\.\./\.\./\.\./ESCAPED'"),
    ("artifact-arch-traversal", "name: calico\nversions: [{version: 9.9.9, artifacts: [{name: a, kind: file, url: 'file:///x',"
     " arch: ../../../ESCAPED}]}]\n", r"artifacts\[0\]\.arch: must be a safe name .*, not '\.\./\.\./\.\./ESCAPED'"),
    ("artifact-dest-absolute", "name: calico\nartifacts: [{name: a, kind: file, url: 'file:///x', dest: /etc/passwd}]\n"
     "versions: [{version: 9.9.9}]\n", r"artifacts\[0\]\.dest: must be a relative path of safe names .*, not '/etc/passwd' \(''\)"),
    ("artifact-dest-dotdot", "name: calico\nartifacts: [{name: a, kind: file, url: 'file:///x', dest: a/../../b}]\n"
     "versions: [{version: 9.9.9}]\n", r"artifacts\[0\]\.dest: must be a relative path of safe names .*, not 'a/\.\./\.\./b' \('\.\.'\)"),
    ("artifact-name-slash", "name: calico\nartifacts: [{name: a/b, kind: file, url: 'file:///x'}]\nversions: [{version: 9.9.9}]\n",
     r"artifacts\[0\]\.name: must be a safe name .*, not 'a/b'"),
    ("int-key", "name: calico\n5: x\nversions: [{version: 9.9.9}]\n", r"add-on\[5\]: must be a key that is a string, not 5"),
    ("list-doc", "- name: calico\n", r"add-on: must be a mapping"),
    ("addons-string", "addons: x\n", r"'addons' must be a list"),
    ("alias", "name: calico\nx: &a [1]\ny: *a\nversions: [{version: 9.9.9}]\n", r"aliases \(\*name\) are not allowed"),
    ("bomb", "name: calico\n" + bomb(key="description"), r"aliases \(\*name\) are not allowed"),
    ("utf16", OVERLAY_GOOD.encode("utf-16"), r"UTF-16"),
    ("latin1", ("name: calico\ndescription: caf\xe9\n").encode("latin-1"), r"not UTF-8"),
    ("deep", "name: calico\nx: " + "[" * 5000 + "]" * 5000 + "\n", r"nested deeper than 64"),
    ("bad-yaml", "name: calico\nversions: [\n", r"is not valid YAML"),
    ("date", "name: calico\nversions: [{version: 2024-01-01}]\n", r"must be a semantic version"),
    ("bad-version", "name: calico\nversions: [{version: latest}]\n", r"must be a semantic version"),
    ("bad-range", "name: calico\nversions: [{version: 9.9.9, kubernetes: 'between 1 and 2'}]\n", r"kubernetes: must be a version range"),
    ("bad-sha", "name: calico\nversions: [{version: 9.9.9, artifacts: [{name: a, kind: file, url: 'file:///x', arch: amd64,"
     " sha256: nothex}]}]\n", r"sha256: must be a sha256 \(64 lowercase hex"),
    ("too-large", "name: calico\n# " + "x" * (1024 * 1024) + "\n", r"the limit is 1048576"),
]

for _id, _content, _err in OVERLAYS:
    _files = {"installer.yaml": GOOD, "overlay.yml": _content}
    CASES.append(Case("overlay-check-" + _id, ["catalog", "check", "--catalog-overlay", "overlay.yml"], files=_files,
                      stderr=r"error: .*overlay\.yml.*(%s)" % _err))
    CASES.append(Case("overlay-resolve-" + _id, ["spec", "resolve", "installer.yaml", "--catalog-overlay", "overlay.yml",
                                                 "-o", "{work}/out/lock.yaml"], files=_files,
                      stderr=r"error: .*overlay\.yml.*(%s)" % _err))


def _overlay_fifo(work):
    os.mkfifo(os.path.join(work, "overlay.yml"))


CASES += [
    Case("overlay-missing", ["catalog", "check", "--catalog-overlay", "nope.yml"], stderr=r"catalog path nope\.yml does not exist"),
    Case("overlay-fifo", ["catalog", "check", "--catalog-overlay", "overlay.yml"], setup=_overlay_fifo,
         stderr=r"catalog path overlay\.yml does not exist|not a regular file"),
    Case("overlay-dir-with-bad-file", ["catalog", "list", "--catalog-overlay", "ov"],
         files={"ov/a.yml": OVERLAY_GOOD, "ov/b.yml": "name: calico\nversions: 5\n"}, stderr=r"ov/b\.yml"),
]
