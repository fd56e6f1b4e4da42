# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: solution_archive
short_description: Validate a solution archive on the controller and export its images
version_added: 0.1.0
description:
  - Reads a solution archive (ISO 9660 image or tar) on the Ansible controller and checks its layout,
    C(manifest.yaml) schema, C(SHA256SUMS) (every file listed, none missing, none extra), its Ed25519
    signature over C(SHA256SUMS), every image of C(spec.images) as a valid OCI image layout, and every image
    the operator manifests use. Any problem fails the task with one line per problem, each naming its path
    in the archive; nothing is written anywhere then.
  - Nothing in the archive is trusted while it is read. Only a regular file is opened; a compressed tar may
    unpack to at most 100 times its size (at least 64 MiB), and a member that would take it past that is
    refused from its header, before it is decompressed; YAML is read with bounded size, depth and aliases
    (none in C(manifest.yaml)). See docs/solutions.md.
  - With O(export_dir), writes one OCI archive per image under C(<export_dir>/<name>-<version>/), its
    C(index.json) annotated so that C(ctr images import) names the image
    C(<image_prefix>/<name>-<version>/<image>:<tag>). Files already there with the same content are kept.
  - A MetalK8s Solution ISO (apiVersion C(solutions.metalk8s.scality.com/v1alpha1), images in skopeo's
    C(dir) format, C({{ repository }}) in its operator manifests) is read as MetalK8s builds it. It has no
    signature inside, so it needs a trust anchor, a C(SHA256SUM) file beside it (or O(sha256sum)) listing
    its SHA-256, or O(trusted_sha256).
  - By default (O(require_trust)) every archive needs a trust anchor (a verified signature, a checksum file or
    O(trusted_sha256)); the one used is returned in RV(trust) and recorded with the import.
  - A RoleBinding or ClusterRoleBinding of the operator that binds the ClusterRole C(cluster-admin) (to anyone),
    or binds any role to the group C(system:authenticated), C(system:unauthenticated), C(system:anonymous) or
    C(system:serviceaccounts) or the user C(system:anonymous), is refused, naming the file and object, unless
    O(allow_broad_rbac) names the archive; the grants allowed are returned in RV(broad_rbac).
  - Hosts only ever receive what passed this validation.
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
requirements:
  - pycdlib, jsonschema and cryptography (on the controller)
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  path:
    description: The archive, on the controller.
    type: path
    required: true
  pubkey:
    description: Ed25519 public key (PEM) the archive must be signed with.
    type: path
  require_signature:
    description:
      - Refuse an archive whose signature is absent or not verified with O(pubkey) (a MetalK8s archive has none).
      - Without it, a mooring archive still needs a signature that verifies when O(pubkey) is given.
    type: bool
    default: false
  sha256sum:
    description:
      - C(sha256sum) output listing the archive's file name with its SHA-256. Default, when an anchor is
        needed, a C(SHA256SUM) file beside the archive (read only if it exists).
      - A checksum file that lists the archive with another digest refuses it.
    type: path
  trusted_sha256:
    description: The archive's SHA-256 (64 lowercase hex digits), named as trusted by the administrator.
    type: str
  require_trust:
    description: Refuse an archive that no anchor (signature, checksum file, O(trusted_sha256)) trusts.
    type: bool
    default: true
  allow_broad_rbac:
    description:
      - The archives, each named C(<name>-<version>) (for example C(example-1.0.0)), whose operator may bind the
        ClusterRole C(cluster-admin) or bind a role to every user, every anonymous request or every service account.
      - Any other archive that does is refused. Name an archive here only after reading what it grants.
    type: list
    elements: str
    default: []
    version_added: 0.3.0
  export_dir:
    description: Controller directory for the exported image archives; nothing is exported when unset.
    type: path
  image_prefix:
    description: Registry host (or local name) images are named under.
    type: str
    default: solutions.mooring.local
"""

EXAMPLES = r"""
- name: Validate and export a signed archive
  mooring.cluster.solution_archive:
    path: /srv/solutions/example-1.0.0.iso
    pubkey: /srv/solutions/vendor.pub
    export_dir: /var/cache/mooring/solutions
  delegate_to: localhost
  run_once: true
  register: archive
"""

RETURN = r"""
name:
  description: Solution name (C(metadata.name)).
  returned: success
  type: str
  sample: example
version:
  description: Solution version (C(spec.version)).
  returned: success
  type: str
  sample: 1.0.0
display_name:
  description: The display-name annotation, or the name.
  returned: success
  type: str
archive_sha256:
  description: SHA-256 of the archive file.
  returned: success
  type: str
signed:
  description: Whether the archive carries a signature.
  returned: success
  type: bool
signature_verified:
  description: Whether the signature was verified with O(pubkey).
  returned: success
  type: bool
warnings_archive:
  description: Non-fatal notes (a signature present but not verified).
  returned: success
  type: list
  elements: str
images:
  description: Exported images (empty without O(export_dir)), each with C(ref), C(digest) and C(file) (on the controller).
  returned: success
  type: list
  elements: dict
  sample: [{ref: solutions.mooring.local/example-1.0.0/example-app:1.0.0, digest: "sha256:6787...", file: /c/example-app_1.0.0.oci.tar}]
flavour:
  description: C(mooring) or C(metalk8s) (the archive's format).
  returned: success
  type: str
  sample: metalk8s
trust:
  description: The anchor that trusts the archive (C(kind) is C(signature), C(sha256sum) or C(named)), or null.
  returned: success
  type: dict
  sample: {kind: sha256sum, detail: /srv/solutions/SHA256SUM}
image_names:
  description: The images of C(spec.images) as C(name:tag).
  returned: success
  type: list
  elements: str
  sample: [example-operator:1.0.0, example-app:1.0.0]
crds:
  description: The CustomResourceDefinitions of this version, labelled, ready to apply when it is activated.
  returned: success
  type: list
  elements: dict
operator_rendered:
  description:
    - The operator's objects as this cluster runs them, every image named under O(image_prefix)
      (C(<image_prefix>/<name>-<version>/<image>:<tag>)) and C({{ repository }}) filled in; no namespace.
  returned: success
  type: list
  elements: dict
broad_rbac:
  description: The broad grants O(allow_broad_rbac) allowed for this archive, one line each (file, object, what it grants).
  returned: success
  type: list
  elements: str
  sample: ["operator/deploy/rbac.yaml: document 5 (ClusterRoleBinding example-admin): binds the ClusterRole cluster-admin
            (every right on the cluster) to ServiceAccount example-operator"]
solution:
  description: The full validated summary (name, version, images with digests, operator image and manifests).
  returned: success
  type: dict
"""
