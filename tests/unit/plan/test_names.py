"""Branch names, the slot branch template (§3.1), wrap templates, and plan warnings."""

from __future__ import annotations

import pytest

from owed.plan.load import parse_plan
from owed.plan.names import branch_problems, expand_branch, regex_problems, template_problems, wrap_template_problems
from owed.plan.validate import warnings


@pytest.mark.parametrize("name", ["main", "feature/x-1", "release/1.2", "a@b", "owed/n/1"])
def test_valid_branch_names(name):
    assert branch_problems(name) == []


@pytest.mark.parametrize(
    "name", ["", "a b", "a..b", "-x", "/x", "x/", "a//b", "x.", "a/.b", "a.lock/b", "x.lock", "a@{b", "@", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "a\x7f"]
)
def test_invalid_branch_names(name):
    assert branch_problems(name)


@pytest.mark.parametrize(
    "template",
    ["owed/{node}/{attempt}", "{type}/{node}-{attempt}", "{attempt}/{node}", "{type}_{attempt}/{node}", "x/{node}/a{attempt}/{type}"],
)
def test_unambiguous_templates(template):
    assert template_problems(template) == []


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("{node}{attempt}", "ambiguous: {attempt} after {node}"),
        ("{node}-{type}-{attempt}", "ambiguous: {type} after {node}"),  # '-' can occur in a type
        ("{attempt}{type}/{node}", "ambiguous: {attempt} before {node}"),
        ("{type}-{node}/{attempt}", "ambiguous: {type} before {node}"),
        ("{node}/1{attempt}", "ambiguous: {attempt} after {node}"),  # a digit can occur in an attempt
        ("{node}", "must contain {attempt}"),
        ("{attempt}", "must contain {node} exactly once"),
        ("{node}/{bogus}/{attempt}", "unknown placeholder {bogus}"),
        ("{node/{attempt}", "unbalanced { or }"),
        ("o\nwed/{node}/{attempt}", "must not contain control characters"),
        ("o\u2029/{node}/{attempt}", "must not contain control characters"),
    ],
)
def test_refused_templates(template, problem):
    assert any(p.startswith(problem) for p in template_problems(template)), template_problems(template)


def test_expand_branch():
    assert expand_branch("{type}/{node}-{attempt}", "auth", 3, "fix") == "fix/auth-3"
    assert expand_branch("owed/{node}/{attempt}", "a", 1) == "owed/a/1"


def test_wrap_templates():
    assert wrap_template_problems("ssh r {cwd} {timeout} {cmd}") == []
    assert wrap_template_problems("{cmd}") == []
    assert wrap_template_problems("x {cmd} {cwdx}") == ["unknown placeholder {cwdx} (allowed: {cwd} {timeout} {cmd})"]
    assert wrap_template_problems("x {cmd} }") == ["unbalanced { or }"]


def test_regex_problems():
    assert regex_problems("not ok|Assertion") == []
    assert regex_problems("(")[0].startswith("invalid regex")
    # the compiler's own limits are problems, not crashes
    assert regex_problems("(" * 2000 + ")" * 2000)[0].startswith("invalid regex")
    assert regex_problems("a{99999999999}") == ["invalid regex: the repetition number is too large"]


def test_warnings():
    plan = parse_plan(
        """
        trunk: main
        invariants: [{id: loop, run: 'for i in 1 2; do npm test; done', min_tests: 3}]
        nodes:
          - id: docs
          - id: manual
            evidence: [{id: e, what: looked}]
          - id: ok
            writes: [x]
            checks:
              - {id: c, run: make test}
              - {id: seqs, run: 'seq 3 | xargs -n1 make', min_tests: 1}
              - {id: stray, run: x, tests: [t/]}
        """
    )
    assert warnings(plan) == [
        "invariant loop sets min_tests but runs a shell loop: owed counts only the last test summary of the log (one run), not the sum",
        "node docs has no checks: its acceptance rests on review alone",
        "check seqs of node ok sets min_tests but runs a shell loop: owed counts only the last test summary of the log (one run), not the sum",
        "check stray of node ok sets tests or red_expect without red: true; they have no effect",
    ]


def test_no_warnings_for_a_plain_plan(quickstart):
    assert warnings(parse_plan(quickstart)) == []


@pytest.mark.parametrize("template", [
    "ssh '{cmd}'", 'ssh "{cwd} {cmd}', 'a "\\{cmd}" {cmd}', "a {cmd}", "a \\'{cmd}", "a '${cmd}' {cmd}",
    "x '{cwd}' \"{timeout}\" {cmd}", "a 'b' {cmd} \"c\"", "ssh r cd {cwd} '&&' timeout {timeout} bash -lc {cmd}",
])
def test_wrap_quoting_rules_are_the_runners(template):
    # The plan refuses exactly the quoting the runner would refuse at measurement time (names.py stays pure:
    # it cannot import runner/, so the rule is written twice and held equal here).
    from runner.spec import validate_template

    ours = [p for p in wrap_template_problems(template) if "quote" in p]
    assert ours == [p for p in validate_template(template) if "quote" in p]
