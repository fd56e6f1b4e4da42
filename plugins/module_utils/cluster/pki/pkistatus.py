# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: what the PKI on disk holds and when it expires.

:func:`inspect_pki` lists every certificate found under the directory; :func:`pki_status` says, for
every certificate :func:`~.pkispec.plan_specs` names, whether it is ok, due, expired, missing or broken.
Both only read.
"""

from __future__ import annotations

import datetime
import os

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkicert import (
    CRYPTOGRAPHY_IMPORT_ERROR,
    HAS_CRYPTOGRAPHY,
    describe_cert,
    examine,
    examine_sa,
    not_after,
    parse_cert,
    parse_key,
    public_bytes,
)
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import DEFAULTS, MAX_DAYS, PKIError, normalize, plan_specs
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkistore import check_tree, existing_dir, read_pem, shown
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import must_be


def inspect_pki(path):
    """Every certificate under ``path``: ``[{name, subject, not_after, days_left}]``; a broken one
    (unreadable, or its ``.key`` beside it not loading or not matching) is ``{name, error}``, the
    error naming the file. Links and special files inside ``path`` are a :class:`PKIError`."""
    path = existing_dir(path)
    check_tree(path)
    now = datetime.datetime.now(datetime.timezone.utc)
    out = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".crt"):
                continue
            full = os.path.join(root, f)
            rel = os.path.relpath(full, path)
            name = rel[:-4]
            data, why = read_pem(full)
            cert = None
            if data is not None:
                cert, why = parse_cert(data)
            if cert is None:
                out.append({"name": name, "error": "%s %s" % (rel, why or "vanished while being read")})
                continue
            key_data, key_why = read_pem(full[:-4] + ".key")
            if key_why is None and key_data is not None:
                key, key_why = parse_key(key_data)
                if key is not None and public_bytes(key.public_key()) != public_bytes(cert.public_key()):
                    key_why = "does not match %s" % rel
            if key_why:
                out.append({"name": name, "error": "%s.key %s" % (name, key_why)})
                continue
            out.append({"name": name, "subject": describe_cert(cert),
                        "not_after": not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "days_left": (not_after(cert) - now).days})
    return sorted(out, key=lambda e: e["name"])


def request_from_dir(path):
    """The host parts of a PKI request as the files under ``path`` show them: the etcd members
    (``etcd/members/<name>/``) and the kubelets (``kubeconfig/kubelet-<node>.crt``). With it,
    :func:`plan_specs` names every certificate the PKI made there without the inventory."""
    etcd, kubelets = [], []
    members = os.path.join(path, "etcd", "members")
    try:
        if os.path.isdir(members):
            etcd = sorted(d for d in os.listdir(members) if os.path.isdir(os.path.join(members, d)))
        kube = os.path.join(path, "kubeconfig")
        if os.path.isdir(kube):
            kubelets = sorted(f[len("kubelet-"):-len(".crt")] for f in os.listdir(kube)
                              if f.startswith("kubelet-") and f.endswith(".crt"))
    except OSError as exc:
        raise PKIError("cannot read %s: %s" % (shown(path), exc.strerror or exc)) from None
    return {"etcd": [{"name": n} for n in etcd], "kubelets": kubelets}


def pki_status(path, request=None, days=None, now=None):
    """When each certificate of the PKI under ``path`` expires, and which are due.

    The certificates are the ones :func:`plan_specs` names (the same list :func:`plan_pki`
    renews); ``request`` gives the hosts (default: as found on disk, :func:`request_from_dir`).
    ``days``: due when expiring within that many days (default: the renew threshold,
    ``renew_before_days``). Returns ``{path, days, due, entries}``; an entry is ``{name, state,
    not_after, days_left, reason}`` with ``state`` one of ``ok``, ``due`` (expires within
    ``days``), ``expired``, ``missing``, ``unreadable`` (the certificate cannot be read),
    ``broken`` (it reads, but its key does not load or match, a CA is not one, a leaf is a CA, or
    half a CA / key pair is there: :func:`ensure_pki` refuses it) or ``no-expiry`` (the
    service-account key pair); ``due`` lists every entry that is not ``ok``/``no-expiry``.
    Reads only; links and special files inside ``path`` are a :class:`PKIError`."""
    if not HAS_CRYPTOGRAPHY:
        raise missing_library("cryptography", "for the PKI", CRYPTOGRAPHY_IMPORT_ERROR, PKIError)
    path = existing_dir(path)
    if not os.access(path, os.R_OK | os.X_OK):
        raise PKIError("path: %s is not readable" % shown(path))
    days = DEFAULTS["renew_before_days"] if days is None else days
    if isinstance(days, bool) or not isinstance(days, int) or days < 0 or days > MAX_DAYS:
        raise PKIError("days: %s" % must_be("a whole number of days from 0 to %d" % MAX_DAYS, days))
    check_tree(path)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if request is not None and not isinstance(request, dict):
        raise PKIError("the PKI request: %s" % must_be("a mapping", request))
    request = dict(request_from_dir(path) if request is None else request)
    # Only the host parts matter for the names; the renew threshold is this call's.
    request.pop("renew_before_days", None)
    spec = normalize(request)
    entries = []
    for cs in plan_specs(spec):
        entry = {"name": cs.name, "state": "ok", "not_after": None, "days_left": None, "reason": None}
        cert, key, problem = examine(path, cs.name, cs.is_ca)
        if cert is not None:
            left = not_after(cert) - now
            entry["not_after"] = not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ")
            entry["days_left"] = left.days
            if left <= datetime.timedelta(0):
                entry.update(state="expired", reason="expired")
            elif left < datetime.timedelta(days=days):
                entry.update(state="due", reason="expires within %d days" % days)
        if problem == "missing":
            entry.update(state="missing", reason="no %s.%s" % (cs.name, "crt" if cert is None else "key"))
        elif problem is not None:
            entry.update(state="broken" if cert is not None else "unreadable", reason="%s %s" % problem)
        entries.append(entry)
    sa = {"name": "sa", "state": "no-expiry", "not_after": None, "days_left": None,
          "reason": "service-account key pair: a key, not a certificate; it does not expire"}
    problem = examine_sa(path)
    if problem == "missing":
        sa.update(state="missing", reason="no sa.key/sa.pub")
    elif problem is not None:
        sa.update(state="broken", reason="%s %s" % problem)
    entries.append(sa)
    due = [e["name"] for e in entries if e["state"] not in ("ok", "no-expiry")]
    return {"path": path, "days": days, "due": due, "entries": entries}
