# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""mooring.cluster.settings: each setting several roles read is defaulted once.

The role has no tasks, only defaults; the roles that read one of its settings list it in meta/main.yml.
Held here: no other role's defaults/main.yml gives such a setting a value, no task or play repeats one inline
with ``| default(...)``, every role that reads one depends on the settings role, and every setting is documented
by the role (or the doc) that owns it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from test_role_docs import NO_VALUE, role_defaults, role_dependencies, spec_options

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = role_defaults("settings")
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir() and p.name != "settings")
# Settings a playbook owns rather than a role: documented in these docs.
DOCUMENTED_IN_DOCS = {"mooring_kubeconfig": "docs/lifecycle.md", "mooring_addons_render_dir": "docs/lifecycle.md"}


def inline_defaults(text, names=SETTINGS):
    """Each `NAME | default(` of a shared setting in text (a second default for it)."""
    return [m.group(1) for m in re.finditer(r"\b(" + "|".join(map(re.escape, names)) + r")\)?\s*\|\s*default\(", text)]


def test_settings_role_is_defaults_only():
    assert SETTINGS, "roles/settings/defaults/main.yml is empty"
    assert not (ROOT / "roles" / "settings" / "tasks").exists(), "mooring.cluster.settings must not run anything"


@pytest.mark.parametrize("role", ROLES)
def test_no_second_default(role):
    assert not set(SETTINGS) & set(role_defaults(role)), \
        f"roles/{role}/defaults/main.yml gives a value to a setting of mooring.cluster.settings"


def test_no_inline_default_repeats_a_setting():
    found = []
    for path in sorted([*(ROOT / "roles").rglob("*.yml"), *(ROOT / "playbooks").rglob("*.yml")]):
        found += [f"{path.relative_to(ROOT)}: {name}" for name in inline_defaults(path.read_text())]
    assert not found, "shared settings defaulted again inline (mooring.cluster.settings has them):\n" + "\n".join(found)


@pytest.mark.parametrize("role", ROLES)
def test_every_role_depends_on_settings(role):
    """Every role, not only those whose files name a setting: the ``vars:`` of an ``include_role`` are evaluated in
    the included role's scope, so a role that passes a setting to another sees its default only when the other
    has it too (install stopped on ``mooring_addons_render_dir`` passed from cluster to addons before this)."""
    assert "mooring.cluster.settings" in role_dependencies(role), \
        f"roles/{role}/meta/main.yml: dependencies must list mooring.cluster.settings"


def test_every_setting_is_documented_by_its_owner():
    owners = {}
    for role in ROLES:
        if (ROOT / "roles" / role / "meta" / "argument_specs.yml").exists():
            options = spec_options(role)[0]
            for name, option in options.items():
                if name in SETTINGS:
                    owners.setdefault(name, []).append((role, option["default"]))
    undocumented = [n for n in SETTINGS if n not in owners
                    and n not in (ROOT / DOCUMENTED_IN_DOCS.get(n, "README.md")).read_text()]
    assert not undocumented, f"settings no role's argument spec (or its doc) documents: {undocumented}"
    for name, documented in owners.items():
        for role, default in documented:
            if default is not NO_VALUE:
                assert default == SETTINGS[name] and type(default) is type(SETTINGS[name]), \
                    f"{name}: roles/{role} documents default {default!r}, mooring.cluster.settings has {SETTINGS[name]!r}"


def test_probe_an_inline_default_is_found():
    text = 'timeout: "{{ kubeadm_drain_timeout | default(300) }}"\nx: "{{ (containerd_cni_bin_dir | default(\'/x\')) }}"'
    assert inline_defaults(text) == ["kubeadm_drain_timeout", "containerd_cni_bin_dir"]
    assert inline_defaults('timeout: "{{ kubeadm_drain_timeout }}"') == []


def _plays():
    for path in sorted((ROOT / "playbooks").glob("*.yml")):
        for index, play in enumerate(yaml.safe_load(path.read_text()) or []):
            if isinstance(play, dict) and "hosts" in play:
                yield f"{path.name} play {index + 1}", play


def _static_roles(play):
    """The roles a play loads when it is parsed (``roles:`` and ``import_role``): only their defaults are there for
    the play's own tasks and vars; an ``include_role``'s are not."""
    names = [r if isinstance(r, str) else r.get("role", r.get("name")) for r in play.get("roles") or []]
    names += re.findall(r"import_role:\s*\{?\s*name:\s*([\w.]+)", yaml.safe_dump(play, width=1000))
    return {name.rsplit(".", 1)[-1] for name in names}


def test_a_play_that_reads_a_setting_has_its_default():
    """A play reading a shared setting loads a role statically (every role depends on mooring.cluster.settings)."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, SETTINGS)) + r")\b")
    missing = []
    for name, play in _plays():
        reads = sorted(set(pattern.findall(yaml.safe_dump(play))))
        if reads and not _static_roles(play) & (set(ROLES) | {"settings"}):
            missing.append(f"{name} ({play.get('name')}): {', '.join(reads)}")
    assert not missing, "plays reading shared settings with no role loaded when the play is parsed:\n" + "\n".join(missing)
