# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: kubeadm_addon_render
short_description: Render an add-on - upstream manifest objects with our patches, or Helm values
version_added: 0.1.0
description:
  - Runs on the controller and only renders; apply the result with M(kubernetes.core.k8s) (server-side apply)
    or M(kubernetes.core.helm).
  - Upstream objects are found by the kind, namespace and name upstream gives them; our patches set the pod
    CIDR, encapsulation/backend, node ports, storage paths and default class, and pin every container image to
    the lock's reference with C(imagePullPolicy=IfNotPresent) (images come from the bundle). A missing patch
    target or an image the lock lacks fails, naming it.
  - Calico IPIP falls back to VXLAN when C(cluster.ipip_available) is false (preflight found no ipip module).
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
  name:
    description: The add-on (C(calico), C(cilium), C(flannel), C(localPathProvisioner), C(longhorn), C(openebs),
      C(ingressNginx), C(contour), C(metricsServer)).
    type: str
    required: true
  manifest:
    description: The upstream manifest text (manifest add-ons).
    type: str
  options:
    description: The lock's C(addons.<name>.options).
    type: dict
    default: {}
  images:
    description: The lock's C(addons.<name>.images) (C(ref), C(digest)).
    type: list
    elements: raw
    default: []
  cluster:
    description: C(pod_cidr), C(service_cidr), C(control_plane_endpoint), C(ipip_available).
    type: dict
    default: {}
  unpinned_images:
    description:
      - What to do with a container image the lock does not carry (it would need a registry).
      - V(fail) - the default, for anything that is applied.
      - V(report) - list them in RV(unpinned) and go on; for rendering only, at the install's boundary.
    type: str
    choices: [fail, report]
    default: fail
  dest:
    description:
      - A file on the controller to keep the rendered add-on in, as JSON (the objects of a manifest, the values of a
        chart), written only when its content differs; its directory is created. Nothing is written in check mode.
    type: path
"""

EXAMPLES = r"""
- name: Render calico
  mooring.cluster.kubeadm_addon_render:
    name: calico
    manifest: "{{ calico_manifest.content | b64decode }}"
    options: "{{ lock.addons.calico.options }}"
    images: "{{ lock.addons.calico.images }}"
    cluster: {pod_cidr: 10.32.0.0/16, ipip_available: false}
  register: calico
"""

RETURN = r"""
unpinned:
  description: With O(unpinned_images=report), the images the lock does not carry, one line each.
  returned: always
  type: list
  elements: str
kind:
  description: C(manifest) or C(chart).
  returned: always
  type: str
objects:
  description: The objects to apply, namespaces and CRDs first.
  returned: always
  type: list
  elements: dict
values:
  description: Helm values (chart add-ons).
  returned: always
  type: dict
namespace:
  description: Release namespace (chart add-ons).
  returned: always
  type: str
facts:
  description: Decisions taken (for example C(encapsulation)).
  returned: always
  type: dict
notes:
  description: Fallbacks taken, for the report.
  returned: always
  type: list
  elements: str
"""
