# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST CLIENT (lab only): one CRI PullImage to the local containerd, as the kubelet sends it.

    cri_pull.py GRPC_DIR IMAGE

containerd pulls with its own environment (its systemd drop-in's proxy), unlike `ctr images pull`, which
fetches in the ctr process. GRPC_DIR holds grpcio unpacked from its wheel (Debian has no cri-tools); the
request is encoded by hand (runtime.v1 PullImageRequest{image: ImageSpec{image}}). Prints the image ref.
"""

import sys


def _field(number, payload):
    size, out = len(payload), bytearray([number << 3 | 2])
    while True:
        byte, size = size & 0x7F, size >> 7
        out.append(byte | (0x80 if size else 0))
        if not size:
            return bytes(out) + payload


def main():
    sys.path.insert(0, sys.argv[1])
    import grpc  # pylint: disable=import-outside-toplevel,import-error

    image = sys.argv[2].encode()
    request = _field(1, _field(1, image))
    channel = grpc.insecure_channel("unix:///run/containerd/containerd.sock")
    pull = channel.unary_unary("/runtime.v1.ImageService/PullImage")
    reply = pull(request, timeout=120)
    # PullImageResponse{image_ref = 1}: tag, one-byte length (an image digest ref is < 128 bytes), text
    print(reply[2:2 + reply[1]].decode())


if __name__ == "__main__":
    main()
