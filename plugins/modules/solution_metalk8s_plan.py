# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: solution_metalk8s_plan
short_description: Plan the imports and activations a MetalK8s SolutionsConfiguration asks for
version_added: 0.1.0
description:
  - Reads, on the controller, a MetalK8s SolutionsConfiguration (C(apiVersion solutions.metalk8s.scality.com/v1alpha1),
    C(kind SolutionsConfiguration), C(archives) a list of archive paths, absolute or relative to the document's
    directory, C(active) a map of solution name to a version or C(latest)) and the name and version each
    listed archive holds (from its C(manifest.yaml), without validating it).
  - Compared with the record of what is imported (O(current)), returns the archives that still need an import
    and the version of each solution to activate, C(latest) being the highest by SemVer precedence among the
    versions imported or about to be. It changes nothing itself (C(changed) is always false); import and
    activate with the C(solutions) role.
  - Refuses, one line per problem, a document that is not a SolutionsConfiguration (each wrong field named),
    an archive that cannot be read, two archives holding one version, and an active version no archive holds.
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
  path:
    description: The SolutionsConfiguration document on the controller.
    type: str
    required: true
  current:
    description: Content of mooring's record of imported archives and active versions (C(/etc/mooring/solutions.yaml)), empty when it does not exist.
    type: str
    default: ''
  sha256:
    description:
      - Read every archive whole to compare its SHA-256 with the recorded one, so that an archive rebuilt under the
        same name and version is imported again (and refused there). Without it, an archive is imported when no
        record has its name and version from the same path.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: What the SolutionsConfiguration asks for
  mooring.cluster.solution_metalk8s_plan:
    path: /srv/solutions/config.yaml
    current: "{{ solutions_config_text }}"
  register: plan

- name: Show it
  ansible.builtin.debug:
    msg: "import {{ plan.imports }}, then activate {{ plan.activate }}"
"""

RETURN = r"""
imports:
  description: Archives (absolute controller paths) to import, in the document's order.
  returned: success
  type: list
  elements: str
  sample: [/srv/solutions/example-2.0.0.iso]
activate:
  description: Versions to activate, per solution, where the active version changes.
  returned: success
  type: dict
  sample: {example: 2.0.0}
active:
  description: The active version of every solution the document names, C(latest) resolved.
  returned: success
  type: dict
  sample: {example: 2.0.0}
archives:
  description: Per archive path, the C(name) and C(version) it holds and its C(sha256) (null unless O(sha256)).
  returned: success
  type: dict
"""
