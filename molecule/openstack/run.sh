#!/usr/bin/env bash
# Scenario `openstack`: the openstack_infra role against a real OpenStack started here.
#   make test-integration SCENARIO=openstack        (scripts/integration.sh runs this file)
# Env: OPENSTACK_KEEP=1 keeps the work dir (logs) after the run. Cinder and Octavia are
# not started here (start cost); molecule/openstack/extended.sh covers them.
# Steps: install (cached) → start OpenStack → check mode creates nothing → apply → verify
# through the API → re-apply changed=0 → verify (incl. anti-affinity on different computes)
# → absent → verify nothing left → absent again changed=0 → bad input (unknown flavor,
# unknown external network, CIDR overlap, quota) fails before anything is created.
# The OpenStack processes are stopped by a trap, also on failure.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
HERE="$ROOT/molecule/openstack"
export PATH="$ROOT/.venv/bin:$PATH"
T0=$SECONDS
W=$(mktemp -d /tmp/mooring-openstack.XXXXXX)
S="$W/scenario"
SAMPLER=""
cleanup() {
  rc=$?
  if [ -n "$SAMPLER" ]; then kill "$SAMPLER" 2>/dev/null || true; wait "$SAMPLER" 2>/dev/null || true; fi
  if [ "${OPENSTACK_KEEP:-0}" = 1 ] || [ "$rc" -ne 0 ]; then
    cp -r "$W/os/logs" "$S/os-logs" 2>/dev/null || true
    "$ROOT/tests/openstack/stop.sh" "$W/os" --keep || rc=1
    echo "openstack scenario: logs kept in $W" >&2
  else
    "$ROOT/tests/openstack/stop.sh" "$W/os" || rc=1
    rm -rf "$W"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$S"

step() { printf '::: openstack: %s (+%ss)\n' "$*" "$((SECONDS - T0))"; }

step "install (cached wheels and venv)"
"$ROOT/tests/openstack/install.sh"

# Peak memory of everything the control plane runs: sum of RSS over its process groups.
python3 "$HERE/memory.py" "$W/os/pids" "$S/peak-rss-mb" &
SAMPLER=$!

step "start OpenStack"
t=$SECONDS
"$ROOT/tests/openstack/start.sh" "$W/os"
START_S=$((SECONDS - t))
export OS_CLIENT_CONFIG_FILE="$W/os/clouds.yaml"

head -c 4194304 /dev/urandom > "$S/node.img"
ssh-keygen -q -t ed25519 -N '' -C mooring-test -f "$S/id_ed25519"
cat > "$S/extra.yml" <<YAML
openstack_infra_image:
  name: mt-node
  file: $S/node.img
  checksum: sha256:$(sha256sum "$S/node.img" | cut -d' ' -f1)
  disk_format: raw
openstack_infra_keypair:
  name: mt-key
  public_key: "$(cat "$S/id_ed25519.pub")"
openstack_infra_inventory_path: $S/inventory.yml
YAML

play() {  # play NAME [ansible-playbook args...] : JSON output to $S/NAME.json, returns rc
  local name=$1; shift
  ANSIBLE_STDOUT_CALLBACK=ansible.builtin.json ansible-playbook mooring.cluster.openstack \
    -e @"$HERE/vars.yml" -e @"$S/extra.yml" "$@" > "$S/$name.json" 2> "$S/$name.err"
}
verify() { python3 "$HERE/verify.py" --vars "$HERE/vars.yml" --extra "$S/extra.yml" "$@"; }
changed() { python3 "$HERE/verify.py" --changed "$S/$1.json"; }

step "check mode on an empty project: reports the plan, creates nothing"
play check --check || { cat "$S/check.err" >&2; exit 1; }
verify --planned "$S/check.json"
verify --absent mt

step "apply"
t=$SECONDS
play apply || { python3 "$HERE/verify.py" --failures "$S/apply.json" >&2; exit 1; }
APPLY_S=$((SECONDS - t))
[ "$(changed apply)" -gt 0 ] || { echo "apply changed nothing" >&2; exit 1; }
verify --present --inventory "$S/inventory.yml"

step "re-apply: changed=0"
t=$SECONDS
play reapply || { python3 "$HERE/verify.py" --failures "$S/reapply.json" >&2; exit 1; }
REAPPLY_S=$((SECONDS - t))
n=$(changed reapply)
[ "$n" -eq 0 ] || { echo "re-apply changed $n task(s):" >&2; python3 "$HERE/verify.py" --failures "$S/reapply.json" --show-changed >&2; exit 1; }
verify --present --inventory "$S/inventory.yml"

step "state: absent"
t=$SECONDS
play absent -e openstack_infra_state=absent || { python3 "$HERE/verify.py" --failures "$S/absent.json" >&2; exit 1; }
ABSENT_S=$((SECONDS - t))
[ "$(changed absent)" -gt 0 ] || { echo "absent changed nothing" >&2; exit 1; }
verify --absent mt
[ ! -e "$S/inventory.yml" ] || { echo "inventory file left behind" >&2; exit 1; }

step "state: absent again: changed=0"
play absent2 -e openstack_infra_state=absent || { python3 "$HERE/verify.py" --failures "$S/absent2.json" >&2; exit 1; }
n=$(changed absent2)
[ "$n" -eq 0 ] || { echo "second absent changed $n task(s)" >&2; exit 1; }

step "bad input fails before anything is created, naming the resource"
bad_case() {  # bad_case NAME EXPECTED_TEXT EXTRA_VARS_JSON
  local name=$1 text=$2 json=$3 rc=0
  play "bad-$name" -e openstack_infra_name=bad -e "$json" || rc=$?
  [ "$rc" -ne 0 ] || { echo "bad input '$name': the play succeeded" >&2; exit 1; }
  python3 "$HERE/verify.py" --expect-failure "$S/bad-$name.json" "$text"
  verify --absent bad
}
bad_case flavor "flavor 'm1.doesnotexist' not found" \
  '{"openstack_infra_nodes": {"control_plane": {"count": 1, "flavor": "m1.small"}, "workers": {"count": 1, "flavor": "m1.doesnotexist"}}}'
bad_case external-network "external_network: network 'nonet' not found" \
  '{"openstack_infra_external_network": "nonet"}'
bad_case cidr-overlap "overlaps subnet 'public-subnet'" \
  '{"openstack_infra_network": {"cidr": "172.24.4.0/24"}}'
bad_case quota "quota: instances would reach 31" \
  '{"openstack_infra_nodes": {"control_plane": {"count": 1, "flavor": "m1.tiny"}, "workers": {"count": 30, "flavor": "m1.tiny"}}}'

step "done"
echo "::: openstack: OpenStack start ${START_S}s, apply ${APPLY_S}s, re-apply ${REAPPLY_S}s," \
     "absent ${ABSENT_S}s, scenario total $((SECONDS - T0))s"
kill "$SAMPLER" 2>/dev/null || true; wait "$SAMPLER" 2>/dev/null || true; SAMPLER=""
echo "::: openstack: peak RSS of the OpenStack processes: $(cat "$S/peak-rss-mb" 2>/dev/null || echo '?') MB"
