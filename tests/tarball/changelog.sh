#!/usr/bin/env bash
# The release notes are consistent, with no fragment consumed or file written in the checkout:
#   - antsibull-changelog lint (fragments and changelogs/changelog.yaml)
#   - CHANGELOG.rst is what `antsibull-changelog generate` makes from changelog.yaml (generated in a
#     temporary copy and compared)
#   - galaxy.yml's version is the latest release in changelog.yaml
# Fragments of work after the last release are expected (they go into the next one).
# Usage: tests/tarball/changelog.sh WORKDIR   (antsibull-changelog from the checkout's .venv)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$1
BIN="$ROOT/.venv/bin"
fail() { echo "changelog: FAILED: $*" >&2; exit 1; }

(cd "$ROOT" && "$BIN/antsibull-changelog" lint) || fail "antsibull-changelog lint"

rm -rf "$W" && mkdir -p "$W"
cp -r "$ROOT/changelogs" "$ROOT/galaxy.yml" "$W/"
rm -f "$W/changelogs/.plugin-cache.yaml"
(cd "$W" && "$BIN/antsibull-changelog" generate) || fail "antsibull-changelog generate"
diff -u "$ROOT/CHANGELOG.rst" "$W/CHANGELOG.rst" \
  || fail "CHANGELOG.rst is not what 'antsibull-changelog generate' makes; run it and commit"

"$BIN/python" - "$ROOT/galaxy.yml" "$ROOT/changelogs/changelog.yaml" <<'PY'
import sys
import yaml
from packaging.version import Version

galaxy = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
changes = yaml.safe_load(open(sys.argv[2], encoding="utf-8"))
releases = sorted((changes.get("releases") or {}), key=Version)
if not releases:
    sys.exit("changelog: FAILED: changelogs/changelog.yaml has no release")
latest = releases[-1]
if str(galaxy["version"]) != latest:
    sys.exit(
        "changelog: FAILED: galaxy.yml version %s is not the latest release in changelogs/changelog.yaml (%s)"
        % (galaxy["version"], latest)
    )
print("changelog: OK, galaxy.yml %s = latest release %s (%s), CHANGELOG.rst as generated"
      % (galaxy["version"], latest, changes["releases"][latest].get("release_date")))
PY
