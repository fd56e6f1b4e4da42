# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: troubleshoot.sh's host collectors, run on the host.

:func:`collect` runs the collectors of a HostPreflight plan (:func:`hostpreflight.load`) on this host and
returns what troubleshoot's collectors would have written: a mapping of troubleshoot's result paths
(:func:`hostpreflight.result_path`) to their content (parsed JSON, or text), for
:func:`hostanalyze.analyze_all` to judge on the controller.

The collectors live by concept: :mod:`collectsystem` (cpu, memory, disks, OS, services, time, kernel
modules, sysctl, cgroups), :mod:`collectnetwork` (ports, connections, load balancer, http, subnets,
interfaces, dns) and :mod:`collectrun` (run, certificate); they reach the host through :mod:`hostio` and
read their spec's values through :mod:`collectspec`.

Host side: Python 3 standard library only. Every file read is below ``root`` (``/proc``, ``/sys``,
``/etc``, ``/lib/modules`` and the paths a spec names), every program goes through ``run``, so tests feed
a fake tree and fake programs. Everything is bounded: file reads (4 MiB), command output and HTTP bodies
(1 MiB), and every command and network operation has a timeout.

``errors`` lists what could not be measured, one line per collector ("<type> <name>: why"). A measured
outcome (a port in use, a refused connection, a key that does not match) is the result itself, as
troubleshoot writes it, not an error. Where troubleshoot writes a status file even when it fails
(tcpPortStatus, udpPortStatus, tcpConnect, tcpLoadBalancer, certificate), so does this.

Where mooring measures differently from troubleshoot (documented at each collector):

* filesystemPerformance is measured by mooring's own writer, not fio (hosts do not have fio); the
  background IOPS load is not generated;
* certificate compares the key pair with ``openssl`` (no Python crypto on the host);
* dns asks the system resolver (``getaddrinfo``) once per name instead of every nameserver for every
  search-list candidate;
* hostOS reads ``/etc/os-release`` (platformVersion is VERSION_ID);
* sysctl reads ``/proc/sys`` instead of running ``sysctl -a``;
* ipv4Interfaces and the interface addresses of tcpPortStatus/udpPortStatus come from ``ip -j -4 addr``;
* cgroups reads the file system type from ``/proc/self/mountinfo`` and decides the v2 ``devices``
  controller from the kernel configuration instead of attaching an eBPF program.
"""

from __future__ import annotations

import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts.hostio import CollectError, Host, run_bounded
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.troubleshoot import collectnetwork, collectrun, collectsystem, hostpreflight

_COLLECTORS = dict(collectsystem.COLLECTORS, **collectnetwork.COLLECTORS, **collectrun.COLLECTORS)


def _label(kind, spec):
    name = spec.get("collectorName") or (hostpreflight.COLLECTORS.get(kind) or (None, None))[1]
    return "%s %s" % (kind, name) if name else kind


def collect(collectors, root="/", run=None, now=time.time):
    """Run ``collectors`` (the plan's ``[(type, spec)]``) on this host, in order: ``{"collected": {result
    path: content}, "errors": ["<type> <name>: why"]}``.

    ``run(argv, timeout=None, env=None, cwd=None) -> (rc, stdout, stderr)`` runs a program; the default is
    :func:`run_bounded` (30 s, output capped; a replacement gets ``timeout``/``env``/``cwd`` only from the
    run collector). ``root`` prefixes every path read; ``now`` is the clock deadlines are kept with."""
    host = Host(root, run or run_bounded, now)
    collected, errors = {}, []
    for kind, spec in collectors:
        spec = spec or {}
        label = _label(kind, spec)
        collector = _COLLECTORS.get(kind)
        if collector is None:
            errors.append("%s: not a host collector mooring.cluster runs" % label)
            continue
        try:
            collected.update(collector(host, spec, hostpreflight.result_path(kind, spec)))
        except CollectError as exc:
            collected.update(exc.files)
            errors.append("%s: %s" % (label, exc))
        except (OSError, ValueError, ArithmeticError) as exc:  # a value past a range (1e999) is the collector's error
            errors.append("%s: %s" % (label, exc))
    return {"collected": collected, "errors": errors}
