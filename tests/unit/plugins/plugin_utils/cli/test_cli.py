# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mooring CLI, run as a user runs it (a subprocess of .venv's python)."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
EXAMPLE = os.path.join(ROOT, "inventories", "example", "installer.yaml")


def mooring(*args, stdin=None):
    code = "import sys; from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], input=stdin, capture_output=True, text=True, check=False)


def test_hash_prints_only_the_hash():
    text = "apiVersion: cluster.kurl.sh/v1beta1\nkind: Installer\nmetadata: {name: a}\nspec: {kubernetes: {version: 1.15.3}}\n"
    run = mooring("spec", "hash", "-", stdin=text)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "3138d30\n"


def test_resolve_writes_then_reports_unchanged(tmp_path):
    out = tmp_path / "lock.yaml"
    first = mooring("spec", "resolve", EXAMPLE, "-o", str(out))
    assert first.returncode == 0, first.stderr
    assert "written" in first.stdout
    text = out.read_text()
    second = mooring("spec", "resolve", EXAMPLE, "-o", str(out))
    assert "unchanged" in second.stdout
    assert out.read_text() == text


def test_bad_input_one_line_per_problem_and_nonzero(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: cluster.mooring.io/v1beta1\nkind: Installer\n"
                   "spec: {kubernetes: {version: 1.31.z}, etcd: {version: latest, topology: x}}\n")
    run = mooring("spec", "validate", str(bad))
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert lines == [
        "error: %s: spec.etcd.topology: must be one of external, stacked, not 'x'" % bad,
        "error: %s: spec.kubernetes.version: must be an exact version, 'latest' or 'X.Y.x', not '1.31.z'" % bad,
    ]
    assert "Traceback" not in run.stderr


def test_missing_file_is_an_error_not_a_traceback():
    run = mooring("spec", "validate", "/nonexistent/installer.yaml")
    assert run.returncode == 1
    assert run.stderr.startswith("error: cannot read /nonexistent/installer.yaml")


def test_catalog_list():
    run = mooring("catalog", "list", "kubernetes")
    assert run.returncode == 0
    assert run.stdout.splitlines()[0].startswith("1.36.4")


def test_kurl_warnings_are_printed_by_validate_hash_and_resolve_also_with_errors(tmp_path):
    good = "apiVersion: kurl.sh/v1beta1\nspec:\n  kubernetes: {version: 1.35.x}\n  calico: {version: latest}\n  rook: {version: 1.12.x}\n"
    bad = good.replace("kubernetes: {version: 1.35.x}", "kubernetes: latest")
    rook = "warning: spec.rook: kURL add-on not supported by mooring.cluster; ignored\n"
    for command in ("validate", "hash", "resolve"):
        run = mooring("spec", command, "-", stdin=good)
        assert run.returncode == 0, run.stderr
        assert run.stderr == rook
    run = mooring("spec", "hash", "-", stdin=good)
    assert len(run.stdout.strip()) == 7
    for command in ("validate", "resolve"):
        run = mooring("spec", command, "-", stdin=bad)
        assert run.returncode == 1
        assert run.stderr == rook + "error: <stdin>: spec.kubernetes: must be a mapping of the add-on's fields, not 'latest'\n"
        assert "Traceback" not in run.stderr


def test_a_closed_pipe_is_not_an_error():
    code = "import sys; from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main; sys.exit(main())"
    # The reader closes its end before the command writes (as `| head -1` does after one line).
    proc = subprocess.Popen([sys.executable, "-c", code, "catalog", "list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait() == 0, stderr
    assert stderr == ""
