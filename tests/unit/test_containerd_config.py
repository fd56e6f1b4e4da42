# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The containerd role's config.toml, rendered as the role renders it (Ansible's template lookup, the role's
defaults and vars), in both layouts of ``containerd_config_version``: 2 (containerd 1.x) pinned byte for byte,
3 (containerd 2.1 and later) pinned and checked as TOML; and, when a containerd 2.1+ binary is at hand
(``MOORING_CONTAINERD``, else one tests/mirror/gobuild.py built), loaded by it."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLE = os.path.join(ROOT, "roles", "containerd")
BIN = os.path.dirname(sys.executable)

AUTH = {"registry.internal:5000": {"ca_file": "/etc/pki/ca.pem", "username": "puller", "password": 'pa"ss'},
        "mirror.internal": {"plain_http": True}}
CASES = {
    "v2": {"containerd_config_version": 2, "containerd_cgroup_driver": "systemd"},
    "v2-auth-cgroupfs": {"containerd_config_version": 2, "containerd_cgroup_driver": "cgroupfs", "containerd_registries": AUTH},
    "v3": {"containerd_config_version": 3, "containerd_cgroup_driver": "systemd"},
    "v3-auth-cgroupfs": {"containerd_config_version": 3, "containerd_cgroup_driver": "cgroupfs", "containerd_registries": AUTH},
    # A string, as a playbook's "{{ ... }}" may pass it; other paths and images.
    "v3-paths": {"containerd_config_version": "3", "containerd_cni_bin_dir": "/usr/libexec/cni",
                 "containerd_cni_conf_dir": "/etc/cni/other.d", "containerd_snapshotter": "native",
                 "containerd_sandbox_image": "registry.example/pause:3.10", "containerd_config_dir": "/etc/ctd"},
}

HEAD = '''# Ansible managed
version = {version}
root = "/var/lib/containerd"
state = "/run/containerd"

[grpc]
  address = "/run/containerd/containerd.sock"

'''

V2 = HEAD.format(version=2) + '''[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.1"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = {systemd}

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/opt/cni/bin"
    conf_dir = "/etc/cni/net.d"

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
'''

V2_AUTH = '''
    [plugins."io.containerd.grpc.v1.cri".registry.configs."registry.internal:5000".auth]
      username = "puller"
      password = "pa\\"ss"
'''

V3_IMAGES = HEAD.format(version=3) + '''[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"

  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "registry.k8s.io/pause:3.10.1"

  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "/etc/containerd/certs.d"
'''

V3_AUTH = '''
    [plugins."io.containerd.cri.v1.images".registry.configs."registry.internal:5000".auth]
      username = "puller"
      password = "pa\\"ss"
'''

V3_RUNTIME = '''
[plugins."io.containerd.cri.v1.runtime"]

  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"

    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = {systemd}

  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/opt/cni/bin"]
    conf_dir = "/etc/cni/net.d"
'''


def _play(out):
    template = os.path.join(ROLE, "templates", "config.toml.j2")
    tasks = [{"name": name, "vars": values,
              # As the role's __containerd_base_files: the lookup's text and a newline.
              "ansible.builtin.copy": {"dest": os.path.join(out, name + ".toml"), "mode": "0600",
                                       "content": "{{ lookup('ansible.builtin.template', '%s') }}\n" % template}}
             for name, values in CASES.items()]
    return [{"hosts": "localhost", "gather_facts": False, "tasks": tasks,
             # The settings the role shares (its meta dependency), then its own defaults and vars.
             "vars_files": [os.path.join(ROLE, "..", "settings", "defaults", "main.yml"),
                            os.path.join(ROLE, "defaults", "main.yml"), os.path.join(ROLE, "vars", "main.yml")]}]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """{case: config.toml text}, rendered by ansible-playbook (task vars over the role's defaults and vars)."""
    out = tmp_path_factory.mktemp("containerd-config")
    play = out / "play.yml"
    play.write_text(yaml.safe_dump(_play(str(out)), sort_keys=False))
    run = subprocess.run([os.path.join(BIN, "ansible-playbook"), str(play)],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return {name: (out / (name + ".toml")).read_text() for name in CASES}


# -------------------------------------------------------------------------------------- version 2
@pytest.mark.slow
def test_containerd_config_version_2_is_the_1x_layout_byte_for_byte(rendered):
    assert rendered["v2"] == V2.format(systemd="true")
    assert rendered["v2-auth-cgroupfs"] == V2.format(systemd="false") + V2_AUTH


# -------------------------------------------------------------------------------------- version 3
@pytest.mark.slow
def test_containerd_config_version_3_is_the_2x_layout(rendered):
    assert rendered["v3"] == V3_IMAGES + V3_RUNTIME.format(systemd="true")
    assert rendered["v3-auth-cgroupfs"] == V3_IMAGES + V3_AUTH + V3_RUNTIME.format(systemd="false")


@pytest.mark.slow
def test_containerd_config_version_3_as_toml(rendered):
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    config = tomllib.loads(rendered["v3-paths"])
    assert (config["version"], config["root"], config["grpc"]) == (3, "/var/lib/containerd", {"address": "/run/containerd/containerd.sock"})
    assert sorted(config["plugins"]) == ["io.containerd.cri.v1.images", "io.containerd.cri.v1.runtime"]
    images = config["plugins"]["io.containerd.cri.v1.images"]
    assert images == {"snapshotter": "native", "pinned_images": {"sandbox": "registry.example/pause:3.10"},
                      "registry": {"config_path": "/etc/ctd/certs.d"}}
    runtime = config["plugins"]["io.containerd.cri.v1.runtime"]
    assert runtime["cni"] == {"bin_dirs": ["/usr/libexec/cni"], "conf_dir": "/etc/cni/other.d"}
    assert runtime["containerd"] == {"default_runtime_name": "runc", "runtimes": {"runc": {
        "runtime_type": "io.containerd.runc.v2", "options": {"SystemdCgroup": True}}}}
    auth = tomllib.loads(rendered["v3-auth-cgroupfs"])["plugins"]["io.containerd.cri.v1.images"]["registry"]["configs"]
    assert auth == {"registry.internal:5000": {"auth": {"username": "puller", "password": 'pa"ss'}}}


# ------------------------------------------------------------------------------- a real containerd
def _containerd():
    """A containerd 2.1 or later: $MOORING_CONTAINERD, else the newest tests/mirror/gobuild.py built (None)."""
    if os.environ.get("MOORING_CONTAINERD"):
        return os.environ["MOORING_CONTAINERD"]
    cache = os.environ.get("MOORING_CACHE_DIR", "/var/cache/mooring")
    found = []
    for path in glob.glob(os.path.join(cache, "gobuild", "out", "containerd-*", "containerd")):
        match = re.match(r"containerd-(\d+)\.(\d+)\.(\d+)-", os.path.basename(os.path.dirname(path)))
        if match and tuple(int(n) for n in match.groups()) >= (2, 1, 0):
            found.append((tuple(int(n) for n in match.groups()), path))
    return max(found)[1] if found else None


CONTAINERD = _containerd()


def _dump(path):
    run = subprocess.run([CONTAINERD, "--config", str(path), "config", "dump"], capture_output=True, text=True, check=False)
    assert run.returncode == 0 and not run.stderr, run.stderr[-2000:]
    return run.stdout


@pytest.mark.slow
@pytest.mark.skipif(CONTAINERD is None, reason="no containerd 2.1+ (MOORING_CONTAINERD, or tests/mirror/gobuild.py containerd 2.1.9)")
@pytest.mark.parametrize("case", ["", "-auth-cgroupfs"], ids=["systemd", "auth-cgroupfs"])
def test_containerd_loads_version_3_as_it_migrates_version_2(rendered, tmp_path, case):
    """containerd's own view of the version 3 file (config dump, no warning) is its migration of the version 2 one."""
    (tmp_path / "v2.toml").write_text(rendered["v2" + case])
    (tmp_path / "v3.toml").write_text(rendered["v3" + case])
    dump = _dump(tmp_path / "v3.toml")
    assert dump == _dump(tmp_path / "v2.toml")
    assert "bin_dirs = ['/opt/cni/bin']" in dump and "sandbox = 'registry.k8s.io/pause:3.10.1'" in dump
