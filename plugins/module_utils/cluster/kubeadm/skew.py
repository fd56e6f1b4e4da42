# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: version-skew rules of a rolling upgrade, checked on the controller
before anything changes on a host.

:func:`violations` takes plain data (the target versions of the new lock, what every host runs now,
the host order of the roll) and returns one line per broken rule, naming the hosts and versions:

* Kubernetes moves one minor at a time and never backwards (per host: the API server on a control
  plane, the kubelet everywhere);
* the control plane goes before the kubelets: no worker is planned before every control-plane host;
* a kubelet is never newer than the oldest API server, and at most three minors older (the
  Kubernetes version-skew policy); checked for the state before the roll and for every step of it;
* the target etcd is one the target Kubernetes supports: the catalog's range when the etcd entry
  has one (``kubernetes: '>=1.31.0,<1.37.0'``, the shape the CNI entries use), otherwise
  :data:`KUBEADM_ETCD_SERIES`;
* each etcd member goes to the target etcd in one step etcd allows (:func:`etcd_path`): one minor at a time,
  never a minor back, into 3.6 only from 3.5.20 or later.
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.kubeadm.kubeadm import KubeadmError, parse_version

# The etcd release series kubeadm deploys for each Kubernetes minor (SupportedEtcdVersion in
# kubernetes/cmd/kubeadm/app/constants/constants.go: 3.4.x for 1.19-1.21, 3.5.x for 1.22-1.33,
# 3.6.x from 1.34). Only the series is recorded here, not kubeadm's exact patch.
KUBEADM_ETCD_SERIES = (
    ((1, 19), (1, 21), (3, 4)),
    ((1, 22), (1, 33), (3, 5)),
    ((1, 34), (1, 99), (3, 6)),
)
# etcd's own upgrade path: the oldest release of the minor before from which a member may move into a minor
# (etcd's v3.6 upgrade guide: members at 3.5.19 or older may not have a promoted learner in the v3 store that
# 3.6 reads its membership from; they are upgraded to 3.5.20 or later first).
ETCD_UPGRADE_FROM = {(3, 6): (3, 5, 20)}
# A kubelet may be up to this many minors older than the API server (Kubernetes version-skew policy).
KUBELET_MAX_MINORS_BEHIND = 3


def _fmt(v):
    return "%d.%d.%d" % v


def kubeadm_etcd_series(kubernetes):
    """The etcd series ``(3, 5)`` kubeadm deploys for a Kubernetes version, or None outside the table."""
    minor = parse_version(kubernetes)[:2]
    for low, high, series in KUBEADM_ETCD_SERIES:
        if low <= minor <= high:
            return series
    return None


def etcd_supported(kubernetes, etcd, catalog_range=None):
    """``(ok, why)``: does the target Kubernetes support this etcd?

    With ``catalog_range`` (the catalog's ``kubernetes`` range of that etcd version) the range decides.
    Otherwise the etcd series must be one kubeadm supports for the Kubernetes minor: the one it deploys for
    that minor or for either of the two before it (kubeadm's SupportedEtcdVersion covers that skew; its
    external-etcd preflight then checks the patch)."""
    k = parse_version(kubernetes)
    e = parse_version(etcd, "etcd version")
    if catalog_range:
        from ansible_collections.mooring.cluster.plugins.module_utils.lock.catalog import in_range
        ok = in_range(_fmt(k), catalog_range)
        return ok, "the catalog's etcd %s supports Kubernetes %s" % (_fmt(e), catalog_range)
    series = {s for s in (kubeadm_etcd_series("%d.%d.0" % (k[0], max(k[1] - back, 0))) for back in (0, 1, 2)) if s}
    if not series:
        return False, "no kubeadm etcd series is recorded for Kubernetes %d.%d" % k[:2]
    names = " or ".join("%d.%d.x" % s for s in sorted(series))
    return e[:2] in series, "kubeadm %d.%d runs etcd %s" % (k[0], k[1], names)


def _step(host, what, cur, tgt):
    if tgt < cur:
        return "%s: %s %s -> %s is a downgrade; downgrades are not supported" % (host, what, _fmt(cur), _fmt(tgt))
    if tgt[0] != cur[0] or tgt[1] - cur[1] > 1:
        steps = " -> ".join("%d.%d.x" % (cur[0], m) for m in range(cur[1] + 1, tgt[1] + 1))
        return ("%s: %s %s -> %s skips a minor; upgrade one minor at a time (%s), a lock and bundle per step"
                % (host, what, _fmt(cur), _fmt(tgt), steps))
    return None


def node_versions(nodes, control_plane):
    """``{host: {"apiserver", "kubelet"}}`` from the nodes as the API reports them (``{host: {"version": "v1.33.9"}}``,
    mooring.cluster.k8s_health's ``nodes``): the version is the kubelet's; on a control plane kubeadm upgrades the
    API server with it, so it is taken as the API server's too. Entries that already have ``apiserver`` or
    ``kubelet`` are kept as given."""
    out = {}
    for host, node in (nodes or {}).items():
        node = dict(node or {})
        if "apiserver" in node or "kubelet" in node:
            out[host] = {"apiserver": node.get("apiserver"), "kubelet": node.get("kubelet")}
            continue
        version = node.get("version")
        out[host] = {"apiserver": version if host in (control_plane or []) else None, "kubelet": version}
    return out


def violations(target, nodes, control_plane, workers=(), order=None, etcd=None, etcd_range=None):
    """One line per broken skew rule (empty: the roll may start).

    ``target``: the lock's Kubernetes version. ``nodes``: host -> ``{"apiserver": version or None,
    "kubelet": version or None}`` as the hosts run now (None: not running/unknown, e.g. before
    ``kubeadm init``). ``order``: the roll's host order (a list of hosts or of batches
    ``{"hosts": [...]}``); default control plane then workers. ``etcd``: the lock's etcd version;
    ``etcd_range``: the catalog's Kubernetes range for it, if it has one."""
    problems = []
    tgt = parse_version(target, "target Kubernetes version")
    control_plane = list(control_plane or [])
    workers = [h for h in (workers or []) if h not in control_plane]
    parsed = _parse_nodes(nodes or {}, problems)
    _minor_steps(parsed, tgt, control_plane + workers, problems)
    flat = _flat_order(control_plane + workers if order is None else order)
    _control_plane_first(flat, control_plane, problems)
    _kubelet_skew(parsed, tgt, flat, control_plane, workers, problems)
    if etcd:
        _etcd_support(tgt, etcd, etcd_range, problems)
    return problems


def _parse_nodes(nodes, problems):
    """host -> ``{component: version tuple}`` of what runs; a version a host reports that is not one goes to ``problems``."""
    parsed = {}
    for host, v in sorted(nodes.items()):
        parsed[host] = {}
        for what in ("apiserver", "kubelet"):
            if (v or {}).get(what):
                try:
                    parsed[host][what] = parse_version(v[what], "%s %s version" % (host, what))
                except KubeadmError as exc:  # a version the host reports that is not one
                    problems.append(str(exc))
    return parsed


def _minor_steps(parsed, tgt, hosts, problems):
    """Rule 1: one minor at a time, no downgrade (per component that runs)."""
    for host in hosts:
        for what in ("apiserver", "kubelet"):
            cur = parsed.get(host, {}).get(what)
            if cur is not None:
                line = _step(host, "kube-%s" % what if what == "apiserver" else what, cur, tgt)
                if line:
                    problems.append(line)


def _flat_order(order):
    """The roll's hosts in order, batches (``{"hosts": [...]}``) flattened."""
    flat = []
    for item in order:
        flat.extend(item.get("hosts", []) if isinstance(item, dict) else [item])
    return flat


def _control_plane_first(flat, control_plane, problems):
    """Rule 2: the control plane before the kubelets."""
    seen_worker = None
    for host in flat:
        if host in control_plane and seen_worker:
            problems.append("order: worker %s is planned before control plane %s; every control plane goes first"
                            % (seen_worker, host))
            break
        if host not in control_plane and seen_worker is None:
            seen_worker = host


def _roll_states(apis, kubelets, flat, tgt):
    """``[(when, API server versions, kubelet versions)]``: now, then after each host of the roll."""
    states = [("now", dict(apis), dict(kubelets))]
    a, k = dict(apis), dict(kubelets)
    for host in flat:
        if host in a and a[host] is not None:
            a[host] = max(a[host], tgt)
        if k.get(host) is not None:
            k[host] = max(k[host], tgt)
        states.append(("after %s" % host, dict(a), dict(k)))
    return states


def _kubelet_skew(parsed, tgt, flat, control_plane, workers, problems):
    """Rule 3: a kubelet never newer than the oldest API server, at most three minors older: now and after each step."""
    apis = {h: parsed.get(h, {}).get("apiserver") for h in control_plane}
    kubelets = {h: parsed.get(h, {}).get("kubelet") for h in control_plane + workers}
    if not any(apis.values()):
        return
    states = _roll_states(apis, kubelets, flat, tgt)
    reported = set()
    for i, (when, a, k) in enumerate(states):
        running = [v for v in a.values() if v is not None]
        if not running:
            continue
        oldest = min(running)
        for host, kv in sorted(k.items()):
            # A control plane's kubelet moves with its API server (kubeadm upgrade node), one host at a
            # time: it is checked before and after the roll, not while the control planes roll.
            if kv is None or (host in control_plane and 0 < i < len(states) - 1):
                continue
            key = line = None
            if kv[:2] > oldest[:2]:
                key = (host, "newer")
                line = ("%s: kubelet %s would be newer than the oldest API server %s (%s); the control plane "
                        "is upgraded first" % (host, _fmt(kv), _fmt(oldest), when))
            elif kv[0] != oldest[0] or oldest[1] - kv[1] > KUBELET_MAX_MINORS_BEHIND:
                key = (host, "older")
                line = ("%s: kubelet %s would be more than %d minors older than the API server %s (%s); upgrade "
                        "it first" % (host, _fmt(kv), KUBELET_MAX_MINORS_BEHIND, _fmt(oldest), when))
            if key and key not in reported:
                reported.add(key)
                problems.append(line)


def _etcd_support(tgt, etcd, etcd_range, problems):
    """Rule 4: the target etcd is supported by the target Kubernetes."""
    try:
        ok, why = etcd_supported(_fmt(tgt), etcd, etcd_range)
    except KubeadmError as exc:
        problems.append(str(exc))
    else:
        if not ok:
            problems.append("etcd %s is not supported by Kubernetes %s (%s); choose a supported etcd in the spec"
                            % (etcd, _fmt(tgt), why))


def etcd_path(current, target):
    """One line per etcd member that may not go from the version it runs to ``target`` in one step (empty: the
    upgrade may start). ``current``: member -> the version it runs ('' or None: not answering, not judged)."""
    problems = []
    tgt = parse_version(target, "target etcd version")
    for member, running in sorted((current or {}).items()):
        if not running:
            continue
        try:
            cur = parse_version(running, "%s etcd version" % member)
        except KubeadmError as exc:
            problems.append(str(exc))
            continue
        if tgt[:2] < cur[:2]:
            problems.append("%s: etcd %s -> %s goes back a minor; etcd is not downgraded by a release swap"
                            % (member, _fmt(cur), _fmt(tgt)))
        elif tgt[0] != cur[0] or tgt[1] - cur[1] > 1:
            problems.append("%s: etcd %s -> %s skips a minor; upgrade one minor at a time (%d.%d.x first)"
                            % (member, _fmt(cur), _fmt(tgt), cur[0], cur[1] + 1))
        elif tgt[:2] != cur[:2] and cur < ETCD_UPGRADE_FROM.get(tgt[:2], cur):
            low = ETCD_UPGRADE_FROM[tgt[:2]]
            problems.append("%s: etcd %s -> %s: etcd %d.%d is reached only from %s or later; upgrade to the newest "
                            "%d.%d release first" % (member, _fmt(cur), _fmt(tgt), tgt[0], tgt[1], _fmt(low), cur[0], cur[1]))
    return problems
