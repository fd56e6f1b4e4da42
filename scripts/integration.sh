#!/usr/bin/env bash
# Runs molecule scenarios on the lab. Without an argument: every scenario under molecule/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
shopt -s nullglob
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  for d in molecule/*/molecule.yml; do scenarios+=("$(basename "$(dirname "$d")")"); done
fi
if [ ${#scenarios[@]} -eq 0 ]; then
  echo "integration: no molecule scenarios yet"
  exit 0
fi
for s in "${scenarios[@]}"; do
  echo "::: molecule test -s $s"
  molecule test -s "$s"
done
