# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The example solution as MetalK8s's tooling builds a Solution ISO (test data).

The images are the example solution's (tests/solutions/example.py writes them as OCI layouts),
copied with skopeo into its ``dir:`` format under ``images/<name>/<tag>/`` and hard-linked
with ``hardlink -c``, the way scality/metalk8s-solution-example's build does; beside them a
MetalK8s ``manifest.yaml``, ``operator/deploy/`` with ``{{ repository }}`` placeholders,
``ui/``, ``product.txt`` and ``registry-config.inc.j2``. The ISO is made with genisoimage, and
``SHA256SUM`` is written beside it.

``write_source(dest, version, ...)`` writes the tree, ``build_iso(src, out, version)`` the ISO,
``build(dest_dir, version, ...)`` both. Needs skopeo, genisoimage and hardlink (Debian packages
skopeo, genisoimage, util-linux): :func:`missing_tools` names the ones absent.

Run as a script: ``python tests/solutions/metalk8s.py OUTDIR [--version 1.0.0] [--image-maps]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example  # noqa: E402

NAME = "example-solution"  # beside the mooring-format example (named example) in one cluster
OPERATOR = "example-operator"
APP = "example-app"
# The app image is also shipped under this tag: its blobs are the same files, so hardlink links them.
ALIAS_TAG = "latest"
API_VERSION = "solutions.metalk8s.scality.com/v1alpha1"
ANNOTATION = "solutions.metalk8s.scality.com/"
BUILD_TIMESTAMP = "2024-01-01T00:00:00Z"
TOOLS = {"skopeo": "skopeo", "genisoimage": "genisoimage", "hardlink": "util-linux"}
PLACEHOLDER = "REPOSITORY-PLACEHOLDER"
REGISTRY_CONFIG = """\
# The example solution's images, served from the solution's mounted ISO.
location ~ "^/v2/{{ repository }}/(.*)$" {
    alias {{ registry_root }}/{{ repository }}/$1;
}
"""


def missing_tools():
    """``{binary: Debian package}`` of the tools this builder needs and cannot find."""
    return {tool: pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None}


def require_tools():
    """Raise ``RuntimeError`` naming the missing tools and their Debian packages (`make setup`
    installs them; a test that needs them fails rather than skips)."""
    missing = missing_tools()
    if missing:
        raise RuntimeError("missing tools: %s (Debian packages: %s; `make setup` installs them)"
                           % (", ".join(sorted(missing)), ", ".join(sorted(set(missing.values())))))


def _run(argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def image_list(version, alias_tag=ALIAS_TAG):
    """The solution's images, (name, tag) each."""
    images = [(OPERATOR, version), (APP, version)]
    return images + ([(APP, alias_tag)] if alias_tag else [])


def write_dir_images(dest, version, alias_tag=ALIAS_TAG, manifest_format="v2s2", program=None):
    """Write the example's images into ``dest`` (the tree's images/) in skopeo's dir: format, hard-linked;
    ``manifest_format`` is skopeo's ``--format``: ``v2s2`` (docker, as MetalK8s's builds) or ``oci``."""
    with tempfile.TemporaryDirectory() as tmp:
        example.write_images(tmp, version, program)
        for name, tag in image_list(version, alias_tag):
            os.makedirs(os.path.join(dest, name), exist_ok=True)
            _run(["skopeo", "--insecure-policy", "--override-os", "linux", "copy", "--quiet", "--format", manifest_format,
                  "--dest-compress", "oci:%s" % os.path.join(tmp, name, version), "dir:%s" % os.path.join(dest, name, tag)])
    _run(["hardlink", "-c", dest])


def manifest(version, images, image_maps=False, spec_images=True):
    """manifest.yaml in MetalK8s's shape; spec.images as "name:tag" strings, or {name, tag} maps."""
    spec = {}
    if spec_images:
        spec["images"] = [{"name": n, "tag": t} if image_maps else "%s:%s" % (n, t) for n, t in images]
    spec["operator"] = {"image": {"name": OPERATOR, "tag": version}, "metrics": {"enabled": True}}
    spec["version"] = version
    return {
        "apiVersion": API_VERSION,
        "kind": "Solution",
        "metadata": {
            "annotations": {
                ANNOTATION + "display-name": "Example Solution",
                ANNOTATION + "git": "0123456789abcdef",
                ANNOTATION + "development-release": "0",
                ANNOTATION + "build-timestamp": BUILD_TIMESTAMP,
                ANNOTATION + "build-host": "builder",
            },
            "labels": {},
            "name": NAME,
        },
        "spec": spec,
    }


def _dump(path, docs):
    """YAML documents with every image reference ``{{ repository }}/...`` as MetalK8s writes it: unquoted."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = yaml.safe_dump_all(docs, sort_keys=False)
    with open(path, "w") as f:
        f.write(text.replace(PLACEHOLDER, "{{ repository }}"))


def write_operator(dest, version):
    """operator/deploy/*.yaml (ServiceAccount, Role, RoleBinding, the operator's Deployment) and crds/."""
    docs = {d["kind"]: d for docs in example.operator_manifests(version).values() for d in docs}
    deployment = docs["Deployment"]
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "%s/%s:%s" % (PLACEHOLDER, OPERATOR, version)
    # Its own API group: two solutions in one cluster never share a CRD (each activation would relabel it).
    crd, group = docs["CustomResourceDefinition"], "%s.solutions.mooring.io" % NAME
    crd["spec"]["group"] = group
    crd["metadata"]["name"] = "%s.%s" % (crd["spec"]["names"]["plural"], group)
    for rule in docs["Role"]["rules"]:
        rule["apiGroups"] = [group if g == "example.solutions.mooring.io" else g for g in rule["apiGroups"]]
    deploy = os.path.join(dest, "operator", "deploy")
    for fname, kind in (("service_account.yaml", "ServiceAccount"), ("role.yaml", "Role"),
                        ("role_binding.yaml", "RoleBinding"), ("operator.yaml", "Deployment")):
        _dump(os.path.join(deploy, fname), [docs[kind]])
    _dump(os.path.join(deploy, "crds", "%s_%s_crd.yaml" % (crd["spec"]["group"], crd["spec"]["names"]["plural"])), [crd])


def write_ui(dest, version):
    """ui/deployment.yaml: what MetalK8s carries and never deploys here."""
    labels = {"app.kubernetes.io/name": "example-ui"}
    ui = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "example-ui"},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [{"name": "ui", "image": "%s/%s:%s" % (PLACEHOLDER, APP, version)}]}}},
    }
    _dump(os.path.join(dest, "ui", "deployment.yaml"), [ui])


def write_source(dest, version, image_maps=False, spec_images=True, ui=True, alias_tag=ALIAS_TAG,
                 manifest_format="v2s2", program=None):
    """Write the MetalK8s source tree of the example solution ``version`` into ``dest``; return ``dest``.

    ``image_maps`` writes spec.images as {name, tag} maps; ``spec_images=False`` leaves spec.images
    out (MetalK8s then lists every images/<name>/<tag>/); ``ui=False`` leaves ui/ out;
    ``alias_tag=None`` ships the app image once (then no blob is hard-linked, only the version files);
    ``manifest_format="oci"`` writes OCI image manifests instead of docker v2s2; ``program``: the images run it
    (example.write_images)."""
    os.makedirs(dest, exist_ok=True)
    write_dir_images(os.path.join(dest, "images"), version, alias_tag, manifest_format, program)
    with open(os.path.join(dest, "manifest.yaml"), "w") as f:
        yaml.safe_dump(manifest(version, image_list(version, alias_tag), image_maps, spec_images), f, sort_keys=False)
    write_operator(dest, version)
    if ui:
        write_ui(dest, version)
    with open(os.path.join(dest, "product.txt"), "w") as f:
        f.write("NAME=%s\nVERSION=%s\nREQUIRE_METALK8S=>=2.4.0\nARCHIVE_LAYOUT_VERSION=1\n" % (NAME, version))
    with open(os.path.join(dest, "registry-config.inc.j2"), "w") as f:
        f.write(REGISTRY_CONFIG)
    return dest


def build_iso(src, out, version):
    """genisoimage ``src`` into ``out`` as MetalK8s's solution build does; ``SHA256SUM`` beside it. Returns ``out``."""
    _run(["genisoimage", "-output", out, "-quiet", "-rock", "-joliet", "-joliet-long", "-full-iso9660-filenames",
          "-volid", "%s %s" % (NAME, version), "-iso-level", "3", "-gid", "0", "-uid", "0",
          "-input-charset", "iso8859-1", "-output-charset", "iso8859-1", src])
    sha = hashlib.sha256()
    with open(out, "rb") as f:
        for chunk in iter(lambda: f.read(1024 * 1024), b""):
            sha.update(chunk)
    with open(os.path.join(os.path.dirname(out), "SHA256SUM"), "w") as f:
        f.write("%s  %s\n" % (sha.hexdigest(), os.path.basename(out)))
    return out


def build(dest_dir, version, **options):
    """Build ``<dest_dir>/example-<version>.iso`` (and ``SHA256SUM``) from a tree in ``dest_dir/src-<version>``.

    ``options`` go to :func:`write_source`. Returns the ISO's path. ``SHA256SUM`` names one ISO, as
    in MetalK8s's build directory: build each version into its own ``dest_dir``."""
    require_tools()
    src = write_source(os.path.join(dest_dir, "src-%s" % version), version, **options)
    return build_iso(src, os.path.join(dest_dir, "%s-%s.iso" % (NAME, version)), version)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build the example solution as a MetalK8s Solution ISO.")
    parser.add_argument("outdir")
    parser.add_argument("--version", default=example.VERSIONS[0], help="the solution's version (default %(default)s)")
    parser.add_argument("--image-maps", action="store_true", help="write spec.images as {name, tag} maps")
    parser.add_argument("--program", help="a static program every image runs as /bin/operator (example.py)")
    args = parser.parse_args(argv)
    os.makedirs(args.outdir, exist_ok=True)
    try:
        out = build(args.outdir, args.version, image_maps=args.image_maps, program=args.program)
    except RuntimeError as exc:
        parser.exit(1, "error: %s\n" % exc)
    with open(os.path.join(args.outdir, "SHA256SUM")) as f:
        print("%s %s" % (out, f.read().split()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
