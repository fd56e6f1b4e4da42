#!/usr/bin/env bash
# The project's test command. Stages, fastest first:
#   lint        ruff, yamllint, shellcheck, ansible-lint (production profile, no skip list)
#   unit        pytest tests/unit (exit 5 "no tests collected" is a failure)
#   sanity      ansible-test sanity on a copy placed at ansible_collections/mooring/cluster
#   matrix      unit and sanity again under each older ansible-core line the collection
#               declares (2.17, 2.18; venvs from scripts/corevenv.sh); in `all` it runs in the
#               background beside package, ee and integration
#   docs        antsibull-docs lint-collection-docs and the HTML docsite built offline, a page for
#               every module, plugin and role (scripts/docs.sh)
#   package     the built tarball as a user gets it (tests/tarball/run.sh): clean venv from its
#               requirements.txt, ansible-doc of every plugin and role, resolve, the CLI and
#               preflight from an unrelated directory
#   ee          the execution environment built offline (scripts/ee.sh build) and
#               ansible-runner running mooring.cluster.preflight in it against a lab host
#   integration every molecule scenario (or the one named) on the lab, see scripts/integration.sh
#               (in `all`, the lab and the test mirror - the Go builds - are prepared in the background
#               from the start: lint, unit, sanity and docs keep about one core busy, the build takes
#               the other)
# Usage: scripts/test.sh all|fast|lint|unit [LINE]|sanity [LINE]|matrix|docs|package|ee|integration [SCENARIO]
#   LINE: an ansible-core line, 2.17, 2.18 or 2.19 (the default, .venv's)
set -euo pipefail
# Our own stdin, for every stage: ansible and ansible-test refuse a non-blocking one (some CI
# runners hand one down), and buildah, skopeo and podman set O_NONBLOCK on the stdin they inherit,
# which would stay on the caller's terminal or file.
exec < /dev/null
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$ROOT/.venv/bin:$PATH"
WORK="$ROOT/.work"
declare -a TIMINGS=()

stage() {  # stage NAME COMMAND... : run, time and report one stage
  local name=$1; shift
  local t0=$SECONDS
  echo "::: stage $name"
  "$@"
  TIMINGS+=("$name $((SECONDS - t0))s")
}

run_lint() {
  ruff check plugins playbooks/callback_plugins tests benchmarks scripts catalog/tools
  # ansible-test's pep8 settings, so its sanity stage does not find these late
  pycodestyle --max-line-length 160 --ignore E402,W503,W504,E741,E203,E701,E704 plugins playbooks/callback_plugins tests benchmarks catalog/tools
  python tests/sanity/import_check.py
  yamllint -s .
  scripts/shellcheck.sh
  ansible-lint --profile production
}

run_unit() {  # run_unit [LINE]: pytest under ansible-core LINE (default: .venv's 2.19)
  local line=${1:-2.19} venv rc=0
  venv=$(scripts/corevenv.sh "$line")
  MOORING_HELM="$(scripts/tools.sh helm)"  # the chart-rendering tests need the pinned helm
  export MOORING_HELM
  # .venv finds the collection through setup.sh's .pth; the cached venvs through PYTHONPATH.
  PYTHONPATH="$WORK/collections${PYTHONPATH:+:$PYTHONPATH}" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/unit tests/ee || rc=$?
  if [ "$rc" -eq 5 ]; then
    echo "unit: pytest collected no tests; that is a failure" >&2
    return 1
  fi
  return "$rc"
}

run_sanity() {  # run_sanity [LINE]: ansible-test sanity of ansible-core LINE (default 2.19)
  local line=${1:-2.19} venv
  venv=$(scripts/corevenv.sh "$line")
  # Outside this git checkout: inside it, ansible-test would list files through git and
  # see nothing under the ignored .work/.
  local base dest
  base="${TMPDIR:-/tmp}/mooring-sanity-$line.$(id -u)"
  dest="$base/ansible_collections/mooring/cluster"
  rm -rf "$base"
  mkdir -p "$dest"
  # Only what git would ship: tracked files plus untracked ones not ignored.
  git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -C "$dest" -xf -
  # ansible-test bootstraps pip in its per-test venvs with a script it downloads from a host
  # we cannot reach; give it the offline stand-in under the name it caches that script as.
  local pip_version
  pip_version=$("$venv/bin/python" -c 'import re, ansible_test._internal.python_requirements as r, inspect; print(re.search(r"pip=.([0-9.]+)", inspect.getsource(r)).group(1))')
  mkdir -p "$HOME/.ansible/test/cache"
  cp tests/sanity/get_pip_offline.py "$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
  local cert=${PIP_CERT:-${SSL_CERT_FILE:-${REQUESTS_CA_BUNDLE:-}}}
  { echo "[global]"; [ -n "$cert" ] && echo "cert = $cert"; true; } > "$HOME/.ansible/test/cache/mooring-pip.conf"
  (cd "$dest" && PATH="$venv/bin:$PATH" ansible-test sanity --venv --python 3.11 --color no)
}

run_docs() {
  scripts/docs.sh all
}

run_package() {
  tests/tarball/run.sh
}

run_ee() {
  scripts/ee.sh build
  scripts/ee.sh run
}

run_integration() {
  scripts/integration.sh "$@"
}

# The ansible-core lines meta/runtime.yml declares besides .venv's 2.19: unit and sanity run on
# each (scripts/corevenv.sh builds and caches their venvs).
OLDER_CORES=(2.17 2.18)

run_matrix() {  # unit and sanity on every older ansible-core line
  local line
  for line in "${OLDER_CORES[@]}"; do
    stage "unit-$line" run_unit "$line"
    stage "sanity-$line" run_sanity "$line"
  done
}

# In `all`, the matrix runs beside the stages after it, at the lowest CPU and I/O priority: its
# pytest and ansible-test runs keep one core busy, while package, ee and integration spend much of
# their time waiting on pip, podman and the lab hosts, and keep the priority where timing matters
# (the lab's etcd, the quorum sampler, preflight's disk test). Its log is printed, and its result
# counts, when those are done (or have failed).
MATRIX_PID=""
MATRIX_LOG="$WORK/ci/matrix.log"
start_matrix() {
  mkdir -p "$WORK/ci"
  echo "::: stage matrix: ansible-core ${OLDER_CORES[*]} in the background (log $MATRIX_LOG)"
  # Its own process group, so that a failing stage here stops all of it.
  setsid nice -n 19 ionice -c 3 "$0" matrix > "$MATRIX_LOG" 2>&1 < /dev/null &
  MATRIX_PID=$!
}
finish_background() {  # finish_background NAME PID LOG: wait for it, then print its log; its exit code
  local name=$1 pid=$2 log=$3 rc=0 t0=$SECONDS
  wait "$pid" || rc=$?
  echo "::: stage $name: its log ($log), waited $((SECONDS - t0))s for it"
  cat "$log"
  if [ "$rc" -ne 0 ]; then echo "::: $name FAILED (exit $rc): see above" >&2; fi
  return "$rc"
}
finish_matrix() {
  local pid=$MATRIX_PID rc=0
  MATRIX_PID=""
  finish_background matrix "$pid" "$MATRIX_LOG" || rc=$?
  TIMINGS+=("$(sed -n 's/^::: timings: //p' "$MATRIX_LOG")")
  return "$rc"
}

# In `all`: the lab's setup and the test mirror (cold: the Go builds, about 20 CPU-minutes) from the start, in
# the background; ee waits for the lab (setup and image), integration for all of it (its log is printed then).
PREPARE_PID=""
stop_background() {  # on exit: whatever still runs in the background (matrix, prepare), its whole process group
  local pid
  for pid in "$MATRIX_PID" "$PREPARE_PID"; do
    if [ -n "$pid" ]; then kill -- "-$pid" 2>/dev/null || true; fi
  done
}
PREPARE_LOG="$WORK/ci/prepare.log"
start_prepare() {
  mkdir -p "$WORK/ci"
  echo "::: stage prepare: the lab and the test mirror in the background (log $PREPARE_LOG)"
  setsid nice -n 10 scripts/integration.sh --prepare > "$PREPARE_LOG" 2>&1 < /dev/null &
  PREPARE_PID=$!
  trap stop_background EXIT
}
wait_lab_ready() {  # ee needs the lab's setup and image, not the test mirror: prepare's marker, or its end
  local t0=$SECONDS
  while [ ! -e "$WORK/ci/lab.ready" ] && kill -0 "$PREPARE_PID" 2>/dev/null; do sleep 2; done
  echo "::: stage prepare: the lab is ready (waited $((SECONDS - t0))s); the test mirror goes on building"
}
finish_prepare() {
  local pid=$PREPARE_PID
  PREPARE_PID=""
  finish_background prepare "$pid" "$PREPARE_LOG"
}

what=${1:-all}
shift || true
case "$what" in
  lint) stage lint run_lint ;;
  unit) stage unit run_unit "$@" ;;
  sanity) stage sanity run_sanity "$@" ;;
  matrix) run_matrix ;;
  docs) stage docs run_docs ;;
  package) stage package run_package ;;
  ee) stage ee run_ee ;;
  fast) stage lint run_lint; stage unit run_unit ;;
  integration) stage integration run_integration "$@" ;;
  all)
    start_prepare
    stage lint run_lint
    stage unit run_unit
    stage sanity run_sanity
    stage docs run_docs
    start_matrix
    stage package run_package
    wait_lab_ready
    stage ee run_ee
    finish_prepare
    stage integration run_integration
    finish_matrix
    ;;
  *) echo "usage: $0 all|fast|lint|unit [LINE]|sanity [LINE]|matrix|docs|package|ee|integration [SCENARIO]" >&2; exit 2 ;;
esac
echo "::: timings: ${TIMINGS[*]}"
