#!/usr/bin/env bash
# The mooring.cluster execution environment (EE), built offline on this machine and tried
# against a lab host. docs/execution-environment.md explains the pieces.
#
#   scripts/ee.sh build   collection tarball + base image + wheelhouse + `ansible-builder create`
#                         + `podman build --network=none`; tagged localhost/mooring/ee:<version>;
#                         does nothing when no input changed (prints "up to date")
#   scripts/ee.sh run     lab `ee1` (1 host), then `ansible-runner run` of mooring.cluster.preflight
#                         inside the EE against it, attached only to the lab's internal network;
#                         checks status, rc and the host's result; brings the lab down again
#                         (MOORING_EE_KEEP_LAB=1 keeps it)
#   scripts/ee.sh down    remove lab `ee1`
#   scripts/ee.sh base    only the base image (prints its reference)
#   scripts/ee.sh wheels  only the wheelhouse (prints its directory)
#
# Root only (rootful podman, debootstrap). The network this needs: Debian's mirror for the base
# image (debootstrap, once per recipe) and PyPI for the wheelhouse (pip, once per requirement
# set), both on the host. The image build itself runs with no network at all.
#
# Caches: ${MOORING_CACHE_DIR:-/var/cache/mooring}/ee/ (base-<hash>.tar, wheels/<hash>/);
# build output: .work/ee/ (collection tarball, build context, runner data dir). Podman uses the
# lab's storage and configuration (`tests/lab/lab.py env`), so the EE lives next to the lab image.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export MOORING_CACHE_DIR=${MOORING_CACHE_DIR:-/var/cache/mooring}
EE_CACHE=$MOORING_CACHE_DIR/ee
WORK=.work/ee
VENV=$ROOT/.venv/bin
PY=$VENV/python
LAB=ee1
LAB_PY=(python3 tests/lab/lab.py)
TOOL=("$PY" tests/ee/eetool.py)
EE_DEF=ee/execution-environment.yml
# No network in any RUN step; no registry; no layer cache (each stage's layers would stay in the
# lab's storage after every rebuild, ~0.5 GB each time, for a saving of seconds).
BUILD_ARGS=(--network=none --pull=never --layers=false)
EE_REPO=localhost/mooring/ee
BASE_REPO=localhost/mooring/ee-base
SUITE=bookworm
MIRROR=${MOORING_LAB_MIRROR:-http://deb.debian.org/debian}

# ------------------------------------------------------------------ base image recipe
# Everything below is hashed into the base image's tag: change it and the base is rebuilt.
# What ansible-builder's stages run (python3 -m pip, python3 -m venv, bindep's dpkg-query,
# apt-get as the package manager) plus the system packages of bindep.txt, preinstalled,
# because the build has no network to install them from.
# netavark: skopeo's containers-common depends on the virtual container-network-stack, which
# debootstrap cannot resolve by itself.
BASE_INCLUDE=python3,python3-pip,python3-venv,ca-certificates,dumb-init,openssh-client,skopeo,netavark,zstd,iproute2
BASE_CHANGES=('CMD ["bash"]' 'ENV LANG=C.UTF-8'
              'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
# shellcheck disable=SC2016  # a script for `bash -c` (the rootfs as $1): it expands there, not here
BASE_CUSTOMISE='
set -eu
R=$1
: > "$R/etc/machine-id"
rm -f "$R/var/lib/dbus/machine-id"
rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*.bin "$R"/var/cache/apt/archives/*.deb "$R"/var/log/*.log
find "$R/usr/lib/python3" "$R/usr/lib/python3.11" -name __pycache__ -prune -exec rm -rf {} +
'

die() { echo "ee.sh: $*" >&2; exit 1; }
say() { echo "ee.sh: $*" >&2; }

lab_env() {
  [ "$(id -u)" = 0 ] || die "needs root (rootful podman, debootstrap)"
  "${LAB_PY[@]}" setup >/dev/null
  eval "$("${LAB_PY[@]}" env "$LAB")"
  export CONTAINERS_CONF CONTAINERS_STORAGE_CONF
}

version() { "$PY" -c 'import yaml; print(yaml.safe_load(open("galaxy.yml"))["version"])'; }

# ------------------------------------------------------------------ 1. collection tarball
# Built from the files git would see (tracked + untracked, minus .gitignore), so lab
# inventories, .venv and caches in the checkout never end up in it. Replaced only when its
# MANIFEST.json (which carries every file's sha256) changes, so an unchanged tree keeps the
# build cached.
tarball() {
  local stage=$WORK/src out=$WORK/collection new
  rm -rf "$stage" "$WORK/collection.new"
  mkdir -p "$stage" "$out" "$WORK/collection.new"
  git ls-files -z -co --exclude-standard | "$PY" -c '
import os, sys
names = [n for n in sys.stdin.buffer.read().split(b"\0") if n and os.path.lexists(n)]
sys.stdout.buffer.write(b"\0".join(names))' | tar --null -T - -cf - | tar -C "$stage" -xf -
  "$VENV/ansible-galaxy" collection build --output-path "$WORK/collection.new" "$stage" >/dev/null
  new=$(ls "$WORK"/collection.new/*.tar.gz)
  if [ -f "$out/mooring-cluster.tar.gz" ] && cmp -s <(tar -xzOf "$new" MANIFEST.json) \
       <(tar -xzOf "$out/mooring-cluster.tar.gz" MANIFEST.json); then
    say "collection tarball unchanged"
  else
    mv "$new" "$out/mooring-cluster.tar.gz"
    say "collection tarball $(basename "$new") -> $out/mooring-cluster.tar.gz"
  fi
  rm -rf "$WORK/collection.new" "$stage"
}

# ------------------------------------------------------------------ 2. base image
base_hash() {
  printf '%s\0' "$SUITE" "$BASE_INCLUDE" "$BASE_CUSTOMISE" "${BASE_CHANGES[@]}" | sha256sum | cut -c1-12
}

base_image() {  # prints the base image reference; builds it when missing
  local tag ref tar tmp args=()
  tag=$(base_hash)
  ref=$BASE_REPO:$tag
  if podman image exists "$ref"; then echo "$ref"; return; fi
  tar=$EE_CACHE/base-$tag.tar
  mkdir -p "$EE_CACHE"
  if [ ! -f "$tar" ]; then
    say "building the EE base rootfs with debootstrap ($SUITE; about a minute)"
    tmp=$(mktemp -d "$EE_CACHE/rootfs.XXXXXX")
    debootstrap --variant=minbase --include="$BASE_INCLUDE" "$SUITE" "$tmp/rootfs" "$MIRROR" >"$tmp/debootstrap.log" 2>&1 \
      || { tail -20 "$tmp/debootstrap.log" >&2; die "debootstrap failed; rootfs left in $tmp for inspection"; }
    bash -c "$BASE_CUSTOMISE" customise "$tmp/rootfs"
    tar -C "$tmp/rootfs" --numeric-owner -cf "$tar.part" .
    mv "$tar.part" "$tar"
    rm -rf "$tmp"
  fi
  for c in "${BASE_CHANGES[@]}"; do args+=(--change "$c"); done
  podman import -q "${args[@]}" "$tar" "$ref" >/dev/null
  podman tag "$ref" "$BASE_REPO:$SUITE"
  for old in "$EE_CACHE"/base-*.tar; do [ "$old" = "$tar" ] || rm -f "$old"; done
  echo "$ref"
}

# ------------------------------------------------------------------ 3. wheelhouse
# Every distribution pip installs in any build stage, as wheels, fetched on the host:
# the requirement list is derived from the EE definition (eetool.py wheel-requirements).
wheelhouse() {  # prints the wheelhouse directory
  local reqs=$WORK/wheelhouse-requirements.txt key dir
  mkdir -p "$WORK"
  "${TOOL[@]}" wheel-requirements "$EE_DEF" >"$reqs.new"
  mv "$reqs.new" "$reqs"
  key=$(cat "$reqs" requirements.txt | sha256sum | cut -c1-12)
  dir=$EE_CACHE/wheels/$key
  if [ ! -d "$dir" ]; then
    say "fetching the wheelhouse $key from PyPI (pip wheel on the host)"
    rm -rf "$dir.part"
    mkdir -p "$dir.part"
    # (grep: this machine's pip configuration names local index directories that may be absent)
    "$PY" -m pip wheel -q --wheel-dir "$dir.part" -r "$reqs" >"$WORK/pip-wheel.log" 2>&1 \
      || { grep -v "^WARNING: Location 'file:" "$WORK/pip-wheel.log" >&2; die "pip wheel failed"; }
    mv "$dir.part" "$dir"
  fi
  echo "$dir"
}

# ------------------------------------------------------------------ build
cmd_build() {
  local t0 base wheels ctx inputs ref have old
  t0=$(date +%s.%N)
  lab_env
  tarball
  base=$(base_image)
  say "base image $base ($(elapsed "$t0") s)"
  wheels=$(wheelhouse)
  say "wheelhouse $wheels ($(elapsed "$t0") s)"
  ctx=$WORK/context
  rm -rf "$ctx"
  "$VENV/ansible-builder" create -f "$EE_DEF" -c "$ctx" --output-filename Containerfile -v 1 >/dev/null
  # The wheelhouse goes into the build context; podman mounts it read-only at /wheelhouse for
  # every RUN step (no layer holds it) and the EE's /etc/pip.conf points pip at it only.
  # (Beside _build, not in it: the galaxy stage copies all of _build.)
  cp -a "$wheels" "$ctx/wheelhouse"
  (echo "base $base"; echo "wheels $wheels"; echo "podman-build ${BUILD_ARGS[*]}"; cd "$ctx" && find . -path ./wheelhouse -prune -o -type f -print0 \
     | sort -z | xargs -0 sha256sum) >"$WORK/inputs.new"
  inputs=$(sha256sum <"$WORK/inputs.new" | cut -c1-16)
  ref=$EE_REPO:$(version)
  have=$(podman image inspect --format '{{index .Labels "mooring.ee.inputs"}}' "$ref" 2>/dev/null || true)
  if [ "$have" = "$inputs" ]; then
    say "$ref up to date (inputs $inputs) in $(elapsed "$t0") s"
    mv "$WORK/inputs.new" "$WORK/inputs.txt"
    return 0
  fi
  [ ! -f "$WORK/inputs.txt" ] || say "changed inputs: $(diff "$WORK/inputs.txt" "$WORK/inputs.new" | awk '/^>/ {print $NF}' | tr '\n' ' ')"
  mv "$WORK/inputs.new" "$WORK/inputs.txt"
  old=$(podman image inspect --format '{{.Id}}' "$ref" 2>/dev/null || true)
  say "building $ref from $base (no network; $(elapsed "$t0") s)"
  podman build "${BUILD_ARGS[@]}" -v "$ROOT/$ctx/wheelhouse:/wheelhouse:ro" \
    --build-arg EE_BASE_IMAGE="$base" --label mooring.ee.inputs="$inputs" \
    -f "$ctx/Containerfile" -t "$ref" "$ctx" >"$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log" >&2; die "podman build failed; full log: $WORK/build.log"; }
  # The image this tag named before, if nothing else names it now (never anyone else's images).
  if [ -n "$old" ] && [ "$old" != "$(podman image inspect --format '{{.Id}}' "$ref")" ] \
     && [ -z "$(podman image inspect --format '{{join .RepoTags ""}}' "$old" 2>/dev/null)" ]; then
    podman rmi "$old" >/dev/null 2>&1 || true
  fi
  say "built $ref in $(elapsed "$t0") s; $(podman image inspect --format '{{.Size}}' "$ref" | numfmt --to=iec) "
}

elapsed() { "$PY" -c "import sys, time; print('%.1f' % (time.time() - float(sys.argv[1])))" "$1"; }

# ------------------------------------------------------------------ run
cmd_run() {
  local ref net data=$WORK/runner rc=0
  lab_env
  ref=$EE_REPO:$(version)
  podman image exists "$ref" || die "$ref does not exist: run scripts/ee.sh build first"
  net=$MOORING_LAB_NETWORK
  if ! "${LAB_PY[@]}" status "$LAB" >/dev/null 2>&1; then
    "${LAB_PY[@]}" down "$LAB" >/dev/null
    "${LAB_PY[@]}" up "$LAB" -n 1 >&2
  fi
  [ "${MOORING_EE_KEEP_LAB:-}" = 1 ] || trap '"${LAB_PY[@]}" down "$LAB" >&2' EXIT
  # The private data dir: tests/ee/runner (project, env/settings, env/envvars) plus what only
  # this machine knows: the inventory (the lab's hosts without its host-side ProxyCommand), the
  # lab key, the lab's known_hosts and the image's tag. Kept under .work so the key never lands
  # in the checkout or the tarball.
  rm -rf "$data"
  mkdir -p "$data"
  cp -a tests/ee/runner/. "$data/"
  mkdir -p "$data/inventory" "$data/env"
  # Host keys are checked inside the EE as everywhere else: against the lab's known_hosts (the
  # keys lab.py read through podman), copied to env/known_hosts, which is /runner/env/known_hosts
  # in the container (runner mounts the whole data dir at /runner). Not in inventory/: runner
  # passes that directory as `-i`, and ansible would try every file in it as an inventory.
  # No file, or no key for a host: refuse, never fall back to not checking.
  "${TOOL[@]}" known-hosts "inventories/lab/$LAB/hosts.yml" "$MOORING_LAB_KNOWN_HOSTS"
  install -m 0644 "$MOORING_LAB_KNOWN_HOSTS" "$data/env/known_hosts"
  "${TOOL[@]}" inventory "inventories/lab/$LAB/hosts.yml" /runner/env/known_hosts >"$data/inventory/hosts.yml"
  install -m 0600 "$MOORING_LAB_KEY" "$data/env/ssh_key"
  "${TOOL[@]}" settings "$data/env/settings" "$ref" "$net"
  # Refuse unless a container made with exactly these settings is attached to the lab's
  # internal network and nothing else.
  "${TOOL[@]}" netcheck "$data/env/settings" "$net"
  say "ansible-runner run $data -p preflight.yml (in $ref, network $net only)"
  "$VENV/ansible-runner" run "$data" -p preflight.yml --ident ee1 >"$WORK/runner.log" 2>&1 || rc=$?
  "${TOOL[@]}" result "$data/artifacts/ee1" "$LAB-1" || { tail -30 "$WORK/runner.log" >&2; exit 1; }
  [ "$rc" = 0 ] || die "ansible-runner exited $rc"
}

case "${1:-}" in
  build) cmd_build ;;
  run) cmd_run ;;
  down) lab_env; "${LAB_PY[@]}" down "$LAB" ;;
  base) lab_env; base_image ;;
  wheels) wheelhouse ;;
  *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
