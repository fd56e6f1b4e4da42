# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets taken out of text: each kind, what must stay, and that a redacted text is left as it is."""

from __future__ import annotations

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.common.redact import MARK, merge_counts, redact

KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oBvGGaTdjaXloAoGCCqGSM49\n-----END EC PRIVATE KEY-----"
JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlLXBhcnQ"


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


@pytest.mark.parametrize("text", [
    "etcd --peer-key-file=/etc/kubernetes/pki/etcd/peer.key --client-cert-auth=true",
    "token expired for request; retrying",
    "--discovery-token-ca-cert-hash sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
    "version 3.5.21 at 10.89.3.11:2379",
])
def test_what_is_no_secret_stays(text):
    assert redact(text) == (text, {})


def test_redacting_twice_changes_nothing_more():
    once, counts = redact("password: hunter2\n%s\n--token=abc" % KEY)
    assert counts and redact(once) == (once, {})


def test_counts_add_up():
    assert merge_counts({"jwt": 1}, {"jwt": 2, "option": 1}) == {"jwt": 3, "option": 1}
