"""One failing example per validation rule; each must name its field path."""

from __future__ import annotations

import json

import pytest

from owed.plan.load import PlanError, parse_plan


def P(**top) -> dict:
    return {"trunk": "main", **top}


def N(**kw) -> dict:
    return {"id": "a", **kw}


def C(**kw) -> dict:
    return {"id": "c", "run": "x", **kw}


def problems(doc: dict) -> list[str]:
    with pytest.raises(PlanError) as e:
        parse_plan(json.dumps(doc), fmt="json")
    return e.value.problems


CASES = [
    # top level
    (P(version=2), "version: expected 1, got 2"),
    ({"nodes": []}, "trunk: required"),
    (P(trunk="a b"), "trunk: must not contain spaces"),
    (P(trunk="a..b"), 'trunk: must not contain ".."'),
    (P(trunk="-x"), 'trunk: must not start with "-"'),
    (P(trunk="x.lock"), 'trunk: no component may end with ".lock"'),
    (P(bogus=1), "bogus: unknown key"),
    (P(closure="x"), 'closure: expected a list, got "x"'),
    (P(closure=["../x"]), 'closure[0]: ".." segment'),
    (P(setup="  "), 'setup: expected a non-blank string, got "  "'),
    (P(slot_setup=True), "slot_setup: expected a non-blank string or false, got true"),
    (P(limits={"file_mib": 0}), "limits.file_mib: expected a positive number of MiB"),
    (P(limits={"diff_mib": "abc"}), "limits.diff_mib: expected a positive number of MiB"),
    (P(limits={"diff_mib": True}), "limits.diff_mib: expected a positive number of MiB (at most 2^53-1), got true"),
    (P(limits={"files": 1}), 'limits.files: unknown key (did you mean "file_mib"?)'),
    # invariants
    (P(invariants=[C(id="-x")]), "invariants[0].id: expected an id"),
    (P(invariants=[{"id": "i"}]), "invariants[0].run: required"),
    (P(invariants=[C(timeout_s=0)]), "invariants[0].timeout_s: expected a positive integer, got 0"),
    (P(invariants=[C(timeout_s=True)]), "invariants[0].timeout_s: expected a positive integer, got true"),
    (P(invariants=[C(timeout_s="x")]), 'invariants[0].timeout_s: expected a positive integer, got "x"'),
    (P(invariants=[C(timeout_s=1.5)]), "invariants[0].timeout_s: expected a positive integer, got 1.5"),
    (P(invariants=[C(timeout_s=2**60)]), "invariants[0].timeout_s: expected a positive integer"),
    (P(invariants=[C(min_tests=-1)]), "invariants[0].min_tests: expected a non-negative integer, got -1"),
    (P(invariants=[C(reads=["/abs/**"])]), "invariants[0].reads[0]: absolute paths are not allowed"),
    (P(invariants=[C(repeat={"runs": 10})]), "invariants[0].repeat.runs: expected an integer from 1 to 9, got 10"),
    (P(invariants=[C(repeat={"runs": 2, "need": 3})]), "invariants[0].repeat.need: must not exceed runs (2), got 3"),
    (P(invariants=[C(repeat={"need": 1})]), "invariants[0].repeat.runs: required"),
    (P(invariants=[C(), C()]), 'invariants[1].id: duplicate invariant id "c" (also invariants[0])'),
    (P(invariants=[C(red=True)]), "invariants[0].red: unknown key"),
    (P(invariants=[C(on_timeout=3)]), "invariants[0].on_timeout: expected a non-blank string, got 3"),
    # nodes
    (P(nodes={"a": 1}), "nodes: expected a list, got a mapping"),
    (P(nodes=["a"]), 'nodes[0]: expected a mapping, got "a"'),
    (P(nodes=[{}]), "nodes[0].id: required"),
    (P(nodes=[N(id="a b")]), 'nodes[0].id: expected an id (letters, digits, \'.\', \'_\', \'-\'; starting with a letter or digit), got "a b"'),
    (P(nodes=[N(id="a..b")]), 'nodes[0].id: must not contain ".."'),
    (P(nodes=[N(id="x.lock")]), 'nodes[0].id: must not end with "." or ".lock"'),
    (P(nodes=[N(), N()]), 'nodes[1].id: duplicate node id "a" (also nodes[0])'),
    (P(nodes=[N(id="KB4"), N(id="kb4")]), 'nodes[1].id: "kb4" equals "KB4" (nodes[0]) ignoring case'),
    (P(nodes=[N(deps=["zz"])]), 'nodes[0].deps[0]: unknown node "zz"'),
    (P(nodes=[N(id="b"), N(deps=["b", "b"])]), 'nodes[1].deps[1]: duplicate dependency "b"'),
    (P(nodes=[N(deps=["b"]), N(id="b", deps=["a"])]), "nodes[0].deps: dependency cycle a -> b -> a"),
    (P(nodes=[N(deps=["a"])]), "nodes[0].deps: dependency cycle a -> a"),
    (P(nodes=[N(checks=[C()])]), "nodes[0].writes: must not be empty when the node has checks"),
    (P(nodes=[N(writes=["/etc/"])]), "nodes[0].writes[0]: absolute paths are not allowed"),
    (P(nodes=[N(writes=["src/../x"])]), 'nodes[0].writes[0]: ".." segment'),
    (P(nodes=[N(writes=["src/[ab].c"])]), "nodes[0].writes[0]: brackets are not supported"),
    (P(nodes=[N(writes=["src/{a,b}/"])]), "nodes[0].writes[0]: braces are not supported"),
    (P(nodes=[N(writes=["!src/"])]), 'nodes[0].writes[0]: negation ("!") is not supported'),
    (P(nodes=[N(writes=["src\\x"])]), "nodes[0].writes[0]: backslashes are not supported"),
    (P(nodes=[N(writes=["src/**.c"])]), 'nodes[0].writes[0]: "**" must be a whole path segment'),
    (P(nodes=[N(writes=["a//b"])]), 'nodes[0].writes[0]: empty segment ("//")'),
    (P(nodes=[N(writes=[""])]), 'nodes[0].writes[0]: expected a path pattern, got ""'),
    (P(nodes=[N(later="yes")]), 'nodes[0].later: expected true or false, got "yes"'),
    (P(nodes=[N(type="Fix")]), 'nodes[0].type: expected a type matching ^[a-z][a-z0-9-]*$, got "Fix"'),
    (P(nodes=[N(title="")]), 'nodes[0].title: expected a non-blank string, got ""'),
    (P(nodes=[N(brief=7)]), "nodes[0].brief: expected a non-blank string, got 7"),
    (P(nodes=[N(writes=["x"], checks=[C(), C()])]), 'nodes[0].checks[1].id: duplicate check id "c" (also checks[0])'),
    (P(nodes=[N(writes=["x"], checks=[C(red=True)])]), "nodes[0].checks[0].tests: required when red is true"),
    (P(nodes=[N(writes=["x"], checks=[C(red_expect="(")])]), "nodes[0].checks[0].red_expect: invalid regex"),
    (P(nodes=[N(writes=["x"], checks=[C(red=True, tests=["t/"], repeat={"runs": 2})])]), "nodes[0].checks[0].repeat: not allowed on a red check"),
    (P(nodes=[N(writes=["x"], checks=[C(red="true")])]), 'nodes[0].checks[0].red: expected true or false, got "true"'),
    (P(nodes=[N(writes=["x"], checks=[C(tests=["a[0]"])])]), "nodes[0].checks[0].tests[0]: brackets are not supported"),
    (P(nodes=[N(writes=["x"], checks=[C(timeout=5)])]), 'nodes[0].checks[0].timeout: unknown key (did you mean "timeout_s"?)'),
    (P(nodes=[N(review={"count": -1})]), "nodes[0].review.count: expected a non-negative integer, got -1"),
    (P(nodes=[N(review={"min_rank": 0})]), "nodes[0].review.min_rank: expected an integer from 1 to 3, got 0"),
    (P(nodes=[N(review={"min_rank": 4})]), "nodes[0].review.min_rank: expected an integer from 1 to 3, got 4"),
    (P(nodes=[N(review={"rank": 2})]), "nodes[0].review.rank: unknown key"),
    (P(nodes=[N(approve="parent")]), 'nodes[0].approve: expected "owner", got "parent"'),
    (P(nodes=[N(evidence=[{"id": "-e", "what": "x"}])]), "nodes[0].evidence[0].id: expected an id"),
    (P(nodes=[N(evidence=[{"id": "e"}])]), "nodes[0].evidence[0].what: required"),
    (P(nodes=[N(evidence=[{"id": "e", "what": "x", "by": "boss"}])]), 'nodes[0].evidence[0].by: expected "owner" or "parent" or "reviewer", got "boss"'),
    (P(nodes=[N(evidence=[{"id": "e", "what": "x"}] * 2)]), 'nodes[0].evidence[1].id: duplicate evidence id "e" (also evidence[0])'),
    (P(nodes=[N(drive={"writer": {"agent": "ghost"}})]), 'nodes[0].drive.writer.agent: "ghost" is not defined in drive.agents'),
    (P(nodes=[N(drive={"reviewer": {"model": ""}})]), 'nodes[0].drive.reviewer.model: expected a non-blank string, got ""'),
    (P(nodes=[N(drive={"max": 2})]), "nodes[0].drive.max: unknown key"),
    # worktrees (§3.1)
    (P(worktrees={"branch": "owed/{node}"}), "worktrees.branch: must contain {attempt}"),
    (P(worktrees={"branch": "{node}/{node}-{attempt}"}), "worktrees.branch: must contain {node} exactly once"),
    (P(worktrees={"branch": "{node}/{foo}/{attempt}"}), "worktrees.branch: unknown placeholder {foo}"),
    (P(worktrees={"branch": "{node}{attempt}"}), "worktrees.branch: ambiguous: {attempt} after {node}"),
    (P(worktrees={"branch": "{node}-{type}-{attempt}"}), "worktrees.branch: ambiguous: {type} after {node}"),
    (P(worktrees={"branch": "{attempt}{node}"}), "worktrees.branch: ambiguous: {attempt} before {node}"),
    (P(worktrees={"branch": "owed/{node}\t{attempt}"}), "worktrees.branch: must not contain control characters"),
    (P(worktrees={"branch": "owed/{node}/{attempt}}"}), "worktrees.branch: unbalanced { or }"),
    (P(worktrees={"branch": "x../{node}/{attempt}"}), 'worktrees.branch: expands to an invalid branch name (must not contain "..")'),
    (P(worktrees={"root": "a\u2028b"}), "worktrees.root: must not contain control characters"),
    (P(worktrees={"root": ""}), 'worktrees.root: expected a non-empty path, got ""'),
    (P(worktrees={"dir": "x"}), "worktrees.dir: unknown key"),
    # exec (§3.2)
    (P(exec={"env": {"1BAD": "x"}}), 'exec.env["1BAD"]: expected a variable name'),
    (P(exec={"env": {"CI": "x"}}), "exec.env.CI: reserved: owed sets CI, OWED and OWED_TREE itself"),
    (P(exec={"env": {"OWED": "x"}}), "exec.env.OWED: reserved"),
    (P(exec={"env": {"OWED_TREE": "x"}}), "exec.env.OWED_TREE: reserved"),
    (P(exec={"env": {"N": 1}}), "exec.env.N: expected a string, got 1"),
    (P(exec={"wrap": []}), "exec.wrap: expected a non-empty list, got an empty list"),
    (P(exec={"wrap": ["x", ""]}), 'exec.wrap[1]: expected a non-empty string, got ""'),
    (P(exec={"wrap": 3}), "exec.wrap: expected a non-empty list or a wrap template, got 3"),
    (P(exec={"wrap": "ssh r {cmd} {dir}"}), "exec.wrap: unknown placeholder {dir} (allowed: {cwd} {timeout} {cmd})"),
    (P(exec={"wrap": "ssh r {cwd}"}), "exec.wrap: must contain {cmd}"),
    (P(exec={"wrap": "ssh r '{cmd}'"}), "exec.wrap: placeholder {cmd} is inside quotes"),
    (P(exec={"wrap": "ssh r \"{cwd} {cmd}"}), "exec.wrap: placeholder {cwd} is inside quotes"),
    (P(exec={"wrap_grace_s": -1}), "exec.wrap_grace_s: expected a non-negative integer, got -1"),
    (P(exec={"touch": "sometimes"}), 'exec.touch: expected "always" or "never" or "reset", got "sometimes"'),
    (P(exec={"parallel": 0}), "exec.parallel: expected an integer from 1 to 32, got 0"),
    (P(exec={"trees": "shared"}), 'exec.trees: expected "fresh" or "reuse", got "shared"'),
    # drive
    (P(drive={"writer": {"agent": "w"}}), 'drive.writer.agent: "w" is not defined in drive.agents'),
    (P(drive={"reviewer": {"agent": "r"}, "agents": {"w": {"command": "x"}}}), 'drive.reviewer.agent: "r" is not defined'),
    (P(drive={"writer": {"model": "m"}}), "drive.writer.agent: required"),
    (P(drive={"agents": {"a b": {"command": "x"}}}), 'drive.agents["a b"]: expected an agent name'),
    (P(drive={"agents": {"w": {}}}), "drive.agents.w: an agent needs exactly one of command (a shell command) and preset"),
    (P(drive={"agents": {"w": {"command": "x", "preset": "claude"}}}), "drive.agents.w: an agent needs exactly one of"),
    (P(drive={"agents": {"w": {"command": "x", "model": "m"}}}), "drive.agents.w: model and extra_args go with preset"),
    (P(drive={"agents": {"w": {"preset": "cursor"}}}), "drive.agents.w.preset: expected"),
    (P(drive={"reviewer": {"agent": "a"}, "agents": {"a": {"preset": "aider"}}}), "drive.reviewer.agent: \"a\" is an aider preset"),
    (P(drive={"agents": {"w": {"command": "x", "wrap": "ssh h {cwd}"}}}), "drive.agents.w.wrap: must contain {cmd}"),
    (P(drive={"agents": {"w": {"command": "x", "wrap": "ssh '{cmd}'"}}}), "drive.agents.w.wrap: placeholder {cmd} is inside quotes"),
    (P(drive={"agents": {"w": {"command": "x", "wrap": "s {cmd} {host}"}}}), "drive.agents.w.wrap: unknown placeholder {host}"),
    (P(drive={"agents": {"w": {"command": "x", "wrap": []}}}), "drive.agents.w.wrap: expected a non-empty list"),
    (P(drive={"agents": {"w": {"command": "x", "wrap": ["ssh", ""]}}}), 'drive.agents.w.wrap[1]: expected a non-empty string'),
    (P(drive={"agents": {"w": {"command": "x", "wrap_grace_s": 3}}}), "drive.agents.w.wrap_grace_s: unknown key"),
    (P(drive={"agents": {"w": {"command": "x", "timeout_s": 0}}}), "drive.agents.w.timeout_s: expected a positive integer, got 0"),
    (P(drive={"max": 0}), "drive.max: expected a positive integer, got 0"),
    (P(drive={"measure": 0}), "drive.measure: expected a positive integer, got 0"),
    (P(drive={"repairs": -1}), "drive.repairs: expected a non-negative integer, got -1"),
    (P(drive={"min_free_mb": -1}), "drive.min_free_mb: expected a non-negative integer"),
    (P(drive={"watch_idle_min": -1}), "drive.watch_idle_min: expected a non-negative integer"),
    (P(drive={"idle_rewake_min": "1h"}), 'drive.idle_rewake_min: expected a non-negative integer, got "1h"'),
    (P(drive={"merge_batch": 9}), "drive.merge_batch: expected an integer from 1 to 8, got 9"),
    (P(drive={"merge_batch": 0}), "drive.merge_batch: expected an integer from 1 to 8, got 0"),
    (P(drive={"same_model": "yes"}), "drive.same_model: expected"),
    # allow (§3.4)
    (P(allow=[{"nodes": ["x"]}]), "allow[0]: a rule needs at least one permission"),
    (P(allow=[{}]), "allow[0]: a rule needs at least one permission"),
    (P(allow=[{"review_rank": 4}]), "allow[0].review_rank: expected an integer from 1 to 3, got 4"),
    (P(allow=[{"review_count": -1}]), "allow[0].review_count: expected a non-negative integer, got -1"),
    (P(allow=[{"writes": []}]), "allow[0].writes: expected a non-empty list, got an empty list"),
    (P(allow=[{"adopt": ["../x"]}]), 'allow[0].adopt[0]: ".." segment'),
    (P(allow=[{"nodes": [], "writes": ["x/"]}]), "allow[0].nodes: expected a non-empty list"),
    (P(allow=[{"checks": ["c"], "merge": True}]), "allow[0].merge: unknown key"),
    (P(allow={"writes": ["x/"]}), "allow: expected a list, got a mapping"),
    # sweep
    (P(sweep={"timeout_s": 5}), "sweep.run: required"),
    (P(sweep={"run": "x", "timeout_s": 0}), "sweep.timeout_s: expected a positive integer, got 0"),
    (P(sweep={"run": "x", "lease": False}), "sweep.lease: unknown key"),
    # any string
    (P(setup="a\x00b"), "setup: must not contain NUL characters"),
]


@pytest.mark.parametrize(("doc", "expected"), CASES, ids=[c[1][:60] for c in CASES])
def test_rule(doc, expected):
    got = problems(doc)
    assert any(p.startswith(expected) for p in got), got


def test_non_string_keys_and_unhashable_keys():
    assert problems_yaml("trunk: m\n1: x") == ["plan: keys must be strings, got 1"]
    got = problems_yaml("trunk: m\n? [1]\n: x")
    assert len(got) == 1 and got[0].startswith("invalid YAML") and "unhashable" in got[0]


def problems_yaml(text: str) -> list[str]:
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    return e.value.problems


def test_every_problem_is_reported_at_once():
    doc = P(
        version=3,
        closure=["a//b"],
        nodes=[
            N(writes=["x"], checks=[C(timeout_s="x"), C(id="d", red=True)]),
            N(id="b", deps=["ghost"], review={"min_rank": 9}),
        ],
        exec={"env": {"CI": "1"}},
    )
    got = problems(doc)
    expected = [
        "version: expected 1",
        "closure[0]: empty segment",
        "nodes[0].checks[0].timeout_s: expected a positive integer",
        "nodes[0].checks[1].tests: required when red is true",
        "nodes[1].review.min_rank: expected an integer from 1 to 3",
        'nodes[1].deps[0]: unknown node "ghost"',
        "exec.env.CI: reserved",
    ]
    for e in expected:
        assert any(p.startswith(e) for p in got), (e, got)
    assert len(got) == len(expected)


def test_rules_still_run_next_to_a_broken_sibling_field():
    # node b's title is wrong, yet the cycle through it and the unknown dependency are reported
    doc = P(nodes=[N(deps=["b"]), N(id="b", title=3, deps=["a", "zz"])])
    got = problems(doc)
    assert "nodes[1].title: expected a non-blank string, got 3" in got
    assert 'nodes[1].deps[1]: unknown node "zz"' in got
    assert "nodes[0].deps: dependency cycle a -> b -> a" in got


@pytest.mark.parametrize(
    "doc",
    [
        P(nodes=[N(id="auth.v2_x-1", writes=["**"], checks=[C(id="unit:fast")])]),
        P(nodes=[N(writes=["src/**", "docs/", "*.md", "a/**/b/?.c"])]),
        P(worktrees={"branch": "{type}/{node}-{attempt}", "root": "/abs/wt"}),
        P(worktrees={"branch": "wt/{attempt}/{type}/{node}"}),
        P(exec={"wrap": ["/abs/heavy.sh", "--slots", "5"], "env": {"_X": ""}}),
        P(exec={"wrap": "ssh r cd {cwd} '&&' timeout {timeout} bash -lc {cmd}"}),
        P(drive={"agents": {"w": {"command": "x", "wrap": "/abs/wrap/ssh --shared h {cwd} {timeout} {cmd}"}}}),
        P(drive={"agents": {"w": {"command": "x", "wrap": ["flock", "/tmp/agents.lock"]}}}),
        P(drive={"agents": {"w": {"command": "x"}}}, nodes=[N(drive={"writer": {"agent": "w"}, "reviewer": {"model": "m"}})]),
        P(allow=[{"review_count": 0}], limits={"file_mib": "2.5"}),
        P(nodes=[N(writes=["x"], checks=[C(red=True, tests=["t/"], red_expect="not ok")])]),
    ],
)
def test_valid_edge_cases(doc):
    parse_plan(json.dumps(doc), fmt="json")


def _inv(**kw) -> dict:
    return {"id": "u", "run": "x", **kw}


@pytest.mark.parametrize("field,where", [("known_red", "invariants[0]"), ("quarantine", "invariants[0]")])
def test_exact_name_lists_hold_at_most_20_names_each_once(field, where):
    fix = [N(id="f")]
    twice = problems(P(nodes=fix, invariants=[_inv(**{field: [{"test": "t", "fix": "f"}, {"test": "t", "fix": "f"}]})]))
    assert any(p.startswith(f"{where}.{field}[1].test:") and "listed twice" in p for p in twice), twice
    many = [{"test": f"t{i}", "fix": "f"} for i in range(21)]
    over = problems(P(nodes=fix, invariants=[_inv(**{field: many})]))
    assert any(p.startswith(f"{where}.{field}:") and "at most 20 names (21 given)" in p for p in over), over


@pytest.mark.parametrize("field", ["known_red", "quarantine"])
def test_exact_name_lists_name_a_fix_node_of_the_plan(field):
    got = problems(P(nodes=[N(id="f")], invariants=[_inv(**{field: [{"test": "t", "fix": "f"}, {"test": "u", "fix": "nope"}]})]))
    assert any(p.startswith(f"invariants[0].{field}[1].fix:") and "unknown node" in p for p in got), got
    check = C(quarantine=[{"test": "t", "fix": "gone"}])
    got = problems(P(nodes=[N(id="f", checks=[check])]))
    assert any(p.startswith("nodes[0].checks[0].quarantine[0].fix:") for p in got), got
