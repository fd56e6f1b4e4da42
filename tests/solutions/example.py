# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The example solution used by the test suite, built from nothing but Python.

``write_source(dest, version)`` writes a solution source tree (manifest.yaml, two OCI image
layouts, operator manifests) for version 1.0.0 or 2.0.0 of the solution ``example``;
``build(dest_dir, version, key=None, fmt="iso")`` builds the archive with
``mooring solution build``'s backend. Every byte is deterministic (fixed timestamps, sorted
JSON), so the same version always yields the same image digests.

``program`` (a path) puts that static program in every image as ``/bin/operator``, its entrypoint, so the operator
Deployment has something that stays up on a real cluster (the lab's ``solutions`` scenario gives the pause program
it builds with Kubernetes: a STAND-IN for an operator, which only has to run); without it the images hold two text
files and the digests stay those the unit tests know.

Run as a script to build both versions: ``python tests/solutions/example.py OUTDIR [KEY] [--program PATH]``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

import yaml

NAME = "example"
VERSIONS = ("1.0.0", "2.0.0")
IMAGES = ("example-operator", "example-app")
MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def _blob(root, data):
    digest = hashlib.sha256(data).hexdigest()
    d = os.path.join(root, "blobs", "sha256")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, digest), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + digest, "size": len(data)}


def _canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode("utf-8")


def layer_tar(files):
    """A gzip'd tar layer (deterministic) holding ``files`` ({path: bytes}); (gz, diff_id)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            ti = tarfile.TarInfo(path)
            ti.size = len(files[path])
            ti.mode = 0o755 if path.startswith("bin/") else 0o644
            ti.mtime = 0
            tar.addfile(ti, io.BytesIO(files[path]))
    plain = raw.getvalue()
    gz = io.BytesIO()
    with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0) as g:
        g.write(plain)
    return gz.getvalue(), "sha256:" + hashlib.sha256(plain).hexdigest()


def write_oci_layout(root, files, tag, arch="amd64", cmd=None, entrypoint=None):
    """Write an OCI image layout at ``root`` with one layer; return the manifest digest."""
    os.makedirs(root, exist_ok=True)
    gz, diff_id = layer_tar(files)
    layer = dict(_blob(root, gz), mediaType=MT_LAYER)
    config = {
        "architecture": arch,
        "os": "linux",
        "config": dict({"Cmd": cmd or ["/bin/sh"], "Env": ["PATH=/bin"]},
                       **({"Entrypoint": entrypoint} if entrypoint else {})),
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    }
    cfg = dict(_blob(root, _canonical(config)), mediaType=MT_CONFIG)
    manifest = {"schemaVersion": 2, "mediaType": MT_MANIFEST, "config": cfg, "layers": [layer]}
    man = dict(_blob(root, _canonical(manifest)), mediaType=MT_MANIFEST)
    man["annotations"] = {"org.opencontainers.image.ref.name": tag}
    man["platform"] = {"architecture": arch, "os": "linux"}
    with open(os.path.join(root, "index.json"), "wb") as f:
        f.write(_canonical({"schemaVersion": 2, "manifests": [man]}))
    with open(os.path.join(root, "oci-layout"), "wb") as f:
        f.write(_canonical({"imageLayoutVersion": "1.0.0"}))
    return man["digest"]


def manifest(version):
    return {
        "apiVersion": "solutions.mooring.io/v1alpha1",
        "kind": "Solution",
        "metadata": {"name": NAME, "annotations": {"solutions.mooring.io/display-name": "Example Solution"}},
        "spec": {
            "version": version,
            "images": [{"name": "example-operator", "tag": version}, {"name": "example-app", "tag": version}],
            "operator": {"image": {"name": "example-operator", "tag": version}},
        },
    }


def operator_manifests(version):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "examples.example.solutions.mooring.io"},
        "spec": {
            "group": "example.solutions.mooring.io",
            "names": {"kind": "Example", "listKind": "ExampleList", "plural": "examples", "singular": "example"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1alpha1", "served": True, "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "version": {"type": "string"}, "replicas": {"type": "integer"}}}}}},
            }],
        },
    }
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "example-operator"}}
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "example-operator"},
        "rules": [
            {"apiGroups": ["example.solutions.mooring.io"], "resources": ["examples", "examples/status"],
             "verbs": ["get", "list", "watch", "update", "patch"]},
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]},
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "example-operator"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "example-operator"},
        "subjects": [{"kind": "ServiceAccount", "name": "example-operator"}],
    }
    crole = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "example-operator"},
        "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}],
    }
    cbinding = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "example-operator"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "example-operator"},
        "subjects": [{"kind": "ServiceAccount", "name": "example-operator"}],
    }
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "example-operator"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "example-operator"}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "example-operator"}},
                "spec": {
                    "serviceAccountName": "example-operator",
                    "containers": [{
                        "name": "operator",
                        "image": "example-operator:%s" % version,
                        "args": ["--watch-namespace=$(POD_NAMESPACE)"],
                        "env": [{"name": "POD_NAMESPACE",
                                 "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
                    }],
                },
            },
        },
    }
    return {
        "crd.yaml": [crd],
        "rbac.yaml": [sa, role, binding, crole, cbinding],
        "deployment.yaml": [deployment],
    }


def write_images(dest, version, program=None):
    """Write the example's two images as OCI layouts ``dest/<image>/<version>``; {image: manifest digest}.
    ``program``: the path of a static program each image runs as ``/bin/operator`` (see the module's text)."""
    digests = {}
    extra, entrypoint = {}, None
    if program:
        with open(program, "rb") as f:
            extra, entrypoint = {"bin/operator": f.read()}, ["/bin/operator"]
    for image in IMAGES:
        files = dict({
            "etc/example/VERSION": ("%s\n" % version).encode(),
            "etc/example/IMAGE": ("%s\n" % image).encode(),
        }, **extra)
        digests[image] = write_oci_layout(os.path.join(dest, image, version), files, version, cmd=["/bin/true"],
                                          entrypoint=entrypoint)
    return digests


def write_source(dest, version, program=None):
    """Write the source tree of the example solution ``version`` into ``dest`` (``program``: :func:`write_images`)."""
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, "manifest.yaml"), "w") as f:
        yaml.safe_dump(manifest(version), f, sort_keys=False)
    write_images(os.path.join(dest, "images"), version, program)
    deploy = os.path.join(dest, "operator", "deploy")
    os.makedirs(deploy, exist_ok=True)
    for fname, docs in operator_manifests(version).items():
        with open(os.path.join(deploy, fname), "w") as f:
            yaml.safe_dump_all(docs, f, sort_keys=False)
    return dest


def build(dest_dir, version, key=None, fmt="iso", program=None):
    """Build ``example-<version>.<fmt>`` in ``dest_dir``; return (archive path, summary)."""
    from ansible_collections.mooring.cluster.plugins.module_utils.solutions import build as solution_build

    src = write_source(os.path.join(dest_dir, "src-%s" % version), version, program)
    out = os.path.join(dest_dir, "%s-%s.%s" % (NAME, version, fmt))
    return out, solution_build.build_archive(src, out, key_path=key)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build both versions of the example solution (ISO).")
    parser.add_argument("outdir")
    parser.add_argument("key", nargs="?", help="the vendor's private key (signed archives)")
    parser.add_argument("--program", help="a static program every image runs as /bin/operator")
    args = parser.parse_args(argv)
    os.makedirs(args.outdir, exist_ok=True)
    for v in VERSIONS:
        path, summary = build(args.outdir, v, key=args.key, program=args.program)
        print("%s %s" % (path, summary["archive_sha256"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
