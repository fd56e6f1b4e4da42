# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets taken out of text: each kind and each format, what must stay, that a redacted text is left as it is,
and that no pattern costs more than linear time on hostile text (CPU time, never wall clock)."""

from __future__ import annotations

import time

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common.redact import MARK, PATTERNS, merge_counts, redact

KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oBvGGaTdjaXloAoGCCqGSM49\n-----END EC PRIVATE KEY-----"
JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlLXBhcnQ"
CERT_KEY = "9555b74008f24687eb964bd90a164ecb5760a89481d9c55a77c129b7db438168"


@pytest.mark.parametrize("text,secret,kind", [
    ("before\n%s\nafter" % KEY, "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oBvGGaTdjaXloAoGCCqGSM49", "private-key"),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n(cut short)", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "private-key"),
    ("    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRF\n", "LS0tLS1CRUdJTiBFQyBQUklWQVRF", "kubeconfig"),
    ("    token: kubeconfig-user-token-1234\n", "kubeconfig-user-token-1234", "kubeconfig"),
    ('{"password": "hunter2-long", "user": "admin"}', "hunter2-long", "kubeconfig"),
    ("client-secret: 'oidc secret value'", "oidc secret value", "kubeconfig"),
    ("kubeadm join 10.0.0.1:6443 --token q2w3e4.r5t6y7u8i9o0p1a2", "q2w3e4.r5t6y7u8i9o0p1a2", "option"),
    ("registry login --password=S3cr3t! done", "S3cr3t!", "option"),
    ("ETCD_ROOT_PASSWORD=p4ss other=1", "p4ss", "option"),
    ("GET /api Authorization: Bearer abc.def-ghi", "abc.def-ghi", "bearer"),
    ("bootstrap token 07401b.f395accd246ae52d was created", "07401b.f395accd246ae52d", "bootstrap-token"),
    ("service account token %s in a log line" % JWT, JWT, "jwt"),
])
def test_each_kind_is_taken_out_and_counted(text, secret, kind):
    out, counts = redact(text)
    assert secret not in out and MARK in out
    assert counts.get(kind, 0) >= 1, counts


# One planted value per format: (format, text, the planted secrets, what must stay, kind counted).
FORMATS = [
    ("PEM RSA", "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpQIBAAKCAQEAplantedRSA\n-----END RSA PRIVATE KEY-----\nb",
     ["plantedRSA"], ["a\n", "\nb", "-----BEGIN RSA PRIVATE KEY-----"], "private-key"),
    ("PEM OpenSSH", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1plantedSSH\n-----END OPENSSH PRIVATE KEY-----\nnext line",
     ["plantedSSH"], ["next line"], "private-key"),
    ("PEM encrypted PKCS#8", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHzBJplantedP8\n-----END ENCRYPTED PRIVATE KEY-----",
     ["plantedP8"], ["ENCRYPTED PRIVATE KEY"], "private-key"),
    ("PEM in a JSON string", '{"key": "-----BEGIN EC PRIVATE KEY-----\\nMHcplantedJSON\\n-----END EC PRIVATE KEY-----\\n", "n": 1}',
     ["plantedJSON"], ['"n": 1'], "private-key"),
    ("OpenPGP private key block", "gpg:\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGplantedPGP\n=Ab12\n"
     "-----END PGP PRIVATE KEY BLOCK-----\ndone", ["plantedPGP", "=Ab12"], ["gpg:\n", "\ndone"], "private-key"),
    ("SSH2 (RFC 4716 family) private key", "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key\"\nP2/56wAAplantedSSH2\n"
     "---- END SSH2 ENCRYPTED PRIVATE KEY ----\nafter", ["plantedSSH2"], ["\nafter"], "private-key"),
    ("PuTTY v3", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ed25519-key\nPublic-Lines: 2\nAAAAC3Nz\n"
     "AAAAIpublic\nPrivate-Lines: 1\nAAAAIplantedPuTTY\nPrivate-MAC: 0a1b2cplantedMAC\nafter",
     ["plantedPuTTY", "0a1b2c"], ["PuTTY-User-Key-File-3: ssh-ed25519", "AAAAIpublic", "Private-Lines: 1", "\nafter"], "private-key"),
    ("PuTTY v2", "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 2\nAAABplantedOne\nAAABplantedTwo\nPrivate-MAC: abcdef\n",
     ["plantedOne", "plantedTwo"], ["PuTTY-User-Key-File-2: ssh-rsa"], "private-key"),
    ("YAML literal block scalar", "data:\n  password: |\n    planted-line-one\n    planted-line-two\n\n    planted-after-blank\n"
     "  user: admin\n", ["planted-line-one", "planted-line-two", "planted-after-blank"], ["data:\n", "  user: admin\n"], "kubeconfig"),
    ("YAML folded block scalar in a list", "users:\n- name: a\n  user:\n    client-key-data: >-\n      LS0tplantedFolded\n"
     "      moreplantedFolded\n    username: keep\n", ["plantedFolded"], ["- name: a", "    username: keep\n"], "kubeconfig"),
    ("YAML block scalar after a list dash", "- password: |\n    planted-dash\n  name: keep-me\n", ["planted-dash"],
     ["  name: keep-me"], "kubeconfig"),
    ("YAML plain scalar on the next line", "password:\n    planted-plain-next\nnext: kept\n", ["planted-plain-next"],
     ["next: kept"], "kubeconfig"),
    ("YAML plain value with spaces", "password: planted pass phrase\nuser: kept\n", ["planted", "pass phrase"], ["user: kept"],
     "kubeconfig"),
    ("Kubernetes Secret tls.key", "data:\n  tls.crt: LS0tCERTkept\n  tls.key: LS0tplantedTLS\n", ["plantedTLS"],
     ["tls.crt: LS0tCERTkept"], "kubeconfig"),
    (".dockerconfigjson field", "data:\n  .dockerconfigjson: eyJhdXRocyplantedDCJ\ntype: kubernetes.io/dockerconfigjson\n",
     ["plantedDCJ"], ["type: kubernetes.io/dockerconfigjson"], "kubeconfig"),
    ("docker config.json auth", '{"auths": {"registry:5000": {"auth": "dXNlcjplantedAuth", "email": "kept@example"}}}',
     ["plantedAuth"], ['"auths": {"registry:5000"', '"email": "kept@example"'], "kubeconfig"),
    ("JSON password with an escaped quote", '{"password": "planted\\"quote", "user": "kept"}', ["planted", "quote\""],
     ['"user": "kept"', '"password": "REDACTED"'], "kubeconfig"),
    ("escaped JSON inside a log line", 'msg="{\\"password\\":\\"plantedEscaped\\",\\"user\\":\\"kept\\"}"', ["plantedEscaped"],
     ['\\"user\\":\\"kept\\"'], "kubeconfig"),
    ("camelCase field", "certificateKey: plantedCamel\nkind: InitConfiguration\n", ["plantedCamel"], ["kind: InitConfiguration"],
     "kubeconfig"),
    ("URL user information", "proxy:\n  http: http://user:plantedUrlPw@proxy.example:3128\n", ["plantedUrlPw"],
     ["http://user:REDACTED@proxy.example:3128"], "url"),
    ("URL with @ in the password", "HTTPS_PROXY_URL https://u:p@ss-planted@proxy:3128/x", ["p@ss-planted"],
     ["https://u:REDACTED@proxy:3128/x"], "url"),
    ("TOML registry auth (containerd)", '[plugins."io.containerd.grpc.v1.cri".registry.configs."reg:5000".auth]\n'
     '  username = "kept-user"\n  password = "plantedToml"\n  auth = "plantedTomlAuth"\n  identitytoken = "plantedIdTok"\n',
     ["plantedToml", "plantedTomlAuth", "plantedIdTok"], ['username = "kept-user"', 'password = "REDACTED"'], "setting"),
    ("TOML inline table", 'auth = { username = "kept-user", password = "plantedInline" }', ["plantedInline"],
     ['username = "kept-user"'], "setting"),
    ("AWS credentials file", "[default]\naws_access_key_id = AKIAplantedID\naws_secret_access_key = wJalrplanted/SECRET\n"
     "aws_session_token = FwoGplantedSession\nregion = us-east-1\n", ["AKIAplantedID", "wJalrplanted", "FwoGplantedSession"],
     ["[default]", "region = us-east-1"], "setting"),
    ("AWS environment", "AWS_SECRET_ACCESS_KEY=plantedEnvSecret AWS_ACCESS_KEY_ID=AKIAplantedEnv region=eu", ["plantedEnvSecret",
     "AKIAplantedEnv"], ["region=eu"], "option"),
    ("kubeadm --certificate-key", "kubeadm join 10.0.0.1:6443 --control-plane --certificate-key %s --v=5" % CERT_KEY, [CERT_KEY],
     ["--control-plane", "--v=5"], "option"),
    ("kubeadm upload-certs output", "[upload-certs] Using certificate key:\n%s\nnext" % CERT_KEY, [CERT_KEY],
     ["Using certificate key:", "\nnext"], "option"),
    ("etcdctl --user", "etcdctl --user root:plantedRootPw member list", ["plantedRootPw"], ["--user root:REDACTED member list"],
     "option"),
    ("curl -u", "curl -u admin:plantedCurl https://x", ["plantedCurl"], ["-u admin:REDACTED https://x"], "option"),
    ("Authorization: Token", "GET / Authorization: Token plantedTokenAuth HTTP/1.1", ["plantedTokenAuth"],
     ["Authorization: Token REDACTED HTTP/1.1"], "bearer"),
    ("Proxy-Authorization: Basic", "Proxy-Authorization: Basic dXNlcjplantedBasic==", ["dXNlcjplantedBasic"],
     ["Proxy-Authorization: Basic REDACTED"], "bearer"),
    ("Authorization in JSON", '{"Authorization": "Bearer plantedJsonBearer"}', ["plantedJsonBearer"], ['"Authorization": "Bearer '],
     "bearer"),
    ("environment password with a prefix", "Environment=DB_ROOT_PASSWORD=plantedEnvPw", ["plantedEnvPw"], ["Environment="], "option"),
    ("option with a prefix", "--oidc-client-secret plantedOidc --oidc-issuer-url https://kept", ["plantedOidc"],
     ["--oidc-issuer-url https://kept"], "option"),
]


@pytest.mark.parametrize("text,secrets,kept,kind", [f[1:] for f in FORMATS], ids=[f[0] for f in FORMATS])
def test_each_format_is_taken_out_and_the_rest_stays(text, secrets, kept, kind):
    out, counts = redact(text)
    for secret in secrets:
        assert secret not in out, out
    for piece in kept:
        assert piece in out, out
    assert counts.get(kind, 0) >= 1, counts
    assert redact(out) == (out, {})  # a redacted text is left as it is


@pytest.mark.parametrize("text", [
    "etcd --peer-key-file=/etc/kubernetes/pki/etcd/peer.key --client-cert-auth=true",
    "token expired for request; retrying",
    "--discovery-token-ca-cert-hash sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
    "version 3.5.21 at 10.89.3.11:2379",
    "etcd --client-cert-auth=true --peer-client-cert-auth=true --auto-tls=false",
    "kube-apiserver --authorization-mode=Node,RBAC --token-auth-file=/etc/tokens.csv --service-account-key-file=/k.key",
    "kubeadm token create --ttl 2h --token-ttl 0",
    "docker run --user 1000:1000 image",
    "journalctl -u etcd --since -24h",
    "volumes:\n- name: certs\n  secret:\n    secretName: etcd-certs\n",
    "authorization:\n  mode: Webhook\n",
    "url https://registry.example:5000/v2/ and ssh://git@example.org/repo",
    "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----",
    "spec:\n  automountServiceAccountToken: false\n  tokenFile: /etc/kubernetes/token.csv\n  passwordless: True\n",
    '{"token": null, "insecure": true}\nskip_password = false\n',
])
def test_what_is_no_secret_stays(text):
    assert redact(text) == (text, {})


# One line per format as a unit's journal shows it (``journalctl -o short-iso``: a prefix before every line, so
# nothing starts a line): what the install scenario plants on a lab host for its support bundle.
JOURNAL_PLANT = """\
kubeadm join 10.0.0.1:6443 --token q2w3e4.r5t6y7u8i9o0p1a2
https_proxy=http://proxyuser:planted-url-pass-21@proxy.invalid:3128
  password = "planted-toml-pass-22"
  auth = "cGxhbnRlZC10b21sLWF1dGgtMjM="
kubeadm init phase upload-certs --upload-certs --certificate-key 5d817a2c9d6e43f0b1e5a7c38d4b2f9e0a6c1d3e7f8b9a0c2d4e6f8a1b3c5d7e
Authorization: Token planted-token-auth-24
etcdctl --user root:planted-etcd-pw-25 member list
aws_secret_access_key = plantedAwsSecretKey26
{"password": "planted-json-pw-27"}
tls.key: cGxhbnRlZC10bHMta2V5LTI4
-----BEGIN PGP PRIVATE KEY BLOCK-----

lQPGBGPlantedPgpBody29
=abcd
-----END PGP PRIVATE KEY BLOCK-----
---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----
Comment: "planted"
P2/56wAAAPlantedSsh2Body30
---- END SSH2 ENCRYPTED PRIVATE KEY ----
PuTTY-User-Key-File-3: ssh-ed25519
Encryption: none
Comment: planted
Public-Lines: 2
AAAAC3NzaC1lZDI1NTE5AAAAIPublicPart
AAAA
Private-Lines: 1
AAAAIPlantedPuttyPrivate31
Private-MAC: 3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6
"""
JOURNAL_SECRETS = ("q2w3e4.r5t6y7u8i9o0p1a2", "planted-url-pass-21", "planted-toml-pass-22", "cGxhbnRlZC10b21sLWF1dGgtMjM=",
                   "5d817a2c9d6e43f0b1e5a7c38d4b2f9e0a6c1d3e7f8b9a0c2d4e6f8a1b3c5d7e", "planted-token-auth-24",
                   "planted-etcd-pw-25", "plantedAwsSecretKey26", "planted-json-pw-27", "cGxhbnRlZC10bHMta2V5LTI4",
                   "lQPGBGPlantedPgpBody29", "P2/56wAAAPlantedSsh2Body30", "AAAAIPlantedPuttyPrivate31",
                   "3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6")


def test_every_format_is_taken_out_of_journal_lines():
    journal = "".join("2026-12-03T08:00:00+00:00 cp1 sh[123]: %s\n" % line for line in JOURNAL_PLANT.splitlines())
    out, counts = redact(journal)
    assert [s for s in JOURNAL_SECRETS if s in out] == []
    assert "proxyuser" in out and "member list" in out and "PuTTY-User-Key-File-3: ssh-ed25519" in out
    assert set(counts) == {"private-key", "url", "bearer", "kubeconfig", "option", "setting"}


def test_redacting_twice_changes_nothing_more():
    once, counts = redact("password: hunter2\n%s\n--token=abc" % KEY)
    assert counts and redact(once) == (once, {})


def test_counts_add_up():
    assert merge_counts({"jwt": 1}, {"jwt": 2, "option": 1}) == {"jwt": 3, "option": 1}


def test_a_character_that_lowers_to_two_keeps_every_offset():
    out, counts = redact("\u0130 password: planted-after-dotted-i\nnext \u212a")
    assert out == "\u0130 password: REDACTED\nnext \u212a" and counts == {"kubeconfig": 1}


SIZE = 200 * 1024


def _repeat(unit, tail=""):
    return unit * (SIZE // len(unit)) + tail


# Near misses of every pattern, each about 200 KB: a prefix that starts a match again and again without ending
# one, long runs a quantifier could scan from many places, blocks without their end.
HOSTILE = {
    "password lines": _repeat("password: \n"), "password one line": _repeat("password: "), "begin": _repeat("-----BEGIN "),
    "begin without end": _repeat("-----BEGIN PRIVATE KEY-----"), "ssh2 begin": _repeat("---- BEGIN "),
    "ssh2 without end": _repeat("---- BEGIN SSH2 PRIVATE KEY ----\n"), "a:a:@": _repeat("a:", "@"),
    "url a:a:": "http://" + _repeat("a:", "@"), "url without @": _repeat("http://u:p"), "schemes": _repeat("://"),
    "scheme users": _repeat("://a:"), "long user": "http://" + _repeat("a") + ":b@c", "spaces": _repeat(" "), "tabs": _repeat("\t"),
    "newlines": _repeat("\n"), "blank lines": _repeat(" \n"), "options": _repeat("--password "),
    "option then spaces": "--password" + _repeat(" "), "headers": _repeat("Authorization: "),
    "header then spaces": "authorization:" + _repeat(" "), "jwt dashes": "eyJ" + _repeat("a-"), "jwt dots": _repeat("eyJaaaa."),
    "jwt starts": _repeat("eyJ-"), "letters": _repeat("a"), "PASSWORD": _repeat("PASSWORD"), "PASSWORD_": _repeat("PASSWORD_"),
    "open JSON strings": _repeat('"password": "'), "open single quotes": _repeat("password:'x "), "backslashes": _repeat("\\"),
    "quotes": _repeat('"'), "single quotes": _repeat("'"), "putty": _repeat("Private-Lines: 1\n"), "list items": _repeat("- password:\n"),
    "indented headers": "".join("  " * (i % 50) + "password: |\n" for i in range(SIZE // 60)), "users": _repeat("--user "),
    "users with colon": _repeat("--user a:"), "-u": _repeat("-u "), "certificate key lines": _repeat("using certificate key:\n"),
    "settings": _repeat("password = "), "comma settings": _repeat(",password="), "inline tables": _repeat("{password = "),
    "bootstrap prefixes": _repeat("abcdef."), "block body": "password: |\n" + _repeat("  x\n"),
    "unterminated double": 'password: "' + _repeat("a"), "unterminated single": "password: '" + _repeat("a"),
    "key data": _repeat("a.key: "), "dot keys": _repeat(".key"), "auth": _repeat("auth"), "header then blank line": "password:\n" + _repeat(" "),
    "colons": _repeat(" x:"), "long keys": _repeat("x" * 127 + ":\n"), "dashes": _repeat("- "), "dash tabs": "\n" + _repeat("-\t"),
    "env words": _repeat("a_password_"), "env without =": _repeat("token_" * 10 + "="), "escapes": 'password: "' + _repeat("\\a"),
    "toml triple": _repeat('password = """'), "toml triple single": _repeat("password = '''"), "option parts": _repeat("--a-a-a-"),
    "keys and children": _repeat("password:\n  x:\n"), "plain next lines": _repeat("password:\n    x\n"),
    "commented headers": _repeat("password: | # c\n"), "flow": _repeat('{"token":'), "escaped keys": _repeat('\\"password\\": '),
    "equals after spaces": "password" + _repeat(" ") + "=",
}
PATTERN_CPU_SECONDS = 2.0  # measured: under 0.07 s for each input; a quadratic pattern takes minutes


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_no_pattern_is_slower_than_linear_on_hostile_text(name):
    text = HOSTILE[name]
    for kind, pattern, _replace, _lowered in PATTERNS:
        start = time.process_time()
        for _match in pattern.finditer(text):
            pass
        spent = time.process_time() - start
        assert spent < PATTERN_CPU_SECONDS, "%s pattern (%s): %.2f s of CPU on %s" % (kind, pattern.pattern[:60], spent, name)
    start = time.process_time()
    redact(text)
    assert time.process_time() - start < 2 * PATTERN_CPU_SECONDS
