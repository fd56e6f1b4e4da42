# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: a host's clock against the controller's (NTP's estimate from one exchange)."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflight import result


def clock_offset(sent, received, replied, back):
    """A host clock's offset from the controller's, as NTP estimates it from one exchange: the controller
    sent at ``sent`` and got the answer at ``back`` (its clock), the host received at ``received`` and
    replied at ``replied`` (its clock). ``{offset, error}`` in seconds; the true offset lies within
    offset +- error (half the round trip less the host's own time)."""
    delay = max(0.0, (back - sent) - (replied - received))
    return {"offset": round(((received - sent) + (replied - back)) / 2.0, 3), "error": round(delay / 2.0, 3)}


def judge_clock(clock, limit):
    """A host's clock offset from the controller (:func:`clock_offset`) against ``limit`` seconds."""
    offset, error = clock["offset"], clock["error"]
    where = "%.2f s %s the controller's (+-%.2f s)" % (abs(offset), "ahead of" if offset > 0 else "behind", error)
    if abs(offset) - error > limit:
        return result("clock", "fail", "clock %s; more than %g s apart: certificates made on the controller are "
                      "not yet valid (or expire early) here and etcd reports clock drift; synchronise the hosts and "
                      "the controller (chrony or systemd-timesyncd against one time source)" % (where, limit))
    if abs(offset) + error > limit:
        return result("clock", "warn", "clock %s; cannot tell whether it is within %g s (slow round trip)"
                      % (where, limit))
    return result("clock", "pass", "clock %s" % where)
