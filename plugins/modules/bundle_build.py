# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# Documentation only: the work is done on the controller by the action plugin of the same name.

DOCUMENTATION = r"""
---
module: bundle_build
short_description: Build a signed air-gap bundle from a lock file, on the controller
version_added: 0.1.0
description:
  - Builds one package per add-on of the lock (binaries, image archives, host packages with a flat apt
    repository index, manifests) and assembles them with a manifest C(bundle.json) and its detached
    Ed25519 signature into one uncompressed tar stream at O(dest).
  - Every artifact is fetched (C(https://), C(http://), C(file://)) with sha256 verification; a mismatch
    fails naming the artifact, the expected and the actual digest, and nothing is added to the bundle.
    Images come from their C(archive) when the catalog gives one, else from the registry with C(skopeo).
  - Packages are kept in a content-addressed cache keyed by the add-on's inputs; a package whose inputs
    did not change is reused, not rebuilt or downloaded again. Same lock, same key, same bundle bytes.
  - The signing key is created on the controller (mode 0600) on first use, with its public key next to
    it (C(.pub)); give that public key to M(mooring.cluster.bundle_unpack) on the hosts.
  - Writes a software bill of materials of the bundle beside it, C(<dest>.cdx.json) - CycloneDX 1.6 JSON made
    with C(cyclonedx-python-lib) and checked with that library's schema validator before anything is written.
    It lists every add-on package and, nested in it, every artifact it carries (binaries, release archives,
    Debian packages, container images, manifests, charts, wheels) with its version, sha256, source URL and
    package URL (C(pkg:deb), C(pkg:oci), C(pkg:generic)). The same bundle always gives the same SBOM bytes (no
    wall-clock timestamp unless C(SOURCE_DATE_EPOCH) is set), so it is rewritten only when it changed.
  - Runs on the controller whatever the target host; memory use does not grow with the bundle size.
  - The lock is checked before anything is fetched or written (no cache, key or O(dest) is created for a
    refused lock); its digest does not protect against an edited lock, so every field is type-checked and every
    value that becomes part of a path (add-on names, versions, architectures, artifact names and C(dest),
    image references, host package names) must be a safe name. Only C(https://), C(http://) and absolute
    C(file://) URLs are fetched; a C(file://) URL must name a regular file. Release archives are read with
    bounds on their members (size, count, total against the archive's size) and refused when they carry
    devices, FIFOs, absolute or C(..) names or links out of the archive. See C(docs/bundle.md).
author:
  - Mooring maintainers (@mooring)
attributes:
  check_mode:
    support: full
    description: Reports whether packages would be built and the bundle (or its SBOM) written, without fetching
      or writing anything.
  diff_mode:
    support: full
    description: Shows the bundle id and the SBOM's sha256 before and after.
extends_documentation_fragment:
  - mooring.cluster.attributes
  - mooring.cluster.attributes.controller
options:
  lock:
    description: Path of the lock file (C(installer.lock.yaml)) on the controller. One of O(lock) and O(lock_data).
    type: path
  lock_data:
    description:
      - The lock as M(mooring.cluster.lock_values) read it (its RV(mooring.cluster.lock_values#module:lock) with
        O(mooring.cluster.lock_values#module:with_lock)), so that a run reads the lock file once. Its shape and
        digest are checked again here.
    type: dict
  dest:
    description: Path of the bundle file to write on the controller.
    type: path
    required: true
  addons:
    description: Only these add-ons of the lock (default - every add-on).
    type: list
    elements: str
    default: []
  key:
    description:
      - Ed25519 signing key (PEM, PKCS8). Created when missing.
      - Default C($MOORING_CONFIG_DIR/bundle-signing.key), else C(~/.config/mooring/bundle-signing.key).
    type: path
  cache_dir:
    description: Package cache directory. Default C($MOORING_CACHE_DIR/bundle), else C(/var/cache/mooring/bundle).
    type: path
  distro:
    description: Host package family the bundle carries packages for.
    type: str
    default: debian
    choices: [debian]
  verify_cache:
    description: Re-hash every cached package before using it (otherwise its recorded size is checked).
    type: bool
    default: false
notes:
  - Needs the Python C(cryptography) library on the controller (signing) and C(cyclonedx-python-lib) (the SBOM,
    validated with C(jsonschema)). Hosts need only Python's standard library to verify.
seealso:
  - module: mooring.cluster.bundle_verify
  - module: mooring.cluster.bundle_unpack
"""

EXAMPLES = r"""
- name: Build the air-gap bundle for the locked installer
  mooring.cluster.bundle_build:
    lock: "{{ inventory_dir }}/installer.lock.yaml"
    dest: "{{ inventory_dir }}/bundle.tar"
  register: bundle

- name: Only containerd and etcd, with a dedicated key
  mooring.cluster.bundle_build:
    lock: installer.lock.yaml
    dest: /srv/bundles/site-a.tar
    addons: [containerd, etcd]
    key: /etc/mooring/bundle-signing.key
"""

RETURN = r"""
id:
  description: Bundle id - the sha256 of C(bundle.json). Hosts unpack to C(/var/lib/mooring/bundles/<id>).
  returned: success and not check mode
  type: str
  sample: 436afbfa61618ceb45ee270770d75d7d41f671637e2a644a1534a1e227d49629
path:
  description: The bundle file.
  returned: always
  type: str
size:
  description: Size of the bundle file in bytes.
  returned: success and not check mode
  type: int
hash:
  description: The installer's kURL-compatible hash from the lock.
  returned: success and not check mode
  type: str
  sample: a22dc05
packages:
  description: Per add-on - C(key) (package cache key), C(reused) (true when taken from the cache), C(size),
    C(sha256), C(trustedOnFirstUse) (artifacts without a catalog checksum whose fetched digest was recorded).
  returned: always
  type: dict
public_key:
  description: The signing public key (PEM) to install on hosts.
  returned: success and not check mode
  type: str
public_key_path:
  description: Where that public key is on the controller.
  returned: success and not check mode
  type: str
signer:
  description: Fingerprint of the signing key (SHA256 of the raw public key, base64).
  returned: success and not check mode
  type: str
sandbox_image:
  description: The sandbox (pause) image the lock pins, for containerd's configuration; null when the lock has none.
  returned: success and not check mode
  type: str
  sample: registry.k8s.io/pause:3.10.1
bytes_read:
  description: Bytes read through Python (fetched sources, hashing) - only the packages that were (re)built.
  returned: success and not check mode
  type: int
bytes_copied:
  description: Bytes of cached packages copied into the bundle inside the kernel.
  returned: success and not check mode
  type: int
bundle_changed:
  description: Whether the bundle file itself was (or in check mode would be) written; C(changed) also covers the SBOM.
  returned: always
  type: bool
sbom:
  description: The CycloneDX 1.6 JSON SBOM of the bundle, C(<dest>.cdx.json) (in check mode, where it would be).
  returned: always
  type: str
  sample: /srv/bundles/site-a.tar.cdx.json
sbom_changed:
  description: Whether the SBOM was (or in check mode would be) written.
  returned: always
  type: bool
"""
