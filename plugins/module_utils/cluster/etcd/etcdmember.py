# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: etcd member add/remove decisions.

:func:`ensure_member` adds or removes a member (and returns the ``initial-cluster`` a joining member
starts with); :func:`find_member` and :func:`join_initial_cluster` are the decisions it rests on.
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdctl import (
    EtcdError,
    initial_cluster,
    member_add_cmd,
    member_list,
    member_remove_cmd,
)


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
