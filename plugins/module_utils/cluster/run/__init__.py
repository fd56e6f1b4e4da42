# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: what a run takes from the lock, decided once on the controller (values:
lock_values), for the playbooks to pass to the roles as plain data.
"""
