# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: etcd snapshots: save (atomically), read their status, restore.
"""

from __future__ import annotations

import os
import shutil

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.etcd.etcdctl import (
    EtcdError,
    parse_json,
    snapshot_restore_cmd,
    snapshot_save_cmd,
    snapshot_status_cmd,
)
from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio
from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import sha256_file


def save_snapshot(run, base, path, tool=None):
    """``snapshot save`` to ``path`` (through a temporary file beside it), then its status. Returns
    ``{path, sha256, size, revision, total_keys, hash}``."""

    def save(part):
        rc, out, err = run(snapshot_save_cmd(base, part))
        if rc != 0:
            raise EtcdError("etcdctl snapshot save failed: %s" % (err or out).strip()[:500])
        os.chmod(part, 0o600)  # etcdctl writes a new file over the temporary one

    with fileio.atomic_output(path, mode=0o600, check=save):
        pass
    info = snapshot_info(run, tool or offline_tool(base[0]), path)
    info.update({"path": path, "sha256": sha256_file(path)[0], "size": os.path.getsize(path)})
    return info


def offline_tool(etcdctl):
    """The program for a snapshot file (status, restore): ``etcdutl`` beside ``etcdctl`` when there is one (etcd 3.5
    and later; etcdctl 3.6 has neither ``snapshot status`` nor ``restore``), else ``etcdctl`` itself (3.4)."""
    found = shutil.which(etcdctl) or etcdctl
    sibling = os.path.join(os.path.dirname(found), "etcdutl")
    return sibling if os.path.dirname(found) and os.access(sibling, os.X_OK) else etcdctl


def snapshot_info(run, tool, path):
    rc, out, err = run(snapshot_status_cmd(tool, path))
    if rc != 0:
        raise EtcdError("snapshot status %s failed: %s" % (path, (err or out).strip()[:500]))
    data = parse_json(out, "snapshot status")
    return {"revision": data.get("revision"), "total_keys": data.get("totalKey"), "hash": data.get("hash")}


def restore_snapshot(run, tool, path, name, initial_cluster_value, token, peer_urls, data_dir, check_mode=False):
    """Restore ``path`` into a new ``data_dir`` (which must not exist or be empty)."""
    if os.path.isdir(data_dir) and os.listdir(data_dir):
        raise EtcdError("data_dir %s is not empty; move it away before restoring a snapshot into it" % data_dir)
    if not os.path.isfile(path):
        raise EtcdError("snapshot %s does not exist on this host" % path)
    cmd = snapshot_restore_cmd(tool, path, name, initial_cluster_value, token, peer_urls, data_dir)
    if check_mode:
        return {"changed": True, "command": cmd}
    if os.path.isdir(data_dir):
        os.rmdir(data_dir)
    rc, out, err = run(cmd)
    if rc != 0:
        raise EtcdError("snapshot restore failed: %s" % (err or out).strip()[:500])
    return {"changed": True, "command": cmd}
