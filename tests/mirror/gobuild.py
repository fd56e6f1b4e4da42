# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the catalog's Go components from their upstream Go modules, cached (lab tooling).

Upstream release files cannot be fetched here, but their source can: every component the
catalog ships is a Go program published as a Go module, and the Go module proxy is reachable
through the ``go`` command. For one component at one version this makes a small wrapper module
that requires the upstream module at exactly that version (for ``k8s.io/kubernetes`` with a
``replace`` line per staging module, ``k8s.io/api`` ... at the matching ``v0.X.Y``), builds the
programs upstream releases, stamped with the version the way upstream stamps it, and keeps them
under ``$MOORING_CACHE_DIR/gobuild/out/<name>-<version>-<key>/``, where the key covers the module
version, the Go version, the flags and this recipe. A second call with the same key builds nothing.

    gobuild.py NAME VERSION            # print the output directory (building it when missing)
    gobuild.py --list                  # the recipes

Only Go modules go through the proxy (``go mod download`` / ``go mod tidy``); nothing else is fetched.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from overlay import sha256_file  # the mirror's own helper (same folder)

# Bump when the way outputs are made changes (it is part of every key).
LAYOUT = 1
EPOCH_DATE = "1970-01-01T00:00:00Z"  # builds are reproducible; upstream stamps its own release date


def _k8s_ldflags(version, commit):
    major, minor = version.split(".")[:2]
    flags = []
    for pkg in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version"):
        for key, value in (("gitVersion", "v" + version), ("gitMajor", major), ("gitMinor", minor),
                           ("gitCommit", commit), ("gitTreeState", "clean"), ("buildDate", EPOCH_DATE)):
            flags.append("-X %s.%s=%s" % (pkg, key, value))
    return flags


# name: module(s), programs (output name -> package), how upstream stamps the version, cgo.
RECIPES = {
    "kubernetes": {
        "modules": ["k8s.io/kubernetes"],
        "staging": True,
        "programs": {name: "k8s.io/kubernetes/cmd/" + name for name in (
            "kubeadm", "kubelet", "kubectl", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
            "kube-proxy")},
        "ldflags": _k8s_ldflags,
        # The pause image's program is C in the same module; its Makefile's TAG is the image's tag.
        "c_programs": {"pause": ("build/pause/linux/pause.c", "build/pause/Makefile")},
    },
    "etcd": {
        "modules": ["go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/etcdctl/v3", "go.etcd.io/etcd/etcdutl/v3"],
        "programs": {"etcd": "go.etcd.io/etcd/server/v3", "etcdctl": "go.etcd.io/etcd/etcdctl/v3",
                     "etcdutl": "go.etcd.io/etcd/etcdutl/v3"},
        # etcd's version is a constant in go.etcd.io/etcd/api/v3/version; its Makefile stamps the commit.
        "ldflags": lambda version, commit: ["-X go.etcd.io/etcd/api/v3/version.GitSHA=%s" % commit[:7]],
    },
    "containerd": {
        "modules": ["github.com/containerd/containerd/v2"],
        "programs": {name: "github.com/containerd/containerd/v2/cmd/" + name
                     for name in ("containerd", "containerd-shim-runc-v2", "containerd-stress", "ctr")},
        "ldflags": lambda version, commit: [
            "-X github.com/containerd/containerd/v2/version.Version=v%s" % version,
            "-X github.com/containerd/containerd/v2/version.Revision=%s" % commit,
            "-X github.com/containerd/containerd/v2/version.Package=github.com/containerd/containerd/v2"],
        # As upstream's static release build: no btrfs (needs cgo headers), no devmapper.
        "tags": ["no_btrfs", "no_devmapper"],
    },
    "runc": {
        "modules": ["github.com/opencontainers/runc"],
        "programs": {"runc": "github.com/opencontainers/runc"},
        "ldflags": lambda version, commit: ["-X main.version=%s" % version, "-X main.gitCommit=%s" % commit],
        # runc's nsenter is C: cgo, linked statically with libseccomp as upstream's runc.amd64 (containerd's
        # CRI gives every pod sandbox the runtime's default seccomp profile).
        "cgo": True,
        "tags": ["seccomp", "netgo", "osusergo"],
        "extldflags": "-static",
        "debs": ["libseccomp-dev"],
    },
    "cni-plugins": {
        "modules": ["github.com/containernetworking/plugins"],
        "programs": {name: "github.com/containernetworking/plugins/plugins/%s/%s" % (kind, name)
                     for kind, names in (
                         ("main", ("bridge", "dummy", "host-device", "ipvlan", "loopback", "macvlan", "ptp",
                                   "tap", "vlan")),
                         ("ipam", ("dhcp", "host-local", "static")),
                         ("meta", ("bandwidth", "firewall", "portmap", "sbr", "tuning", "vrf")))
                     for name in names},
        "ldflags": lambda version, commit: [
            "-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=v%s" % version],
    },
    "crictl": {
        "modules": ["sigs.k8s.io/cri-tools"],
        "programs": {"crictl": "sigs.k8s.io/cri-tools/cmd/crictl"},
        "ldflags": lambda version, commit: ["-X sigs.k8s.io/cri-tools/pkg/version.Version=v%s" % version],
    },
    "coredns": {
        "modules": ["github.com/coredns/coredns"],
        "programs": {"coredns": "github.com/coredns/coredns"},
        "ldflags": lambda version, commit: ["-X github.com/coredns/coredns/coremain.GitCommit=%s" % commit[:7]],
    },
    "flannel": {
        "modules": ["github.com/flannel-io/flannel"],
        "programs": {"flanneld": "github.com/flannel-io/flannel"},
        "ldflags": lambda version, commit: ["-X github.com/flannel-io/flannel/pkg/version.Version=v%s" % version],
        # As its Makefile on amd64: cgo (the UDP backend), linked statically.
        "cgo": True,
        "extldflags": "-static",
    },
    "local-path-provisioner": {
        "modules": ["github.com/rancher/local-path-provisioner"],
        "programs": {"local-path-provisioner": "github.com/rancher/local-path-provisioner"},
        "ldflags": lambda version, commit: ["-X main.VERSION=v%s" % version],
    },
    "metrics-server": {
        "modules": ["sigs.k8s.io/metrics-server"],
        "programs": {"metrics-server": "sigs.k8s.io/metrics-server/cmd/metrics-server"},
        # As its Makefile: client-go's version package.
        "ldflags": lambda version, commit: [
            "-X k8s.io/client-go/pkg/version.gitVersion=v%s" % version,
            "-X k8s.io/client-go/pkg/version.gitCommit=%s" % commit,
            "-X k8s.io/client-go/pkg/version.buildDate=%s" % EPOCH_DATE],
    },
    # NOT upstream: flannel's CNI plugin (github.com/flannel-io/cni-plugin) is not served by the Go module
    # proxy here; this is the lab's stand-in for it, a module of this tree (tests/mirror/flannelcni).
    "flannel-cni-plugin": {
        "local": os.path.join(os.path.dirname(os.path.abspath(__file__)), "flannelcni"),
        "modules": [],
        "programs": {"flannel": "."},
        "ldflags": lambda version, commit: ["-X main.version=v%s" % version],
    },
}


class BuildError(Exception):
    pass


def log(msg):
    print("gobuild: %s" % msg, file=sys.stderr, flush=True)


def cache_root():
    return os.environ.get("MOORING_CACHE_DIR") or "/var/cache/mooring"


def go_env(root, cgo=False):
    env = dict(os.environ)
    env.update({
        "GOMODCACHE": os.path.join(root, "go", "mod"),
        "GOCACHE": os.path.join(root, "go", "build"),
        "GOFLAGS": "-buildvcs=false -mod=mod",
        "CGO_ENABLED": "1" if cgo else "0",
        "GOTOOLCHAIN": os.environ.get("GOTOOLCHAIN", "local"),
        "GOOS": "linux",
        "GOARCH": "amd64",
    })
    return env


def go_version():
    out = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


# The module proxy's answers that a moment later are different: its checksum database has answered 404 for a
# module version that it served a minute before and after; connections reset or time out. A version the proxy does
# not serve (403 "not available") is final and not retried.
TRANSIENT = ("sumdb/sum.golang.org/lookup", "i/o timeout", "connection reset", "TLS handshake timeout", "unexpected EOF",
             "502 Bad Gateway", "503 Service Unavailable", "504 Gateway Timeout")
ATTEMPTS = 4
PAUSE = 10  # seconds before the second attempt, doubled each time


def transient(text):
    return any(marker in text for marker in TRANSIENT) and "403 Forbidden" not in text


def _run(argv, cwd, env):
    for attempt in range(1, ATTEMPTS + 1):
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        if proc.returncode == 0:
            return proc.stdout
        text = (proc.stderr or proc.stdout).strip()
        if attempt == ATTEMPTS or not transient(text):
            tail = "\n".join(text.splitlines()[-25:])
            raise BuildError("%s failed (rc %d) in %s:\n%s" % (" ".join(argv[:3]), proc.returncode, cwd, tail))
        log("%s: the module proxy failed for now (attempt %d of %d), again in %d s: %s"
            % (" ".join(argv[:3]), attempt, ATTEMPTS, PAUSE * 2 ** (attempt - 1), text.splitlines()[-1][:200]))
        time.sleep(PAUSE * 2 ** (attempt - 1))


def module_info(module, version, root, env):
    """``go mod download -json`` of one module version: its Dir, GoMod and Origin (commit) when known."""
    argv = ["go", "mod", "download", "-json", "%s@v%s" % (module, version)]
    for attempt in range(1, ATTEMPTS + 1):
        proc = subprocess.run(argv, cwd=os.path.join(root, "gobuild"), env=env, capture_output=True, text=True,
                              check=False)
        try:
            info = json.loads(proc.stdout)
        except ValueError:
            info = {"Error": (proc.stderr or proc.stdout).strip() or "rc %d" % proc.returncode}
        if not info.get("Error") or attempt == ATTEMPTS or not transient(info["Error"]):
            break
        log("%s@v%s: the module proxy failed for now (attempt %d of %d), again in %d s"
            % (module, version, attempt, ATTEMPTS, PAUSE * 2 ** (attempt - 1)))
        time.sleep(PAUSE * 2 ** (attempt - 1))
    if info.get("Error"):  # e.g. a version the proxy does not serve
        raise BuildError("%s@v%s: %s" % (module, version, " ".join(info["Error"].split())))
    return info


def staging_replaces(gomod, version):
    """k8s.io/kubernetes's own ``replace k8s.io/X => ./staging/src/k8s.io/X`` lines, as module versions."""
    minor = "v0." + version.split(".", 1)[1]
    names = []
    with open(gomod) as f:
        for line in f:
            parts = line.split()
            if "=>" in parts and parts[parts.index("=>") + 1].startswith("./staging/"):
                names.append(parts[parts.index("=>") - 1])
    return ["replace %s => %s %s" % (name, name, minor) for name in sorted(set(names))]


def deb_versions(packages):
    """{package: installed version} of the Debian packages a recipe links against (part of its key)."""
    out = {}
    for package in packages or ():
        proc = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True,
                              check=False)
        if proc.returncode != 0 or not proc.stdout:
            raise BuildError("%s needs the Debian package %s (apt-get install %s)" % (package, package, package))
        out[package] = proc.stdout
    return out


def makefile_tag(path):
    """``TAG ?= X`` of an upstream Makefile (the pause image's version)."""
    with open(path) as f:
        for line in f:
            if line.startswith("TAG ?="):
                return line.split("=", 1)[1].strip()
    raise BuildError("%s: no 'TAG ?=' line" % path)


def recipe_key(name, version, gover):
    recipe = RECIPES[name]
    flags = recipe["ldflags"](version, "COMMIT")
    local = recipe.get("local")
    sources = {f: sha256_file(os.path.join(local, f)) for f in sorted(os.listdir(local))} if local else None
    material = json.dumps({"layout": LAYOUT, "local": sources, "name": name, "version": version, "go": gover,
                           "modules": recipe["modules"], "programs": recipe["programs"], "flags": flags,
                           "tags": recipe.get("tags"), "cgo": recipe.get("cgo", False),
                           "c": recipe.get("c_programs"), "ext": recipe.get("extldflags"),
                           "staging": recipe.get("staging", False), "debs": deb_versions(recipe.get("debs"))},
                          sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def write_wrapper(src, name, version, infos):
    recipe = RECIPES[name]
    lines = ["module mooring.lab/gobuild/%s" % name, "", "go 1.25.0", ""]
    lines += ["require %s v%s" % (module, version) for module in recipe["modules"]]
    if recipe.get("staging"):
        lines += [""] + staging_replaces(infos[0]["GoMod"], version)
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(src, "go.mod"), "w") as f:
        f.write("\n".join(lines) + "\n")
    imports = "\n".join('\t_ "%s"' % pkg for pkg in sorted(recipe["programs"].values()))
    with open(os.path.join(src, "tools.go"), "w") as f:
        f.write("//go:build tools\n\npackage tools\n\nimport (\n%s\n)\n" % imports)


def build(name, version, root=None):
    """The output directory of NAME at VERSION (programs by their upstream names), built when missing."""
    if name not in RECIPES:
        raise BuildError("no recipe for %s (have: %s)" % (name, ", ".join(sorted(RECIPES))))
    recipe = RECIPES[name]
    root = root or cache_root()
    gover = go_version()
    key = recipe_key(name, version, gover)
    out = os.path.join(root, "gobuild", "out", "%s-%s-%s" % (name, version, key))
    if os.path.isfile(os.path.join(out, ".done")):
        return out
    os.makedirs(os.path.join(root, "gobuild"), exist_ok=True)
    started, cpu0 = time.time(), os.times()
    log("%s %s: building from %s at v%s with %s (cached under %s)"
        % (name, version, ", ".join(recipe["modules"]), version, gover, out))
    env = go_env(root, recipe.get("cgo", False))
    infos = [module_info(module, version, root, env) for module in recipe["modules"]]
    commit = ((infos[0].get("Origin") or {}).get("Hash") or "") if infos else ""
    if recipe.get("local"):
        src = recipe["local"]
    else:
        src = os.path.join(root, "gobuild", "src", "%s-%s" % (name, version))
        write_wrapper(src, name, version, infos)
        _run(["go", "mod", "tidy"], src, env)
    tmp = out + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    ldflags = ["-s", "-w"] + recipe["ldflags"](version, commit)
    if recipe.get("extldflags"):
        ldflags.append("-extldflags=%s" % recipe["extldflags"])
    argv = ["go", "build", "-trimpath", "-ldflags", " ".join(ldflags)]
    if recipe.get("tags"):
        argv += ["-tags", ",".join(recipe["tags"])]
    for prog, pkg in sorted(recipe["programs"].items()):
        t = time.time()
        _run(argv + ["-o", os.path.join(tmp, prog), pkg], src, env)
        log("%s %s: %s built (%.0f s)" % (name, version, prog, time.time() - t))
    for prog, (path, makefile) in sorted((recipe.get("c_programs") or {}).items()):
        tag = makefile_tag(os.path.join(infos[0]["Dir"], makefile))
        _run(["gcc", "-Os", "-Wall", "-static", "-DVERSION=v%s-%s" % (tag, commit[:7] or "mooring"),
              "-o", os.path.join(tmp, prog), os.path.join(infos[0]["Dir"], path)], src, env)
    cpu1 = os.times()
    meta = {"name": name, "version": version, "go": gover, "key": key, "commit": commit,
            "modules": {i["Path"]: i["Version"] for i in infos}, "programs": sorted(os.listdir(tmp)),
            "seconds": round(time.time() - started), "cpu_seconds": round(
                (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system))}
    with open(os.path.join(tmp, ".done"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    log("%s %s: done in %d s (%d CPU-seconds)" % (name, version, meta["seconds"], meta["cpu_seconds"]))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("name", nargs="?")
    p.add_argument("version", nargs="?")
    p.add_argument("--list", action="store_true")
    args = p.parse_args(argv)
    if args.list or not args.name:
        for name, recipe in sorted(RECIPES.items()):
            print("%-12s %s" % (name, " ".join(recipe["modules"])))
        return 0
    try:
        print(build(args.name, args.version))
    except BuildError as e:
        print("gobuild: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
