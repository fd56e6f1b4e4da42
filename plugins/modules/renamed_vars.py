# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: renamed_vars
short_description: Take cluster-wide inputs given by their old names, with a deprecation warning
version_added: 0.3.0
description:
  - Runs on the controller; nothing is sent to the host. For each pair in O(names), when the host has the old
    variable and not the new one, sets the new one (a host fact) to the old one's value and warns, once per old
    name per run, that the old name goes away.
  - The collection's entry playbooks run it first (C(mooring.cluster.inputs)), skipped when no old name is
    set, so C(bundle_lock) and C(bundle_file) keep working until they are removed.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  names:
    description: Old name to new name.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Old input names still work
  mooring.cluster.renamed_vars:
    names: {bundle_lock: mooring_lock, bundle_file: mooring_bundle_file}
  when: bundle_lock is defined or bundle_file is defined
"""

RETURN = r"""
renamed:
  description: The old names taken for this host (old name to new name).
  returned: always
  type: dict
"""
