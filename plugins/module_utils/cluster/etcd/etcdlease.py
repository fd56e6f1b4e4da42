# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the cluster lease.

A named key bound to an etcd lease with a TTL, taken with one compare-and-swap transaction, so two
operators cannot roll the cluster at once and a crashed holder's lease expires by itself:
:func:`acquire_lease` / :func:`release_lease` / :func:`query_lease`; :func:`keep_lease` (the keeper)
and :func:`check_held` (the fencing check a run makes before each host).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdctl import EtcdError
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdhttp import GatewayClient, b64, unb64
from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio


class LeaseHeldError(EtcdError):
    """The cluster lease is held by someone else (``holder``) and was not released in time."""

    def __init__(self, message, holder=None):
        super().__init__(message)
        self.holder = holder


class LeaseLostError(LeaseHeldError):
    """This run's cluster lease is no longer its own (expired, taken by another run, or its keeper
    stopped): the run must not change another host. ``holder``: who holds the lease now (None: nobody)."""


LEASE_PREFIX = "/mooring/leases/"


def lease_key(name, prefix=LEASE_PREFIX):
    if not name or "/" in name:
        raise EtcdError("name: %r is not a lease name (non-empty, no '/')" % (name,))
    return prefix + name


def _revision(value):
    """An etcd int64 as the gateway's JSON gives it (a string), or None when absent."""
    return None if value is None else str(value)


def _token(kv):
    """The fencing token of the lease key as etcd reports it (a range response's ``kvs[0]``):
    ``{holder, lease, create_revision, mod_revision}``. A key taken again has another lease and
    create revision, even when it holds the same holder."""
    return {"holder": unb64(kv.get("value")), "lease": _revision(kv.get("lease")),
            "create_revision": _revision(kv.get("create_revision")), "mod_revision": _revision(kv.get("mod_revision"))}


def read_lease(client, name, prefix=LEASE_PREFIX):
    """The fencing token (:func:`_token`) of the cluster lease, or None when free."""
    kvs = client.range(lease_key(name, prefix)).get("kvs") or []
    if not kvs:
        return None
    return _token(kvs[0])


def _take(client, name, holder, ttl, prefix):
    """One compare-and-swap: create the lease key for ``holder`` if nobody has it. Returns the lease read
    back (the fencing token), or None when another run won the race."""
    key = lease_key(name, prefix)
    lease = client.grant(ttl)["ID"]
    resp = client.txn({
        "compare": [{"key": b64(key), "result": "EQUAL", "target": "CREATE", "create_revision": "0"}],
        # The key read back in the same transaction: its revisions, as etcd gives them, are the token.
        "success": [{"request_put": {"key": b64(key), "value": b64(holder), "lease": lease}},
                    {"request_range": {"key": b64(key)}}],
        "failure": [{"request_range": {"key": b64(key)}}],
    })
    if not resp.get("succeeded"):
        client.revoke(lease)  # lost the race; do not leave a lease behind
        return None
    kvs = [kv for r in resp.get("responses") or [] for kv in (r.get("response_range") or {}).get("kvs") or []]
    taken = _token(kvs[0]) if kvs else read_lease(client, name, prefix)
    if not taken or taken["holder"] != holder or taken["lease"] != _revision(lease):
        raise EtcdError("cluster lease %r: taken, but etcd does not show it held by %r with lease %s (%r)"
                        % (name, holder, lease, taken))
    return taken


def acquire_lease(client, name, holder, ttl=3600, timeout=0, poll=2.0, prefix=LEASE_PREFIX, check_mode=False,
                  sleep=time.sleep, clock=time.monotonic):
    """Take the cluster lease for ``holder`` (or keep it alive if ``holder`` already has it).

    Waits up to ``timeout`` seconds for another holder to release it (or for its lease to
    expire), then raises :class:`LeaseHeldError` naming that holder. etcd not answering (a
    controller briefly cut off from it) is waited out within the same ``timeout``, then raised
    with the last error. Returns
    ``{changed, holder, lease, create_revision, mod_revision, waited}``: the lease id and the key's
    revisions are the run's fencing token (:func:`check_held`).
    """
    if not holder:
        raise EtcdError("holder: give an identifier of who takes the lease (user@host, job id)")
    if int(ttl) < 5:
        raise EtcdError("ttl: %r is too short; give at least 5 seconds" % (ttl,))
    start = clock()
    while True:
        try:
            current = read_lease(client, name, prefix)
        except EtcdError as exc:
            waited = clock() - start
            if waited >= timeout:
                raise EtcdError("cluster lease %r not taken: etcd did not answer for %ds: %s" % (name, int(waited), exc)) from None
            sleep(min(poll, max(0.1, timeout - waited)))
            continue
        if current and current["holder"] == holder:
            if not check_mode:
                client.keepalive(current["lease"])
            current.update(changed=False, waited=clock() - start)
            return current
        if current is None:
            if check_mode:
                return {"changed": True, "holder": holder, "lease": None, "create_revision": None,
                        "mod_revision": None, "waited": clock() - start}
            taken = _take(client, name, holder, ttl, prefix)
            if taken:
                taken.update(changed=True, waited=clock() - start)
                return taken
            continue
        waited = clock() - start
        if waited >= timeout:
            raise LeaseHeldError("cluster lease %r is held by %r; waited %ds for it to be released (a run gives it back "
                                 "when it ends, even when it fails or is killed). Try again later; if that run is gone "
                                 "for good, show and break the lease with the mooring.cluster.cluster_lease playbook "
                                 "(-e lease_action=break -e lease_confirm='%s')"
                                 % (name, current["holder"], int(waited), current["holder"]), holder=current["holder"])
        sleep(min(poll, max(0.1, timeout - waited)))


def release_lease(client, name, holder, force=False, confirm=None, prefix=LEASE_PREFIX, check_mode=False):
    """Give the lease back. Held by someone else: an error unless ``force`` and ``confirm`` is that exact
    holder (breaking a lease names what it breaks). Returns ``{changed, holder}``."""
    key = lease_key(name, prefix)
    current = read_lease(client, name, prefix)
    if current is None:
        return {"changed": False, "holder": None}
    if current["holder"] != holder:
        if not force:
            raise LeaseHeldError("cluster lease %r is held by %r, not by %r; not releasing it (breaking it needs "
                                 "force=true and confirm=<that holder>)" % (name, current["holder"], holder),
                                 holder=current["holder"])
        if confirm != current["holder"]:
            raise LeaseHeldError("cluster lease %r is held by %r; to break it, confirm that exact holder "
                                 "(confirm=%r). Nothing was changed." % (name, current["holder"], current["holder"]),
                                 holder=current["holder"])
    if not check_mode:
        resp = client.txn({
            "compare": [{"key": b64(key), "result": "EQUAL", "target": "VALUE", "value": b64(current["holder"])}],
            "success": [{"request_delete_range": {"key": b64(key)}}],
            "failure": [],
        })
        if resp.get("succeeded") and current.get("lease"):
            with contextlib.suppress(EtcdError):  # the key is gone; an expired lease is fine
                client.revoke(current["lease"])
    return {"changed": True, "holder": current["holder"]}


def _ttl_left(client, lease):
    """Seconds etcd lease ``lease`` has left (``/v3/lease/timetolive``); -1 (etcd's answer) once it has expired."""
    try:
        return int(client.timetolive(lease).get("TTL"))
    except (TypeError, ValueError):
        return None


def query_lease(client, name, prefix=LEASE_PREFIX):
    """``{holder, lease, ttl}`` of the cluster lease (``ttl``: seconds its etcd lease has left), holder None when free."""
    current = read_lease(client, name, prefix)
    if current is None:
        return {"changed": False, "holder": None, "lease": None, "ttl": None}
    ttl = None
    if current.get("lease"):
        with contextlib.suppress(EtcdError):
            ttl = _ttl_left(client, current["lease"])
    return {"changed": False, "holder": current["holder"], "lease": current["lease"], "ttl": ttl}


def process_started(pid, read=None):
    """Start time of process ``pid`` in clock ticks since boot (``/proc/PID/stat`` field 22); None if it is gone."""
    path = "/proc/%d/stat" % pid
    try:
        if read:
            text = read(path)
        else:
            with open(path) as f:
                text = f.read()
    except (OSError, ValueError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[19])


def require_watchable_run(name, pid, started):
    """Refuse to take lease ``name`` for a run no keeper can watch: ``started`` (:func:`process_started` of the
    run's ansible-playbook process ``pid``) is None on a controller without ``/proc``. A lease taken there
    would lapse after its TTL in the middle of the run, with nothing to say so."""
    if started is None:
        raise EtcdError("cluster lease %r not taken: this controller has no /proc/%d/stat for the run's ansible-playbook "
                        "process, so no keeper can watch the run and the lease would lapse after its TTL in the middle "
                        "of it; run from a controller with /proc (Linux), or set keep_alive=false to hold the lease "
                        "for one TTL only (the held checks then stop the run once it lapses)" % (name, pid))


def run_holder(who, where, pid, started, label=""):
    """The holder string of one run: who and where, and the run (the controller's ansible-playbook process,
    by pid and start time, so a new run with the same pid is a different run); ``label`` (a job name) first."""
    run = "%s@%s run %d-%x" % (who, where, pid, started or 0)
    return "%s (%s)" % (label, run) if label else run


# Keeper states: ``keeping`` (renewing; ``no keeper`` when the run asked for none) or why it stopped:
# ``run ended``, ``not held...`` (the lease was lost) or ``keeper failed: ...``.
KEEPER_RUNNING = ("keeping", "no keeper")


def keeper_status_path(name, holder, directory=None):
    """The status file of the keeper of ``holder``'s lease ``name`` on the controller: one per run, in a
    private directory (``directory``, default ``~/.ansible/tmp/mooring-leases``). The holder is hashed
    into the name (it holds spaces, and a label may hold anything)."""
    directory = directory or os.path.join(os.path.expanduser("~"), ".ansible", "tmp", "mooring-leases")
    digest = hashlib.sha256(("%s\0%s" % (name, holder)).encode("utf-8")).hexdigest()[:32]
    return os.path.join(directory, "lease-%s.json" % digest)


def prune_keeper_status(directory, days=7, now=time.time):
    """Remove the keeper status files in ``directory`` untouched for ``days`` days: a keeper rewrites its
    file every third of its TTL, so such a file is a run that ended long ago. Returns the paths removed."""
    removed = []
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return removed
    for name in names:
        path = os.path.join(directory, name)
        if not (name.startswith("lease-") and name.endswith(".json")):
            continue
        with contextlib.suppress(FileNotFoundError):
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and now() - st.st_mtime > days * 86400:
                os.unlink(path)
                removed.append(path)
    return removed


def write_keeper_status(path, status):
    """Write ``status`` (a dict) to ``path`` atomically: the directory 0700, the file 0600 (it names the run)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    os.chmod(directory, 0o700)
    fileio.write_atomic(path, json.dumps(status, sort_keys=True) + "\n", mode=0o600)


def read_keeper_status(path):
    """The keeper status at ``path``; None when there is none. A file that is not a JSON object reads as a
    failed keeper (never as one still keeping)."""
    data = fileio.read_if_exists(path)
    if data is None:
        return None
    try:
        status = json.loads(data.decode("utf-8"))
    except ValueError:
        status = None
    if not isinstance(status, dict):
        return {"state": "keeper failed: its status file %s is not a JSON object" % path}
    return status


def keeper_recorder(path, token, ttl, now=time.time):
    """``record(state)`` for :func:`keep_lease`: the keeper's state written to its status file ``path``, with the
    run's fencing ``token`` (:func:`_token`) and ``ttl``; ``keeping`` also stamps ``last_keepalive``. A file that
    already belongs to another lease of the run (taken after this one was lost) is left alone."""

    def record(state):
        status = read_keeper_status(path) or {}
        if status.get("lease") not in (None, token["lease"]):
            return
        status.update(token)
        status.update(state=state, ttl=int(ttl), updated=now(), keeper_pid=os.getpid())
        if state == "keeping":
            status["last_keepalive"] = now()
        write_keeper_status(path, status)

    return record


def keep_lease(client, name, holder, lease, alive, ttl, prefix=LEASE_PREFIX, poll=1.0, record=None,
               sleep=time.sleep, clock=time.monotonic):
    """Keep the cluster lease alive while ``alive()`` is true (the run that took it); give it back as
    soon as it turns false (the run ended, failed or was killed without releasing it). ``record(state)``
    (when given) is told ``keeping`` after every renewal and why the keeper stopped, which it returns:

    * ``run ended`` - the run is gone; the lease was given back;
    * ``not held`` - the key is gone or is another lease's (released by the run, broken, expired);
    * ``not held: no keepalive for N s, past the TTL (T s)`` - etcd did not answer for longer than the TTL:
      the lease has expired, whoever holds the key now;
    * ``keeper failed: ERROR`` - anything else (a reply that is not etcd's, a bug): never a silent death.
    """
    every = max(1.0, int(ttl) / 3.0)
    last = clock()
    why = None
    try:
        while why is None:
            if not alive():
                with contextlib.suppress(EtcdError):
                    release_lease(client, name, holder, prefix=prefix)
                why = "run ended"
            elif clock() - last >= every:
                try:
                    current = read_lease(client, name, prefix)
                    if current is None or current["holder"] != holder or current["lease"] != _revision(lease):
                        why = "not held"
                    else:
                        client.keepalive(lease)
                        last = clock()
                        if record:
                            record("keeping")
                except EtcdError:
                    # etcd briefly unreachable: try again at the next poll, while the lease can still be alive.
                    if clock() - last >= int(ttl):
                        why = "not held: no keepalive for %d s, past the TTL (%d s)" % (clock() - last, int(ttl))
            if why is None:
                sleep(poll)
    except Exception as exc:  # noqa: BLE001 - whatever it is, the run must hear of it
        why = "keeper failed: %s: %s" % (type(exc).__name__, exc)
    if record:
        record(why)
    return why


def keeper_main(args):
    """Entry point of the detached process the cluster_lease action starts: ``args`` is a dict with
    endpoints, cacert, cert, key, name, holder, lease, create_revision, mod_revision, ttl, prefix, pid,
    started and status (its status file, :func:`keeper_status_path`). Whatever ends it is recorded there
    first - an error as ``keeper failed: ...``, SIGTERM included - so the run's held checks hear of it."""
    import signal

    token = {k: args.get(k) for k in ("holder", "lease", "create_revision", "mod_revision")}
    record = keeper_recorder(args["status"], token, args["ttl"])

    def terminated(signum, frame):
        raise SystemExit("terminated by signal %d" % signum)

    try:
        signal.signal(signal.SIGTERM, terminated)
        record("keeping")
        client = GatewayClient(args["endpoints"], args["cacert"], args["cert"], args["key"], timeout=5.0)

        def alive():
            return process_started(args["pid"]) == args["started"]

        return keep_lease(client, args["name"], args["holder"], args["lease"], alive, args["ttl"],
                          prefix=args["prefix"], record=record)
    except BaseException as exc:  # noqa: BLE001 - recorded, then the process ends
        why = "keeper failed: %s: %s" % (type(exc).__name__, exc)
        with contextlib.suppress(BaseException):
            record(why)
        return why


def check_held(client, name, holder, status, prefix=LEASE_PREFIX, check_mode=False, now=time.time):
    """The fencing check a run makes before it changes the next host: raise :class:`LeaseLostError`
    (one line: the lease, who holds it now, and that the run stops) unless the run's lease is still its own.

    ``status`` is the run's keeper status (:func:`read_keeper_status`): its fencing token (lease id and
    the key's create revision, as :func:`acquire_lease` got them) and the keeper's state. Held means:
    the keeper is still keeping (and renewed within the TTL), the key exists with this holder, the
    same lease id and the same create revision (not taken again since), and etcd gives that lease a
    TTL > 0. In check mode a run that took no lease (none is taken in check mode) passes.
    Returns ``{changed, held, holder, lease, create_revision, mod_revision, ttl, keeper, last_keepalive}``.
    """
    if status is None and check_mode:
        return {"changed": False, "held": None, "holder": holder, "lease": None, "create_revision": None,
                "mod_revision": None, "ttl": None, "keeper": None, "last_keepalive": None}

    def lost(why, current):
        now_holder = current["holder"] if current else None
        raise LeaseLostError("cluster lease %r is no longer this run's: %s; held now by %s. This run must not change "
                             "another host: stopping before the next host"
                             % (name, why, "nobody" if now_holder is None else repr(now_holder)), holder=now_holder)

    try:
        current = read_lease(client, name, prefix)
        ttl_left = None
        if current and status and current["lease"] and current["lease"] == status.get("lease"):
            ttl_left = _ttl_left(client, current["lease"])
    except EtcdError as exc:
        raise LeaseLostError("cluster lease %r: cannot confirm this run still holds it (%s). This run must not change "
                             "another host: stopping before the next host" % (name, exc)) from None
    if status is None:
        lost("this run took no lease (no keeper status for holder %r)" % holder, current)
    state = status.get("state") or "unknown"
    last = status.get("last_keepalive")
    ttl = status.get("ttl")
    if state not in KEEPER_RUNNING:
        lost("its keeper stopped: %s" % state, current)
    if state == "keeping" and last is not None and ttl and now() - float(last) >= int(ttl):
        lost("its keeper has not renewed it for %d s, past the TTL (%d s)" % (now() - float(last), int(ttl)), current)
    if current is None:
        lost("the key is gone (the lease expired or was released)", current)
    if current["holder"] != holder:
        lost("another run took it", current)
    if current["lease"] != status.get("lease") or current["create_revision"] != status.get("create_revision"):
        lost("the key was taken again (lease %s, created at revision %s; this run's: lease %s, revision %s)"
             % (current["lease"], current["create_revision"], status.get("lease"), status.get("create_revision")),
             current)
    if ttl_left is None or ttl_left <= 0:
        lost("etcd gives its lease %s no time left (TTL %s)" % (current["lease"], ttl_left), current)
    return {"changed": False, "held": True, "holder": holder, "lease": current["lease"],
            "create_revision": current["create_revision"], "mod_revision": current["mod_revision"], "ttl": ttl_left,
            "keeper": state, "last_keepalive": last}
