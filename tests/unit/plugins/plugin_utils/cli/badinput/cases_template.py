# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile kURL ``{{kurl}}`` templates (ids ``template-``), rendered as ``preflight_check`` renders a HostPreflight
file (entries.py ``template``): each refused with one line that names the file, the line, the construct and the
bound, within the harness's CPU and memory bounds. The templates' other behaviour (Go's printf, nesting up to the
bound, one budget per host) is tested in tests/unit/plugins/module_utils/spec/test_templatebounds.py.
"""

from __future__ import annotations

from .harness import Case

# The file: a HostPreflight (under 150 bytes) whose collectors are two nested ranges of 200,000.
NESTED_RANGES = ("apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nspec:\n  collectors: "
                 "[{{kurl range 200000}}{{kurl range 200000}}{{kurl end}}{{kurl end}}]\n")


def _doubled(times, seed='"ab"'):
    """A variable doubled ``times`` times in a range (each time twice the characters)."""
    return ("{{kurl $x := %s}}{{kurl range %d}}{{kurl $x = print $x $x}}{{kurl end}}{{kurl len $x}}" % (seed, times))


def _nested_printf(times):
    """printf nested ``times`` deep through with: each level prints its dot twice."""
    return ('{{kurl with printf "%s%s" "ab" "ab"}}' + '{{kurl with printf "%s%s" . .}}' * times + "{{kurl len .}}"
            + "{{kurl end}}" * (times + 1))


# (id, template, the problem the one-line error names)
REFUSED = [
    ("nested-ranges-small-file", NESTED_RANGES, r"range over 200000 items: more than the \d+ evaluation steps left"),
    ("doubling-variable-40", _doubled(40), r"print's result is over the limit of 1048576 characters"),
    ("doubling-nested-printf-40", _nested_printf(40), r"printf's result is over the limit of 1048576 characters"),
    ("range-1e9", "{{kurl range 1000000000}}x{{kurl end}}", r"range over 1000000000 items: more than the \d+ evaluation"),
    ("range-1e18-with-break", "{{kurl range 1000000000000000000}}{{kurl break}}{{kurl end}}", r"range over 1000000000000000000 items"),
    ("printf-width-in-go-range", '{{kurl printf "%9999999d" 5}}', r"printf's %d of 9999999 characters is over the limit"),
    ("printf-width-star", '{{kurl printf "%*d" 1000000 5}}{{kurl printf "%*d" 1000000 5}}',
     r"rendered text is over the limit of 1048576 characters"),
    ("printf-precision-float", '{{kurl printf "%.9999999f" 1.5}}', r"printf's %f of 10000332 characters is over the limit"),
    ("deep-if-3000", "{{kurl if true}}" * 3000 + "x" + "{{kurl end}}" * 3000,
        r"\{\{kurl if\}\} nested deeper than 100 levels \(if, with, range, else if and parentheses count together\)"),
    ("deep-parentheses-3000", "{{kurl " + "(" * 3000 + "1" + ")" * 3000 + "}}", r"a parenthesis nested deeper than 100 levels"),
    ("deep-else-if-3000", "{{kurl if false}}" + "{{kurl else if false}}" * 3000 + "{{kurl end}}",
        r"\{\{kurl else if\}\} nested deeper than 100 levels"),
    ("deep-with-and-parentheses", "{{kurl with 1}}" * 60 + "{{kurl " + "(" * 60 + "1" + ")" * 60 + "}}" + "{{kurl end}}" * 60,
        r"a parenthesis nested deeper than 100 levels"),
    ("list-doubling-40", '{{kurl $l := list (printf "%1000d" 1)}}{{kurl range 40}}{{kurl $l = list $l $l}}{{kurl end}}{{kurl print $l}}',
     r"a value printed in more than 1048576 characters"),
    ("list-nested-5000", "{{kurl $l := list 1}}{{kurl range 5000}}{{kurl $l = list $l}}{{kurl end}}{{kurl print $l}}",
     r"a value nested deeper than 100 levels cannot be printed"),
    ("list-nested-compared", "{{kurl $l := list 1}}{{kurl range 500}}{{kurl $l = list $l}}{{kurl end}}{{kurl has $l (list $l)}}",
        r"a value nested deeper than 100 levels cannot be compared"),
    ("output-flood", "{{kurl range 100000}}" + "x" * 100 + "{{kurl end}}", r"the rendered text is over the limit of 1048576"),
    ("join-separator", _doubled(19).replace("{{kurl len $x}}", "{{kurl join $x (list 1 2 3)}}"),
     r"join's result is over the limit of 1048576 characters"),
    ("quote-control-characters", _doubled(18, r'"a\x01"').replace("{{kurl len $x}}", "{{kurl quote $x}}"),
     r"a quoted string of more than 1048576 characters"),
    ("squote-many", _doubled(19).replace("{{kurl len $x}}", "{{kurl squote $x $x $x}}"), r"squote's result is over the limit"),
    ("contains-in-a-loop", _doubled(19).replace("{{kurl len $x}}", '{{kurl range 100000}}{{kurl contains "z" $x}}{{kurl end}}'),
        r"more than 1000000 evaluation steps"),
    ("semver-constraint-long", '{{kurl semverCompare "%s - 1" "1.0.0"}}' % ("1x" * 2000), r"improper constraint: longer than 256"),
    ("semver-in-a-loop", '{{kurl range 100000}}{{kurl semverCompare "%s" "1.0.0"}}{{kurl end}}' % ("1" * 250),
        r"more than 1000000 evaluation steps"),
    ("tokens-1MiB", "{{kurl 1}}" * 100000, r"the template has more than 50000 tokens"),
    ("old-variables-looked-up", "".join("{{kurl $v%d := 1}}" % i for i in range(8000)) + "{{kurl $v0}}" * 8000,
        r"more than 1000000 evaluation steps"),
    ("empty-loop", "{{kurl range 999000}}{{kurl if true}}{{kurl end}}{{kurl end}}", r"more than 1000000 evaluation steps"),
]


def _case(name, text, problem):
    line = r"(?m)^error: \S*hp\.yaml: line \d+: (?=[^\n]*%s)[^\n]*\{\{kurl" % problem
    return Case("template-" + name, ["{work}/hp.yaml"], files={"hp.yaml": text}, entry="template", stderr=line)


CASES = [_case(*c[:3]) for c in REFUSED]
