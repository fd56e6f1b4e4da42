# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ansible's collection loader, installed before any test module imports the collection.

Some tests load plugins through Ansible's loaders (``init_plugin_loader()``), which installs the
collection finder; a subpackage of ``ansible_collections.mooring.cluster`` first imported after
that, while the package itself was imported before it, fails ("collection metadata was not
loaded"). Installing the finder first makes every import go the same way, whatever the order in
which pytest collects the files.
"""

from __future__ import annotations

from ansible.plugins.loader import init_plugin_loader

init_plugin_loader()
