# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make a tampered copy of a signed tar solution archive, for the `solutions` scenario.

``python tests/solutions/tamper.py IN.tar OUT.tar``: OUT has the operator Deployment's
image swapped for another listed image and SHA256SUMS recomputed to match, while the
signature is left as it was. Only the signature check can catch it: the archive is
otherwise perfectly valid.
"""

from __future__ import annotations

import hashlib
import io
import sys
import tarfile

TARGET = "operator/deploy/deployment.yaml"


def tamper(src, dst):
    with tarfile.open(src) as tin:
        members = [(m, tin.extractfile(m).read() if m.isreg() else None) for m in tin.getmembers()]
    files = {m.name: data for m, data in members if data is not None}
    text = files[TARGET].decode()
    swapped = text.replace("image: example-operator:", "image: example-app:")
    if swapped == text:
        raise SystemExit("tamper: nothing to change in %s" % TARGET)
    files[TARGET] = swapped.encode()
    lines = []
    for line in files["SHA256SUMS"].decode().splitlines():
        digest, path = line.split("  ", 1)
        lines.append("%s  %s" % (hashlib.sha256(files[path]).hexdigest(), path))
    files["SHA256SUMS"] = ("\n".join(lines) + "\n").encode()
    with tarfile.open(dst, "w") as tout:
        for m, _data in members:
            if m.name in files:
                m.size = len(files[m.name])
                tout.addfile(m, io.BytesIO(files[m.name]))
            else:
                tout.addfile(m)


if __name__ == "__main__":
    tamper(sys.argv[1], sys.argv[2])
