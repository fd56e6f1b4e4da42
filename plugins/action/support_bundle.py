# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.support_bundle: the archive assembled and written on the controller.

Every host's registered result goes through supportbundle.host_part and is checked there; every text taken from
the controller (the lock, the run reports) goes through supportbundle.assemble, which redacts it before it
reaches the archive, the index or this task's result."""

from __future__ import annotations

import glob
import os
import socket
import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.support import supportbundle
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.support.support import read_text
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction

MAX_CONTROLLER_FILE = 4 * 1024 * 1024


def controller_files(lock, reports_dir):
    """``{name: text}``: the lock and the newest run reports, each read with a size bound."""
    files = {}
    if lock:
        text = read_text(os.path.abspath(lock), MAX_CONTROLLER_FILE)
        if text is None:
            raise OSError("lock %s: no such file" % lock)
        files["lock/" + os.path.basename(lock)] = text
    if reports_dir and os.path.isdir(reports_dir):
        for path in sorted(glob.glob(os.path.join(reports_dir, "mooring-report-*-latest.*"))):
            text = read_text(path, MAX_CONTROLLER_FILE)
            if text is not None:
                files["reports/" + os.path.basename(path)] = text
    return files


def make_bundle(results, lock, reports_dir, dest, now, controller, expiry_days=30, disk_pct=80, max_clock_offset=2.0):
    """The support bundle from every host's registered ``support_collect`` result (``{host: result}``) and the
    controller's lock and reports, written to ``dest`` (a file, or a directory it goes into); the task's result."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    if os.path.isdir(dest):
        dest = os.path.join(dest, "mooring-support-%s.tar.gz" % stamp)
    hosts = {name: supportbundle.host_part(result) for name, result in results.items()}
    entries, found, redacted = supportbundle.assemble(
        hosts, controller_files(lock, reports_dir), {"now": now, "controller": controller}, expiry_days, disk_pct,
        max_clock_offset)
    size = supportbundle.write_archive(dest, "mooring-support-%s" % stamp, entries, now)
    return {"changed": True, "path": dest, "size": size, "redacted": redacted,
            "findings": [{"severity": s, "host": h, "text": t} for s, h, t in found],
            "finding_lines": ["%s %s: %s" % (s.upper(), h, t) for s, h, t in found],
            "index_lines": entries["index.md"].splitlines()}


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        return make_bundle(args["hosts"], args["lock"], args["reports_dir"], args["dest"], time.time(),
                           socket.gethostname(), args["expiry_days"], args["disk_pct"], args["max_clock_offset"])
