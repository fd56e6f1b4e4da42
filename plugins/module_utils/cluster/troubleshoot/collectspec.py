# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the values of a host collector's spec (troubleshoot's fields), read as
troubleshoot reads them; a value that does not fit is :class:`hostio.CollectError` naming the field.
Standard library only (runs on the host)."""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts.hostio import CollectError
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import hostconditions
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import excerpt
from ansible_collections.mooring.cluster.plugins.module_utils.common.shape import must_be


def spec_text(spec, key, default=None, required=False):
    """``spec[key]`` as text (a string or a number); ``default`` when unset or empty, unless ``required``."""
    value = spec.get(key, default)
    if value is None or value == "":
        if required:
            raise CollectError("%s is required" % key)
        return default
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise CollectError("%s: %s" % (key, must_be("a string", value)))
    return str(value)


def spec_int(spec, key, default=None, low=0, high=None):
    """``spec[key]`` as a decimal integer from ``low`` to ``high``; unset or empty is an error."""
    value = spec.get(key, default)
    if value is None or value == "":
        raise CollectError("%s is required" % key)
    try:
        number = int(str(value), 10)
    except ValueError:
        raise CollectError("%s: %s" % (key, must_be("an integer", value))) from None
    if number < low or (high is not None and number > high):
        raise CollectError("%s: %s" % (key, must_be("between %d and %s" % (low, high if high is not None else "any"), number)))
    return number


def spec_seconds(spec, key, default):
    """Seconds of a Go duration (``5s``, ``500ms``, ``2m``); ``default`` when unset."""
    value = spec.get(key)
    if value in (None, ""):
        return default
    try:
        seconds = hostconditions.duration_ns(str(value).strip()) / 1e9
    except hostconditions.ConditionError:
        raise CollectError("%s %s is not a duration (e.g. 10s, 500ms, 2m)" % (key, excerpt(value))) from None
    if seconds <= 0:
        raise CollectError("%s: %s" % (key, must_be("more than 0", value)))
    return seconds


def dial_address(text):
    """(host, port) of ``host:port`` as troubleshoot accepts a dial address (lower-case IPv4 or DNS name); else None."""
    host, sep, port = str(text).partition(":")
    if not sep or ":" in port or not port.isdigit() or not 0 < int(port) < 65536 or host != host.lower():
        return None
    if re.match(r"^[0-9.]+$", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return None
    elif not re.match(r"^[a-z0-9]([-a-z0-9_.]{0,251}[a-z0-9])?$", host):
        return None
    return host, int(port)
