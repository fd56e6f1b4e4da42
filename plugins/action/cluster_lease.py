# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.cluster_lease: the cluster lease, taken and kept on the controller.

The holder names the run: who and where, and the controller's ansible-playbook process (its pid and
start time; this plugin runs in a worker forked from it). Every task of one run therefore has the same
holder and re-enters the lease; any other run - even with the same user, host and holder option - waits
and is refused. A newly taken lease gets a keeper: a small detached process that keeps the lease alive
while that ansible-playbook process lives and gives the lease back as soon as it is gone (success without
a release task, failure, Ctrl-C, kill -9). Only when the whole controller dies does the lease's TTL decide.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import socket

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import (
    GatewayClient,
    LeaseHeldError,
    acquire_lease,
    keeper_main,
    process_started,
    query_lease,
    release_lease,
    run_holder,
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
        try:
            client = GatewayClient(args["endpoints"], args["cacert"], args["cert"], args["key"])
            if args["state"] == "query":
                out = query_lease(client, args["name"], prefix=args["prefix"])
            elif args["state"] == "released":
                out = release_lease(client, args["name"], holder, force=args["force"], confirm=args["confirm"],
                                    prefix=args["prefix"], check_mode=check_mode)
            else:
                out = acquire_lease(client, args["name"], holder, ttl=args["ttl"], timeout=args["timeout"],
                                    poll=args["poll"], prefix=args["prefix"], check_mode=check_mode)
                if out["changed"] and not check_mode and args["keep_alive"] and run_started is not None:
                    start_keeper({"endpoints": args["endpoints"], "cacert": args["cacert"], "cert": args["cert"],
                                  "key": args["key"], "name": args["name"], "holder": holder, "lease": out["lease"],
                                  "ttl": args["ttl"], "prefix": args["prefix"], "pid": run_pid,
                                  "started": run_started})
        except LeaseHeldError as exc:
            # A failure that also names the holder (as a result field, for a playbook to show or break it).
            return {"failed": True, "msg": str(exc), "holder": exc.holder}
        out["run_holder"] = holder
        return out
