# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run's state as one mapping (mooring.cluster.run_state), read from the controller's variables."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.mooring.cluster.plugins.filter.run import RUN_STATE, run_state_filter


class _LazyVars(dict):
    """Like hostvars['localhost']: a mapping that templates a value when it is read; reads are counted."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.read = []

    def __getitem__(self, key):
        self.read.append(key)
        return super().__getitem__(key)


def test_a_run_before_any_step_gets_every_default():
    state = run_state_filter({})
    assert state == {key: default for key, (_name, default) in RUN_STATE.items()}
    assert state["plan_only"] is False and state["lock_values"] is None and state["remove_leaving"] == []


def test_the_steps_results_are_taken_and_nothing_else_is_read():
    controller = _LazyVars(lock_values={"digest": "d"}, bundle_build_result={"id": "b"}, mooring_plan_only=True,
                           cluster_remove_leaving=["w2"], unrelated="{{ undefined_thing }}")
    state = run_state_filter(controller)
    assert state["lock_values"] == {"digest": "d"} and state["bundle"] == {"id": "b"}
    assert state["plan_only"] is True and state["remove_leaving"] == ["w2"]
    assert "unrelated" not in controller.read  # a variable the run state does not name is never templated


def test_a_null_result_is_the_default():
    assert run_state_filter({"mooring_plan_only": None})["plan_only"] is False


@pytest.mark.parametrize("value", [None, "localhost", ["lock_values"]])
def test_anything_but_a_mapping_is_refused(value):
    with pytest.raises(AnsibleFilterError, match="controller's variables"):
        run_state_filter(value)
