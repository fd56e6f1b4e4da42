# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: building an air-gap bundle on the controller (the entry point).

The steps, each in its own module: the lock's add-ons are planned against the package cache
(bundle.package: one content-addressed package per add-on, built from sources fetched and checked by
bundle.fetch, host packages by bundle.debs), the manifest is signed (bundle.sign), the CycloneDX SBOM
made (bundle.sbom), and the bundle file written (bundle.assemble). Its format is bundle.format; hosts
verify and unpack it with bundle.host. Building needs ``cryptography`` (signing) on the controller.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
import threading
import time

from ansible_collections.mooring.cluster.plugins.module_utils.bundle import sbom
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.assemble import bundle_size, check_directory, check_output, write_bundle
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.debs import apt_download as _apt_download
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.fetch import proxy_environment
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.format import (
    BUNDLE_FORMAT,
    BUNDLE_KIND,
    BundleError,
    SignatureError,
    key_fingerprint,
    manifest_bytes,
    public_key_from_pem,
)
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.host import bundle_id_of
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.package import (
    MANIFEST_PACKAGE_KEYS,
    PackageCache,
    component,
    default_cache_dir,
    package_inputs,
    package_key,
    package_record,
)
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.progress import Progress, human
from ansible_collections.mooring.cluster.plugins.module_utils.bundle.sign import default_key_path, ensure_signing_key, public_key_path, sign
from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.images import split_tag
from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import check_shape


def select_addons(lock, addons=None):
    available = sorted((lock.get("addons") or {}).keys())
    if not addons:
        return available
    unknown = [a for a in addons if a not in available]
    if unknown:
        shown = [a if isinstance(a, str) and fileio.SAFE_NAME.match(a) else excerpt(a, 60) for a in unknown[:5]]
        raise BundleError("addons: %s not in the lock (it has: %s)" % (", ".join(shown), ", ".join(available)[:500]))
    return sorted(set(addons))


def sandbox_image(lock):
    """The pause image the catalog pins for the locked Kubernetes version (None if absent)."""
    for addon in (lock.get("addons") or {}).values():
        for image in addon.get("images") or []:
            repo = split_tag(image.get("ref") or "")[0]
            if repo.endswith("/pause"):
                return image["ref"]
    return None


def plan_bundle(lock, cache_dir=None, addons=None, distro="debian"):
    """Which packages the bundle needs and which are already cached: ``[(name, key, cached_meta)]``.

    The lock's shape is checked first (lockfile.check_shape: a lock given as a mapping, not read
    from a file, is held to the same rules), so nothing is fetched or written for a lock whose
    names would leave the cache."""
    check_shape(lock)
    component(distro, "distro", "distro")
    cache = PackageCache(cache_dir or default_cache_dir())
    plan = []
    for name in select_addons(lock, addons):
        key = package_key(package_inputs(name, lock["addons"][name], distro))
        plan.append((name, key, cache.get(key)))
    return plan


def sbom_bytes(cache, manifest, bundle_id, metas):
    """The bundle's CycloneDX SBOM (sbom.py), validated: from the manifest and each package's package.json."""
    return sbom.render(manifest, bundle_id, {m["addon"]: package_record(cache, m) for m in metas})


def build_manifest(lock, metas, public_raw, distro):
    return {
        "bundleFormat": BUNDLE_FORMAT,
        "kind": BUNDLE_KIND,
        "hash": lock.get("hash"),
        "specDigest": lock.get("specDigest"),
        "lockDigest": lock.get("digest"),
        "distro": distro,
        "signer": key_fingerprint(public_raw),
        "sandboxImage": sandbox_image(lock),
        "lock": lock,
        "packages": {m["addon"]: {k: m[k] for k in MANIFEST_PACKAGE_KEYS} for m in metas},
    }


def _build_packages(cache, lock, names, distro, sink, counter, apt_download):
    """Build the packages ``names`` side by side, one thread per core: decompressing, hashing and
    copying release the GIL, so a bundle of several add-ons uses every core. ``{name: meta}``."""
    if not names:
        return {}
    apt_lock = threading.Lock()

    def serial_apt(packages, dest):
        with apt_lock:  # one apt-get download at a time
            return apt_download(packages, dest)

    def one(name):
        own = {"bytes_read": 0, "bytes_copied": 0}
        return cache.build(name, lock["addons"][name], distro, sink, own, serial_apt), own

    for name in names:
        sink.say("building package %s %s" % (name, lock["addons"][name].get("version")))
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(names), os.cpu_count() or 1)) as pool:
        futures = [(name, pool.submit(one, name)) for name in names]
    built = {}
    for name, future in futures:
        meta, own = future.result()
        built[name] = meta
        for k, v in own.items():
            counter[k] = counter.get(k, 0) + v
    return built


def build_bundle(lock, output, key_path=None, cache_dir=None, addons=None, distro="debian", progress=None,
                 check_mode=False, apt_download=_apt_download, verify_cache=False):
    """Build (or reuse) every package and write the signed bundle to ``output``, fetching through the lock's
    proxy when it has one (:func:`proxy_environment`).

    Returns a result dict: ``changed``, ``id`` (sha256 of bundle.json), ``size`` of the bundle file,
    per add-on ``reused``, ``bytes_read`` (read through Python: sources, hashing) and
    ``bytes_copied`` (cached packages copied into the bundle in the kernel). A cached package is
    trusted by its recorded size unless ``verify_cache`` (then it is re-hashed).

    The CycloneDX SBOM of the bundle (sbom.py) is written beside it, ``<output>.cdx.json``, when its
    content changed (``sbom``: its path, ``sbom_changed``); it is made and validated before the bundle
    is written, so a bundle never goes out with an SBOM that failed. ``changed`` covers both files,
    ``bundle_changed`` the bundle alone.
    """
    with proxy_environment(lock):
        run = _Run(lock, output, key_path, cache_dir, addons, distro, progress, verify_cache)
        if check_mode:
            return run.check()
        return run.build(apt_download)


class _Run(object):
    """One bundle build: what every step shares (the plan, the cache, the counters)."""

    def __init__(self, lock, output, key_path, cache_dir, addons, distro, progress, verify_cache):
        self.started = time.monotonic()
        self.lock, self.output, self.distro, self.verify_cache = lock, output, distro, verify_cache
        self.sink = Progress(progress)
        cache_dir = cache_dir or default_cache_dir()
        self.cache = PackageCache(cache_dir)
        self.key_path = key_path or default_key_path()
        self.counter = {"bytes_read": 0, "bytes_copied": 0}
        self.plan = plan_bundle(lock, cache_dir, addons, distro)
        check_output(output)
        check_directory(cache_dir, "cache directory")
        sbom.require()
        self.sbom_path = sbom.sbom_path(output)

    def check(self):
        """Check mode: what a run would change, without fetching or writing anything."""
        plan, key_path = self.plan, self.key_path
        current = bundle_id_of(self.output)
        changed = current is None or any(item[2] is None for item in plan)
        result = {"path": self.output, "packages": {name: {"key": key, "reused": meta is not None} for name, key, meta in plan},
                  "sbom": self.sbom_path, "sbom_changed": True}
        if not changed:
            # Every package is cached: the manifest (and so the id) can be computed without fetching.
            try:
                with open(public_key_path(key_path), "rb") as handle:
                    public_raw = public_key_from_pem(handle.read())
            except (OSError, SignatureError):
                changed = True
            else:
                metas = [item[2] for item in plan]
                manifest = build_manifest(self.lock, metas, public_raw, self.distro)
                bundle_id = hashlib.sha256(manifest_bytes(manifest)).hexdigest()
                changed = bundle_id != current
                if not changed:
                    # What a real run would return, so a check run can go on with the bundle that is there.
                    result.update({"id": bundle_id, "public_key_path": public_key_path(key_path),
                                   "sandbox_image": manifest["sandboxImage"]})
                    result["sbom_changed"] = fileio.write_if_changed(
                        self.sbom_path, sbom_bytes(self.cache, manifest, bundle_id, metas), check_mode=True)
        result["bundle_changed"] = changed
        result["changed"] = changed or result["sbom_changed"]
        return result

    def packages(self, apt_download):
        """Build what the cache lacks: ``(metas in plan order, report per add-on)``."""
        missing = [name for name, _pkey, meta in self.plan if meta is None]
        built = _build_packages(self.cache, self.lock, missing, self.distro, self.sink, self.counter, apt_download)
        metas, report = [], {}
        for name, pkey, meta in self.plan:
            report[name] = {"key": pkey, "reused": meta is not None}
            if meta is None:
                meta = built[name]
            report[name].update({"size": meta["size"], "sha256": meta["sha256"],
                                 "trustedOnFirstUse": meta.get("trustedOnFirstUse", [])})
            metas.append(meta)
        return metas, report

    def build(self, apt_download):
        """Build the packages, sign the manifest, make the SBOM, then write what changed."""
        key, public_pem, key_created = ensure_signing_key(self.key_path)
        public_raw = public_key_from_pem(public_pem)
        metas, report = self.packages(apt_download)
        manifest = build_manifest(self.lock, metas, public_raw, self.distro)
        data = manifest_bytes(manifest)
        bundle_id = hashlib.sha256(data).hexdigest()
        signature = sign(key, data)
        sbom_data = sbom_bytes(self.cache, manifest, bundle_id, metas)  # validated before anything is written
        result = {"path": self.output, "id": bundle_id, "hash": self.lock.get("hash"), "packages": report,
                  "public_key": public_pem.decode("ascii"), "public_key_path": public_key_path(self.key_path),
                  "key_created": key_created, "signer": manifest["signer"],
                  "sandbox_image": manifest["sandboxImage"], "sbom": self.sbom_path}
        if bundle_id_of(self.output) == bundle_id and os.path.getsize(self.output) == bundle_size(data, signature, metas):
            return self.unchanged(result, sbom_data)
        write_bundle(self.output, data, signature, metas, self.cache, self.sink, self.counter, self.verify_cache)
        return self.written(result, sbom_data, bundle_id)

    def unchanged(self, result, sbom_data):
        """The bundle is already there: only the SBOM may change."""
        sbom_changed = fileio.write_if_changed(self.sbom_path, sbom_data)
        result.update({"changed": sbom_changed, "bundle_changed": False, "sbom_changed": sbom_changed,
                       "size": os.path.getsize(self.output),
                       "bytes_read": self.counter["bytes_read"], "bytes_copied": 0,
                       "seconds": round(time.monotonic() - self.started, 3)})
        if sbom_changed:
            self.sink.say("SBOM %s written" % self.sbom_path)
        return result

    def written(self, result, sbom_data, bundle_id):
        """The bundle was written: then the SBOM beside it."""
        size = os.path.getsize(self.output)
        result["sbom_changed"] = fileio.write_if_changed(self.sbom_path, sbom_data)
        result.update({"changed": True, "bundle_changed": True, "size": size, "bytes_read": self.counter["bytes_read"],
                       "bytes_copied": self.counter["bytes_copied"], "seconds": round(time.monotonic() - self.started, 3)})
        self.sink.say("bundle %s written: %s, id %s; SBOM %s" % (self.output, human(size), bundle_id[:16], self.sbom_path))
        return result
