#!/usr/bin/env bash
# A virtualenv with one ansible-core release line the collection declares (meta/runtime.yml),
# for the test matrix: the same tests/requirements.txt as .venv, with ansible-core and the
# `ansible` package that goes with it pinned to that line. Prints the venv's path.
#   scripts/corevenv.sh 2.17     ansible-core 2.17.x with ansible 10.x
#   scripts/corevenv.sh 2.18     ansible-core 2.18.x with ansible 11.x
#   scripts/corevenv.sh 2.19     .venv itself (ansible-core 2.19.x, ansible 12.x: scripts/setup.sh)
# The venv lives in ${MOORING_CACHE_DIR:-/var/cache/mooring}/venvs/core-<line>-<hash>, the hash
# taken over the requirement lists and the pins, and is built only when it is missing. Nothing
# of the checkout is installed in it: callers put .work/collections on PYTHONPATH and
# ANSIBLE_COLLECTIONS_PATH, so one cached venv serves every checkout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
line=${1:?usage: scripts/corevenv.sh 2.17|2.18|2.19}

case "$line" in
  2.17) ansible_pin='ansible==10.*' ;;
  2.18) ansible_pin='ansible==11.*' ;;
  2.19) echo "$ROOT/.venv"; exit 0 ;;
  *) echo "corevenv.sh: ansible-core $line is not a line meta/runtime.yml declares (2.17, 2.18, 2.19)" >&2; exit 2 ;;
esac

cache=${MOORING_CACHE_DIR:-/var/cache/mooring}/venvs
pins="ansible-core==$line.*
$ansible_pin"
hash=$(cd "$ROOT" && { cat requirements.txt requirements-openstack.txt tests/requirements.txt; echo "$pins"; } | sha256sum | cut -c1-16)
venv=$cache/core-$line-$hash
# A venv's scripts name its path, so it is built where it stays; the marker is written last,
# so a build cut off half way is built again. One build at a time per venv (the matrix and an
# integration lane may ask for the same line at once): the others wait for it.
mkdir -p "$cache"
exec 9> "$venv.lock"
flock 9
if [ ! -f "$venv/.complete" ]; then
  echo "corevenv: building ansible-core $line in $venv" >&2
  rm -rf "$venv"
  mkdir -p "$cache"
  python3 -m venv "$venv" >&2
  echo "$pins" > "$venv/constraints.txt"
  (cd "$ROOT/tests" && "$venv/bin/pip" install --disable-pip-version-check -q \
      -c "$venv/constraints.txt" -r requirements.txt) >&2
  touch "$venv/.complete"
fi
version=$("$venv/bin/python" -c 'import ansible.release as r; print(r.__version__)')
case "$version" in "$line".*) ;; *) echo "corevenv.sh: $venv runs ansible-core $version, not $line" >&2; exit 1 ;; esac
echo "$venv"
