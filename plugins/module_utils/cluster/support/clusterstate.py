# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the cluster as its API server sees it, for the support bundle.

:data:`READS` names what is read (``name -> API path``): nodes, pods of every namespace, recent events, persistent
volume claims, the kubeadm and kubelet configuration kubeadm uploads, and the API server's own ``/readyz`` and
``/livez`` (their ``etcd`` checks are etcd's health as the API server sees it). Secrets are never read.
The reader is the caller's (``read(path) -> text``: the controller's kubeconfig, or ``kubectl get --raw`` on a
control-plane host), each answer bounded by :data:`MAX_READ` there.

:func:`cluster_files` turns the answers into the archive's ``cluster/`` files: every object without its
``managedFields`` and its ``last-applied-configuration`` annotation, every container's ``env`` value replaced by
:data:`HIDDEN` (names and references kept), events the newest :data:`MAX_EVENTS`, and a summary per kind; the caller
redacts the texts. :func:`cluster_findings` judges them: a node not Ready, a container in CrashLoopBackOff (or
failing to pull or start its image), a PVC Pending, a failed ``/readyz`` check.
"""

from __future__ import annotations

import json

MIB = 1024 * 1024
MAX_READ = 8 * MIB        # one API answer
MAX_EVENTS = 300          # the newest events kept
READS = (
    ("nodes", "/api/v1/nodes"),
    ("pods", "/api/v1/pods?limit=2000"),
    ("events", "/api/v1/events?limit=2000"),
    ("pvcs", "/api/v1/persistentvolumeclaims?limit=2000"),
    ("kubeadm-config", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config"),
    ("kubelet-config", "/api/v1/namespaces/kube-system/configmaps/kubelet-config"),
    ("readyz", "/readyz?verbose"),
    ("livez", "/livez?verbose"),
)
HIDDEN = "(value not collected)"
# A container waiting for one of these reasons is a finding.
CRASH_RESTARTS = 3  # a container restarted this often whose last run failed is crash-looping, whatever its state now
BAD_WAITING = ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
               "CreateContainerError", "RunContainerError")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def answer(path, text, error=None):
    """The text a reader gives for ``path``. ``error``: None when the request succeeded, else its one-line failure
    (``text`` is then the failed answer's body). A failed ``/readyz`` or ``/livez`` is kept when it names its failed
    checks (``[-]`` lines: the API server answers 500 with them); any other failure raises ``ValueError(error)``, an
    answer over :data:`MAX_READ` bytes ``ValueError`` too."""
    if error is not None:
        if path.split("?")[0] in ("/readyz", "/livez") and "[-]" in text:
            return text
        raise ValueError(error)
    if len(text) > MAX_READ:
        raise ValueError("the answer passed %d bytes" % MAX_READ)
    return text


def read_all(read):
    """``({name: text}, [error lines])``: every path of :data:`READS` through ``read``; a path that fails is one
    error line, the others are still read."""
    answers, errors = {}, []
    for name, path in READS:
        try:
            answers[name] = read(path)
        except Exception as exc:  # pylint: disable=broad-except  # the reader's own error, named per path
            errors.append("%s: %s" % (path, " ".join(str(exc).split())[:300]))
    return answers, errors


def read_cluster(read):
    """``(files, findings, errors)``: the cluster through ``read`` (:func:`read_all`), its archive files
    (:func:`cluster_files`, not yet redacted) and their findings, judged before redaction (a redacted JSON text
    need not parse)."""
    answers, errors = read_all(read)
    files = cluster_files(answers)
    return files, cluster_findings(files), errors


def _items(text):
    try:
        doc = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    items = doc.get("items")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else [doc]


def _clean(obj):
    """``obj`` without what the bundle does not keep: managed fields, the last applied configuration, env values."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        if isinstance(meta.get("annotations"), dict):
            meta["annotations"].pop(LAST_APPLIED, None)
    spec = obj.get("spec")
    if isinstance(spec, dict):
        for key in ("containers", "initContainers", "ephemeralContainers"):
            for container in spec.get(key) or ():
                for env in (container.get("env") or ()) if isinstance(container, dict) else ():
                    if isinstance(env, dict) and "value" in env:
                        env["value"] = HIDDEN
    return obj


def _name(obj):
    meta = obj.get("metadata") or {}
    return "%s/%s" % (meta.get("namespace"), meta.get("name")) if meta.get("namespace") else str(meta.get("name"))


def _ready(node):
    for cond in (node.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return cond
    return {}


def _event_time(event):
    return str(event.get("lastTimestamp") or event.get("eventTime") or (event.get("metadata") or {}).get(
        "creationTimestamp") or "")


def _exit_code(cs):
    """The exit code of the container's current run when it ended, else of its last one (None: neither ended)."""
    for key in ("state", "lastState"):
        ended = (cs.get(key) or {}).get("terminated")
        if isinstance(ended, dict):
            return ended.get("exitCode")
    return None


def _waiting(pod):
    """``[(container, reason, restarts)]`` of the pod's failing containers: waiting for a :data:`BAD_WAITING` reason,
    or crash-looping between two waits (the kubelet shows a container in its back-off as terminated until it syncs
    the pod again: :data:`CRASH_RESTARTS` restarts and a failed last run are a CrashLoopBackOff too)."""
    out = []
    status = pod.get("status") or {}
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        reason = ((cs.get("state") or {}).get("waiting") or {}).get("reason")
        restarts = cs.get("restartCount", 0)
        if reason not in BAD_WAITING and isinstance(restarts, int) and restarts >= CRASH_RESTARTS \
                and not cs.get("ready") and _exit_code(cs) not in (None, 0):
            reason = "CrashLoopBackOff"
        if reason in BAD_WAITING:
            out.append((cs.get("name"), reason, restarts))
    return out


def _summaries(docs):
    """One text table per kind, what a helper reads first."""
    lines = {}
    lines["nodes"] = ["%s Ready=%s kubelet=%s %s" % (
        _name(n), _ready(n).get("status", "Unknown"), ((n.get("status") or {}).get("nodeInfo") or {}).get(
            "kubeletVersion"), _ready(n).get("reason") or "") for n in docs.get("nodes") or ()]
    lines["pods"] = ["%s node=%s phase=%s restarts=%s %s" % (
        _name(p), (p.get("spec") or {}).get("nodeName"), (p.get("status") or {}).get("phase"),
        sum(cs.get("restartCount", 0) for cs in (p.get("status") or {}).get("containerStatuses") or ()),
        " ".join("%s:%s" % (c, r) for c, r, _n in _waiting(p))) for p in docs.get("pods") or ()]
    lines["pvcs"] = ["%s phase=%s class=%s volume=%s" % (
        _name(c), (c.get("status") or {}).get("phase"), (c.get("spec") or {}).get("storageClassName"),
        (c.get("spec") or {}).get("volumeName")) for c in docs.get("pvcs") or ()]
    lines["events"] = ["%s %s %s %s/%s %s: %s" % (
        _event_time(e), e.get("type"), (e.get("metadata") or {}).get("namespace"),
        (e.get("involvedObject") or {}).get("kind"), (e.get("involvedObject") or {}).get("name"), e.get("reason"),
        " ".join(str(e.get("message") or "").split())[:500]) for e in docs.get("events") or ()]
    return {"cluster/%s.txt" % kind: "\n".join(rows) + "\n" for kind, rows in lines.items() if kind in docs}


def cluster_files(answers):
    """``{archive name: text}`` of the answers :func:`read_all` gave (texts not yet redacted)."""
    files, docs = {}, {}
    for name, text in answers.items():
        if name in ("readyz", "livez"):
            files["cluster/%s.txt" % name] = text
            continue
        items = _items(text)
        if items is None:
            files["cluster/%s.txt" % name] = "[not JSON: %s]\n" % " ".join(str(text).split())[:300]
            continue
        items = [_clean(i) for i in items]
        if name == "events":
            items = sorted(items, key=_event_time)[-MAX_EVENTS:]
        docs[name] = items
        files["cluster/%s.json" % name] = json.dumps(items, indent=1, sort_keys=True) + "\n"
    files.update(_summaries(docs))
    return files


def _objects(files, kind):
    """The objects of ``cluster/<kind>.json`` (:func:`cluster_files`), [] when it is absent or not a list of
    mappings (a host's file is checked here, not trusted)."""
    try:
        items = json.loads(files.get("cluster/%s.json" % kind) or "[]")
    except (TypeError, ValueError):
        return []
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def cluster_findings(files):
    """``[(severity, text)]`` of the cluster's state as :func:`cluster_files` wrote it."""
    out = []
    docs = {kind: _objects(files, kind) for kind in ("nodes", "pods", "pvcs")}
    for node in docs.get("nodes") or ():
        cond = _ready(node)
        if cond.get("status") != "True":
            out.append(("fail", "node %s NotReady (Ready=%s%s)" % (
                _name(node), cond.get("status", "Unknown"),
                ": %s" % cond.get("message") if cond.get("message") else "")))
    for pod in docs.get("pods") or ():
        for container, reason, restarts in _waiting(pod):
            out.append(("fail", "pod %s: container %s in %s (restarts %s)" % (_name(pod), container, reason, restarts)))
    for claim in docs.get("pvcs") or ():
        if (claim.get("status") or {}).get("phase") == "Pending":
            out.append(("warn", "PVC %s Pending (storage class %s)" % (
                _name(claim), (claim.get("spec") or {}).get("storageClassName"))))
    for name in ("readyz", "livez"):
        failed = [line.strip() for line in str(files.get("cluster/%s.txt" % name) or "").splitlines()
                  if line.startswith("[-]")]
        if failed:
            out.append(("fail", "/%s: %s" % (name, "; ".join(failed)[:600])))
    return out
