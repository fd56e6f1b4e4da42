# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: kubeadm lifecycle decisions, made on the controller.

:func:`plan_cluster` decides, from the real state gathered on every host (files and the API's
``/readyz`` answer, never human text), which host runs ``kubeadm init``, which join, which are
already members, and refuses when the state is contradictory; :func:`plan_commands` gives each
host's exact command lines. :func:`upgrade_step` / :func:`upgrade_batches` decide the
one-minor-at-a-time upgrade and its host order.
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.kubeadm import (
    CONFIG_DIR,
    KubeadmError,
    delete_node_argv,
    drain_argv,
    init_argv,
    join_argv,
    parse_version,
    reset_argv,
    uncordon_argv,
    upgrade_node_argv,
)


def plan_cluster(states, control_plane, workers, only=None):
    """Who runs ``kubeadm init``, who joins, who is already a member — from real state.

    ``states`` maps host -> ``{binaries: bool, admin_conf: bool, kubelet_conf: bool, member: bool,
    api_ready: bool|None}`` (gathered by ``kubeadm_state``). A host whose init or join started but never
    finished (kubelet.conf without mooring's member record, e.g. a port held during the join) runs it again:
    ``resume`` is true in its entry and its command skips kubeadm's preflight checks, which its own leftovers
    (manifests, kubeconfigs, the kubelet's port) would fail. A host that starts a fresh init or join over what an
    earlier pod network left (``pod_network_traces`` of its state: kubeadm reset leaves them) has them listed in its
    entry's ``pod_network_traces``, to be removed first. ``only`` limits the changes to
    these hosts (the ``join`` playbook: others are never touched). Returns
    ``{"cluster_exists", "init_host", "token_host", "hosts": {host: {"action", "reason", "resume",
    "pod_network_traces"}}}`` (``token_host``:
    where the join token is made - the init host or the first control plane that answers) with actions
    ``init``, ``join_control_plane``, ``join_worker``, ``member``, ``blocked`` or ``untouched``.

    With ``only``, hosts outside it may have no state (the join playbook contacts only the new hosts
    and the first control plane): they are ``untouched``, ``not contacted``, and such a partial view
    never creates a cluster (a join host is ``blocked`` when no contacted control plane answers)."""
    control_plane, workers = _check_hosts(states, control_plane, workers, only)
    partial = [h for h in control_plane + workers if h not in states]
    seen_cp = [h for h in control_plane if h in states]
    ready_cp = [h for h in seen_cp if _member(states[h]) and states[h].get("admin_conf") and states[h].get("api_ready")]
    stale = [h for h in seen_cp if _member(states[h]) and states[h].get("admin_conf") and not states[h].get("api_ready")]
    cluster_exists = bool(ready_cp)
    if not cluster_exists and stale:
        raise KubeadmError("the cluster state is contradictory", [
            "%s: /etc/kubernetes/admin.conf exists but the API server does not answer /readyz; refusing to run "
            "kubeadm init over it. Start the control plane again, or run mooring.cluster.reset on it first" % h
            for h in stale])
    plan = {"cluster_exists": cluster_exists, "init_host": None, "token_host": ready_cp[0] if ready_cp else None,
            "hosts": {}}
    for host in control_plane + workers:
        action, reason = _host_action(plan, host, states, host in control_plane, only, partial, seen_cp)
        starts = action in ("init", "join_control_plane", "join_worker")
        resume = starts and bool(states[host].get("kubelet_conf"))
        # An earlier cluster's pod network (kubeadm reset leaves it): removed before a fresh init or join. Never on
        # a resumed one, whose kubelet may already run this cluster's pods.
        traces = list(states[host].get("pod_network_traces") or []) if starts and not resume else []
        if resume:
            reason += "; again: its last kubeadm %s did not finish" % action.split("_", maxsplit=1)[0]
        if traces:
            reason += "; first removes what an earlier pod network left: %s" % ", ".join(traces)
        plan["hosts"][host] = {"action": action, "reason": reason, "resume": resume, "pod_network_traces": traces}
    if not cluster_exists and plan["init_host"] is None:
        joining = [h for h, p in plan["hosts"].items() if p["action"].startswith("join")]
        if joining:
            raise KubeadmError("no cluster exists and no control-plane host can create it; %s cannot join"
                               % ", ".join(joining))
    return plan


def _member(state):
    """A host whose kubeadm init or join finished (states gathered before the member record existed count
    kubelet.conf alone)."""
    return bool(state.get("kubelet_conf")) and state.get("member", True) is not False


def _check_hosts(states, control_plane, workers, only):
    """``(control_plane, workers)`` as lists (a host in both is a control plane), after checking the
    inventory names a control plane, ``only`` names inventory hosts and every host of the run has a state."""
    control_plane = list(control_plane or [])
    workers = [h for h in (workers or []) if h not in control_plane]
    if not control_plane:
        raise KubeadmError("inventory: the group 'control_plane' is empty; at least one host is needed")
    if only is not None:
        strangers = [h for h in only if h not in control_plane + workers]
        if strangers:
            raise KubeadmError("join_hosts: %s not in the inventory groups 'control_plane' or 'workers'"
                               % ", ".join(strangers))
    missing = [h for h in control_plane + workers if h not in states and (only is None or h in only)]
    if missing:
        raise KubeadmError("state: no state gathered for %s (unreachable?)" % ", ".join(missing))
    return control_plane, workers


def _host_action(plan, host, states, cp, only, partial, seen_cp):
    """``(action, reason)`` of one host (``cp``: a control-plane host); sets the plan's ``init_host`` (and
    ``token_host``) when it is the one that creates the cluster. ``partial``: the hosts without state;
    ``seen_cp``: the control planes with one."""
    if host not in states:
        return "untouched", "not contacted: not in this run's hosts, listed from the inventory without reading its state"
    s = states[host]
    cluster_exists = plan["cluster_exists"]
    if _member(s):
        return "member", "already joined (/etc/kubernetes/kubelet.conf and mooring's member record present)"
    if only is not None and host not in only:
        return "untouched", "not in this run's hosts"
    if not s.get("binaries"):
        return "blocked", "kubeadm/kubelet binaries are not installed (bundle without Kubernetes?)"
    if partial and not cluster_exists:
        return "blocked", "no contacted control plane (%s) answers: a join needs a running cluster" % ", ".join(seen_cp)
    if cp and not cluster_exists and plan["init_host"] is None:
        plan["init_host"] = plan["token_host"] = host
        return "init", "no control plane answers: this host creates the cluster"
    if cp:
        return "join_control_plane", "joins the existing control plane"
    return "join_worker", "joins as a worker"


def plan_commands(plan, bin_dir="/usr/local/bin", config_dir=CONFIG_DIR, drain_timeout=300, upgrade_ignore=()):
    """The exact command lines each host's steps run: ``{host: {drain, uncordon, delete, reset,
    upgrade, kubeadm (init or join, only when planned)}}``; ``upgrade_ignore``: kubeadm preflight checks the
    upgrade commands ignore."""
    kadm = bin_dir + "/kubeadm"
    kctl = bin_dir + "/kubectl"
    out = {}
    for host, entry in plan["hosts"].items():
        cmds = {
            "drain": drain_argv(host, drain_timeout, kubectl=kctl),
            "uncordon": uncordon_argv(host, kubectl=kctl),
            "delete": delete_node_argv(host, kubectl=kctl),
            "reset": reset_argv(kubeadm=kadm),
            "upgrade": upgrade_node_argv(kubeadm=kadm, ignore_preflight_errors=upgrade_ignore),
        }
        resume = ["--ignore-preflight-errors=all"] if entry.get("resume") else []
        if entry["action"] == "init":
            cmds["kubeadm"] = init_argv(config_dir + "/kubeadm-init.yaml", kubeadm=kadm) + resume
        elif entry["action"].startswith("join"):
            cmds["kubeadm"] = join_argv(config_dir + "/kubeadm-join.yaml", kubeadm=kadm) + resume
        out[host] = cmds
    return out


def plan_lines(plan):
    """Human summary of :func:`plan_cluster`: one line per host (the check-mode plan)."""
    return ["%s: %s (%s)" % (h, p["action"], p["reason"]) for h, p in plan["hosts"].items()]


def upgrade_step(current, target):
    """Decide one upgrade: ``{"action": "upgrade"|"none", "from", "to"}``; refuses downgrades and
    jumps of more than one minor (kubeadm supports one minor at a time), naming the steps."""
    cur = parse_version(current, "current version")
    tgt = parse_version(target, "target version")
    fmt = "%d.%d.%d"
    if tgt == cur:
        return {"action": "none", "from": fmt % cur, "to": fmt % tgt}
    if tgt < cur:
        raise KubeadmError("upgrade: target %s is older than the running %s; downgrades are not supported"
                           % (fmt % tgt, fmt % cur))
    if tgt[0] != cur[0] or tgt[1] - cur[1] > 1:
        steps = ["1.%d.x" % m for m in range(cur[1] + 1, tgt[1] + 1)]
        raise KubeadmError("upgrade: %s -> %s skips a minor; upgrade one minor at a time: %s (a lock and bundle "
                           "per step)" % (fmt % cur, fmt % tgt, " -> ".join(steps)))
    return {"action": "upgrade", "from": fmt % cur, "to": fmt % tgt}


def hosts_behind(node_versions, target, hosts):
    """The hosts of an upgrade's order whose node is not at ``target`` yet, as the API reports their kubelets
    (``{host: {"version": "v1.35.5"}}``; a host the API does not list is behind): their turn runs kubeadm upgrade.
    A host already at the target (a resumed roll) is not drained or restarted again."""
    want = "%d.%d.%d" % parse_version(target, "target version")
    out = []
    for host in hosts:
        have = str(((node_versions or {}).get(host) or {}).get("version") or "").lstrip("v")
        if have != want:
            out.append(host)
    return out


def upgrade_batches(control_plane, workers, batch_size=1):
    """Host order of an upgrade: first control plane (``apply``), the other control-plane hosts
    one at a time (``node``), then workers in batches of ``batch_size`` (``node``)."""
    if int(batch_size) < 1:
        raise KubeadmError("upgrade batch size: %r must be at least 1" % batch_size)
    control_plane = list(control_plane or [])
    if not control_plane:
        raise KubeadmError("inventory: the group 'control_plane' is empty")
    workers = [h for h in (workers or []) if h not in control_plane]
    batches = [{"hosts": [control_plane[0]], "command": "apply"}]
    batches += [{"hosts": [h], "command": "node"} for h in control_plane[1:]]
    for i in range(0, len(workers), int(batch_size)):
        batches.append({"hosts": workers[i:i + int(batch_size)], "command": "node"})
    return batches
