#!/usr/bin/env bash
# Runs shellcheck on every shell script git tracks; exits non-zero on any finding.
#   scripts/shellcheck.sh
# A shell script is a tracked file whose name ends in .sh or whose first line is a sh/bash
# shebang (scripts/*, .ci/run, molecule/*/run.sh, roles/*/files/*). Jinja templates (*.j2)
# are skipped even with a shebang: shellcheck cannot parse the {{ }} and {% %} in them.
# A finding that is intended is silenced on its own line with `# shellcheck disable=SCxxxx`
# and the reason. Installs Debian's shellcheck with apt-get when it is missing (a new CI machine).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SHEBANG='^#![[:space:]]*/(usr/)?bin/(env[[:space:]]+)?(ba)?sh([[:space:]]|$)'

if ! command -v shellcheck >/dev/null; then
  echo "shellcheck: installing shellcheck" >&2
  # a new machine may have no package lists yet: update them when the install finds none
  apt-get -o DPkg::Lock::Timeout=600 install -y -q shellcheck >/dev/null \
    || { apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -q shellcheck >/dev/null; }
fi

declare -A seen=()
files=()
add() {
  case $1 in *.j2) return ;; esac
  [ -f "$1" ] && [ -z "${seen[$1]:-}" ] || return 0  # not deleted in the work tree, not listed twice
  seen[$1]=1
  files+=("$1")
}
while IFS= read -r -d '' f; do add "$f"; done < <(git ls-files -z -- '*.sh')
# git grep -I skips binary files; only the first line decides.
while IFS= read -r -d '' f; do
  first=
  IFS= read -r first < "$f" || true
  if [[ $first =~ $SHEBANG ]]; then add "$f"; fi
done < <(git grep -z -I -l -E "$SHEBANG" || true)

rc=0
shellcheck -x "${files[@]}" || rc=$?
echo "shellcheck: ${#files[@]} files checked$([ "$rc" -eq 0 ] && echo ", no findings")"
exit "$rc"
