# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.solution_metalk8s_plan: what a MetalK8s SolutionsConfiguration asks for."""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.module_utils.solutions.configuration import (
    archive_identity,
    plan_configuration,
    read_configuration,
)
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.k8s import load_config
from ansible_collections.mooring.cluster.plugins.module_utils.solutions.layout import SolutionError
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction


class ActionModule(MooringAction):
    PLAIN_ARGS = True

    def act(self, args, task_vars):
        stored = load_config(args["current"])
        document = read_configuration(self.controller_file(args["path"]))
        contents, problems = {}, []
        for path in document["archives"]:
            try:
                contents[path] = archive_identity(path, sha256=args["sha256"])
            except SolutionError as exc:
                problems.extend(exc.problems)
        if problems:
            raise SolutionError("%s: its archives cannot be read" % document["source"], problems)
        plan = plan_configuration(document, stored, contents)
        return dict(plan, changed=False, archives=contents)
