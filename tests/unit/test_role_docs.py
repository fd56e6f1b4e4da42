# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The variable tables of the role READMEs (what Galaxy shows) against meta/argument_specs.yml.

Every role with an argument spec documents each option of each entry point in a Markdown table of
its README::

    | variable | type | default | meaning |
    |---|---|---|---|
    | `name` | `int` | `600` | ... |
    | `a_port` / `b_port` | `int` | `2379` / `2380` | ... |

The test reads every such table and compares it with the union of the entry points' options: the same
names (no row twice), the same type, ``required`` in the default cell exactly for the options some
entry point requires, and the default where the cell is literal values only (backticked YAML, one
per name or one for all); a default told in words (``the lock's``, ``unset``) is not compared. The
spec's defaults are checked against ``defaults/main.yml`` (the values the role really gets) where
that file holds a plain value, and every public variable there must be in the spec. A role that lists
``mooring.cluster.settings`` as a dependency gets the settings shared with other roles from there: those
defaults count as the role's own for the comparison (tests/unit/test_settings_role.py holds the rest).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLES = sorted(p.parent.parent.name for p in (ROOT / "roles").glob("*/meta/argument_specs.yml"))

HEADER = "| variable | type | default | meaning |"
CODE = re.compile(r"`([^`]*)`")
LITERALS = re.compile(r"^`[^`]*`( / `[^`]*`)*$")
NO_VALUE = object()


def _cells(line):
    """The cells of a table row; a `|` inside backticks is text, not a separator."""
    cells, cell, in_code = [], "", False
    for char in line.strip()[1:-1]:
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += char
    cells.append(cell.strip())
    return cells


def readme_rows(text):
    """{variable: {"type", "required", "default"}} from every variable table of a README."""
    rows, in_table, problems = {}, False, []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() == HEADER:
            in_table = True
            continue
        if not in_table or not line.startswith("|"):
            in_table = False
            continue
        if set(line) <= set("|-: "):
            continue
        cells = _cells(line)
        if len(cells) != 4:
            problems.append(f"line {number}: {len(cells)} cells, want 4 (variable, type, default, meaning)")
            continue
        names = CODE.findall(cells[0])
        types = CODE.findall(cells[1])
        default = cells[2]
        required = "required" in default
        values = [NO_VALUE] * len(names)
        literal = re.sub(r"\s*\(?required\)?$", "", default).strip()
        if LITERALS.match(literal):
            parsed = [_value(v) for v in CODE.findall(literal)]
            values = parsed * len(names) if len(parsed) == 1 else parsed
        if len(types) == 1:
            types = types * len(names)
        if not names or len(types) != len(names) or len(values) != len(names):
            problems.append(f"line {number}: {len(names)} names, {len(types)} types, {len(values)} defaults: {line}")
            continue
        for name, type_, value in zip(names, types, values):
            if name in rows:
                problems.append(f"line {number}: `{name}` has a second row")
            rows[name] = {"type": type_, "required": required, "default": value}
    return rows, problems


def _value(text):
    """A default cell's literal as YAML, or the text itself (templates, paths YAML cannot read)."""
    if "{{" in text:
        return text
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def spec_options(role):
    """{option: {"type", "required", "default"}} over every entry point, and the disagreements between them."""
    specs = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    options, problems = {}, []
    for entry_point, spec in specs.items():
        for name, option in (spec.get("options") or {}).items():
            seen = options.setdefault(name, {"type": option.get("type", "str"), "required": False,
                                             "default": option.get("default", NO_VALUE)})
            seen["required"] = seen["required"] or bool(option.get("required"))
            if option.get("type", "str") != seen["type"]:
                problems.append(f"{name}: type {option.get('type', 'str')} in {entry_point}, {seen['type']} elsewhere")
            if option.get("default", seen["default"]) != seen["default"]:
                problems.append(f"{name}: default {option['default']!r} in {entry_point}, {seen['default']!r} elsewhere")
    return options, problems


def role_defaults(role):
    path = ROOT / "roles" / role / "defaults" / "main.yml"
    return (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


def role_dependencies(role):
    path = ROOT / "roles" / role / "meta" / "main.yml"
    meta = (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}
    return [d if isinstance(d, str) else d.get("role", d.get("name")) for d in meta.get("dependencies") or []]


def inherited_defaults(role):
    """The defaults a role gets from mooring.cluster.settings (when it depends on it), under its own."""
    shared = role_defaults("settings") if "mooring.cluster.settings" in role_dependencies(role) else {}
    return dict(shared, **role_defaults(role))


def _same(a, b):
    """Equal and of the same kind (YAML `1` is not `true`, `2` is not `2.0`)."""
    return a == b and type(a) is type(b)


def compare(role, readme_text):
    """Every disagreement between a README's tables, the role's argument spec and its defaults."""
    options, problems = spec_options(role)
    rows, table_problems = readme_rows(readme_text)
    problems += [f"README {p}" for p in table_problems]
    defaults = role_defaults(role)
    seen_defaults = inherited_defaults(role)
    for name in sorted(set(options) - set(rows)):
        problems.append(f"`{name}` is in meta/argument_specs.yml but has no row in README.md")
    for name in sorted(set(rows) - set(options)):
        problems.append(f"`{name}` has a row in README.md but is not in meta/argument_specs.yml")
    for name in sorted(set(options) & set(rows)):
        spec, row = options[name], rows[name]
        if row["type"] != spec["type"]:
            problems.append(f"`{name}`: README type `{row['type']}`, argument spec type `{spec['type']}`")
        if row["required"] != spec["required"]:
            problems.append(f"`{name}`: README {'says' if row['required'] else 'does not say'} required, "
                            f"argument spec required={spec['required']}")
        truth = spec["default"]
        if truth is NO_VALUE and not _templated(seen_defaults.get(name, NO_VALUE)):
            truth = seen_defaults.get(name, NO_VALUE)
        if row["default"] is not NO_VALUE and truth is not NO_VALUE and not _same(row["default"], truth):
            problems.append(f"`{name}`: README default {row['default']!r}, argument spec/defaults {truth!r}")
    for name, value in seen_defaults.items():
        if name.startswith("_") or (name not in defaults and name not in options):
            continue  # a shared setting this role does not document (another role owns it)
        if name not in options:
            problems.append(f"`{name}` is in defaults/main.yml but not in meta/argument_specs.yml")
        elif options[name]["default"] is not NO_VALUE and not _templated(value) \
                and not _same(options[name]["default"], value):
            problems.append(f"`{name}`: argument spec default {options[name]['default']!r}, "
                            f"defaults/main.yml {value!r}")
    return problems


def _templated(value):
    return value is NO_VALUE or (isinstance(value, str) and "{{" in value)


def test_every_role_with_a_spec_is_checked():
    assert len(ROLES) >= 10, ROLES


@pytest.mark.parametrize("role", ROLES)
def test_readme_table_matches_argument_spec(role):
    readme = ROOT / "roles" / role / "README.md"
    assert readme.exists(), f"roles/{role}/README.md is missing: document the role's variables there"
    problems = compare(role, readme.read_text())
    assert not problems, f"roles/{role}: README.md, meta/argument_specs.yml, defaults/main.yml disagree:\n  " + \
        "\n  ".join(problems)


SAMPLE = """
| variable | type | default | meaning |
|---|---|---|---|
| `x_port` / `x_peer` | `int` | `1` / `2` | ports, `a|b` |
| `x_name` | `str` | the host's name | words |
| `x_file` | `path` | required | file |
"""


def test_readme_rows_parse():
    rows, problems = readme_rows(SAMPLE)
    assert problems == []
    assert rows == {
        "x_port": {"type": "int", "required": False, "default": 1},
        "x_peer": {"type": "int", "required": False, "default": 2},
        "x_name": {"type": "str", "required": False, "default": NO_VALUE},
        "x_file": {"type": "path", "required": True, "default": NO_VALUE},
    }


def test_drift_is_found():
    """A wrong default, a wrong type and a missing row are each named."""
    text = (ROOT / "roles" / "addons" / "README.md").read_text()
    text = text.replace("| `addons_wait_timeout` | `int` | `600` |", "| `addons_wait_timeout` | `str` | `60` |")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("| `addons_apply` |"))
    problems = compare("addons", text)
    assert "`addons_apply` is in meta/argument_specs.yml but has no row in README.md" in problems
    assert "`addons_wait_timeout`: README type `str`, argument spec type `int`" in problems
    assert "`addons_wait_timeout`: README default 60, argument spec/defaults 600" in problems
