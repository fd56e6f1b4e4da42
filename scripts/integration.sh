#!/usr/bin/env bash
# Runs molecule scenarios on the lab (docs/lab.md). Without an argument: every scenario.
#   scripts/integration.sh [SCENARIO...]
#   scripts/integration.sh --prepare   only the lab's setup, its image and the test mirror (the Go builds):
#                                      scripts/test.sh runs it early, in the background
# Sets the lab up once (apt packages, podman config, cached base image), then for each
# scenario molecule/NAME/ (directories without a molecule.yml, like molecule/shared, are
# skipped):
#   - molecule/NAME/run.sh, if executable, is run instead of molecule (with the lab
#     environment exported), for scenarios that need something special;
#   - otherwise the lab NAME's internal network is created and
#     `molecule -c molecule/shared/base.yml test -s NAME` runs; the lab is removed afterwards.
# Every scenario has its own lab (hosts, network, subnet), so scenarios can run side by side:
# with more than one scenario they run in two lanes (LANE_WAITING below: the scenarios that mostly
# wait - fault samplers, timers, OpenStack's start-up - go to the second lane; every other one to the
# first). Each lane runs its scenarios one after the other; a scenario's output goes to
# .work/ci/scenario-NAME.log and is printed whole when it ends. A failure stops both lanes before
# their next scenario. Prints each scenario's time. MOORING_LANES=1 runs them one after the other.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$ROOT/.venv/bin:$PATH"
LAB="python3 $ROOT/tests/lab/lab.py"
shopt -s nullglob

prepare_only=0
if [ "${1:-}" = --prepare ]; then prepare_only=1; shift; fi
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
mkdir -p "$ROOT/.work/ci"
rm -f "$ROOT/.work/ci/lab.ready"
echo "::: lab setup (podman, netavark, config)"
$LAB setup < /dev/null
if [ "$prepare_only" = 0 ]; then
  echo "::: lab self-tests (naming, subnets, inventory, route guard on the real kernel, old networks recreated)"
  python -m pytest -q -p no:cacheprovider tests/lab
fi
t1=$SECONDS
$LAB image < /dev/null >/dev/null
echo "::: lab image ready in $((SECONDS - t1))s"
touch "$ROOT/.work/ci/lab.ready"  # scripts/test.sh's ee stage waits for this, not for the mirror
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
if [ "$prepare_only" = 1 ]; then exit 0; fi
python -m pytest -q -p no:cacheprovider tests/mirror/test_mirror.py
echo "::: lab ready in $((SECONDS - t0))s (image $MOORING_LAB_IMAGE)"

# Scenarios run with .venv's ansible-core (2.19) but those named here, which run under the
# line given (scripts/corevenv.sh): install covers the oldest line meta/runtime.yml declares.
declare -A SCENARIO_CORE=([install]=2.17)

# The second lane: scenarios that mostly wait (etcdroll's fault sampler, openstack's start-up, the etcd
# timers), so that the first lane's CPU-bound scenarios (the real cluster) go on beside them; proxy (short) evens
# the lanes out (about 50 minutes each on 2 cores since the install scenario applies three add-ons).
LANE_WAITING=(etcdroll openstack etcd haendpoint bundle_containerd proxy)
LOGS="$ROOT/.work/ci"
mkdir -p "$LOGS"
FAILED="$LOGS/integration.failed"
TIMES_FILE="$LOGS/integration.times"
rm -f "$FAILED" "$TIMES_FILE"

run_one() {  # run_one NAME: one scenario on its own lab; its exit code
  local s=$1 rc=0 core venv
  eval "$($LAB env "$s")"
  if [ -x "molecule/$s/run.sh" ]; then
    echo "::: scenario $s: molecule/$s/run.sh"
    "molecule/$s/run.sh" < /dev/null || rc=$?
  else
    echo "::: scenario $s: molecule test on lab $s ($MOORING_LAB_NET.0/24)"
    $LAB down "$s" >/dev/null
    $LAB net "$s" >/dev/null
    # Its own /dev/null: podman and buildah set O_NONBLOCK on an inherited stdin, and ansible
    # then refuses to start ("Ansible requires blocking IO on stdin").
    core=${SCENARIO_CORE[$s]:-2.19}
    venv=$(scripts/corevenv.sh "$core")
    echo "::: scenario $s runs under ansible-core $("$venv/bin/python" -c 'import ansible.release as r; print(r.__version__)') ($venv)"
    PATH="$venv/bin:$PATH" PYTHONPATH="$ROOT/.work/collections${PYTHONPATH:+:$PYTHONPATH}" \
      molecule -c molecule/shared/base.yml test -s "$s" < /dev/null || rc=$?
    $LAB down "$s" >/dev/null 2>&1 || true
  fi
  return "$rc"
}

lane() {  # lane NAME...: the scenarios one after the other, each logged, printed whole when it ends
  local s t rc log
  for s in "$@"; do
    if [ -e "$FAILED" ]; then
      echo "::: scenario $s not run: $(cat "$FAILED") failed"
      continue
    fi
    t=$SECONDS
    log="$LOGS/scenario-$s.log"
    echo "::: scenario $s started"
    rc=0; (run_one "$s") > "$log" 2>&1 || rc=$?
    # Whole logs, one at a time, so that two lanes' lines never interleave.
    (
      flock 9
      cat "$log"
      if [ "$rc" -ne 0 ]; then
        echo "::: integration FAILED: scenario '$s' exited $rc after $((SECONDS - t))s" \
             "(rerun alone: make test-integration SCENARIO=$s)"
      else
        echo "::: scenario $s passed in $((SECONDS - t))s"
      fi
      echo "$s $((SECONDS - t))s" >> "$TIMES_FILE"
    ) 9> "$LOGS/integration.lock"
    if [ "$rc" -ne 0 ]; then
      echo "$s" > "$FAILED"
      return "$rc"
    fi
  done
}

declare -a FIRST=() SECOND=()
for s in "${scenarios[@]}"; do
  if [ "${MOORING_LANES:-2}" != 1 ] && [ ${#scenarios[@]} -gt 1 ] && [[ " ${LANE_WAITING[*]} " == *" $s "* ]]; then
    SECOND+=("$s")
  else
    FIRST+=("$s")
  fi
done

rc=0
if [ ${#SECOND[@]} -eq 0 ]; then
  if [ ${#FIRST[@]} -eq 1 ]; then
    # One scenario: its output as it comes.
    t=$SECONDS
    run_one "${FIRST[0]}" || rc=$?
    echo "${FIRST[0]} $((SECONDS - t))s" >> "$TIMES_FILE"
    [ "$rc" -eq 0 ] || echo "::: integration FAILED: scenario '${FIRST[0]}' exited $rc" \
                            "(rerun alone: make test-integration SCENARIO=${FIRST[0]})" >&2
  else
    lane "${FIRST[@]}" || rc=$?
  fi
else
  echo "::: lanes: [${FIRST[*]}] beside [${SECOND[*]}]"
  lane "${FIRST[@]}" & first=$!
  lane "${SECOND[@]}" & second=$!
  trap 'kill "$first" "$second" 2>/dev/null || true' EXIT
  wait "$first" || rc=$?
  wait "$second" || rc=$?
  trap - EXIT
fi
echo "::: scenario times: $(tr '\n' ' ' < "$TIMES_FILE")(integration wall ${SECONDS}s)"
# The cause last: another lane's whole log may have been printed after the failed one, and CI keeps only the tail
# (of standard error, on some runners: the digest goes there).
if [ -e "$FAILED" ]; then
  s=$(cat "$FAILED")
  {
    echo "::: why scenario '$s' failed (the lines around each failure in $LOGS/scenario-$s.log; the whole log is above):"
    sed 's/\x1b\[[0-9;]*m//g' "$LOGS/scenario-$s.log" \
      | grep -a -E -B4 -A16 'fatal: |FAILED!|^ERROR|Traceback|CRITICAL|failed=[1-9]' | tail -n 120
  } >&2
fi
exit "$rc"
