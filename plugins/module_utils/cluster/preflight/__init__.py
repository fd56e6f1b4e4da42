# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: mooring's built-in host preflight checks.

Three layers of plain data: the checks and their settings (preflight), the facts of one host read on the
host (preflightgather, with the clock exchange in preflightclock), the judgement of one host
(preflightjudge), then the cross-host decisions (preflightinventory) and the report (preflightreport).
troubleshoot.sh's HostPreflight documents are the other engine, in the troubleshoot package.
"""
