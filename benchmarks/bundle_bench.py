# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bundle assembly figures (not a pass/fail test).

On the same inputs - the upstream-shaped artifacts and image archives of the lab's lock
(tests/lab/installer.yaml resolved against the test mirror's upstream overlay, as `make demo`
does; host packages left out, they come from apt) or synthetic files when the mirror is absent -
in one run:

1. cold build: every package built (fetch + verify + pack) and the bundle assembled;
2. ``tar | gzip -6`` and ``tar | zstd -3 -T0`` of the same input files, and the build's throughput
   as a ratio of zstd's (the aim: >= 0.8x);
3. warm re-assembly with nothing changed (cache hit, bundle unchanged);
4. re-assembly after ONE add-on changed (a new artifact in ``etcd``): only that package is
   rebuilt; reports bytes read through Python and bytes copied in the kernel;
5. verification of the bundle (signature + every checksum, standard library only).

    python benchmarks/bundle_bench.py [--mirror DIR] [--keep]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as b
from ansible_collections.mooring.cluster.plugins.module_utils.bundle import host as h
from ansible_collections.mooring.cluster.plugins.module_utils.common import digest
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import lock_digest

MIB = 1024 * 1024


def sha(path):
    return digest.sha256_file(path)[0]


def artifact(path, name, kind, dest=None):
    return {"name": name, "kind": kind, "arch": "amd64", "url": "file://" + path, "sha256": sha(path), "size": None,
            "dest": dest or os.path.basename(path)}


def upstream_lock(mirror, work):
    """The lab's lock, resolved as `make demo` resolves it; add-ons without host packages."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(work, "installer.lock.yaml")
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "mooring"), "spec", "resolve",
                    os.path.join(root, "tests/lab/installer.yaml"), "--catalog-overlay",
                    os.path.join(mirror, "upstream-overlay"), "-o", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as handle:
        addons = yaml.safe_load(handle)["addons"]
    for addon in addons.values():
        addon["packages"] = {}
    return addons


def synthetic_lock(work):
    src = os.path.join(work, "src")
    os.makedirs(src)
    addons = {}
    for name, size in (("containerd", 40), ("etcd", 55)):
        path = os.path.join(src, name + ".bin")
        with open(path, "wb") as handle:
            for _chunk in range(size):
                handle.write(os.urandom(MIB // 2) + bytes(MIB // 2))
        addons[name] = {"version": "1.0.0", "category": "cri", "images": [], "packages": {},
                        "artifacts": [artifact(path, name, "binary")]}
    return addons


def make_lock(addons):
    lock = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "InstallerLock", "metadata": {"name": "bench"},
            "spec": {}, "hash": "bench00", "specDigest": "0" * 64, "architectures": ["amd64"], "addons": addons}
    lock["digest"] = lock_digest(lock)
    return lock


def timed(fn):
    start = time.monotonic()
    out = fn()
    return out, time.monotonic() - start


def input_files(addons):
    files = []
    for addon in addons.values():
        files += [a["url"][len("file://"):] for a in addon["artifacts"]]
        files += [i["archive"]["url"][len("file://"):] for i in addon["images"] if i.get("archive")]
    return files


def compress_pipe(files, compressor, out):
    listing = "\n".join(files) + "\n"
    cmd = "tar -cf - -P -T - | %s > %s" % (compressor, out)
    start = time.monotonic()
    subprocess.run(["sh", "-c", cmd], input=listing.encode(), check=True)
    return time.monotonic() - start, os.path.getsize(out)


def rate(size, seconds):
    return "%.1f MiB/s" % (size / MIB / seconds) if seconds > 0 else "-"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=os.path.join(os.environ.get("MOORING_CACHE_DIR", "/var/cache/mooring"),
                                                         "mirror"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="bundle-bench-")
    try:
        if os.path.isdir(os.path.join(args.mirror, "upstream-overlay")):
            addons, source = upstream_lock(args.mirror, work), "the lab's lock over the test mirror %s" % args.mirror
        else:
            addons, source = synthetic_lock(work), "synthetic files (no test mirror; run `make mirror`)"
        files = input_files(addons)
        total_in = sum(os.path.getsize(f) for f in files)
        print("inputs: %s, %d files, %.1f MiB" % (source, len(files), total_in / MIB))
        key, cache, out = os.path.join(work, "k", "s.key"), os.path.join(work, "cache"), os.path.join(work, "b.tar")

        def build(lock):
            return b.build_bundle(lock, out, key_path=key, cache_dir=cache)

        cold, t_cold = timed(lambda: build(make_lock(addons)))
        print("cold build (fetch+verify+pack+assemble): %.2f s, bundle %.1f MiB, %s of input, read %.1f MiB"
              % (t_cold, cold["size"] / MIB, rate(total_in, t_cold), cold["bytes_read"] / MIB))
        t_gz, gz = compress_pipe(files, "gzip -6", os.path.join(work, "x.tar.gz"))
        print("tar | gzip -6: %.2f s, %.1f MiB, %s" % (t_gz, gz / MIB, rate(total_in, t_gz)))
        if shutil.which("zstd"):
            t_zs, zs = compress_pipe(files, "zstd -q -3 -T0", os.path.join(work, "x.tar.zst"))
            print("tar | zstd -3 -T0: %.2f s, %.1f MiB, %s" % (t_zs, zs / MIB, rate(total_in, t_zs)))
            print("RATIO bundle build / tar|zstd -3 -T0 throughput: %.2fx (aim >= 0.8x)" % (t_zs / t_cold))
        warm, t_warm = timed(lambda: build(make_lock(addons)))
        print("warm, nothing changed: %.3f s, changed=%s, read %d bytes" % (t_warm, warm["changed"], warm["bytes_read"]))
        extra = os.path.join(work, "etcd-extra.bin")
        with open(extra, "wb") as handle:
            handle.write(os.urandom(4 * MIB))
        addons["etcd"] = dict(addons["etcd"], artifacts=addons["etcd"]["artifacts"] + [artifact(extra, "extra", "binary")])
        etcd_in = sum(os.path.getsize(a["url"][len("file://"):]) for a in addons["etcd"]["artifacts"])
        one, t_one = timed(lambda: build(make_lock(addons)))
        rebuilt = sorted(n for n, p in one["packages"].items() if not p["reused"])
        print("one add-on changed (etcd +4 MiB artifact): %.2f s, rebuilt %s, read %.1f MiB through Python "
              "(etcd inputs: %.1f MiB, read twice - fetch+verify, then pack; whole input: %.1f MiB), copied %.1f MiB in the kernel"
              % (t_one, rebuilt, one["bytes_read"] / MIB, etcd_in / MIB, total_in / MIB, one["bytes_copied"] / MIB))
        pub = h.read_public_key(os.path.join(work, "k", "s.pub"))
        _verified, t_ver = timed(lambda: h.verify_bundle(out, pub))
        print("verify (signature + every checksum, stdlib only): %.2f s, %s" % (t_ver, rate(one["size"], t_ver)))
    finally:
        if args.keep:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
