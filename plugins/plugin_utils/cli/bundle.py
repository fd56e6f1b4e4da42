# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: ``mooring bundle build|verify``."""

from __future__ import annotations

import json
import sys

# The backends (ansible's urls, cryptography, the lock) are imported by the command that runs.


def _progress(text):
    sys.stderr.write("bundle: %s\n" % text)
    sys.stderr.flush()


def _build(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.bundle import build as backend
    from ansible_collections.mooring.cluster.plugins.module_utils.bundle import sbom
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import load_lock

    lock = load_lock(args.lock)
    result = backend.build_bundle(lock, args.output, key_path=args.key, cache_dir=args.cache_dir,
                                  addons=args.addon or None, distro=args.distro,
                                  progress=None if args.quiet else _progress, verify_cache=args.verify_cache)
    if args.json:
        result = dict(result)
        result.pop("public_key", None)
        sys.stdout.write(json.dumps(result, indent=1, sort_keys=True) + "\n")
        return 0
    for name, info in sorted(result["packages"].items()):
        sys.stdout.write("%-24s %s %s\n" % (name, "reused" if info["reused"] else "built ", info["key"][:12]))
        for item in info.get("trustedOnFirstUse") or []:
            sys.stderr.write("warning: %s: no sha256 in the catalog; recorded the digest fetched (trust on first "
                             "use)\n" % item)
    sys.stdout.write("%s: %s (id %s, %d bytes, signer %s, public key %s)\n" % (
        args.output, "written" if result["bundle_changed"] else "unchanged", result["id"], result["size"], result["signer"],
        result["public_key_path"]))
    state = "written" if result["sbom_changed"] else "unchanged"
    sys.stdout.write("%s: %s (CycloneDX %s SBOM)\n" % (result["sbom"], state, sbom.SPEC_VERSION))
    return 0


def _verify(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.bundle import host, sign

    pubkey = args.pubkey or sign.public_key_path(sign.default_key_path())
    summary = host.verify_bundle(args.file, host.read_public_key(pubkey), progress=None if args.quiet else _progress)
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=1, sort_keys=True) + "\n")
        return 0
    sys.stdout.write("%s: OK (id %s, spec hash %s, signer %s, add-ons: %s)\n" % (
        args.file, summary["id"], summary["hash"], summary["signer"],
        ", ".join("%s %s" % (n, a["version"]) for n, a in sorted(summary["addons"].items()))))
    return 0


def register(subparsers):
    group = subparsers.add_parser("bundle", help="build and verify air-gap bundles")
    sub = group.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    build = sub.add_parser("build", help="build a signed air-gap bundle from a lock file")
    build.add_argument("lock", metavar="LOCK", help="installer.lock.yaml")
    build.add_argument("-o", "--output", required=True, metavar="FILE", help="bundle file to write")
    build.add_argument("--addon", action="append", default=[], metavar="NAME",
                       help="only this add-on (repeatable; default: every add-on in the lock)")
    build.add_argument("--key", metavar="PATH", help="Ed25519 signing key, created on first use "
                       "(default: $MOORING_CONFIG_DIR or ~/.config/mooring, bundle-signing.key)")
    build.add_argument("--cache-dir", metavar="DIR", help="package cache (default: $MOORING_CACHE_DIR/bundle)")
    build.add_argument("--distro", default="debian", choices=["debian"], help="host package family")
    build.add_argument("--verify-cache", action="store_true", help="re-hash cached packages before using them")
    build.add_argument("--json", action="store_true", help="print the result as JSON")
    build.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    build.set_defaults(func=_build)

    verify = sub.add_parser("verify", help="verify a bundle's signature and every checksum")
    verify.add_argument("file", metavar="FILE")
    verify.add_argument("--pubkey", metavar="KEY", help="trusted Ed25519 public key (PEM; default: the .pub next "
                        "to the default signing key)")
    verify.add_argument("--json", action="store_true", help="print the summary as JSON")
    verify.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    verify.set_defaults(func=_verify)
