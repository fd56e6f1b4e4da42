# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Regenerate the binary-artifact catalog files from upstream checksum facts.

Input: a checksum table shaped like Kubespray's ``checksums.yml`` (``<name>_checksums:
{arch: {version: "sha256:<hex>"}}``), e.g. ``../shared/upstream/kubespray-checksums.yml``.
Output: ``catalog/kubernetes.yml``, ``catalog/etcd.yml`` and ``catalog/containerd.yml``.
The add-on files for CNIs, storage, ingress and metrics are written by hand.

    python catalog/tools/from_upstream.py ../shared/upstream/kubespray-checksums.yml catalog/
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ARCHES = ("amd64", "arm64", "ppc64le")
# Kubernetes minors the catalog supports, with kubeadm's default pause and CoreDNS images and
# the crictl / CNI plugin releases paired with them.
K8S_MINORS = {
    "1.34": {"pause": "3.10.1", "coredns": "v1.12.1", "crictl": "1.34.0", "cni": "1.8.0"},
    "1.35": {"pause": "3.10.1", "coredns": "v1.13.1", "crictl": "1.35.0", "cni": "1.9.1"},
    "1.36": {"pause": "3.10.1", "coredns": "v1.13.1", "crictl": "1.36.0", "cni": "1.9.1"},
}
ETCD_MINORS = ("3.5", "3.6")
# containerd minor -> (runc release paired with it, Kubernetes range it supports)
CONTAINERD_MINORS = {
    "1.7": ("1.2.9", ">=1.34.0,<1.36.0"),
    "2.0": ("1.3.3", None),
    "2.1": ("1.3.3", None),
    "2.2": ("1.4.3", None),
    "2.3": ("1.4.3", None),
}


def _sha(table, name, arch, version):
    value = table.get(name, {}).get(arch, {}).get(version)
    if not value:
        return None
    return str(value).split(":", 1)[-1]


def _versions(table, name, minors):
    out = set()
    for per_arch in table[name].values():
        out.update(v for v in per_arch if ".".join(v.split(".")[:2]) in minors)
    return sorted(out, key=lambda v: tuple(int(p) for p in v.split(".")), reverse=True)


def _concrete(table, key, name, kind, url, version, dest=None):
    items = []
    for arch in ARCHES:
        sha = _sha(table, key, arch, version)
        if sha:
            item = {"name": name, "kind": kind, "arch": arch, "url": url.format(version=version, arch=arch), "sha256": sha}
            if dest:
                item["dest"] = dest
            items.append(item)
    return items


def kubernetes(table):
    versions = []
    for version in _versions(table, "kubeadm_checksums", K8S_MINORS):
        minor = K8S_MINORS[".".join(version.split(".")[:2])]
        sha = {}
        for tool in ("kubeadm", "kubelet", "kubectl"):
            sha[tool] = {a: _sha(table, tool + "_checksums", a, version) for a in ARCHES if _sha(table, tool + "_checksums", a, version)}
        artifacts = _concrete(
            table, "crictl_checksums", "crictl", "archive",
            "https://github.com/kubernetes-sigs/cri-tools/releases/download/v{version}/crictl-v{version}-linux-{arch}.tar.gz",
            minor["crictl"])
        artifacts += _concrete(
            table, "cni_binary_checksums", "cni-plugins", "archive",
            "https://github.com/containernetworking/plugins/releases/download/v{version}/cni-plugins-linux-{arch}-v{version}.tgz",
            minor["cni"])
        versions.append({
            "version": version,
            "sha256": sha,
            "artifacts": artifacts,
            "images": [
                {"ref": "registry.k8s.io/pause:%s" % minor["pause"]},
                {"ref": "registry.k8s.io/coredns/coredns:%s" % minor["coredns"]},
            ],
        })
    return {
        "name": "kubernetes",
        "category": "kubernetes",
        "description": "kubeadm, kubelet and kubectl with crictl, the CNI plugins and the control-plane images.",
        "architectures": list(ARCHES),
        "artifacts": [
            {"name": t, "kind": "binary", "url": "https://dl.k8s.io/release/v{version}/bin/linux/{arch}/" + t}
            for t in ("kubeadm", "kubelet", "kubectl")
        ],
        "images": [{"ref": "registry.k8s.io/%s:v{version}" % c} for c in (
            "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")],
        "packages": {"debian": ["conntrack", "socat", "ethtool", "ebtables", "iptables"]},
        "versions": versions,
    }


def etcd(table):
    return {
        "name": "etcd",
        "category": "etcd",
        "description": "etcd server and etcdctl for the external (or kubeadm-stacked) etcd cluster.",
        "architectures": list(ARCHES),
        "artifacts": [{
            "name": "etcd", "kind": "archive",
            "url": "https://github.com/etcd-io/etcd/releases/download/v{version}/etcd-v{version}-linux-{arch}.tar.gz",
        }],
        "images": [],
        "packages": {},
        "versions": [
            {"version": v, "sha256": {"etcd": {a: _sha(table, "etcd_binary_checksums", a, v) for a in ARCHES
                                               if _sha(table, "etcd_binary_checksums", a, v)}}}
            for v in _versions(table, "etcd_binary_checksums", ETCD_MINORS)
        ],
    }


def containerd(table):
    versions = []
    for version in _versions(table, "containerd_archive_checksums", CONTAINERD_MINORS):
        runc, k8s_range = CONTAINERD_MINORS[".".join(version.split(".")[:2])]
        entry = {
            "version": version,
            "sha256": {"containerd": {a: _sha(table, "containerd_archive_checksums", a, version) for a in ARCHES
                                      if _sha(table, "containerd_archive_checksums", a, version)}},
            "artifacts": _concrete(
                table, "runc_checksums", "runc", "binary",
                "https://github.com/opencontainers/runc/releases/download/v{version}/runc.{arch}", runc, dest="runc"),
        }
        if k8s_range:
            entry["kubernetes"] = k8s_range
        versions.append(entry)
    return {
        "name": "containerd",
        "category": "cri",
        "description": "containerd with runc.",
        "architectures": list(ARCHES),
        "artifacts": [{
            "name": "containerd", "kind": "archive",
            "url": "https://github.com/containerd/containerd/releases/download/v{version}/containerd-{version}-linux-{arch}.tar.gz",
        }],
        "images": [],
        "packages": {},
        "versions": versions,
    }


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    table = yaml.safe_load(Path(argv[1]).read_text())
    out = Path(argv[2])
    header = "# Generated by catalog/tools/from_upstream.py from upstream checksum facts; edit the tool, not this file.\n"
    for build in (kubernetes, etcd, containerd):
        data = build(table)
        text = header + yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=200)
        (out / ("%s.yml" % data["name"])).write_text(text)
        print("%s: %d versions" % (data["name"], len(data["versions"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
