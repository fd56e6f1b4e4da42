# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: what a support bundle takes from one host (read-only, bounded, redacted there).

:func:`collect` returns ``{files, facts, redacted, errors}``: ``files`` the texts that go into the archive under
the host's directory (``journal/etcd.log``, ``units.txt``, ``versions.txt``, ``certificates.txt``,
``etcd/health.json``, ``disk.txt``, ``memory.txt``, ``kernel.txt``, ``network.json``, ``preflight.json``,
``bundles.txt``, and with ``kubeconfig`` the cluster as its API server answers there: ``cluster/...``,
:mod:`.clusterstate`), each redacted (:mod:`..common.redact`) before it leaves the host; ``facts`` the few values the
controller's index judges (certificate expiry, unit states, etcd health, disk use, bundles); ``errors`` one
line per part that could not be read (the rest is still collected), redacted too. Every command runs through ``run``
(``argv -> (rc, stdout, stderr)``, bounded by the caller); every file is read with a size bound. ``run`` gives rc 127 for a program that is not installed.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdctl import EtcdError, check_health, client_args
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts import hostio
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight import preflight, preflightgather, preflightjudge
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.support import clusterstate
from ansible_collections.mooring.cluster.plugins.module_utils.common.redact import merge_counts, redact

MIB = 1024 * 1024
MAX_FILE = MIB            # a file read whole (meminfo, an env file)
MAX_CERTS = 200           # certificates read per host
MAX_TOTAL = 16 * MIB      # everything one host sends
VERSION_COMMANDS = (
    ["etcd", "--version"], ["etcdctl", "version"], ["containerd", "--version"], ["runc", "--version"],
    ["kubelet", "--version"], ["kubeadm", "version", "-o", "short"], ["kubectl", "version", "--client"],
    ["keepalived", "--version"],
)
UNIT_PROPERTIES = "Id,LoadState,ActiveState,SubState,NRestarts,ExecMainStatus,ActiveEnterTimestamp"


def read_text(path, limit=MAX_FILE):
    """A regular file's text (hostio's bounded reader), None when it is absent; a file over ``limit`` bytes,
    a directory or a special file is a one-line note in its place."""
    try:
        return hostio.read_file(path, limit)
    except FileNotFoundError:
        return None
    except (hostio.CollectError, OSError) as exc:
        return "[not read: %s]\n" % exc


def _journal(run, unit, since_hours):
    """The unit's journal of the last ``since_hours`` (at most its newest 20000 lines), oldest line first."""
    rc, out, err = run(["journalctl", "-u", unit, "--since", "-%dh" % since_hours, "--no-pager", "-o", "short-iso",
                        "-n", "20000"])
    if rc != 0:
        raise ValueError("journalctl -u %s: rc %d: %s" % (unit, rc, err.strip()[:200]))
    return out


def tail(text, limit):
    """The newest ``limit`` bytes of ``text`` from a line start, with a note when older lines were cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    kept = data[-limit:].decode("utf-8", "ignore")
    if data[-limit - 1:-limit] != b"\n":  # the cut is inside a line: drop what is left of it
        kept = kept.split("\n", 1)[1] if "\n" in kept else ""
    return "[older lines cut: the newest %d bytes kept]\n%s" % (limit, kept)


def unit_states(run, units):
    """``{unit: {LoadState, ActiveState, SubState, NRestarts, ...}}`` from one ``systemctl show``."""
    rc, out, err = run(["systemctl", "show", "-p", UNIT_PROPERTIES, "--"] + ["%s.service" % u for u in units])
    if rc != 0:
        raise ValueError("systemctl show: rc %d: %s" % (rc, err.strip()[:200]))
    states = {}
    for block in out.strip().split("\n\n"):
        props = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        if props.get("Id"):
            states[props["Id"].rsplit(".service", 1)[0]] = props
    return states


def _not_after(text):
    m = re.search(r"notAfter=(\w{3}\s+\d+\s+\d\d:\d\d:\d\d\s+\d{4})\s*GMT", text)
    return calendar.timegm(time.strptime(re.sub(r"\s+", " ", m.group(1)), "%b %d %H:%M:%S %Y")) if m else None


def certificates(run, dirs):
    """``[{path, subject, not_after}]`` of the ``*.crt`` files under ``dirs`` (at most MAX_CERTS), by openssl."""
    found = []
    for top in dirs:
        for parent, subdirs, names in os.walk(top):
            subdirs.sort()
            found.extend(os.path.join(parent, n) for n in sorted(names) if n.endswith(".crt"))
    certs = []
    for path in found[:MAX_CERTS]:
        rc, out, err = run(["openssl", "x509", "-noout", "-subject", "-enddate", "-in", path])
        subject = next((line.split("=", 1)[1].strip() for line in out.splitlines() if line.startswith("subject")), "")
        certs.append({"path": path, "subject": subject, "not_after": _not_after(out) if rc == 0 else None,
                      "error": "" if rc == 0 else err.strip()[:200]})
    return certs


def disks(run):
    """``[{mount, fs, size, used, available, used_pct}]`` from ``df -P -B1`` (pseudo file systems left out)."""
    rc, out, err = run(["df", "-P", "-B1", "-x", "tmpfs", "-x", "devtmpfs", "-x", "squashfs"])
    if rc not in (0, 1):  # 1: some mount could not be read; the rest is there
        raise ValueError("df: rc %d: %s" % (rc, err.strip()[:200]))
    rows = []
    for line in out.splitlines()[1:]:
        f = line.split(None, 5)
        if len(f) == 6 and f[1].isdigit() and int(f[1]) > 0:
            rows.append({"fs": f[0], "size": int(f[1]), "used": int(f[2]), "available": int(f[3]),
                         "used_pct": round(100.0 * int(f[2]) / max(1, int(f[2]) + int(f[3])), 1), "mount": f[5]})
    return rows, out


def etcd_member(run, env_file, pki_dir, etcdctl):
    """The local member's view: member list, every member's health and status (etcd's own client
    certificate), or None when this host runs no mooring etcd member."""
    env = read_text(env_file)
    if env is None or not os.path.exists(etcdctl):
        return None
    urls = re.search(r"^ETCD_ADVERTISE_CLIENT_URLS=\"?([^\"\n]+)", env, re.M)
    if not urls:
        return {"error": "%s names no ETCD_ADVERTISE_CLIENT_URLS" % env_file}
    base = client_args(urls.group(1).split(",")[0], pki_dir + "/ca.crt", pki_dir + "/healthcheck-client.crt",
                       pki_dir + "/healthcheck-client.key", etcdctl=etcdctl, command_timeout=10, dial_timeout=5)
    state = check_health(run, base)
    return {"endpoint": urls.group(1).split(",")[0], "error": state.get("error", ""),
            "members": [{"name": m["name"], "id": m["id_hex"], "client_urls": m["client_urls"]} for m in state["members"]],
            "health": state["health"], "versions": state["versions"], "healthy_members": state["healthy_members"]}


def bundles(bundle_dir):
    """``[{id, unpacked}]`` of the bundles unpacked on the host, newest first."""
    out = []
    try:
        names = os.listdir(bundle_dir)
    except OSError:
        return out
    for name in names:
        manifest = os.path.join(bundle_dir, name, "bundle.json")
        if os.path.isfile(manifest):
            out.append({"id": name, "unpacked": int(os.stat(manifest).st_mtime)})
    return sorted(out, key=lambda b: -b["unpacked"])


def cluster_reader(run, kubectl, kubeconfig):
    """``read(path) -> text`` of the API server through ``kubectl get --raw`` with ``kubeconfig`` (bounded by ``run``),
    each answer judged by :func:`clusterstate.answer` (kubectl prints a failed check's text to stderr)."""
    def read(path):
        rc, out, err = run([kubectl, "--kubeconfig", kubeconfig, "--request-timeout=20s", "get", "--raw", path])
        if rc != 0:
            return clusterstate.answer(path, err, "kubectl get --raw %s: rc %d: %s" % (path, rc, err.strip()[:200]))
        return clusterstate.answer(path, out)
    return read


def _section(errors, name, produce):
    """Run one part; a failure is one line in ``errors``, the other parts still run."""
    try:
        return produce()
    except (OSError, ValueError, EtcdError) as exc:
        errors.append("%s: %s" % (name, " ".join(str(exc).split())[:300]))  # one line, for the index
        return None


def collect(run, params, now=time.time):
    """Everything one host gives a support bundle. ``params``: units, since_hours, journal_max_bytes, pki_dirs,
    etcd_env, etcd_pki_dir, etcdctl, bundle_dir, roles, kubeconfig (empty: the cluster is not read here), kubectl."""
    files, errors, facts = {}, [], {"collected_at": int(now())}
    for unit in params["units"]:
        text = _section(errors, "journal %s" % unit, lambda u=unit: _journal(run, u, params["since_hours"]))
        if text is not None:
            files["journal/%s.log" % unit] = text
    states = _section(errors, "units", lambda: unit_states(run, params["units"])) or {}
    facts["units"] = {u: {k: s.get(k, "") for k in ("LoadState", "ActiveState", "SubState", "NRestarts")} for u, s in states.items()}
    files["units.txt"] = "\n\n".join("\n".join("%s=%s" % kv for kv in sorted(s.items())) for _u, s in sorted(states.items()))
    versions = []
    for argv in VERSION_COMMANDS:
        rc, out, err = run(argv)
        if rc == 127:
            continue  # not installed here
        versions.append("$ %s\n%s" % (" ".join(argv), (out or err).strip() if rc == 0 else "rc %d: %s" % (rc, err.strip()[:300])))
    files["versions.txt"] = "\n\n".join(versions) + "\n"
    certs = _section(errors, "certificates", lambda: certificates(run, params["pki_dirs"])) or []
    facts["certificates"] = certs
    files["certificates.txt"] = "".join("%s\t%s\t%s\n" % (c["path"], time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(
        c["not_after"])) if c["not_after"] else "?", c["subject"] or c["error"]) for c in certs)
    member = _section(errors, "etcd", lambda: etcd_member(run, params["etcd_env"], params["etcd_pki_dir"], params["etcdctl"]))
    facts["etcd"] = member
    if member is not None:
        files["etcd/health.json"] = json.dumps(member, indent=2, sort_keys=True) + "\n"
    df = _section(errors, "disk", lambda: disks(run))
    facts["disks"] = df[0] if df else []
    files["disk.txt"] = df[1] if df else ""
    files["memory.txt"] = read_text("/proc/meminfo") or ""
    kernel = [("uname -a", run(["uname", "-a"])[1]), ("/proc/cmdline", read_text("/proc/cmdline") or ""),
              ("/proc/modules", read_text("/proc/modules") or "")]
    files["kernel.txt"] = "".join("== %s\n%s\n" % (title, text.strip()) for title, text in kernel)
    facts_pf = preflightgather.gather(run=run, disk_paths=[d["path"] for d in preflight.DEFAULT_DISKS])
    files["network.json"] = json.dumps(facts_pf["network"], indent=2, sort_keys=True) + "\n"  # gathered there once
    files["preflight.json"] = json.dumps(preflightjudge.judge_host(facts_pf, preflight.host_roles(params["roles"]),
                                                                   preflight.settings()), indent=2) + "\n"
    facts["bundles"] = bundles(params["bundle_dir"])
    files["bundles.txt"] = "".join("%s\tunpacked %s\n" % (b["id"], time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(
        b["unpacked"]))) for b in facts["bundles"]) or "no bundle unpacked under %s\n" % params["bundle_dir"]
    if params.get("kubeconfig"):
        cluster, findings, cluster_errors = clusterstate.read_cluster(cluster_reader(run, params["kubectl"], params["kubeconfig"]))
        facts["cluster_findings"] = [[severity, redact(text)[0]] for severity, text in findings]
        files.update(cluster)
        errors.extend("cluster %s" % line for line in cluster_errors)
    redacted = {}
    total = 0
    for name in sorted(files):
        text, counts = redact(files[name])  # the whole text first: a cut could split a key block
        merge_counts(redacted, counts)
        if name.startswith("journal/"):
            text = tail(text, params["journal_max_bytes"])
        total += len(text)
        files[name] = text if total <= MAX_TOTAL else "[left out: the host's files passed %d bytes]\n" % MAX_TOTAL
    for i, line in enumerate(errors):  # a program's own error text, shown in the index and the task's result
        errors[i], counts = redact(line)
        merge_counts(redacted, counts)
    return {"files": files, "facts": facts, "redacted": redacted, "errors": errors}
