# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run report (mooring.cluster.report) for the collection's playbooks, with no configuration.

Ansible loads callback plugins from a ``callback_plugins/`` directory next to the playbook it runs,
and one that does not need enabling runs on its own. So ``ansible-playbook mooring.cluster.install``
from an installed collection writes its report without an ansible.cfg. Everything is the collection's
callback; this only lifts the need to enable it. When ``mooring.cluster.report`` is enabled as well,
one of the two writes the report.
"""

from __future__ import annotations

from ansible_collections.mooring.cluster.plugins.callback import report as _report

# Ansible reads a callback's options from its module's DOCUMENTATION: the same as the collection's.
DOCUMENTATION = _report.DOCUMENTATION


class CallbackModule(_report.CallbackModule):
    """mooring.cluster.report, loaded without being enabled."""

    CALLBACK_NAME = "mooring_report"
    CALLBACK_NEEDS_ENABLED = False
