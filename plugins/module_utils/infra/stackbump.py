# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: deciding a cluster stack's versions from its content hashes
(:func:`plan_versions`) and writing them (:func:`apply_versions`)."""

from __future__ import annotations

import copy
import os

from ansible_collections.mooring.cluster.plugins.module_utils.common.digest import canonical_json
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stackrecords import (
    check_version,
    is_dev_version,
    load_metadata,
    load_release,
    version_number,
)
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stacktree import (
    COMPONENTS,
    PARTS,
    RELEASE_API_VERSION,
    RELEASE_KIND,
    StackError,
    commit_files,
)
from ansible_collections.mooring.cluster.plugins.module_utils.infra.stackyaml import dump


def _bumped(base, moved):
    return "v%d" % (base + 1 if moved else base)


def _hash_mode(stack, hashes, release, first, reasons):
    """``(changed, versions)`` in hash mode: every part that moved takes the dev version of the whole stack."""
    dev = stack.dev_version()
    if first:
        reasons.append("%s: no hash-mode release recorded yet; %s is taken as the first release" % (stack.name, dev))
        return list(PARTS), {"clusterStack": dev, "kubernetes": stack.spec_kubernetes(),
                             "components": {c: dev for c in COMPONENTS}}
    recorded = release["versions"]
    changed = [p for p in PARTS if hashes[p] != release["hashes"].get(p)]
    rc = recorded.get("components") or {}
    return changed, {"clusterStack": dev if changed else recorded["clusterStack"],
                     "kubernetes": stack.spec_kubernetes(),
                     "components": {c: dev if c in changed else rc.get(c, dev) for c in COMPONENTS}}


def _first_stable(stack, current, reasons):
    """``(changed, versions)`` of a first stable release: the versions the stack says it has, when stable."""
    versions = copy.deepcopy(current)
    problems = []
    check_version(versions["clusterStack"], "clusterStack", stack.path, problems, False)
    for c in COMPONENTS:
        check_version(versions["components"][c], "components.%s" % c, stack.path, problems, False)
    if problems:
        raise StackError("stack %s has no stable versions to record" % stack.name, problems)
    reasons.append("%s: no release recorded yet; %s is taken as the first release" % (stack.name, versions["clusterStack"]))
    return list(PARTS), versions


def _next_stable(stack, hashes, release):
    """``(changed, versions)`` after a stable release: each part that moved, and the stack when any did, one up."""
    recorded = release["versions"]
    base_stack = version_number(recorded.get("clusterStack"), "versions.clusterStack", stack.release_path)
    base = {c: version_number((recorded.get("components") or {}).get(c), "versions.components.%s" % c,
                              stack.release_path) for c in COMPONENTS}
    changed = [p for p in PARTS if hashes[p] != release["hashes"].get(p)]
    return changed, {"clusterStack": _bumped(base_stack, changed), "kubernetes": stack.spec_kubernetes(),
                     "components": {c: _bumped(base[c], c in changed) for c in COMPONENTS}}


def _change_reasons(stack, recorded, changed, versions):
    """One line per part that moved since the recorded release, and one for the stack version."""
    reasons = []
    rc = recorded.get("components") or {}
    for p in changed:
        if p in COMPONENTS:
            reasons.append("%s: %s content changed: %s -> %s" % (stack.name, p, rc.get(p), versions["components"][p]))
        else:
            reasons.append("%s: %s content changed" % (stack.name, p))
    if changed:
        reasons.append("%s: clusterStack %s -> %s" % (stack.name, recorded.get("clusterStack"), versions["clusterStack"]))
    return reasons


def _edit_reasons(stack, first, changed, versions, edits):
    """The line that says why files carrying versions are rewritten, if any."""
    names = ", ".join(sorted(os.path.relpath(p, stack.path) for p in edits))
    if first and edits:
        return ["%s: %s carry other versions; 'mooring stack version' sets them to %s"
                % (stack.name, names, versions["clusterStack"])]
    if not first and not changed and edits:
        return ["%s: %s carry versions that no content change justifies (%s); they are put back"
                % (stack.name, names, canonical_json(versions).decode("utf-8"))]
    return []


def plan_versions(stack):
    """Decide versions from hashes: returns a dict describing the plan.

    ``due``: True when files must be (re)written; ``changed``: the parts whose content differs
    from the last release; ``versions``: what the stack must say; ``edits``: ``{path: text}`` of
    the files carrying versions that must change; ``reasons``: one line per decision;
    ``mode``: ``stable`` or ``hash`` (csctl's ``v0-sha.<hash>`` dev versions).
    """
    hashes = stack.hashes()
    release = load_release(stack.release_path)
    current = stack.current_versions(release)
    mode = "hash" if is_dev_version(current["clusterStack"]) else "stable"
    reasons = []
    recorded = release["versions"] if release else None
    same_mode = bool(recorded) and is_dev_version(recorded.get("clusterStack")) == (mode == "hash")
    first = release is None or not same_mode
    if mode == "hash":
        changed, versions = _hash_mode(stack, hashes, release, first, reasons)
    elif first:
        changed, versions = _first_stable(stack, current, reasons)
    else:
        changed, versions = _next_stable(stack, hashes, release)
    if not first:
        reasons.extend(_change_reasons(stack, recorded, changed, versions))
    edits = stack.version_edits(versions)
    reasons.extend(_edit_reasons(stack, first, changed, versions, edits))
    due = first or bool(changed) or bool(edits) or versions != recorded
    if not due:
        reasons.append("%s: up to date at %s" % (stack.name, versions["clusterStack"]))
    return {"stack": stack, "due": due, "changed": changed, "versions": versions, "hashes": hashes,
            "edits": edits, "reasons": reasons, "first": first, "mode": mode}


def unrecorded(plan):
    """Whether a bump is due but not recorded (``--check`` fails, the export refuses).

    A stack without a release record (as upstream stacks come: their record is a remote
    release, and their build sets chart versions) is taken as it is: its versions are the first
    release, and files that carry other versions are only reported; the first ``mooring stack
    version`` records it and puts them in step.
    """
    return plan["due"] and not plan["first"]


def check_versions(stack):
    """Raise StackError when a bump is due but not recorded (see :func:`unrecorded`)."""
    plan = plan_versions(stack)
    if unrecorded(plan):
        raise StackError("stack %s needs a version bump" % stack.name, plan["reasons"] + [
            "run 'mooring stack version %s' and commit the files it writes" % stack.path])
    return plan


def apply_versions(plan):
    """Write the files carrying versions and release.yaml for a plan, all or nothing
    (:func:`commit_files`); returns the paths written."""
    stack = plan["stack"]
    if not plan["due"]:
        return []
    release = {"apiVersion": RELEASE_API_VERSION, "kind": RELEASE_KIND,
               "versions": plan["versions"], "hashes": dict(sorted(plan["hashes"].items()))}
    changes = [(path, plan["edits"][path].encode("utf-8")) for path in sorted(plan["edits"])]
    changes.append((stack.release_path,
                    ("# Written by 'mooring stack version'; do not edit.\n" + dump(release)).encode("utf-8")))
    written = commit_files(changes, stack.path)
    if stack.metadata is not None:
        stack.metadata = load_metadata(stack.metadata_path, dev_ok=stack.layout != "mooring")
    return written
