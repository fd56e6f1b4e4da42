# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MooringAction, the one base class of the action plugins, and the argument specs it builds from the stubs.

Every action plugin subclasses it; each plugin's argument spec (from its stub's documented options) is
a valid spec that ansible's own validator accepts, and it says what ``ansible-doc`` shows; a domain error
raised by ``act()`` fails the task with its problems.
"""

from __future__ import annotations

import glob
import importlib
import json
import os
import subprocess
import sys
from unittest.mock import MagicMock

import pytest
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.parameters import DEFAULT_TYPE_VALIDATORS

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError
from ansible_collections.mooring.cluster.plugins.plugin_utils.action import MooringAction, argument_spec

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
ACTIONS = sorted(os.path.basename(path)[:-3] for path in glob.glob(os.path.join(ROOT, "plugins", "action", "*.py"))
                 if not path.endswith("__init__.py"))
SPEC_KEYS = ("type", "required", "default", "choices", "elements", "no_log", "aliases")
# What ArgumentSpecValidator understands in a spec entry (anything else is a typo in the docs).
VALID_SPEC_KEYS = set(SPEC_KEYS) | {"options"}


def test_the_action_plugins_are_found():
    assert "pki" in ACTIONS and "cluster_lease" in ACTIONS


@pytest.mark.parametrize("name", ACTIONS)
def test_every_action_plugin_is_a_mooring_action(name):
    module = importlib.import_module("ansible_collections.mooring.cluster.plugins.action.%s" % name)
    assert issubclass(module.ActionModule, MooringAction), "%s: not a MooringAction" % name
    # the stub of the same name is where its arguments come from
    assert module.ActionModule.plugin_name() == name
    assert os.path.isfile(os.path.join(ROOT, "plugins", "modules", "%s.py" % name))
    # no second statement of the arguments next to the docs
    assert not hasattr(module, "ARGUMENT_SPEC") and not hasattr(module, "ARGSPEC"), name


def _sample(entry):
    """A value of the entry's type (the first choice when it has choices), for the required options."""
    if entry.get("choices"):
        return entry["choices"][0]
    kind = entry.get("type", "str")
    if kind == "list":
        element = {"type": entry.get("elements", "str")}
        if "options" in entry:
            element["options"] = entry["options"]
        return [_sample(element)]
    if kind == "dict" and "options" in entry:
        return {key: _sample(sub) for key, sub in entry["options"].items() if sub.get("required")}
    return {"str": "x", "path": "/x", "raw": "x", "int": 1, "float": 1.0, "bool": True, "dict": {}}[kind]


def _minimal_params(spec):
    return {key: _sample(entry) for key, entry in spec.items() if entry.get("required")}


def _check_entries(spec, where):
    for key, entry in spec.items():
        assert set(entry) <= VALID_SPEC_KEYS, "%s.%s: unknown spec keys %s" % (where, key, set(entry) - VALID_SPEC_KEYS)
        assert entry.get("type", "str") in DEFAULT_TYPE_VALIDATORS, "%s.%s: unknown type" % (where, key)
        if "elements" in entry:
            assert entry.get("type") == "list", "%s.%s: elements without type list" % (where, key)
            assert entry["elements"] in DEFAULT_TYPE_VALIDATORS, "%s.%s: unknown elements type" % (where, key)
        assert not (entry.get("required") and "default" in entry), "%s.%s: required with a default" % (where, key)
        if "choices" in entry and entry.get("default") is not None:
            defaults = entry["default"] if entry.get("type") == "list" else [entry["default"]]
            assert set(defaults) <= set(entry["choices"]), "%s.%s: default not among the choices" % (where, key)
        if "options" in entry:
            _check_entries(entry["options"], "%s.%s" % (where, key))


@pytest.mark.parametrize("name", ACTIONS)
def test_the_argument_spec_is_valid(name):
    spec = argument_spec(name)
    assert spec, "%s: no documented options" % name
    _check_entries(spec, name)
    result = ArgumentSpecValidator(spec).validate(_minimal_params(spec))
    assert result.error_messages == [], "%s: %s" % (name, result.error_messages)
    # An unknown option is refused, a missing required one named: the spec is what validates the task.
    assert ArgumentSpecValidator(spec).validate(dict(_minimal_params(spec), no_such_option=1)).error_messages
    for key, entry in spec.items():
        if entry.get("required"):
            params = _minimal_params(spec)
            del params[key]
            assert key in " ".join(ArgumentSpecValidator(spec).validate(params).error_messages)


@pytest.fixture(scope="module")
def docs():
    """The stubs' options as ansible itself reads them (ansible-doc, doc fragments merged)."""
    run = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible-doc"), "-j", "-t", "module",
         *("mooring.cluster.%s" % name for name in ACTIONS)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return {name.rsplit(".", 1)[-1]: value["doc"].get("options") or {} for name, value in json.loads(run.stdout).items()}


def _documented(options):
    """The spec ansible-doc's options state (``required: false`` and ``no_log: false`` are the defaults)."""
    spec = {}
    for key, doc in options.items():
        entry = {k: doc[k] for k in SPEC_KEYS if k in doc and not (k in ("required", "no_log") and doc[k] is False)}
        if "suboptions" in doc:
            entry["options"] = _documented(doc["suboptions"])
        spec[key] = entry
    return spec


def _without_false_flags(spec):
    return {key: dict({k: v for k, v in entry.items() if not (k in ("required", "no_log") and v is False)},
                      **({"options": _without_false_flags(entry["options"])} if "options" in entry else {}))
            for key, entry in spec.items()}


@pytest.mark.parametrize("name", ACTIONS)
def test_the_argument_spec_is_what_the_stub_documents(name, docs):
    assert name in docs, "%s: ansible-doc does not know mooring.cluster.%s" % (name, name)
    spec = argument_spec(name)
    assert _without_false_flags(spec) == _documented(docs[name])
    # And validation gives every option left out its documented default (None when there is none).
    validated = ArgumentSpecValidator(spec).validate(_minimal_params(spec)).validated_parameters
    for key, doc in docs[name].items():
        if not doc.get("required"):
            assert validated[key] == doc.get("default"), "%s.%s: validated %r, documented %r" % (
                name, key, validated[key], doc.get("default"))


# ---------------------------------------------------------------------------------------
# The base class's run(): a real ActionBase, built from mocks as ansible's own unit tests do.


KUBEADM_CONFIG_ARGS = {"cluster": {}, "node": {}, "role": "worker"}


class Raising(MooringAction):
    """A fake action with kubeadm_config's documented options whose act() raises ``error``."""

    error = RuntimeError("set by each test")

    @classmethod
    def plugin_name(cls):
        return "kubeadm_config"

    def act(self, args, task_vars):
        raise self.error


class Returning(MooringAction):
    @classmethod
    def plugin_name(cls):
        return "kubeadm_config"

    def act(self, args, task_vars):
        return {"args": args, "check": self.check_mode}


def test_a_mooring_error_from_act_fails_the_task_with_its_problems(action_plugin):
    Raising.error = MooringError("the configuration is wrong", problems=["node: no name", "role: not known"])
    with pytest.raises(AnsibleActionFail) as info:
        action_plugin(Raising, dict(KUBEADM_CONFIG_ARGS)).run(task_vars={})
    message = info.value.message
    assert "node: no name" in message and "role: not known" in message
    # the text the plugins always gave: the error's own str()
    assert message == str(Raising.error)


def test_a_single_problem_is_the_whole_message(action_plugin):
    Raising.error = MooringError("lock /x: not found")
    with pytest.raises(AnsibleActionFail) as info:
        action_plugin(Raising, dict(KUBEADM_CONFIG_ARGS)).run(task_vars={})
    assert info.value.message == "lock /x: not found"


def test_an_os_error_from_act_fails_the_task_naming_the_file(action_plugin):
    Raising.error = FileNotFoundError(2, "No such file or directory", "/nowhere/lock.yaml")
    with pytest.raises(AnsibleActionFail) as info:
        action_plugin(Raising, dict(KUBEADM_CONFIG_ARGS)).run(task_vars={})
    assert info.value.message == "[Errno 2] No such file or directory: '/nowhere/lock.yaml'"


def test_other_errors_are_not_hidden(action_plugin):
    Raising.error = KeyError("a bug")
    with pytest.raises(KeyError):
        action_plugin(Raising, dict(KUBEADM_CONFIG_ARGS)).run(task_vars={})


def test_invalid_arguments_fail_before_act(action_plugin):
    Raising.error = AssertionError("act() must not run")
    with pytest.raises(AnsibleActionFail, match="role"):
        action_plugin(Raising, {"cluster": {}, "node": {}, "role": "bystander"}).run(task_vars={})


def test_act_gets_the_validated_arguments_and_its_result_is_the_tasks(action_plugin):
    result = action_plugin(Returning, {"cluster": {}, "node": {}, "role": "worker"}, check_mode=True).run(task_vars={})
    assert result == {"args": {"cluster": {}, "node": {}, "role": "worker", "pki_dir": ""}, "check": True,
                      "changed": False}  # pki_dir: the documented default filled in


def test_a_real_plugin_fails_with_its_own_message(action_plugin):
    module = importlib.import_module("ansible_collections.mooring.cluster.plugins.action.solution_config")
    with pytest.raises(AnsibleActionFail) as info:
        action_plugin(module.ActionModule, {"action": "import"}).run(task_vars={})
    assert info.value.message == "name is required for action import"
    shown = action_plugin(module.ActionModule, {"action": "show"}).run(task_vars={})
    assert shown["changed"] is False and shown["imported"] == [] and shown["active"] is None


def test_kubeadm_config_refuses_a_control_plane_host_without_the_pki_directory(action_plugin):
    module = importlib.import_module("ansible_collections.mooring.cluster.plugins.action.kubeadm_config")
    with pytest.raises(AnsibleActionFail) as info:
        action_plugin(module.ActionModule, {"cluster": {}, "node": {}, "role": "control_plane"}).run(task_vars={})
    assert info.value.message.startswith("pki_dir is empty on a control-plane host")


def test_a_relative_controller_file_is_taken_from_the_directory_the_run_started_in(tmp_path, monkeypatch, action_plugin):
    (tmp_path / "installer.yaml").write_text("x")
    monkeypatch.chdir(tmp_path)
    plugin = action_plugin(Raising, dict(KUBEADM_CONFIG_ARGS))
    assert plugin.controller_file("installer.yaml") == str(tmp_path / "installer.yaml")
    assert plugin.controller_file(str(tmp_path / "installer.yaml")) == str(tmp_path / "installer.yaml")


def test_a_missing_relative_controller_file_falls_back_to_ansibles_search(tmp_path, monkeypatch, action_plugin):
    monkeypatch.chdir(tmp_path)
    plugin = action_plugin(Raising, dict(KUBEADM_CONFIG_ARGS))
    plugin._find_needle = MagicMock(return_value="/role/files/installer.yaml")
    assert plugin.controller_file("installer.yaml") == "/role/files/installer.yaml"
    plugin._find_needle.assert_called_once_with("files", "installer.yaml")
