# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad lock files for ``mooring bundle build`` (ids ``lock-``).

The starting point is a real lock: ``inventories/example/installer.yaml`` resolved against the
collection's catalog (lock/resolve.py), once, with every artifact URL pointed at a file under the
case's tree so that nothing could reach the network. Each case edits it and, unless the case is
about the digest, RECOMPUTES the digest with lockfile's own function: the digest is no protection
against an edited lock, so only the shape check has to stop it. Every refusal happens before
anything is fetched or written (no cache directory, no signing key, no output), which the
harness's snapshot of the tree holds; escapes aimed outside the tree are listed in ``forbidden``.
"""

from __future__ import annotations

import copy
import os

from .harness import Case

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 6))
BUILD = ["bundle", "build", "{work}/lock.yaml", "-o", "{work}/out/bundle.tar", "--cache-dir", "{work}/cache",
         "--key", "{work}/k.key", "-q"]
UP = "../" * 40  # from the cache's build directory to / (the case's tree is never that deep)
_REAL = {}


def real_lock(work):
    """The example installer's lock, URLs rewritten to ``file://{work}/src/<add-on>/<file>``."""
    if "lock" not in _REAL:
        from ansible_collections.mooring.cluster.plugins.module_utils.lock.resolve import read_installer, resolve

        _REAL["lock"] = resolve(read_installer(path=os.path.join(ROOT, "inventories", "example", "installer.yaml")))
    lock = copy.deepcopy(_REAL["lock"])
    lock["metadata"]["name"] = "demo"  # the text edits below find the metadata by this line
    for name, addon in lock["addons"].items():
        for art in addon["artifacts"]:
            art["url"] = "file://%s/src/%s/%s" % (work, name, art["dest"])
    return lock


def write_lock(work, lock, recompute=True, text=None):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import dump_lock, lock_digest

    if recompute:
        lock["digest"] = lock_digest(lock)
    with open(os.path.join(work, "lock.yaml"), "w", encoding="utf-8") as handle:
        handle.write(text if text is not None else dump_lock(lock))


def edited(mutate, recompute=True):
    """A setup writing the real lock after ``mutate(lock)`` (digest recomputed)."""
    def setup(work):
        lock = real_lock(work)
        mutate(lock)
        write_lock(work, lock, recompute)
    return setup


def text_edited(replace):
    """A setup writing the real lock's YAML text after ``replace(text) -> text`` (a shape YAML
    gives that a dict with a recomputed digest cannot: keys that are not strings, tags)."""
    def setup(work):
        from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import dump_lock, lock_digest

        lock = real_lock(work)
        lock["digest"] = lock_digest(lock)
        write_lock(work, lock, False, replace(dump_lock(lock)))
    return setup


def rename(addon, new):
    def mutate(lock):
        lock["addons"][new] = lock["addons"].pop(addon)
    return mutate


def setter(path, value):
    """``lock[path[0]][path[1]]... = value`` (a list index is an int)."""
    def mutate(lock):
        target = lock
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def deleter(path):
    def mutate(lock):
        target = lock
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


RUNC = ("addons", "containerd", "artifacts", 1)  # kind binary, arch amd64, dest runc
CONTAINERD = ("addons", "containerd", "artifacts", 0)  # kind archive
IMAGE = ("addons", "kubernetes", "images", 0)
ESC = "/tmp/mooring-badinput-escape"

# (id, mutate, stderr regex, forbidden): the digest is recomputed after each edit.
EDITS = [
    # ---- names that become paths
    ("addon-key-escape-relative", rename("containerd", "../../../../outside/ADDON"),
     r"lock\.yaml: addons\.'\.\./\.\./\.\./\.\./outside/ADDON': must be a safe name \(letters", ()),
    ("addon-key-escape-absolute", rename("containerd", UP + "tmp/mooring-badinput-escape-addon"),
     r"lock\.yaml: addons\.'(\.\./)+.*: .*must be a safe name", (ESC + "-addon",)),
    ("addon-key-slash", rename("etcd", "et/cd"), r"addons\.'et/cd': must be a safe name", ()),
    ("addon-key-dotdot", rename("etcd", ".."), r"addons\.'\.\.': must be a safe name", ()),
    ("addon-key-dot", rename("etcd", "."), r"addons\.'\.': must be a safe name", ()),
    ("addon-key-empty", rename("etcd", ""), r"addons\.'': must be a safe name", ()),
    ("addon-key-absolute", rename("etcd", ESC + "-abs"), r"addons\.'/tmp/mooring-badinput-escape-abs': .*must be a safe name",
     (ESC + "-abs",)),
    ("addon-key-newline", rename("etcd", "etcd\nx"), r"addons\.'etcd\\nx': must be a safe name", ()),
    ("addon-key-long", rename("etcd", "e" * 5000), r"addons\.'e{20,}\.\.\.: .*must be a safe name", ()),
    ("arch-escape-relative", setter(RUNC + ("arch",), "../../../ESCAPED"),
     r"addons\.containerd\.artifacts\[1\]\.arch: must be a safe name .*, not '\.\./\.\./\.\./ESCAPED'", ()),
    ("arch-escape-absolute", setter(RUNC + ("arch",), UP + "tmp/mooring-badinput-escape-arch"),
     r"artifacts\[1\]\.arch: .*must be a safe name", (ESC + "-arch",)),
    ("arch-archive-escape", setter(CONTAINERD + ("arch",), "../../../../outside/arch"),
     r"artifacts\[0\]\.arch: .*must be a safe name", ()),
    ("dest-escape-relative", setter(RUNC + ("dest",), "../../../../outside/runc"),
     r"artifacts\[1\]\.dest: must be a relative path of safe file names .*, not '\.\./\.\./\.\./\.\./outside/runc' \('\.\.'\)", ()),
    ("dest-escape-absolute", setter(RUNC + ("dest",), ESC + "-dest"),
     r"artifacts\[1\]\.dest: must be a relative path, not '/tmp/mooring-badinput-escape-dest'", (ESC + "-dest",)),
    ("dest-dotdot", setter(RUNC + ("dest",), ".."), r"artifacts\[1\]\.dest: must be a relative path of safe file names", ()),
    ("dest-inner-dotdot", setter(RUNC + ("dest",), "bin/../../../x"), r"artifacts\[1\]\.dest: must be a relative path of safe file names",
     ()),
    ("dest-nul", setter(RUNC + ("dest",), "ru\x00nc"), r"artifacts\[1\]\.dest: must be a relative path of safe file names", ()),
    ("dest-backslash", setter(RUNC + ("dest",), "..\\..\\x"), r"artifacts\[1\]\.dest: must be a relative path of safe file names", ()),
    ("dest-int", setter(RUNC + ("dest",), 7), r"artifacts\[1\]\.dest: must be a non-empty string, not a number", ()),
    ("dest-from-url-dotdot", lambda lock: (setter(RUNC + ("dest",), None)(lock),
                                           setter(RUNC + ("url",), "file:///srv/runc/..")(lock)),
     r"artifacts\[1\]\.url: must be a URL ending in a safe file name \(else set 'dest'\), not 'file:///srv/runc/\.\.'", ()),
    ("dest-from-url-empty", lambda lock: (deleter(RUNC + ("dest",))(lock),
                                          setter(RUNC + ("url",), "https://example.invalid/")(lock)),
     r"artifacts\[1\]\.url: must be a URL ending in a safe file name", ()),
    ("artifact-name-escape", setter(RUNC + ("name",), "../../../outside/n"),
     r"artifacts\[1\]\.name: .*must be a safe name", ()),
    ("artifact-name-missing", deleter(RUNC + ("name",)), r"artifacts\[1\]\.name: must be a safe name .*, not None", ()),
    ("image-ref-escape", setter(IMAGE + ("ref",), "../../../../outside/img:1"),
     r"addons\.kubernetes\.images\[0\]\.ref: must be an image reference", ()),
    ("image-ref-absolute", setter(IMAGE + ("ref",), ESC + "-image:1"), r"images\[0\]\.ref: must be an image reference",
     (ESC + "-image",)),
    ("image-ref-dotdot-component", setter(IMAGE + ("ref",), "registry.k8s.io/../../x:1"),
     r"images\[0\]\.ref: must be an image reference \(no empty, '\.' or '\.\.' path component\)", ()),
    ("image-ref-option", setter(IMAGE + ("ref",), "--src-tls-verify=false"), r"images\[0\]\.ref: must be an image reference", ()),
    ("image-ref-space", setter(IMAGE + ("ref",), "registry.k8s.io/pause:3 x"), r"images\[0\]\.ref: must be an image reference", ()),
    ("image-ref-list", setter(IMAGE + ("ref",), ["a"]), r"images\[0\]\.ref: must be an image reference .*, not \['a'\]", ()),
    ("image-digest-bad", setter(IMAGE + ("digest",), "sha256:../x"), r"images\[0\]\.digest: .*sha256:<64 hex", ()),
    ("image-archive-url-scheme", setter(IMAGE + ("archive",), {"url": "gopher://x/y", "format": "oci-archive"}),
     r"images\[0\]\.archive\.url: must be a URL the bundle builder fetches \(https://, http://, file://\), not 'gopher://x/y'", ()),
    ("image-archive-format", setter(IMAGE + ("archive",), {"url": "file:///x.tar", "format": "../tar"}),
     r"images\[0\]\.archive\.format: must be one of oci-archive, docker-archive, not '\.\./tar'", ()),
    ("package-option-injection", setter(("addons", "kubernetes", "packages", "debian", 0), "-oDir::Cache=/tmp/x"),
     r"addons\.kubernetes\.packages\.debian\[0\]: must be a Debian package name, not '-oDir::Cache=/tmp/x'", ()),
    ("package-path", setter(("addons", "kubernetes", "packages", "debian", 0), "../../x.deb"),
     r"packages\.debian\[0\]: must be a Debian package name", ()),
    ("package-int", setter(("addons", "kubernetes", "packages", "debian", 0), 5),
     r"packages\.debian\[0\]: must be a Debian package name, not 5", ()),
    ("package-distro-escape", setter(("addons", "kubernetes", "packages"), {"../../outside": ["socat"]}),
     r"addons\.kubernetes\.packages\.'\.\./\.\./outside': .*must be a safe name", ()),
    ("control-plane-package-injection",
     setter(("addons", "kubernetes", "controlPlanePackages"), {"debian": ["--allow-unauthenticated"]}),
     r"controlPlanePackages\.debian\[0\]: must be a Debian package name", ()),
    ("version-escape", setter(("addons", "etcd", "version"), "../../../outside/v"),
     r"addons\.etcd\.version: .*must be a safe name", ()),
    ("version-float", setter(("addons", "etcd", "version"), 3.6), r"addons\.etcd\.version: must be a safe name .*, not 3\.6",
     ()),
    ("architectures-escape", setter(("architectures",), ["amd64", "../x"]),
     r"architectures\[1\]: must be a safe name .*, not '\.\./x'", ()),
    # ---- URLs
    ("url-ftp", setter(RUNC + ("url",), "ftp://example.invalid/runc"),
     r"artifacts\[1\]\.url: must be a URL the bundle builder fetches \(https://, http://, file://\), not 'ftp://example\.invalid/runc'", ()),
    ("url-relative-file", setter(RUNC + ("url",), "file://etc/passwd"),
     r"artifacts\[1\]\.url: must be a file:// URL with an absolute path", ()),
    ("url-bare-path", setter(RUNC + ("url",), "/etc/passwd"), r"artifacts\[1\]\.url: must be a URL the bundle builder fetches \(https://", ()),
    ("url-newline", setter(RUNC + ("url",), "https://example.invalid/runc\nHost: x"),
     r"artifacts\[1\]\.url: must be a URL without spaces or control characters", ()),
    ("url-missing", deleter(RUNC + ("url",)), r"artifacts\[1\]\.url: must be a non-empty string, not nothing \(null\)", ()),
    ("url-huge", setter(RUNC + ("url",), "https://example.invalid/" + "a" * 10000),
     r"artifacts\[1\]\.url: must be at most 4096 characters, not \d+", ()),
    ("sha256-not-hex", setter(RUNC + ("sha256",), "z" * 64), r"artifacts\[1\]\.sha256: must be a sha256", ()),
    ("size-negative", setter(RUNC + ("size",), -1), r"artifacts\[1\]\.size: must be a size in bytes .*, not -1", ()),
    ("size-string", setter(RUNC + ("size",), "1 GiB"), r"artifacts\[1\]\.size: must be a size in bytes .*, not '1 GiB'", ()),
    ("size-bool", setter(RUNC + ("size",), True), r"artifacts\[1\]\.size: must be a size in bytes .*, not True", ()),
    ("kind-unknown", setter(RUNC + ("kind",), "../bin"), r"artifacts\[1\]\.kind: must be one of .*, not '\.\./bin'", ()),
    # ---- wrong types for each top-level field (and the add-on's)
    ("addons-list", setter(("addons",), ["containerd"]), r"lock\.yaml: addons: must be a mapping, not a list", ()),
    ("addons-string", setter(("addons",), "containerd"), r"lock\.yaml: addons: must be a mapping, not a string", ()),
    ("addons-null", setter(("addons",), None), r"lock\.yaml: addons: must be a mapping, not nothing \(null\)", ()),
    ("architectures-string", setter(("architectures",), "amd64"), r"architectures: must be a list, not a string", ()),
    ("architectures-mapping", setter(("architectures",), {"amd64": 1}), r"architectures: must be a list, not a mapping",
     ()),
    ("hash-list", setter(("hash",), ["e5bf89a"]), r"lock\.yaml: hash: must be a non-empty string, not a list", ()),
    ("hash-empty", setter(("hash",), ""), r"lock\.yaml: hash: must be a non-empty string", ()),
    ("metadata-list", setter(("metadata",), ["demo"]), r"lock\.yaml: metadata: must be a mapping, not a list", ()),
    ("metadata-name-mapping", setter(("metadata", "name"), {"a": 1}), r"metadata\.name: must be a non-empty string", ()),
    ("spec-string", setter(("spec",), "kubernetes"), r"lock\.yaml: spec: must be a mapping, not a string", ()),
    ("api-version-mapping", setter(("apiVersion",), {"v": 1}), r"apiVersion: must be a non-empty string", ()),
    ("spec-digest-list", setter(("specDigest",), []), r"specDigest: must be a non-empty string, not a list", ()),
    ("addon-list", setter(("addons", "etcd"), ["3.6.14"]), r"addons\.etcd: must be a mapping, not a list", ()),
    ("addon-null", setter(("addons", "etcd"), None), r"addons\.etcd: must be a mapping, not nothing \(null\)", ()),
    ("addon-no-version", deleter(("addons", "etcd", "version")), r"addons\.etcd\.version: is missing", ()),
    ("artifacts-string", setter(("addons", "containerd", "artifacts"), "runc"),
     r"addons\.containerd\.artifacts: must be a list, not a string", ()),
    ("artifacts-mapping", setter(("addons", "containerd", "artifacts"), {"runc": {}}),
     r"addons\.containerd\.artifacts: must be a list, not a mapping", ()),
    ("artifact-string", setter(RUNC, "runc"), r"addons\.containerd\.artifacts\[1\]: must be a mapping, not a string",
     ()),
    ("images-mapping", setter(("addons", "kubernetes", "images"), {"ref": "x"}),
     r"addons\.kubernetes\.images: must be a list, not a mapping", ()),
    ("image-string", setter(IMAGE, "registry.k8s.io/pause:3.10"), r"images\[0\]: must be a mapping, not a string", ()),
    ("image-no-ref", deleter(IMAGE + ("ref",)), r"images\[0\]\.ref: must be an image reference .*, not None", ()),
    ("packages-list", setter(("addons", "kubernetes", "packages"), ["socat"]),
     r"addons\.kubernetes\.packages: must be a mapping, not a list", ()),
    ("packages-distro-string", setter(("addons", "kubernetes", "packages", "debian"), "socat"),
     r"addons\.kubernetes\.packages\.debian: must be a list, not a string", ()),
    ("options-list", setter(("addons", "kubernetes", "options"), ["x"]),
     r"addons\.kubernetes\.options: must be a mapping, not a list", ()),
]

CASES = [Case("lock-" + _id, BUILD, setup=edited(_mutate), stderr=_stderr, forbidden=_forbidden)
         for _id, _mutate, _stderr, _forbidden in EDITS]


def _digest_date(work):
    """``digest: 2024-01-01`` (unquoted: a date to YAML 1.1, which the lock reader keeps a string)."""
    text = _real_text(work)
    start = text.index("\ndigest: ") + len("\ndigest: ")
    write_lock(work, None, False, text[:start] + "2024-01-01" + text[start + 64:])


def _raw(text):
    def setup(work):
        with open(os.path.join(work, "lock.yaml"), "wb") as handle:
            handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
    return setup


def _real_text(work):
    from ansible_collections.mooring.cluster.plugins.module_utils.lock.lockfile import dump_lock, lock_digest

    lock = real_lock(work)
    lock["digest"] = lock_digest(lock)
    return dump_lock(lock)


def _encoded(encoding, bom=""):
    def setup(work):
        with open(os.path.join(work, "lock.yaml"), "wb") as handle:
            handle.write((bom + _real_text(work)).encode(encoding))
    return setup


def _latin1(work):
    text = _real_text(work).replace("name: demo", "name: caf\xe9")
    with open(os.path.join(work, "lock.yaml"), "wb") as handle:
        handle.write(text.encode("latin-1"))


def _nul(work):
    with open(os.path.join(work, "lock.yaml"), "wb") as handle:
        handle.write(_real_text(work).encode("utf-8") + b"\x00\x00")


def _huge(work):
    with open(os.path.join(work, "lock.yaml"), "wb") as handle:
        handle.write(_real_text(work).encode("utf-8"))
        handle.write(b"# padding\n" * (500 * 1024))


def _fifo(work):
    os.mkfifo(os.path.join(work, "lock.yaml"))


def _bomb():
    anchors = "".join("x%d: &a%d [%s]\n" % (i, i, ",".join(["*a%d" % (i - 1)] * 10) if i else ",".join(["v"] * 10))
                      for i in range(10))
    return anchors + "kind: InstallerLock\nmetadata: {name: demo, labels: *a9}\nhash: x\naddons: {}\n" \
        "architectures: [amd64]\ndigest: '%s'\n" % ("0" * 64)


def _valid(work):
    write_lock(work, real_lock(work))


def _valid_and(*paths):
    """The real lock, valid, plus ``paths`` under {work}: a file (``"f"``), a directory (``"d"``) or a FIFO."""
    def setup(work):
        _valid(work)
        for rel, kind in paths:
            full = os.path.join(work, rel)
            if kind == "d":
                os.makedirs(full)
            elif kind == "fifo":
                os.mkfifo(full)
            else:
                with open(full, "w") as handle:
                    handle.write("a file\n")
    return setup


def _argv(**swap):
    argv = list(BUILD)
    for flag, value in swap.items():
        flag = {"o": "-o", "cache": "--cache-dir", "key": "--key"}[flag]
        argv[argv.index(flag) + 1] = value
    return argv


CASES += [
    # ---- the digest, and YAML a recomputed digest cannot make
    Case("lock-digest-mismatch", BUILD, setup=edited(setter(RUNC + ("dest",), "../../x"), recompute=False),
         stderr=r"lock\.yaml: (digest mismatch|addons\.containerd\.artifacts\[1\]\.dest)"),
    Case("lock-digest-date", BUILD, setup=_digest_date,
         stderr=r"lock\.yaml: digest: must be a sha256 \(64 hex digits\), not '2024-01-01'"),
    Case("lock-date-value-edited", BUILD,
         setup=text_edited(lambda t: t.replace("name: demo", "name: demo\n  created: 2024-01-01T10:00:00Z")),
         stderr=r"lock\.yaml: digest mismatch \(recorded [0-9a-f]{64}, content [0-9a-f]{64}\)"),
    Case("lock-digest-missing", BUILD, setup=edited(deleter(("digest",)), recompute=False),
         stderr=r"lock\.yaml: digest: is missing"),
    Case("lock-addons-missing", BUILD, setup=edited(deleter(("addons",))), stderr=r"lock\.yaml: addons: is missing"),
    Case("lock-kind-wrong", BUILD, setup=edited(setter(("kind",), "Installer")),
         stderr=r"lock\.yaml: not an installer lock \(kind must be InstallerLock\)"),
    Case("lock-int-addon-key", BUILD, setup=text_edited(lambda t: t.replace("\n  etcd:\n", "\n  7:\n", 1)),
         stderr=r"lock\.yaml: addons\[7\]: must be a key that is a string, not a number"),
    Case("lock-null-key", BUILD, setup=text_edited(lambda t: t.replace("\n  name: demo", "\n  name: demo\n  ~: x", 1)),
         stderr=r"lock\.yaml: metadata\.None: must be a key that is a string, not nothing \(null\)"),
    Case("lock-binary-value", BUILD,
         setup=text_edited(lambda t: t.replace("\n  name: demo", "\n  name: demo\n  blob: !!binary aGVsbG8=", 1)),
         stderr=r"lock\.yaml: metadata\.blob: must be a JSON value, not a bytes"),
    Case("lock-set-value", BUILD,
         setup=text_edited(lambda t: t.replace("\n  name: demo", "\n  name: demo\n  s: !!set {a: null}", 1)),
         stderr=r"lock\.yaml: metadata\.s: must be a JSON value, not a set"),
    Case("lock-python-tag", BUILD,
         setup=text_edited(lambda t: t.replace("name: demo", "name: !!python/object/apply:os.system [id]", 1)),
         stderr=r"lock\.yaml:? (is )?not valid YAML: could not determine a constructor"),
    Case("lock-single-alias", BUILD,
         setup=text_edited(lambda t: t.replace("name: demo", "name: &n demo\n  other: *n", 1)),
         stderr=r"lock\.yaml: aliases \(\*name\) are not allowed here"),
    Case("lock-alias-bomb-metadata", BUILD, setup=_raw(_bomb()), stderr=r"lock\.yaml: aliases \(\*name\) are not allowed"),
    Case("lock-two-documents", BUILD, setup=text_edited(lambda t: t + "---\n" + t),
         stderr=r"lock\.yaml:? (is )?not valid YAML: (expected a single document|but found another document)"),
    Case("lock-bad-yaml", BUILD, setup=_raw("kind: InstallerLock\naddons: {etcd: [\n"),
         stderr=r"lock\.yaml:? (is )?not valid YAML"),
    Case("lock-duplicate-key", BUILD, setup=text_edited(lambda t: t + "hash: abc\n"),
         stderr=r"lock\.yaml:? ((is )?not valid YAML: found duplicated mapping key|digest mismatch)"),
    Case("lock-top-level-list", BUILD, setup=_raw("- kind: InstallerLock\n"),
         stderr=r"lock\.yaml: not an installer lock"),
    Case("lock-top-level-scalar", BUILD, setup=_raw("InstallerLock\n"), stderr=r"lock\.yaml: not an installer lock"),
    # ---- the file itself
    Case("lock-not-utf8", BUILD, setup=_latin1, stderr=r"lock\.yaml: not UTF-8 \(byte 0xe9 at offset \d+\)"),
    Case("lock-utf16", BUILD, setup=_encoded("utf-16"), stderr=r"lock\.yaml: UTF-16/32 text is not supported"),
    Case("lock-utf16-le-bom", BUILD, setup=_encoded("utf-16-le", "\ufeff"),
         stderr=r"lock\.yaml: UTF-16/32 text is not supported"),
    Case("lock-nul-bytes", BUILD, setup=_nul, stderr=r"lock\.yaml: NUL byte at offset \d+; not a text file"),
    Case("lock-deep-nesting", BUILD,
         setup=_raw("kind: InstallerLock\nmetadata: " + "[" * 10000 + "]" * 10000 + "\n"),
         stderr=r"lock\.yaml: nested deeper than 64 levels"),
    Case("lock-huge-file", BUILD, setup=_huge, stderr=r"lock\.yaml: \d+ bytes; the limit is 1048576"),
    Case("lock-empty-file", BUILD, files={"lock.yaml": b""}, stderr=r"lock\.yaml: not an installer lock"),
    Case("lock-directory", BUILD, files={"lock.yaml": None}, stderr=r"lock\.yaml: cannot read the lock file: Is a directory"),
    Case("lock-fifo", BUILD, setup=_fifo, stderr=r"lock\.yaml: not a regular file"),
    Case("lock-dev-zero", ["bundle", "build", "/dev/zero", "-o", "{work}/out/b.tar", "--cache-dir", "{work}/cache",
                           "--key", "{work}/k.key"], stderr=r"/dev/zero: not a regular file"),
    Case("lock-missing", BUILD, stderr=r"lock\.yaml: cannot read the lock file: No such file or directory"),
    # ---- -o, --cache-dir and --key that cannot be written: refused before anything is fetched or written
    Case("lock-output-onto-directory", _argv(o="{work}/outdir"), setup=_valid_and(("outdir", "d")),
         stderr=r"output .*/outdir: is a directory; name the bundle file to write"),
    Case("lock-output-below-file", _argv(o="{work}/afile/bundle.tar"), setup=_valid_and(("afile", "f")),
         stderr=r"output .*/afile/bundle\.tar: .*/afile is not a directory"),
    Case("lock-output-missing-dir-below-file", _argv(o="{work}/afile/new/dir/bundle.tar"),
         setup=_valid_and(("afile", "f")), stderr=r"output .*/afile/new/dir/bundle\.tar: .*/afile is not a directory"),
    Case("lock-output-onto-fifo", _argv(o="{work}/pipe"), setup=_valid_and(("pipe", "fifo")),
         stderr=r"output .*/pipe: exists and is not a regular file"),
    Case("lock-cache-dir-is-file", _argv(cache="{work}/afile"), setup=_valid_and(("afile", "f")),
         stderr=r"cache directory .*/afile is not a directory"),
    Case("lock-cache-dir-below-file", _argv(cache="{work}/afile/cache"), setup=_valid_and(("afile", "f")),
         stderr=r"cache directory .*/afile is not a directory"),
    Case("lock-key-is-directory", _argv(key="{work}/keydir"), setup=_valid_and(("keydir", "d")),
         stderr=r"signing key .*/keydir: not a regular file"),
    Case("lock-key-is-fifo", _argv(key="{work}/k.key"), setup=_valid_and(("k.key", "fifo")),
         stderr=r"signing key .*/k\.key: not a regular file"),
    Case("lock-key-not-a-key", _argv(key="{work}/k.key"), setup=_valid_and(("k.key", "f")),
         stderr=r"signing key .*/k\.key: cannot load it"),
    Case("lock-unknown-addon", BUILD + ["--addon", "../../x"], setup=_valid,
         stderr=r"addons: '\.\./\.\./x' not in the lock"),
]
