# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: etcdctl/etcdutl command lines and their structured output.

Builders of exact ``etcdctl``/``etcdutl`` argument lists (never a shell string), always with mutual
TLS and ``-w json`` where the output is read; parsers of that JSON output, the quorum arithmetic the
health gates rest on, and :class:`EtcdError` (an etcd command failed or its output could not be read).
Nothing here knows AnsibleModule.
"""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


class EtcdError(MooringError):
    """An etcd command failed, its output could not be read, or the cluster is not healthy."""


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


def _bracket(address):
    return "[%s]" % address if ":" in address and not address.startswith("[") else address


def parse_json(text, what):
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        raise EtcdError("%s: etcdctl did not print JSON: %r" % (what, (text or "")[:300])) from None


def parse_health(stdout):
    """``endpoint health -w json`` -> ``[{endpoint, health, error}]``."""
    data = parse_json(stdout, "endpoint health")
    if isinstance(data, dict):
        data = [data]
    out = []
    for e in data:
        out.append({"endpoint": e.get("endpoint"), "health": bool(e.get("health")), "error": e.get("error") or ""})
    return sorted(out, key=lambda e: e["endpoint"] or "")


def parse_members(stdout):
    """``member list -w json`` -> ``[{id, id_hex, name, peer_urls, client_urls, started, learner}]``."""
    data = parse_json(stdout, "member list")
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
    data = parse_json(stdout, "endpoint status")
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
