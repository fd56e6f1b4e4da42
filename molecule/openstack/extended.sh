#!/usr/bin/env bash
# Opt-in extended case of the `openstack` scenario: Cinder boot volumes and an Octavia load
# balancer for the control-plane endpoint, against a real OpenStack started with
# OPENSTACK_CINDER=1 OPENSTACK_OCTAVIA=1. Not part of `make test` (start cost); run:
#   molecule/openstack/extended.sh
# apply → verify (volumes attached as boot disks, LB with listener/pool/members/monitor,
# inventory endpoint = VIP) → re-apply changed=0 → absent → nothing left.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
HERE="$ROOT/molecule/openstack"
export PATH="$ROOT/.venv/bin:$PATH"
T0=$SECONDS
W=$(mktemp -d /tmp/mooring-openstack-ext.XXXXXX)
S="$W/scenario"
cleanup() {
  rc=$?
  if [ "$rc" -ne 0 ] || [ "${OPENSTACK_KEEP:-0}" = 1 ]; then
    "$ROOT/tests/openstack/stop.sh" "$W/os" --keep || rc=1
    echo "openstack extended: logs kept in $W" >&2
  else
    "$ROOT/tests/openstack/stop.sh" "$W/os" || rc=1
    rm -rf "$W"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$S"
step() { printf '::: openstack-extended: %s (+%ss)\n' "$*" "$((SECONDS - T0))"; }

step "install + start OpenStack with cinder and octavia"
"$ROOT/tests/openstack/install.sh"
OPENSTACK_CINDER=1 OPENSTACK_OCTAVIA=1 "$ROOT/tests/openstack/start.sh" "$W/os"
export OS_CLIENT_CONFIG_FILE="$W/os/clouds.yaml"

ssh-keygen -q -t ed25519 -N '' -C mooring-test -f "$S/id_ed25519"
head -c 1048576 /dev/urandom > "$S/node.img"
cat > "$S/extra.yml" <<YAML
openstack_infra_name: xt
openstack_infra_image:
  name: xt-node
  file: $S/node.img
  checksum: sha256:$(sha256sum "$S/node.img" | cut -d' ' -f1)
  disk_format: raw
openstack_infra_keypair: {name: xt-key, public_key: "$(cat "$S/id_ed25519.pub")"}
openstack_infra_nodes:
  control_plane: {count: 3, flavor: m1.small}
  workers: {count: 1, flavor: m1.tiny, boot_volume_size: 2}
openstack_infra_load_balancer: {enabled: true}
openstack_infra_inventory_path: $S/inventory.yml
YAML
play() {
  local name=$1; shift
  ANSIBLE_STDOUT_CALLBACK=ansible.builtin.json ansible-playbook mooring.cluster.openstack \
    -e @"$HERE/vars.yml" -e @"$S/extra.yml" "$@" > "$S/$name.json" 2> "$S/$name.err"
}
fails() { python3 "$HERE/verify.py" --failures "$S/$1.json" >&2; }

step "apply (boot volume, load balancer)"
play apply || { fails apply; exit 1; }
python3 "$HERE/verify_extended.py" "$S/inventory.yml"
step "re-apply: changed=0"
play reapply || { fails reapply; exit 1; }
n=$(python3 "$HERE/verify.py" --changed "$S/reapply.json")
[ "$n" -eq 0 ] || { python3 "$HERE/verify.py" --failures "$S/reapply.json" --show-changed >&2; exit 1; }
step "absent"
play absent -e openstack_infra_state=absent || { fails absent; exit 1; }
python3 "$HERE/verify.py" --absent xt
python3 "$HERE/verify_extended.py" --absent
step "done in $((SECONDS - T0))s"
