# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a module sent to a host carries: the standard library, ansible-core and the small
host-side packages of module_utils only; never the controller's build code (bundle.build,
lock/, spec/, solutions.archive, the CLI) nor a third-party library imported by our code.

Each module is imported in a fresh interpreter (as AnsiballZ runs it); the collection's
module_utils it loads are compared with the host-side list, and the third-party modules it
loads are compared with what ansible-core's own AnsibleModule loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
MODULES = os.path.join(ROOT, "plugins", "modules")
PREFIX = "ansible_collections.mooring.cluster.plugins.module_utils."

# The host-side packages of module_utils (docs/DEVELOPING.md says the same).
HOST_SIDE = {
    "common.errors", "common.digest", "common.ed25519", "common.fileio", "common.images", "common.ctr", "common.netguard",
    "common.service", "common.host_state", "common.tarsafe", "common.shape", "common.linre", "common.linresyntax",
    "common.linreprogram", "common.redact",
    "common.semver", "common.module",
    "bundle.host", "bundle.install", "bundle.format", "bundle.progress",
    "cluster.hostfacts.hostdisk", "cluster.hostfacts.hostio",
    "cluster.etcd.etcdctl", "cluster.etcd.etcdgate", "cluster.etcd.etcdhttp", "cluster.etcd.etcdmember",
    "cluster.etcd.etcdoptions", "cluster.etcd.etcdsnapshot", "cluster.etcd.etcdbackup",
    "cluster.kubeadm.kubeadm",
    "cluster.preflight.preflight", "cluster.preflight.preflightgather", "cluster.preflight.preflightjudge",
    "cluster.preflight.preflightinventory", "cluster.preflight.preflightreport", "cluster.preflight.preflightclock",
    "cluster.troubleshoot.hostpreflight", "cluster.troubleshoot.hostconditions", "cluster.troubleshoot.hostanalyze",
    "cluster.troubleshoot.hostcollect", "cluster.troubleshoot.collectspec", "cluster.troubleshoot.collectsystem",
    "cluster.troubleshoot.collectnetwork", "cluster.troubleshoot.collectrun",
    "cluster.support.support", "cluster.support.clusterstate",
}
# Modules that run on the controller against a cloud API (they need openstacksdk there).
CONTROLLER_MODULES = {"openstack_infra_inventory", "openstack_infra_plan"}

PROBE = r'''
import importlib, json, sys
import ansible.module_utils.basic  # what every module loads anyway
import ansible.module_utils.urls
base = set(sys.modules)
importlib.import_module(sys.argv[1])
new = set(sys.modules) - base
ours = sorted(m[len(sys.argv[2]):] for m in sys.modules if m.startswith(sys.argv[2]))
third = sorted({m.split(".")[0] for m in new} - set(sys.stdlib_module_names) - {"ansible", "ansible_collections"})
print(json.dumps({"ours": ours, "third": third}))
'''


def _real_modules():
    """Modules with code (not the documentation stubs of action plugins)."""
    names = []
    for name in sorted(os.listdir(MODULES)):
        if not name.endswith(".py") or name == "__init__.py":
            continue
        with open(os.path.join(MODULES, name), encoding="utf-8") as handle:
            text = handle.read()
            if "AnsibleModule" in text or "MooringModule" in text or name[:-3] in CONTROLLER_MODULES:
                names.append(name[:-3])
    return names


REAL = _real_modules()


def test_the_probe_sees_host_modules():
    assert len(REAL) >= 15, REAL
    assert {"bundle_unpack", "bundle_verify", "bundle_install", "etcd_restart", "preflight_check"} <= set(REAL)


def _probe(name):
    run = subprocess.run([sys.executable, "-c", PROBE, "ansible_collections.mooring.cluster.plugins.modules." + name,
                          PREFIX], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


@pytest.mark.parametrize("name", [n for n in REAL if n not in CONTROLLER_MODULES])
def test_host_module_imports_only_host_side_code(name):
    seen = _probe(name)
    # A sub-package's __init__ holds only its opening comment; the modules in it are what is checked.
    packages = {m for m in seen["ours"] if "." in m and not os.path.isdir(os.path.join(ROOT, "plugins", "module_utils", *m.split(".")))}
    assert packages <= HOST_SIDE, "%s loads controller code: %s" % (name, sorted(packages - HOST_SIDE))
    assert seen["third"] == [], "%s loads third-party libraries: %s" % (name, seen["third"])
