# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: images in containerd (``ctr``) and a registry.

The one place ``ctr`` command lines are built (bundle images and solution images alike),
``ctr images ls`` is parsed, and what to import, push or remove is decided; the caller passes
a ``run(argv) -> (rc, stdout, stderr)`` function (``AnsibleModule.run_command`` in the
modules), so this module never knows AnsibleModule. Standard library only (hosts use it).
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.common import images as image_refs
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

DEFAULT_ADDRESS = "/run/containerd/containerd.sock"
DEFAULT_NAMESPACE = "k8s.io"

MANIFEST_ACCEPT = ", ".join([
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
])


class ContainerdError(MooringError):
    """A ctr command failed, or a registry could not be reached."""


# The argument spec of "where and how to import" (bundle_image's options, host_state's images suboptions).
IMPORT_OPTIONS = dict(
    namespace=dict(type="str", default=DEFAULT_NAMESPACE),
    address=dict(type="path", default=DEFAULT_ADDRESS),
    ctr=dict(type="str", default="ctr", aliases=["ctr_path"]),
)


def archive_problem(images, label):
    """The first image of ``images`` (``label`` names the list) without both ``ref`` and ``path``, as one
    line; None when every one has both. Checked before anything changes on the host."""
    for index, image in enumerate(images or ()):
        if not image.get("ref") or not image.get("path"):
            return "%s[%d]: both 'ref' and 'path' are required, got %r" % (label, index, image)
    return None


def base_cmd(ctr="ctr", address=DEFAULT_ADDRESS, namespace=DEFAULT_NAMESPACE):
    return [ctr, "--address", address, "--namespace", namespace]


def list_cmd(base):
    return base + ["images", "ls"]


def list_refs_cmd(base):
    """``ctr images list --quiet``: one reference a line."""
    return base + ["images", "list", "--quiet"]


def import_archive_cmd(base, path):
    """``ctr images import`` of an image archive from the bundle; no registry involved, unpacked
    into the snapshotter so the kubelet finds it."""
    return base + ["images", "import", "--no-unpack=false", path]


def missing_images(wanted, present):
    """The images of ``wanted`` (dicts with ``ref``) whose reference is not in ``present``
    (containerd lists Docker Hub images by their full name)."""
    present = set(present)
    return [image for image in wanted
            if image["ref"] not in present and image_refs.fully_qualified(image["ref"]) not in present]


def import_cmd(base, image, snapshotter=None):
    """``ctr images import`` of one exported OCI archive, limited to that image's name."""
    cmd = base + ["images", "import", "--base-name", image_refs.split_tag(image["ref"])[0]]
    if snapshotter:
        cmd += ["--snapshotter", snapshotter]
    return cmd + [image["file"]]


def remove_cmd(base, refs):
    return base + ["images", "rm"] + list(refs)


def push_cmd(base, ref, plain_http=False, skip_verify=False):
    cmd = base + ["images", "push"]
    if plain_http:
        cmd.append("--plain-http")
    if skip_verify:
        cmd.append("--skip-verify")
    return cmd + [ref]


def parse_images_ls(text):
    """``{ref: manifest digest}`` from ``ctr images ls`` (columns REF TYPE DIGEST ...)."""
    out = {}
    lines = text.splitlines()
    if not lines:
        return out
    header = lines[0].split()
    if header[:3] != ["REF", "TYPE", "DIGEST"]:
        raise ContainerdError("unexpected `ctr images ls` output (header %r)" % lines[0][:80])
    for line in lines[1:]:
        cols = line.split()
        if len(cols) >= 3 and cols[2].startswith("sha256:"):
            out[cols[0]] = cols[2]
    return out


def manifest_url(ref, plain_http=False):
    """The registry URL of ``ref``'s manifest (``host[:port]/repo/name:tag``)."""
    name, tag = image_refs.split_tag(ref)
    host, repo = name.split("/", 1)
    return "%s://%s/v2/%s/manifests/%s" % ("http" if plain_http else "https", host, repo, tag)


def plan(present, images, state):
    """What to do: ``{"import": [...], "remove": [...]}`` given ``present`` ({ref: digest})."""
    if state == "present":
        return {"import": [i for i in images if present.get(i["ref"]) != i["digest"]], "remove": []}
    return {"import": [], "remove": sorted(i["ref"] for i in images if i["ref"] in present)}


def _run(run, cmd):
    rc, out, err = run(cmd)
    if rc != 0:
        raise ContainerdError("`%s` failed (exit %d): %s" % (" ".join(cmd), rc, (err or out).strip()[:2000]))
    return out


def ensure_images(run, images, state="present", ctr="ctr", address=DEFAULT_ADDRESS,
                  namespace=DEFAULT_NAMESPACE, snapshotter=None, check_mode=False, push=False, plain_http=False,
                  skip_verify=False, registry_digest=None):
    """Make containerd hold exactly ``images`` (state present) or none of them (absent).

    ``images``: dicts with ``ref``, ``digest`` and (present) ``file``, an OCI archive made by
    :func:`solution.export_images`. With ``push``, each image is also pushed to the registry
    its ref names unless ``registry_digest(ref)`` already returns its digest.
    Returns ``{changed, imported, removed, pushed, before, after}``.
    """
    base = base_cmd(ctr, address, namespace)
    before = parse_images_ls(_run(run, list_cmd(base)))
    todo = plan(before, images, state)
    pushed = []
    if push and state == "present":
        for img in images:
            have = registry_digest(img["ref"]) if registry_digest else None
            if have != img["digest"]:
                pushed.append(img["ref"])
    changed = bool(todo["import"] or todo["remove"] or pushed)
    after = dict(before)
    if not check_mode:
        for img in todo["import"]:
            _run(run, import_cmd(base, img, snapshotter))
        if todo["remove"]:
            _run(run, remove_cmd(base, todo["remove"]))
        if todo["import"] or todo["remove"]:
            after = parse_images_ls(_run(run, list_cmd(base)))
            for img in todo["import"]:
                if after.get(img["ref"]) != img["digest"]:
                    raise ContainerdError(
                        "%s: imported, but containerd reports digest %s instead of %s"
                        % (img["ref"], after.get(img["ref"]), img["digest"])
                    )
        for ref in pushed:
            _run(run, push_cmd(base, ref, plain_http, skip_verify))
    else:
        for img in todo["import"]:
            after[img["ref"]] = img["digest"]
        for ref in todo["remove"]:
            after.pop(ref, None)
    refs = sorted(i["ref"] for i in images)
    return {
        "changed": changed,
        "imported": [i["ref"] for i in todo["import"]],
        "removed": todo["remove"],
        "pushed": pushed,
        "before": {r: before.get(r) for r in refs},
        "after": {r: after.get(r) for r in refs},
    }


# ---------------------------------------------------------------------------- bundle images
def _listed_refs(run, base, address):
    rc, out, err = run(list_refs_cmd(base))
    if rc != 0:
        raise ContainerdError("cannot list containerd images (is containerd running at %s?): %s" % (address, err.strip()))
    return sorted(line.strip() for line in out.splitlines() if line.strip())


def _failed(message, result):
    error = ContainerdError(message)
    error.result = result
    return error


def import_archives(run, images, ctr="ctr", address=DEFAULT_ADDRESS, namespace=DEFAULT_NAMESPACE, check_mode=False):
    """Import every image archive (dicts with ``ref`` and ``path``) whose reference containerd does
    not list yet, then check each is listed. No registry is involved.

    Returns ``{changed, imported, present, before, after}``; a failure is a
    :class:`ContainerdError` whose ``result`` holds what was known at that point.
    """
    base = base_cmd(ctr, address, namespace)
    before = _listed_refs(run, base, address)
    missing = missing_images(images, before)
    result = {"changed": bool(missing), "imported": [i["ref"] for i in missing],
              "present": [i["ref"] for i in images if i not in missing], "before": before, "after": before}
    if not missing or check_mode:
        return result
    for image in missing:
        rc, _out, err = run(import_archive_cmd(base, image["path"]))
        if rc != 0:
            raise _failed("ctr images import %s failed: %s" % (image["path"], err.strip()), result)
    after = _listed_refs(run, base, address)
    result["after"] = after
    still = missing_images(missing, after)
    if still:
        raise _failed("imported %s but %s is not listed in namespace %s (the archive names the image differently?); "
                      "listed: %s" % (still[0]["path"], still[0]["ref"], namespace, ", ".join(after)), result)
    return result
