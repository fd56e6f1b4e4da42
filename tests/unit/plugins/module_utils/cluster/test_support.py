# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The support bundle: one host's part (support.collect with a FAKE command runner replaying what the programs
print on a lab host) and the archive assembled on the controller (findings, index.md, redaction, tar). The real
collection runs on lab hosts in molecule/etcd."""

from __future__ import annotations

import json
import os
import tarfile

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.support import support, supportbundle

NOW = 1800000000
KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIPlanted\n-----END EC PRIVATE KEY-----"
SHOW = ("Id=etcd.service\nLoadState=loaded\nActiveState=failed\nSubState=failed\nNRestarts=3\n\n"
        "Id=kubelet.service\nLoadState=not-found\nActiveState=inactive\nSubState=dead\nNRestarts=0\n")
DF = ("Filesystem 1-blocks Used Available Capacity Mounted on\n"
      "overlay 100000 85000 15000 85% /\n/dev/sdb 100000 10000 90000 10% /var/lib/etcd\n")


class FakeRun:
    """FAKE runner: canned outputs by program; anything else is 'not installed' (rc 127)."""

    def __init__(self, journal="2026-11-27T10:00:00+0000 h etcd[1]: started\n"):
        self.calls = []
        self.journal = journal

    def __call__(self, argv):
        self.calls.append(argv)
        prog = argv[0]
        if prog == "journalctl":
            return 0, self.journal, ""
        if prog == "systemctl":
            return 0, SHOW, ""
        if prog == "df":
            return 0, DF, ""
        if prog == "openssl":
            return 0, "subject=CN = etcd-ca\nnotAfter=Dec  7 10:00:00 2026 GMT\n", ""
        if prog == "ip":
            return 0, "[]", ""
        if prog in ("uname", "etcd"):
            return 0, "%s output\n" % prog, ""
        return 127, "", "%s: not found" % prog


def params(tmp_path, **over):
    p = {"units": ["etcd", "kubelet"], "since_hours": 24, "journal_max_bytes": 4096, "pki_dirs": [str(tmp_path / "pki")],
         "etcd_env": str(tmp_path / "absent.env"), "etcd_pki_dir": str(tmp_path / "pki"), "etcdctl": "/absent/etcdctl",
         "bundle_dir": str(tmp_path / "bundles"), "roles": ["etcd"]}
    p.update(over)
    return p


def test_one_hosts_part_is_collected_and_redacted(tmp_path):
    (tmp_path / "pki" / "etcd").mkdir(parents=True)
    (tmp_path / "pki" / "etcd" / "ca.crt").write_text("x")
    (tmp_path / "bundles" / "abc123").mkdir(parents=True)
    (tmp_path / "bundles" / "abc123" / "bundle.json").write_text("{}")
    run = FakeRun(journal="line one --token q2w3e4.r5t6y7u8i9o0p1a2\n%s\npassword: hunter2\n" % KEY)
    got = support.collect(run, params(tmp_path), now=lambda: NOW)
    text = "\n".join(got["files"].values())
    for secret in ("q2w3e4.r5t6y7u8i9o0p1a2", "MHcCAQEEIPlanted", "hunter2"):
        assert secret not in text
    assert got["redacted"] == {"private-key": 2, "option": 2, "kubeconfig": 2}  # both units' journals (the fake's)
    assert sorted(got["files"]) == ["bundles.txt", "certificates.txt", "disk.txt", "journal/etcd.log", "journal/kubelet.log",
                                    "kernel.txt", "memory.txt", "network.json", "preflight.json", "units.txt", "versions.txt"]
    assert got["facts"]["units"]["etcd"]["ActiveState"] == "failed"
    assert got["facts"]["certificates"] == [{"path": str(tmp_path / "pki" / "etcd" / "ca.crt"), "subject": "CN = etcd-ca",
                                             "not_after": 1796637600, "error": ""}]
    assert [d["mount"] for d in got["facts"]["disks"]] == ["/", "/var/lib/etcd"] and got["facts"]["disks"][0]["used_pct"] == 85.0
    assert got["facts"]["bundles"][0]["id"] == "abc123" and got["facts"]["etcd"] is None
    assert "$ etcd --version\netcd output" in got["files"]["versions.txt"] and "kubelet --version" not in got["files"]["versions.txt"]
    assert ["journalctl", "-u", "etcd", "--since", "-24h", "--no-pager", "-o", "short-iso", "-n", "20000"] in run.calls
    assert run.calls.count(["ip", "-j", "addr", "show"]) == 1  # network.json is what preflight gathered


def test_the_newest_journal_bytes_are_kept_from_a_line_start():
    journal = "".join("line %03d\n" % i for i in range(1, 101))
    assert support.tail(journal, 45).splitlines() == ["[older lines cut: the newest 45 bytes kept]", "line 096", "line 097",
                                                      "line 098", "line 099", "line 100"]
    assert support.tail(journal, 44).splitlines()[1] == "line 097"  # a line cut in two is left out
    assert support.tail(journal, 10000) == journal


def test_a_key_cut_by_the_journal_bound_is_still_redacted(tmp_path):
    journal = "x" * 5000 + "\n" + KEY + "\nlast line\n"
    got = support.collect(FakeRun(journal=journal), params(tmp_path, journal_max_bytes=60), now=lambda: NOW)
    assert "MHcCAQEEIPlanted" not in got["files"]["journal/etcd.log"] and got["files"]["journal/etcd.log"].endswith("last line\n")


def test_a_part_that_cannot_be_read_is_an_error_line_not_a_failure(tmp_path):
    def run(argv):
        return (1, "", "Failed to connect to bus") if argv[0] in ("systemctl", "journalctl") else FakeRun()(argv)

    got = support.collect(run, params(tmp_path), now=lambda: NOW)
    assert got["errors"][:3] == ["journal etcd: journalctl -u etcd: rc 1: Failed to connect to bus",
                                 "journal kubelet: journalctl -u kubelet: rc 1: Failed to connect to bus",
                                 "units: systemctl show: rc 1: Failed to connect to bus"]
    assert "disk.txt" in got["files"]


def host(**facts):
    base = {"certificates": [], "units": {}, "etcd": None, "disks": [], "bundles": [{"id": "abc123", "unpacked": NOW}]}
    base.update(facts)
    return {"files": {"units.txt": "Id=etcd.service\n"}, "facts": base, "redacted": {"option": 1}, "errors": []}


def test_findings_name_what_a_helper_looks_at_first():
    hosts = {
        "e1": host(certificates=[{"path": "/p/old.crt", "not_after": NOW - 86400 * 3, "subject": "", "error": ""},
                                 {"path": "/p/soon.crt", "not_after": NOW + 86400 * 10, "subject": "", "error": ""},
                                 {"path": "/p/fine.crt", "not_after": NOW + 86400 * 300, "subject": "", "error": ""}],
                   units={"etcd": {"LoadState": "loaded", "ActiveState": "failed", "SubState": "failed"},
                          "kubelet": {"LoadState": "not-found", "ActiveState": "inactive"}},
                   disks=[{"mount": "/", "fs": "overlay", "used_pct": 85.0}], clock={"offset": 5.1, "error": 0.1}),
        "e2": host(etcd={"endpoint": "https://10.0.0.2:2379", "error": "", "members": [
            {"name": "e1", "id": "1", "client_urls": ["https://10.0.0.1:2379"]},
            {"name": "e2", "id": "2", "client_urls": ["https://10.0.0.2:2379"]}],
            "health": [{"endpoint": "https://10.0.0.1:2379", "health": False, "error": "connection refused"},
                       {"endpoint": "https://10.0.0.2:2379", "health": True}]}),
        "e3": {"unreachable": "Failed to connect to the host via ssh"},
    }
    found = supportbundle.findings(hosts, NOW)
    texts = ["%s %s %s" % f for f in found]
    assert texts == [
        "fail e1 certificate /p/old.crt expired on 2027-01-12 (3 days ago): renew it (mooring.cluster.certs_renew)",
        "fail e1 unit etcd is failed (failed)",
        "fail e1 clock 5.10 s ahead of the controller's (+-0.10 s); more than 2 s apart: certificates made on the "
        "controller are not yet valid (or expire early) here and etcd reports clock drift; synchronise the hosts and the "
        "controller (chrony or systemd-timesyncd against one time source)",
        "fail e2 etcd member e1 down: https://10.0.0.1:2379 is not healthy (connection refused)",
        "fail e3 not collected: Failed to connect to the host via ssh",
        "warn e1 certificate /p/soon.crt expires on 2027-01-25, in 10 days: renew it (mooring.cluster.certs_renew)",
        "warn e1 disk / (overlay) is 85 % used, over 80 %",
    ]


def test_the_archive_holds_the_index_first_and_the_controllers_files_redacted(tmp_path):
    hosts = {"e1": host(), "e2": {"unreachable": "timed out"}}
    entries, found, redacted = supportbundle.assemble(
        hosts, {"lock/installer.lock.yaml": "token: abcdef.0123456789abcdef\n"}, {"now": NOW, "controller": "ctl"})
    assert redacted == {"option": 1, "kubeconfig": 1}
    assert "abcdef.0123456789abcdef" not in entries["controller/lock/installer.lock.yaml"]
    index = entries["index.md"]
    assert "Hosts: 2 (1 not reachable). Secrets redacted: 1 kubeconfig, 1 option." in index
    assert "- **FAIL** e2: not collected: timed out" in index and "- `e2`: not reachable - timed out" in index
    assert "- `e1`: `hosts/e1/units.txt`; bundle abc123" in index
    path = tmp_path / "b.tar.gz"
    supportbundle.write_archive(str(path), "mooring-support-x", entries, NOW)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    with tarfile.open(path) as tar:
        names = tar.getnames()
        assert names[0] == "mooring-support-x/index.md"
        assert sorted(names[1:]) == ["mooring-support-x/controller/lock/installer.lock.yaml",
                                     "mooring-support-x/hosts/e1/units.txt"]
        assert tar.extractfile(names[0]).read().decode() == index
    assert json.loads(json.dumps(found))  # plain data, for the task result


def test_read_text_is_bounded_and_names_what_it_will_not_read(tmp_path):
    small = tmp_path / "small"
    small.write_text("abc")
    big = tmp_path / "big"
    big.write_text("x" * 100)
    assert support.read_text(str(small)) == "abc"
    assert support.read_text(str(tmp_path / "absent")) is None
    assert support.read_text(str(big), limit=10) == "[not read: %s is larger than 10 bytes; not read]\n" % big
    os.mkfifo(tmp_path / "fifo")
    assert support.read_text(str(tmp_path / "fifo")).startswith("[not read: ")  # never opened for a blocking read
    assert support.read_text(str(tmp_path)).startswith("[not read: ")  # a directory


def _archive_text(tmp_path, entries):
    """Every member of the archive written from ``entries``, as one text (what a helper would unpack)."""
    path = tmp_path / "bundle.tar.gz"
    supportbundle.write_archive(str(path), "mooring-support-x", entries, NOW)
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}


def test_a_proxy_password_in_the_lock_never_reaches_the_archive(tmp_path):
    from ansible_collections.mooring.cluster.plugins.action.support_bundle import controller_files

    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps({"kind": "InstallerLock", "proxy": {"http": "http://user:pr0xy-planted@proxy:3128",
                                                                   "https": "http://user:pr0xy-planted@proxy:3128"}}))
    files = controller_files(str(lock), None)
    entries, found, redacted = supportbundle.assemble({"e1": host()}, files, {"now": NOW, "controller": "ctl"})
    members = _archive_text(tmp_path, entries)
    assert "mooring-support-x/controller/lock/lock.json" in members
    assert not any("pr0xy-planted" in text for text in members.values())
    assert "http://user:REDACTED@proxy:3128" in members["mooring-support-x/controller/lock/lock.json"]
    assert redacted == {"option": 1, "url": 2} and "2 url" in entries["index.md"]


def test_every_controller_text_is_redacted(tmp_path):
    planted = {"lock/installer.lock.yaml": "proxy:\n  http: http://u:planted-1@p:3128\nregistry:\n  password: |\n    planted-2\n",
               "reports/mooring-report-install-latest.json": '{"cmd": "kubeadm join --certificate-key %s", '
                                                             '"auth": "planted-3"}' % ("ab" * 32),
               "reports/mooring-report-install-latest.md": "Authorization: Token planted-4\naws_secret_access_key = planted-5\n"}
    entries, found, _redacted = supportbundle.assemble({}, planted, {"now": NOW, "controller": "ctl"})
    text = "\n".join(_archive_text(tmp_path, entries).values())
    for secret in ("planted-1", "planted-2", "planted-3", "planted-4", "planted-5", "ab" * 32):
        assert secret not in text
    assert "- `controller/reports/mooring-report-install-latest.md`" in entries["index.md"]


BAD_NAMES = ["../escape.txt", "/etc/passwd", "a/../../b", "nul\x00name", "new\nline.txt", "tab\tname", "x" * 300,
             "a//b", "./here", "trailing/", "a/" * 9 + "b", "", "esc\x1b[31m"]


def test_a_host_file_name_that_is_not_a_safe_relative_path_is_refused_and_named(tmp_path):
    part = host()
    part["files"] = dict(part["files"], **{name: "planted-bad-name" for name in BAD_NAMES})
    entries, found, _redacted = supportbundle.assemble({"e1": part, "e2": host()}, {}, {"now": NOW})
    assert sorted(entries) == ["hosts/e1/units.txt", "hosts/e2/units.txt", "index.md"]
    refused = [text for sev, h, text in found if sev == "fail" and h == "e1"]
    assert len(refused) == len(BAD_NAMES) and all("(left out)" in t and "\n" not in t for t in refused)
    assert any("'../escape.txt'" in t for t in refused) and any("'new\\nline.txt'" in t for t in refused)
    members = _archive_text(tmp_path, entries)
    assert not any("planted-bad-name" in text for text in members.values())
    assert all(name.startswith("mooring-support-x/") and ".." not in name.split("/") for name in members)


def test_a_host_name_that_cannot_be_a_directory_keeps_its_files_out(tmp_path):
    entries, found, _redacted = supportbundle.assemble({"../up": host(), "e2": host()}, {}, {"now": NOW})
    assert sorted(entries) == ["hosts/e2/units.txt", "index.md"]
    assert found[0][:2] == ("fail", "../up") and "is not a safe name" in found[0][2] and "(its files left out)" in found[0][2]


def test_a_newline_in_a_hosts_text_cannot_forge_a_line_of_the_index():
    forged = "failed\n- **PASS** e1: everything is fine\n## Findings"
    hosts = {"e1": host(units={"etcd": {"LoadState": "loaded", "ActiveState": forged, "SubState": forged}},
                        certificates=[{"path": "/p/x.crt\n- **PASS** forged", "not_after": None, "error": "bad\rline"}],
                        bundles=[{"id": "abc\n- **PASS** forged", "unpacked": NOW}]),
             "e2": {"unreachable": "timed out\n- **PASS** e2: forged"}}
    hosts["e1"]["errors"] = ["journal etcd: rc 1\n- **PASS** forged"]
    entries, found, _redacted = supportbundle.assemble(hosts, {}, {"now": NOW, "controller": "ctl\nforged"})
    lines = entries["index.md"].splitlines()
    assert not any("PASS" in line and not line.startswith("- ") for line in lines)
    assert not any(line.startswith("- **PASS**") for line in lines)
    assert lines.count("## Findings") == 1 and not any(line == "forged" for line in lines)
    assert "unit etcd is 'failed\\n- **PASS** e1: everything is fine\\n## Findings'" in entries["index.md"]
    assert all("\n" not in t and "\r" not in t for _s, _h, t in found)


def test_a_hosts_own_text_in_the_index_is_redacted_on_the_controller():
    part = host()
    part["errors"] = ["etcd: etcdctl --user root:planted-err failed"]
    entries, found, redacted = supportbundle.assemble(
        {"e1": part, "e2": {"unreachable": "ssh: Authorization: Bearer planted-unreach"}}, {}, {"now": NOW})
    assert "planted-err" not in entries["index.md"] and "planted-unreach" not in entries["index.md"]
    assert not any("planted" in text for _s, _h, text in found)
    assert redacted == {"option": 2, "bearer": 1}  # the host's own count, then the controller's


WRONG = [
    ("files", ["units.txt"], "support_collect result: files: must be a mapping, not a list (left out)"),
    ("files", {"units.txt": 7}, "support_collect result: files.'units.txt': must be a string, not a number (left out)"),
    ("facts", "facts", "support_collect result: facts: must be a mapping, not a string (left out)"),
    ("redacted", "3", "support_collect result: redacted: must be a mapping, not a string (left out)"),
    ("redacted", {"option": "3"}, "support_collect result: redacted.option: must be a whole number >= 0, not '3' (left out)"),
    ("redacted", {"Bad Kind\n": 1}, "support_collect result: redacted: must be a kind of secret (a-z, 0-9, -), not 'Bad Kind\\n' "
                                    "(left out)"),
    ("errors", "not a list", "support_collect result: errors: must be a list, not a string (left out)"),
    ("errors", [1], "support_collect result: errors[0]: must be a string, not a number (left out)"),
]
WRONG_FACTS = [
    ("disks", "full", "support_collect result: facts.disks: must be a list, not a string (left out)"),
    ("disks", [{"mount": "/", "fs": "x", "used_pct": "85"}], "support_collect result: facts.disks[0].used_pct: must be a number, "
                                                             "not a string (left out)"),
    ("certificates", [{"not_after": 1}], "support_collect result: facts.certificates[0].path: must be a non-empty string, "
                                         "not nothing (null) (left out)"),
    ("certificates", [{"path": "/x", "not_after": float("nan")}], "support_collect result: facts.certificates[0].not_after: must "
                                                                  "be a number, not nan (left out)"),
    ("units", {"etcd": "failed"}, "support_collect result: facts.units.etcd: must be a mapping, not a string (left out)"),
    ("etcd", ["e1"], "support_collect result: facts.etcd: must be a mapping, not a list (left out)"),
    ("etcd", {"members": [{"name": "e1", "client_urls": "https://x"}]},
     "support_collect result: facts.etcd.members[0].client_urls: must be a list, not a string (left out)"),
    ("clock", {"offset": "5"}, "support_collect result: facts.clock.offset: must be a number, not a string (left out)"),
    ("bundles", [{"id": 7}], "support_collect result: facts.bundles[0].id: must be a non-empty string, not a number (left out)"),
]


@pytest.mark.parametrize("where,value,line", WRONG + [("facts." + name, value, line) for name, value, line in WRONG_FACTS],
                         ids=[w[0] for w in WRONG] + ["facts." + w[0] for w in WRONG_FACTS])
def test_a_wrongly_typed_host_result_is_one_finding_and_the_rest_is_assembled(where, value, line):
    part = host(disks=[{"mount": "/", "fs": "overlay", "used_pct": 95.0}])
    if where.startswith("facts."):
        part["facts"][where[len("facts."):]] = value
    else:
        part[where] = value
    entries, found, _redacted = supportbundle.assemble({"e1": part, "e2": host()}, {"lock/l.yaml": "x: 1\n"}, {"now": NOW})
    assert ("fail", "e1", line) in found
    assert [f for f in found if f[1] == "e1" and "(left out)" in f[2]] == [("fail", "e1", line)]
    assert "hosts/e2/units.txt" in entries and "controller/lock/l.yaml" in entries
    assert "- **FAIL** e1: %s" % line in entries["index.md"]


def test_a_registered_result_that_is_not_a_mapping_is_a_host_not_collected():
    assert supportbundle.host_part(["x"]) == {"unreachable": "no result (the registered result is a list, not a mapping)"}
    assert supportbundle.host_part(None) == {"unreachable": "no result (the registered result is nothing (null), not a mapping)"}
    assert supportbundle.host_part({"unreachable": True, "msg": "ssh\nfailed"}) == {"unreachable": "'ssh\\nfailed'"}
    assert supportbundle.host_part({"skipped": True}) == {"unreachable": "skipped"}
    assert supportbundle.host_part({"failed": True, "msg": ["a", "list"]}) == {"unreachable": "['a', 'list']"}
    entries, found, _redacted = supportbundle.assemble({"e1": supportbundle.host_part(42), "e2": host()}, {}, {"now": NOW})
    assert ("fail", "e1", "not collected: no result (the registered result is a number, not a mapping)") in found
    assert "hosts/e2/units.txt" in entries


def test_a_parts_error_text_is_redacted_on_the_host(tmp_path):
    def run(argv):
        return (1, "", "auth failed for --password=planted-stderr") if argv[0] == "journalctl" else FakeRun()(argv)

    got = support.collect(run, params(tmp_path, units=["etcd"]), now=lambda: NOW)
    assert got["errors"][0] == "journal etcd: journalctl -u etcd: rc 1: auth failed for --password=REDACTED"
    assert got["redacted"] == {"option": 1}


def test_an_expiry_no_calendar_can_show_is_judged_without_a_crash():
    hosts = {"e1": host(certificates=[{"path": "/p/far.crt", "not_after": 1e18, "error": ""},
                                      {"path": "/p/past.crt", "not_after": -1e18, "error": ""}])}
    found = supportbundle.assemble(hosts, {}, {"now": NOW})[1]
    expired = "certificate /p/past.crt expired on 1970-01-01 (11574074094907 days ago): renew it (mooring.cluster.certs_renew)"
    assert [t for _s, _h, t in found] == [expired]
