# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the support bundle: what it takes from one host, read-only and redacted
there (support), and the archive assembled on the controller (supportbundle).
"""
