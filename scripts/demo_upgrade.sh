#!/usr/bin/env bash
# The minor upgrade, as a user runs it, on the embedded lab (`make demo-upgrade`):
#   the lab's spec at the previous minor (tests/lab/previous.yaml `minor`: Kubernetes 1.34.11, etcd 3.5.33,
#   containerd 2.1.8) installed on 3 control-plane/etcd hosts and 1 worker, then
#   `ansible-playbook mooring.cluster.upgrade -e mooring_lock=<the demo's lock>` rolling every node to the demo's
#   versions (1.35.8, 3.6.14, 2.1.9) one at a time, with the API sampled through the VIP every 0.5 s
#   (molecule/shared/apisampler.py): the longest gap, the failed samples and each node's turn are printed.
# Every artifact is built from its upstream Go module (tests/mirror, MOORING_MIRROR_UPGRADES="patch minor").
# Lab: DEMO_LAB (default demo-upgrade); it keeps running afterwards (make lab-down NAME=demo-upgrade).
set -euo pipefail
exec < /dev/null
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export MOORING_CACHE_DIR=${MOORING_CACHE_DIR:-/var/cache/mooring}
export MOORING_MIRROR_DIR=${MOORING_MIRROR_DIR:-$MOORING_CACHE_DIR/mirror}
export MOORING_MIRROR_UPGRADES="patch minor"
LAB=${DEMO_LAB:-demo-upgrade}
W=.work/$LAB
lab() { python3 tests/lab/lab.py "$@"; }
declare -a TIMES=()
stage() { TIMES+=("$1 $((SECONDS - $2))s"); echo "::: $1 done in $((SECONDS - $2))s"; }

t=$SECONDS
lab setup
lab image >/dev/null
stage "lab-setup+image" "$t"

t=$SECONDS
echo "::: test mirror with the minor upgrade's versions (cached after the first run)"
tests/mirror/build.sh
stage "mirror" "$t"

t=$SECONDS
lab down "$LAB" >/dev/null
lab up "$LAB" -n 4 --control-plane 3 --privileged
eval "$(lab env "$LAB")"
INV=inventories/lab/$LAB/hosts.yml
stage "hosts" "$t"

mkdir -p "$W"
for which in minor current; do
  args=()
  [ "$which" = minor ] && args=(--from minor)
  lab spec "$LAB" "${args[@]}" -o "$W/installer-$which.yaml"
  .venv/bin/mooring spec resolve "$W/installer-$which.yaml" --catalog-overlay "$MOORING_MIRROR_DIR/upstream-overlay" \
    -o "$W/$which.lock.yaml"
done
version() { .venv/bin/python -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["addons"]["kubernetes"]["version"])' "$1"; }
FROM=$(version "$W/minor.lock.yaml")
TO=$(version "$W/current.lock.yaml")

t=$SECONDS
echo "::: install Kubernetes $FROM"
.venv/bin/ansible-playbook -i "$INV" mooring.cluster.install -e mooring_lock="$W/minor.lock.yaml" \
  -e mooring_bundle_file="$W/bundle-minor.tar" -e bundle_signing_key="$W/signing/bundle-signing.key" \
  > "$W/install.log" || { tail -40 "$W/install.log"; exit 1; }
grep -A8 "PLAY RECAP" "$W/install.log"
stage "install $FROM" "$t"

t=$SECONDS
echo "::: upgrade $FROM -> $TO, one node at a time, the API sampled through the VIP every 0.5 s"
# The playbook's output to upgrade.log; the sampler's figures (one JSON line) to upgrade-api.json.
# shellcheck disable=SC2016  # the inner bash expands "$1" and "${@:2}" itself
.venv/bin/python molecule/shared/apisampler.py --kubeconfig "$(dirname "$INV")/admin.conf" --turns "$TO" -- \
  bash -c '"${@:2}" > "$1"' - "$W/upgrade.log" .venv/bin/ansible-playbook -i "$INV" mooring.cluster.upgrade \
  -e mooring_lock="$W/current.lock.yaml" -e mooring_bundle_file="$W/bundle-current.tar" \
  -e bundle_signing_key="$W/signing/bundle-signing.key" | tee "$W/upgrade-api.json" || true
grep -A8 "PLAY RECAP" "$W/upgrade.log" || tail -40 "$W/upgrade.log"
stage "upgrade $FROM -> $TO" "$t"
.venv/bin/python - "$W/upgrade-api.json" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print("API through the VIP: %d samples, %d failed, longest gap %.1f s; the run %s s, rc %d"
      % (r["samples"], r["failed"], r["gap"], r["seconds"], r["rc"]))
for node, turn in sorted(r.get("turns", {}).items(), key=lambda kv: kv[1]["start"]):
    w = turn["window"] or {}
    print("  %-16s turn %s s (from %s s): API %s failed of %s, gap %s s"
          % (node, turn["seconds"], turn["start"], w.get("failed"), w.get("samples"), w.get("gap")))
sys.exit(r["rc"])
PY
KUBECTL=$(.venv/bin/python -c 'import sys, yaml; a = yaml.safe_load(open(sys.argv[1]))["addons"]["kubernetes"]["artifacts"]; print(next(x["url"][7:] for x in a if x["name"] == "kubectl"))' "$W/current.lock.yaml")
"$KUBECTL" --kubeconfig "$(dirname "$INV")/admin.conf" get nodes -o wide
echo "::: stage times: ${TIMES[*]}"
