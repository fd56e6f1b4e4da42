# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Serve the test mirror over http on 127.0.0.1 (loopback only).

    serve.py [--mirror DIR] [--port 0] [--overlay OUTDIR]

Prints ``URL`` on the first line of stdout once listening (port 0 picks a free one) and,
with ``--overlay``, writes a catalog overlay whose URLs point at that server.
"""

import argparse
import contextlib
import functools
import http.server
import os
import subprocess
import sys


def main(argv=None):
    default = os.path.join(os.environ.get("MOORING_CACHE_DIR", "/var/cache/mooring"), "mirror")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", default=default)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--overlay")
    args = p.parse_args(argv)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=args.mirror)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    url = "http://127.0.0.1:%d" % server.server_address[1]
    if args.overlay:
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "overlay.py"),
                        "--mirror", args.mirror, "--base-url", url, "-o", args.overlay], check=True)
    print(url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
