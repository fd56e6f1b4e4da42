#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: support_collect
short_description: Collect one host's part of a support bundle (read-only, bounded, redacted on the host)
version_added: 0.2.0
description:
  - Collects what whoever helps with a failed run needs from this host - the journals of O(units) (the last
    O(since_hours), newest O(journal_max_bytes) each), their unit states, the versions the binaries report, the
    expiry of every certificate under O(pki_dirs), the local etcd member's view (member list, every member's
    health and status, with the member's health-check client certificate), disk use, memory, kernel, addresses
    and routes, the built-in preflight results for the host's O(roles), and the bundles unpacked under
    O(bundle_dir).
  - Every text is redacted on the host before it is returned - private keys (PEM, OpenPGP, SSH2, PuTTY),
    YAML and JSON credential fields (block scalars too), URL passwords, TOML and INI credentials (containerd's
    registry auth, AWS credentials), command-line and environment credentials, authorization headers,
    bootstrap tokens, JSON web tokens (docs/support-bundle.md lists the formats); the counts of what was taken
    out are returned.
  - A part that cannot be read is one line in RV(errors); the others are still collected. Its action plugin
    times the exchange, so the host's clock offset from the controller's is in RV(facts).
  - Used by the C(mooring.cluster.support_bundle) playbook, which assembles the archive on the controller.
author:
  - Mooring maintainers (@mooring)
extends_documentation_fragment:
  - mooring.cluster.attributes.read_only
  - mooring.cluster.attributes.flow
options:
  units:
    description: The systemd units (without C(.service)) whose journal and state are collected.
    type: list
    elements: str
    default: [etcd, containerd, kubelet, keepalived]
  since_hours:
    description: How far back the journals go.
    type: int
    default: 24
  journal_max_bytes:
    description: The newest bytes of each unit's journal kept.
    type: int
    default: 524288
  pki_dirs:
    description: Directories whose C(*.crt) files' expiry is read (with openssl; at most 200).
    type: list
    elements: path
    default: [/etc/kubernetes/pki]
  etcd_env:
    description: The etcd member's environment file (its client URL is read there); absent - no etcd member.
    type: path
    default: /etc/etcd/etcd.env
  etcd_pki_dir:
    description: The etcd member's certificates (C(ca.crt), C(healthcheck-client.crt) and C(.key)).
    type: path
    default: /etc/kubernetes/pki/etcd
  etcdctl:
    description: The etcdctl the member was installed with.
    type: path
    default: /usr/local/bin/etcdctl
  bundle_dir:
    description: Where bundles are unpacked on the host.
    type: path
    default: /var/lib/mooring/bundles
  roles:
    description: The host's roles, for the built-in preflight checks.
    type: list
    elements: str
    choices: [control_plane, etcd, workers]
    default: []
  kubeconfig:
    description:
      - A kubeconfig on this host (a control plane's C(/etc/kubernetes/admin.conf)); when given, the cluster as
        the API server answers it is read with O(kubectl) (C(get --raw), bounded) into C(cluster/) files - nodes,
        pods, recent events, PVCs, the kubeadm and kubelet configuration, C(/readyz), C(/livez); never Secrets.
        The controller uses them when its own kubeconfig does not answer.
      - Empty (the default) - the cluster is not read on this host.
    type: str
    default: ""
  kubectl:
    description: The kubectl O(kubeconfig) is read with.
    type: path
    default: /usr/local/bin/kubectl
notes:
  - Decisions live in C(plugins/module_utils/cluster/support/support.py) (host) and C(supportbundle.py) (controller);
    see docs/support-bundle.md.
"""

EXAMPLES = r"""
- name: Collect this host's part
  mooring.cluster.support_collect:
    since_hours: 6
  register: support_host
"""

RETURN = r"""
files:
  description: The redacted texts, by their path under the host's directory in the archive.
  returned: always
  type: dict
facts:
  description: What the index judges - C(certificates), C(units), C(etcd), C(disks), C(bundles), C(clock), and with
    O(kubeconfig) C(cluster_findings) (C([severity, text]) pairs, judged before redaction, each text redacted).
  returned: always
  type: dict
redacted:
  description: How many secrets of each kind were taken out.
  returned: always
  type: dict
  sample: {"private-key": 1, "option": 2}
errors:
  description: One line per part that could not be read.
  returned: always
  type: list
  elements: str
"""

import time

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.hostfacts import hostio
from ansible_collections.mooring.cluster.plugins.module_utils.cluster.support import support
from ansible_collections.mooring.cluster.plugins.module_utils.common.module import MooringModule


def run(argv):
    """A command with its output and time bounded; a program that cannot start gives rc 127."""
    try:
        return hostio.run_bounded(argv, timeout=60.0, limit=8 * 1024 * 1024)
    except OSError as exc:
        return 127, "", "%s: %s" % (argv[0], exc.strerror or exc)


class SupportCollect(MooringModule):
    """Collects this host's support data."""

    argument_spec = {
        "units": {"type": "list", "elements": "str", "default": ["etcd", "containerd", "kubelet", "keepalived"]},
        "since_hours": {"type": "int", "default": 24},
        "journal_max_bytes": {"type": "int", "default": 524288},
        "pki_dirs": {"type": "list", "elements": "path", "default": ["/etc/kubernetes/pki"]},
        "etcd_env": {"type": "path", "default": "/etc/etcd/etcd.env"},
        "etcd_pki_dir": {"type": "path", "default": "/etc/kubernetes/pki/etcd"},
        "etcdctl": {"type": "path", "default": "/usr/local/bin/etcdctl"},
        "bundle_dir": {"type": "path", "default": "/var/lib/mooring/bundles"},
        "roles": {"type": "list", "elements": "str", "choices": ["control_plane", "etcd", "workers"], "default": []},
        "kubeconfig": {"type": "str", "default": ""},
        "kubectl": {"type": "path", "default": "/usr/local/bin/kubectl"},
    }
    errors = ()

    def __init__(self):
        self.received = time.time()  # the host's clock when the module starts (the action plugin timed the exchange)
        super().__init__()

    def run(self):
        got = support.collect(run, self.params)
        got["facts"]["clock"] = {"received": self.received, "replied": time.time()}
        return dict(changed=False, **got)


def main():
    SupportCollect().execute()


if __name__ == "__main__":
    main()
