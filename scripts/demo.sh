#!/usr/bin/env bash
# The main job: resolve the example installer spec into a lock file.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
.venv/bin/mooring spec resolve inventories/example/installer.yaml -o .work/installer.lock.yaml
echo "lock written to .work/installer.lock.yaml"
