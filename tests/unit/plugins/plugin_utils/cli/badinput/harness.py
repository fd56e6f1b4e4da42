# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bad-input harness: one CLI run per case, in a forked child with a memory cap and a
time limit, against a scratch tree whose every file is compared before and after.

A case says which files to lay out (relative to ``{work}``), the ``mooring`` arguments
(``{work}`` and ``{root}`` are substituted), the exit codes it may end with (1, or 2 for
usage) and which paths under ``{root}`` it may write. The run then holds to:

- the child ends by itself with an allowed exit code; an exception that reaches the top,
  a signal, the time limit (``TIME_LIMIT`` seconds of the child's CPU time, so that a busy
  machine cannot fail a case; ``HANG_LIMIT`` wall seconds only stop a child that waits on
  something) or the memory bound is a failure. ``MEMORY_LIMIT`` is what a case may add to
  the child it forks as: its address space is capped there (RLIMIT_AS) and its peak resident
  set (ru_maxrss) may not grow past what it started with by more;
- no ``Traceback`` on either stream, at most ``MAX_LINES`` lines of at most ``MAX_LINE``
  characters on stderr (messages never embed unbounded values);
- nothing under ``{root}`` (the case's whole tree, ``{work}`` and its sibling
  ``outside/``) was created, changed or removed unless the case lists it in ``writes``;
  ``forbidden`` names absolute paths outside the tree that must not appear.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import resource
import signal
import sys
import time
import traceback

from . import entries

TIME_LIMIT = 2  # CPU seconds
HANG_LIMIT = 120  # wall seconds
MEMORY_LIMIT = 200 << 20  # bytes a case may add to what the forked child starts with
MAX_LINES = 40
MAX_LINE = 1000
INTERNAL = 99  # the child's exit code when an exception escaped main()


class Case:
    """One bad input. ``files`` maps a path under ``{work}`` to bytes or str (written as
    UTF-8), or to ``None`` for a directory; ``setup(work)`` may lay out anything else.
    ``entry`` names a surface of entries.py the CLI does not reach (its ``argv`` are then that
    entry's paths); ``stdout`` is a pattern stdout must match, ``absent`` strings that must
    appear in neither stream, and ``check(work, stdout)`` asserts anything else afterwards
    (the archive a case was allowed to write, say)."""

    def __init__(self, id, argv, files=None, setup=None, exit=(1,), writes=(), stderr=None,
                 forbidden=(), env=None, entry=None, stdout=None, absent=(), check=None):
        self.id = id
        self.entry = entry
        self.stdout = stdout
        self.absent = tuple(absent)
        self.check = check
        self.argv = list(argv)
        self.files = dict(files or {})
        self.setup = setup
        self.exit = tuple(exit)
        self.writes = tuple(writes)
        self.stderr = stderr
        self.forbidden = tuple(forbidden)
        self.env = dict(env or {})

    def __repr__(self):
        return "Case(%s)" % self.id


def lay_out(case, root):
    work = os.path.join(root, "work")
    for d in (work, os.path.join(root, "outside"), os.path.join(root, "home")):
        os.makedirs(d, exist_ok=True)
    for rel, content in case.files.items():
        path = os.path.join(work, rel)
        if content is None:
            os.makedirs(path, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(content.encode("utf-8") if isinstance(content, str) else content)
    if case.setup is not None:
        case.setup(work)
    return work


def snapshot(root):
    """Every entry under root: its kind, mode and (for files) sha256, by relative path."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if os.path.islink(full):
                seen[rel] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                seen[rel] = ("dir", st.st_mode & 0o7777)
            elif os.path.isfile(full):
                with open(full, "rb") as handle:
                    seen[rel] = ("file", st.st_mode & 0o7777, hashlib.sha256(handle.read()).hexdigest())
            else:
                seen[rel] = ("special", st.st_mode)
    return seen


def _status_kib(field, pid="self"):
    """One ``kB`` field of /proc/PID/status (``VmSize``, ``VmRSS``), in KiB."""
    with open("/proc/%s/status" % pid) as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%s/status" % (field, pid))


def _child(argv, env, out_fd, err_fd, entry, start_fd):  # pragma: no cover - runs in the forked child
    try:
        # Its resident set as it starts (a forked child maps less than its parent: file-backed pages fault in
        # again), which the peak it reaches is measured from.
        os.write(start_fd, b"%d" % _status_kib("VmRSS"))
        os.close(start_fd)
        limit = _status_kib("VmSize") * 1024 + MEMORY_LIMIT
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8", errors="replace")
        sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8", errors="replace",
                                      write_through=True)
        sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
        os.environ.update(env)
        if entry is None:
            from ansible_collections.mooring.cluster.plugins.plugin_utils.cli.main import main
            code = main(argv)
        else:
            code = entries.main([entry] + argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BaseException:  # noqa: BLE001 - the harness reports whatever escaped
        sys.stderr.write(traceback.format_exc())
        code = INTERNAL
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _cpu_seconds(pid):
    """User + system CPU time of a running child so far (/proc/PID/stat), 0 when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _record(case_id, seconds, grown):
    """Append the case's CPU seconds and memory growth to ``$MOORING_BADINPUT_COSTS`` (TSV)."""
    path = os.environ.get("MOORING_BADINPUT_COSTS")
    if path:
        with open(path, "a") as handle:
            handle.write("%s\t%.3f\t%.1f\n" % (case_id, seconds, grown / 1048576.0))


def run(case, root):
    """Lay out, run and check one case; returns (code, stdout, stderr, CPU seconds)."""
    work = lay_out(case, str(root))
    subst = {"work": work, "root": str(root)}
    argv = [a.format(**subst) for a in case.argv]
    env = {"MOORING_CACHE_DIR": os.path.join(work, "cache"), "HOME": os.path.join(str(root), "home")}
    env.update({k: v.format(**subst) for k, v in case.env.items()})
    before = snapshot(str(root))
    forbidden_before = {p: os.path.lexists(p) for p in case.forbidden}
    out_path = os.path.join(str(root), ".out")
    err_path = os.path.join(str(root), ".err")
    cwd = os.getcwd()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        sys.stdout.flush()
        sys.stderr.flush()
        start = time.monotonic()
        start_read, start_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover
            os.chdir(work)
            os.close(start_read)
            _child(argv, env, out.fileno(), err.fileno(), case.entry, start_write)
        os.close(start_write)
        with os.fdopen(start_read, "rb") as handle:
            rss_at_start = int(handle.read() or b"0")  # the child writes it first thing
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                seconds = usage.ru_utime + usage.ru_stime
                grown = max(0, usage.ru_maxrss - rss_at_start) * 1024
                break
            cpu = _cpu_seconds(pid)
            if cpu > TIME_LIMIT or time.monotonic() - start > HANG_LIMIT:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise AssertionError("%s: still running after %.1f CPU seconds (%.0f s wall)"
                                     % (case.id, cpu, time.monotonic() - start))
            time.sleep(0.005)
        assert seconds <= TIME_LIMIT, "%s: %.1f CPU seconds (limit %d)" % (case.id, seconds, TIME_LIMIT)
        assert grown <= MEMORY_LIMIT, "%s: grew by %d MiB (limit %d)" % (case.id, grown >> 20, MEMORY_LIMIT >> 20)
    _record(case.id, seconds, grown)
    os.chdir(cwd)
    with open(out_path, "rb") as handle:
        stdout = handle.read().decode("utf-8", "replace")
    with open(err_path, "rb") as handle:
        stderr = handle.read().decode("utf-8", "replace")
    os.unlink(out_path)
    os.unlink(err_path)
    after = snapshot(str(root))
    assert os.WIFEXITED(status), "%s: ended by signal %d\n%s" % (case.id, os.WTERMSIG(status), stderr[-2000:])
    code = os.WEXITSTATUS(status)
    assert "Traceback" not in stderr and "Traceback" not in stdout, "%s: traceback\n%s" % (case.id, stderr[-4000:])
    assert code in case.exit, "%s: exit %d, expected %s\n%s" % (case.id, code, case.exit, stderr[-2000:])
    lines = stderr.splitlines()
    assert len(lines) <= MAX_LINES, "%s: %d lines on stderr" % (case.id, len(lines))
    long = [ln for ln in lines if len(ln) > MAX_LINE]
    assert not long, "%s: a %d-character line on stderr: %s..." % (case.id, len(long[0]), long[0][:200])
    if case.stderr is not None:
        assert re.search(case.stderr, stderr), "%s: stderr does not match %r:\n%s" % (case.id, case.stderr, stderr)
    if case.stdout is not None:
        assert re.search(case.stdout, stdout), "%s: stdout does not match %r:\n%s" % (case.id, case.stdout, stdout[-2000:])
    leaked = [s for s in case.absent if s in stdout or s in stderr]
    assert not leaked, "%s: printed %s" % (case.id, leaked)
    allowed = tuple(os.path.normpath(w.format(work="work", root=".")) for w in case.writes)
    changed = sorted(p for p in set(before) | set(after)
                     if before.get(p) != after.get(p) and not any(p == a or p.startswith(a + os.sep) for a in allowed))
    assert not changed, "%s: wrote %s" % (case.id, changed[:10])
    appeared = [p for p, was in forbidden_before.items() if not was and os.path.lexists(p)]
    assert not appeared, "%s: wrote outside its tree: %s" % (case.id, appeared)
    if case.check is not None:
        case.check(work, stdout)
    return code, stdout, stderr, seconds
