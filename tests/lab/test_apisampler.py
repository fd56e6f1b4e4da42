# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API sampler's arithmetic (molecule/shared/apisampler.py): the longest window without an answer, failed
samples, each node's turn - on samples made here, no API server involved."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "mooring_apisampler", Path(__file__).resolve().parents[2] / "molecule" / "shared" / "apisampler.py")
apisampler = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(apisampler)


def sampler(rows):
    s = object.__new__(apisampler.ApiSampler)
    s.samples = rows
    return s


def test_the_gap_runs_from_the_last_answer_to_the_next():
    down = ["/readyz: ConnectionRefusedError"]
    s = sampler([(0.0, None, None), (0.5, None, None), (1.0, down, None), (1.5, down, None), (2.0, None, None),
                 (2.5, down, None), (3.0, None, None)])
    w = s.window(0.0)
    assert (w["samples"], w["failed"], w["gap"], w["first_failure"]) == (7, 3, 1.5, down)
    assert s.window(2.2)["gap"] == 0.5 and s.window(2.2)["failed"] == 1
    assert sampler([(0.0, None, None), (0.5, None, None)]).window(0.0) == {
        "samples": 2, "failed": 0, "gap": 0.0, "first_failure": None}


def test_a_window_that_ends_down_counts_to_its_last_sample():
    down = ["/readyz: TimeoutError"]
    assert sampler([(0.0, None, None), (0.5, down, None), (1.5, down, None)]).window(0.0)["gap"] == 1.5
    assert sampler([(0.0, down, None), (2.0, down, None)]).window(0.0)["gap"] == 2.0


def test_a_nodes_turn_from_cordon_to_schedulable_at_the_version():
    old, new = "v1.35.5", "v1.35.8"
    rows = [(10.0, None, {"a": (False, old), "b": (False, old)}),
            (11.0, None, {"a": (True, old), "b": (False, old)}),
            (12.0, ["x"], {"a": (True, new), "b": (False, old)}),
            (13.0, None, {"a": (False, new), "b": (False, old)}),
            (14.0, None, {"a": (False, new), "b": (True, old)})]
    turns = sampler(rows).turns(10.0, "1.35.8")
    assert turns["a"]["start"] == 1.0 and turns["a"]["end"] == 3.0 and turns["a"]["seconds"] == 2.0
    assert turns["a"]["window"]["failed"] == 1
    assert turns["b"] == {"start": 4.0, "end": None, "seconds": None, "window": None}
