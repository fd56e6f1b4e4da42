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

mkdir -p "$W/tmp" "$W/ansible-tmp"
# its ansible-doc is the venv's; nothing of the user's or the checkout's configuration
rc=0
env -u ANSIBLE_CONFIG -u ANSIBLE_COLLECTIONS_PATH -u ANSIBLE_COLLECTIONS_PATHS -u PYTHONPATH \
  PATH="$VENV/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME="$W" \
  GALAXY_IMPORTER_CONFIG="$HERE/galaxy-importer.cfg" \
  GALAXY_IMPORTER_TMP_ROOT_DIR="$W/tmp" GALAXY_IMPORTER_ANSIBLE_LOCAL_TMP="$W/ansible-tmp" \
  "$VENV/bin/python" -m galaxy_importer.main "$TARBALL" > "$W/importer.log" 2>&1 || rc=$?
grep -v '^Loading ' "$W/importer.log" | grep -v '^\s*$' | sed 's/^/  /'
echo "  ($(grep -c '^Loading ' "$W/importer.log") plugins, roles and module_utils loaded)"
[ "$rc" -eq 0 ] || fail "galaxy-importer exited $rc"
if grep -n 'ERROR' "$W/importer.log"; then
  fail "galaxy-importer reported an ERROR"
fi
grep -q '^Importer processing completed successfully' "$W/importer.log" || fail "galaxy-importer did not complete"
echo "importer: OK, $(grep -c '^WARNING' "$W/importer.log") warning(s)"
