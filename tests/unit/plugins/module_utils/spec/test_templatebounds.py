# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""kURL templates are evaluated within bounds: Go's printf errors printed cheaply, nesting and sizes up to the bounds
allowed, one budget for every document of a host.

The hostile templates themselves are refused in the bad-input harness (cases_template.py beside
tests/unit/plugins/plugin_utils/cli/badinput/harness.py, within its 2 CPU seconds and 200 MB). CPU here is
``time.process_time()`` (never wall clock) and memory the tracemalloc peak.
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import pytest

from ansible_collections.mooring.cluster.plugins.module_utils.spec.errors import KurlTemplateError
from ansible_collections.mooring.cluster.plugins.module_utils.spec.kurltemplate import render_text, render_tree, template_data
from ansible_collections.mooring.cluster.plugins.module_utils.spec.templatevalues import (
    MAX_DEPTH,
    MAX_STEPS,
    MAX_STRING,
    MAX_TOKENS,
)

DATA = template_data({"spec": {"kubernetes": {"version": "1.29.4"}}}, primary_hosts=["10.0.0.1", "10.0.0.2"])
CPU_LIMIT = 6.0            # seconds of process time; the slowest case takes about 1 s
PEAK_LIMIT = 64 * 1024 * 1024  # bytes traced; the largest case peaks near 20 MiB


def _doubled(times, seed='"ab"'):
    """A variable doubled ``times`` times in a range (each time twice the characters)."""
    return ("{{kurl $x := %s}}{{kurl range %d}}{{kurl $x = print $x $x}}{{kurl end}}{{kurl len $x}}" % (seed, times))


def _refused(text):
    with pytest.raises(KurlTemplateError) as err:
        render_text(text, DATA, "hp.yaml")
    return str(err.value)


@pytest.mark.parametrize("text, expected", [
    # Go's fmt: a width or precision over 1e6 written in the format stops its parse and takes the rest of the format
    ('{{kurl printf "%999999999d" 5}}', "%!(NOVERB)%!(EXTRA int=5)"),
    ('{{kurl printf "%.999999999d" 5}}', "%!(NOVERB)%!(EXTRA int=5)"),
    ('{{kurl printf "%' + "9" * 100000 + 'd" 5}}', "%!(NOVERB)%!(EXTRA int=5)"),
    # ... given as an argument (*): %!(BADWIDTH) / %!(BADPREC), then the verb without it
    ('{{kurl printf "%*d" 999999999 5}}', "%!(BADWIDTH)5"),
    ('{{kurl printf "%*d" -10000000 5}}', "%!(BADWIDTH)5"),
    ('{{kurl printf "%.*d" 10000000 5}}', "%!(BADPREC)5"),
    ('{{kurl printf "%.*f" 999999999 1.5}}', "%!(BADPREC)1.500000"),
])
def test_printf_huge_width_or_precision_prints_go_s_error_cheaply(text, expected):
    start = time.process_time()
    tracemalloc.start()
    try:
        assert render_text(text, DATA) == expected
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.process_time() - start < CPU_LIMIT
    assert peak < PEAK_LIMIT


@pytest.mark.parametrize("args, expected", [
    # widths and precisions from arguments (Go's fmt tests)
    ('"%*d" 4 42', "  42"), ('"%-*d" 4 42', "42  "), ('"%*d" -4 42', "42  "), ('"%-*d" -4 42', "42  "),
    ('"%.*d" 4 42', "0042"), ('"%*.*d" 8 4 42', "    0042"), ('"%0*d" 4 42', "0042"),
    ('"%*d" nil 42', "%!(BADWIDTH)42"), ('"%*d" 10000000 42', "%!(BADWIDTH)42"), ('"%*d" "4" 42', "%!(BADWIDTH)42"),
    ('"%.*d" nil 42', "%!(BADPREC)42"), ('"%.*d" -1 42', "%!(BADPREC)42"), ('"%.*d" 10000000 42', "%!(BADPREC)42"),
    ('"%*d" 5 "foo"', "%!d(string=  foo)"), ('"%*% %d" 20 5', "% 5"), ('"%*" 4', "%!(NOVERB)"),
    ('"%*d"', "%!(BADWIDTH)%!d(MISSING)"),
    # explicit argument indexes
    ('"%[2]d %[1]d" 1 2', "2 1"), ('"%[3]d" 1 2', "%!d(BADINDEX)"), ('"%[2]*[1]d" 12 5', "   12"),
    ('"%d %d %#[1]x %#x" 16 17', "16 17 0x10 0x11"), ('"%[-1]d" 1', "%!d(BADINDEX)"), ('"%[1]d %[1]d" 7', "7 7"),
    ('"%[1]d %d" 7', "7 %!d(MISSING)"),
    # verbs Go does not know, a format that ends too soon, extra arguments
    ('"%z" 3', "%!z(int=3)"), ('"%5z" 3', "%!z(int=    3)"), ('"%d %" 3', "3 %!(NOVERB)"), ('"%5." 3', "%!.(int=    3)"),
    ('"a" nil', "a%!(EXTRA <nil>)"), ('"a" 1 "b"', "a%!(EXTRA int=1, string=b)"),
    ('"%s" nil', "%!s(<nil>)"), ('"%v" nil', "<nil>"),
    ('"%.2s|%5.1f|%x|%X|%o|%c|%+d|% d|%-3d|" "abc" 3.14159 255 255 8 65 5 5 5', "ab|  3.1|ff|FF|10|A|+5| 5|5  |"),
])
def test_printf_follows_go_s_scanner(args, expected):
    assert render_text("{{kurl printf %s}}" % args, DATA) == expected


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH])
def test_nesting_up_to_the_limit_is_fine(depth):
    assert render_text("{{kurl if true}}" * depth + "x" + "{{kurl end}}" * depth, DATA) == "x"
    assert render_text("{{kurl range 1}}" * depth + "x" + "{{kurl end}}" * depth, DATA) == "x"
    assert render_text("{{kurl " + "(" * depth + "1" + ")" * depth + "}}", DATA) == "1"
    assert render_text("{{kurl with 1}}" * (depth // 2) + "{{kurl " + "(" * (depth - depth // 2) + "1"
                       + ")" * (depth - depth // 2) + "}}" + "{{kurl end}}" * (depth // 2), DATA) == "1"
    assert "nested deeper than 100 levels" in _refused("{{kurl if true}}" * (depth + 2) + "{{kurl end}}" * (depth + 2))


def test_strings_and_output_up_to_the_limit_are_fine():
    assert render_text(_doubled(19), DATA) == str(2 ** 20)                    # 1 MiB: the most one string may hold
    assert len(render_text('{{kurl printf "%*d" 1000000 5}}', DATA)) == 1000000  # Go's largest width
    assert len(render_text("{{kurl range 1024}}" + "x" * 1024 + "{{kurl end}}", DATA)) == MAX_STRING
    assert render_text("{{kurl range 5}}{{kurl end}}{{kurl range -3}}x{{kurl else}}none{{kurl end}}", DATA) == "none"


def test_a_render_tree_shares_one_budget():
    scalar = "{{kurl range 1000}}" + "x" * 100 + "{{kurl end}}"            # 100,000 characters each
    assert len(render_tree({"a": [scalar] * 10}, DATA)["a"][9]) == 100000
    with pytest.raises(KurlTemplateError) as err:
        render_tree({"spec": {"collectors": [scalar] * 11}}, DATA, "hp.yaml")
    assert str(err.value).startswith("hp.yaml at spec.collectors[10]: line 1: the rendered text is over the limit")


@pytest.mark.parametrize("literal", [r'"\U7fffffff"', r'"\U00110000"', r'"\ud800"', r'"\U0000dfff"'])
def test_an_escape_that_is_not_a_rune_is_refused(literal):
    assert "invalid escape" in _refused("{{kurl %s}}" % literal)


def test_has_compares_nested_values_as_go_s_deep_equal():
    assert render_text('{{kurl has (list 1 "a") (list (list 1 "a") 2)}} {{kurl has (list 1) (list (list 1.0))}}', DATA) \
        == "true false"


def test_quote_escapes_as_go_does_on_both_paths():
    assert render_text(r'{{kurl quote "a\"b\\c"}} {{kurl quote "t\tu\u00e9\x01\U0001F600"}}', DATA) == \
        '"a\\"b\\\\c" "t\\tu\u00e9\\x01\U0001F600"'


def test_a_python_recursion_limit_below_the_bound_is_still_one_line():
    depth = len(_frames())
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 60)
    try:
        message = _refused("{{kurl if true}}" * 90 + "{{kurl end}}" * 90)
    finally:
        sys.setrecursionlimit(old)
    assert "nested too deep for this Python (the limit is 100 levels)" in message and "\n" not in message


def _frames():
    frame, frames = sys._getframe(), []  # pylint: disable=protected-access
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames


def test_the_bounds_are_what_the_docs_say():
    assert (MAX_STEPS, MAX_TOKENS, MAX_STRING, MAX_DEPTH) == (1000000, 50000, 1024 * 1024, 100)


def test_preflight_check_renders_every_document_of_a_host_within_one_budget():
    from ansible_collections.mooring.cluster.plugins.modules.preflight_check import spec_documents  # pylint: disable=import-outside-toplevel

    loop = {"apiVersion": "troubleshoot.sh/v1beta2", "kind": "HostPreflight",
            "spec": {"collectors": ["{{kurl range 300000}}{{kurl end}}"]}}  # 600,000 steps: two are too many
    params = {"installer": {}, "host_preflight_file": None, "run": "install", "primary_hosts": [], "secondary_hosts": []}
    assert len(spec_documents(dict(params, host_preflight=[loop]))["primary"]) == 1
    with pytest.raises(KurlTemplateError) as err:
        spec_documents(dict(params, host_preflight=[loop, loop]))
    assert str(err.value).startswith("host_preflight[1] at spec.collectors[0]: line 1: ")
