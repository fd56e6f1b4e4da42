# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: troubleshoot.sh's HostPreflight engine, as kURL users write it.

The documents read and checked (hostpreflight), the analyzers' conditions (hostconditions) and outcomes
(hostanalyze), and the host collectors run on the host (hostcollect, with the fields of a collector's spec
in collectspec and the collectors themselves in collectsystem, collectnetwork and collectrun). Everything a
user's document asks for is bounded: templates, regexes (linear time) and JSON.
"""
