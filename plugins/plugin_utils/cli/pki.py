# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: ``mooring pki`` - the cluster PKI from the command line.

``mooring pki generate --dir DIR --config REQUEST.yml [--check] [--force NAME]... [--new-ca CA]...
[--reissue-broken]`` makes or renews what is due (same backend and same result as the
``mooring.cluster.pki`` action; a broken CA or leaf is an error unless ``--new-ca`` /
``--force`` / ``--reissue-broken`` asks for its replacement);
``mooring pki list --dir DIR`` shows every certificate with its expiry (exit 1 when one is broken);
``mooring pki status --dir DIR [--days N] [--json]`` says which are due (exit 0: none due;
1: something is due, expired, missing, unreadable or broken; 2: usage error, a bad --config, or a
directory that is missing, unreadable or holds links or special files).
The request file holds the action's certificate options (``control_plane``, ``etcd``, ``kubelets``,
``key_type``...), read with bounds (yamlio, no aliases, at most :data:`REQUEST_MAX_BYTES`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

# The backend (cryptography) and PyYAML are imported by the command that runs.

# A PKI request names a few dozen hosts; a request file larger than this is not one.
REQUEST_MAX_BYTES = 1 << 20
_KINDS = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


def _load_request(path):
    if not path:
        return {}
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import RUN_OPTIONS, PKIError
    from ansible_collections.mooring.cluster.plugins.module_utils.common import yamlio

    data = yamlio.load_file(path, max_bytes=REQUEST_MAX_BYTES, max_aliases=0)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise PKIError("--config: %s must hold a mapping of PKI options (control_plane, etcd, kubelets, ...), "
                       "got %s" % (path, _KINDS.get(type(data), type(data).__name__)))
    given = [option for option in RUN_OPTIONS if option in data]
    if given:
        raise PKIError("--config: %s: %s is chosen on the command line (--new-ca, --reissue-broken), "
                       "not in the request" % (path, ", ".join(given)))
    return data


def _generate(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pki import ensure_pki

    request = _load_request(args.config)
    result = ensure_pki(args.dir, request, check_mode=args.check, force=args.force, new_ca=args.new_ca,
                        reissue_broken=args.reissue_broken)
    if args.json:
        result.pop("diff", None)
        sys.stdout.write(json.dumps(result, indent=2, sort_keys=True) + "\n")
        return 0
    verb = "would be " if args.check else ""
    for name in result["created"]:
        sys.stdout.write("%screated  %s\n" % (verb, name))
    for item in result["renewed"]:
        sys.stdout.write("%srenewed  %s (%s)\n" % (verb, item["name"], item["reason"]))
    for name in result["modes_fixed"]:
        sys.stdout.write("%smode fixed  %s\n" % (verb, name))
    for name in result["stale"]:
        sys.stdout.write("stale    %s (no longer in the request; not deleted)\n" % name)
    sys.stdout.write("%s: %d created, %d renewed, %d kept%s\n" % (
        result["path"], len(result["created"]), len(result["renewed"]), len(result["kept"]),
        " (check mode, nothing written)" if args.check else ""))
    return 0


def _list(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkistatus import inspect_pki

    entries = inspect_pki(args.dir)
    broken = [e for e in entries if "error" in e]
    if args.json:
        sys.stdout.write(json.dumps(entries, indent=2, sort_keys=True) + "\n")
    else:
        width = max([len(e["name"]) for e in entries] + [4])
        for e in entries:
            if "error" in e:
                sys.stdout.write("%-*s  BROKEN\n" % (width, e["name"]))
            else:
                sys.stdout.write("%-*s  %s  %5dd  %s\n" % (width, e["name"], e["not_after"], e["days_left"],
                                                           e["subject"]))
    _broken_lines(args.dir, [e["error"] for e in broken])
    return 1 if broken else 0


def _broken_lines(directory, problems, limit=20):
    """One ``error:`` line per broken file on stderr (the table stays on stdout)."""
    for text in problems[:limit]:
        sys.stderr.write("error: %s: %s\n" % (os.path.abspath(os.path.expanduser(directory)), text))
    if len(problems) > limit:
        sys.stderr.write("error: ... and %d more\n" % (len(problems) - limit))


def _status(args):
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkistatus import pki_status
    from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

    try:
        request = _load_request(args.config) if args.config else None
        status = pki_status(args.dir, request=request, days=args.days)
    except MooringError as exc:
        # Nothing could be read: neither "all good" (0) nor "something is due" (1).
        for problem in exc.problems:
            sys.stderr.write("error: %s\n" % problem)
        return 2
    except OSError as exc:
        sys.stderr.write("error: --config: %s: %s\n" % (exc.filename or args.config, exc.strerror or exc))
        return 2
    _broken_lines(status["path"], [e["reason"] for e in status["entries"] if e["state"] in ("unreadable", "broken")])
    if args.json:
        sys.stdout.write(json.dumps(status, indent=2, sort_keys=True) + "\n")
        return 1 if status["due"] else 0
    marks = {"ok": "", "due": "DUE", "expired": "EXPIRED", "missing": "MISSING", "unreadable": "UNREADABLE",
             "broken": "BROKEN", "no-expiry": "no expiry (key pair)"}
    width = max(len(e["name"]) for e in status["entries"])
    for e in status["entries"]:
        when = e["not_after"] or "-"
        left = "%5dd" % e["days_left"] if e["days_left"] is not None else "%6s" % "-"
        sys.stdout.write(("%-*s  %-20s  %s  %s" % (width, e["name"], when, left, marks[e["state"]])).rstrip() + "\n")
    sys.stdout.write("%s: %d due within %d days%s\n" % (
        status["path"], len(status["due"]), status["days"],
        (" (" + ", ".join(status["due"]) + ")") if status["due"] else ""))
    return 1 if status["due"] else 0


def _days(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number of days" % text) from None
    if value < 0:
        raise argparse.ArgumentTypeError("%r: days cannot be negative" % text)
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import MAX_DAYS

    if value > MAX_DAYS:
        raise argparse.ArgumentTypeError("%r: at most %d days (100 years)" % (text, MAX_DAYS))
    return value


def register(subparsers):
    parser = subparsers.add_parser("pki", help="cluster certificates and keys, made on this machine")
    sub = parser.add_subparsers(dest="pki_command", metavar="COMMAND")
    sub.required = True
    gen = sub.add_parser("generate", help="create or renew (what is due) the whole PKI under --dir")
    gen.add_argument("--dir", required=True, help="PKI directory (created 0700)")
    gen.add_argument("--config", help="YAML file with the PKI options (control_plane, etcd, kubelets, ...)")
    gen.add_argument("--check", action="store_true", help="only say what would be created or renewed")
    gen.add_argument("--force", action="append", default=[], metavar="NAME",
                     help="renew this leaf certificate regardless, broken or not (repeatable; 'all' for every leaf)")
    gen.add_argument("--new-ca", action="append", default=[], metavar="CA", dest="new_ca",
                     help="make a new CA (ca, etcd/ca, front-proxy-ca) or service-account key pair (sa) and re-issue "
                          "everything it signed - the first step of a CA rotation, not a repair (repeatable; docs/pki.md)")
    gen.add_argument("--reissue-broken", action="store_true",
                     help="re-issue every broken leaf certificate (unreadable, key not matching) instead of stopping")
    gen.add_argument("--json", action="store_true", help="print the result as JSON")
    gen.set_defaults(func=_generate)
    lst = sub.add_parser("list", help="every certificate under --dir with its expiry")
    lst.add_argument("--dir", required=True, help="PKI directory")
    lst.add_argument("--json", action="store_true", help="print as JSON")
    lst.set_defaults(func=_list)
    st = sub.add_parser("status", help="every certificate the PKI makes: expiry, days left, DUE (exit 1 when any is due)")
    st.add_argument("--dir", required=True, help="PKI directory")
    st.add_argument("--days", type=_days, default=None,
                    help="DUE when expiring within N days (default: the renew threshold, 30, as certs_renew)")
    st.add_argument("--config", help="YAML request naming the hosts (default: the hosts found under --dir)")
    st.add_argument("--json", action="store_true", help="print as JSON")
    st.set_defaults(func=_status)
