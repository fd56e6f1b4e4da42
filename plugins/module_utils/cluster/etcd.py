# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: etcd command lines, their structured output, and the cluster lease.

Three parts, none of them knows AnsibleModule:

* builders of exact ``etcdctl``/``etcdutl`` argument lists (never a shell string), always with
  mutual TLS and ``-w json`` where the output is read;
* parsers of that JSON output and the quorum arithmetic the health gates rest on;
* :class:`GatewayClient` (etcd's v3 gRPC-JSON gateway over mutual TLS, standard library only) and
  :func:`acquire_lease` / :func:`release_lease`: the cluster lease, a named key bound to an etcd
  lease with a TTL, taken with one compare-and-swap transaction, so two operators cannot roll the
  cluster at once and a crashed holder's lease expires by itself; :func:`keep_lease` (the keeper)
  and :func:`check_held` (the fencing check a run makes before each host).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import ssl
import stat
import time
from urllib.parse import urlsplit

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio, netguard
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import sha256_file
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


class EtcdError(MooringError):
    """An etcd command failed, its output could not be read, or the cluster is not healthy."""


class LeaseHeldError(EtcdError):
    """The cluster lease is held by someone else (``holder``) and was not released in time."""

    def __init__(self, message, holder=None):
        super().__init__(message)
        self.holder = holder


class LeaseLostError(LeaseHeldError):
    """This run's cluster lease is no longer its own (expired, taken by another run, or its keeper
    stopped): the run must not change another host. ``holder``: who holds the lease now (None: nobody)."""


LEASE_PREFIX = "/mooring/leases/"


# ---------------------------------------------------------------------------------------
# Command lines


def client_argument_spec():
    """Module options of an etcd client (documented by the mooring.cluster.etcd_client fragment)."""
    return {
        "etcdctl": {"type": "path", "default": "etcdctl"},
        "endpoints": {"type": "list", "elements": "str", "default": ["https://127.0.0.1:2379"]},
        "cacert": {"type": "path", "required": True},
        "cert": {"type": "path", "required": True},
        "key": {"type": "path", "required": True},
    }


def gate_argument_spec():
    """Module options of a health gate's settle window (documented by the mooring.cluster.etcd_gate fragment)."""
    return {
        "checks": {"type": "int", "default": 1},
        "interval": {"type": "int", "default": 2},
        "min_uptime": {"type": "int", "default": 0},
        "timeout": {"type": "int", "default": 0},
    }


MIB = 1024 * 1024


def restart_space_problem(name, data_dir, reserve_mib, statvfs=os.statvfs, stat_path=os.stat):
    """Why member ``name`` must not be restarted for lack of space in ``data_dir``, or None.

    etcd writes its log in preallocated 64 MiB segments and its database grows in place: a member started
    on a nearly full disk fails at its first segment or commit, and stays down. A restart needs
    ``reserve_mib`` MiB free plus the size of its database (``member/snap/db``). No data directory yet
    (a member not bootstrapped): nothing to check."""
    try:
        fs = statvfs(data_dir)
    except FileNotFoundError:
        return None
    try:
        db = stat_path(os.path.join(data_dir, "member", "snap", "db")).st_size
    except FileNotFoundError:
        db = 0
    free = fs.f_bavail * fs.f_frsize
    need = int(reserve_mib) * MIB + db
    if free >= need:
        return None
    return ("%s: its data directory %s has %d MiB free; a restart needs %d MiB (%d MiB for etcd's write-ahead log, "
            "plus its %d MiB database). Not restarted: free space there, then run again"
            % (name, data_dir, free // MIB, -(-need // MIB), int(reserve_mib), -(-db // MIB)))


def client_args(endpoints, cacert, cert, key, etcdctl="etcdctl", command_timeout=None, dial_timeout=None):
    """``etcdctl`` with endpoints and client TLS. ``endpoints``: a URL or a list of them."""
    if isinstance(endpoints, str):
        endpoints = [endpoints]
    if not endpoints:
        raise EtcdError("endpoints: give at least one https:// client URL")
    for ep in endpoints:
        if urlsplit(ep).scheme != "https":
            raise EtcdError("endpoints: %r is not an https:// URL; mooring's etcd has no plaintext listener" % ep)
    for field, value in (("cacert", cacert), ("cert", cert), ("key", key)):
        if not value:
            raise EtcdError("%s: a path is required (etcd clients authenticate with a certificate)" % field)
    args = [etcdctl, "--endpoints=" + ",".join(endpoints), "--cacert=" + cacert, "--cert=" + cert, "--key=" + key]
    if dial_timeout:
        args.append("--dial-timeout=%ds" % int(dial_timeout))
    if command_timeout:
        args.append("--command-timeout=%ds" % int(command_timeout))
    return args


def endpoint_health_cmd(base, cluster=True):
    return base + ["endpoint", "health"] + (["--cluster"] if cluster else []) + ["-w", "json"]


def endpoint_status_cmd(base, cluster=True):
    return base + ["endpoint", "status"] + (["--cluster"] if cluster else []) + ["-w", "json"]


def member_list_cmd(base):
    return base + ["member", "list", "-w", "json"]


def member_add_cmd(base, name, peer_urls):
    if isinstance(peer_urls, str):
        peer_urls = [peer_urls]
    return base + ["member", "add", name, "--peer-urls=" + ",".join(peer_urls), "-w", "json"]


def member_remove_cmd(base, member_id):
    return base + ["member", "remove", "%x" % int(member_id), "-w", "json"]


def snapshot_save_cmd(base, path):
    if len([a for a in base if a.startswith("--endpoints=")]) != 1 or "," in _endpoints_of(base):
        raise EtcdError("snapshot save needs exactly one endpoint")
    return base + ["snapshot", "save", path]


def snapshot_status_cmd(tool, path):
    return [tool, "snapshot", "status", path, "-w", "json"]


def snapshot_restore_cmd(tool, path, name, initial_cluster, token, peer_urls, data_dir):
    """``etcdctl snapshot restore`` (3.4) or ``etcdutl snapshot restore`` (3.5+): same flags."""
    if isinstance(peer_urls, str):
        peer_urls = [peer_urls]
    return [tool, "snapshot", "restore", path, "--name=" + name, "--initial-cluster=" + initial_cluster,
            "--initial-cluster-token=" + token, "--initial-advertise-peer-urls=" + ",".join(peer_urls),
            "--data-dir=" + data_dir]


def _endpoints_of(base):
    for a in base:
        if a.startswith("--endpoints="):
            return a[len("--endpoints="):]
    return ""


def initial_cluster(members):
    """``name=peerURL,...`` from ``[(name, peer_url)]`` (order kept)."""
    seen = set()
    parts = []
    for name, url in members:
        if not name:
            raise EtcdError("initial cluster: a member without a name (peer %s)" % url)
        if name in seen:
            raise EtcdError("initial cluster: member name %r appears twice" % name)
        seen.add(name)
        parts.append("%s=%s" % (name, url))
    return ",".join(parts)


def members_initial_cluster(members, port=2380):
    """``--initial-cluster`` from ``[{name, addresses, names}]`` (the PKI's member list):
    each member at its first address (else first name)."""
    pairs = []
    for m in members or []:
        where = list(m.get("addresses") or []) + list(m.get("names") or [])
        if not m.get("name") or not where:
            raise EtcdError("members: %r needs a name and an address" % (m,))
        pairs.append((m["name"], peer_url(where[0], port)))
    return initial_cluster(pairs)


def peer_url(address, port=2380):
    return "https://%s:%d" % (_bracket(address), int(port))


def client_url(address, port=2379):
    return "https://%s:%d" % (_bracket(address), int(port))


def _bracket(address):
    return "[%s]" % address if ":" in address and not address.startswith("[") else address


# ---------------------------------------------------------------------------------------
# Structured output


def _json(text, what):
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        raise EtcdError("%s: etcdctl did not print JSON: %r" % (what, (text or "")[:300])) from None


def parse_health(stdout):
    """``endpoint health -w json`` -> ``[{endpoint, health, error}]``."""
    data = _json(stdout, "endpoint health")
    if isinstance(data, dict):
        data = [data]
    out = []
    for e in data:
        out.append({"endpoint": e.get("endpoint"), "health": bool(e.get("health")), "error": e.get("error") or ""})
    return sorted(out, key=lambda e: e["endpoint"] or "")


def parse_members(stdout):
    """``member list -w json`` -> ``[{id, id_hex, name, peer_urls, client_urls, started, learner}]``."""
    data = _json(stdout, "member list")
    out = []
    for m in data.get("members") or []:
        mid = int(m["ID"])
        out.append({
            "id": mid,
            "id_hex": "%x" % mid,
            "name": m.get("name") or "",
            "peer_urls": list(m.get("peerURLs") or []),
            "client_urls": list(m.get("clientURLs") or []),
            "started": bool(m.get("name")),
            "learner": bool(m.get("isLearner")),
        })
    return out


def parse_status(stdout):
    """``endpoint status -w json`` -> ``[{endpoint, version, leader, is_leader, db_size, revision}]``."""
    data = _json(stdout, "endpoint status")
    out = []
    for e in data if isinstance(data, list) else [data]:
        st = e.get("Status") or {}
        header = st.get("header") or {}
        out.append({
            "endpoint": e.get("Endpoint"),
            "version": st.get("version"),
            "member_id": header.get("member_id"),
            "leader": st.get("leader"),
            "is_leader": st.get("leader") is not None and st.get("leader") == header.get("member_id"),
            "db_size": st.get("dbSize"),
            "revision": header.get("revision"),
            "raft_index": st.get("raftIndex"),
        })
    return out


def quorum(size):
    """Members needed for a majority of ``size``."""
    return int(size) // 2 + 1


def health_summary(health, members):
    """Health of the cluster from ``parse_health`` entries and ``parse_members`` members."""
    total = len(members)
    healthy = sum(1 for e in health if e["health"])
    return {
        "total": total,
        "healthy": healthy,
        "quorum": quorum(total) if total else 0,
        "has_quorum": total > 0 and healthy >= quorum(total),
        "all_healthy": total > 0 and healthy == total,
        # Taking one healthy member down must still leave a majority.
        "can_lose_one": total > 0 and healthy - 1 >= quorum(total),
        "unhealthy": [e["endpoint"] for e in health if not e["health"]],
    }


def find_member(members, name=None, peer_urls=()):
    """The member with this name, or advertising one of these peer URLs (unstarted ones have no name)."""
    peer_urls = set(peer_urls or ())
    for m in members:
        if (name and m["name"] == name) or peer_urls & set(m["peer_urls"]):
            return m
    return None


def join_initial_cluster(members, name, peer_urls):
    """The ``--initial-cluster`` a joining member ``name`` must start with: every started member
    plus itself. Unstarted members other than itself would make the join fail: refuse them."""
    if isinstance(peer_urls, str):
        peer_urls = [peer_urls]
    pairs = []
    for m in members:
        if set(m["peer_urls"]) & set(peer_urls):
            continue
        if not m["started"]:
            raise EtcdError("member %s (%s) was added but never started; start or remove it before adding another"
                            % (m["id_hex"], ",".join(m["peer_urls"])))
        pairs.extend((m["name"], u) for u in m["peer_urls"])
    pairs.extend((name, u) for u in peer_urls)
    return initial_cluster(pairs)


# ---------------------------------------------------------------------------------------
# v3 gateway client and the cluster lease


def b64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def unb64(text):
    return base64.b64decode(text or "").decode("utf-8")


class GatewayClient:
    """etcd's gRPC-JSON gateway (``POST /v3/...``) over mutual TLS; tries each endpoint in turn."""

    def __init__(self, endpoints, cacert, cert, key, timeout=10.0):
        import http.client  # noqa: F401 - fail early where the stdlib lacks it

        if isinstance(endpoints, str):
            endpoints = [endpoints]
        self.endpoints = []
        for ep in endpoints:
            parts = urlsplit(ep)
            if parts.scheme != "https" or not parts.hostname:
                raise EtcdError("endpoints: %r is not an https:// URL" % ep)
            self.endpoints.append((parts.hostname, parts.port or 2379))
        if not self.endpoints:
            raise EtcdError("endpoints: give at least one https:// client URL")
        self.timeout = timeout
        try:
            self.context = ssl.create_default_context(cafile=cacert)
            self.context.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as exc:
            raise EtcdError("cannot load the etcd client certificate/CA (%s, %s, %s): %s"
                            % (cacert, cert, key, exc)) from None

    def call(self, path, body):
        import http.client

        errors = []
        payload = json.dumps(body).encode("utf-8")
        for host, port in self.endpoints:
            conn = http.client.HTTPSConnection(host, port, timeout=self.timeout, context=self.context)
            try:
                netguard.check(host)
                conn.request("POST", path, body=payload, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = resp.read()
                if resp.status != 200:
                    errors.append("%s:%s %s %s" % (host, port, resp.status, data[:200].decode("utf-8", "replace")))
                    continue
                reply = json.loads(data.decode("utf-8"))
                if not isinstance(reply, dict):
                    # Every v3 gateway reply is an object; anything else is not etcd (a proxy, a stub).
                    errors.append("%s:%s replied %s, not a JSON object" % (host, port, type(reply).__name__))
                    continue
                return reply
            except (OSError, ssl.SSLError, ValueError, http.client.HTTPException) as exc:
                errors.append("%s:%s %s" % (host, port, exc))
            finally:
                conn.close()
        raise EtcdError("etcd %s failed on every endpoint: %s" % (path, "; ".join(errors)))

    # thin wrappers, one per gateway call used
    def grant(self, ttl):
        return self.call("/v3/lease/grant", {"TTL": str(int(ttl))})

    def revoke(self, lease):
        return self.call("/v3/lease/revoke", {"ID": str(lease)})

    def keepalive(self, lease):
        return self.call("/v3/lease/keepalive", {"ID": str(lease)})

    def txn(self, body):
        return self.call("/v3/kv/txn", body)

    def range(self, key):
        return self.call("/v3/kv/range", {"key": b64(key)})

    def timetolive(self, lease):
        return self.call("/v3/lease/timetolive", {"ID": str(lease)})


# Seconds a gate gives a member to answer (etcdctl's dial timeout and the /metrics probe): a member
# slower than that in a look counts as down in it.
GATE_DIAL_TIMEOUT = 3


def process_starts(urls, cacert, cert, key, timeout=GATE_DIAL_TIMEOUT):
    """``{client URL: start time of that member's process (epoch seconds)}`` from each member's
    ``/metrics`` (``process_start_time_seconds``) over mutual TLS; members that do not answer are left out."""
    import http.client

    context = GatewayClient(urls or ["https://127.0.0.1:2379"], cacert, cert, key).context
    out = {}
    for url in urls:
        parts = urlsplit(url)
        conn = http.client.HTTPSConnection(parts.hostname, parts.port or 2379, timeout=timeout, context=context)
        try:
            netguard.check(parts.hostname)
            conn.request("GET", "/metrics")
            resp = conn.getresponse()
            text = resp.read().decode("utf-8", "replace")
            if resp.status != 200:
                continue
            for line in text.splitlines():
                if line.startswith("process_start_time_seconds "):
                    out[url] = float(line.split()[1])
                    break
        except (OSError, ssl.SSLError, ValueError, http.client.HTTPException):
            continue
        finally:
            conn.close()
    return out


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
    key = lease_key(name, prefix)
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
            lease = client.grant(ttl)["ID"]
            resp = client.txn({
                "compare": [{"key": b64(key), "result": "EQUAL", "target": "CREATE", "create_revision": "0"}],
                # The key read back in the same transaction: its revisions, as etcd gives them, are the token.
                "success": [{"request_put": {"key": b64(key), "value": b64(holder), "lease": lease}},
                            {"request_range": {"key": b64(key)}}],
                "failure": [{"request_range": {"key": b64(key)}}],
            })
            if resp.get("succeeded"):
                kvs = [kv for r in resp.get("responses") or [] for kv in (r.get("response_range") or {}).get("kvs") or []]
                taken = _token(kvs[0]) if kvs else read_lease(client, name, prefix)
                if not taken or taken["holder"] != holder or taken["lease"] != _revision(lease):
                    raise EtcdError("cluster lease %r: taken, but etcd does not show it held by %r with lease %s (%r)"
                                    % (name, holder, lease, taken))
                taken.update(changed=True, waited=clock() - start)
                return taken
            client.revoke(lease)  # lost the race; do not leave a lease behind
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


# ---------------------------------------------------------------------------------------
# The keeper's status file: how the keeper's state reaches the run


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


# ---------------------------------------------------------------------------------------
# Operations over a command runner: ``run(argv) -> (rc, stdout, stderr)``


def one_endpoint(base, url):
    """``base`` (an ``etcdctl`` command from :func:`client_args`) asking ``url`` only."""
    return [("--endpoints=" + url) if a.startswith("--endpoints=") else a for a in base]


def _list_members(run, base):
    """``(base that answered, members)``. The list through every endpoint first; if that fails and there are
    several, through each alone: etcdctl sends a call to one endpoint, and a member cut off from its peers
    cannot answer a linearizable one, so a cluster with quorum would otherwise read as one without it."""
    rc, out, err = run(member_list_cmd(base))
    if rc == 0:
        return base, parse_members(out)
    failure = "etcdctl member list failed (rc=%d): %s" % (rc, (err or out).strip()[:500])
    urls = [u for u in _endpoints_of(base).split(",") if u]
    for url in urls if len(urls) > 1 else []:
        single = one_endpoint(base, url)
        rc, out, _err = run(member_list_cmd(single))
        if rc == 0:
            return single, parse_members(out)
    raise EtcdError(failure)


def member_list(run, base, attempts=3, sleep=time.sleep):
    """The member list; a busy host may miss a dial deadline, so a failure is retried."""
    for attempt in range(attempts):
        try:
            return _list_members(run, base)[1]
        except EtcdError:
            if attempt + 1 >= attempts:
                raise
            sleep(2)
    raise EtcdError("member list: attempts must be at least 1")


def check_health(run, base):
    """One look at the cluster: ``health_summary`` plus ``members`` and ``health`` entries.
    Without quorum, ``member list`` fails: that is reported as 0 healthy, not raised. The health and status
    of every member are asked through the endpoint that gave the member list."""
    try:
        base, members = _list_members(run, base)
    except EtcdError as exc:
        return {"total": 0, "healthy": 0, "quorum": 0, "has_quorum": False, "all_healthy": False,
                "can_lose_one": False, "unhealthy": [], "members": [], "health": [], "error": str(exc),
                "versions": {}, "revisions": {}, "raft_indexes": {}, "healthy_members": []}
    rc, out, err = run(endpoint_health_cmd(base, cluster=True))
    try:
        health = parse_health(out)
    except EtcdError:
        health = []
    summary = health_summary(health, members)
    summary.update({"members": members, "health": health, "error": "" if rc == 0 else (err or "").strip()[:500]})
    rc_s, out_s, _err = run(endpoint_status_cmd(base, cluster=True))
    try:
        status = parse_status(out_s)
    except EtcdError:
        status = []
    summary["versions"] = {s["endpoint"]: s["version"] for s in status if s.get("endpoint")}
    summary["revisions"] = {s["endpoint"]: s["revision"] for s in status if s.get("endpoint")}
    summary["raft_indexes"] = {s["endpoint"]: s["raft_index"] for s in status if s.get("endpoint")}
    healthy_urls = {e["endpoint"] for e in health if e["health"]}
    summary["healthy_members"] = [m["name"] for m in members if healthy_urls & set(m["client_urls"])]
    return summary


GATE_KEY = "/mooring/health/gate"
# How many of the latest looks a failed gate describes.
GATE_HISTORY = 6


def _member_url(member, urls):
    """The first of ``urls`` that is one of the member's client URLs (None if none)."""
    for url in member["client_urls"]:
        if url in urls:
            return url
    return None


def _look(run, base, write, starts):
    """One look for a gate: a write first (so every live member's raft index must move), then
    :func:`check_health`, then each member's process start time when ``starts`` is given.
    Returns the state with ``seen``: ``{name: {up, raft_index, start}}``."""
    write_error = ""
    if write:
        rc, out, err = run(base + ["put", GATE_KEY, "%.3f" % time.time()])
        if rc != 0:
            write_error = "a write failed: %s" % (err or out).strip()[:200]
    state = check_health(run, base)
    healthy = {e["endpoint"] for e in state["health"] if e["health"]}
    start_of = starts([u for m in state["members"] for u in m["client_urls"]]) if starts else {}
    seen = {}
    for m in state["members"]:
        url = _member_url(m, healthy)
        status_url = _member_url(m, state["raft_indexes"])
        start = next((start_of[u] for u in m["client_urls"] if start_of.get(u)), None)
        # With process start times asked for, a member that did not answer /metrics just now is down,
        # even if etcdctl's retries got a health answer from it within their command timeout.
        seen[m["name"] or m["id_hex"]] = {
            "up": url is not None and (not starts or start is not None),
            "raft_index": state["raft_indexes"].get(status_url) if status_url else None,
            "start": start,
        }
    state["seen"] = seen
    state["write_error"] = write_error
    return state


def _judge(state, previous, exclude, expected, min_uptime, now, wrote=False):
    """What keeps this look from counting towards a settled cluster (empty: nothing)."""
    problems = []
    if state["error"] and not state["members"]:
        problems.append("no quorum (%s)" % state["error"][:200])
        return problems
    if state["write_error"]:
        problems.append(state["write_error"])
    if expected is not None and state["total"] != int(expected):
        problems.append("%d members in the member list, expected %s" % (state["total"], expected))
    for name, m in sorted(state["seen"].items()):
        if name == exclude:
            continue
        before = (previous or {}).get("seen", {}).get(name) or {}
        if not m["up"]:
            problems.append("%s down" % name)
            continue
        if before.get("start") and m["start"] and abs(m["start"] - before["start"]) > 0.5:
            problems.append("%s restarted" % name)
        elif min_uptime and m["start"] and now - m["start"] < min_uptime:
            problems.append("%s up only %.0f s" % (name, max(0, now - m["start"])))
        if (wrote and previous is not None and m["raft_index"] is not None and before.get("raft_index") is not None
                and m["raft_index"] <= before["raft_index"]):
            problems.append("%s raft index stuck at %s" % (name, m["raft_index"]))
    others = [m for name, m in state["seen"].items() if name != exclude]
    if exclude is not None and state["total"] > 1 and sum(1 for m in others if m["up"]) < quorum(state["total"]):
        problems.append("without %s, %d of %d members are healthy; quorum needs %d"
                        % (exclude, sum(1 for m in others if m["up"]), state["total"], quorum(state["total"])))
    return problems


def describe_looks(looks, exclude=None, last=GATE_HISTORY, fallback=True):
    """One line on what went wrong in the ``last`` looks, member by member:
    ``etcd-3 flapped: down 4 of the last 6 checks, restarted 2 times``."""
    looks = looks[-last:]
    names = sorted({n for st in looks for n in st.get("seen", {})} - {exclude})
    parts = []
    for name in names:
        ups = [st["seen"][name]["up"] for st in looks if name in st.get("seen", {})]
        down = ups.count(False)
        starts = [st["seen"][name]["start"] for st in looks if name in st.get("seen", {}) and st["seen"][name]["start"]]
        restarts = sum(1 for a, b in zip(starts, starts[1:]) if abs(b - a) > 0.5)
        if not down and not restarts:
            continue
        if down == len(ups):
            parts.append("%s down in all of the last %d checks" % (name, len(ups)))
        else:
            verb = "flapped" if down or restarts else "restarted"
            again = {0: "", 1: ", restarted once"}.get(restarts, ", restarted %d times" % restarts)
            parts.append("%s %s: down %d of the last %d checks%s" % (name, verb, down, len(ups), again))
    if not parts and fallback:
        problems = []
        for st in looks:
            problems.extend(p for p in st.get("problems") or [] if p not in problems)
        parts.append("; ".join(problems or ["no look at the cluster succeeded"]))
    return "; ".join(parts)


def gate_client(params):
    """The ``etcdctl`` base command of a gate, from a module's client options (see :data:`GATE_DIAL_TIMEOUT`)."""
    return client_args(params["endpoints"], params["cacert"], params["cert"], params["key"], etcdctl=params["etcdctl"],
                       command_timeout=GATE_DIAL_TIMEOUT + 1, dial_timeout=GATE_DIAL_TIMEOUT)


def gate_kwargs(params, check_mode=False):
    """:func:`wait_health` keyword arguments from a module's ``gate_argument_spec`` and client options.
    In check mode the gate does not write its key (and so does not ask raft indexes to advance)."""
    settle = params["checks"] > 1 or params["min_uptime"] > 0

    def starts(urls):
        return process_starts(urls, params["cacert"], params["cert"], params["key"])

    return {"checks": params["checks"], "interval": params["interval"], "min_uptime": params["min_uptime"],
            "timeout": params["timeout"], "starts": starts if settle else None,
            "write": params["checks"] > 1 and not check_mode}


def wait_health(run, base, require="all", expected=None, timeout=0, interval=2.0, exclude=None, checks=1,
                min_uptime=0, starts=None, write=None, settling=None, sleep=time.sleep, clock=time.monotonic,
                now=time.time):
    """Poll the cluster until it is healthy enough, ``checks`` looks in a row, or ``timeout`` seconds pass;
    then raise :class:`EtcdError` naming what happened.

    ``require``: ``all`` - every member (but ``exclude``) healthy; ``quorum`` - a majority healthy.
    ``expected``: the member list must have this many members. ``exclude``: the member about to be
    restarted - it may be down, and the others must hold quorum without it. With ``checks`` > 1 (a
    settle window) every look writes one key first (unless ``write`` is false) and every member's raft
    index must advance from the look before; with ``starts`` (``urls -> {url: process start, epoch seconds}``) a member that
    restarted between looks, or has been up less than ``min_uptime`` seconds, breaks the run of good
    looks: a flapping member cannot slip through a lucky moment. ``settling``: a member just restarted on
    purpose; it must settle like the others, but its starting up is not reported in ``incidents`` (what
    the gate waited out: other members that were down or restarted).
    """
    if require not in ("all", "quorum"):
        raise EtcdError("require: %r is not one of all, quorum" % (require,))
    start = clock()
    looks = []
    streak = 0
    while True:
        wrote = checks > 1 if write is None else bool(write)
        state = _look(run, base, write=wrote, starts=starts)
        previous = looks[-1] if looks and streak else None
        if require == "all":
            problems = _judge(state, previous, exclude, expected, min_uptime, now(), wrote)
        else:
            problems = [] if state["has_quorum"] else ["%d of %d members healthy, quorum %d%s" % (
                state["healthy"], state["total"], state["quorum"],
                "; " + state["error"] if state["error"] else "")]
            if not problems and expected is not None and state["total"] != int(expected):
                problems = ["%d members in the member list, expected %s" % (state["total"], expected)]
        state["problems"] = problems
        looks.append(state)
        streak = 0 if problems else streak + 1
        state["attempts"] = len(looks)
        if streak >= max(1, int(checks)):
            state["looks"] = [{"problems": st["problems"], "seen": st["seen"]} for st in looks[-GATE_HISTORY:]]
            # What the gate waited out (a member that was down or restarted, then settled): worth reporting.
            state["incidents"] = (describe_looks(looks, settling or exclude, last=len(looks), fallback=False)
                                  if require == "all" and any(st["problems"] for st in looks) else "")
            return state
        if clock() - start >= timeout:
            what = describe_looks(looks, exclude) if require == "all" else "; ".join(problems)
            raise EtcdError("etcd is not healthy enough (require=%s%s%s) after %d checks in %ds: %s%s" % (
                require, "" if expected is None else ", expected %s members" % expected,
                "" if checks <= 1 else ", %d good checks in a row" % checks, len(looks), int(clock() - start),
                what, "; unhealthy: " + ", ".join(state["unhealthy"]) if state["unhealthy"] else ""))
        sleep(interval)


def ensure_member(run, base, name, peer_urls, state="present", check_mode=False):
    """Make ``name`` (with ``peer_urls``) a member, or not. Returns ``{changed, member, members,
    initial_cluster}``; ``initial_cluster`` is what a joining member starts with."""
    if state not in ("present", "absent"):
        raise EtcdError("state: %r is not one of present, absent" % (state,))
    if isinstance(peer_urls, str):
        peer_urls = [peer_urls]
    members = member_list(run, base)
    found = find_member(members, name=name, peer_urls=peer_urls)
    result = {"changed": False, "member": found, "members": members, "initial_cluster": ""}
    if state == "absent":
        if found is None:
            return result
        result["changed"] = True
        if not check_mode:
            rc, out, err = run(member_remove_cmd(base, found["id"]))
            if rc != 0:
                raise EtcdError("etcdctl member remove %s failed: %s" % (found["id_hex"], (err or out).strip()[:500]))
            result["members"] = member_list(run, base)
        return result
    if not peer_urls:
        raise EtcdError("peer_urls: a member to add needs its https:// peer URL(s)")
    if found is not None and found["started"] and found["name"] != name:
        raise EtcdError("peer URL %s already belongs to member %r; remove that member first"
                        % (",".join(found["peer_urls"]), found["name"]))
    if found is None:
        result["initial_cluster"] = join_initial_cluster(members, name, peer_urls)
        result["changed"] = True
        if not check_mode:
            rc, out, err = run(member_add_cmd(base, name, peer_urls))
            if rc != 0:
                raise EtcdError("etcdctl member add %s failed: %s" % (name, (err or out).strip()[:500]))
            result["members"] = member_list(run, base)
            result["member"] = find_member(result["members"], name=name, peer_urls=peer_urls)
        return result
    result["initial_cluster"] = join_initial_cluster(members, name, peer_urls)
    return result


def save_snapshot(run, base, path, tool=None):
    """``snapshot save`` to ``path`` (through ``path.part``), then its status. Returns
    ``{path, sha256, size, revision, total_keys, hash}``."""
    part = path + ".part"
    rc, out, err = run(snapshot_save_cmd(base, part))
    if rc != 0:
        raise EtcdError("etcdctl snapshot save failed: %s" % (err or out).strip()[:500])
    os.chmod(part, 0o600)
    os.replace(part, path)
    info = snapshot_info(run, tool or base[0], path)
    info.update({"path": path, "sha256": sha256_file(path)[0], "size": os.path.getsize(path)})
    return info


def snapshot_info(run, tool, path):
    rc, out, err = run(snapshot_status_cmd(tool, path))
    if rc != 0:
        raise EtcdError("snapshot status %s failed: %s" % (path, (err or out).strip()[:500]))
    data = _json(out, "snapshot status")
    return {"revision": data.get("revision"), "total_keys": data.get("totalKey"), "hash": data.get("hash")}


def restore_snapshot(run, tool, path, name, initial_cluster_value, token, peer_urls, data_dir, check_mode=False):
    """Restore ``path`` into a new ``data_dir`` (which must not exist or be empty)."""
    if os.path.isdir(data_dir) and os.listdir(data_dir):
        raise EtcdError("data_dir %s is not empty; move it away before restoring a snapshot into it" % data_dir)
    if not os.path.isfile(path):
        raise EtcdError("snapshot %s does not exist on this host" % path)
    cmd = snapshot_restore_cmd(tool, path, name, initial_cluster_value, token, peer_urls, data_dir)
    if check_mode:
        return {"changed": True, "command": cmd}
    if os.path.isdir(data_dir):
        os.rmdir(data_dir)
    rc, out, err = run(cmd)
    if rc != 0:
        raise EtcdError("snapshot restore failed: %s" % (err or out).strip()[:500])
    return {"changed": True, "command": cmd}
