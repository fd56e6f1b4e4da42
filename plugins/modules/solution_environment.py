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
  - An environment MetalK8s made (O(flavour=metalk8s)) is labelled C(solutions.metalk8s.scality.com/environment),
    annotated C(solutions.metalk8s.scality.com/environment-description), may span several namespaces and
    keeps its configuration in the first ConfigMap C(metalk8s-environment) found in them. It keeps those
    names on every change; a new environment is mooring's.
  - O(action=show) reads the environment from the Namespace and ConfigMap objects listed with
    M(kubernetes.core.k8s_info) (O(objects)) and returns its flavour, namespaces, description and solutions,
    to give to the other actions.
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
    description:
      - Namespace of the environment (defaults to O(environment)); the one holding its ConfigMap (RV(namespace)
        of O(action=show)) for an existing environment.
    type: str
  flavour:
    description:
      - Whose label, annotation and ConfigMap names the environment carries (RV(flavour) of O(action=show));
        unset means C(mooring). Not read by O(action=show).
    type: str
    choices: [mooring, metalk8s]
  namespaces:
    description: Every namespace of the environment (RV(namespaces) of O(action=show)), deleted by O(action=delete).
    type: list
    elements: str
  objects:
    description:
      - O(action=show) only. The Namespace objects labelled for the environment (either flavour) and the
        C(mooring-environment) and C(metalk8s-environment) ConfigMaps, as M(kubernetes.core.k8s_info) returns them.
    type: list
    elements: dict
  description:
    description: Human description, stored as an annotation on the namespace.
    type: str
    default: ''
  action:
    description: What to do.
    type: str
    required: true
    choices: [show, create, delete, add, upgrade, downgrade, remove]
  current:
    description: The environment's current map of solution to version (the data of its ConfigMap, RV(solutions) of O(action=show)).
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
- name: List the environment's namespaces and ConfigMaps, in both flavours
  kubernetes.core.k8s_info:
    kind: "{{ item.kind }}"
    label_selectors: "{{ item.labels | default([]) }}"
    field_selectors: "{{ item.fields | default([]) }}"
    hidden_fields: [metadata.managedFields]
  loop:
    - {kind: Namespace, labels: [solutions.mooring.io/environment=staging]}
    - {kind: Namespace, labels: [solutions.metalk8s.scality.com/environment=staging]}
    - {kind: ConfigMap, fields: [metadata.name=mooring-environment]}
    - {kind: ConfigMap, fields: [metadata.name=metalk8s-environment]}
  register: found

- name: Read the environment
  mooring.cluster.solution_environment:
    environment: staging
    action: show
    objects: "{{ found.results | map(attribute='resources') | flatten(levels=1) }}"
  register: staging

- name: Objects for running example 2.0.0 in the staging environment
  mooring.cluster.solution_environment:
    environment: staging
    action: upgrade
    flavour: "{{ staging.flavour }}"
    namespace: "{{ staging.namespace }}"
    current: "{{ staging.solutions }}"
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
  description: The environment's map of solution to version after the change (O(action=show), now).
  returned: success
  type: dict
  sample: {example: 2.0.0}
exists:
  description: Whether the environment exists.
  returned: O(action=show)
  type: bool
flavour:
  description: The environment's flavour (C(mooring) for a new one).
  returned: O(action=show)
  type: str
  sample: metalk8s
namespace:
  description: The namespace that holds the environment's ConfigMap (for a new one, O(namespace) or its name).
  returned: O(action=show)
  type: str
namespaces:
  description: Every namespace of the environment, sorted.
  returned: O(action=show)
  type: list
  elements: str
description:
  description: The environment's description annotation (the first namespace's that has one).
  returned: O(action=show)
  type: str
"""
