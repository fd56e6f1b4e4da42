# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inputs the bundle tests build for real (imported by the test modules beside it)."""

from __future__ import annotations

import subprocess

from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import lock_digest


def make_deb(where, name, version="1.0-1"):
    """A real .deb (dpkg-deb) named NAME_VERSION_all.deb in ``where``, with one file in it."""
    root = where / ("deb-" + name)
    (root / "DEBIAN").mkdir(parents=True)
    (root / "usr" / "share" / name).mkdir(parents=True)
    (root / "usr" / "share" / name / "README").write_text("test package %s\n" % name)
    (root / "DEBIAN" / "control").write_text(
        "Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: test <t@example.invalid>\n"
        "Description: test package\n" % (name, version))
    out = where / ("%s_%s_all.deb" % (name, version))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(root), str(out)], check=True,
                   capture_output=True)
    return out


def make_lock(addons, name="t"):
    """A lock holding ``addons`` (add-on name -> locked add-on), its digest computed."""
    lock = {"apiVersion": "cluster.mooring.io/v1beta1", "kind": "InstallerLock", "metadata": {"name": name},
            "spec": {}, "hash": "abcdef0", "specDigest": "0" * 64, "architectures": ["amd64"], "addons": addons}
    lock["digest"] = lock_digest(lock)
    return lock
