# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile texts for the redactor (ids ``redact-``), redacted as the support bundle redacts every text (entries.py
``redact``: the redacted text on stdout, then the counts by kind as one JSON line).

- one case per secret format the redactor covers (plugins/module_utils/common/redact.py), each planted in lines as a
  unit's journal shows them (``journalctl -o short-iso``: a prefix before every line, so nothing starts a line):
  exit 0, the secret on neither stream, the redaction marker where it was and the kind counted. Where the prefix
  matters (YAML block scalars) the same text without it, and with CRLF line ends, is a case of its own;
- near misses a backtracking matcher would be slow on, 1 MiB each (the most the entry reads): a prefix that starts
  a match again and again without ending one, one line without a newline, 100,000 short lines, a private key block
  without its END line; each within the harness's CPU and memory bounds, and a secret after them still redacted;
- files that are no UTF-8 text (Latin-1, UTF-16, a NUL byte, an encoded surrogate, a truncated character): exit 1
  with one line naming the file and the offset, never the text; one byte over 1 MiB: exit 1 naming the limit.

The patterns' own behaviour (what stays, redacting twice, per-pattern CPU on hostile text) is tested in
tests/unit/plugins/module_utils/common/test_redact.py.
"""

from __future__ import annotations

import re

from .harness import Case

MIB = 1024 * 1024
# What a unit's journal puts before every line (journalctl -o short-iso).
JOURNAL = "2026-12-03T08:00:00+0000 cp1 kubelet[812]: "
IN = "{work}/journal.log"
CERT_KEY = "5d817a2c9d6e43f0b1e5a7c38d4b2f9e0a6c1d3e7f8b9a0c2d4e6f8a1b3c5d7e"
JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6InBsYW50ZWQifQ.eyJzdWIiOiJzeXN0ZW06c2EifQ.cGxhbnRlZC1qd3Qtc2lnbmF0dXJl"


def _counted(kind, n=r"[1-9][0-9]*"):
    """The last line of stdout: the counts, with ``kind`` among them."""
    return r'\{[^\n]*"%s": %s[,}][^\n]*\n\Z' % (re.escape(kind), n)


def _planted(name, lines, secrets, marker, kind, prefix=JOURNAL, eol="\n"):
    """A case whose file is ``lines`` (each after ``prefix``, between two lines with no secret), where ``marker``
    (a regex) must be a whole line of stdout after the prefix (or end the text, just before the counts) and ``secrets``
    on neither stream."""
    body = ["started"] + list(lines) + ["stopped"]
    text = "".join(prefix + line + eol for line in body)
    pattern = r"(?m)^%s%s\r?(?:$|(?=\{\"))(?s:.*)%s" % (re.escape(prefix), marker, _counted(kind))
    return Case("redact-" + name, [IN], files={"journal.log": text}, entry="redact", exit=(0,), stdout=pattern,
                absent=secrets)


# (name, lines, secrets, the line left where they were (regex), kind counted)
FORMATS = [
    ("pem-rsa", ["-----BEGIN RSA PRIVATE KEY-----", "MIIEpQIBAAKCAQEAplantedRsaBody01", "plantedRsaBody02==",
                 "-----END RSA PRIVATE KEY-----"], ["plantedRsaBody01", "plantedRsaBody02"],
     r"-----BEGIN RSA PRIVATE KEY----- REDACTED -----END RSA PRIVATE KEY-----", "private-key"),
    ("pem-openssh", ["-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAAplantedOpenSsh",
                     "-----END OPENSSH PRIVATE KEY-----"], ["plantedOpenSsh"],
     r"-----BEGIN OPENSSH PRIVATE KEY----- REDACTED -----END OPENSSH PRIVATE KEY-----", "private-key"),
    ("pem-encrypted-pkcs8", ["-----BEGIN ENCRYPTED PRIVATE KEY-----", "MIIFHzBJBgkqhkiG9w0BBQ0wplantedPkcs8",
                             "-----END ENCRYPTED PRIVATE KEY-----"], ["plantedPkcs8"],
     r"-----BEGIN ENCRYPTED PRIVATE KEY----- REDACTED -----END ENCRYPTED PRIVATE KEY-----", "private-key"),
    ("pem-without-end", ["-----BEGIN EC PRIVATE KEY-----", "MHcCAQEEIplantedCutShort"], ["plantedCutShort", "stopped"],
     r"-----BEGIN EC PRIVATE KEY----- REDACTED -----END EC PRIVATE KEY-----", "private-key"),
    ("pgp", ["-----BEGIN PGP PRIVATE KEY BLOCK-----", "", "lQOYBGplantedPgpBody", "=Ab12", "-----END PGP PRIVATE KEY BLOCK-----"],
     ["plantedPgpBody", "=Ab12"], r"-----BEGIN PGP PRIVATE KEY BLOCK----- REDACTED -----END PGP PRIVATE KEY BLOCK-----",
     "private-key"),
    ("ssh2-rfc4716", ["---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----", 'Comment: "rsa-key-20261203"', "P2/56wAAAplantedSsh2Body",
                      "---- END SSH2 ENCRYPTED PRIVATE KEY ----"], ["plantedSsh2Body"],
     r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ---- REDACTED ---- END SSH2 ENCRYPTED PRIVATE KEY ----", "private-key"),
    ("putty", ["PuTTY-User-Key-File-3: ssh-ed25519", "Encryption: none", "Comment: ed25519-key", "Public-Lines: 1",
               "AAAAC3NzaC1lZDI1NTE5AAAAIPublicPart", "Private-Lines: 1", "AAAAIplantedPuttyPrivate",
               "Private-MAC: 3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6"],
     ["plantedPuttyPrivate", "3f9a0c1d2e4b5a6978c0"], r"Private-Lines: 1 REDACTED", "private-key"),
    # A YAML block scalar as a unit prints it: the prefix comes before its more-indented lines too.
    ("yaml-literal-block-journal", ["registry:", "  password: |", "    plantedBlockLineOne", "    plantedBlockLineTwo",
                                    "  username: kept"], ["plantedBlockLineOne", "plantedBlockLineTwo"],
     r"  password: (?:\| )?REDACTED", "kubeconfig"),
    ("yaml-folded-block-journal", ["users:", "- name: admin", "  user:", "    client-key-data: >-", "      LS0tplantedFoldedOne",
                                   "      plantedFoldedTwo", "    username: kept"], ["plantedFoldedOne", "plantedFoldedTwo"],
     r"    client-key-data: (?:>- )?REDACTED", "kubeconfig"),
    ("tls-key", ["data:", "  tls.crt: LS0tCERTkept", "  tls.key: LS0tplantedTlsKey"], ["plantedTlsKey"], r"  tls\.key: REDACTED",
     "kubeconfig"),
    ("dockerconfigjson", ["data:", "  .dockerconfigjson: eyJhdXRocyI6plantedDockerCfg"], ["plantedDockerCfg"],
     r"  \.dockerconfigjson: REDACTED", "kubeconfig"),
    ("json-password", ['msg={"user": "admin", "password": "plantedJsonPw"}'], ["plantedJsonPw"],
     r'msg=\{"user": "admin", "password": "REDACTED"\}', "kubeconfig"),
    ("url-userinfo", ["https_proxy=http://proxyuser:plantedUrlPw@proxy.invalid:3128"], ["plantedUrlPw"],
     r"https_proxy=http://proxyuser:REDACTED@proxy\.invalid:3128", "url"),
    ("toml-password", ['[plugins."io.containerd.grpc.v1.cri".registry.configs."reg:5000".auth]', '  username = "kept-user"',
                       '  password = "plantedTomlPw"'], ["plantedTomlPw"], r'  password = "REDACTED"', "setting"),
    ("toml-containerd-auth", ['  auth = "cGxhbnRlZFRvbWxBdXRo"'], ["cGxhbnRlZFRvbWxBdXRo"], r'  auth = "REDACTED"', "setting"),
    ("ini-aws-credentials", ["[default]", "aws_access_key_id = AKIAKEPTID", "aws_secret_access_key = plantedAwsSecret/Key+1",
                             "aws_session_token = FwoGplantedSession"], ["plantedAwsSecret", "FwoGplantedSession"],
     r"aws_secret_access_key = REDACTED", "setting"),
    ("certificate-key-option", ["kubeadm join 10.0.0.1:6443 --control-plane --certificate-key %s --v=5" % CERT_KEY], [CERT_KEY],
     r"kubeadm join 10\.0\.0\.1:6443 --control-plane --certificate-key REDACTED --v=5", "option"),
    ("upload-certs-output", ["[upload-certs] Using certificate key:", CERT_KEY], [CERT_KEY], r"REDACTED", "option"),
    ("authorization-token", ["GET /v2/ Authorization: Token plantedTokenAuth HTTP/1.1"], ["plantedTokenAuth"],
     r"GET /v2/ Authorization: Token REDACTED HTTP/1\.1", "bearer"),
    ("authorization-bearer", ["request headers: Authorization: Bearer plantedBearer.abc-def"], ["plantedBearer"],
     r"request headers: Authorization: Bearer REDACTED", "bearer"),
    ("authorization-basic", ["Proxy-Authorization: Basic dXNlcjplantedBasic=="], ["dXNlcjplantedBasic"],
     r"Proxy-Authorization: Basic REDACTED", "bearer"),
    ("etcdctl-user", ["etcdctl --user root:plantedEtcdPw member list"], ["plantedEtcdPw"],
     r"etcdctl --user root:REDACTED member list", "option"),
    ("password-option-and-env", ["registry login --password=plantedOptPw ETCD_ROOT_PASSWORD=plantedEnvPw done"],
     ["plantedOptPw", "plantedEnvPw"], r"registry login --password=REDACTED ETCD_ROOT_PASSWORD=REDACTED done", "option"),
    ("jwt", ["service account token %s accepted" % JWT], [JWT, "cGxhbnRlZC1qd3Qtc2lnbmF0dXJl"],
     r"service account token REDACTED accepted", "jwt"),
    ("bootstrap-token", ["bootstrap token 07401b.f395accd246ae52d was created"], ["f395accd246ae52d"],
     r"bootstrap token REDACTED was created", "bootstrap-token"),
]

CASES = [_planted(*f) for f in FORMATS]

# The block scalars without a prefix (a file as it is): the redactor's own format, for comparison with the above.
CASES += [
    _planted("yaml-literal-block-bare", ["registry:", "  password: |", "    plantedBareOne", "    plantedBareTwo",
                                         "  username: kept"], ["plantedBareOne", "plantedBareTwo"],
             r"  password: REDACTED", "kubeconfig", prefix=""),
    _planted("yaml-folded-block-bare", ["users:", "- name: admin", "  user:", "    client-key-data: >-", "      LS0tplantedBareF",
                                        "    username: kept"], ["plantedBareF"], r"    client-key-data: REDACTED", "kubeconfig",
             prefix=""),
    # The same file saved with Windows line ends (a kubeconfig or values file copied from a workstation).
    _planted("yaml-literal-block-crlf", ["registry:", "  password: |", "    plantedCrlfOne", "    plantedCrlfTwo",
                                         "  username: kept"], ["plantedCrlfOne", "plantedCrlfTwo"],
             r"  password: (?:\| )?REDACTED", "kubeconfig", prefix="", eol="\r\n"),
]


def _fill(unit, head="", tail=""):
    """``head``, ``unit`` repeated, then ``tail``: at most 1 MiB of UTF-8 (the most the entry reads), as near as fits."""
    room = MIB - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return head + unit * (room // len(unit.encode("utf-8"))) + tail


def _writer(name, make):
    def setup(work):
        with open("%s/%s" % (work, name), "wb") as handle:
            handle.write(make().encode("utf-8"))
    return setup


SSH2_AFTER_FLOOD = "\n---- BEGIN SSH2 PRIVATE KEY ----\nplantedSsh2Flood\n---- END SSH2 PRIVATE KEY ----\n"


def _hostile(name, make, stdout, absent=()):
    """1 MiB that must be redacted within the harness's bounds; ``make()`` builds it when the case runs."""
    return Case("redact-" + name, [IN], setup=_writer("journal.log", make), entry="redact", exit=(0,), stdout=stdout,
                absent=absent)


TAIL_KEY = "\n" + JOURNAL + "-----BEGIN EC PRIVATE KEY-----\n" + JOURNAL + "MHcCAQEEIplantedAfterFlood\n" + JOURNAL + \
           "-----END EC PRIVATE KEY-----\n"
KEY_REDACTED = r"(?m)^%s-----BEGIN EC PRIVATE KEY----- REDACTED -----END EC PRIVATE KEY-----$" % re.escape(JOURNAL)

CASES += [
    # A prefix that starts a match again and again without ending one, then a secret that must still be found.
    _hostile("flood-pem-begin", lambda: _fill("-----BEGIN ", tail=TAIL_KEY), KEY_REDACTED + r"(?s:.*)" + _counted("private-key", "1"),
             ["plantedAfterFlood"]),
    _hostile("flood-ssh2-begin", lambda: _fill("---- BEGIN ", tail=SSH2_AFTER_FLOOD),
             r"(?m)^---- BEGIN SSH2 PRIVATE KEY ---- REDACTED ---- END SSH2 PRIVATE KEY ----$", ["plantedSsh2Flood"]),
    _hostile("flood-password-word", lambda: _fill("password", tail="\n%spassword: plantedAfterWords\n" % JOURNAL),
             r"(?m)^%spassword: REDACTED$" % re.escape(JOURNAL), ["plantedAfterWords"]),
    _hostile("flood-password-block-headers", lambda: _fill(JOURNAL + "password: |\n", tail="password: |\n  plantedAfterHeaders\n"),
             r"(?m)^password: REDACTED\n?\{", ["plantedAfterHeaders"]),
    _hostile("flood-password-settings", lambda: _fill("password = ", tail="\npassword = plantedAfterSettings\n"),
             r"(?m)^password = REDACTED$", ["plantedAfterSettings"]),
    _hostile("flood-authorization", lambda: _fill("Authorization: ", tail="\nAuthorization: Bearer plantedAfterHeaders\n"),
             r"(?m)^Authorization: Bearer REDACTED$", ["plantedAfterHeaders"]),
    _hostile("flood-url-userinfo", lambda: _fill("a:", head="http://", tail=" http://u:plantedAfterUrls@proxy:3128/\n"),
             r"http://u:REDACTED@proxy:3128/\n", ["plantedAfterUrls"]),
    _hostile("flood-user-option", lambda: _fill("--user a:", tail="\netcdctl --user root:plantedAfterUsers get /\n"),
             r"(?m)^etcdctl --user root:REDACTED get /$", ["plantedAfterUsers"]),
    _hostile("flood-jwt-starts", lambda: _fill("eyJa-", tail="\ntoken %s\n" % JWT), r"(?m)^token REDACTED$", [JWT]),
    # One line of 1 MiB without a newline, the secret at its very end.
    _hostile("one-line-1mib", lambda: _fill("x", tail=" --token plantedAtLineEnd"), r"x --token REDACTED\{",
             ["plantedAtLineEnd"]),
    # 100,000 short lines, every one a secret.
    _hostile("100000-short-lines", lambda: "--token=x\n" * 100000, r'(?m)^--token=REDACTED\n\{"option": 100000\}\n\Z',
             ["--token=x\n"]),
    # A key block without its END line, with 1 MiB of journal after it: redacted to the end of the text.
    _hostile("pem-begin-then-1mib", lambda: _fill(JOURNAL + "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCplantedBody\n",
                                                  head="-----BEGIN PRIVATE KEY-----\n"),
             r'\A-----BEGIN PRIVATE KEY----- REDACTED -----END PRIVATE KEY-----\{"private-key": 1\}\n\Z', ["plantedBody"]),
]


def _refused(name, data, problem, absent=()):
    """Bytes the entry will not read as text: exit 1, one line that names the file and the problem."""
    return Case("redact-" + name, [IN], files={"journal.log": data}, entry="redact",
                stderr=r"\Aerror: \S*/journal\.log: %s\n\Z" % problem, absent=absent)


CASES += [
    _refused("latin1-secret", ("%spassword: h\xe9llo-plantedLatin1\n" % JOURNAL).encode("latin-1"),
             r"not UTF-8 \(byte 0xe9 at offset %d\)" % (len(JOURNAL) + 11), ["plantedLatin1"]),
    _refused("utf16-bom", "\ufeffpassword: plantedUtf16\n".encode("utf-16-le"),
             r"UTF-16/32 text is not supported; save it as UTF-8", ["plantedUtf16"]),
    _refused("nul-byte", b"password: plantedNul\x00 --token plantedNul2\n", r"NUL byte at offset 20; not a text file",
             ["plantedNul"]),
    _refused("encoded-surrogate", b"--token planted\xed\xa0\x80Surrogate\n", r"not UTF-8 \(byte 0xed at offset 15\)",
             ["plantedSurrogate"]),
    _refused("truncated-character-at-1mib", b"a" * (MIB - 1) + b"\xe2", r"not UTF-8 \(byte 0xe2 at offset %d\)" % (MIB - 1)),
    _refused("one-byte-over-1mib", b"a" * (MIB + 1), r"%d bytes; the limit is %d" % (MIB + 1, MIB)),
    # A UTF-8 byte order mark is text: handled, and the secret after it redacted.
    Case("redact-utf8-bom", [IN], files={"journal.log": b"\xef\xbb\xbfpassword: plantedAfterBom\n"}, entry="redact", exit=(0,),
         stdout=r'\Apassword: REDACTED\n\{"kubeconfig": 1\}\n\Z', absent=["plantedAfterBom"]),
]
