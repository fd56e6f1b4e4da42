# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.cluster_lease: the cluster lease, taken and kept on the controller.

The holder names the run: who and where, and the controller's ansible-playbook process (its pid and
start time; this plugin runs in a worker forked from it). Every task of one run therefore has the same
holder and re-enters the lease; any other run - even with the same user, host and holder option - waits
and is refused. A newly taken lease gets a keeper: a small detached process that keeps the lease alive
while that ansible-playbook process lives and gives the lease back as soon as it is gone (success without
a release task, failure, Ctrl-C, kill -9). Only when the whole controller dies does the lease's TTL decide.

The keeper records its state in a status file of the run on the controller (``keeping``, or why it stopped),
beside the run's fencing token (the lease id and the key's create revision). ``state: held`` - the check a
roll makes before each host - reads that file and etcd, and fails the task when the lease is no longer the
run's (:func:`check_held` decides).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import socket
import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdhttp import GatewayClient
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdlease import (
    LeaseHeldError,
    acquire_lease,
    check_held,
    keeper_main,
    keeper_status_path,
    process_started,
    prune_keeper_status,
    query_lease,
    read_keeper_status,
    release_lease,
    require_watchable_run,
    run_holder,
    write_keeper_status,
)
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


def start_keeper(args):
    """Start the keeper: a grandchild of this worker in its own session, with no inherited descriptors (so
    nothing waits for it), running :func:`keeper_main` from the code already loaded here."""
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    # A detached process has nowhere to report to: whatever happens, it ends with os._exit (never
    # returning into this worker's code).
    with contextlib.suppress(BaseException):
        os.setsid()
        if os.fork():
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        keeper_main(args)
    os._exit(0)


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        check_mode = self.check_mode
        run_pid = os.getppid()  # the ansible-playbook process: workers are forked from it
        run_started = process_started(run_pid)
        where = socket.gethostname()
        who = pwd.getpwuid(os.getuid()).pw_name
        if args["per_run"]:
            holder = run_holder(who, where, run_pid, run_started, label=args["holder"])
        else:
            holder = args["holder"] or "%s@%s" % (who, where)
        status_path = keeper_status_path(args["name"], holder)
        try:
            if args["state"] == "acquired" and args["keep_alive"]:
                require_watchable_run(args["name"], run_pid, run_started)
            client = GatewayClient(args["endpoints"], args["cacert"], args["cert"], args["key"])
            if args["state"] == "query":
                out = query_lease(client, args["name"], prefix=args["prefix"])
            elif args["state"] == "held":
                out = check_held(client, args["name"], holder, read_keeper_status(status_path), prefix=args["prefix"],
                                 check_mode=check_mode)
            elif args["state"] == "released":
                out = release_lease(client, args["name"], holder, force=args["force"], confirm=args["confirm"],
                                    prefix=args["prefix"], check_mode=check_mode)
            else:
                out = acquire_lease(client, args["name"], holder, ttl=args["ttl"], timeout=args["timeout"],
                                    poll=args["poll"], prefix=args["prefix"], check_mode=check_mode)
                if out["changed"] and not check_mode:
                    prune_keeper_status(os.path.dirname(status_path))  # runs that ended a week ago or more
                    token = {k: out[k] for k in ("holder", "lease", "create_revision", "mod_revision")}
                    # Written before the keeper starts: a held check right after this task finds the token.
                    write_keeper_status(status_path, dict(token, state="keeping" if args["keep_alive"] else "no keeper",
                                                          ttl=args["ttl"], last_keepalive=time.time()))
                    if args["keep_alive"]:
                        start_keeper(dict(token, endpoints=args["endpoints"], cacert=args["cacert"], cert=args["cert"],
                                          key=args["key"], name=args["name"], ttl=args["ttl"], prefix=args["prefix"],
                                          pid=run_pid, started=run_started, status=status_path))
        except LeaseHeldError as exc:
            # A failure that also names the holder (as a result field, for a playbook to show or break it).
            return {"failed": True, "msg": str(exc), "holder": exc.holder}
        out["run_holder"] = holder
        if args["state"] in ("acquired", "held"):
            out["keeper_status"] = status_path
        return out
