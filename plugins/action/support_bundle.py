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

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.support import clusterstate, supportbundle
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.support.support import read_text
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction

MAX_CONTROLLER_FILE = 4 * 1024 * 1024
API_TIMEOUT = (10, 30)  # seconds: to connect, then for each answer


def api_reader(kubeconfig):
    """``read(path) -> text`` of the API server through ``kubeconfig`` (the kubernetes client kubernetes.core uses),
    each answer judged by clusterstate.answer (bounded, a failed ``/readyz`` or ``/livez`` kept with its checks)."""
    from kubernetes import config  # pylint: disable=import-outside-toplevel  # only when a kubeconfig is given
    from kubernetes.client.exceptions import ApiException  # pylint: disable=import-outside-toplevel

    api = config.new_client_from_config(config_file=kubeconfig)

    def read(path):
        try:
            reply = api.call_api(path, "GET", auth_settings=["BearerToken"], _preload_content=False,
                                 _request_timeout=API_TIMEOUT, _return_http_data_only=True)
        except ApiException as exc:
            body = exc.body.decode("utf-8", "replace") if isinstance(exc.body, bytes) else str(exc.body or "")
            return clusterstate.answer(path, body[:clusterstate.MAX_READ], "HTTP %s %s" % (exc.status, exc.reason))
        try:
            data = reply.read(clusterstate.MAX_READ + 1)
        finally:
            reply.release_conn()
        return clusterstate.answer(path, data.decode("utf-8", "replace"))
    return read


def controller_cluster(kubeconfig):
    """``{files, source, findings, error}``: the cluster as the API server answers the controller's ``kubeconfig``; no files
    when it is not given, absent or does not answer (the playbook's control-plane host read it too)."""
    if not kubeconfig:
        return {"files": {}, "error": "none given"}
    if not os.path.isfile(kubeconfig):
        return {"files": {}, "error": "%s: no such file" % kubeconfig}
    try:
        files, findings, errors = clusterstate.read_cluster(api_reader(kubeconfig))
    except Exception as exc:  # pylint: disable=broad-except  # the client's own error, named in the index
        return {"files": {}, "error": "%s: %s" % (kubeconfig, " ".join(str(exc).split())[:300])}
    if len(errors) == len(clusterstate.READS):
        return {"files": {}, "error": "%s: %s" % (kubeconfig, errors[0])}
    if errors:
        files["cluster/errors.txt"] = "\n".join(errors) + "\n"
    return {"files": files, "source": "the controller's kubeconfig %s" % kubeconfig, "findings": findings}


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


def make_bundle(results, lock, reports_dir, dest, now, controller, expiry_days=30, disk_pct=80, max_clock_offset=2.0,
                kubeconfig=None):
    """The support bundle from every host's registered ``support_collect`` result (``{host: result}``), the
    controller's lock and reports and the cluster as the API server answers ``kubeconfig``, written to ``dest`` (a
    file, or a directory it goes into); the task's result."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    if os.path.isdir(dest):
        dest = os.path.join(dest, "mooring-support-%s.tar.gz" % stamp)
    hosts = {name: supportbundle.host_part(result) for name, result in results.items()}
    entries, found, redacted = supportbundle.assemble(
        hosts, controller_files(lock, reports_dir), {"now": now, "controller": controller}, expiry_days, disk_pct,
        max_clock_offset, controller_cluster(kubeconfig))
    size = supportbundle.write_archive(dest, "mooring-support-%s" % stamp, entries, now)
    return {"changed": True, "path": dest, "size": size, "redacted": redacted,
            "findings": [{"severity": s, "host": h, "text": t} for s, h, t in found],
            "finding_lines": ["%s %s: %s" % (s.upper(), h, t) for s, h, t in found],
            "index_lines": entries["index.md"].splitlines()}


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        return make_bundle(args["hosts"], args["lock"], args["reports_dir"], args["dest"], time.time(),
                           socket.gethostname(), args["expiry_days"], args["disk_pct"], args["max_clock_offset"],
                           args["kubeconfig"])
