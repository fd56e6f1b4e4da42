#!/usr/bin/env bash
# Stop everything tests/openstack/start.sh WORKDIR started, also after a failed start.
#   tests/openstack/stop.sh WORKDIR [--keep]   (--keep leaves WORKDIR's logs and data)
# Each service was started in its own session: its pid file holds the process group id.
# TERM to every group, up to 20 s grace, then KILL. Idempotent; exit 0 when nothing is left.
set -uo pipefail
W=${1:?usage: stop.sh WORKDIR [--keep]}
KEEP=${2:-}
[ -d "$W/pids" ] || exit 0
# A group is alive while it has a process that is not a zombie (an unreaped zombie is gone).
alive() { ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ {found=1} END {exit !found}'; }
pgids=()
for f in "$W"/pids/*.pid; do
  [ -e "$f" ] || continue
  p=$(cat "$f")
  [[ "$p" =~ ^[0-9]+$ ]] || continue
  pgids+=("$p")
  kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
done
for _ in $(seq 1 40); do
  left=0
  for p in "${pgids[@]}"; do alive "$p" && left=1; done
  [ "$left" = 0 ] && break
  sleep 0.5
done
for p in "${pgids[@]}"; do
  if alive "$p"; then
    echo "stop.sh: process group $p ignored TERM; KILL" >&2
    kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true
  fi
done
for _ in $(seq 1 20); do
  left=0
  for p in "${pgids[@]}"; do alive "$p" && left=1; done
  [ "$left" = 0 ] && break
  sleep 0.5
done
status=0
for p in "${pgids[@]}"; do
  if alive "$p"; then echo "stop.sh: process group $p still alive" >&2; status=1; fi
done
if [ "$status" = 0 ]; then rm -f "$W"/pids/*.pid; fi
if [ "$status" = 0 ] && [ "$KEEP" != "--keep" ]; then rm -rf "$W"; fi
exit "$status"
