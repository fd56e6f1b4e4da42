# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: the whole cluster PKI made by mooring.cluster's PKI backend vs the same
certificates made by per-certificate ``openssl`` commands (what shell-script PKI does).

For N nodes: 3 control-plane hosts, 3 etcd members, N kubelets (every node), so the same
certificate list (subjects, SANs, key usages, issuers, ECDSA P-256) is made both ways.
Prints figures; never pass/fail. Usage: benchmarks/pki_bench.py [N ...] (default: 3 100).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki import pki, pkispec


def request(n):
    nodes = ["node%03d" % i for i in range(n)]
    ip = ["10.1.%d.%d" % (i // 250, i % 250 + 1) for i in range(n)]
    hosts = [{"name": nodes[i], "addresses": [ip[i]]} for i in range(min(3, n))]
    return {"control_plane_endpoint": "10.1.255.1:6443", "control_plane": hosts, "etcd": hosts, "kubelets": nodes}


def openssl_pki(path, req):
    """The same certificates, one openssl process per step, as a shell-script PKI would."""
    specs = pkispec.plan_specs(pkispec.normalize(req))
    for cs in specs:
        base = os.path.join(path, cs.name)
        os.makedirs(os.path.dirname(base), exist_ok=True)
        subj = "".join("/O=%s" % o for o in cs.orgs) + "/CN=%s" % cs.cn
        subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", base + ".key"],
                       check=True)
        if cs.is_ca:
            subprocess.run(["openssl", "req", "-x509", "-new", "-key", base + ".key", "-subj", subj, "-days", "3650",
                            "-addext", "basicConstraints=critical,CA:TRUE",
                            "-addext", "keyUsage=critical,digitalSignature,keyCertSign", "-out", base + ".crt"],
                           check=True)
            continue
        ext = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature",
               "extendedKeyUsage=" + ",".join({"server": "serverAuth", "client": "clientAuth"}[u] for u in cs.usages)]
        sans = ["DNS:%s" % d for d in cs.dns] + ["IP:%s" % i for i in cs.ips]
        if sans:
            ext.append("subjectAltName=" + ",".join(sans))
        with open(base + ".ext", "w") as f:
            f.write("\n".join(ext) + "\n")
        subprocess.run(["openssl", "req", "-new", "-key", base + ".key", "-subj", subj, "-out", base + ".csr"],
                       check=True)
        ca = os.path.join(path, cs.ca)
        subprocess.run(["openssl", "x509", "-req", "-in", base + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
                        "-CAcreateserial", "-days", "365", "-extfile", base + ".ext", "-out", base + ".crt"],
                       check=True, capture_output=True)
    subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout",
                    "-out", os.path.join(path, "sa.key")], check=True)
    subprocess.run(["openssl", "ec", "-in", os.path.join(path, "sa.key"), "-pubout",
                    "-out", os.path.join(path, "sa.pub")], check=True, capture_output=True)
    return len(specs)


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def main(argv):
    sizes = [int(a) for a in argv] or [3, 100]
    if not shutil.which("openssl"):
        sys.exit("pki_bench: needs the openssl binary for the comparison")
    mooring = os.path.join(os.path.dirname(sys.executable), "mooring")
    for n in sizes:
        req = request(n)
        with tempfile.TemporaryDirectory() as tmp:
            t_ours, res = timed(pki.ensure_pki, os.path.join(tmp, "ours"), req)
            t_again, again = timed(pki.ensure_pki, os.path.join(tmp, "ours"), req)
            assert not again["changed"]
            t_cli = None
            if os.path.exists(mooring):
                with open(os.path.join(tmp, "req.yml"), "w") as f:
                    yaml.safe_dump(req, f)
                t_cli = timed(subprocess.run, [mooring, "pki", "generate", "--dir", os.path.join(tmp, "cli"),
                                               "--config", os.path.join(tmp, "req.yml")],
                              check=True, capture_output=True)[0]
            t_ssl, certs = timed(openssl_pki, os.path.join(tmp, "openssl"), req)
        files = len(res["created"])
        print("nodes=%d certificates=%d (+sa pair)" % (n, certs))
        print("  mooring backend (in process) : %8.3f s   idempotent re-run: %.3f s" % (t_ours, t_again))
        if t_cli is not None:
            print("  mooring pki generate (CLI)   : %8.3f s   (includes Python start-up)" % t_cli)
        print("  openssl per certificate      : %8.3f s" % t_ssl)
        print("  speed-up: %.0fx in process%s" % (
            t_ssl / t_ours, (", %.0fx via the CLI" % (t_ssl / t_cli)) if t_cli else ""))
        assert files == certs + 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
