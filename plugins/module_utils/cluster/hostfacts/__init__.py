# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: how the host-side code reads a host.

Bounded file reads and programs, the interfaces' addresses (hostio) and the disks' free space and write
latency (hostdisk). Standard library only: every host module may import it. Nothing here decides whether a
host is fit; preflight and the troubleshoot engine do.
"""
