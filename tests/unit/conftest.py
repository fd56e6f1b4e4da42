# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ansible's collection loader, installed before any test module imports the collection; and the
``action_plugin`` fixture every action-plugin test builds its plugin with.

Some tests load plugins through Ansible's loaders (``init_plugin_loader()``), which installs the
collection finder; a subpackage of ``ansible_collections.mooring.cluster`` first imported after
that, while the package itself was imported before it, fails ("collection metadata was not
loaded"). Installing the finder first makes every import go the same way, whatever the order in
which pytest collects the files.
"""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest
from ansible.plugins.loader import init_plugin_loader

init_plugin_loader()


@pytest.fixture
def action_plugin():
    """``action_plugin(cls, args, check_mode=False)``: a real action plugin of class ``cls`` whose
    task, connection and loaders are mocks, as ansible's own unit tests build them (the actions
    under test run on the controller and never use the connection)."""

    def make(cls, args, check_mode=False):
        task = MagicMock()
        task.args = args
        task.async_val = 0
        task.check_mode = check_mode
        task.diff = False
        task.action = "mooring.cluster.%s" % cls.plugin_name()
        connection = MagicMock()
        connection._shell.tmpdir = "/nonexistent-tmpdir"
        return cls(task, connection, MagicMock(), loader=MagicMock(), templar=MagicMock(), shared_loader_obj=MagicMock())

    return make
