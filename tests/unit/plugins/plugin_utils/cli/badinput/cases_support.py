# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile registered ``support_collect`` results for the support bundle (ids ``support-``), assembled as the
action plugin assembles them (entries.py ``support RESULTS LOCK DEST``: ``make_bundle``, one line per finding).

A host result is ``e1``'s beside a well-formed ``e2``; what ``e1`` returned is hostile:

- a file name that is no safe relative path (``../x``, ``/etc/passwd``, ``a/../../b``, a newline, a control
  character, 300 characters, nine parts, an empty name...) or a field of the wrong type (``files`` a list,
  ``facts`` a string, ``errors`` a mapping, a number where a string belongs, NaN, a number no float holds), or no
  mapping at all (a number, null, a list), or a host that was not reached, or text holding a newline that tries to
  forge a line of index.md: exit 0, a ``FAIL e1:`` finding naming the problem, and an archive whose every member
  stays below its top directory, with ``e2``'s part (and ``e1``'s good file) assembled and index.md unforged;
- secrets: a lock holding a proxy URL with a password and a private key, a host's error lines and why it was not
  reached holding credentials: none of them anywhere in the archive or on stdout (a host's files are redacted on
  the host, by support_collect, and taken as sent);
- 1,000 file texts of 512 KiB each (YAML aliases): the files past 16 MiB in all left out, in one finding;
- a results file that is no mapping, no YAML, or a lock that is not there: exit 1, one line.

The checks of a part's shape are tested in tests/unit/plugins/module_utils/cluster/test_support.py (the names and
wrong types here are those); this is the whole entry, through the archive written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
import time

from .entries import NOW
from .harness import Case

TOP = "mooring-support-%s" % time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(NOW))
OUT = "{work}/out.tar.gz"
ARGV = ("{work}/results.json", "", OUT)
WRITES = [OUT]
E2_UNITS = "Id=etcd.service\nLoadState=loaded\nActiveState=active\n"
PROXY_PW = "s3cr3tpw"
KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQplantedHostKeyBody"
HOST_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n" % KEY_BODY
FORGED = "failed\n- **PASS** e1: everything is fine\n## Findings"
MEMBER_PART = re.compile(r"^(?!\.{1,2}$)[A-Za-z0-9_.+~:@-]{1,128}$")
INDEX_LINE = re.compile(r"^(?:|# mooring support bundle|## (?:Findings|Hosts|Cluster|Controller)|Read through [^\n]*|Collected [^\n]*|Hosts: [^\n]*|"
                        r"- \*\*(?:FAIL|WARN)\*\* [^\n]*|- `[^\n]*|- none: [^\n]*|- nothing [^\n]*)$")


def host(files=None, **facts):
    """A registered result as support_collect returns it (changed, files, facts, redacted, errors)."""
    base = {"certificates": [], "units": {"etcd": {"LoadState": "loaded", "ActiveState": "active", "SubState": "running"}},
            "etcd": None, "disks": [{"mount": "/", "fs": "overlay", "used_pct": 20.0}], "clock": None,
            "bundles": [{"id": "abc123", "unpacked": NOW}]}
    base.update(facts)
    return {"changed": False, "files": {"units.txt": E2_UNITS} if files is None else files, "facts": base,
            "redacted": {"option": 1}, "errors": []}


def results(e1, **others):
    """The results file: ``e1`` beside a well-formed ``e2`` (JSON, which the entry reads as YAML)."""
    return json.dumps(dict({"e1": e1, "e2": host()}, **others), sort_keys=True)


def members(work):
    """Every member of the written archive, by name: (TarInfo, text)."""
    with tarfile.open("%s/out.tar.gz" % work) as tar:
        return {m.name: (m, tar.extractfile(m).read().decode("utf-8") if m.isfile() else None) for m in tar.getmembers()}


def sound(work, kept=("hosts/e2/units.txt",), secrets=()):
    """The archive holds regular files only, each below TOP by safe names; index.md first and every line of it one
    the index writes (no line a host's text forged); ``kept`` present (e2's part assembled); ``secrets`` nowhere."""
    got = members(work)
    names = list(got)
    assert names and names[0] == TOP + "/index.md", names[:3]
    for name, (info, text) in got.items():
        parts = name.split("/")
        assert info.isfile() and not info.issym() and not info.islnk(), name
        assert parts[0] == TOP and len(parts) >= 2 and all(MEMBER_PART.match(p) for p in parts[1:]), repr(name)
        assert not [s for s in secrets if s in name or s in text], (name, [s for s in secrets if s in text])
    index = got[TOP + "/index.md"][1]
    forged = [line for line in index.splitlines() if not INDEX_LINE.match(line)]
    assert not forged and index.count("\n## Findings\n") == 1, forged
    assert not any(line.startswith("- **PASS**") for line in index.splitlines()), index
    for rel in kept:
        assert TOP + "/" + rel in got, (rel, names)
    assert got[TOP + "/hosts/e2/units.txt"][1] == E2_UNITS
    return got


def _checked(kept=("hosts/e2/units.txt",), secrets=(), also=None):
    def check(work, stdout):
        got = sound(work, kept, secrets)
        if also is not None:
            also(got, stdout)
    return check


def _fail_line(text):
    """A ``FAIL e1:`` finding on stdout holding ``text`` (a regex)."""
    return r"(?m)^FAIL e1: [^\n]*%s" % text


# ------------------------------------------------------------------------------------------------------------------
# File names that are no safe relative path below the host's directory: left out, named, e1's good file kept.
# ------------------------------------------------------------------------------------------------------------------
BAD_NAMES = [
    ("dotdot", "../escape.txt"), ("absolute", "/etc/passwd"), ("dotdot-inside", "a/../../b"), ("nul", "nul\x00name"),
    ("newline", "new\nline.txt"), ("tab", "tab\tname"), ("300-characters", "x" * 300), ("empty-part", "a//b"),
    ("dot", "./here"), ("trailing-slash", "trailing/"), ("nine-parts", "a/" * 9 + "b"), ("empty", ""),
    ("escape-sequence", "esc\x1b[31m"), ("dotdot-alone", ".."), ("backslash-dotdot", "..\\..\\windows"),
    ("line-separator", "a\u2028- **PASS** e1: forged"),
]


def _bad_name(label, name):
    shown = re.escape(repr(name)[:60])
    files = {"units.txt": E2_UNITS, name: "planted-bad-name"}
    return Case("support-file-name-" + label, ARGV, files={"results.json": results(host(files))}, entry="support",
                exit=(0,), writes=WRITES, absent=["planted-bad-name"],
                stdout=r"(?m)^FAIL e1: support_collect result: files: file name %s[^\n]*"
                       r"(?:is not a safe name|is not a relative path)[^\n]*\(left out\)$" % shown,
                check=_checked(("hosts/e1/units.txt", "hosts/e2/units.txt"), ["planted-bad-name"]))


CASES = [_bad_name(*n) for n in BAD_NAMES]


# ------------------------------------------------------------------------------------------------------------------
# Fields of the wrong type: one FAIL finding for e1 naming the field, the rest assembled.
# ------------------------------------------------------------------------------------------------------------------
WRONG = [  # (label, field of the result, its value, the finding)
    ("files-a-list", "files", ["units.txt"], r"files: must be a mapping, not a list \(left out\)"),
    ("file-text-a-number", "files", {"units.txt": 7}, r"files\.'units\.txt': must be a string, not a number \(left out\)"),
    ("facts-a-string", "facts", "facts", r"facts: must be a mapping, not a string \(left out\)"),
    ("redacted-a-string", "redacted", "3", r"redacted: must be a mapping, not a string \(left out\)"),
    ("redacted-count-a-string", "redacted", {"option": "3"}, r"redacted\.option: must be a whole number >= 0, not '3'"),
    ("redacted-kind-newline", "redacted", {"Bad Kind\n- **PASS** e1: x": 1}, r"redacted: must be a kind of secret"),
    ("errors-a-string", "errors", "not a list", r"errors: must be a list, not a string \(left out\)"),
    ("errors-a-mapping", "errors", {"journal": "rc 1"}, r"errors: must be a list, not a mapping \(left out\)"),
    ("error-a-number", "errors", [1], r"errors\[0\]: must be a string, not a number \(left out\)"),
]
WRONG_FACTS = [  # (label, fact, its value, the finding)
    ("disks-a-string", "disks", "full", r"facts\.disks: must be a list, not a string"),
    ("disk-used-a-string", "disks", [{"mount": "/", "fs": "x", "used_pct": "85"}],
     r"facts\.disks\[0\]\.used_pct: must be a number, not a string"),
    ("certificate-without-path", "certificates", [{"not_after": 1}], r"facts\.certificates\[0\]\.path: must be a non-empty string"),
    ("unit-a-string", "units", {"etcd": "failed"}, r"facts\.units\.etcd: must be a mapping, not a string"),
    ("etcd-a-list", "etcd", ["e1"], r"facts\.etcd: must be a mapping, not a list"),
    ("etcd-client-urls-a-string", "etcd", {"members": [{"name": "e1", "client_urls": "https://x"}]},
     r"facts\.etcd\.members\[0\]\.client_urls: must be a list, not a string"),
    ("clock-offset-a-string", "clock", {"offset": "5", "error": 0.1}, r"facts\.clock\.offset: must be a number, not a string"),
    ("bundle-id-a-number", "bundles", [{"id": 7}], r"facts\.bundles\[0\]\.id: must be a non-empty string, not a number"),
    ("clock-offset-a-boolean", "clock", {"offset": True, "error": 0.1}, r"facts\.clock\.offset: must be a number, not a boolean"),
]


def _wrong(label, where, value, finding, in_facts=False):
    part = host()
    (part["facts"] if in_facts else part)[where] = value
    return Case("support-wrong-" + label, ARGV, files={"results.json": results(part)}, entry="support", exit=(0,),
                writes=WRITES, stdout=_fail_line(r"support_collect result: %s" % finding), check=_checked())


CASES += [_wrong(*w) for w in WRONG] + [_wrong(*w, in_facts=True) for w in WRONG_FACTS]


def _yaml_case(label, text, finding, exit=(0,), absent=()):
    """A results file written as YAML (for what JSON cannot say: NaN, keys that are no string)."""
    return Case("support-" + label, ARGV, files={"results.json": text}, entry="support", exit=exit, writes=WRITES,
                stdout=_fail_line(finding), check=_checked(), absent=absent)


E2_YAML = "e2: %s\n" % json.dumps(host())
CASES += [
    _yaml_case("wrong-not-after-nan", "e1: {files: {units.txt: x}, facts: {certificates: [{path: /x, not_after: .nan}]}}\n"
               + E2_YAML, r"facts\.certificates\[0\]\.not_after: must be a number, not nan \(left out\)"),
    _yaml_case("wrong-used-pct-infinite", "e1: {files: {units.txt: x}, facts: {disks: [{mount: /, fs: x, used_pct: .inf}]}}\n"
               + E2_YAML, r"facts\.disks\[0\]\.used_pct: must be a number, not inf \(left out\)"),
    _yaml_case("file-name-not-a-string", "e1: {files: {1: a, null: b, true: c, units.txt: x}}\n" + E2_YAML,
               r"file name (?:1|None|True) is not a relative path"),
    # A number no float holds (a host's JSON may carry one): the fact is left out like any other of the wrong type.
    _yaml_case("clock-offset-400-digits", "e1: {files: {units.txt: x}, facts: {clock: {offset: %s, error: 0.1}}}\n" % ("9" * 400)
               + E2_YAML, r"facts\.clock\.offset: must be a number", absent=["internal error"]),
    _yaml_case("not-after-400-digits", "e1: {files: {units.txt: x}, facts: {certificates: [{path: /x, not_after: %s}]}}\n"
               % ("9" * 400) + E2_YAML, r"facts\.certificates\[0\]\.not_after: must be a number", absent=["internal error"]),
    _yaml_case("used-pct-400-digits", "e1: {files: {units.txt: x}, facts: {disks: [{mount: /, fs: x, used_pct: %s}]}}\n"
               % ("9" * 400) + E2_YAML, r"facts\.disks\[0\]\.used_pct: must be a number", absent=["internal error"]),
]


# ------------------------------------------------------------------------------------------------------------------
# No result, or a host that was not reached: "not collected", and no line of index.md forged by why.
# ------------------------------------------------------------------------------------------------------------------
NO_RESULT = [  # (label, the registered result, the finding)
    ("result-a-number", 42, r"not collected: no result \(the registered result is a number, not a mapping\)"),
    ("result-null", None, r"not collected: no result \(the registered result is nothing \(null\), not a mapping\)"),
    ("result-a-list", ["files"], r"not collected: no result \(the registered result is a list, not a mapping\)"),
    ("result-a-string", "ok", r"not collected: no result \(the registered result is a string, not a mapping\)"),
    ("unreachable-forging-a-line", {"unreachable": True, "msg": "ssh: timed out\n- **PASS** e1: forged\n## Findings"},
     r"not collected: 'ssh: timed out\\n- \*\*PASS\*\* e1: forged\\n## Findings'$"),
    ("skipped", {"skipped": True, "changed": False}, r"not collected: skipped$"),
    ("failed-message-a-list", {"failed": True, "msg": ["a", "list"]}, r"not collected: \['a', 'list'\]$"),
    ("result-without-files", {"changed": False, "facts": {}}, r"not collected: no result$"),
]
CASES += [Case("support-" + label, ARGV, files={"results.json": results(value)}, entry="support", exit=(0,), writes=WRITES,
               stdout=_fail_line(finding), check=_checked()) for label, value, finding in NO_RESULT]


# ------------------------------------------------------------------------------------------------------------------
# A host's text holding a newline: escaped, so that no line of index.md is forged.
# ------------------------------------------------------------------------------------------------------------------
def _index_has(*pieces):
    def also(got, stdout):
        index = got[TOP + "/index.md"][1]
        assert all(p in index for p in pieces), (pieces, index)
    return also


CASES += [
    Case("support-unit-state-forging-pass", ARGV, entry="support", exit=(0,), writes=WRITES,
         files={"results.json": results(host(units={"etcd": {"LoadState": "loaded", "ActiveState": FORGED,
                                                             "SubState": FORGED}}))},
         stdout=_fail_line(r"unit etcd is 'failed\\n- \*\*PASS\*\* e1: everything is fine\\n## Findings'"),
         check=_checked(also=_index_has("- **FAIL** e1: unit etcd is 'failed\\n- **PASS** e1: everything is fine\\n"))),
    Case("support-certificate-and-bundle-forging", ARGV, entry="support", exit=(0,), writes=WRITES,
         files={"results.json": results(host(certificates=[{"path": "/p/x.crt\n- **PASS** e1: forged", "not_after": None,
                                                            "error": "bad\rline\u2028## Hosts\x85- **PASS**"}],
                                             bundles=[{"id": "abc\n- **PASS** e1: forged", "unpacked": NOW}]))},
         stdout=r"(?m)^WARN e1: certificate '/p/x\.crt\\n- \*\*PASS\*\* e1: forged': expiry not read",
         check=_checked(also=_index_has("bundle 'abc\\n- **PASS** e1: forged'"))),
    Case("support-error-line-forging", ARGV, entry="support", exit=(0,), writes=WRITES,
         files={"results.json": results(dict(host(), errors=["journal etcd: rc 1\n- **PASS** e1: forged\n## Findings"]))},
         stdout=r"(?m)^WARN e1: not read: 'journal etcd: rc 1\\n- \*\*PASS\*\* e1: forged\\n## Findings'$",
         check=_checked()),
    # An inventory name that cannot be a directory of the archive: its files left out, the index unforged.
    Case("support-host-name-newline", ARGV, entry="support", exit=(0,), writes=WRITES,
         files={"results.json": json.dumps({"e1\n- **PASS** e1: fine": host(), "e2": host()})},
         stdout=r"host 'e1\\n- \*\*PASS\*\* e1: fine' is not a safe name[^\n]*\(its files left out\)", check=_checked()),
    Case("support-host-name-dotdot", ARGV, entry="support", exit=(0,), writes=WRITES,
         files={"results.json": json.dumps({"../../outside": host(), "e2": host()})},
         stdout=r"(?m)^FAIL \.\./\.\./outside: host '\.\./\.\./outside' is not a safe name", check=_checked()),
]


# ------------------------------------------------------------------------------------------------------------------
# Secrets: in the lock, in a host's file, in a host's own texts. None reaches the archive or stdout.
# ------------------------------------------------------------------------------------------------------------------
LOCK = ("apiVersion: cluster.mooring.io/v1beta1\nkind: InstallerLock\nspec:\n  proxy:\n"
        "    http: http://user:%s@proxy:3128\n    https: http://user:%s@proxy:3128\n" % (PROXY_PW, PROXY_PW))


def _lock_redacted(got, stdout):
    text = got[TOP + "/controller/lock/lock.yaml"][1]
    assert "http://user:REDACTED@proxy:3128" in text and "InstallerLock" in text, text


CASES += [
    Case("support-lock-proxy-password", ["{work}/results.json", "{work}/lock.yaml", OUT], entry="support", exit=(0,),
         writes=WRITES, files={"results.json": results(host()), "lock.yaml": LOCK}, absent=[PROXY_PW],
         check=_checked(("hosts/e1/units.txt", "hosts/e2/units.txt", "controller/lock/lock.yaml"), [PROXY_PW],
                        also=_lock_redacted)),
    # A private key in the lock (the controller's files are redacted here; a host's files were, by support_collect on
    # the host, and are taken as sent: redacting 16 MiB per host again would double the bundle's CPU).
    Case("support-lock-private-key", ["{work}/results.json", "{work}/lock.yaml", OUT], entry="support",
         exit=(0,), writes=WRITES, absent=[PROXY_PW, KEY_BODY],
         files={"results.json": results(host({"units.txt": E2_UNITS})), "lock.yaml": LOCK + "# " + HOST_KEY},
         check=_checked(("hosts/e1/units.txt", "controller/lock/lock.yaml"), [PROXY_PW, KEY_BODY, "plantedHostKeyBody"],
                        also=_lock_redacted)),
    Case("support-host-texts-credentials", ARGV, entry="support", exit=(0,), writes=WRITES,
         files={"results.json": results(dict(host(), errors=["etcd: etcdctl --user root:plantedErrPw failed",
                                                             "registry: Authorization: Bearer plantedErrBearer"]),
                                        e3={"unreachable": True, "msg": "proxy http://u:plantedUnreachPw@p:3128 refused"})},
         stdout=r"(?m)^FAIL e3: not collected: proxy http://u:REDACTED@p:3128 refused$",
         absent=["plantedErrPw", "plantedErrBearer", "plantedUnreachPw"],
         check=_checked(secrets=["plantedErrPw", "plantedErrBearer", "plantedUnreachPw"])),
]


# ------------------------------------------------------------------------------------------------------------------
# Texts the archive cannot hold as they are, and a file of 1 MiB that expands to far more.
# ------------------------------------------------------------------------------------------------------------------
def _aliased(work):
    """One file text of 512 KiB (hex, which gzip cannot shrink much) aliased by 1000 file names: under 1 MiB of YAML."""
    blob = "".join(hashlib.sha256(b"%d" % i).hexdigest() for i in range(8192))
    lines = ["e1:", "  files:", '    f0000: &blob "%s"' % blob] + ["    f%04d: *blob" % i for i in range(1, 1000)]
    with open("%s/results.json" % work, "w") as handle:
        handle.write("\n".join(lines) + "\n" + E2_YAML)


CASES += [
    # A lone surrogate (a host's JSON may carry "\ud800"): that file left out or its text mended, never an internal error.
    Case("support-file-text-lone-surrogate", ARGV, entry="support", exit=(0,), writes=WRITES, absent=["internal error"],
         files={"results.json": results(host({"units.txt": E2_UNITS, "journal/etcd.log": "bad \ud800 text\n"}))},
         check=_checked()),
    # An inventory name that is no string (a YAML key 7): refused or a finding, never an internal error.
    Case("support-host-name-not-a-string", ARGV, entry="support", exit=(0, 1), writes=WRITES, absent=["internal error"],
         files={"results.json": "7: %s\n%s" % (json.dumps(host()), E2_YAML)}),
    # 1000 names for one 512 KiB text: 512 MB of members from a file under 1 MiB. The first 32 (16 MiB) are kept,
    # the rest left out in one finding.
    Case("support-aliased-file-texts", ARGV, entry="support", exit=(0,), writes=WRITES, setup=_aliased,
         absent=["internal error"], check=_checked(),
         stdout=r"(?m)^FAIL e1: support_collect result: files: more than 16777216 characters in all; 'f0032' and the 967 "
                r"after it left out$"),
]


# ------------------------------------------------------------------------------------------------------------------
# Results or lock the entry cannot use: exit 1, one line; no archive.
# ------------------------------------------------------------------------------------------------------------------
def _no_archive(work, stdout):
    assert not os.path.exists("%s/out.tar.gz" % work)
    assert not [n for n in os.listdir(work) if n.startswith(".out.tar.gz")], os.listdir(work)


def _refused(label, text, problem, argv=ARGV, absent=()):
    return Case("support-" + label, argv, files={"results.json": text}, entry="support", writes=WRITES,
                stderr=r"\Aerror: %s\n\Z" % problem, absent=absent, check=_no_archive)


CASES += [
    _refused("results-a-list", json.dumps([host(), host()]),
             r"\S*/results\.json: the registered results must be a mapping of host to result"),
    _refused("results-a-string", '"e1"\n', r"\S*/results\.json: the registered results must be a mapping of host to result"),
    _refused("results-empty", "", r"\S*/results\.json: the registered results must be a mapping of host to result"),
    _refused("results-not-yaml", '{"e1": [}', r"\S*/results\.json is not valid YAML: [^\n]*\(line 1, column \d+\)"),
    _refused("results-not-utf8", b'{"e1": {"msg": "pass\xe9word-plantedLatin1"}}',
             r"\S*/results\.json: not UTF-8 \(byte 0xe9 at offset 20\)", absent=["plantedLatin1"]),
    _refused("lock-missing", results(host()), r"lock \S*/absent\.lock: no such file",
             argv=["{work}/results.json", "{work}/absent.lock", OUT]),
    _refused("dest-directory-missing", results(host()), r"\S*/missing/\.out\.tar\.gz-\w+: No such file or directory",
             argv=["{work}/results.json", "", "{work}/missing/out.tar.gz"]),
]
