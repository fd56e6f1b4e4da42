# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the cluster PKI, made on the controller in one call.

:func:`ensure_pki` writes (or, in check mode, only plans) the whole kubeadm file layout
under one directory: the three CAs, the service-account key pair, the API server and
front-proxy certificates, one server and one peer certificate per etcd member, the etcd
health-check client, and the client certificates behind every kubeconfig (admin,
super-admin, controller-manager, scheduler, one per kubelet).

Decide, then act: :func:`plan_pki` looks at what is on disk and says, for every
certificate, whether it is kept, created or renewed and why (missing, expiring within the
renew threshold, subject/SANs/usages no longer matching the inventory, or issued by another
CA), or refused. :func:`ensure_pki` applies that plan only when nothing is refused. Only the
``cryptography`` library is used; nothing is shelled out.

What is on disk is judged before anything is written or chmod-ed. A CA (or the
service-account key pair) that is present but broken - unreadable, half there, not a CA, its
key not matching, or expiring - is refused: a new CA is made only when the caller names it in
``new_ca``, because it re-issues everything it signed. A broken leaf (unreadable, its key not
matching, a CA where a leaf belongs) is refused unless named in ``force`` or the caller's policy
says ``reissue_broken``.

The stage's other modules: :mod:`.pkispec` (the request and the certificates it names),
:mod:`.pkistore` (the directory: safe reads, atomic writes, modes), :mod:`.pkicert` (judging
what is on disk), :mod:`.pkiissue` (making keys and certificates), :mod:`.pkistatus`
(``inspect_pki``, ``pki_status``).
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
    leaf_problem,
    not_after,
    subject_of,
)
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkiissue import build_cert, cert_pem, key_pem, new_key, public_pem
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkispec import PKIError, field_list, listed, normalize, plan_specs
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki.pkistore import (
    capped,
    check_tree,
    fix_modes,
    mkdirs,
    pki_dir,
    shown,
    stale,
    write_atomic,
)
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import must_be


def _names(value, field):
    """The set of names in ``force`` / ``new_ca`` (a list of strings)."""
    items = field_list(value, field)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise PKIError("%s[%d]: %s" % (field, i, must_be("a certificate name", item)))
    return set(items)


def _ca_refusal(path, name, what, expiring=False):
    if name == "sa":
        hint = ("a new key pair is made only when asked: new_ca [sa] (CLI --new-ca sa); every service-account "
                "token signed with the old key stops being accepted")
    elif expiring:
        hint = ("a CA is not renewed in passing: rotate it (docs/pki.md, 'CA rotation'), starting with "
                "new_ca [%s] (CLI --new-ca %s)" % (name, name))
    else:
        hint = ("a CA is replaced only when asked: new_ca [%s] (CLI --new-ca %s) makes a new one and re-issues "
                "every certificate it signed (docs/pki.md, 'A new CA')" % (name, name))
    return "%s %s; %s" % (shown(os.path.join(path, what[0])), what[1], hint)


def _leaf_refusal(path, name, what):
    return ("%s %s; re-issue it with force [%s] (CLI --force %s), or every broken leaf with reissue_broken "
            "(CLI --reissue-broken)" % (shown(os.path.join(path, what[0])), what[1], name, name))


def _run_names(specs, force, new_ca):
    """``(forced, new_ca)``: the leaves this run renews regardless (``all`` expanded) and the CAs it makes anew,
    after checking every name is a certificate of ``specs`` of the right kind."""
    force = _names(force, "force")
    new_ca = _names(new_ca, "new_ca")
    cas = {cs.name for cs in specs if cs.is_ca} | {"sa"}
    leaves = sorted(cs.name for cs in specs if not cs.is_ca)
    unknown = force - set(leaves) - cas - {"all"}
    if unknown:
        raise PKIError("force: unknown certificate(s) %s; known: all, %s"
                       % (listed(unknown), listed(leaves, limit=30)))
    if force & cas:
        raise PKIError("force: %s: a CA or the service-account key pair is not renewed by force; a new one is "
                       "asked for with new_ca (CLI --new-ca), see docs/pki.md 'A new CA'" % listed(force & cas))
    unknown = new_ca - cas
    if unknown:
        raise PKIError("new_ca: %s is not a CA; known: %s" % (listed(unknown), ", ".join(sorted(cas))))
    return (force if "all" not in force else set(leaves)), new_ca


class _Planner:
    """One :func:`plan_pki` run: the decision for each certificate, in order (a leaf's depends on its CA's)."""

    def __init__(self, path, spec, specs, now, forced, new_ca, reissue_broken):
        self.path, self.spec, self.now = path, spec, now
        self.forced, self.new_ca, self.reissue_broken = forced, new_ca, reissue_broken
        self.ca_cns = {cs.cn: cs.name for cs in specs if cs.is_ca}
        self.renew_before = datetime.timedelta(days=spec["renew_before_days"])
        self.actions, self.loaded = [], {}
        self.replaced_cas, self.refused_cas = set(), set()

    def ca(self, cs, cert, problem):
        """``(action, reason, error)`` for a CA."""
        if problem is None and subject_of(cert)[0] != cs.cn and subject_of(cert)[0] in self.ca_cns:
            problem = (cs.name + ".crt", "is CN=%s, the subject of %s.crt (CA files swapped or copied?)"
                       % (subject_of(cert)[0], self.ca_cns[subject_of(cert)[0]]))
        if cs.name in self.new_ca:
            return ("create", "missing", None) if problem == "missing" else ("renew", "new CA (new_ca)", None)
        if problem == "missing":
            return "create", "missing", None
        if problem is not None:
            return "refused", "%s %s" % problem, _ca_refusal(self.path, cs.name, problem)
        if not_after(cert) - self.now < self.renew_before:
            problem = (cs.name + ".crt", "expires %s, within renew_before_days (%d)"
                       % (not_after(cert).strftime("%Y-%m-%dT%H:%M:%SZ"), self.spec["renew_before_days"]))
            return "refused", "%s %s" % problem, _ca_refusal(self.path, cs.name, problem, expiring=True)
        return "keep", None, None

    def leaf(self, cs, cert, key, problem):
        """``(action, reason, error)`` for a leaf certificate."""
        if cs.ca in self.refused_cas:
            # The run stops at its CA; still name what is broken here, so one run shows it all.
            if problem is None or problem == "missing":
                return "keep", "not checked: its CA is refused", None
            return "refused", "%s %s" % problem, _leaf_refusal(self.path, cs.name, problem)
        if problem == "missing":
            return "create", "missing", None
        if cs.ca in self.replaced_cas:
            return "renew", "CA changed", None
        if problem is not None:
            if self.reissue_broken or cs.name in self.forced:
                return "renew", "broken: %s %s" % problem, None
            return "refused", "%s %s" % problem, _leaf_refusal(self.path, cs.name, problem)
        reason = leaf_problem(cs, cert, key, self.loaded[cs.ca][0], self.spec, self.now)
        if reason is None and cs.name in self.forced:
            reason = "forced"
        return ("keep" if reason is None else "renew"), reason, None

    def add(self, cs):
        """Decide for ``cs`` and record the action (and what a kept certificate's leaves are checked against)."""
        cert, key, problem = examine(self.path, cs.name, cs.is_ca)
        action, reason, error = self.ca(cs, cert, problem) if cs.is_ca else self.leaf(cs, cert, key, problem)
        act = {"name": cs.name, "action": action, "reason": reason, "spec": cs}
        if action == "keep":
            self.loaded[cs.name] = (cert, key)
        else:
            act["old"] = cert
            self.loaded[cs.name] = (None, None)
        if error:
            act["error"] = error
        if cs.is_ca and action in ("create", "renew"):
            self.replaced_cas.add(cs.name)
        if cs.is_ca and action == "refused":
            self.refused_cas.add(cs.name)
        self.actions.append(act)

    def add_sa(self):
        """The service-account key pair's action, last."""
        problem = examine_sa(self.path)
        act = {"name": "sa", "action": "keep", "reason": None, "spec": None}
        if "sa" in self.new_ca:
            act.update(action="create" if problem == "missing" else "renew",
                       reason="missing" if problem == "missing" else "new key pair (new_ca)")
        elif problem == "missing":
            act.update(action="create", reason="missing")
        elif problem is not None:
            act.update(action="refused", reason="%s %s" % problem, error=_ca_refusal(self.path, "sa", problem))
        self.actions.append(act)


def plan_pki(path, request, now=None, force=(), new_ca=(), reissue_broken=False):
    """Decide, without writing anything, what happens to every file.

    Returns ``(spec, actions, loaded)``: ``actions`` is a list of dicts ``{name, action, reason,
    spec}`` with ``action`` one of ``keep``, ``create``, ``renew`` or ``refused`` (a broken file
    this run may not replace; ``error`` holds the line that says which file and why); CAs come
    first, ``sa`` last. ``force`` names leaf certificates (or ``all`` of them) to renew regardless,
    broken or not; ``new_ca`` names CAs (``ca``, ``etcd/ca``, ``front-proxy-ca``, ``sa``) to make
    anew; ``reissue_broken`` re-issues every broken leaf. Links and special files inside ``path``
    are a :class:`PKIError` (:func:`check_tree`).
    """
    if not HAS_CRYPTOGRAPHY:
        raise missing_library("cryptography", "for the PKI", CRYPTOGRAPHY_IMPORT_ERROR, PKIError)
    spec = normalize(request)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    specs = plan_specs(spec)
    forced, new_ca = _run_names(specs, force, new_ca)
    check_tree(path)
    planner = _Planner(path, spec, specs, now, forced, new_ca, reissue_broken)
    for cs in specs:
        planner.add(cs)
    planner.add_sa()
    return spec, planner.actions, planner.loaded


def _files_of(path, name):
    """The absolute paths of one entry of the result's ``files``."""
    if name == "sa":
        return {"key": os.path.join(path, "sa.key"), "pub": os.path.join(path, "sa.pub")}
    return {"cert": os.path.join(path, name + ".crt"), "key": os.path.join(path, name + ".key")}


def _issue(path, act, spec, loaded, now):
    """Make and write the key (and certificate) of one created or renewed entry."""
    name, cs = act["name"], act["spec"]
    key = new_key(spec["key_type"])
    if name == "sa":
        write_atomic(os.path.join(path, "sa.key"), key_pem(key), 0o600)
        write_atomic(os.path.join(path, "sa.pub"), public_pem(key), 0o644)
        return
    if cs.is_ca:
        cert = build_cert(cs, key, None, None, spec["ca_validity_days"], now)
    else:
        ca_cert, ca_key = loaded[cs.ca]
        cert = build_cert(cs, key, ca_cert, ca_key, spec["validity_days"], now)
    base = os.path.join(path, cs.name)
    write_atomic(base + ".key", key_pem(key), 0o600)
    write_atomic(base + ".crt", cert_pem(cert), 0o644)
    loaded[cs.name] = (cert, key)


def _apply(path, spec, actions, loaded, now, check_mode, result, before, after):
    """Every action of the plan into ``result`` (and the diff lines); written unless ``check_mode``."""
    for act in actions:
        name = act["name"]
        result["files"][name] = _files_of(path, name)
        if act["action"] == "keep":
            result["kept"].append(name)
            continue
        result["changed"] = True
        if act["action"] == "create":
            result["created"].append(name)
        else:
            result["renewed"].append({"name": name, "reason": act["reason"]})
        cs, old = act["spec"], act.get("old")
        before.append("%s: %s" % (name, describe_cert(old) if old is not None else "(absent)"))
        after.append("%s: %s" % (name, cs.describe() if cs else "service-account key pair (%s)" % spec["key_type"]))
        if not check_mode:
            _issue(path, act, spec, loaded, now)


def ensure_pki(path, request, check_mode=False, now=None, force=(), new_ca=(), reissue_broken=False):
    """Make the PKI under ``path`` match ``request``; return what was done.

    ``force``, ``new_ca`` and ``reissue_broken`` are :func:`plan_pki`'s. When the plan refuses anything (a broken
    CA or key pair, a broken leaf nobody asked to re-issue) nothing is written or chmod-ed and a
    :class:`PKIError` lists every refused file.

    The result: ``changed``, ``created`` (names), ``renewed`` (``[{name, reason}]``), ``kept``,
    ``stale`` (files of hosts no longer in the request; never deleted), ``files``
    (``{name: {cert, key}}``, absolute paths) and ``diff`` (``before``/``after`` texts).
    Nothing secret is returned.
    """
    path = pki_dir(path, check_mode)
    spec, actions, loaded = plan_pki(path, request, now=now, force=force, new_ca=new_ca,
                                     reissue_broken=reissue_broken)
    refused = [act["error"] for act in actions if act["action"] == "refused"]
    if refused:
        raise PKIError("the PKI under %s has broken files; nothing was written" % shown(path),
                       problems=capped(refused))
    now = now or datetime.datetime.now(datetime.timezone.utc)
    result = {"changed": False, "created": [], "renewed": [], "kept": [], "files": {}, "path": path,
              "diff": {"before": "", "after": ""}}
    before, after = [], []
    fixed = fix_modes(path, actions, check_mode)
    if fixed:
        result["changed"] = True
        before += ["%s: mode %s" % (f, m) for f, m, _w in fixed]
        after += ["%s: mode %s" % (f, w) for f, _m, w in fixed]
    result["modes_fixed"] = [f for f, _m, _w in fixed]
    if not check_mode:
        mkdirs(path)
    _apply(path, spec, actions, loaded, now, check_mode, result, before, after)
    result["stale"] = stale(path, spec)
    if before:
        result["diff"] = {"before": "\n".join(before) + "\n", "after": "\n".join(after) + "\n",
                          "before_header": path, "after_header": path}
    return result
