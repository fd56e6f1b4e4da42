# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the cloud-init user data of OpenStack servers.

Only immutable host configuration may go to cloud-init (users, packages, sysctls), each value
only in the shape of what it is: :func:`check_user_data` is that allow-list,
:func:`render_user_data` writes the cloud-config.
"""

from __future__ import annotations

import re

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import must_be

USER_DATA_KEYS = ("users", "packages", "sysctls")
# User data is an allow-list: each value has the shape of what it is (a package name, a number, an SSH public
# key line, ...), on one line, so a key, certificate, token or extra cloud-config line has nowhere to go.
_ONE_LINE = r"[\x20-\x7e]"
_USER_DATA_VALUES = {
    "package": re.compile(r"^[a-z0-9][a-z0-9+.-]{0,99}(=[A-Za-z0-9.+~:-]{1,100})?$"),
    "sysctl name": re.compile(r"^[a-z0-9_]+([./][A-Za-z0-9_-]+){1,10}$"),
    "user name": re.compile(r"^[a-z_][a-z0-9_-]{0,31}$"),
    "path": re.compile(r"^(/[A-Za-z0-9._-]+){1,16}$"),
    "sudo rule": re.compile(r"^[A-Za-z0-9_=(),:!/ .-]{1,200}$"),
    "comment": re.compile(r"^[A-Za-z0-9 ,._'-]{0,100}$"),
    "SSH public key line": re.compile(r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com"
                                      r"|sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]{16,16384}={0,3}"
                                      r"( %s{1,200})?$" % _ONE_LINE),
}
_SYSCTL_VALUE = re.compile(r"^-?[0-9]{1,20}( -?[0-9]{1,20}){0,3}$")
# Per user, the cloud-config keys allowed and the shape of their values (never a password or hash).
_USER_KEYS = {"name": "user name", "groups": "user name", "primary_group": "user name", "shell": "path",
              "homedir": "path", "sudo": "sudo rule", "gecos": "comment", "ssh_authorized_keys": "SSH public key line",
              "lock_passwd": bool, "system": bool, "no_create_home": bool}


def _value(value, kind, field, problems):
    """Whether ``value`` has the shape of a ``kind`` (one of _USER_DATA_VALUES, or bool); else a problem."""
    if kind is bool:
        ok = isinstance(value, bool)
        shape = "true or false"
    else:
        ok = isinstance(value, str) and bool(_USER_DATA_VALUES[kind].fullmatch(value))
        shape = "a %s" % kind
    if not ok:
        if kind == "SSH public key line":
            problems.append("%s: not an SSH public key line (TYPE BASE64 [COMMENT])" % field)
        else:
            problems.append("%s: %s is not %s" % (field, excerpt(value), shape))
    return ok


def check_user_data(data, problems):
    """Only immutable host configuration may go to cloud-init - users, packages, sysctls - and each value only in
    the shape of what it is (an allow-list): certificates, keys, tokens and passwords go over SSH later."""
    data = dict(data)
    for key in sorted(data, key=str):
        if key not in USER_DATA_KEYS:
            problems.append("user_data.%s: not allowed; user data carries only %s (secrets, "
                            "certificates and tokens go over SSH later)"
                            % (key, ", ".join(USER_DATA_KEYS)))
    for key in ("users", "packages"):
        if data.get(key) is not None and not isinstance(data[key], list):
            problems.append("user_data.%s: %s" % (key, must_be("a list", data[key])))
            data[key] = []
    for i, name in enumerate(data.get("packages") or []):
        _value(name, "package", "user_data.packages[%d]" % i, problems)
    for i, user in enumerate(data.get("users") or []):
        where = "user_data.users[%d]" % i
        if not isinstance(user, dict) or "name" not in user:
            problems.append("%s: a mapping with at least name (and %s)" % (where, ", ".join(sorted(_USER_KEYS))))
            continue
        for key in sorted(user, key=str):
            kind = _USER_KEYS.get(key)
            if kind is None:
                problems.append("%s.%s: not allowed; a user takes only %s (no password: keys over SSH)"
                                % (where, key, ", ".join(sorted(_USER_KEYS))))
            elif isinstance(user[key], list) and key in ("groups", "ssh_authorized_keys"):
                for j, item in enumerate(user[key]):
                    _value(item, kind, "%s.%s[%d]" % (where, key, j), problems)
            else:
                _value(user[key], kind, "%s.%s" % (where, key), problems)
    sysctls = data.get("sysctls")
    if sysctls is not None and not isinstance(sysctls, dict):
        problems.append("user_data.sysctls: %s" % must_be("a mapping of name to number", sysctls))
        sysctls = data["sysctls"] = {}
    for name, value in sorted((sysctls or {}).items(), key=lambda kv: str(kv[0])):
        if not isinstance(name, str) or not _USER_DATA_VALUES["sysctl name"].fullmatch(name):
            problems.append("user_data.sysctls: %s is not a sysctl name" % excerpt(name))
        elif isinstance(value, bool) or not _SYSCTL_VALUE.fullmatch(str(value)):
            problems.append("user_data.sysctls.%s: %s is not a number (or up to 4, space-separated); other values "
                            "go to the hosts over SSH" % (name, excerpt(value)))
    return {k: data.get(k) or ([] if k != "sysctls" else {}) for k in USER_DATA_KEYS}


def render_user_data(user_data):
    """cloud-config text (YAML is JSON's superset; JSON keeps this free of YAML emitters)."""
    import json
    doc = {}
    if user_data.get("users"):
        doc["users"] = ["default"] + list(user_data["users"])
    if user_data.get("packages"):
        doc["packages"] = list(user_data["packages"])
    if user_data.get("sysctls"):
        lines = "".join("%s = %s\n" % (k, user_data["sysctls"][k])
                        for k in sorted(user_data["sysctls"]))
        doc["write_files"] = [{"path": "/etc/sysctl.d/60-mooring.conf",
                               "permissions": "0644", "content": lines}]
        doc["runcmd"] = [["sysctl", "--system"]]
    return "#cloud-config\n" + json.dumps(doc, indent=2, sort_keys=True) + "\n"
