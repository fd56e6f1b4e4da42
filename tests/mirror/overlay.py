# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the test mirror's index (mirror.json) and a catalog overlay pointing at it.

The overlay follows docs/formats.md: one add-on per file, top-level ``artifacts``/``images``
replaced (so nothing upstream is fetched), concrete per-version artifacts carrying the
sha256 computed here from the files themselves. Its artifacts are the upstream-shaped
stand-ins under ``releases/<name>/v<version>/`` (tests/mirror/build.sh): the same file names
and archive layouts as the upstream releases, and URLs that carry the version the same way
(the installer takes an artifact's version from its URL).

- ``etcd``: every ``releases/etcd/vX/etcd-vX-linux-amd64.tar.gz`` as version X (one archive);
- ``containerd``: version C with ``containerd-C-linux-amd64.tar.gz`` and ``runc.amd64`` (as
  ``runc``), the test image from ``images/``, no host packages;
- ``kubernetes``: version K with ``kubectl`` and the CNI plugins' tgz ONLY (kubeadm, kubelet,
  crictl and the control-plane images have no stand-in: absent), the catalog's host packages;
- with ``--manifests``, also the synthetic add-on manifests ``releases/<addon>/<file>`` as the
  catalog's newest version of that add-on.

    overlay.py --mirror DIR [--base-url URL] [--write-index] [--manifests] -o OUTDIR

``--base-url`` defaults to ``file://DIR``; use ``http://127.0.0.1:PORT`` with serve.py.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE_ARCHIVE = "images/hello-1.0.oci-archive.tar"
INDEX_LAYOUT = 2
WRITTEN_BY = "# Written by tests/mirror/"  # this script, or releases.py before the mirror's layout 4
HEADER = "# Written by tests/mirror/overlay.py"
_RELEASE = re.compile(r"^releases/(?P<name>[^/]+)/v(?P<version>[0-9]+\.[0-9]+\.[0-9]+)/(?P<file>[^/]+)$")
_MANIFEST = re.compile(r"^releases/(?P<addon>[^/]+)/(?P<file>[^/]+\.ya?ml)$")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def deb_fields(path):
    out = subprocess.run(["dpkg-deb", "-f", path, "Package", "Version", "Architecture"],
                         check=True, capture_output=True, text=True).stdout
    fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return fields["Package"], fields["Version"], fields["Architecture"]


def build_index(mirror):
    files = {}
    for top, dirs, names in os.walk(mirror):
        dirs[:] = sorted(d for d in dirs if d not in ("catalog-overlay", "upstream-overlay", "npm")
                         and not d.startswith(".") and not d.endswith((".new", ".old")))
        for name in sorted(names):
            path = os.path.join(top, name)
            rel = os.path.relpath(path, mirror)
            if rel in ("mirror.json",) or name.startswith(".") or name.endswith((".part", ".tmp")):
                continue
            entry = {"size": os.path.getsize(path), "sha256": sha256_file(path)}
            if name.endswith(".deb"):
                entry["package"], entry["version"], entry["architecture"] = deb_fields(path)
            files[rel] = entry
    return {"layout": INDEX_LAYOUT, "files": files}


def upstream_version(deb_version):
    """Debian '1.6.20~ds1-1+deb12u3' -> '1.6.20'."""
    v = deb_version.split(":", 1)[-1]
    for sep in ("~", "-", "+"):
        v = v.split(sep, 1)[0]
    return v


def _version_key(version):
    return tuple(int(x) for x in version.split("."))


def releases(files):
    """{name: {version: {file: rel}}} of the stand-ins in the index."""
    out = {}
    for rel in files:
        m = _RELEASE.match(rel)
        if m:
            out.setdefault(m["name"], {}).setdefault(m["version"], {})[m["file"]] = rel
    return out


def _one(found, name, pattern):
    """The single (version, rel) of a release whose file name matches pattern (with {v})."""
    hits = [(v, rel) for v, fs in sorted(found.get(name, {}).items(), key=lambda kv: _version_key(kv[0]))
            for f, rel in fs.items() if f == pattern.format(v=v)]
    if len(hits) != 1:
        raise SystemExit("overlay: expected one releases/%s/vX/%s in the mirror, found %s (run tests/mirror/build.sh)"
                         % (name, pattern.format(v="X"), [r for _v, r in hits] or "none"))
    return hits[0]


def _real_catalog(addon):
    with open(os.path.join(ROOT, "catalog", "%s.yml" % addon)) as f:
        return yaml.safe_load(f)


def overlay(index, base_url, image_ref, manifests=False):
    files = index["files"]

    def art(name, kind, rel, dest=None):
        return {"name": name, "kind": kind, "arch": "amd64", "url": "%s/%s" % (base_url.rstrip("/"), rel),
                "sha256": files[rel]["sha256"], "dest": dest or os.path.basename(rel)}

    found = releases(files)
    etcd_versions = sorted(found.get("etcd", {}), key=_version_key, reverse=True)
    etcd = {"name": "etcd", "category": "etcd", "artifacts": [], "images": [], "packages": {}, "versions": []}
    for v in etcd_versions:
        rel = found["etcd"][v].get("etcd-v%s-linux-amd64.tar.gz" % v)
        if rel is None:
            raise SystemExit("overlay: releases/etcd/v%s/ has no etcd-v%s-linux-amd64.tar.gz" % (v, v))
        etcd["versions"].append({"version": v, "sha256": {}, "artifacts": [art("etcd", "archive", rel)]})
    if not etcd["versions"]:
        raise SystemExit("overlay: no releases/etcd/vX/etcd-vX-linux-amd64.tar.gz in the mirror")

    vc, containerd_rel = _one(found, "containerd", "containerd-{v}-linux-amd64.tar.gz")
    _vr, runc_rel = _one(found, "runc", "runc.amd64")
    containerd = {
        "name": "containerd", "category": "cri", "artifacts": [], "images": [], "packages": {"debian": []},
        "versions": [{
            "version": vc, "sha256": {},
            "artifacts": [art("containerd", "archive", containerd_rel), art("runc", "binary", runc_rel, "runc")],
            "images": [{"ref": image_ref, "digest": None,
                        "archive": {"url": "%s/%s" % (base_url.rstrip("/"), IMAGE_ARCHIVE),
                                    "sha256": files[IMAGE_ARCHIVE]["sha256"], "format": "oci-archive"}}],
        }],
    }

    vk, kubectl_rel = _one(found, "kubernetes", "kubectl")
    _vn, cni_rel = _one(found, "cni-plugins", "cni-plugins-linux-amd64-v{v}.tgz")
    kubernetes = {
        "name": "kubernetes", "category": "kubernetes", "artifacts": [], "images": [],
        # what the real catalog says (the bundle builder apt-downloads them on the controller)
        "packages": _real_catalog("kubernetes").get("packages") or {},
        "versions": [{"version": vk, "sha256": {}, "images": [],
                      "artifacts": [art("kubectl", "binary", kubectl_rel, "kubectl"),
                                    art("cni-plugins", "archive", cni_rel)]}],
    }
    docs = {"etcd": etcd, "containerd": containerd, "kubernetes": kubernetes}
    if manifests:
        for rel in sorted(files):
            m = _MANIFEST.match(rel)
            if not m:
                continue
            real = _real_catalog(m["addon"])
            name = next(a["name"] for a in real["artifacts"] if a.get("kind") == "manifest")
            newest = dict(max(real["versions"], key=lambda e: _version_key(e["version"])))
            newest.pop("sha256", None)
            newest.update(artifacts=[art(name, "manifest", rel)], images=[])
            docs[m["addon"]] = {"name": m["addon"], "category": real["category"], "artifacts": [], "images": [],
                                "versions": [newest]}
    return docs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", required=True)
    p.add_argument("--base-url")
    p.add_argument("--write-index", action="store_true",
                   help="recompute mirror.json from the files (otherwise read it)")
    p.add_argument("--manifests", action="store_true",
                   help="also the synthetic add-on manifests (calico, localPathProvisioner, metricsServer)")
    p.add_argument("--image-ref", default="localhost/mooring/hello:1.0")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args(argv)
    mirror = os.path.abspath(args.mirror)
    index_path = os.path.join(mirror, "mirror.json")
    if args.write_index:
        index = build_index(mirror)
        with open(index_path + ".tmp", "w") as f:
            json.dump(index, f, indent=1, sort_keys=True)
        os.replace(index_path + ".tmp", index_path)
    else:
        with open(index_path) as f:
            index = json.load(f)
    base_url = args.base_url or "file://" + mirror
    docs = overlay(index, base_url, args.image_ref, manifests=args.manifests)
    os.makedirs(args.output, exist_ok=True)
    for name, doc in docs.items():
        path = os.path.join(args.output, name + ".yml")
        with open(path + ".tmp", "w") as f:
            f.write("%s from %s; do not edit.\n" % (HEADER, index_path))
            yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=False)
        os.replace(path + ".tmp", path)
    # An add-on an earlier run (or an earlier layout) wrote but this one did not must not linger.
    for name in sorted(os.listdir(args.output)):
        path = os.path.join(args.output, name)
        if name.endswith(".yml") and name[:-4] not in docs and os.path.isfile(path):
            with open(path) as f:
                if f.readline().startswith(WRITTEN_BY):
                    os.remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
