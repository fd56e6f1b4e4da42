# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: container image references, parsed in one place.

``[REGISTRY/]PATH[:TAG][@DIGEST]``: the first path component is a registry when it has a dot
or a port, or is ``localhost`` (Docker's rule); without a registry the image is on Docker Hub,
where a one-component path lives under ``library/``.
"""

from __future__ import annotations


def is_registry_host(component):
    """Docker's rule for a reference's first component: a dot, a port, or ``localhost``."""
    return "." in component or ":" in component or component == "localhost"


def has_registry(ref):
    """True when ``ref`` names its registry (``host.tld/...``, ``host:port/...``, ``localhost/...``)."""
    return "/" in ref and is_registry_host(ref.split("/", 1)[0])


def split_tag(ref, default="latest"):
    """``registry.k8s.io/coredns/coredns:v1.11.3`` -> (``registry.k8s.io/coredns/coredns``, ``v1.11.3``).

    A digest is dropped; without a tag the tag is ``default``.
    """
    ref = ref.split("@", 1)[0]
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        return ref[:colon], ref[colon + 1:]
    return ref, default


def name_of(ref):
    """The repository without registry, tag or digest (``docker.io/calico/node:v3`` -> ``calico/node``)."""
    parts = split_tag(ref)[0].split("/")
    if len(parts) > 1 and has_registry("/".join(parts)):
        parts = parts[1:]
    if len(parts) == 1:
        parts = ["library"] + parts
    return "/".join(parts)


def fully_qualified(ref):
    """The name containerd gives the image (``x:1`` -> ``docker.io/library/x:1``)."""
    if has_registry(ref):
        return ref
    if "/" not in ref:
        return "docker.io/library/" + ref
    return "docker.io/" + ref
