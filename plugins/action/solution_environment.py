# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.solution_environment: the Kubernetes objects of an environment change."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.environments import (
    MOORING,
    environment_state,
    environments_from_objects,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.k8s import plan_changes
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


def _is_namespace(obj):
    """A Namespace (cluster-scoped: no metadata.namespace); list items from the API may carry no kind."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(obj, dict) and obj.get("kind"):
        return obj["kind"] == "Namespace"
    return not (isinstance(meta, dict) and meta.get("namespace"))


class ActionModule(MooringAction):
    PLAIN_ARGS = True

    def act(self, args, task_vars):
        objects = args.pop("objects")
        if args["action"] == "show":
            return self.show(args, objects or [])
        if objects is not None:
            raise MooringError("objects is read by action show only; give %s the flavour, namespace and current "
                               "solutions that show returned" % args["action"])
        args["flavour"] = args["flavour"] or MOORING
        out = plan_changes(**args)
        out["changed"] = False
        return out

    @staticmethod
    def show(args, objects):
        """The environment as the cluster has it (Namespace and ConfigMap objects from kubernetes.core.k8s_info)."""
        envs = environments_from_objects([o for o in objects if _is_namespace(o)],
                                         [o for o in objects if not _is_namespace(o)])
        state = environment_state(envs, args["environment"], args["namespace"])
        return dict(state, changed=False, apply=[], delete=[])
