#!/usr/bin/env bash
# The project's test command. Stages, fastest first:
#   lint        ruff, yamllint, ansible-lint (production profile, no skip list)
#   unit        pytest tests/unit (exit 5 "no tests collected" is a failure)
#   sanity      ansible-test sanity on a copy placed at ansible_collections/mooring/cluster
#   integration every molecule scenario (or the one named) on the lab, see scripts/integration.sh
# Usage: scripts/test.sh all|fast|lint|unit|sanity|integration [SCENARIO]
set -euo pipefail
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
  ruff check plugins tests benchmarks scripts
  yamllint -s .
  ansible-lint --profile production
}

run_unit() {
  local rc=0
  python -m pytest -q -p no:cacheprovider tests/unit || rc=$?
  if [ "$rc" -eq 5 ]; then
    echo "unit: pytest collected no tests; that is a failure" >&2
    return 1
  fi
  return "$rc"
}

run_sanity() {
  local dest="$WORK/sanity/ansible_collections/mooring/cluster"
  rm -rf "$dest"
  mkdir -p "$dest"
  # Only what git would ship: tracked files plus untracked ones not ignored.
  git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -C "$dest" -xf -
  (cd "$dest" && ansible-test sanity --venv --python 3.11 --color no)
}

run_integration() {
  scripts/integration.sh "$@"
}

what=${1:-all}
shift || true
case "$what" in
  lint) stage lint run_lint ;;
  unit) stage unit run_unit ;;
  sanity) stage sanity run_sanity ;;
  fast) stage lint run_lint; stage unit run_unit ;;
  integration) stage integration run_integration "$@" ;;
  all)
    stage lint run_lint
    stage unit run_unit
    stage sanity run_sanity
    stage integration run_integration
    ;;
  *) echo "usage: $0 all|fast|lint|unit|sanity|integration [SCENARIO]" >&2; exit 2 ;;
esac
echo "::: timings: ${TIMINGS[*]}"
