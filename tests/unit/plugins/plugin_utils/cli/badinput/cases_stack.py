# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad cluster stacks and export outputs for ``mooring stack version [--check]`` and
``mooring stack export`` (ids ``stack-``).

Good stacks are the fixtures (tests/data/stacks: the seed and csctl layouts; stacks/: ours),
copied into ``{work}`` by each case's setup; each case then breaks one thing. ``stack version``
writes in place, so every refused stack must be left byte for byte (the harness's snapshot).
Export cases run a stand-in for helm written into ``{work}`` (``stack export --helm``): most
fail before it would run, and the stand-in that must not run leaves a mark if it does (the
snapshot would show it); the others print what a broken helm could print.
"""

from __future__ import annotations

import os
import shutil

from .harness import Case

_HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(_HERE, "..", "..", "..", "..", "..", ".."))
SEED = os.path.join(ROOT, "tests", "data", "stacks", "seed", "providers")
CSCTL = os.path.join(ROOT, "tests", "data", "stacks", "csctl", "providers")
OURS = os.path.join(ROOT, "stacks", "openstack", "default", "1-34")

S = "providers/openstack/alpha/1-28"  # the seed stack, under {work}
C = "providers/openstack/scs"  # the csctl stack
M = "stacks/openstack/default/1-34"  # ours

# helm stand-ins: the first must not run (it leaves helm-ran behind); the others print one
# ClusterClass named <release>-<chart version> (what the charts do), or something broken.
HELM_MUST_NOT_RUN = "#!/bin/sh\ntouch \"$(dirname \"$0\")/helm-ran\"\nexit 1\n"
HELM_GOOD = ("#!/bin/sh\nver=$(sed -n 's/^version: *//p' \"$3/Chart.yaml\" | tr -d '\"')\n"
             "printf -- '---\\napiVersion: cluster.x-k8s.io/v1beta1\\nkind: ClusterClass\\nmetadata:\\n  name: %s-%s\\n' \"$2\" \"$ver\"\n")


def helm_printing(body):
    return "#!/bin/sh\n" + body


def _copy(src, dest):
    def setup(work):
        shutil.copytree(src, os.path.join(work, dest), symlinks=True)
    return setup


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def _helm(work, script):
    path = os.path.join(work, "helm")
    _write(path, script)
    os.chmod(path, 0o755)  # noqa: S103 - an executable stand-in for helm


def alias_bomb(levels=9, width=10):
    lines = ["a0: &a0 [%s]" % ",".join(["x"] * width)]
    lines += ["a%d: &a%d [%s]" % (i, i, ",".join(["*a%d" % (i - 1)] * width)) for i in range(1, levels + 1)]
    return "\n".join(lines) + "\nversions: *a%d\n" % levels


META = ("apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions:\n  clusterStack: v2\n  kubernetes: v1.28.6\n"
        "  components:\n    clusterAddon: v2\n    nodeImage: v1\n")


def seed(mutate=None, helm=None, also=None):
    """Setup: the seed stack at {work}/providers/..., ``mutate(stack_dir)``, a helm stand-in."""
    def setup(work):
        shutil.copytree(SEED, os.path.join(work, "providers"), symlinks=True)
        if also is not None:
            also(work)
        if mutate is not None:
            mutate(os.path.join(work, S))
        if helm is not None:
            _helm(work, helm)
    return setup


def put(rel, data):
    def mutate(stack):
        _write(os.path.join(stack, rel), data)
    return mutate


def edit(rel, old, new):
    def mutate(stack):
        with open(os.path.join(stack, rel), "rb") as f:
            text = f.read().decode("utf-8")
        assert old in text, (rel, old)
        _write(os.path.join(stack, rel), text.replace(old, new))
    return mutate


def _fifo(rel):
    def mutate(stack):
        os.mkfifo(os.path.join(stack, rel))
    return mutate


def _symlink(rel, target):
    def mutate(stack):
        os.symlink(target, os.path.join(stack, rel))
    return mutate


def _rename_dir(old, new):
    def setup(work):
        shutil.copytree(SEED, os.path.join(work, "providers"), symlinks=True)
        os.rename(os.path.join(work, "providers", "openstack", old), os.path.join(work, "providers", "openstack", new))
    return setup


# (id, mutation of the seed stack, stderr regex): refused by `stack version`, the stack left as it was.
SEED_BREAKS = [
    ("metadata-list", put("metadata.yaml", "- a\n- b\n"), r"1-28/metadata.yaml: must be a mapping"),
    ("metadata-string", put("metadata.yaml", "hello\n"), r"1-28/metadata.yaml: must be a mapping"),
    ("metadata-empty", put("metadata.yaml", ""), r"1-28/metadata.yaml: must be a mapping"),
    ("components-list", put("metadata.yaml", META.replace("  components:\n    clusterAddon: v2\n    nodeImage: v1\n",
                                                          "  components: [1]\n")),
     r"metadata.yaml: versions.components: must be a mapping \(clusterAddon, nodeImage\), not a list"),
    ("components-int-key", put("metadata.yaml", META + "    1: v1\n"),
     r"metadata.yaml: versions.components\[1\]: is not a known field \(known: clusterAddon, nodeImage\)"),
    ("versions-string", put("metadata.yaml", "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions: x\n"),
     r"metadata.yaml: versions: must be a mapping \(clusterStack, kubernetes, components\), not a string"),
    ("versions-list", put("metadata.yaml", "apiVersion: metadata.clusterstack.x-k8s.io/v1alpha1\nversions: [v1, v2]\n"),
     r"metadata.yaml: versions: must be a mapping \(clusterStack, kubernetes, components\), not a list"),
    ("cluster-stack-int", edit("metadata.yaml", "clusterStack: v2", "clusterStack: 2"),
     r"metadata.yaml: versions.clusterStack: must be v<N> \(v1, v2, \.\.\.\) or v0-sha\.<hash>, not 2"),
    ("cluster-stack-map", edit("metadata.yaml", "clusterStack: v2", "clusterStack: {v: 2}"),
     r"metadata.yaml: versions.clusterStack: must be v<N> \(v1, v2, \.\.\.\) or v0-sha\.<hash>, not \{'v': 2\}"),
    ("cluster-stack-newline", edit("metadata.yaml", "clusterStack: v2", 'clusterStack: "v2\\n"'),
     r"metadata.yaml: versions.clusterStack: must be v<N> \(v1, v2, \.\.\.\) or v0-sha\.<hash>, not 'v2\\n'"),
    ("cluster-stack-huge", edit("metadata.yaml", "clusterStack: v2", "clusterStack: v" + "9" * 100000),
     r"metadata.yaml: versions.clusterStack: must be v<N> \(v1, v2, \.\.\.\) or v0-sha\.<hash>, not 'v9{20,80}\.\.\.$"),
    ("kubernetes-float", edit("metadata.yaml", "kubernetes: v1.28.6", "kubernetes: 1.28"),
     r"metadata.yaml: versions.kubernetes: must be vX.Y.Z, not 1.28"),
    ("kubernetes-date", edit("metadata.yaml", "kubernetes: v1.28.6", "kubernetes: 2024-01-01"),
     r"metadata.yaml: versions.kubernetes: must be vX.Y.Z, not '2024-01-01'"),
    ("metadata-utf16", put("metadata.yaml", ("\ufeff" + META).encode("utf-16-le")), r"1-28/metadata.yaml: UTF-16/32 text"),
    ("metadata-utf16-no-bom", put("metadata.yaml", META.encode("utf-16-le")), r"1-28/metadata.yaml: NUL byte at offset 1"),
    ("metadata-latin1", put("metadata.yaml", (META + "# caf\xe9\n").encode("latin-1")),
     r"1-28/metadata.yaml: not UTF-8 \(byte 0xe9 at offset"),
    ("metadata-alias-bomb", put("metadata.yaml", alias_bomb()), r"1-28/metadata.yaml: aliases \(\*name\) are not allowed"),
    ("metadata-one-alias", put("metadata.yaml", "x: &v v2\n" + META.replace("clusterStack: v2", "clusterStack: *v")),
     r"1-28/metadata.yaml: aliases \(\*name\) are not allowed"),
    ("metadata-deep", put("metadata.yaml", "versions: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n"),
     r"1-28/metadata.yaml: nested deeper than 64"),
    ("metadata-too-large", put("metadata.yaml", META + "#" * (2 << 20) + "\n"), r"1-28/metadata.yaml: \d+ bytes; the limit is"),
    ("metadata-bad-yaml", put("metadata.yaml", "versions: [\n"), r"1-28/metadata.yaml is not valid YAML"),
    ("release-components-list", edit("release.yaml", "  components:\n    clusterAddon: v2\n    nodeImage: v1\n",
                                     "  components: [1]\n"),
     r"release.yaml: versions.components: must be a mapping, not a list"),
    ("release-hash-int", edit("release.yaml", "  clusterClass: sha256:", "  clusterClass: 5\n  x: sha256:"),
     r"release.yaml: hashes.clusterClass: must be sha256:<hex>, not a number"),
    ("release-alias", put("release.yaml", "kind: &k StackRelease\nother: *k\n"), r"1-28/release.yaml: aliases \(\*name\)"),
    ("release-list", put("release.yaml", "- kind\n"), r"release.yaml: must be a mapping \(kind StackRelease, versions, hashes\), not a list"),
    ("release-directory", lambda st: (os.unlink(os.path.join(st, "release.yaml")), os.mkdir(os.path.join(st, "release.yaml"))),
     r"1-28/release.yaml: is a directory, not a file"),
    ("chart-utf16", put("cluster-class/Chart.yaml", "\ufeffapiVersion: v2\nname: x\nversion: v2\n".encode("utf-16-le")),
     r"cluster-class/Chart.yaml: UTF-16/32 text"),
    ("chart-latin1", put("cluster-class/Chart.yaml", "apiVersion: v2\nname: caf\xe9\nversion: v2\n".encode("latin-1")),
     r"cluster-class/Chart.yaml: not UTF-8 \(byte 0xe9"),
    ("template-utf32", put("cluster-class/templates/x.yaml", "\ufeffkind: X\n".encode("utf-32")),
     r"cluster-class/templates/x.yaml: UTF-16/32 text"),
    ("file-name-not-utf8", put("cluster-class/a\udcffb.yaml", "x: 1\n"),
     r"1-28/cluster-class: the file name b'a\\xffb.yaml' is not printable UTF-8"),
    ("dir-name-not-utf8", put("node-images/\udcfe\udcfd/x.yaml", "x: 1\n"),
     r"1-28/node-images: the directory name b'\\xfe\\xfd' is not printable UTF-8"),
    ("file-name-newline", put("cluster-addon/a\nb.yaml", "x: 1\n"), r"1-28/cluster-addon: the file name b'a\\nb.yaml' is not printable"),
    ("file-name-escape", put("cluster-addon/\x1b[2J.yaml", "x: 1\n"), r"the file name b'\\x1b\[2J.yaml' is not printable"),
    ("fifo", _fifo("cluster-class/values.fifo"), r"cluster-class/values.fifo: a FIFO, device or socket"),
    ("symlink-target-not-utf8", _symlink("cluster-class/l.yaml", "/tmp/\udcff"),
     r"cluster-class/l.yaml: a symlink \(to b'/tmp/\\xff'\); a stack holds only files and directories"),
]

CSCTL_BREAKS = [
    ("csctl-name-dotdot", ("clusterStackName: scs", "clusterStackName: ../../x"),
     r"csctl.yaml: config.clusterStackName: must be a lower-case DNS label, not '\.\./\.\./x'"),
    ("csctl-name-newline", ("clusterStackName: scs", 'clusterStackName: "scs\\n"'),
     r"csctl.yaml: config.clusterStackName: must be a lower-case DNS label, not 'scs\\n'"),
    ("csctl-name-long", ("clusterStackName: scs", "clusterStackName: " + "s" * 300),
     r"csctl.yaml: config.clusterStackName: must be a lower-case DNS label, not 's{20,80}\.\.\.$"),
    ("csctl-provider-slash", ("type: openstack", "type: open/stack"),
     r"csctl.yaml: config.provider.type: must be a lower-case DNS label, not 'open/stack'"),
    ("csctl-kubernetes-int", ("kubernetesVersion: v1.32.7", "kubernetesVersion: 132"),
     r"csctl.yaml: config.kubernetesVersion: must be vX.Y.Z, not 132"),
]


def _csctl(old, new):
    def setup(work):
        shutil.copytree(CSCTL, os.path.join(work, "providers"), symlinks=True)
        path = os.path.join(work, C, "csctl.yaml")
        with open(path) as f:
            text = f.read()
        assert old in text, old
        _write(path, text.replace(old, new))
    return setup


def _csctl_file(data):
    def setup(work):
        shutil.copytree(CSCTL, os.path.join(work, "providers"), symlinks=True)
        _write(os.path.join(work, C, "csctl.yaml"), data)
    return setup


def _two_seeds(second, alpha_due=True, helm=None):
    """Two seed stacks: alpha (with a content change: a bump is due, unless not ``alpha_due``)
    and beta, broken by ``second``."""
    def setup(work):
        shutil.copytree(SEED, os.path.join(work, "providers"), symlinks=True)
        beta = os.path.join(work, "providers", "openstack", "beta", "1-28")
        shutil.copytree(os.path.join(work, S), beta, symlinks=True)
        _recorded(work, beta)  # its own name is in its ClusterClass names now
        if alpha_due:
            _write(os.path.join(work, S, "cluster-class", "values.yaml"), "# tuned\n")
        second(beta)
        if helm is not None:
            _helm(work, helm)
    return setup


def _recorded(work, stack_dir):
    """Record a stack's current content (so that the export gets past the version check to what a case breaks)."""
    from ansible_collections.mooring.cluster.plugins.module_utils.infra import stackbump, stacks  # noqa: PLC0415

    stackbump.apply_versions(stackbump.plan_versions(stacks.Stack(os.path.join(work, stack_dir))))


def _ours(mutate=None, helm=None):
    def setup(work):
        shutil.copytree(OURS, os.path.join(work, M), symlinks=True)
        if mutate is not None:
            mutate(os.path.join(work, M))
        if helm is not None:
            _helm(work, helm)
    return setup


OUTSIDE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot for any export\n-----END OPENSSH PRIVATE KEY-----\n"
LINK = r": a symlink \(to %s\); a stack holds only files and directories, so that nothing outside it reaches"


def _outside(work, name="id_ed25519"):
    """A private key in the case's ``outside/`` (the snapshot covers it: it must stay unread and unchanged)."""
    path = os.path.join(os.path.dirname(work), "outside", name)
    _write(path, OUTSIDE_KEY)
    return path


def _linked(base, stack, rel, target, record=False, helm=None):
    """Setup: the stack ``stack`` (copied by ``base(work)``) with ``rel`` a symlink to ``target``
    (``{secret}``: a private key in ``outside/``, ``{outside}``: that directory); with ``record``,
    the stack's content is recorded first, so that only the link stands in the way."""
    def setup(work):
        base(work)
        if record:
            _recorded(work, stack)
        path = os.path.join(work, stack, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target.format(secret=_outside(work), outside=os.path.dirname(_outside(work))), path)
        if helm is not None:
            _helm(work, helm)
    return setup


def _seed_tree(work):
    shutil.copytree(SEED, os.path.join(work, "providers"), symlinks=True)


def _csctl_tree(work):
    shutil.copytree(CSCTL, os.path.join(work, "providers"), symlinks=True)


def _ours_tree(work):
    shutil.copytree(OURS, os.path.join(work, M), symlinks=True)


def _replaced_by_link(base, stack, rel):
    """Setup: ``rel`` of the stack moved to ``outside/`` and a symlink to it left in its place."""
    def setup(work):
        base(work)
        path = os.path.join(work, stack, rel)
        moved = os.path.join(os.path.dirname(work), "outside", os.path.basename(rel))
        shutil.move(path, moved)
        os.symlink(moved, path)
    return setup


def _link_loop(work):
    _seed_tree(work)
    os.symlink("loop.yaml", os.path.join(work, S, "cluster-class", "loop.yaml"))


# (id, argv after "stack", setup, stderr regex): a symlink anywhere in a stack is refused, naming the link.
LINK_CASES = [
    ("version-link-template-to-key", ["version", "{work}/" + S],
     _linked(_seed_tree, S, "cluster-class/templates/key.yaml", "{secret}"),
     r"1-28/cluster-class/templates/key.yaml" + LINK % r"/.*/outside/id_ed25519"),
    ("version-link-dir-to-outside", ["version", "{work}/" + S],
     _linked(_seed_tree, S, "cluster-class/files", "{outside}"), r"1-28/cluster-class/files" + LINK % r"/.*/outside"),
    ("version-link-dot-name", ["version", "{work}/" + S],
     _linked(_seed_tree, S, "cluster-class/.key", "{secret}"), r"1-28/cluster-class/\.key" + LINK % r"/.*/id_ed25519"),
    ("version-link-in-dot-dir", ["version", "{work}/" + S],
     _linked(_seed_tree, S, "cluster-class/.hidden/key", "{secret}"), r"cluster-class/\.hidden/key" + LINK % r"/.*/id_ed25519"),
    ("version-link-inside-stack", ["version", "{work}/" + S],
     _linked(_seed_tree, S, "cluster-class/values-copy.yaml", "values.yaml"), r"cluster-class/values-copy.yaml" + LINK % "values.yaml"),
    ("version-link-dangling", ["version", "{work}/" + S],
     _linked(_seed_tree, S, "node-images/x.yaml", "/nonexistent/x.yaml"), r"node-images/x.yaml" + LINK % "/nonexistent/x.yaml"),
    ("version-link-loop", ["version", "{work}/" + S], _link_loop, r"cluster-class/loop.yaml" + LINK % "loop.yaml"),
    ("version-link-metadata", ["version", "{work}/" + S], _replaced_by_link(_seed_tree, S, "metadata.yaml"),
     r"1-28/metadata.yaml" + LINK % r"/.*/outside/metadata.yaml"),
    ("version-check-link-below", ["version", "{work}/providers", "--check"],
     _linked(_seed_tree, S, "cluster-addon/values.d", "../cluster-class"), r"cluster-addon/values.d" + LINK % r"\.\./cluster-class"),
    ("version-link-csctl-config", ["version", "{work}/" + C], _replaced_by_link(_csctl_tree, C, "csctl.yaml"),
     r"scs/csctl.yaml" + LINK % r"/.*/outside/csctl.yaml"),
    ("version-link-ours-installer", ["version", "{work}/" + M], _replaced_by_link(_ours_tree, M, "installer.yaml"),
     r"1-34/installer.yaml" + LINK % r"/.*/outside/installer.yaml"),
    ("export-link-template-to-key", ["export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
     _linked(_seed_tree, S, "cluster-class/templates/key.yaml", "{secret}", helm=HELM_MUST_NOT_RUN),
     r"cluster-class/templates/key.yaml" + LINK % r"/.*/id_ed25519"),
    ("export-link-files-dir", ["export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
     _linked(_seed_tree, S, "cluster-class/files", "{outside}", helm=HELM_MUST_NOT_RUN),
     r"cluster-class/files" + LINK % r"/.*/outside"),
    ("export-link-dot-file-in-chart", ["export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
     _linked(_seed_tree, S, "cluster-class/.key", "{secret}", helm=HELM_MUST_NOT_RUN),
     r"cluster-class/\.key" + LINK % r"/.*/id_ed25519"),
    ("export-link-recorded-stack", ["export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
     _linked(_seed_tree, S, "cluster-class/templates/_key.tpl", "{secret}", record=True, helm=HELM_MUST_NOT_RUN),
     r"cluster-class/templates/_key.tpl" + LINK % r"/.*/id_ed25519"),
    ("export-link-ours-chart", ["export", "{work}/" + M, "-o", "{work}/out", "--helm", "{work}/helm"],
     _linked(_ours_tree, M, "cluster-class/templates/key.yaml", "{secret}", record=True, helm=HELM_MUST_NOT_RUN),
     r"1-34/cluster-class/templates/key.yaml" + LINK % r"/.*/id_ed25519"),
    ("export-link-second-stack", ["export", "{work}/providers", "-o", "{work}/out", "--helm", "{work}/helm"],
     _two_seeds(lambda beta: os.symlink("/etc/passwd", os.path.join(beta, "cluster-class", "passwd.yaml")), alpha_due=False,
                helm=HELM_MUST_NOT_RUN),
     r"beta/1-28/cluster-class/passwd.yaml" + LINK % "/etc/passwd"),
]


def _version_cases():
    cases = []
    for cid, mutate, stderr in SEED_BREAKS:
        cases.append(Case("stack-version-" + cid, ["stack", "version", "{work}/" + S], setup=seed(mutate), stderr=stderr))
    for cid, mutate, stderr in SEED_BREAKS[::4]:  # the same refusals under --check (CI)
        cases.append(Case("stack-version-check-" + cid, ["stack", "version", "{work}/providers", "--check"], setup=seed(mutate),
                          stderr=stderr))
    for cid, (old, new), stderr in CSCTL_BREAKS:
        cases.append(Case("stack-version-" + cid, ["stack", "version", "{work}/" + C], setup=_csctl(old, new), stderr=stderr))
    cases += [
        Case("stack-version-csctl-alias-bomb", ["stack", "version", "{work}/" + C], setup=_csctl_file(alias_bomb()),
             stderr=r"scs/csctl.yaml: aliases \(\*name\) are not allowed"),
        Case("stack-version-csctl-list", ["stack", "version", "{work}/" + C], setup=_csctl_file("- config\n"),
             stderr=r"scs/csctl.yaml: must be a mapping with config, not a list"),
        Case("stack-version-csctl-utf16", ["stack", "version", "{work}/" + C],
             setup=_csctl_file("\ufeffconfig: {}\n".encode("utf-16-be")), stderr=r"scs/csctl.yaml: UTF-16/32 text"),
        Case("stack-version-dir-newline", ["stack", "version", "{work}/providers"], setup=_rename_dir("alpha", "alpha\n"),
             stderr=r"stack directory b'alpha\\n' must be a lower-case DNS label"),
        Case("stack-version-dir-not-utf8", ["stack", "version", "{work}/providers"], setup=_rename_dir("alpha", "alph\udcff"),
             stderr=r"stack directory b'alph\\xff' must be a lower-case DNS label"),
        Case("stack-version-dir-upper", ["stack", "version", "{work}/providers"], setup=_rename_dir("alpha", "Alpha"),
             stderr=r"stack directory Alpha must be a lower-case DNS label"),
        Case("stack-version-two-stacks-second-bad", ["stack", "version", "{work}/providers"],
             setup=_two_seeds(put("metadata.yaml", "versions: {components: [1]}\n")),
             stderr=r"beta/1-28/metadata.yaml: versions.components: must be a mapping \(clusterAddon, nodeImage\), not a list"),
        Case("stack-version-two-stacks-second-not-utf8", ["stack", "version", "{work}/providers"],
             setup=_two_seeds(put("node-images/\udcff", "x")), stderr=r"beta/1-28/node-images: the file name b'\\xff'"),
        Case("stack-version-not-a-directory", ["stack", "version", "{work}/file"], files={"file": "x"},
             stderr=r"file is not a directory"),
        Case("stack-version-no-stack", ["stack", "version", "{work}/empty"], files={"empty": None},
             stderr=r"no metadata.yaml, csctl.yaml or installer.yaml below"),
        Case("stack-version-ours-metadata-bomb", ["stack", "version", "{work}/" + M],
             setup=_ours(put("metadata.yaml", alias_bomb())), stderr=r"1-34/metadata.yaml: aliases \(\*name\)"),
    ]
    return cases


def _out_file(work):
    _write(os.path.join(work, "out"), "not a directory\n")


def _export_cases():
    must_not_run = ["--helm", "{work}/helm"]
    cases = [
        Case("stack-export-output-is-file", ["stack", "export", "{work}/" + S, "-o", "{work}/out"] + must_not_run,
             setup=seed(helm=HELM_MUST_NOT_RUN, also=_out_file), stderr=r"out: exists and is not a directory"),
        Case("stack-export-output-below-file", ["stack", "export", "{work}/" + S, "-o", "{work}/out/x"] + must_not_run,
             setup=seed(helm=HELM_MUST_NOT_RUN, also=_out_file), stderr=r"out/x: the directory .*/out is not a directory"),
        Case("stack-export-output-missing-parent", ["stack", "export", "{work}/" + S, "-o", "{work}/a/b/out"] + must_not_run,
             setup=seed(helm=HELM_MUST_NOT_RUN), stderr=r"a/b/out: the directory .*/a/b does not exist"),
        Case("stack-export-two-stacks-second-bad", ["stack", "export", "{work}/providers", "-o", "{work}/out"] + must_not_run,
             setup=_two_seeds(put("metadata.yaml", "versions: {components: [1]}\n"), alpha_due=False, helm=HELM_MUST_NOT_RUN),
             stderr=r"beta/1-28/metadata.yaml: versions.components: must be a mapping \(clusterAddon, nodeImage\), not a list"),
        Case("stack-export-two-stacks-second-not-recorded", ["stack", "export", "{work}/providers", "-o", "{work}/out"] + must_not_run,
             setup=_two_seeds(put("cluster-class/values.yaml", "# tuned\n"), alpha_due=False, helm=HELM_MUST_NOT_RUN),
             stderr=r"openstack-beta-1-28: clusterClass content changed"),
        Case("stack-export-same-name-twice", ["stack", "export", "{work}/all", "-o", "{work}/out"] + must_not_run,
             setup=lambda w: (shutil.copytree(SEED, os.path.join(w, "all", "a", "providers")),
                              shutil.copytree(SEED, os.path.join(w, "all", "b", "providers")), _helm(w, HELM_MUST_NOT_RUN)),
             stderr=r"are both the stack openstack-alpha-1-28; the export writes one directory per stack name"),
        Case("stack-export-not-recorded", ["stack", "export", "{work}/" + S, "-o", "{work}/out"] + must_not_run,
             setup=seed(put("cluster-class/values.yaml", "# tuned\n"), helm=HELM_MUST_NOT_RUN),
             stderr=r"openstack-alpha-1-28: clusterClass content changed\n(.*\n)*error: run 'mooring stack version .*/alpha/1-28'"),
        Case("stack-export-no-chart", ["stack", "export", "{work}/" + S, "-o", "{work}/out"] + must_not_run,
             setup=lambda w: (seed(lambda st: os.rename(os.path.join(st, "cluster-class", "Chart.yaml"),
                                                        os.path.join(st, "cluster-class", "Chart.yml")), helm=HELM_MUST_NOT_RUN)(w),
                              _recorded(w, S)),
             stderr=r"1-28/cluster-class: no Chart.yaml; the export renders the stack's own cluster-class Helm chart"),
        Case("stack-export-metadata-bomb", ["stack", "export", "{work}/" + S, "-o", "{work}/out"] + must_not_run,
             setup=seed(put("metadata.yaml", alias_bomb()), helm=HELM_MUST_NOT_RUN),
             stderr=r"1-28/metadata.yaml: aliases \(\*name\) are not allowed"),
        Case("stack-export-name-not-utf8", ["stack", "export", "{work}/" + S, "-o", "{work}/out"] + must_not_run,
             setup=seed(put("\udcff.yaml", "x"), helm=HELM_MUST_NOT_RUN), stderr=r"1-28: the file name b'\\xff.yaml'"),
        Case("stack-export-ours-node-image-bomb", ["stack", "export", "{work}/" + M, "-o", "{work}/out"] + must_not_run,
             setup=lambda w: (_ours(put("node-image/image.yaml", alias_bomb()))(w), _recorded(w, M), _helm(w, HELM_MUST_NOT_RUN)),
             stderr=r"node-image/image.yaml: aliases \(\*name\) are not allowed"),
        Case("stack-export-ours-values-bomb", ["stack", "export", "{work}/" + M, "-o", "{work}/out"] + must_not_run,
             setup=lambda w: (_ours(put("cluster-addon/values.yaml", alias_bomb()))(w), _recorded(w, M),
                              _helm(w, HELM_MUST_NOT_RUN)),
             stderr=r"cluster-addon/values.yaml: aliases expand to more than"),
        Case("stack-export-ours-values-int-keys", ["stack", "export", "{work}/" + M, "-o", "{work}/out"] + must_not_run,
             setup=lambda w: (_ours(put("cluster-addon/values.yaml", "1: {a: b}\ncalico: {}\n"))(w), _recorded(w, M),
                              _helm(w, HELM_MUST_NOT_RUN)),
             stderr=r"cluster-addon/values.yaml: 1: is not an add-on of the installer spec"),
        Case("stack-export-ours-values-not-mapping", ["stack", "export", "{work}/" + M, "-o", "{work}/out"] + must_not_run,
             setup=lambda w: (_ours(put("cluster-addon/values.yaml", "calico: [1, 2]\n"))(w), _recorded(w, M),
                              _helm(w, HELM_MUST_NOT_RUN)),
             stderr=r"cluster-addon/values.yaml: calico: must be a mapping \(Helm values\), not a list"),
        # helm runs, and prints something broken: nothing is written
        Case("stack-export-helm-alias-bomb", ["stack", "export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
             setup=seed(helm=helm_printing("cat <<'EOF'\n%sEOF\n" % alias_bomb(levels=7).replace("versions:", "kind:"))),
             stderr=r"printed invalid YAML: helm template output: aliases expand to more than"),
        Case("stack-export-helm-huge-scalar", ["stack", "export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
             setup=seed(helm=helm_printing("head -c 200000 /dev/zero | tr '\\0' x; echo\n")),
             stderr=r"printed a document that is not an object: 'x{20,80}\.\.\.$"),
        Case("stack-export-helm-too-much", ["stack", "export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
             setup=seed(helm=helm_printing("head -c 40000000 /dev/zero | tr '\\0' '\\n'\n")),
             stderr=r"printed 40000000 bytes, more than the limit of 33554432"),
        Case("stack-export-helm-not-utf8", ["stack", "export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
             setup=seed(helm=helm_printing("printf 'kind: caf\\351\\n'\n")),
             stderr=r"printed invalid YAML: helm template output: not UTF-8 \(byte 0xe9"),
        Case("stack-export-helm-fails-loudly", ["stack", "export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
             setup=seed(helm=helm_printing("head -c 3000000 /dev/zero | tr '\\0' e >&2; exit 2\n")),
             stderr=r"failed \(exit 2\): e+"),
        Case("stack-export-helm-no-clusterclass", ["stack", "export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
             setup=seed(helm=helm_printing("printf 'kind: ConfigMap\\nmetadata: [1]\\n'\n")),
             stderr=r"the chart renders no ClusterClass"),
        # helm's output is fine; the output directory holds something in the way: nothing is written
        Case("stack-export-output-entry-is-directory", ["stack", "export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
             files={"out/clusterclass.yaml": None, "out/keep.txt": "mine\n"}, setup=seed(helm=HELM_GOOD),
             stderr=r"out/clusterclass.yaml: is a directory; refusing to replace it with a file"),
        Case("stack-export-output-entry-is-symlink", ["stack", "export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
             files={"out/keep.txt": "mine\n"},
             setup=lambda w: (seed(helm=HELM_GOOD)(w), os.symlink("../outside/x", os.path.join(w, "out", "metadata.yaml"))),
             stderr=r"metadata.yaml resolves outside .*/work/out$"),
        Case("stack-export-output-entry-is-fifo", ["stack", "export", "{work}/" + S, "-o", "{work}/out", "--helm", "{work}/helm"],
             files={"out": None}, setup=lambda w: (seed(helm=HELM_GOOD)(w), os.mkfifo(os.path.join(w, "out", "metadata.yaml"))),
             stderr=r"out/metadata.yaml: is not a regular file; refusing to replace it"),
        Case("stack-export-output-stack-dir-is-file", ["stack", "export", "{work}/providers", "-o", "{work}/out", "--helm", "{work}/helm"],
             files={"out/openstack-alpha-1-28": "a file\n"},
             setup=_two_seeds(lambda b: None, alpha_due=False, helm=HELM_GOOD),
             stderr=r"out/openstack-alpha-1-28: exists and is not a directory; refusing to replace it"),
        Case("stack-export-output-stack-dir-escapes", ["stack", "export", "{work}/providers", "-o", "{work}/out", "--helm", "{work}/helm"],
             files={"out": None},
             setup=lambda w: (_two_seeds(lambda b: None, alpha_due=False, helm=HELM_GOOD)(w),
                              os.symlink("../../outside", os.path.join(w, "out", "openstack-beta-1-28"))),
             stderr=r"out/openstack-beta-1-28: exists and is not a directory; refusing to replace it"),
    ]
    return cases


CASES = _version_cases() + _export_cases() + [
    Case("stack-" + cid, ["stack"] + argv, setup=setup, stderr=stderr) for cid, argv, setup, stderr in LINK_CASES]
