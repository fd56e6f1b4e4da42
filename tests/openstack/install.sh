#!/usr/bin/env bash
# Install what the real OpenStack test control plane needs, reusing caches outside the clone:
#   - Debian packages: MariaDB, RabbitMQ (apt); our own instances run on other ports per start
#   - wheels for requirements-services.txt, built once under
#     ${MOORING_CACHE_DIR:-/var/cache/mooring}/openstack/wheels/<hash of the file>/
#   - the services' own virtualenv ${MOORING_CACHE_DIR:-/var/cache/mooring}/openstack/venv,
#     rebuilt when the requirements hash changes, plus our fake neutron plugins package.
# Idempotent; a second run with warm caches takes a few seconds.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE="${MOORING_CACHE_DIR:-/var/cache/mooring}/openstack"
PYTHON=${OPENSTACK_PYTHON:-python3}
REQ="$HERE/requirements-services.txt"
hash=$(cat "$REQ" "$HERE/fakeplugins/pyproject.toml" | sha256sum | cut -c1-16)
WHEELS="$CACHE/wheels/$hash"
VENV="$CACHE/venv"
t0=$SECONDS
mkdir -p "$CACHE"

need_apt=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || need_apt+=(rabbitmq-server)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "openstack-install: apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null || true
  apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if [ ! -f "$WHEELS/.complete" ]; then
  echo "openstack-install: building wheels into $WHEELS (once per requirements change)"
  rm -rf "$WHEELS.tmp"
  mkdir -p "$WHEELS.tmp"
  "$PYTHON" -m venv "$CACHE/wheelbuilder"
  "$CACHE/wheelbuilder/bin/pip" install -q --disable-pip-version-check -U pip wheel setuptools
  "$CACHE/wheelbuilder/bin/pip" wheel -q --disable-pip-version-check -w "$WHEELS.tmp" -r "$REQ" pip setuptools wheel
  rm -rf "$WHEELS"
  mv "$WHEELS.tmp" "$WHEELS"
  touch "$WHEELS/.complete"
  rm -rf "$CACHE/wheelbuilder"
fi

if [ "$(cat "$VENV/.mooring-hash" 2>/dev/null)" != "$hash" ]; then
  echo "openstack-install: creating $VENV from cached wheels"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$WHEELS" -U pip setuptools wheel
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$WHEELS" -r "$REQ"
  echo "$hash" > "$VENV/.mooring-hash"
fi
# Our ML2 mechanism driver and L3 plugin (tiny, always reinstalled so edits take effect).
"$VENV/bin/pip" install -q --disable-pip-version-check --no-index --no-deps --no-build-isolation \
  --force-reinstall "$HERE/fakeplugins" >/dev/null
rm -rf "$HERE/fakeplugins/build" "$HERE"/fakeplugins/*.egg-info
echo "openstack-install: ready in $((SECONDS - t0)) s (venv $VENV)"
