# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: bring a host to a wanted state in one pass, changing only what differs.

A role describes what it manages on a host as data - system groups and users, directories, files
(content, mode, owner, group), sysctls, kernel modules, swap, systemd units - and :func:`converge`
reads the host's real state for every item, every time (no stamp or digest file short-cuts the
reading), changes only the items that differ, and returns one line per changed item. Check mode
reads everything and writes nothing; the lines then say what would change.

Units are restarted from the host's real state too (:func:`service.stale_reasons`): a unit whose
process is older than its binary or any file it reads is restarted, so a run killed between writing
a file and restarting is finished by the next one.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import time

from ansible_collections.mooring.cluster.plugins.module_utils.common import fileio, service
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

SYSTEMD_DIRS = ("/etc/systemd/", "/lib/systemd/", "/usr/lib/systemd/", "/run/systemd/")
_SWAP_LINE = re.compile(r"^([^#\s]+\s+\S+\s+swap\s+.*)$", re.M)
_SWAP_MARK = "  # disabled by mooring.cluster (kubelet failSwapOn)"


class HostState:
    """One converge pass. ``run(argv) -> (rc, stdout, stderr)`` runs a command on the host."""

    def __init__(self, run, check_mode=False, diff=False, root="/"):
        self.run = run
        self.check_mode = check_mode
        self.want_diff = diff
        self.root = root
        self.changes = []      # "file /etc/x: content, mode 0644 -> 0600"
        self.diffs = []
        self.changed_paths = set()
        self.changed_files = []  # files (and secrets) written or fixed, in order
        self.removed_paths = set()  # files removed (state: absent): a unit reading one is restarted
        self.unit_states = {}    # unit -> ActiveState after this pass
        self.stale = {}          # unit (restart=never) -> why its process is not what is installed

    # -- helpers ---------------------------------------------------------------------------------
    def _path(self, path):
        return os.path.join(self.root, path.lstrip("/")) if self.root != "/" else path

    def _must(self, argv, what):
        rc, out, err = self.run(argv)
        if rc != 0:
            raise MooringError("%s: %s failed (rc %s): %s" % (what, " ".join(argv), rc, (err or out).strip()[:400]))
        return out

    def _note(self, kind, name, what):
        self.changes.append("%s %s: %s" % (kind, name, ", ".join(what)))

    @staticmethod
    def _ids(owner, group):
        try:
            uid = pwd.getpwnam(owner).pw_uid
        except KeyError:
            raise MooringError("no user %s on this host" % owner) from None
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            raise MooringError("no group %s on this host" % group) from None
        return uid, gid

    def _attrs(self, path, st, mode, owner, group):
        """What differs in mode, owner and group (and fix it unless check mode)."""
        uid, gid = self._ids(owner, group)
        what = []
        if st is not None and (st.st_mode & 0o7777) != mode:
            what.append("mode %04o -> %04o" % (st.st_mode & 0o7777, mode))
        if st is not None and (st.st_uid, st.st_gid) != (uid, gid):
            what.append("owner %s:%s" % (owner, group))
        if what and not self.check_mode:
            os.chown(path, uid, gid)
            os.chmod(path, mode)
        return what

    # -- groups and users ------------------------------------------------------------------------
    def groups(self, items):
        for item in items or ():
            try:
                grp.getgrnam(item["name"])
                continue
            except KeyError:
                pass
            if not self.check_mode:
                self._must(["groupadd"] + (["--system"] if item.get("system", True) else []) + [item["name"]],
                           "group %s" % item["name"])
            self._note("group", item["name"], ["created"])

    def users(self, items):
        for item in items or ():
            try:
                pwd.getpwnam(item["name"])
                continue
            except KeyError:
                pass
            if not self.check_mode:
                argv = ["useradd", "--no-create-home", "--shell", item.get("shell") or "/usr/sbin/nologin",
                        "--gid", item.get("group") or item["name"]]
                if item.get("home"):
                    argv += ["--home-dir", item["home"]]
                if item.get("system", True):
                    argv.append("--system")
                self._must(argv + [item["name"]], "user %s" % item["name"])
            self._note("user", item["name"], ["created"])

    # -- directories and files -------------------------------------------------------------------
    def directories(self, items):
        for item in items or ():
            path = self._path(item["path"])
            mode = int(item.get("mode") or "0755", 8)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                st = None
            if st is None:
                if not self.check_mode:
                    os.makedirs(path, mode=0o755, exist_ok=True)
                    uid, gid = self._ids(item.get("owner") or "root", item.get("group") or "root")
                    os.chown(path, uid, gid)
                    os.chmod(path, mode)
                self._note("directory", item["path"], ["created"])
                self.changed_paths.add(item["path"])
                continue
            if not os.path.isdir(path) or os.path.islink(path):
                raise MooringError("directory %s: something else is there (%s)" % (item["path"], fileio.file_kind(path)))
            what = self._attrs(path, st, mode, item.get("owner") or "root", item.get("group") or "root")
            if what:
                self._note("directory", item["path"], what)
                self.changed_paths.add(item["path"])

    def files(self, items, secret=False):
        for item in items or ():
            self._file(item, secret or item.get("secret", False))

    def _file(self, item, secret):
        path = self._path(item["path"])
        if item.get("state") == "absent":
            self._absent(item["path"], path)
            return
        want = fileio._as_bytes(item["content"])
        mode = int(item.get("mode") or "0644", 8)
        owner, group = item.get("owner") or "root", item.get("group") or "root"
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        if st is not None and (os.path.islink(path) or not os.path.isfile(path)):
            raise MooringError("file %s: something else is there (%s)" % (item["path"], fileio.file_kind(path)))
        have = fileio.read_if_exists(path) if st is not None else None
        what = []
        if have != want:
            what.append("created" if have is None else "content")
            if self.want_diff and not secret:
                self.diffs.append(_diff(item["path"], have, want))
            if not self.check_mode:
                self._write(path, want, mode, owner, group, item.get("validate"))
        else:
            what += self._attrs(path, st, mode, owner, group)
        if what:
            self._note("file", item["path"], what)
            self.changed_paths.add(item["path"])
            self.changed_files.append(item["path"])

    def _absent(self, name, path):
        if not os.path.lexists(path):
            return
        if os.path.isdir(path) and not os.path.islink(path):
            raise MooringError("file %s: a directory is there; not removed" % name)
        if not self.check_mode:
            os.unlink(path)
        self._note("file", name, ["removed"])
        self.changed_paths.add(name)
        self.removed_paths.add(name)
        self.changed_files.append(name)

    def _write(self, path, data, mode, owner, group, validate):
        def check(tmp):
            rc, out, err = self.run([arg.replace("%s", tmp) for arg in validate])
            if rc != 0:
                raise MooringError("file %s: the new content does not validate (%s): %s"
                                   % (path, " ".join(validate), (err or out).strip()[:400]))
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        fileio.write_atomic(path, data, mode, owner=self._ids(owner, group), check=check if validate else None)

    # -- kernel ----------------------------------------------------------------------------------
    def sysctl(self, settings):
        for name, value in (settings or {}).items():
            proc = self._path("/proc/sys/" + name.replace(".", "/"))
            try:
                with open(proc, encoding="ascii") as handle:
                    have = " ".join(handle.read().split())
            except OSError as exc:
                raise MooringError("sysctl %s: cannot read %s: %s" % (name, proc, exc.strerror)) from None
            want = " ".join(str(value).split())
            if have == want:
                continue
            if not self.check_mode:
                with open(proc, "w", encoding="ascii") as handle:
                    handle.write(want)
            self._note("sysctl", name, ["%s -> %s" % (have, want)])

    def kernel_modules(self, items):
        for item in items or ():
            if os.path.exists(self._path("/sys/module/%s" % item["name"])):
                continue
            if item.get("unless") and os.path.exists(self._path(item["unless"])):
                continue  # built into this kernel: the setting it brings is there
            if not self.check_mode:
                self._must(["modprobe", item["name"]], "kernel module %s" % item["name"])
            self._note("kernel module", item["name"], ["loaded"])

    def swap_off(self):
        try:
            with open(self._path("/proc/swaps"), encoding="utf-8") as handle:
                active = [line.split()[0] for line in handle.read().splitlines()[1:] if line.strip()]
        except OSError:
            active = []
        if active:
            if not self.check_mode:
                self._must(["swapoff", "--all"], "swap")
            self._note("swap", ",".join(active), ["turned off"])
        fstab = self._path("/etc/fstab")
        text = (fileio.read_if_exists(fstab) or b"").decode("utf-8", "replace")
        new = _SWAP_LINE.sub(lambda m: "# " + m.group(1) + _SWAP_MARK, text)
        if new != text:
            if not self.check_mode:
                st = os.stat(fstab)
                fileio.write_atomic(fstab, new, st.st_mode & 0o7777)
            self._note("file", "/etc/fstab", ["swap entries commented out"])

    # -- Debian packages (read only: apt installs what is missing) --------------------------------
    def packages_missing(self, names):
        """The packages of ``names`` (``name`` or ``name=version``) not installed (at that version)."""
        if not names:
            return []
        wanted = [n.split("=", 1) + [None] if "=" not in n else n.split("=", 1) for n in names]
        rc, out, _err = self.run(["dpkg-query", "-W", "-f", "${Package}\t${Version}\t${db:Status-Abbrev}\n"]
                                 + [w[0] for w in wanted])
        have = {}
        for line in out.splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[2].startswith("ii"):
                have[parts[0]] = parts[1]
        return [n for n, (name, version) in zip(names, [(w[0], w[1]) for w in wanted])
                if name not in have or (version is not None and have[name] != version)]

    # -- systemd units ---------------------------------------------------------------------------
    def units(self, items):
        # A unit whose program is not installed (yet) is left alone: kubelet before the bundle carries it.
        items = [i for i in items or () if not i.get("requires") or os.path.exists(self._path(i["requires"]))]
        if not items:
            return
        reload_ = any(p.startswith(SYSTEMD_DIRS) for p in self.changed_paths)
        states = {item["name"]: service.unit_state(self.run, item["name"]) for item in items}
        reload_ = reload_ or any(s.get("NeedDaemonReload") == "yes" for s in states.values())
        if reload_:
            if not self.check_mode:
                self._must(["systemctl", "daemon-reload"], "systemd")
                states = {item["name"]: service.unit_state(self.run, item["name"]) for item in items}
            self.changes.append("systemd: daemon-reload")
        for item in items:
            self._unit(item, states[item["name"]])

    def _unit(self, item, props):
        name = item["name"]
        what = []
        if item.get("enabled") is not None:
            rc, out, _err = self.run(["systemctl", "is-enabled", name])
            enabled = out.strip() in ("enabled", "enabled-runtime", "alias", "static", "indirect", "generated")
            if enabled != bool(item["enabled"]):
                if not self.check_mode:
                    self._must(["systemctl", "enable" if item["enabled"] else "disable", name], "unit %s" % name)
                what.append("enabled" if item["enabled"] else "disabled")
        state = item.get("state")
        active = props.get("ActiveState") == "active"
        if state == "stopped" and active:
            if not self.check_mode:
                self._must(["systemctl", "stop", name], "unit %s" % name)
            what.append("stopped")
        elif state == "started" and not active:
            if not self.check_mode:
                self._must(["systemctl", "start", name], "unit %s" % name)
                self._ready(item)
            what.append("started")
        elif active and item.get("restart", "stale") == "never":
            # Restarted by someone else (etcd: behind a health gate, one member at a time); said here.
            reasons = service.stale_reasons(props, item.get("binary"), list(item.get("files") or ()))
            if reasons:
                self.stale[name] = reasons
        elif state == "started" and item.get("restart", "stale") == "stale":
            files = list(item.get("files") or ())
            # In check mode nothing was written, so what would be written counts as changed.
            reasons = service.stale_reasons(props, item.get("binary"), files)
            reasons += ["%s was removed" % p for p in files if p in self.removed_paths]
            if self.check_mode:
                reasons += ["%s would change" % p for p in files if p in self.changed_paths]
            if reasons:
                if not self.check_mode:
                    self._must(["systemctl", "restart", name], "unit %s" % name)
                    self._ready(item)
                what.append("restarted (%s)" % "; ".join(reasons))
        if what:
            self._note("unit", name, what)
        # As it is after this pass (or would be, in check mode).
        self.unit_states[name] = {"started": "active", "stopped": "inactive"}.get(
            state, props.get("ActiveState") or "inactive")

    def _ready(self, item):
        argv = item.get("ready")
        if not argv:
            return
        deadline = time.monotonic() + int(item.get("ready_timeout") or 60)
        while True:
            rc, out, err = self.run(argv)
            if rc == 0:
                return
            if time.monotonic() > deadline:
                raise MooringError("unit %s: not ready within %ss (%s: %s)"
                                   % (item["name"], item.get("ready_timeout") or 60, " ".join(argv),
                                      (err or out).strip()[:300]))
            time.sleep(1)


def _diff(path, have, want):
    def lines(data):
        return (data or b"").decode("utf-8", "replace").splitlines(keepends=True)
    return {"before_header": path, "after_header": path,
            "before": "".join(lines(have)) if have is not None else "",
            "after": "".join(lines(want))}


def converge(params, run, check_mode=False, diff=False, root="/"):
    """Apply ``params`` (the host_state module's options); returns the result's fields."""
    state = HostState(run, check_mode=check_mode, diff=diff, root=root)
    exists = {p: os.path.exists(state._path(p)) for p in params.get("exists") or ()}
    missing = state.packages_missing(params.get("packages"))
    state.groups(params.get("groups"))
    state.users(params.get("users"))
    state.directories(params.get("directories"))
    state.files(params.get("files"))
    state.files(params.get("secrets"), secret=True)
    if params.get("sysctl_file"):  # what is set now is kept across reboots
        state.files([{"path": params["sysctl_file"], "mode": "0644",
                      "content": "".join("%s=%s\n" % kv for kv in (params.get("sysctl") or {}).items())}])
    state.sysctl(params.get("sysctl"))
    state.kernel_modules(params.get("kernel_modules"))
    if params.get("swap_off"):
        state.swap_off()
    state.units(params.get("units"))
    return dict(changes=state.changes, diffs=state.diffs, exists=exists, changed_files=state.changed_files,
                units=state.unit_states, stale=state.stale, packages_missing=missing)
