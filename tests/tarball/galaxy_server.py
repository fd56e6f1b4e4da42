"""A Galaxy server on 127.0.0.1 that serves one collection tarball, for tests/tarball/signed.sh.

It answers the part of the Galaxy v3 API that `ansible-galaxy collection install NS.NAME:VERSION -s URL`
reads (ansible/galaxy/api.py: g_connect, get_collection_versions, get_collection_version_metadata,
get_collection_signatures) and the download:

  GET /api/                                           {"available_versions": {"v3": "v3/"}}
  GET /api/v3/collections/NS/NAME/versions/?limit=N   the one version, no next page
  GET /api/v3/collections/NS/NAME/versions/VERSION/   download_url, artifact sha256, signatures
  GET /download/FILE                                  the tarball's bytes

The tarball and the signatures the server publishes are read from STATE (a JSON file:
{"tarball": PATH, "signatures": [PATH, ...]}) on every request, so one server serves one case after
another. The collection's name and version come from the tarball's own MANIFEST.json, as a real
server takes them from the upload. It binds to 127.0.0.1 only, writes its port to PORT_FILE and
stops by itself after --lifetime seconds.

Usage: galaxy_server.py STATE PORT_FILE [--lifetime SECONDS]
"""

import argparse
import hashlib
import http.server
import json
import os
import tarfile
import threading


def load(state_path):
    with open(state_path, encoding="utf-8") as f:
        state = json.load(f)
    tarball = state["tarball"]
    with tarfile.open(tarball) as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))
    info = manifest["collection_info"]
    with open(tarball, "rb") as f:
        sha256 = hashlib.sha256(f.read()).hexdigest()
    signatures = []
    for path in state.get("signatures", []):
        with open(path, encoding="ascii") as f:
            signatures.append(
                {
                    "signature": f.read(),
                    "pubkey_fingerprint": state.get("fingerprint", ""),
                    "signing_service": "mooring-test",
                    "pulp_created": "2026-11-28T00:00:00Z",
                }
            )
    return tarball, info, sha256, signatures


class Handler(http.server.BaseHTTPRequestHandler):
    state_path = ""

    def log_message(self, fmt, *args):  # quiet; ansible-galaxy -vvvv shows the URLs
        pass

    def send_json(self, body, code=200):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 (http.server's name)
        tarball, info, sha256, signatures = load(self.state_path)
        ns, name, version = info["namespace"], info["name"], info["version"]
        base = f"/api/v3/collections/{ns}/{name}"
        path = self.path.split("?", 1)[0]
        filename = os.path.basename(tarball)
        if path in ("/api/", "/api"):
            self.send_json({"available_versions": {"v3": "v3/"}})
        elif path == f"{base}/":
            self.send_json({"namespace": ns, "name": name, "href": f"{base}/", "highest_version": {"version": version}, "updated_at": "2026-11-28T00:00:00Z"})
        elif path == f"{base}/versions/":
            self.send_json({"meta": {"count": 1}, "links": {"next": None}, "data": [{"version": version, "href": f"{base}/versions/{version}/"}]})
        elif path == f"{base}/versions/{version}/":
            self.send_json(
                {
                    "namespace": {"name": ns},
                    "collection": {"name": name},
                    "version": version,
                    "href": f"{base}/versions/{version}/",
                    "download_url": f"/download/{filename}",
                    "artifact": {"filename": filename, "sha256": sha256},
                    "metadata": {"dependencies": info.get("dependencies") or {}},
                    "signatures": signatures,
                }
            )
        elif path == f"/download/{filename}":
            with open(tarball, "rb") as f:
                data = f.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self.send_json({"errors": [{"status": "404", "detail": "Not found."}]}, 404)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("state")
    parser.add_argument("port_file")
    parser.add_argument("--lifetime", type=float, default=600.0)
    args = parser.parse_args()
    Handler.state_path = args.state
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    timer = threading.Timer(args.lifetime, server.shutdown)
    timer.daemon = True
    timer.start()
    tmp = args.port_file + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
