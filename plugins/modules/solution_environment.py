# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: solution_environment
short_description: Render the Kubernetes objects of a solution environment change
version_added: 0.1.0
description:
  - Decides, on the controller, the Kubernetes objects to apply and to delete for one environment action,
    and the environment's resulting map of solution to version. It changes nothing itself (C(changed) is
    always false); apply RV(apply) and delete RV(delete) with M(kubernetes.core.k8s).
  - An environment is a namespace labelled C(solutions.mooring.io/environment=<environment>) with the
    annotation C(solutions.mooring.io/environment-description), holding the ConfigMap C(mooring-environment)
    whose data maps each solution it runs to its version.
  - Adding, upgrading or downgrading a solution renders its operator (the archive's C(operator/deploy)
    manifests) into the namespace, images renamed C(<image_prefix>/<name>-<version>/<image>:<tag>), cluster
    RBAC renamed C(solutions:<namespace>:<name>), plus a C(<name>-operator-config) ConfigMap holding an
    OperatorConfig that lists the images of every imported version. Two environments never share an object.
  - C(upgrade) must go to a newer version and C(downgrade) to an older one (SemVer precedence); the version
    must be imported. C(delete) refuses an environment that still runs solutions.
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
  environment:
    description: Environment name (DNS label).
    type: str
    required: true
  namespace:
    description: Namespace of the environment (defaults to O(environment)).
    type: str
  description:
    description: Human description, stored as an annotation on the namespace.
    type: str
    default: ''
  action:
    description: What to do.
    type: str
    required: true
    choices: [create, delete, add, upgrade, downgrade, remove]
  current:
    description: The environment's current map of solution to version (the data of its C(mooring-environment) ConfigMap).
    type: dict
    default: {}
  name:
    description: Solution name (all actions but create and delete).
    type: str
  version:
    description: Target version (add, upgrade, downgrade).
    type: str
  solution:
    description: Validated summary (the C(solution) result of M(mooring.cluster.solution_archive)) of the target version,
      or of the running version for O(action=remove).
    type: dict
  previous:
    description: Summary of the version being replaced (upgrade, downgrade), to delete objects it no longer has.
    type: dict
  config:
    description: Content of the SolutionsConfiguration (imported versions and their images).
    type: str
    default: ''
  image_prefix:
    description: Registry host (or local name) the images were imported under.
    type: str
    default: solutions.mooring.local
"""

EXAMPLES = r"""
- name: Objects for running example 2.0.0 in the staging environment
  mooring.cluster.solution_environment:
    environment: staging
    action: upgrade
    current: {example: 1.0.0}
    name: example
    version: 2.0.0
    solution: "{{ example_2_summary }}"
    previous: "{{ example_1_summary }}"
    config: "{{ solutions_config_text }}"
  register: change

- name: Apply them
  kubernetes.core.k8s:
    definition: "{{ item }}"
    state: present
  loop: "{{ change.apply }}"
"""

RETURN = r"""
apply:
  description: Objects to create or update, in order.
  returned: success
  type: list
  elements: dict
delete:
  description: Objects to delete.
  returned: success
  type: list
  elements: dict
solutions:
  description: The environment's map of solution to version after the change.
  returned: success
  type: dict
  sample: {example: 2.0.0}
"""
