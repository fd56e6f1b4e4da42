#!/usr/bin/env bash
# Set up a development/CI environment for mooring.cluster from a fresh machine:
#   - .venv/ with every Python requirement (tests/requirements.txt: the runtime list
#     requirements.txt, the optional requirements-openstack.txt, test and lint tools)
#   - the collection importable as ansible_collections.mooring.cluster from .venv
#     (a symlink under .work/collections plus a .pth file), so that
#     `.venv/bin/ansible-playbook mooring.cluster.<playbook>` and `.venv/bin/mooring` work.
# Idempotent: a re-run only installs when one of those lists changed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
VENV="$ROOT/.venv"
WORK="$ROOT/.work"
mkdir -p "$WORK"

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi

stamp="$VENV/.requirements.sha256"
want=$(cat requirements.txt requirements-openstack.txt tests/requirements.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python requirements (tests/requirements.txt)"
  "$VENV/bin/pip" install --disable-pip-version-check -q -r tests/requirements.txt
  echo "$want" > "$stamp"
fi

# Debian packages the unit tests run: skopeo (images in skopeo's dir: format, as MetalK8s ships
# them) and genisoimage (Solution ISOs built the way MetalK8s's tooling builds them).
debs=()
for pkg in skopeo genisoimage; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || debs+=("$pkg")
done
if [ ${#debs[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "setup: installing ${debs[*]} (Debian)"
  # a new machine may have no package lists yet: update them when the install finds none
  apt-get -o DPkg::Lock::Timeout=600 install -y -q "${debs[@]}" >/dev/null \
    || { apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -q "${debs[@]}" >/dev/null; }
fi

# The collection, importable from the venv and found by ansible without configuration.
mkdir -p "$WORK/collections/ansible_collections/mooring"
ln -sfn "$ROOT" "$WORK/collections/ansible_collections/mooring/cluster"
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$WORK/collections" > "$site/mooring_cluster_dev.pth"

# The `mooring` CLI: the launcher tarball users get from the same playbook.
if [ ! -x "$VENV/bin/mooring" ] || ! grep -q "mooring.cluster.cli" "$VENV/bin/mooring"; then
  ANSIBLE_CONFIG="$ROOT/ansible.cfg" "$VENV/bin/ansible-playbook" mooring.cluster.cli -e cli_dest="$VENV/bin/mooring" \
    < /dev/null > "$WORK/setup-cli.log" 2>&1 || { cat "$WORK/setup-cli.log" >&2; exit 1; }
fi
echo "setup: ready (.venv/bin/mooring, .venv/bin/ansible-playbook mooring.cluster.<playbook>)"
