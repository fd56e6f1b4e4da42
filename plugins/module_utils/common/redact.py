# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: secrets taken out of text before it leaves a host or goes into an archive.

One function, :func:`redact`, used on the hosts (what the support bundle collects there, before it is sent)
and on the controller (the lock, the run reports). Each kind of secret is one or more patterns; what they
matched is replaced by ``REDACTED`` and counted by kind, so an index can say what was taken out:

* ``private-key``: a private key block, whole - PEM (``-----BEGIN [RSA|EC|OPENSSH|ENCRYPTED|...] PRIVATE
  KEY-----`` to its END line), OpenPGP (``-----BEGIN PGP PRIVATE KEY BLOCK-----``), the SSH2 format of
  RFC 4716's family (``---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----``) and a PuTTY key file's
  ``Private-Lines:`` with its MAC (the header and public lines stay); a block without its END line is
  redacted to the end of the text;
* ``kubeconfig``: a YAML or JSON field whose name says it holds a secret - ``client-key-data``, ``token``,
  ``password``, ``client-secret``, ``id-token``, ``secret``, ``certificateKey``, ``aws_secret_access_key``,
  ``auth`` and ``identitytoken`` (a ``.dockerconfigjson``), ``.dockerconfigjson`` itself, ``tls.key`` and
  any ``NAME.key`` data field and the like: its value (a quoted value keeps its quotes, a plain one is
  taken to the end of its line; ``true``, ``false`` and ``null`` stay), or a block scalar (``password: |``,
  ``client-key-data: >-``) with every more-indented line after it;
* ``url``: the password of a URL's user information (``http://user:pass@proxy:3128`` keeps the scheme, the
  user and the host);
* ``setting``: a TOML or INI credential, ``password = "x"``, ``auth = "..."`` (containerd's registry
  auth), ``aws_secret_access_key = X``, ``aws_session_token = X`` (an AWS credentials file), at a line's
  start, after a blank (a journal line's prefix) or in an inline table;
* ``option``: a command-line or environment credential - ``--token X``, ``--password=X``,
  ``--certificate-key X``, ``--user NAME:X`` (etcdctl, curl's ``-u``; the name stays), ``ETCD_PASSWORD=X``,
  ``AWS_SECRET_ACCESS_KEY=X``, and the certificate key ``kubeadm init phase upload-certs`` prints on the
  line after ``Using certificate key:``; ``--discovery-token-ca-cert-hash`` is not one (a hash is public);
* ``bearer``: an ``Authorization:`` (or ``Proxy-Authorization:``) header value, after its scheme
  (``Bearer``, ``Basic``, ``Token``, ``Digest``...);
* ``bootstrap-token``: a kubeadm bootstrap token (``abcdef.0123456789abcdef``);
* ``jwt``: a JSON web token (service-account tokens, OIDC ID tokens).

Field and option names are matched whatever their case. Every pattern runs in time linear in the text, whatever the text
(no nested quantifier that can backtrack over the same characters twice, every unbounded scan either ends
the match or is bounded; tests/unit/plugins/module_utils/common/test_redact.py measures it on hostile
texts). Standard library only (it runs on the hosts).
"""

from __future__ import annotations

import re

MARK = "REDACTED"
_DONE = r"(?![\"']?%s\b)" % MARK.lower()  # a value already redacted is left as it is (on lowered text)
_SWITCH = r"(?!(?:true|false|null)(?![\w.-]))"  # a switch (``automountServiceAccountToken: false``) is no secret

# Words that make a field's name a secret's, matched in the lowered text wherever they end a name:
# ``db_password``, ``client-key-data``, ``aws_secret_access_key``, ``certificateKey``.
_SECRET_WORDS = ("password", "passwd", "passphrase", "secret", "token", "credential", "apikey", "api-key", "api_key",
                 "privatekey", "private-key", "private_key", "client-key", "client_key", "clientkey",
                 "certificate-key", "certificate_key", "certificatekey", "access-key", "access_key", "accesskey",
                 "secret_access_key", "secret-access-key")
# Command-line options (``--NAME X``, ``--NAME=X``, ``--prefix-NAME X``); a key *file* option is not one.
_OPTION_WORDS = ("password", "passwd", "passphrase", "token", "secret", "certificate-key", "api-key", "apikey",
                 "access-key", "secret-key")
# Environment variables (``*PASSWORD*=``, ``*TOKEN*=``...).
_ENV_WORDS = ("password", "passwd", "token", "secret", "access_key", "api_key", "apikey", "private_key", "credential")
_AUTH_SCHEMES = ("bearer", "basic", "token", "digest", "negotiate", "ntlm", "apikey", "key")


def _words(words, after=""):
    """An alternation of literal words, longest first, each followed by ``after``: every alternative opens with
    a letter, so the regex engine skips ahead to the letters they can start with."""
    return "|".join(re.escape(w) + after for w in sorted(words, key=lambda w: (-len(w), w)))


# A secret field's name, in lowered text: a secret word (with ``s``, ``-data``, ``_key``, ``id``... after it),
# ``auth`` as a name of its own (not ``client-cert-auth``), a Secret's ``.dockerconfigjson``/``.dockercfg`` and
# ``NAME.key`` data (``tls.key``).
_KEY = (r"(?:%s|a(?<![\w.-]a)uth|\.dockerconfigjson|\.dockercfg|\.key(?<=[\w-]\.key))"
        % _words(_SECRET_WORDS, r"(?:s|[-_]?(?:data|key|id))?"))
_KEY_AT_END = re.compile(r"%s(?:\\?[\"'])?[ \t]*\Z" % _KEY)
_EOL = r"(?=\n|\Z)"
# A journal line's prefix, lowered: ``2026-12-03t10:00:00+0000 host unit[1]: `` or ``dec 03 10:00:00 host unit[1]: ``.
_JOURNAL = (r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}t[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[+-][0-9]{4}|z)?|[a-z]{3} [ 0-9][0-9] "
            r"[0-9]{2}:[0-9]{2}:[0-9]{2}) [^\s]{1,255} [^\s\[\]]{1,255}(?:\[[0-9]{1,10}\])?: ")
# A quoted value: to its closing quote, or to the end of its line when it has none (never a failed scan).
_DQ = r"\"(?:[^\"\\\n]|\\.?)*(?:\"|%s)" % _EOL
_SQ = r"'[^'\n]*(?:'|%s)" % _EOL
_TO_EOL = r"[^\s](?:[^\n]*[^\s])?"  # a plain value: the rest of its line, without trailing blanks
_IN_FLOW = r"[^\s,}\]](?:[^\n,}\]]*[^\s,}\]])?"  # a plain value after a quoted name (JSON, a flow mapping)


def _lowered(text):
    """``text`` lowered with every character in its place (one character, U+0130, lowers to two)."""
    low = text.lower()
    return low if len(low) == len(text) else text.replace("\u0130", "i").lower()


class _Found(object):
    """A match (found in the lowered text or the text) whose groups are read from the text."""

    __slots__ = ("match", "text")

    def __init__(self, match, text):
        self.match = match
        self.text = text

    def group(self, name=0):
        start, end = self.match.span(name)
        return None if start < 0 else self.text[start:end]

    def start(self, name=0):
        return self.match.start(name)


def _value(found, name="v"):
    """A redacted value: a quoted one keeps its quotes."""
    value = found.group(name)
    if value[:1] in ("\"", "'"):
        quote = value[0]
        return quote + MARK + (quote if len(value) > 1 and value.endswith(quote) else "")
    return MARK


def _kept_value(found):
    """Everything matched before the value, then the redacted value."""
    return found.text[found.start():found.start("v")] + _value(found)


def _pem(found):
    label = "%s%s KEY%s" % (found.group("l"), found.group("w"), found.group("b"))
    return "-----BEGIN %s----- %s -----END %s-----" % (label, MARK, label)


def _block(found):
    """A block scalar (or a plain scalar on the lines below its name) whose name is a secret's."""
    if not _KEY_AT_END.search(found.group("k").lower()):
        return None  # any other field: left as it is
    lead = found.group("lead")
    return lead + ("" if lead.endswith((" ", "\t")) else " ") + MARK


_SETTING_HEAD = re.compile(r"(?:(?P<open>[{,\s])|\A)[ \t]*(?:\\?[\"'])?[\w.-]*\Z")


def _setting(found):
    """``NAME = value`` at a line's start (after its indentation), after a blank (a journal's or a log's prefix
    before it: ``... sh[12]: password = x``) or in an inline table ``{..., NAME = value}``."""
    start = found.start()
    head = found.text[max(0, start - 128):start]
    cut = head.rfind("\n")
    at_line_start = cut >= 0 or start <= 128
    match = _SETTING_HEAD.search(head[cut + 1:])
    if not match or not (match.group("open") or at_line_start):
        return None
    return _kept_value(found)


def _user(found):
    return found.group("k") + found.group("u") + ":" + MARK


# (kind, pattern, replace, on the lowered text): in this order; ``replace(found)`` gives the text in place of
# the match, or None to leave it (and not count it).
PATTERNS = (
    ("private-key", re.compile(r"-----BEGIN (?P<l>(?:[A-Z0-9]{1,20} ){0,4})(?P<w>PRIVATE|SECRET) KEY(?P<b>(?: BLOCK)?)-----"
                               r"(?! %s -----END).*?(?:-----END (?P=l)(?P=w) KEY(?P=b)-----|\Z)" % MARK, re.S), _pem, False),
    ("private-key", re.compile(r"---- BEGIN (?P<l>(?:[A-Z0-9]{1,20} ){0,4})PRIVATE KEY ----(?! %s ---- END).*?"
                               r"(?:---- END (?P=l)PRIVATE KEY ----|\Z)" % MARK, re.S),
     lambda f: "---- BEGIN %sPRIVATE KEY ---- %s ---- END %sPRIVATE KEY ----" % (f.group("l"), MARK, f.group("l")), False),
    ("private-key", re.compile(r"Private-Lines:[ \t]*(?P<n>[0-9]{1,5})(?![ \t]*%s).*?(?:Private-(?:MAC|Hash):[ \t]*[0-9A-Fa-f]*|\Z)"
                               % MARK, re.S), lambda f: "Private-Lines: %s %s" % (f.group("n"), MARK), False),
    # A block scalar: its name's line, then every blank or more-indented line (more than the name's, when the
    # name follows a list's "- "). Without an indicator, a plain scalar on the next, more-indented lines (not a
    # mapping, a list or a comment there).
    # A journal's prefix (``-o short-iso`` as support_collect reads it, or ``-o short``) before the name's line is
    # before each of its lines too. Windows line ends are understood.
    ("kubeconfig", re.compile(r"^(?P<lead>(?P<j>%s)?(?P<i>[ \t]*)(?P<d>-[ \t]+)?(?P<k>[^\s:#][^\n:#]{0,127}):[ \t]*)"
                              r"(?:[|>][0-9+-]{0,2}[ \t]*(?:#[^\n]*)?|(?:#[^\n]*)?(?=\r?\n(?(j)%s)(?P=i)(?(d)[ \t]{2})[ \t]+"
                              r"(?!-[ \t\r\n]|[#{\[]|[^\s:#][^\n:#]*:(?:[ \t]|\r?$))\S))\r?%s"
                              r"(?:\n(?(j)%s)(?:(?P=i)(?(d)[ \t]{2})[ \t]+[^\n]*|[ \t\r]*%s))*"
                              % (_JOURNAL, _JOURNAL, _EOL, _JOURNAL, _EOL), re.M), _block, True),
    ("url", re.compile(r"://(?<=[a-z0-9+.-]://)(?P<u>[^:/?#@\s\"'<>\\]{0,256}):(?!%s@)[^/?#\s\"'<>\\]{1,256}@" % MARK.lower()),
     lambda f: "://%s:%s@" % (f.group("u"), MARK), True),
    ("bearer", re.compile(r"authorization(?:\\?[\"'])?[ \t]*[:=][ \t]*\[?(?:\\?[\"'])?(?!(?:(?:%s)[ \t]+)?%s\b)"
                          r"(?:(?:%s)[ \t]+)?(?![{\[])(?P<v>[^\s\"',;\\\]]+)"
                          % (_words(_AUTH_SCHEMES), MARK.lower(), _words(_AUTH_SCHEMES))), _kept_value, True),
    ("kubeconfig", re.compile(r"%s(?P<q>\\?[\"'])?[ \t]*:[ \t]*%s%s(?![{\[])(?P<v>%s|%s|(?(q)%s|%s))"
                              % (_KEY, _DONE, _SWITCH, _DQ, _SQ, _IN_FLOW, _TO_EOL)), _kept_value, True),
    ("option", re.compile(r"(?:%s|-(?<![\w-]-)-?(?:[a-z0-9]{1,32}-){0,3}(?:%s)(?:=|[ \t]+))%s"
                          r"(?P<v>%s|%s|[^\s\"']+)" % (_words(_ENV_WORDS, "[a-z0-9_]{0,64}="), _words(_OPTION_WORDS), _DONE, _DQ, _SQ)),
     _kept_value, True),
    ("option", re.compile(r"(?P<k>-(?<![\w-]-)(?:-user|u)(?:=|[ \t]+)[\"']?)(?![0-9]{1,10}:[0-9]{1,10}(?![^\s\"']))"
                          r"(?P<u>[^\s:\"'/@]{1,256}):%s[^\s\"']+" % _DONE), _user, True),
    ("option", re.compile(r"using certificate key:[ \t]*\r?\n(?:[^\n]{0,200}?[ \t])?(?P<v>[0-9a-f]{64})(?![0-9a-f])"),
     _kept_value, True),
    ("setting", re.compile(r"%s(?:\\?[\"'])?[ \t]*=[ \t]*%s%s(?![{\[])(?P<v>(?s:\"\"\".*?(?:\"\"\"|\Z))|(?s:'''.*?(?:'''|\Z))|%s|%s|%s)"
                           % (_KEY, _DONE, _SWITCH, _DQ, _SQ, _TO_EOL)), _setting, True),
    ("bootstrap-token", re.compile(r"\b[a-z0-9]{6}\.[a-z0-9]{16}\b"), lambda f: MARK, False),
    ("jwt", re.compile(r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), lambda f: MARK, False),
)


def redact(text):
    """``(text without its secrets, {kind: how many were replaced})``."""
    counts = {}
    low = _lowered(text)
    for kind, pattern, replace, lowered in PATTERNS:
        parts, last, n = [], 0, 0
        for match in pattern.finditer(low if lowered else text):
            new = replace(_Found(match, text))
            if new is None:
                continue
            parts.append(text[last:match.start()])
            parts.append(new)
            last = match.end()
            n += 1
        if n:
            parts.append(text[last:])
            text = "".join(parts)
            low = _lowered(text)
            counts[kind] = counts.get(kind, 0) + n
    return text, counts


def merge_counts(total, counts):
    """Add ``counts`` into ``total`` (both ``{kind: n}``); returns ``total``."""
    for kind, n in counts.items():
        total[kind] = total.get(kind, 0) + n
    return total
