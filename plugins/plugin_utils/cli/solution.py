# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: ``mooring solution`` commands (build, validate, keygen).

``build DIR -o ARCHIVE [--key KEY]`` packages a solution source tree into an ISO 9660 image
or a tar (by the output name), writing SHA256SUMS and, with ``--key``, an Ed25519 signature.
``validate ARCHIVE [--pubkey KEY] [--sha256sum FILE] [--trusted-sha256 HEX] [--allow-broad-rbac NAME-VERSION]``
checks layout, manifest, checksums, signature (or the trust anchor of a MetalK8s archive), images and
operator manifests (a binding of cluster-admin, or of any role to everyone, only for the archives
``--allow-broad-rbac`` names) and prints one line per problem, each with its path in the archive;
exit code 1 when anything is wrong. ``keygen PRIVATE PUBLIC`` writes a key pair all or nothing,
never over an existing file and never both keys to one file.
"""

from __future__ import annotations

import json
import sys


def _backend():
    """solutions/build.py (cryptography, pycdlib, PyYAML), imported by the command that runs;
    it has build_archive, generate_key and (from solutions/validate.py) validate_archive."""
    from ansible_collections.mooring.cluster.plugins.module_utils.solutions import build

    return build


def _build(args):
    summary = _backend().build_archive(args.source, args.output, key_path=args.key, fmt=args.format)
    for w in summary.get("warnings") or []:
        sys.stderr.write("warning: %s\n" % w)
    sys.stdout.write(
        "built %s: %s %s (%s, %d images, %s), sha256 %s\n"
        % (
            args.output,
            summary["name"],
            summary["version"],
            summary["format"],
            len(summary["images"]),
            "signed" if summary["signed"] else "unsigned",
            summary["archive_sha256"],
        )
    )
    return 0


def _validate(args):
    summary = _backend().validate_archive(args.archive, pubkey_path=args.pubkey,
                                          require_signature=args.require_signature, sha256sum=args.sha256sum,
                                          trusted_sha256=args.trusted_sha256, allow_broad_rbac=args.allow_broad_rbac)
    for w in summary["warnings"]:
        sys.stderr.write("warning: %s\n" % w)
    if args.json:
        out = dict(summary)
        out["operator"] = {"image": summary["operator"]["image"],
                           "objects": ["%s/%s" % (d["kind"], d["metadata"]["name"])
                                       for d in summary["operator"]["manifests"]]}
        sys.stdout.write(json.dumps(out, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(
            "%s: valid solution %s %s (%s, %d images, signature %s)%s\n"
            % (
                args.archive,
                summary["name"],
                summary["version"],
                summary["format"] if summary["flavour"] == "mooring" else "MetalK8s " + summary["format"],
                len(summary["images"]),
                "verified" if summary["signature_verified"] else ("not verified" if summary["signed"] else "absent"),
                "; trusted by %s (%s)" % (summary["trust"]["kind"], summary["trust"]["detail"])
                if summary["trust"] else "",
            )
        )
    return 0


def _keygen(args):
    _backend().generate_key(args.private, args.public)
    sys.stdout.write("wrote %s (private, 0600) and %s (public)\n" % (args.private, args.public))
    return 0


def register(subparsers):
    p = subparsers.add_parser("solution", help="build and validate solution (application) archives")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    b = sub.add_parser("build", help="package a solution directory into an archive")
    b.add_argument("source", metavar="DIR", help="solution source: manifest.yaml, images/, operator/deploy/")
    b.add_argument("-o", "--output", required=True, metavar="ARCHIVE", help="output file: .iso, .tar or .tar.gz")
    b.add_argument("--key", metavar="KEY", help="Ed25519 private key (PEM) to sign SHA256SUMS with")
    b.add_argument("--format", choices=["iso", "tar", "tar.gz"], help="archive format (default: from the name)")
    b.set_defaults(func=_build)

    v = sub.add_parser("validate", help="check an archive's layout, manifest, checksums, signature and images")
    v.add_argument("archive", metavar="ARCHIVE")
    v.add_argument("--pubkey", metavar="KEY", help="Ed25519 public key (PEM): the archive must be signed by it")
    v.add_argument("--require-signature", action="store_true", help="fail unless a signature verifies")
    v.add_argument("--sha256sum", metavar="FILE",
                   help="sha256sum output listing the archive (default: a SHA256SUM file beside it, when present)")
    v.add_argument("--trusted-sha256", metavar="HEX",
                   help="trust the archive with this SHA-256 without a signature or checksum file")
    v.add_argument("--allow-broad-rbac", action="append", default=[], metavar="NAME-VERSION",
                   help="let this archive (e.g. example-1.0.0) bind cluster-admin, or a role to every user, anonymous "
                        "request or service account (repeatable; refused otherwise)")
    v.add_argument("--json", action="store_true", help="print the archive summary as JSON")
    v.set_defaults(func=_validate)

    k = sub.add_parser("keygen", help="create an Ed25519 key pair for signing archives")
    k.add_argument("private", metavar="PRIVATE_KEY")
    k.add_argument("public", metavar="PUBLIC_KEY")
    k.set_defaults(func=_keygen)
