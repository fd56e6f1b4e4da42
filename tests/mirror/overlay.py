# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the test mirror's index (mirror.json) and a catalog overlay pointing at it.

The overlay follows docs/formats.md: one add-on per file, top-level ``artifacts``/``images``
replaced (so nothing upstream is fetched), concrete per-version artifacts carrying the
sha256 computed here from the files themselves.

    overlay.py --mirror DIR [--base-url URL] [--write-index] -o OUTDIR

``--base-url`` defaults to ``file://DIR``; use ``http://127.0.0.1:PORT`` with serve.py.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

import yaml

ETCD_DEBS = ("etcd-server", "etcd-client")
CONTAINERD_PACKAGES = ["containerd", "runc", "containernetworking-plugins", "iptables"]


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
        dirs[:] = sorted(d for d in dirs if d not in ("catalog-overlay", "upstream-overlay", "npm") and not d.startswith("."))
        for name in sorted(names):
            path = os.path.join(top, name)
            rel = os.path.relpath(path, mirror)
            if rel in ("mirror.json",) or name.startswith("."):
                continue
            entry = {"size": os.path.getsize(path), "sha256": sha256_file(path)}
            if name.endswith(".deb"):
                entry["package"], entry["version"], entry["architecture"] = deb_fields(path)
            files[rel] = entry
    return {"layout": 1, "files": files}


def upstream_version(deb_version):
    """Debian '1.6.20~ds1-1+deb12u3' -> '1.6.20'."""
    v = deb_version.split(":", 1)[-1]
    for sep in ("~", "-", "+"):
        v = v.split(sep, 1)[0]
    return v


def overlay(index, base_url, image_ref):
    files = index["files"]

    def url(rel):
        return "%s/%s" % (base_url.rstrip("/"), rel)

    def deb_artifact(rel, meta):
        return {"name": meta["package"], "kind": "deb", "arch": "amd64", "url": url(rel),
                "sha256": meta["sha256"], "dest": os.path.basename(rel)}

    debs = {rel: m for rel, m in files.items() if rel.startswith("debs/")}
    containerd_version = next(upstream_version(m["version"]) for m in debs.values()
                              if m["package"] == "containerd")
    etcd_deb_version = next(upstream_version(m["version"]) for m in debs.values()
                            if m["package"] == "etcd-server")
    image_rel = "images/hello-1.0.oci-archive.tar"
    containerd = {
        "name": "containerd",
        "category": "cri",
        "artifacts": [],
        "images": [],
        "packages": {"debian": list(CONTAINERD_PACKAGES)},
        "versions": [{
            "version": containerd_version,
            "sha256": {},
            "artifacts": [deb_artifact(rel, m) for rel, m in sorted(debs.items())
                          if m["package"] not in ETCD_DEBS] + [
                {"name": "containerd", "kind": "archive", "arch": "amd64", "url": url(rel),
                 "sha256": files[rel]["sha256"], "dest": os.path.basename(rel)}
                for rel in sorted(files) if rel.startswith("archives/containerd-")],
            "images": [{
                "ref": image_ref,
                "digest": None,
                "archive": {"url": url(image_rel), "sha256": files[image_rel]["sha256"],
                            "format": "oci-archive"},
            }],
        }],
    }
    etcd_bins = sorted(rel for rel in files if rel.startswith("etcd/v"))
    etcd = {
        "name": "etcd",
        "category": "etcd",
        "artifacts": [],
        "images": [],
        "versions": [],
    }
    for rel in etcd_bins:
        version = rel.split("/")[1][1:]
        entry = next((v for v in etcd["versions"] if v["version"] == version), None)
        if entry is None:
            entry = {"version": version, "sha256": {}, "artifacts": []}
            etcd["versions"].append(entry)
        entry["artifacts"].append({"name": os.path.basename(rel), "kind": "binary", "arch": "amd64",
                                   "url": url(rel), "sha256": files[rel]["sha256"],
                                   "dest": os.path.basename(rel)})
    etcd["versions"].append({
        "version": etcd_deb_version,
        "sha256": {},
        "artifacts": [deb_artifact(rel, m) for rel, m in sorted(debs.items())
                      if m["package"] in ETCD_DEBS],
    })
    return {"containerd": containerd, "etcd": etcd}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", required=True)
    p.add_argument("--base-url")
    p.add_argument("--write-index", action="store_true",
                   help="recompute mirror.json from the files (otherwise read it)")
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
    os.makedirs(args.output, exist_ok=True)
    for name, doc in overlay(index, base_url, args.image_ref).items():
        path = os.path.join(args.output, name + ".yml")
        with open(path + ".tmp", "w") as f:
            f.write("# Written by tests/mirror/overlay.py from %s; do not edit.\n" % index_path)
            yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=False)
        os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
