# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.cluster_lock: the cluster lock, taken and kept on the controller.

The holder names the run: who and where, and the controller's ansible-playbook process (its pid and
start time; this plugin runs in a worker forked from it). Every task of one run therefore has the same
holder and re-enters the lock; any other run - even with the same user, host and holder option - waits
and is refused. A newly taken lock gets a keeper: a small detached process that keeps the lease alive
while that ansible-playbook process lives and gives the lock back as soon as it is gone (success without
a release task, failure, Ctrl-C, kill -9). Only when the whole controller dies does the lease's TTL decide.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import socket

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd import (
    LOCK_PREFIX,
    GatewayClient,
    LockHeldError,
    acquire_lock,
    keeper_main,
    process_started,
    query_lock,
    release_lock,
    run_holder,
)
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

ARGUMENT_SPEC = {
    "name": {"type": "str", "default": "cluster"},
    "holder": {"type": "str", "default": ""},
    "per_run": {"type": "bool", "default": True},
    "state": {"type": "str", "default": "acquired", "choices": ["acquired", "released", "query"]},
    "ttl": {"type": "int", "default": 60},
    "timeout": {"type": "int", "default": 0},
    "poll": {"type": "int", "default": 2},
    "force": {"type": "bool", "default": False},
    "confirm": {"type": "str"},
    "keep_alive": {"type": "bool", "default": True},
    "prefix": {"type": "str", "default": LOCK_PREFIX},
    "endpoints": {"type": "list", "elements": "str", "default": ["https://127.0.0.1:2379"]},
    "cacert": {"type": "path", "required": True},
    "cert": {"type": "path", "required": True},
    "key": {"type": "path", "required": True},
}


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


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        check_mode = bool(self._task.check_mode)
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
                out = query_lock(client, args["name"], prefix=args["prefix"])
            elif args["state"] == "released":
                out = release_lock(client, args["name"], holder, force=args["force"], confirm=args["confirm"],
                                   prefix=args["prefix"], check_mode=check_mode)
            else:
                out = acquire_lock(client, args["name"], holder, ttl=args["ttl"], timeout=args["timeout"],
                                   poll=args["poll"], prefix=args["prefix"], check_mode=check_mode)
                if out["changed"] and not check_mode and args["keep_alive"] and run_started is not None:
                    start_keeper({"endpoints": args["endpoints"], "cacert": args["cacert"], "cert": args["cert"],
                                  "key": args["key"], "name": args["name"], "holder": holder, "lease": out["lease"],
                                  "ttl": args["ttl"], "prefix": args["prefix"], "pid": run_pid,
                                  "started": run_started})
        except LockHeldError as exc:
            result.update(failed=True, msg=str(exc), holder=exc.holder)
            return result
        except MooringError as exc:
            raise AnsibleActionFail(str(exc)) from None
        result.update(out)
        result["run_holder"] = holder
        return result
