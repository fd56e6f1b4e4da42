# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's artifacts at the catalog's versions, built from upstream source (lab tooling).

The demo's spec (``tests/lab/installer.yaml``) and the same spec at the versions the lab upgrades from
(``tests/lab/previous.yaml``: ``patch``) are resolved against the REAL catalog; for every artifact and image of
those locks this writes a file with the upstream name and layout, made from the component's own Go module at
the version the lock names (``gobuild.py``), and an overlay that replaces only each artifact's URL and sha256
and gives each image an archive:

    fromsource.py --mirror DIR [--upgrade-from patch ...] [--base-url URL] -o OVERLAYDIR

| lock entry | built from | file |
|---|---|---|
| kubernetes: kubeadm, kubelet, kubectl | k8s.io/kubernetes (wrapper module) | bare binaries |
| kubernetes: cni-plugins | github.com/containernetworking/plugins | cni-plugins-linux-amd64-vX.tgz |
| kubernetes: crictl | sigs.k8s.io/cri-tools | crictl-vX-linux-amd64.tar.gz |
| etcd | go.etcd.io/etcd/{server,etcdctl,etcdutl}/v3 | etcd-vX-linux-amd64.tar.gz |
| containerd, runc | github.com/containerd/containerd/v2, github.com/opencontainers/runc | release archive, runc.amd64 |
| flannel: kube-flannel.yml | github.com/flannel-io/flannel (Documentation/kube-flannel.yml) | the manifest |
| localPathProvisioner: local-path-storage.yaml | github.com/rancher/local-path-provisioner (deploy/) | the manifest |
| metricsServer: metrics-server.yaml | sigs.k8s.io/metrics-server: ``kubectl kustomize manifests/overlays/release`` | components.yaml |
| images: kube-*, pause, coredns, flannel, local-path-provisioner, metrics-server | the same builds, with buildah, upstream refs | OCI archives |
| image: flannel-cni-plugin | NOT upstream: the lab's stand-in (tests/mirror/flannelcni), see gobuild.py | OCI archive |
| image: busybox (local-path's helper pod) | NOT upstream: Debian's busybox (not a Go program), under the upstream reference | OCI archive |

An entry whose module version the proxy does not serve is reported by name with the reason and
left out of the overlay (``UNBUILT`` in the JSON this prints); tests/mirror/test_fromsource.py
checks that the overlay changes nothing else in the lock.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.layout import artifact_version

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import gobuild  # noqa: E402  (the mirror's own modules, same folder)
from labspec import spec_text  # noqa: E402
from overlay import sha256_file  # noqa: E402
from releases import read, readme, write_file, write_tgz  # noqa: E402

# The specs built by default: the demo's, and the patch upgrade's start (scenario noderoll).
UPGRADES_FROM = ["patch"]
ARCH = "amd64"
# What the images need beside their program: iptables (kube-proxy, flannel) as Debian's package
# installs it on this machine, with its extensions and libraries; Debian's busybox for flannel's
# install-cni init container (cp).
IPTABLES_LINKS = ["iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"]


# The add-ons built here; the lab renders the others from synthetic manifests (releases.py) or not at all.
BUILT_ADDONS = ("kubernetes", "etcd", "containerd", "flannel", "localPathProvisioner", "metricsServer")

# Artifacts upstream publishes as a bare program: artifact name -> (gobuild recipe, program).
BARE = {"kubeadm": ("kubernetes", "kubeadm"), "kubelet": ("kubernetes", "kubelet"),
        "kubectl": ("kubernetes", "kubectl"), "runc": ("runc", "runc")}


def lab_lock(upgrade_from=None):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.resolve import read_installer, resolve

    return resolve(read_installer(spec_text(upgrade_from)))


class Maker(object):
    """Writes release files and image archives under ``mirror/built`` from gobuild outputs."""

    def __init__(self, mirror, work):
        self.mirror, self.work = mirror, work
        self.unbuilt = {}

    def out(self, name, version):
        return gobuild.build(name, version)

    def rel(self, *parts):
        return os.path.join("built", *parts)

    # -- artifacts ----------------------------------------------------------------------------------
    def artifact(self, addon, version, art):
        # The version the install checks the artifact against (bundle.layout), built at exactly that version.
        name, v = art["name"], artifact_version(art, version)
        fn = self.bare if name in BARE else getattr(self, "art_" + name.replace("-", "_"), None)
        if fn is None:
            raise SystemExit("fromsource: no way to build %s's artifact %s (%s)" % (addon, name, art["url"]))
        rel = self.rel(addon, "v%s" % v, art["dest"])
        path = os.path.join(self.mirror, rel)
        if not os.path.exists(path):
            fn(v, path, art)
        return rel

    def bare(self, v, path, art):
        component, program = BARE[art["name"]]
        write_file(path, read(os.path.join(self.out(component, v), program)))

    def art_crictl(self, v, path, art):
        out = self.out("crictl", v)
        write_tgz(path, [("crictl", read(os.path.join(out, "crictl")), 0o755)])

    def art_cni_plugins(self, v, path, art):
        out = self.out("cni-plugins", v)
        progs = sorted(p for p in os.listdir(out) if not p.startswith("."))
        write_tgz(path, [("./%s" % p, read(os.path.join(out, p)), 0o755) for p in progs]
                  + [("./LICENSE", b"Apache License 2.0\n", 0o644), ("./README.md", readme("the CNI plugins v%s" % v), 0o644)])

    def art_etcd(self, v, path, art):
        out, top = self.out("etcd", v), "etcd-v%s-linux-%s" % (v, ARCH)
        write_tgz(path, [("%s/%s" % (top, p), read(os.path.join(out, p)), 0o755) for p in ("etcd", "etcdctl", "etcdutl")]
                  + [("%s/README.md" % top, readme("etcd v%s" % v), 0o644)])

    def art_containerd(self, v, path, art):
        out = self.out("containerd", v)
        write_tgz(path, [("bin/%s" % p, read(os.path.join(out, p)), 0o755)
                         for p in ("containerd", "containerd-shim-runc-v2", "containerd-stress", "ctr")])

    def art_flannel_manifest(self, v, path, art):
        write_file(path, read(os.path.join(self.module_dir("github.com/flannel-io/flannel", v), "Documentation",
                                           "kube-flannel.yml")), 0o644)

    def art_local_path_storage(self, v, path, art):
        write_file(path, read(os.path.join(self.module_dir("github.com/rancher/local-path-provisioner", v),
                                           "deploy", "local-path-storage.yaml")), 0o644)

    def art_metrics_server_manifest(self, v, path, art):
        # Upstream's release job: the release overlay through kustomize (here: the kubectl built above, which
        # carries kustomize), the image set by the overlay's release component.
        overlay = os.path.join(self.module_dir("sigs.k8s.io/metrics-server", v), "manifests", "overlays", "release")
        kubectl = os.path.join(self.out("kubernetes", self.kubernetes), "kubectl")
        proc = subprocess.run([kubectl, "kustomize", overlay], capture_output=True, check=False)
        if proc.returncode != 0:
            raise gobuild.BuildError("kubectl kustomize %s: %s" % (overlay, proc.stderr.decode()[-400:]))
        write_file(path, proc.stdout, 0o644)

    def module_dir(self, module, v):
        return gobuild.module_info(module, v, gobuild.cache_root(), gobuild.go_env(gobuild.cache_root()))["Dir"]

    # -- images -------------------------------------------------------------------------------------
    def image(self, ref):
        repo, tag = ref.rsplit(":", 1)
        base = repo.rsplit("/", 1)[-1]
        rel = self.rel("images", "%s-%s.oci-archive.tar" % (base, tag))
        path = os.path.join(self.mirror, rel)
        if not os.path.exists(path):
            recipe = self.image_recipe(base, tag.lstrip("v"))
            build_image(self.work, ref, recipe, path)
        return rel

    def image_recipe(self, base, version):
        """{'files': {image path: host path}, 'links': {path: target}, 'entrypoint': [...], 'iptables': bool}"""
        if base in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"):
            out = self.out("kubernetes", version)
            return {"files": {"/usr/local/bin/" + base: os.path.join(out, base)}, "entrypoint": ["/usr/local/bin/" + base],
                    "iptables": base == "kube-proxy"}
        if base == "pause":
            return {"files": {"/pause": os.path.join(self.out("kubernetes", self.kubernetes), "pause")},
                    "entrypoint": ["/pause"], "user": "65535:65535"}
        if base == "coredns":
            return {"files": {"/coredns": os.path.join(self.out("coredns", version), "coredns")},
                    "entrypoint": ["/coredns"], "user": "65532:65532"}
        if base == "flannel":
            return {"files": {"/opt/bin/flanneld": os.path.join(self.out("flannel", version), "flanneld")},
                    "entrypoint": ["/opt/bin/flanneld"], "iptables": True, "busybox": True}
        if base == "flannel-cni-plugin":  # the lab's stand-in (gobuild.py says why), under the upstream name
            return {"files": {"/flannel": os.path.join(self.out("flannel-cni-plugin", version), "flannel")},
                    "entrypoint": ["/flannel"], "busybox": True, "standin": True}
        if base == "local-path-provisioner":  # upstream: alpine (a busybox shell) + the program on PATH
            return {"files": {"/usr/bin/local-path-provisioner": os.path.join(self.out(base, version), base)},
                    "entrypoint": ["/usr/bin/local-path-provisioner"], "busybox": True}
        if base == "metrics-server":  # upstream: distroless/static, the program at /, user 65534
            return {"files": {"/metrics-server": os.path.join(self.out(base, version), base)},
                    "entrypoint": ["/metrics-server"], "user": "65534"}
        if base == "busybox":  # local-path's helper pod; busybox is C, not a Go module: Debian's, marked a stand-in
            return {"files": {}, "entrypoint": ["/bin/sh"], "busybox": True, "standin": True}
        raise gobuild.BuildError("no image recipe for %s" % base)


def shared_closure(paths):
    """{path: real path} of ``paths`` and every library ``ldd`` says they load."""
    files = {}
    for binary in paths:
        files[binary] = os.path.realpath(binary)
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False).stdout
        for lib in re.findall(r"(/\S+\.so[.\d]*)", out):
            files[lib] = os.path.realpath(lib)
    return files


# Debian's busybox (the dynamically linked one: a static glibc busybox crashes in wget's name and service look-ups,
# which load NSS modules at run time), with the NSS modules it loads and their libraries.
NSS_MODULES = ["/lib/x86_64-linux-gnu/libnss_files.so.2", "/lib/x86_64-linux-gnu/libnss_dns.so.2"]


def debian_busybox(work):
    """Path of Debian's (dynamic) /bin/busybox, out of its .deb (``apt-get download``, Debian's packages)."""
    x = os.path.join(work, "busybox-deb")
    if not os.path.exists(os.path.join(x, "bin", "busybox")):
        os.makedirs(x, exist_ok=True)
        subprocess.run(["apt-get", "-q", "-o", "APT::Sandbox::User=root", "download", "busybox"], cwd=x, check=True,
                       stdout=subprocess.DEVNULL)
        deb = glob.glob(os.path.join(x, "busybox_*.deb"))[0]
        subprocess.run(["dpkg-deb", "-x", deb, x], check=True)
    return os.path.join(x, "bin", "busybox")


def iptables_files():
    """Debian's iptables (nft backend) as this machine has it: {image path: host path} + symlinks."""
    multi = "/usr/sbin/xtables-nft-multi"
    if not os.path.exists(multi):
        raise SystemExit("fromsource: %s missing (apt-get install iptables)" % multi)
    files = shared_closure([multi] + glob.glob("/usr/lib/x86_64-linux-gnu/xtables/*.so"))
    links = {"/usr/sbin/" + n: "xtables-nft-multi" for n in IPTABLES_LINKS}
    return files, links


def build_image(work, ref, recipe, dest):
    """A from-scratch image under ``ref`` with the recipe's files, saved as an OCI archive at dest."""
    storage = os.path.join(work, "buildah")
    b = ["buildah", "--root", os.path.join(storage, "root"), "--runroot", os.path.join(storage, "run"),
         "--storage-driver", "vfs"]
    files, links = dict(recipe["files"]), {}
    if recipe.get("iptables"):
        more, links = iptables_files()
        files.update(more)
    if recipe.get("busybox"):
        busybox = debian_busybox(work)
        files.update(shared_closure([busybox] + [m for m in NSS_MODULES if os.path.exists(m)]))
        files["/bin/busybox"] = files.pop(busybox)
        links.update({"/bin/" + n: "busybox" for n in ("sh", "cp", "mkdir", "cat", "ls", "rm")})
    root = tempfile.mkdtemp(dir=work)
    for target, source in files.items():
        path = root + target
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copy2(source, path)
    for target, source in links.items():
        os.makedirs(os.path.dirname(root + target), exist_ok=True)
        os.symlink(source, root + target)
    for d in ("etc", "tmp", "var/run"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    with open(os.path.join(root, "etc", "nsswitch.conf"), "w") as f:
        f.write("hosts: files dns\n")
    ctr = subprocess.run(b + ["from", "scratch"], capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(b + ["copy", ctr, root + "/", "/"], check=True, stdout=subprocess.DEVNULL)
    config = ["--os", "linux", "--arch", ARCH, "--entrypoint", json.dumps(recipe["entrypoint"]),
              "--env", "PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/bin"]
    if recipe.get("user"):
        config += ["--user", recipe["user"]]
    if recipe.get("standin"):
        config += ["--label", "org.opencontainers.image.description=mooring lab stand-in, not the upstream build"]
    subprocess.run(b + ["config"] + config + [ctr], check=True)
    subprocess.run(b + ["commit", "-q", "--timestamp", "0", "--rm", ctr, ref], check=True, stdout=subprocess.DEVNULL)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    subprocess.run(b + ["push", "-q", ref, "oci-archive:%s.part:%s" % (dest, ref)], check=True)
    os.replace(dest + ".part", dest)
    subprocess.run(b + ["rmi", "-f", ref], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(root)
    gobuild.log("image %s -> %s" % (ref, dest))


def build(mirror, upgrades_from, base_url, work):
    """(overlay documents, unbuilt {entry: reason}) for the lab spec's lock and the locks an upgrade starts from:
    one document per add-on, its versions those the locks name (the demo's first)."""
    docs, unbuilt = {}, {}
    for upgrade_from in [None] + list(upgrades_from):
        lock = lab_lock(upgrade_from)
        for addon, version_doc in build_lock(mirror, lock, base_url, work, unbuilt).items():
            doc = docs.setdefault(addon, version_doc)
            if version_doc["versions"][0]["version"] not in [v["version"] for v in doc["versions"]]:
                doc["versions"] += version_doc["versions"]
    return docs, unbuilt


def build_lock(mirror, lock, base_url, work, unbuilt):
    """{add-on: overlay document} for one lock; what cannot be built goes to ``unbuilt``."""
    maker = Maker(mirror, work)
    maker.kubernetes = lock["addons"]["kubernetes"]["version"]
    docs = {}
    for addon, entry in sorted(lock["addons"].items()):
        if addon not in BUILT_ADDONS:
            continue  # add-ons the lab renders from synthetic manifests (releases.py)
        version, arts, images = entry["version"], [], []
        for art in entry["artifacts"]:
            if art["arch"] not in (ARCH, "all"):
                continue
            try:
                rel = maker.artifact(addon, version, art)
            except gobuild.BuildError as e:
                unbuilt["%s/%s" % (addon, art["name"])] = str(e).splitlines()[-1]
                continue
            arts.append({"name": art["name"], "kind": art["kind"], "arch": art["arch"],
                         "url": "%s/%s" % (base_url.rstrip("/"), rel), "sha256": sha256_file(os.path.join(mirror, rel)),
                         "dest": art["dest"]})
        for image in entry["images"]:
            try:
                rel = maker.image(image["ref"])
            except gobuild.BuildError as e:
                unbuilt["%s/%s" % (addon, image["ref"])] = str(e).splitlines()[-1]
                continue
            images.append({"ref": image["ref"], "digest": None,
                           "archive": {"url": "%s/%s" % (base_url.rstrip("/"), rel),
                                       "sha256": sha256_file(os.path.join(mirror, rel)), "format": "oci-archive"}})
        real = yaml.safe_load(read(os.path.join(ROOT, "catalog", "%s.yml" % addon)))
        catalog_entry = next(v for v in real["versions"] if str(v["version"]) == version)
        overlay_entry = {k: v for k, v in catalog_entry.items() if k not in ("sha256", "artifacts", "images")}
        overlay_entry.update({"sha256": {}, "artifacts": arts, "images": images})
        docs[addon] = {"name": addon, "category": real["category"], "artifacts": [], "images": [],
                       "versions": [overlay_entry]}
    return docs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", required=True)
    p.add_argument("--upgrade-from", action="append", metavar="WHICH",
                   help="tests/lab/previous.yaml's entries to build besides the demo's spec (default: %s)"
                        % " ".join(UPGRADES_FROM))
    p.add_argument("--base-url")
    p.add_argument("-o", "--output", required=True, help="overlay directory to write (one file per add-on)")
    args = p.parse_args(argv)
    mirror = os.path.abspath(args.mirror)
    with tempfile.TemporaryDirectory() as work:
        docs, unbuilt = build(mirror, args.upgrade_from or UPGRADES_FROM, args.base_url or "file://" + mirror, work)
    os.makedirs(args.output, exist_ok=True)
    for name, doc in docs.items():
        # Beside releases.py's files in the same overlay directory: other versions of the same add-ons.
        with open(os.path.join(args.output, "%s-from-source.yml" % name), "w") as f:
            f.write("# Written by tests/mirror/fromsource.py: the catalog's versions built from upstream source.\n")
            yaml.safe_dump(doc, f, sort_keys=False)
    for entry, reason in sorted(unbuilt.items()):
        gobuild.log("NOT BUILT %s: %s" % (entry, reason))
    json.dump({"versions": {n: [v["version"] for v in d["versions"]] for n, d in docs.items()}, "unbuilt": unbuilt},
              sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
