#!/usr/bin/env bash
# The collection's docs as Galaxy and docs.ansible.com show them, checked and built offline.
#   lint   antsibull-docs lint-collection-docs: docs/docsite/ (extra-docs.yml, links.yml, rst/), every
#          plugin's and role's documentation against the docsite schema, its markup and references (to
#          this collection, ansible.builtin and galaxy.yml's dependencies), rstcheck of the generated RST
#   build  antsibull-docs sphinx-init + collection + sphinx-build -W (warnings fail; intersphinx off, so
#          nothing is fetched) into .work/docs/html; then a page for every module, every other documented
#          plugin (filters and tests: one per plugins/<type>/*.yml doc; action plugins get none, their
#          module has it) and every role with meta/argument_specs.yml, computed from the tree
# Both run on a copy of what git would ship (tracked files plus untracked ones not ignored), so a local
# .venv/ or .work/ is neither read nor documented.
# Usage: scripts/docs.sh [all|lint|build]      (default all)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$ROOT/.venv/bin:$PATH"
OUT="$ROOT/.work/docs"
BASE="${TMPDIR:-/tmp}/mooring-docs.$(id -u)"
COLL="$BASE/collections/ansible_collections/mooring/cluster"

copy_collection() {
  rm -rf "$BASE"
  mkdir -p "$COLL"
  git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -C "$COLL" -xf -
}

run_lint() {
  # 'dependent' validates references to galaxy.yml's dependencies and ansible.builtin too; 'all' would load
  # every collection of the ansible package (minutes) and adds nothing for references we make.
  antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs dependent \
    --check-extra-docs-refs "$COLL"
}

run_build() {
  local site="$BASE/site"
  export ANSIBLE_COLLECTIONS_PATH="$BASE/collections"
  mkdir -p "$site"
  chmod og-w "$site"  # antsibull-docs writes only into a directory no one else can write to
  antsibull-docs sphinx-init --use-current --fail-on-error --squash-hierarchy --dest-dir "$site" \
    --project mooring.cluster --title "mooring.cluster" --html-short-title "mooring.cluster" mooring.cluster >/dev/null \
    || { echo "docs: antsibull-docs sphinx-init failed" >&2; return 1; }
  mkdir -p "$site/rst"
  chmod og-w "$site/rst"  # antsibull-docs wants the directory only writable by itself
  antsibull-docs --config-file "$site/antsibull-docs.cfg" collection --cleanup everything --fail-on-error \
    --use-current --squash-hierarchy --dest-dir "$site/rst" mooring.cluster
  # Offline: the generated conf.py maps python, jinja2 and ansible_devel to inventories fetched from the web.
  # Instead, one local inventory of the outside labels the pages use, linked to docs.ansible.com; a label
  # it does not know stays undefined and fails the build (-W).
  external_inventory "$site/rst" "$site/external.inv"
  printf '\n# scripts/docs.sh: offline, nothing fetched\nintersphinx_mapping = {"ansible": ("%s", "%s")}\n' \
    "https://docs.ansible.com/ansible/latest/" "$site/external.inv" >> "$site/conf.py"
  rm -rf "$OUT/html"
  mkdir -p "$OUT"
  sphinx-build -q -b html -c "$site" -W --keep-going -j auto "$site/rst" "$OUT/html"
  check_pages "$OUT/html"
}

external_inventory() {  # external_inventory RST_DIR FILE: a Sphinx inventory of the labels outside this collection
  python - "$@" <<'PY'
import re, sys, zlib
from pathlib import Path
# Labels of the Ansible documentation the generated pages refer to, and their pages.
ANSIBLE = {
    "action_plugins": "plugins/action.html",
    "callback_plugins": "plugins/callback.html",
    "inventory_plugins": "plugins/inventory.html",
    "filter_plugins": "plugins/filter.html",
    "lookup_plugins": "plugins/lookup.html",
    "test_plugins": "plugins/test.html",
    "common_return_values": "reference_appendices/common_return_values.html",
    "ansible_configuration_settings": "reference_appendices/config.html",
}
rst_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
labels = set()
for page in rst_dir.glob("*.rst"):
    labels.update(re.findall(r":ref:`(?:[^`<]*<)?([^`<>]+)>?`", page.read_text()))
lines = []
for label in sorted(labels):
    plugin = re.fullmatch(r"ansible_collections\.(\w+)\.(\w+)\.(\w+)", label)
    if label.startswith("ansible_collections.mooring.cluster."):
        continue
    if plugin:
        uri = "collections/{}/{}/{}.html".format(*plugin.groups())
    elif label in ANSIBLE:
        uri = ANSIBLE[label]
    else:
        continue
    lines.append(f"{label} std:label -1 {uri} {label}\n")
header = "# Sphinx inventory version 2\n# Project: Ansible\n# Version: latest\n# The remainder of this file is compressed using zlib.\n"
out.write_bytes(header.encode() + zlib.compress("".join(lines).encode()))
PY
}

check_pages() {  # check_pages HTML_DIR: a page for every plugin and role the tree has
  local html=$1 missing=() name file type n_modules=0 n_plugins=0 n_roles=0
  for file in plugins/modules/*.py; do
    name=$(basename "$file" .py)
    [ "$name" = __init__ ] && continue
    n_modules=$((n_modules + 1))
    [ -f "$html/${name}_module.html" ] || missing+=("module $name")
  done
  # Plugin types with pages; action plugins have none (their module has the docs), doc_fragments,
  # module_utils and plugin_utils are not plugins. Filters and tests: one page per YAML doc file.
  for dir in plugins/*/; do
    type=$(basename "$dir")
    case "$type" in modules | action | doc_fragments | module_utils | plugin_utils) continue ;; esac
    for file in "$dir"*; do
      case "$type:$file" in
        filter:*.yml | test:*.yml) name=$(basename "$file" .yml) ;;
        filter:* | test:*) continue ;;
        *:*.py) name=$(basename "$file" .py) ;;
        *) continue ;;
      esac
      [ "$name" = __init__ ] && continue
      n_plugins=$((n_plugins + 1))
      [ -f "$html/${name}_${type}.html" ] || missing+=("$type plugin $name")
    done
  done
  # A filter or test a plugin file defines without a doc file gets no page: name it.
  for type in filter test; do
    for name in $(ansible-doc -t "$type" -l mooring.cluster --json | python -c 'import json, sys; print(*(k.split(".")[-1] for k in json.load(sys.stdin)))'); do
      [ -f "plugins/$type/$name.yml" ] || missing+=("$type plugin $name (no plugins/$type/$name.yml)")
    done
  done
  for file in roles/*/meta/argument_specs.yml; do
    name=$(basename "$(dirname "$(dirname "$file")")")
    n_roles=$((n_roles + 1))
    [ -f "$html/${name}_role.html" ] || missing+=("role $name")
  done
  echo "docs: pages for $n_modules modules, $n_plugins other plugins, $n_roles roles in $html"
  if [ ${#missing[@]} -gt 0 ]; then
    printf 'docs: no page for %s\n' "${missing[@]}" >&2
    return 1
  fi
}

what=${1:-all}
t0=$SECONDS
copy_collection
case "$what" in
  lint) run_lint ;;
  build) run_build ;;
  all) run_lint; run_build ;;
  *) echo "usage: $0 [all|lint|build]" >&2; exit 2 ;;
esac
echo "docs: $what done in $((SECONDS - t0))s"
