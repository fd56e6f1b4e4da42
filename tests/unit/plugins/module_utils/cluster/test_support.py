# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The support bundle: one host's part (support.collect with a FAKE command runner replaying what the programs
print on a lab host) and the archive assembled on the controller (findings, index.md, redaction, tar). The real
collection runs on lab hosts in molecule/etcd."""

from __future__ import annotations

import json
import os
import tarfile

from ansible_collections.mooring.cluster.plugins.module_utils.cluster import support, supportbundle

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
