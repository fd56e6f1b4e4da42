# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: etcd command lines, their structured output, and the cluster lock.

Three parts, none of them knows AnsibleModule:

* builders of exact ``etcdctl``/``etcdutl`` argument lists (never a shell string), always with
  mutual TLS and ``-w json`` where the output is read;
* parsers of that JSON output and the quorum arithmetic the health gates rest on;
* :class:`GatewayClient` (etcd's v3 gRPC-JSON gateway over mutual TLS, standard library only) and
  :func:`acquire_lock` / :func:`release_lock`: a named lock held as a key bound to a lease with a
  TTL, taken with one compare-and-swap transaction, so two operators cannot roll the cluster at
  once and a crashed holder's lock expires by itself.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import ssl
import time
from urllib.parse import urlsplit

from ansible_collections.mooring.cluster.plugins.module_utils import netguard
from ansible_collections.mooring.cluster.plugins.module_utils.errors import MooringError


class EtcdError(MooringError):
    """An etcd command failed, its output could not be read, or the cluster is not healthy."""


class LockHeldError(EtcdError):
    """The cluster lock is held by someone else (``holder``) and was not released in time."""

    def __init__(self, message, holder=None):
        super().__init__(message)
        self.holder = holder


LOCK_PREFIX = "/mooring/locks/"


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
# v3 gateway client and the cluster lock


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
                return json.loads(data.decode("utf-8"))
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


def lock_key(name, prefix=LOCK_PREFIX):
    if not name or "/" in name:
        raise EtcdError("name: %r is not a lock name (non-empty, no '/')" % (name,))
    return prefix + name


def read_lock(client, name, prefix=LOCK_PREFIX):
    """``{holder, lease}`` of the lock, or None when free."""
    kvs = client.range(lock_key(name, prefix)).get("kvs") or []
    if not kvs:
        return None
    return {"holder": unb64(kvs[0].get("value")), "lease": kvs[0].get("lease")}


def acquire_lock(client, name, holder, ttl=3600, timeout=0, poll=2.0, prefix=LOCK_PREFIX, check_mode=False,
                 sleep=time.sleep, clock=time.monotonic):
    """Take the lock for ``holder`` (or keep it alive if ``holder`` already has it).

    Waits up to ``timeout`` seconds for another holder to release it (or for its lease to
    expire), then raises :class:`LockHeldError` naming that holder. Returns
    ``{changed, holder, lease, waited}``.
    """
    if not holder:
        raise EtcdError("holder: give an identifier of who takes the lock (user@host, job id)")
    if int(ttl) < 5:
        raise EtcdError("ttl: %r is too short; give at least 5 seconds" % (ttl,))
    key = lock_key(name, prefix)
    start = clock()
    while True:
        current = read_lock(client, name, prefix)
        if current and current["holder"] == holder:
            if not check_mode:
                client.keepalive(current["lease"])
            return {"changed": False, "holder": holder, "lease": current["lease"], "waited": clock() - start}
        if current is None:
            if check_mode:
                return {"changed": True, "holder": holder, "lease": None, "waited": clock() - start}
            lease = client.grant(ttl)["ID"]
            resp = client.txn({
                "compare": [{"key": b64(key), "result": "EQUAL", "target": "CREATE", "create_revision": "0"}],
                "success": [{"request_put": {"key": b64(key), "value": b64(holder), "lease": lease}}],
                "failure": [{"request_range": {"key": b64(key)}}],
            })
            if resp.get("succeeded"):
                return {"changed": True, "holder": holder, "lease": lease, "waited": clock() - start}
            client.revoke(lease)  # lost the race; do not leave a lease behind
            continue
        waited = clock() - start
        if waited >= timeout:
            raise LockHeldError("cluster lock %r is held by %r; waited %ds for it to be released (its lease expires "
                                "on its own if that run died). Try again later or release it with "
                                "mooring.cluster.cluster_lock state=released holder=%s force=true"
                                % (name, current["holder"], int(waited), current["holder"]), holder=current["holder"])
        sleep(min(poll, max(0.1, timeout - waited)))


def release_lock(client, name, holder, force=False, prefix=LOCK_PREFIX, check_mode=False):
    """Give the lock back. Held by someone else: an error unless ``force``. Returns ``{changed, holder}``."""
    key = lock_key(name, prefix)
    current = read_lock(client, name, prefix)
    if current is None:
        return {"changed": False, "holder": None}
    if current["holder"] != holder and not force:
        raise LockHeldError("cluster lock %r is held by %r, not by %r; not releasing it (force=true releases it "
                            "anyway)" % (name, current["holder"], holder), holder=current["holder"])
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


# ---------------------------------------------------------------------------------------
# Operations over a command runner: ``run(argv) -> (rc, stdout, stderr)``


def member_list(run, base, attempts=3, sleep=time.sleep):
    """The member list; a busy host may miss a dial deadline, so a failure is retried."""
    for attempt in range(attempts):
        rc, out, err = run(member_list_cmd(base))
        if rc == 0:
            break
        if attempt + 1 < attempts:
            sleep(2)
    if rc != 0:
        raise EtcdError("etcdctl member list failed (rc=%d): %s" % (rc, (err or out).strip()[:500]))
    return parse_members(out)


def check_health(run, base):
    """One look at the cluster: ``health_summary`` plus ``members`` and ``health`` entries.
    Without quorum, ``member list`` fails: that is reported as 0 healthy, not raised."""
    try:
        members = member_list(run, base, attempts=1)
    except EtcdError as exc:
        return {"total": 0, "healthy": 0, "quorum": 0, "has_quorum": False, "all_healthy": False,
                "can_lose_one": False, "unhealthy": [], "members": [], "health": [], "error": str(exc),
                "versions": {}, "revisions": {}, "healthy_members": []}
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
    healthy_urls = {e["endpoint"] for e in health if e["health"]}
    summary["healthy_members"] = [m["name"] for m in members if healthy_urls & set(m["client_urls"])]
    return summary


def wait_health(run, base, require="all", expected=None, timeout=0, interval=2.0, sleep=time.sleep,
                clock=time.monotonic):
    """Poll :func:`check_health` until ``require`` (``all`` or ``quorum``) holds (and the member count
    equals ``expected`` when given) or ``timeout`` seconds pass; then raise :class:`EtcdError`."""
    if require not in ("all", "quorum"):
        raise EtcdError("require: %r is not one of all, quorum" % (require,))
    start = clock()
    attempts = 0
    while True:
        attempts += 1
        state = check_health(run, base)
        ok = state["all_healthy"] if require == "all" else state["has_quorum"]
        if ok and expected is not None and state["total"] != int(expected):
            ok = False
        state["attempts"] = attempts
        if ok:
            return state
        if clock() - start >= timeout:
            raise EtcdError("etcd is not healthy enough (require=%s%s): %d of %d members healthy, quorum %d%s%s"
                            % (require, "" if expected is None else ", expected %s members" % expected,
                               state["healthy"], state["total"], state["quorum"],
                               "; unhealthy: " + ", ".join(state["unhealthy"]) if state["unhealthy"] else "",
                               "; " + state["error"] if state["error"] else ""))
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


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


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
    info.update({"path": path, "sha256": sha256_file(path), "size": os.path.getsize(path)})
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
