# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every public exception class of the collection's Python derives from MooringError, so a front end
(module, action, filter, CLI) catches one base and shows one line per problem."""

from __future__ import annotations

import importlib
import inspect
import os

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGINS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "..", "plugins"))
PACKAGES = ("module_utils", "plugin_utils")


def _modules():
    for package in PACKAGES:
        top = os.path.join(PLUGINS, package)
        for folder, _dirs, files in os.walk(top):
            for name in sorted(files):
                if name.endswith(".py") and name != "__init__.py":
                    rel = os.path.relpath(os.path.join(folder, name[:-3]), PLUGINS)
                    yield "ansible_collections.mooring.cluster.plugins." + rel.replace(os.sep, ".")


def public_exceptions():
    found = []
    for dotted in _modules():
        module = importlib.import_module(dotted)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException) and not name.startswith("_")
                    and value.__module__ == dotted):
                found.append(value)
    return found


def test_every_public_exception_derives_from_mooring_error():
    classes = public_exceptions()
    assert len(classes) > 20, "the walk found too few exception classes: %r" % classes
    stray = sorted("%s.%s" % (c.__module__.rsplit(".", 2)[-2:][-1], c.__name__) for c in classes if not issubclass(c, MooringError))
    assert not stray, "exceptions outside the one base: %s" % ", ".join(stray)
