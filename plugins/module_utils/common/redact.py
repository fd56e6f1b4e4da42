# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: secrets taken out of text before it leaves a host or goes into an archive.

One function, :func:`redact`, used on the hosts (what the support bundle collects there, before it is sent)
and on the controller (the lock, the run reports). Each kind of secret is one pattern; what it matched is
replaced by ``REDACTED`` and counted by kind, so an index can say what was taken out:

* ``private-key``: a PEM private key block (``-----BEGIN ... PRIVATE KEY-----`` to its END line), whole;
* ``kubeconfig``: a kubeconfig's or a YAML/JSON credential field - ``client-key-data``, ``token``,
  ``password``, ``client-secret``, ``id-token``, ``refresh-token``, ``access-token``, ``secret``,
  ``token-secret`` and the like - its value;
* ``option``: a command-line or environment credential - ``--token X``, ``--password=X``,
  ``ETCD_PASSWORD=X``, ``--discovery-token-ca-cert-hash`` is not one (a hash is public);
* ``bearer``: an ``Authorization: Bearer|Basic X`` header value;
* ``bootstrap-token``: a kubeadm bootstrap token (``abcdef.0123456789abcdef``);
* ``jwt``: a JSON web token (service-account tokens, OIDC ID tokens).

Standard library only (it runs on the hosts).
"""

from __future__ import annotations

import re

MARK = "REDACTED"
_NAMES = (r"client-key-data|client-key|token|tokens|password|passwd|client-secret|id-token|refresh-token|"
          r"access-token|secret|token-secret|secret-key|secret_key|access_key|api-key|api_key|apikey|"
          r"private-key|private_key|bootstrap-token|join-token")
PATTERNS = (
    ("private-key", re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?! %s -----END).*?(-----END \1PRIVATE KEY-----|\Z)" % MARK, re.S),
     lambda m: "-----BEGIN %sPRIVATE KEY----- %s -----END %sPRIVATE KEY-----" % (m.group(1), MARK, m.group(1))),
    ("bearer", re.compile(r"(?i)(\bauthorization\s*[:=]\s*[\"']?(?:bearer|basic)\s+)[^\s\"',;]+"),
     lambda m: m.group(1) + MARK),
    ("kubeconfig", re.compile(r"(?i)([\"']?\b(?:%s)[\"']?\s*:\s*)(?![\"']?%s)(\"[^\"\n]*\"|'[^'\n]*'|[^\s,}\]]+)"
                              % (_NAMES, MARK)),
     lambda m: m.group(1) + MARK),
    ("option", re.compile(r"(?i)((?<![\w-])--?(?:%s)(?:=|\s+)|\b[A-Z0-9_]*(?:PASSWORD|TOKEN|SECRET|PASSWD)[A-Z0-9_]*=)"
                          r"(?!%s)(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)" % (_NAMES, MARK)),
     lambda m: m.group(1) + MARK),
    ("bootstrap-token", re.compile(r"\b[a-z0-9]{6}\.[a-z0-9]{16}\b"), lambda m: MARK),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), lambda m: MARK),
)


def redact(text):
    """``(text without its secrets, {kind: how many were replaced})``."""
    counts = {}
    for kind, pattern, replace in PATTERNS:
        text, n = pattern.subn(replace, text)
        if n:
            counts[kind] = counts.get(kind, 0) + n
    return text, counts


def merge_counts(total, counts):
    """Add ``counts`` into ``total`` (both ``{kind: n}``); returns ``total``."""
    for kind, n in counts.items():
        total[kind] = total.get(kind, 0) + n
    return total
