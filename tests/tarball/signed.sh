#!/usr/bin/env bash
# A signed release as a user checks it: a throw-away GnuPG key signs the tarball's MANIFEST.json
# (detached, armored, as docs/release.md does it), and ansible-galaxy - not gpg by hand - must
#   (a) install it with the signature checked: from a Galaxy v3 server on 127.0.0.1
#       (galaxy_server.py), `install NS.NAME:VERSION -s URL --signature file://SIG --keyring KBX`;
#       ansible-core 2.19 does not check a signature when the source is a local tarball (see below)
#   (b) verify the installed copy: `collection verify --offline --signature file://SIG --keyring KBX`
#       (both with --required-valid-signature-count +1: without it, no signature at all passes)
#   (c) refuse a wrong signature (another key; the right key over other bytes) and a tampered
#       tarball (a file changed; a file and FILES.json changed; MANIFEST.json changed after signing),
#       at install or at verify, with the message asserted.
# Local tarball: `install FILE.tar.gz --signature ... --keyring ...` ends in a TypeError in
# ansible-core 2.19 (providers.py _find_matches gives concrete artifacts no signatures, then
# install_artifact iterates None; ansible/ansible#81597). That is recorded; should it start to work,
# this script asserts that it checks and refuses like the Galaxy path.
# Usage: tests/tarball/signed.sh TARBALL WORKDIR  (ansible-galaxy and python3 from PATH, gpg)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TARBALL=$(realpath "$1")
W=$2
GPG=${GPG:-/usr/bin/gpg}
fail() { echo "signed: FAILED: $*" >&2; exit 1; }
mkdir -p "$W"
W=$(realpath "$W")
export GNUPGHOME="$W/gnupg"
SERVER_PID=
cleanup() {
  [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null || true
  gpgconf --kill gpg-agent 2>/dev/null || true   # the agent of this GNUPGHOME only
}
trap cleanup EXIT
# loopback only: no proxy may stand between ansible-galaxy and 127.0.0.1
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy=127.0.0.1 NO_PROXY=127.0.0.1

gpgq() {  # gpgq ARGS...: gpg in batch mode, its chatter in gpg.log (shown when it fails)
  "$GPG" --batch --quiet "$@" 2>> "$W/gpg.log" || { cat "$W/gpg.log" >&2; fail "gpg $*"; }
}
expect_ok() {  # expect_ok LOG MESSAGE -- COMMAND...: exit 0 and MESSAGE in the output
  local log=$1 msg=$2; shift 3
  if ! "$@" > "$log" 2>&1; then cat "$log" >&2; fail "$* exited non-zero"; fi
  grep -qF -- "$msg" "$log" || { cat "$log" >&2; fail "no '$msg' in the output of $*"; }
}
expect_refused() {  # expect_refused LOG MESSAGE -- COMMAND...: non-zero exit and MESSAGE in the output
  local log=$1 msg=$2 rc=0; shift 3
  "$@" > "$log" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || { cat "$log" >&2; fail "$* was accepted"; }
  grep -qF -- "$msg" "$log" || { cat "$log" >&2; fail "$* refused (rc $rc) without '$msg'"; }
  echo "  refused (rc $rc): $(grep -F -- "$msg" "$log" | head -1 | sed 's/^ *//')"
}

echo "--- a throw-away signing key, MANIFEST.json signed"
mkdir -p "$GNUPGHOME"
chmod 0700 "$GNUPGHOME"
gpgq --passphrase '' --quick-generate-key \
  'mooring.cluster release test <release-test@mooring.invalid>' ed25519 sign 1d
FPR=$(gpgq --with-colons --list-secret-keys | awk -F: '$1 == "fpr" {print $10; exit}')
mkdir -p "$W/release"
tar -xzf "$TARBALL" -C "$W/release" MANIFEST.json
gpgq --yes --armor --detach-sign --output "$W/release/MANIFEST.json.asc" "$W/release/MANIFEST.json"
gpgq --armor --export "$FPR" > "$W/release/signing-key.asc"
# the user's side: a keyring holding only the published public key
KEYRING="$W/release/keyring.kbx"
gpgq --no-default-keyring --keyring "$KEYRING" --import "$W/release/signing-key.asc"
SIG="$W/release/MANIFEST.json.asc"
echo "key $FPR; keyring $KEYRING"

# wrong signatures: another key (not in the keyring), and the right key over other bytes
gpgq --passphrase '' --quick-generate-key 'someone else <other@mooring.invalid>' ed25519 sign 1d
OTHER=$(gpgq --with-colons --list-secret-keys other@mooring.invalid | awk -F: '$1 == "fpr" {print $10; exit}')
gpgq --yes --armor --detach-sign --local-user "$OTHER" --output "$W/release/other-key.asc" "$W/release/MANIFEST.json"
printf '{"not": "the manifest"}\n' > "$W/other-bytes.json"
gpgq --yes --armor --detach-sign --local-user "$FPR" --output "$W/release/other-bytes.asc" "$W/other-bytes.json"

# tampered tarballs, repacked member by member
python3 - "$TARBALL" "$W" <<'PY'
import hashlib, io, json, sys, tarfile
src, work = sys.argv[1], sys.argv[2]

def repack(dest, change):
    with tarfile.open(src) as tin, tarfile.open(dest, "w:gz") as tout:
        members = [(m, tin.extractfile(m).read() if m.isfile() else None) for m in tin.getmembers()]
        files = {m.name: data for m, data in members}
        change(files)
        for m, _ in members:
            data = files[m.name]
            if data is not None:
                m.size = len(data)
            tout.addfile(m, io.BytesIO(data) if data is not None else None)

def sha(data):
    return hashlib.sha256(data).hexdigest()

def edit_readme(files):
    files["README.md"] += b"\nTampered after the build.\n"

def edit_readme_and_files_json(files):
    edit_readme(files)
    fj = json.loads(files["FILES.json"])
    for entry in fj["files"]:
        if entry["name"] == "README.md":
            entry["chksum_sha256"] = sha(files["README.md"])
    files["FILES.json"] = json.dumps(fj, indent=4).encode()

def rebuild_manifest(files):
    edit_readme_and_files_json(files)
    mf = json.loads(files["MANIFEST.json"])
    mf["file_manifest_file"]["chksum_sha256"] = sha(files["FILES.json"])
    files["MANIFEST.json"] = json.dumps(mf, indent=4).encode()

repack(work + "/tampered-file.tar.gz", edit_readme)
repack(work + "/tampered-files-json.tar.gz", edit_readme_and_files_json)
repack(work + "/tampered-manifest.tar.gz", rebuild_manifest)
PY

echo "--- a Galaxy v3 server on 127.0.0.1 (tests/tarball/galaxy_server.py)"
serve() {  # serve TARBALL: what the server publishes from now on
  printf '{"tarball": "%s", "fingerprint": "%s"}\n' "$1" "$FPR" > "$W/state.json.tmp"
  mv "$W/state.json.tmp" "$W/state.json"
}
serve "$TARBALL"
python3 "$HERE/galaxy_server.py" "$W/state.json" "$W/port" --lifetime 600 &
SERVER_PID=$!
for _ in $(seq 50); do [ -s "$W/port" ] && break; sleep 0.1; done
[ -s "$W/port" ] || fail "the loopback Galaxy server did not start"
URL="http://127.0.0.1:$(cat "$W/port")/api/"
VERSION=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["collection_info"]["version"])' "$W/release/MANIFEST.json")
COLL=mooring.cluster:$VERSION
echo "server $URL serves $COLL"

install_from_server() {  # install_from_server DIR SIG [more args]
  local dir=$1 sig=$2; shift 2
  rm -rf "$dir"
  ansible-galaxy collection install --force --no-deps --no-cache "$COLL" -s "$URL" \
    --signature "file://$sig" --keyring "$KEYRING" --required-valid-signature-count +1 -p "$dir" -vvvv "$@"
}
verify_offline() {  # verify_offline DIR [SIG]: no SIG, no --signature
  ansible-galaxy collection verify mooring.cluster --offline ${2:+--signature "file://$2"} \
    --keyring "$KEYRING" --required-valid-signature-count +1 -p "$1" -vvvv
}

echo "--- (a) install from the server with --signature and --keyring: the signature is checked"
expect_ok "$W/a.log" "GnuPG signature verification succeeded for mooring.cluster" -- install_from_server "$W/a" "$SIG"
grep -q "^\[GNUPG:\] GOODSIG" "$W/a.log" || fail "gpg reported no GOODSIG during install"
grep -q "^\[GNUPG:\] VALIDSIG $FPR" "$W/a.log" || fail "gpg did not check the signature with key $FPR"
[ -f "$W/a/ansible_collections/mooring/cluster/MANIFEST.json" ] || fail "nothing installed in $W/a"
echo "  installed; gpg: GOODSIG, VALIDSIG $FPR"

echo "--- (b) collection verify --offline --signature --keyring on the installed copy"
expect_ok "$W/b.log" "Successfully verified that checksums for '$COLL' are internally consistent with its manifest." \
  -- verify_offline "$W/a" "$SIG"
grep -q "GnuPG signature verification succeeded, verifying contents of $COLL" "$W/b.log" \
  || fail "verify did not check the signature"
grep -q "^\[GNUPG:\] VALIDSIG $FPR" "$W/b.log" || fail "verify: gpg did not check with key $FPR"
echo "  verified: signature (VALIDSIG $FPR), MANIFEST.json -> FILES.json -> every file"

echo "--- (c) wrong signatures are refused"
echo " install, signature by a key not in the keyring:"
expect_refused "$W/c1.log" "Not installing mooring.cluster because GnuPG signature verification failed." \
  -- install_from_server "$W/c1" "$W/release/other-key.asc"
grep -q "^\[GNUPG:\] NO_PUBKEY" "$W/c1.log" || fail "install: gpg did not report NO_PUBKEY"
echo "  gpg: $(grep -m1 '^\[GNUPG:\] NO_PUBKEY' "$W/c1.log")"
echo " install, the right key over other bytes:"
expect_refused "$W/c2.log" "Not installing mooring.cluster because GnuPG signature verification failed." \
  -- install_from_server "$W/c2" "$W/release/other-bytes.asc"
grep -q "^\[GNUPG:\] BADSIG" "$W/c2.log" || fail "install: gpg did not report BADSIG"
echo "  gpg: $(grep -m1 '^\[GNUPG:\] BADSIG' "$W/c2.log")"
[ ! -e "$W/c2/ansible_collections/mooring/cluster" ] || fail "a refused install left files behind"
echo " verify --offline, signature by a key not in the keyring:"
expect_refused "$W/c3.log" "Signature verification failed for 'mooring.cluster'" -- verify_offline "$W/a" "$W/release/other-key.asc"
echo " verify --offline, the right key over other bytes:"
expect_refused "$W/c4.log" "Signature verification failed for 'mooring.cluster'" -- verify_offline "$W/a" "$W/release/other-bytes.asc"

echo " verify --offline with the keyring but no signature (+1: at least one must verify):"
expect_refused "$W/c5.log" "Signature verification failed for 'mooring.cluster': no successful signatures" -- verify_offline "$W/a"

echo "--- (c) tampered tarballs are refused"
echo " a file changed inside (FILES.json as built):"
serve "$W/tampered-file.tar.gz"
expect_refused "$W/t1.log" "Checksum mismatch for 'README.md' inside collection" -- install_from_server "$W/t1" "$SIG"
echo " a file and FILES.json changed (MANIFEST.json and its signature as released):"
serve "$W/tampered-files-json.tar.gz"
# install checks the signature on MANIFEST.json and each file against FILES.json, not FILES.json
# against MANIFEST.json; verify does, so the copy is refused there
rc=0; install_from_server "$W/t2" "$SIG" > "$W/t2-install.log" 2>&1 || rc=$?
echo "  install: rc $rc ($(grep -c 'GnuPG signature verification succeeded' "$W/t2-install.log") good signature check)"
if [ "$rc" -eq 0 ]; then
  expect_refused "$W/t2.log" "Collection mooring.cluster contains modified content in the following files:" \
    -- verify_offline "$W/t2" "$SIG"
  grep -A2 "contains modified content" "$W/t2.log" | grep -q "FILES.json" || fail "verify did not name FILES.json"
  echo "  verify names: $(grep -A3 'contains modified content' "$W/t2.log" | grep -o 'FILES.json' | head -1)"
fi
echo " MANIFEST.json changed after signing (FILES.json and MANIFEST.json rebuilt):"
serve "$W/tampered-manifest.tar.gz"
expect_refused "$W/t3.log" "Not installing mooring.cluster because GnuPG signature verification failed." \
  -- install_from_server "$W/t3" "$SIG"
grep -q "^\[GNUPG:\] BADSIG" "$W/t3.log" || fail "gpg did not report BADSIG for the changed MANIFEST.json"
echo "  gpg: $(grep -m1 '^\[GNUPG:\] BADSIG' "$W/t3.log")"
echo " an installed file changed on disk:"
echo "# tampered on disk" >> "$W/a/ansible_collections/mooring/cluster/README.md"
expect_refused "$W/t4.log" "Collection mooring.cluster contains modified content in the following files:" \
  -- verify_offline "$W/a" "$SIG"
grep -A3 "contains modified content" "$W/t4.log" | grep -q "README.md" || fail "verify did not name README.md"

echo "--- the local tarball: install FILE.tar.gz --signature --keyring"
rc=0
ansible-galaxy collection install --force --no-deps "$TARBALL" --signature "file://$SIG" --keyring "$KEYRING" \
  -p "$W/local" -vvvv > "$W/local.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] && grep -q "'NoneType' object is not iterable" "$W/local.log"; then
  echo "  not usable in this ansible-core: rc $rc, $(grep -m1 -o "Unexpected Exception.*" "$W/local.log")"
  echo "  (the --signature of a local tarball never reaches install_artifact; ansible/ansible#81597)"
elif [ "$rc" -eq 0 ] && grep -q "GnuPG signature verification succeeded for mooring.cluster" "$W/local.log"; then
  echo "  the local tarball's signature is checked now; a wrong one must be refused:"
  expect_refused "$W/local2.log" "GnuPG signature verification failed" -- \
    ansible-galaxy collection install --force --no-deps "$TARBALL" --signature "file://$W/release/other-bytes.asc" \
    --keyring "$KEYRING" -p "$W/local2"
else
  cat "$W/local.log" >&2; fail "install of the local tarball with --signature: unexpected (rc $rc)"
fi
echo "signed: OK"
