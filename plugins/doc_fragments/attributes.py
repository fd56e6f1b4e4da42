# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The attributes of this collection's modules (community.general's style); modules set C(support) where a
fragment leaves it open, and may add C(details).

``mooring.cluster.attributes``: check_mode and diff_mode described (every module).
``mooring.cluster.attributes.read_only``: both attributes, complete, for a module that changes nothing.
``mooring.cluster.attributes.controller``: an action plugin that does all the work on the controller.
``mooring.cluster.attributes.flow``: an action plugin on the controller that runs the module on the host."""

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
"""

    READ_ONLY = r"""
options: {}
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same in check mode.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to show.
"""

    CONTROLLER = r"""
options: {}
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  async:
    description: Supports being used with the C(async) keyword.
    support: none
  bypass_host_loop:
    description: Forces a 'global' task that does not execute per host.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    platforms: all
    support: full
    details: runs on the controller only.
"""

    FLOW = r"""
options: {}
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  async:
    description: Supports being used with the C(async) keyword.
    support: none
  bypass_host_loop:
    description: Forces a 'global' task that does not execute per host.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    platforms: posix
    support: full
    details: the action plugin prepares the task on the controller, the module runs on the host.
"""
