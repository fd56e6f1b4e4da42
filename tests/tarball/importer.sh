#!/usr/bin/env bash
# galaxy-importer (what Galaxy runs on an upload) on the built tarball, offline: no container, no
# ansible-test, no ansible-lint (galaxy-importer.cfg says why), no network. Its own venv from
# importer-requirements.txt, cached under ${MOORING_CACHE_DIR:-/var/cache/mooring}/galaxy-importer/
# by the sha256 of that file and made only when missing. Any ERROR in its output or a non-zero exit
# fails; its warnings are shown.
# Usage: tests/tarball/importer.sh TARBALL WORKDIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TARBALL=$(realpath "$1")
W=$2
CACHE=${MOORING_CACHE_DIR:-/var/cache/mooring}
fail() { echo "importer: FAILED: $*" >&2; exit 1; }
mkdir -p "$W"
W=$(realpath "$W")

REQ="$HERE/importer-requirements.txt"
want=$(sha256sum "$REQ" | cut -d' ' -f1)
VENV="$CACHE/galaxy-importer/venv-${want:0:16}"
if [ "$(cat "$VENV/.ready" 2>/dev/null)" != "$want" ]; then
  echo "importer: a venv for $(grep -m1 '^galaxy-importer==' "$REQ") in $VENV"
  mkdir -p "$CACHE/galaxy-importer" || fail "cannot create $CACHE/galaxy-importer; set MOORING_CACHE_DIR"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --disable-pip-version-check -q -r "$REQ" > "$W/pip.log" 2>&1 \
    || { cat "$W/pip.log" >&2; fail "pip install -r $REQ"; }
  echo "$want" > "$VENV/.ready"
fi

import() {  # import TARBALL LOG: galaxy-importer on TARBALL, its output in LOG; returns its exit code
  local rc=0
  rm -rf "$W/tmp" "$W/ansible-tmp"
  mkdir -p "$W/tmp" "$W/ansible-tmp"
  # its ansible-doc is the venv's; nothing of the user's or the checkout's configuration; run in $W,
  # where it writes importer_result.json
  (cd "$W" && env -u ANSIBLE_CONFIG -u ANSIBLE_COLLECTIONS_PATH -u ANSIBLE_COLLECTIONS_PATHS -u PYTHONPATH \
    PATH="$VENV/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME="$W" \
    GALAXY_IMPORTER_CONFIG="$HERE/galaxy-importer.cfg" \
    GALAXY_IMPORTER_TMP_ROOT_DIR="$W/tmp" GALAXY_IMPORTER_ANSIBLE_LOCAL_TMP="$W/ansible-tmp" \
    "$VENV/bin/python" -m galaxy_importer.main "$1") > "$2" 2>&1 || rc=$?
  return "$rc"
}

# galaxy.yml names no repository: the project has no public address yet, and galaxy.yml says it
# leaves the field out rather than fill it with a placeholder. galaxy-importer requires it and stops
# at that, before any other check. So the tarball must be refused for exactly that reason, and the
# same tarball with a repository in its MANIFEST.json (example.invalid: a name reserved never to
# resolve) must pass every other check. When galaxy.yml gets its address, the first import passes
# and this says so.
rc=0
import "$TARBALL" "$W/importer-as-built.log" || rc=$?
if [ "$rc" -eq 0 ] && grep -q '^Importer processing completed successfully' "$W/importer-as-built.log" \
   && ! grep -q 'ERROR' "$W/importer-as-built.log"; then
  LOG="$W/importer-as-built.log"
  echo "importer: the tarball as built passes"
else
  if [ "$(grep -c 'ERROR' "$W/importer-as-built.log")" != 1 ] \
     || ! grep -q "ERROR: .*Invalid collection metadata. 'repository' is required" "$W/importer-as-built.log"; then
    sed 's/^/  /' "$W/importer-as-built.log" >&2
    fail "galaxy-importer refused the tarball as built (exit $rc), not for its missing repository"
  fi
  echo "importer: KNOWN GAP: galaxy-importer refuses the tarball as built only because galaxy.yml names no repository:"
  grep 'repository' "$W/importer-as-built.log" | sed 's/^/  /'
  mkdir -p "$W/with-repository"
  (cd "$W/with-repository" && rm -rf x && mkdir x && tar -C x -xzf "$TARBALL" \
    && python3 -c 'import json, sys; p = "x/MANIFEST.json"; m = json.load(open(p)); m["collection_info"]["repository"] = "https://example.invalid/mooring.cluster"; json.dump(m, open(p, "w"), indent=4)' \
    && tar -C x -czf "$(basename "$TARBALL")" .)
  rc=0
  import "$W/with-repository/$(basename "$TARBALL")" "$W/importer.log" || rc=$?
  LOG="$W/importer.log"
  echo "importer: every other check, on the tarball with a repository in MANIFEST.json:"
fi
grep -v '^Loading ' "$LOG" | grep -v '^\s*$' | sed 's/^/  /'
echo "  ($(grep -c '^Loading ' "$LOG") plugins, roles and module_utils loaded)"
[ "$rc" -eq 0 ] || fail "galaxy-importer exited $rc"
if grep -n 'ERROR' "$LOG"; then
  fail "galaxy-importer reported an ERROR"
fi
grep -q '^Importer processing completed successfully' "$LOG" || fail "galaxy-importer did not complete"
echo "importer: OK, $(grep -c '^WARNING' "$LOG") warning(s)"
