#!/usr/bin/env bash
# Runs molecule scenarios on the lab (docs/lab.md). Without an argument: every scenario.
#   scripts/integration.sh [SCENARIO...]
# Sets the lab up once (apt packages, podman config, cached base image), then for each
# scenario molecule/NAME/ (directories without a molecule.yml, like molecule/shared, are
# skipped):
#   - molecule/NAME/run.sh, if executable, is run instead of molecule (with the lab
#     environment exported), for scenarios that need something special;
#   - otherwise the lab NAME's internal network is created and
#     `molecule -c molecule/shared/base.yml test -s NAME` runs; the lab is removed afterwards.
# Stops at the first failing scenario. Prints each scenario's time.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$ROOT/.venv/bin:$PATH"
LAB="python3 $ROOT/tests/lab/lab.py"
shopt -s nullglob

scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  for d in molecule/*/; do
    name=$(basename "$d")
    if [ -f "$d/molecule.yml" ] || [ -x "$d/run.sh" ]; then scenarios+=("$name"); fi
  done
fi
if [ ${#scenarios[@]} -eq 0 ]; then
  echo "integration: no molecule scenarios yet"
  exit 0
fi
for s in "${scenarios[@]}"; do
  if [ ! -f "molecule/$s/molecule.yml" ] && [ ! -x "molecule/$s/run.sh" ]; then
    echo "integration: no scenario '$s' (molecule/$s/molecule.yml or an executable molecule/$s/run.sh)" >&2
    exit 2
  fi
done

t0=$SECONDS
echo "::: lab setup (podman, netavark, config)"
$LAB setup < /dev/null
echo "::: lab self-tests (naming, subnets, inventory, route guard on the real kernel, old networks recreated)"
python -m pytest -q -p no:cacheprovider tests/lab
t1=$SECONDS
$LAB image < /dev/null >/dev/null
echo "::: lab image ready in $((SECONDS - t1))s"
# Exports the podman configuration and MOORING_ROUTE_GUARD: controller-side connections
# (etcd client, readyz, fetches, OpenStack) refuse addresses not routed through a lab bridge.
eval "$($LAB env)"
# The test mirror (the lab's stand-in for the internet), built once for every scenario, under
# MOORING_CACHE_DIR like every other cache; its own tests (tests/mirror/test_mirror.py) run here,
# right after it is built, never against whatever an older build left in the cache.
export MOORING_CACHE_DIR=${MOORING_CACHE_DIR:-/var/cache/mooring}
export MOORING_MIRROR_DIR=${MOORING_MIRROR_DIR:-$MOORING_CACHE_DIR/mirror}
t1=$SECONDS
tests/mirror/build.sh < /dev/null
echo "::: test mirror ready in $((SECONDS - t1))s ($MOORING_MIRROR_DIR)"
python -m pytest -q -p no:cacheprovider tests/mirror/test_mirror.py
echo "::: lab ready in $((SECONDS - t0))s (image $MOORING_LAB_IMAGE)"

# Scenarios run with .venv's ansible-core (2.19) but those named here, which run under the
# line given (scripts/corevenv.sh): install covers the oldest line meta/runtime.yml declares.
declare -A SCENARIO_CORE=([install]=2.17)

declare -a TIMES=()
current=""
cleanup() {
  if [ -n "$current" ]; then $LAB down "$current" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

for s in "${scenarios[@]}"; do
  t=$SECONDS
  eval "$($LAB env "$s")"
  if [ -x "molecule/$s/run.sh" ]; then
    echo "::: scenario $s: molecule/$s/run.sh"
    rc=0; "molecule/$s/run.sh" < /dev/null || rc=$?
  else
    echo "::: scenario $s: molecule test on lab $s ($MOORING_LAB_NET.0/24)"
    current=$s
    $LAB down "$s" >/dev/null
    $LAB net "$s" >/dev/null
    # Its own /dev/null: podman and buildah set O_NONBLOCK on an inherited stdin, and ansible
    # then refuses to start ("Ansible requires blocking IO on stdin").
    core=${SCENARIO_CORE[$s]:-2.19}
    venv=$(scripts/corevenv.sh "$core")
    echo "::: scenario $s runs under ansible-core $("$venv/bin/python" -c 'import ansible.release as r; print(r.__version__)') ($venv)"
    rc=0; PATH="$venv/bin:$PATH" PYTHONPATH="$ROOT/.work/collections${PYTHONPATH:+:$PYTHONPATH}" \
      molecule -c molecule/shared/base.yml test -s "$s" < /dev/null || rc=$?
    $LAB down "$s" >/dev/null || true
    current=""
  fi
  TIMES+=("$s $((SECONDS - t))s")
  if [ "$rc" -ne 0 ]; then
    echo "::: integration FAILED: scenario '$s' exited $rc after $((SECONDS - t))s" \
         "(rerun alone: make test-integration SCENARIO=$s)" >&2
    echo "::: scenario times: ${TIMES[*]}"
    exit "$rc"
  fi
  echo "::: scenario $s passed in $((SECONDS - t))s"
done
echo "::: scenario times: ${TIMES[*]}"
