# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the etcd HTTP client.

:class:`GatewayClient` speaks etcd's v3 gRPC-JSON gateway over mutual TLS (standard library only);
:func:`process_starts` reads each member's process start time from its ``/metrics``.
"""

from __future__ import annotations

import base64
import json
import ssl
from urllib.parse import urlsplit

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdctl import EtcdError
from ansible_collections.mooring.cluster.plugins.module_utils.common import netguard


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
