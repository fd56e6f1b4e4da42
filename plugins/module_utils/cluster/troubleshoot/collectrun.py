# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: troubleshoot's host collectors that run programs on the host - run (a
command, its output and its info) and certificate (a key pair compared with ``openssl``; no Python
crypto on the host) (:data:`COLLECTORS`). Standard library only.
"""

from __future__ import annotations

import os
import re
import tempfile

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts.hostio import MAX_OUTPUT, RUN_TIMEOUT, CollectError
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot.collectspec import spec_seconds, spec_text
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt


def _run(host, spec, path):
    """run: ``command`` with ``args`` directly (no shell) in a fresh temporary directory, the environment of
    this process (or only PATH, KUBECONFIG, PWD with ``ignoreParentEnvs``, plus ``inheritEnvs``) and then
    ``env`` (K=V), killed after ``timeout`` (default 30s). stdout (at most 1 MiB) is the result; beside it
    ``<name>-info.json`` {command, exitCode (a string; -1 on timeout), error (stderr when it failed), env}.
    ``input`` and ``outputDir`` are not supported."""
    command = spec_text(spec, "command", required=True)
    args = spec.get("args") or []
    env_list = spec.get("env") or []
    if not isinstance(args, list) or not isinstance(env_list, list):
        raise CollectError("args and env must be lists")
    for unsupported in ("input", "outputDir"):
        if spec.get(unsupported):
            raise CollectError("%s is not supported by mooring.cluster; not run" % unsupported)
    timeout = spec_seconds(spec, "timeout", RUN_TIMEOUT)
    env = _run_env(spec, env_list)
    argv = [command] + [str(a) for a in args]
    with tempfile.TemporaryDirectory(prefix="mooring-run-") as workdir:
        rc, out, err = host.run(argv, timeout=timeout, env=env, cwd=workdir)
    info = {"command": " ".join(argv), "exitCode": str(rc), "error": err if rc != 0 else "",
            "outputDir": "", "input": "", "env": [str(e) for e in env_list]}
    return {path: out[:MAX_OUTPUT], path[:-len(".txt")] + "-info.json": info}


def _run_env(spec, env_list):
    if spec.get("ignoreParentEnvs") or spec.get("inheritEnvs"):
        names = ["PATH", "KUBECONFIG", "PWD"] + ([] if spec.get("ignoreParentEnvs") else list(spec.get("inheritEnvs") or []))
        missing = [n for n in names[3:] if n not in os.environ]
        if missing:
            raise CollectError("inheritEnvs: %s not set in the environment" % ", ".join(missing))
        env = {n: os.environ[n] for n in names if n in os.environ}
    else:
        env = dict(os.environ)
    for item in env_list:
        name, sep, value = str(item).partition("=")
        if not sep or not name or not value or "=" in value:
            raise CollectError("env entry %s must be NAME=VALUE" % excerpt(item))
        env[name] = value
    return env


_PEM = re.compile(r"^-----BEGIN ([A-Z0-9 ]+)-----$", re.M)


def _is_key(block_type):
    return block_type == "PRIVATE KEY" or block_type.endswith(" PRIVATE KEY")


def _key_pair(host, cert_path, key_path):
    """(status, why) of troubleshoot's certificate check, from the PEM blocks and openssl."""
    try:
        cert, key = host.read(cert_path), host.read(key_path)
    except FileNotFoundError as exc:
        return "key-pair-missing", "no such file: %s" % exc.filename
    except (OSError, CollectError) as exc:
        return "key-pair-invalid", str(exc)
    cert_types, key_types = _PEM.findall(cert), _PEM.findall(key)
    if "CERTIFICATE" not in cert_types:
        if any(map(_is_key, cert_types)):
            return "key-pair-switched", "%s holds a private key and no certificate: the two paths look switched" % cert_path
        return "key-pair-invalid", "no CERTIFICATE PEM block in %s" % cert_path
    if not any(map(_is_key, key_types)):
        if "CERTIFICATE" in key_types:
            return "key-pair-switched", "%s holds a certificate rather than a private key: the two paths look switched" % key_path
        return "key-pair-invalid", "no PRIVATE KEY PEM block in %s" % key_path
    if "ENCRYPTED" in key:
        return "key-pair-encrypted", "the private key in %s is encrypted" % key_path
    try:
        rc_cert, pub_cert, err_cert = host.run(["openssl", "x509", "-noout", "-pubkey", "-in", host.path(cert_path)])
        rc_key, pub_key, err_key = host.run(["openssl", "pkey", "-pubout", "-passin", "pass:", "-in", host.path(key_path)])
    except OSError as exc:
        return "key-pair-invalid", "openssl is needed to compare the key pair and cannot run (%s): install openssl" % exc
    if 127 in (rc_cert, rc_key):
        return "key-pair-invalid", "openssl is needed to compare the key pair and is not installed: install openssl"
    if rc_cert != 0:
        return "key-pair-invalid", "the certificate in %s does not parse: %s" % (cert_path, err_cert.strip()[:200])
    if rc_key != 0:
        return "key-pair-invalid", "the private key in %s does not parse: %s" % (key_path, err_key.strip()[:200])
    if pub_cert.strip() != pub_key.strip() or "PUBLIC KEY" not in pub_cert:
        return "key-pair-mismatch", "the private key in %s does not match the certificate's public key" % key_path
    return "key-pair-valid", ""


def _certificate(host, spec, path):
    """certificate: the bare status string; every status but key-pair-valid also gives its reason in errors."""
    cert_path = spec_text(spec, "certificatePath") or spec_text(spec, "certificatepath", required=True)
    status, why = _key_pair(host, cert_path, spec_text(spec, "keyPath", required=True))
    if status != "key-pair-valid":
        raise CollectError("%s: %s" % (status, why), {path: status})
    return {path: status}


COLLECTORS = {"run": _run, "certificate": _certificate}
