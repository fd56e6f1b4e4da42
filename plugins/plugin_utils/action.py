# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the one base class of the collection's action plugins.

Every action plugin of this collection runs on the controller and has a documentation stub of
the same name in ``plugins/modules/``. That stub's ``options`` (with its doc fragments) is the
only statement of the plugin's arguments: :func:`argument_spec` turns it into the argument
spec the action validates against, so the docs and the validation cannot drift apart.

A subclass implements ``act(args, task_vars)`` and returns the result's fields. The base class
validates the arguments, says whether the run is a check (``self.check_mode``), and turns a
:class:`MooringError` (and an ``OSError`` from the controller's files) into a task failure whose
message is the error's text (a MooringError's lists one line per problem).
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import os
import time

import yaml
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.mooring.cluster.plugins.module_utils.cluster.preflight.preflightclock import clock_offset
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError

display = Display()

_SPEC_KEYS = ("type", "required", "default", "choices", "elements", "no_log", "aliases")
_MODULES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "modules")


def _options_to_spec(options):
    spec = {}
    for name, doc in (options or {}).items():
        entry = {key: doc[key] for key in _SPEC_KEYS if key in doc}
        if "suboptions" in doc:
            entry["options"] = _options_to_spec(doc["suboptions"])
        spec[name] = entry
    return spec


def _fragment(name):
    """A doc fragment of this collection (``mooring.cluster.FILE`` or ``mooring.cluster.FILE.VARIANT``)."""
    parts = name.split(".")
    if parts[:2] != ["mooring", "cluster"] or len(parts) not in (3, 4):
        raise AnsibleActionFail("doc fragment %s: only this collection's fragments are read" % name)
    module = importlib.import_module("ansible_collections.mooring.cluster.plugins.doc_fragments.%s" % parts[2])
    return yaml.safe_load(getattr(module.ModuleDocFragment, parts[3].upper() if len(parts) == 4 else "DOCUMENTATION"))


@functools.cache
def documentation(name):
    """The stub ``plugins/modules/<name>.py``'s DOCUMENTATION, its fragments' options merged in."""
    path = os.path.join(_MODULES, "%s.py" % name)
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    text = next((node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and any(getattr(target, "id", None) == "DOCUMENTATION" for target in node.targets)), None)
    if text is None:
        raise AnsibleActionFail("%s: no DOCUMENTATION to take the arguments from" % path)
    doc = yaml.safe_load(text)
    options = {}
    for fragment in doc.get("extends_documentation_fragment") or []:
        options.update((_fragment(fragment) or {}).get("options") or {})
    options.update(doc.get("options") or {})
    doc["options"] = options
    return doc


def argument_spec(name):
    """The argument spec of ``mooring.cluster.<name>``, from its documented options."""
    return _options_to_spec(documentation(name).get("options"))


class MooringAction(ActionBase):
    """Controller-side action: documented options in, ``act()`` result out, domain errors as failures."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    # Argument relations the option docs cannot state (as for AnsibleModule).
    MUTUALLY_EXCLUSIVE = ()
    REQUIRED_ONE_OF = ()
    REQUIRED_TOGETHER = ()
    REQUIRED_IF = ()
    # Arguments as plain JSON types (no templating tags, tuples as lists), for backends that compare or dump them.
    PLAIN_ARGS = False

    @classmethod
    def plugin_name(cls):
        return cls.__module__.rsplit(".", 1)[-1]

    @property
    def check_mode(self):
        return bool(self._task.check_mode)

    def act(self, args, task_vars):
        raise NotImplementedError

    def controller_file(self, path):
        """A file the user named on the controller, as an absolute path.

        A relative path is taken from the directory the run started in, as every other path
        these plugins take (lock, bundle, overlay, output), so that
        ``ansible-playbook mooring.cluster.resolve -e installer_src=installer.yaml`` reads the
        user's own file and not one beside the collection's playbook. Only when no such file
        exists does Ansible's search (the role's and the playbook's ``files/``) apply.
        """
        if os.path.isabs(path) or os.path.exists(path):
            return os.path.abspath(path)
        return self._find_needle("files", path)

    def execute_timed(self, module_name, args, task_vars):
        """Run host module ``module_name`` (unset options left out) and time the exchange on the controller: a
        result whose ``facts.clock`` holds the host's ``received`` and ``replied`` times gets the host's clock
        offset from the controller's instead (NTP's estimate and error bound, preflightclock.clock_offset)."""
        args = {k: v for k, v in args.items() if v is not None}
        sent = time.time()
        result = self._execute_module(module_name=module_name, module_args=args, task_vars=task_vars)
        back = time.time()
        facts = result.get("facts")
        clock = facts.get("clock") if isinstance(facts, dict) else None  # a host's result is checked by its reader
        if isinstance(clock, dict) and "received" in clock and "replied" in clock:
            result["facts"]["clock"] = clock_offset(sent, clock["received"], clock["replied"], back)
        return result

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self.validate_argument_spec(
            argument_spec=argument_spec(self.plugin_name()),
            mutually_exclusive=list(self.MUTUALLY_EXCLUSIVE),
            required_one_of=list(self.REQUIRED_ONE_OF),
            required_together=list(self.REQUIRED_TOGETHER),
            required_if=list(self.REQUIRED_IF),
        )[1]
        if self.PLAIN_ARGS:
            args = json.loads(json.dumps(args))  # plain Python types (no templating tags) for the backends
        try:
            result.update(self.act(args, task_vars or {}))
        except (MooringError, OSError) as exc:
            for warning in getattr(exc, "warnings", ()):  # what the input has that is ignored, also on failure
                display.warning(warning)
            # The text the action plugins always gave: a MooringError's str() (its one problem, or its
            # message and one line per problem), an OSError's ("[Errno 2] No such file or directory: 'x'").
            raise AnsibleActionFail(to_native(exc)) from None
        result.setdefault("changed", False)
        return result
