# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for mooring.cluster.renamed_vars: old input names become the new ones, with one warning each."""

from __future__ import annotations

from ansible.utils.display import Display

from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction

display = Display()
_WARNED = set()  # one warning per old name per run (one controller process)


class ActionModule(MooringAction):
    def act(self, args, task_vars):
        facts, renamed = {}, {}
        for old, new in sorted(args["names"].items()):
            if old in task_vars and new not in task_vars:
                facts[new] = self._templar.template(task_vars[old])
                renamed[old] = new
                if old not in _WARNED:
                    _WARNED.add(old)
                    display.deprecated("the variable %s is now %s; set %s instead" % (old, new, new),
                                       version="0.4.0", collection_name="mooring.cluster")
        return {"changed": False, "renamed": renamed, "ansible_facts": facts}
