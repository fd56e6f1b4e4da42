# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: solution_config
short_description: Decide the next SolutionsConfiguration (imported archives, active versions)
version_added: 0.1.0
description:
  - Computes, on the controller, the SolutionsConfiguration (C(/etc/mooring/solutions.yaml) on the control
    plane) that results from importing, removing, activating or deactivating a solution version, starting from
    O(current). It changes nothing itself (C(changed) is always false); write RV(content) with
    M(ansible.builtin.copy), which reports the change, supports check mode and shows the diff.
  - Refuses, with a message saying what to do, to remove an active version, to activate a version that is
    not imported, or to import a different archive under a name and version already imported.
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
  current:
    description: Current content of the SolutionsConfiguration file (empty when it does not exist).
    type: str
    default: ''
  action:
    description: What to do; C(show) only parses O(current).
    type: str
    required: true
    choices: [import, remove, activate, deactivate, show]
  name:
    description: Solution name (required unless O(action=show)).
    type: str
  version:
    description: Solution version (required unless O(action=show) or O(action=deactivate)).
    type: str
  archive:
    description: The imported archive (O(action=import)).
    type: dict
    suboptions:
      path:
        description: Where the archive was imported from (controller path).
        type: str
        required: true
      sha256:
        description: SHA-256 of the archive.
        type: str
        required: true
      images:
        description: Its images, C(name:tag).
        type: list
        elements: str
        default: []
      trust:
        description: The anchor that trusted the archive (C(kind), C(detail)), recorded with it.
        type: dict
"""

EXAMPLES = r"""
- name: Next configuration after activating example 1.0.0
  mooring.cluster.solution_config:
    current: "{{ (current.content | b64decode) if current.content is defined else '' }}"
    action: activate
    name: example
    version: 1.0.0
  register: next_config

- name: Write it
  ansible.builtin.copy:
    content: "{{ next_config.content }}"
    dest: /etc/mooring/solutions.yaml
    mode: "0644"
"""

RETURN = r"""
config:
  description: The resulting SolutionsConfiguration.
  returned: success
  type: dict
  sample: {apiVersion: solutions.mooring.io/v1alpha1, kind: SolutionsConfiguration, active: {example: 1.0.0},
           archives: [{name: example, version: 1.0.0, path: /srv/example-1.0.0.iso, sha256: "ab12...", images: []}]}
content:
  description: RV(config) as YAML (keys sorted), to write to the file.
  returned: success
  type: str
imported:
  description: Imported versions of O(name), oldest first.
  returned: success
  type: list
  elements: str
available:
  description: Per imported version of O(name), its images (C(name), C(tag)).
  returned: success
  type: dict
active:
  description: Active version of O(name) (null when none).
  returned: success
  type: str
"""
