# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API server as a client sees it during a run (lab-only test code): a bounded probe through the HA endpoint.

Every 0.5 s one sample: ``GET /readyz`` and a list of one namespace (``GET /api/v1/namespaces/NS/pods?limit=1``),
both through the kubeconfig's server (the cluster's controlPlaneEndpoint: the keepalived VIP in the lab), with
the kubeconfig's client certificate, each request bounded by a 2 s timeout. A sample answers when both return
200. What it reports, as etcdroll's quorum sampler does for etcd:

    samples    how many were taken in the window
    failed     how many did not answer
    gap        the longest window without an answer, in seconds: from the last answered sample before a run
               of failures to the first answered one after it (0.0 when every sample answered)
    first_failure  the first failed sample's reasons (status or error per request)

With ``nodes=True`` each sample also lists the nodes (``GET /api/v1/nodes``, not counted in the answer) and keeps
each node's schedulability and kubelet version: :meth:`ApiSampler.turns` then gives each node's turn in a roll
(from the first sample that shows it cordoned to the first after that shows it schedulable at the target version).

Used by molecule/noderoll/roll.py (import) and on its own around any command:

    apisampler.py --kubeconfig admin.conf [--namespace kube-system] [--turns VERSION] -- COMMAND...

runs COMMAND, samples while it runs, prints the window as one JSON line (with ``--turns``: each node's turn
to VERSION too) and exits with COMMAND's code.
The server's address must route through a lab bridge (the route guard, tests/lab/lab.py): nothing is sent
otherwise. The kubeconfig's key is written to a private temporary file (0600) for the TLS context and removed.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import urlsplit

import yaml

INTERVAL = 0.5
TIMEOUT = 2.0
MAX_SAMPLES = 100000  # about 14 hours at 0.5 s: the list stays bounded however long a run takes
MAX_KUBECONFIG = 1 << 20
MAX_BODY = 4 << 20


def _netguard():
    root = os.environ.get("MOLECULE_PROJECT_DIRECTORY") or os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    sys.path.insert(0, os.path.join(root, ".work", "collections"))
    from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard

    return netguard


def tls_context(kubeconfig):
    """(server URL, ssl context) from a kubeconfig with inline certificate data (as mooring writes admin.conf)."""
    with open(kubeconfig, "rb") as f:
        raw = f.read(MAX_KUBECONFIG + 1)
    if len(raw) > MAX_KUBECONFIG:
        raise ValueError("%s: larger than %d bytes" % (kubeconfig, MAX_KUBECONFIG))
    doc = yaml.safe_load(raw)
    cluster = doc["clusters"][0]["cluster"]
    user = doc["users"][0]["user"]
    ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = os.path.join(tmp, "client.crt"), os.path.join(tmp, "client.key")
        for path, field in ((cert, "client-certificate-data"), (key, "client-key-data")):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(base64.b64decode(user[field]))
        ctx.load_cert_chain(cert, key)
    return cluster["server"], ctx


class ApiSampler(threading.Thread):
    """Samples the API server every 0.5 s until stopped; :meth:`window` reports a time range of it."""

    def __init__(self, kubeconfig, namespace="kube-system", nodes=False):
        super().__init__(daemon=True)
        self.nodes = nodes
        self.server, self.context = tls_context(kubeconfig)
        parts = urlsplit(self.server)
        self.host, self.port = parts.hostname, parts.port or 443
        _netguard().check(self.host)  # refuse before the first request if not routed through a lab bridge
        self.paths = ("/readyz", "/api/v1/namespaces/%s/pods?limit=1" % namespace)
        # (monotonic time the sample began, None when answered or [reason per failed request],
        #  {node: (unschedulable, kubelet version)} or None)
        self.samples = []
        self.stop = threading.Event()

    def get(self, path):
        """(None, body) when the server answered 200, else (reason, None)."""
        conn = http.client.HTTPSConnection(self.host, self.port, timeout=TIMEOUT, context=self.context)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read(MAX_BODY)
            return (None, body) if resp.status == 200 else ("%s: HTTP %d" % (path.split("?")[0], resp.status), None)
        except (OSError, http.client.HTTPException) as exc:
            return "%s: %s" % (path.split("?")[0], exc.__class__.__name__), None
        finally:
            conn.close()

    def node_states(self):
        _reason, body = self.get("/api/v1/nodes")
        try:
            items = json.loads(body)["items"] if body else None
        except (ValueError, KeyError, TypeError):
            items = None
        if items is None:
            return None
        return {i["metadata"]["name"]: (bool(i.get("spec", {}).get("unschedulable")),
                                        i.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", ""))
                for i in items}

    def run(self):
        while not self.stop.is_set() and len(self.samples) < MAX_SAMPLES:
            began = time.monotonic()
            reasons = [r for r in (self.get(p)[0] for p in self.paths) if r]
            self.samples.append((began, reasons or None, self.node_states() if self.nodes else None))
            self.stop.wait(max(0.0, INTERVAL - (time.monotonic() - began)))

    def answering(self):
        return bool(self.samples) and self.samples[-1][1] is None

    def window(self, since, until=None):
        rows = [s[:2] for s in self.samples if s[0] >= since and (until is None or s[0] <= until)]
        failed = [s for s in rows if s[1]]
        gap, last_ok, down_since = 0.0, None, None
        for t, reasons in rows:
            if reasons and down_since is None:
                down_since = last_ok if last_ok is not None else t
            elif not reasons:
                if down_since is not None:
                    gap = max(gap, t - down_since)
                    down_since = None
                last_ok = t
        if down_since is not None and rows:  # still down at the end of the window
            gap = max(gap, rows[-1][0] - down_since)
        return {"samples": len(rows), "failed": len(failed), "gap": round(gap, 2),
                "first_failure": failed[0][1] if failed else None}

    def turns(self, since, version, until=None):
        """{node: {"start", "end", "seconds", "window"}} for each node cordoned in the range and schedulable again
        at ``version`` after it (times relative to ``since``; ``window``: the API as sampled during the turn)."""
        rows = [s for s in self.samples if s[0] >= since and (until is None or s[0] <= until) and s[2]]
        out = {}
        for node in sorted({n for s in rows for n in s[2]}):
            start = next((t for t, _r, nodes in rows if node in nodes and nodes[node][0]), None)
            if start is None:
                continue
            end = next((t for t, _r, nodes in rows if t > start and node in nodes and not nodes[node][0]
                        and nodes[node][1] == "v" + version), None)
            out[node] = {"start": round(start - since, 1), "end": round(end - since, 1) if end else None,
                         "seconds": round(end - start, 1) if end else None,
                         "window": self.window(start, end) if end else None}
        return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--namespace", default="kube-system")
    p.add_argument("--turns", metavar="VERSION", help="also each node's turn in a roll to this Kubernetes version")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("a command to run is needed (after --)")
    sampler = ApiSampler(args.kubeconfig, args.namespace, nodes=bool(args.turns))
    since = time.monotonic()
    sampler.start()
    rc = subprocess.call(command)
    sampler.stop.set()
    sampler.join()
    out = dict(sampler.window(since), seconds=round(time.monotonic() - since, 1), rc=rc)
    if args.turns:
        out["turns"] = sampler.turns(since, args.turns.lstrip("v"))
    print(json.dumps(out), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
