# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real-shaped kURL Installer documents (tests/data/kurl/, written after kURL's own specs).

Each document goes through what a user runs: ``mooring spec validate``, ``hash`` and
``resolve`` (in-process, the CLI's ``main``). The corpus holds every kURL add-on and most of
their fields, in every document shape kURL accepts. Asserted for every document:

* no traceback: only the CLI's exit codes 0 and 1, never an exception;
* no rejection for something unsupported: an unsupported add-on or field is never an error;
  the only errors are the ones that make a spec unusable here (no ``kubernetes`` add-on, as in
  kURL's k3s and rke2 specs; a template placeholder where a mapped add-on's version belongs,
  as in kURL's test templates before their substitution; a version the catalog does not have,
  for ``resolve``);
* every unsupported add-on and field is named once, in a warning, and nothing inside an
  ignored add-on is named again;
* the hash is kURL's (the same as hashing the text as kurl.sh reads it).
"""

from __future__ import annotations

import glob
import io
import os
import re
from contextlib import redirect_stderr, redirect_stdout

import pytest
import yaml

from ansible_collections.mooring.cluster.plugins.module_utils.spec import kurlmap, schema
from ansible_collections.mooring.cluster.plugins.module_utils.spec.kurlhash import kurl_hash_yaml
from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "data", "kurl")
_SEPARATOR = re.compile(r"^---[ \t]*$", re.MULTILINE)
NOT_AN_ERROR = re.compile(r"is not a known add-on|is not a known field|not supported")
PLACEHOLDER = re.compile(r"__\w+__|\^\^ \w+ \^\^")


def documents():
    """``(id, text)`` of every document in the corpus, as its own text (the hash reads text)."""
    found = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.yaml"))):
        with open(path, encoding="utf-8") as handle:
            parts = _SEPARATOR.split(handle.read())
        for number, text in enumerate(parts):
            if yaml.safe_load(text) is not None:
                found.append(("%s-%d" % (os.path.basename(path)[:-len(".yaml")], number), text))
    return found


DOCUMENTS = documents()


def test_the_corpus_is_large_and_covers_every_shape():
    assert len(DOCUMENTS) >= 100
    shapes = set()
    for _id, text in DOCUMENTS:
        doc = yaml.safe_load(text)
        shapes.add((doc.get("apiVersion"), doc.get("kind")))
    assert {("cluster.kurl.sh/v1beta1", "Installer"), ("kurl.sh/v1beta1", "Installer"),
            ("kurl.sh/v1beta1", None), (None, None)} <= shapes


def run(tmp_path, *args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def expected_unsupported(doc):
    """What the document has that is not mapped, by path: add-ons whole, fields of mapped ones."""
    names = [str(k) for k in doc if k not in kurlmap.KURL_TOP_LEVEL]
    for addon, values in (doc.get("spec") or {}).items():
        fields = kurlmap.KURL_MAPPING.get(addon)
        if fields is None:
            names.append("spec.%s" % addon)
        elif isinstance(values, dict):
            names.extend("spec.%s.%s" % (addon, f) for f in values if f not in fields)
            low, high = schema.NODE_PORT_RANGE
            names.extend("spec.%s.%s" % (addon, f) for f, v in values.items()
                         if (addon, f) in kurlmap.KURL_NODE_PORTS and isinstance(v, int) and not low <= v <= high)
    return sorted(names)


@pytest.mark.parametrize("text", [t for _i, t in DOCUMENTS], ids=[i for i, _t in DOCUMENTS])
def test_a_real_kurl_spec(tmp_path, text):
    path = tmp_path / "installer.yaml"
    path.write_text(text, encoding="utf-8")
    doc = yaml.safe_load(text)
    unsupported = expected_unsupported(doc)

    code, out, err = run(tmp_path, "spec", "validate", str(path))
    assert code in (0, 1)
    warnings = [line[len("warning: "):] for line in err.splitlines() if line.startswith("warning: ")]
    errors = [line[len("error: "):] for line in err.splitlines() if line.startswith("error: ")]
    assert len(warnings) + len(errors) == len(err.splitlines()), err
    assert all(e.startswith("%s: " % path) for e in errors), errors  # every error names the file
    errors = [e[len("%s: " % path):] for e in errors]
    # Errors only for what makes the spec unusable, never for what is unsupported.
    assert not [e for e in errors if NOT_AN_ERROR.search(e)], errors
    placeholders = [e for e in errors if ".version: " in e and PLACEHOLDER.search(e)]
    if "kubernetes" in doc["spec"] and placeholders:
        assert code == 1 and errors == placeholders, err
    elif "kubernetes" in doc["spec"]:
        assert code == 0 and not errors, err
        assert "valid (kurl installer, hash " in out
    else:
        assert errors == [e for e in errors if e.startswith("spec.kubernetes: is missing")], errors
    # Each unsupported item named once, nothing inside an ignored add-on named again.
    named = [w.split(":", 1)[0] for w in warnings if w.split(":", 1)[0] != "spec"]
    assert len(named) == len(set(named)), warnings
    assert sorted(named) == unsupported, warnings
    cni_warnings = [w for w in warnings if "without a CNI" in w]
    if "kubernetes" not in doc["spec"] or any(c in doc["spec"] for c in ("calico", "flannel")):
        assert cni_warnings == []
    else:
        assert len(cni_warnings) == max(1, len([c for c in ("weave", "antrea") if c in doc["spec"]]))

    code, out, hash_err = run(tmp_path, "spec", "hash", str(path))
    assert code == 0, hash_err
    assert out == kurl_hash_yaml(text) + "\n"
    assert hash_err == "".join("warning: %s\n" % w for w in warnings)

    if code == 0 and not errors:
        code, out, resolve_err = run(tmp_path, "spec", "resolve", str(path), "-o", str(tmp_path / "lock.yaml"))
        assert code in (0, 1)
        assert resolve_err.startswith("".join("warning: %s\n" % w for w in warnings))
        # resolve may only fail on versions the catalog does not have
        for line in resolve_err.splitlines()[len(warnings):]:
            assert line.startswith("error: %s: spec." % path) and "version" in line, resolve_err
