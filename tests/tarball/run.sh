#!/usr/bin/env bash
# The collection as a user gets it: only the built tarball and `pip install -r` of the runtime
# list it declares (requirements.txt inside the tarball), nothing from this checkout's .venv.
#   0. the release notes: antsibull-changelog lint, CHANGELOG.rst as generated, galaxy.yml's version
#      the latest release (changelog.sh)
#   1. ansible-galaxy collection build -> galaxy-importer on it, offline (importer.sh) -> install into
#      a clean HOME's default collection path -> a signed release installed and verified by
#      ansible-galaxy, tampered tarballs and wrong signatures refused (signed.sh)
#   2. a clean venv from the tarball's requirements.txt (cached by its sha256: pip is slow)
#   3. ansible-doc on every plugin and role of the collection (any error or warning fails)
#   4. from an unrelated directory, with relative paths as a user types them:
#      ansible-playbook mooring.cluster.resolve, the CLI made by mooring.cluster.cli
#      (spec validate/hash/resolve, the same lock), and mooring.cluster.preflight against a
#      lab host, with its report next to the user's inventory
# Usage: tests/tarball/run.sh   (as root, like the lab; MOORING_CACHE_DIR for the venv cache)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${MOORING_CACHE_DIR:-/var/cache/mooring}
LAB=${TARBALL_LAB:-tarball}
T=$(mktemp -d "${TMPDIR:-/tmp}/mooring-tarball.XXXXXX")
fail() { echo "tarball: FAILED: $*" >&2; exit 1; }
cleanup() { python3 "$ROOT/tests/lab/lab.py" down "$LAB" >/dev/null 2>&1 || true; rm -rf "$T"; }
trap cleanup EXIT

echo "::: release notes (changelog.sh)"
"$ROOT/tests/tarball/changelog.sh" "$T/changelog"

echo "::: build the tarball"
"$ROOT/.venv/bin/ansible-galaxy" collection build --output-path "$T/dist" "$ROOT" >/dev/null
TARBALL=$(ls "$T"/dist/mooring-cluster-*.tar.gz)
tar tzf "$TARBALL" > "$T/files"
echo "$(basename "$TARBALL"): $(du -k "$TARBALL" | cut -f1) KiB, $(wc -l < "$T/files") entries"
for f in LICENSE requirements.txt meta/execution-environment.yml playbooks/cli.yml; do
  grep -qx "$f" "$T/files" || fail "$f is not in the tarball"
done
if grep -E '(^|/)(\.venv|\.work|\.ansible|__pycache__)(/|$)' "$T/files"; then
  fail "build output or caches are in the tarball"
fi

echo "::: galaxy-importer on the tarball, offline (importer.sh)"
"$ROOT/tests/tarball/importer.sh" "$TARBALL" "$T/importer"

echo "::: a clean venv from the tarball's requirements.txt"
tar xzf "$TARBALL" -C "$T" requirements.txt
want=$(sha256sum "$T/requirements.txt" | cut -d' ' -f1)
VENV="$CACHE/tarball/venv-${want:0:16}"
if [ "$(cat "$VENV/.ready" 2>/dev/null)" != "$want" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --disable-pip-version-check -q -r "$T/requirements.txt"
  echo "$want" > "$VENV/.ready"
fi
# Nothing of the checkout may be importable from it (setup.sh's .pth is only in .venv).
if "$VENV/bin/python" -c 'import ansible_collections.mooring.cluster' 2>/dev/null; then
  fail "the clean venv imports mooring.cluster without the tarball"
fi

# A user's environment: own HOME (default collection path ~/.ansible/collections), own
# directory without ansible.cfg, the clean venv first on PATH, nothing of the checkout.
export HOME="$T/home" PATH="$VENV/bin:/usr/sbin:/usr/bin:/sbin:/bin"
unset ANSIBLE_CONFIG ANSIBLE_COLLECTIONS_PATH ANSIBLE_COLLECTIONS_PATHS PYTHONPATH
mkdir -p "$HOME" "$T/user"
cd "$T/user"

echo "::: ansible-galaxy collection install (the dependencies come from PyPI's ansible package)"
ansible-galaxy collection install --no-deps "$TARBALL" >/dev/null
COLL="$HOME/.ansible/collections/ansible_collections/mooring/cluster"
[ -f "$COLL/MANIFEST.json" ] || fail "not installed at $COLL"
ansible-galaxy collection list mooring.cluster 2>/dev/null | grep -q "mooring.cluster" || fail "collection list"

echo "::: signed: MANIFEST.json signed, install and verify check it, tampering refused (signed.sh)"
"$ROOT/tests/tarball/signed.sh" "$TARBALL" "$T/signed"

echo "::: ansible-builder introspect on the installed collection (what any EE including it reads)"
"$ROOT/.venv/bin/ansible-builder" introspect --sanitize "$HOME/.ansible/collections" > "$T/introspect.log" 2>&1 \
  || { cat "$T/introspect.log"; fail "ansible-builder introspect"; }
for want in jsonschema cyclonedx-python-lib skopeo; do
  grep -q "$want" "$T/introspect.log" || { cat "$T/introspect.log"; fail "introspect does not list $want"; }
done

echo "::: ansible-doc on every plugin and role"
n=0
for type in module filter inventory callback lookup test role; do
  names=$(ansible-doc -t "$type" -l mooring.cluster 2>"$T/doc.err" | awk '{print $1}' | grep '^mooring\.cluster\.' || true)
  if [ -s "$T/doc.err" ] && grep -v "No plugins found\|^$" "$T/doc.err" | grep -q .; then
    cat "$T/doc.err" >&2; fail "ansible-doc -t $type -l"
  fi
  for name in $names; do
    if ! ansible-doc -t "$type" "$name" > "$T/doc.out" 2> "$T/doc.err" || [ -s "$T/doc.err" ]; then
      cat "$T/doc.err" >&2; fail "ansible-doc -t $type $name"
    fi
    n=$((n + 1))
  done
done
expected=$(( $(find "$COLL/plugins/modules" -maxdepth 1 -name '*.py' | wc -l) + $(find "$COLL/roles" -mindepth 1 -maxdepth 1 -type d | wc -l) ))
[ "$n" -ge "$expected" ] || fail "ansible-doc saw $n plugins and roles, the tarball has at least $expected"
echo "ansible-doc: $n plugins and roles documented"

echo "::: resolve from the user's directory, relative paths"
cp "$COLL/inventories/example/installer.yaml" installer.yaml
ansible-playbook mooring.cluster.resolve -e installer_src=installer.yaml > "$T/resolve.log" 2>&1 \
  || { cat "$T/resolve.log"; fail "mooring.cluster.resolve"; }
[ -s installer.lock.yaml ] || fail "resolve wrote no installer.lock.yaml in the user's directory"
grep -q "changed=1" "$T/resolve.log" || fail "the first resolve did not report changed"
ansible-playbook mooring.cluster.resolve -e installer_src=installer.yaml > "$T/resolve2.log"
grep -q "changed=0" "$T/resolve2.log" || fail "the second resolve changed something"

echo "::: the CLI: ansible-playbook mooring.cluster.cli"
ansible-playbook mooring.cluster.cli -e cli_dest="$HOME/bin/mooring" > "$T/cli.log" || { cat "$T/cli.log"; fail "cli"; }
"$HOME/bin/mooring" --help > /dev/null
"$HOME/bin/mooring" spec validate installer.yaml
h_cli=$("$HOME/bin/mooring" spec hash installer.yaml)
grep -q "^hash: ${h_cli%% *}" installer.lock.yaml || grep -q "${h_cli%% *}" installer.lock.yaml \
  || fail "the CLI's hash ($h_cli) is not the lock's"
"$HOME/bin/mooring" spec resolve installer.yaml -o cli.lock.yaml
cmp -s cli.lock.yaml installer.lock.yaml || fail "the CLI's lock differs from the playbook's"
ansible-playbook mooring.cluster.cli -e cli_dest="$HOME/bin/mooring" > "$T/cli2.log"
grep -q "changed=0" "$T/cli2.log" || fail "the second mooring.cluster.cli changed something"

echo "::: preflight against a lab host, inventory in the user's directory"
python3 "$ROOT/tests/lab/lab.py" setup >/dev/null
python3 "$ROOT/tests/lab/lab.py" image >/dev/null
python3 "$ROOT/tests/lab/lab.py" down "$LAB" >/dev/null
python3 "$ROOT/tests/lab/lab.py" up "$LAB" -n 1 --control-plane 1 --privileged >/dev/null
mkdir -p site
cp "$ROOT/inventories/lab/$LAB/hosts.yml" site/hosts.yml
ansible-playbook -i site/hosts.yml mooring.cluster.preflight > "$T/preflight.log" \
  || { cat "$T/preflight.log"; fail "mooring.cluster.preflight"; }
grep -E "^\S+ +: ok=" "$T/preflight.log"
if ls site/.mooring-reports/mooring-report-preflight-latest.json >/dev/null 2>&1; then
  "$VENV/bin/python" - site/.mooring-reports/mooring-report-preflight-latest.json <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
hosts = report.get("hosts") or {}
assert hosts, "the report lists no host"
print("report: %s, hosts %s" % (sys.argv[1], ", ".join(sorted(hosts))))
PY
  [ -s site/.mooring-reports/mooring-report-preflight-latest.md ] || fail "no Markdown report next to the inventory"
else
  fail "no report next to the inventory (site/.mooring-reports/mooring-report-preflight-latest.json)"
fi
echo "tarball: OK"
