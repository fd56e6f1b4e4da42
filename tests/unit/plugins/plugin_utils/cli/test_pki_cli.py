# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``mooring pki`` end to end through the CLI dispatcher (real files on tmp_path)."""

from __future__ import annotations

import json
import os

from ansible_collections.mooring.cluster.plugins.plugin_utils.cli import main as cli


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return str(path)


def test_generate_check_then_generate_then_list(tmp_path, capsys):
    cfg = write(tmp_path / "req.yml", "etcd: [{name: e1, addresses: [10.0.0.1]}]\nkubelets: [w1]\n")
    d = str(tmp_path / "pki")
    assert cli.main(["pki", "generate", "--dir", d, "--config", cfg, "--check"]) == 0
    assert "would be created  etcd/members/e1/server" in capsys.readouterr().out
    assert not os.path.exists(d)
    assert cli.main(["pki", "generate", "--dir", d, "--config", cfg, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert "kubeconfig/kubelet-w1" in first["created"] and first["changed"] is True
    assert cli.main(["pki", "generate", "--dir", d, "--config", cfg]) == 0
    assert capsys.readouterr().out.strip().endswith("0 created, 0 renewed, 16 kept")
    assert cli.main(["pki", "list", "--dir", d, "--json"]) == 0
    names = {e["name"] for e in json.loads(capsys.readouterr().out)}
    assert {"ca", "etcd/members/e1/peer", "kubeconfig/super-admin"} <= names


def test_bad_config_is_one_clear_error(tmp_path, capsys):
    cfg = write(tmp_path / "req.yml", "etcd: [{name: e1, addresses: [not-an-ip]}]\n")
    assert cli.main(["pki", "generate", "--dir", str(tmp_path / "pki"), "--config", cfg]) == 1
    err = capsys.readouterr().err
    assert "error: etcd[0].addresses[0]: 'not-an-ip' is not an IP address" in err
    assert not os.path.exists(tmp_path / "pki")


def test_broken_leaf_is_an_error_until_reissue_broken(tmp_path, capsys):
    cfg = write(tmp_path / "req.yml", "kubelets: [w1]\n")
    d = str(tmp_path / "pki")
    assert cli.main(["pki", "generate", "--dir", d, "--config", cfg]) == 0
    capsys.readouterr()
    write(tmp_path / "pki" / "apiserver.crt", "garbage\n")
    assert cli.main(["pki", "generate", "--dir", d, "--config", cfg]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("error: %s/apiserver.crt is not a PEM X.509 certificate; re-issue it with force [apiserver] "
                          "(CLI --force apiserver)" % d)
    assert cli.main(["pki", "list", "--dir", d]) == 1
    assert capsys.readouterr().err == "error: %s: apiserver.crt is not a PEM X.509 certificate\n" % d
    assert cli.main(["pki", "generate", "--dir", d, "--config", cfg, "--reissue-broken"]) == 0
    assert "renewed  apiserver (broken: apiserver.crt is not a PEM X.509 certificate)" in capsys.readouterr().out
    assert cli.main(["pki", "list", "--dir", d]) == 0
    capsys.readouterr()


def test_new_ca_re_issues_its_leaves(tmp_path, capsys):
    cfg = write(tmp_path / "req.yml", "kubelets: [w1]\n")
    d = str(tmp_path / "pki")
    assert cli.main(["pki", "generate", "--dir", d, "--config", cfg]) == 0
    capsys.readouterr()
    assert cli.main(["pki", "generate", "--dir", d, "--config", cfg, "--new-ca", "front-proxy-ca", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["renewed"] == [{"name": "front-proxy-ca", "reason": "new CA (new_ca)"},
                                 {"name": "front-proxy-client", "reason": "CA changed"}]


def test_run_options_are_not_request_options(tmp_path, capsys):
    cfg = write(tmp_path / "req.yml", "reissue_broken: true\n")
    assert cli.main(["pki", "generate", "--dir", str(tmp_path / "pki"), "--config", cfg]) == 1
    assert "reissue_broken is chosen on the command line" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "pki")
