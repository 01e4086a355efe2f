"""Downgrades (ΔO⁻): each kind detected with its stable wording; tightenings and cosmetic changes are not."""

from __future__ import annotations

import copy

import pytest
import yaml

from owed.plan.downgrades import (
    Downgrade,
    can_carry,
    changed_nodes,
    downgrades,
    exec_for_keys,
    invalidates,
    plan_wide_changes,
)
from owed.plan.load import parse_plan

from .conftest import FULL  # noqa: TID252

BASE = yaml.safe_load(FULL)


def edit(change) -> tuple:
    new = copy.deepcopy(BASE)
    change(new)
    return parse_plan(FULL), parse_plan(yaml.safe_dump(new))


def node(doc, node_id):
    return next(n for n in doc["nodes"] if n["id"] == node_id)


def check(doc, node_id, check_id):
    return next(c for c in node(doc, node_id)["checks"] if c["id"] == check_id)


def found(change) -> list[tuple[str, str]]:
    old, new = edit(change)
    return [(d.node, d.what) for d in downgrades(old, new)]


DOWNGRADES = [
    ("check removed", lambda d: node(d, "auth-api")["checks"].pop(1), ("auth-api", "check lint removed")),
    ("red off", lambda d: check(d, "auth-api", "auth:tests").update(red=False), ("auth-api", "red turned off on check auth:tests")),
    ("red removed", lambda d: check(d, "auth-api", "auth:tests").pop("red"), ("auth-api", "red turned off on check auth:tests")),
    ("min_tests", lambda d: check(d, "schema", "schema-tests").update(min_tests=1), ("schema", "min_tests lowered on check schema-tests (2 -> 1)")),
    ("min_tests dropped", lambda d: check(d, "schema", "schema-tests").pop("min_tests"), ("schema", "min_tests lowered on check schema-tests (2 -> none)")),
    ("check run", lambda d: check(d, "schema", "schema-tests").update(run="true"), ("schema", "check schema-tests definition changed (run)")),
    ("check reads", lambda d: check(d, "schema", "schema-tests").update(reads=["x/**"], timeout_s=5), ("schema", "check schema-tests definition changed (timeout_s, reads)")),
    ("red tests", lambda d: check(d, "auth-api", "auth:tests").update(tests=["t/**"]), ("auth-api", "check auth:tests definition changed (tests)")),
    ("red_expect", lambda d: check(d, "auth-api", "auth:tests").pop("red_expect"), ("auth-api", "check auth:tests definition changed (red_expect)")),
    ("repeat", lambda d: check(d, "auth-api", "lint").update(repeat={"runs": 3, "need": 1}), ("auth-api", "check lint definition changed (repeat)")),
    ("review count", lambda d: node(d, "auth-api")["review"].update(count=1), ("auth-api", "review count lowered (2 -> 1)")),
    ("review rank", lambda d: node(d, "auth-api")["review"].update(min_rank=1), ("auth-api", "review min_rank lowered (2 -> 1)")),
    ("review dropped", lambda d: node(d, "auth-api").pop("review"), [("auth-api", "review count lowered (2 -> 0)"), ("auth-api", "review min_rank lowered (2 -> 1)")]),
    ("writes widened", lambda d: node(d, "schema")["writes"].append("docs/"), ("schema", "writes widened: +docs/")),
    ("writes glob widened", lambda d: node(d, "auth-api")["writes"].append("test/**/*.ts"), ("auth-api", "writes widened: +test/**/*.ts")),
    ("node removed", lambda d: d["nodes"].pop(1), ("auth-api", "node removed")),
    ("dependency removed", lambda d: node(d, "auth-api").pop("deps"), ("auth-api", "dependency schema removed")),
    ("approve removed", lambda d: node(d, "auth-api").pop("approve"), ("auth-api", "approve removed")),
    ("evidence removed", lambda d: node(d, "schema").pop("evidence"), ("schema", "evidence ui removed")),
    ("evidence weakened", lambda d: node(d, "schema")["evidence"][0].update(by="reviewer"), ("schema", "evidence ui weakened (parent -> reviewer)")),
    ("invariant removed", lambda d: d.update(invariants=[]), ("trunk", "invariant unit removed")),
    ("invariant min_tests", lambda d: d["invariants"][0].update(min_tests=4), ("trunk", "min_tests lowered on invariant unit (5 -> 4)")),
    ("invariant run", lambda d: d["invariants"][0].update(run="true"), ("trunk", "invariant unit definition changed (run)")),
    ("invariant timeout", lambda d: d["invariants"][0].update(timeout_s=301), ("trunk", "invariant unit definition changed (timeout_s)")),
    ("invariant reads", lambda d: d["invariants"][0].update(reads=["src/**"]), ("trunk", "invariant unit definition changed (reads)")),
    ("setup", lambda d: d.update(setup="npm i"), ("*", "setup changed")),
    ("setup removed", lambda d: d.pop("setup"), ("*", "setup changed")),
    ("closure", lambda d: d["closure"].pop(), ("*", "closure changed")),
    ("exec env", lambda d: d["exec"]["env"].update(X="1"), ("*", "exec changed; cannot prove obligations were not reduced")),
    ("exec wrap", lambda d: d["exec"].update(wrap=["true"]), ("*", "exec changed; cannot prove obligations were not reduced")),
    ("exec shell plain", lambda d: d["exec"].update(shell="plain"), ("*", "exec changed; cannot prove obligations were not reduced")),
    ("allow rule changed", lambda d: d["allow"][0].update(review_count=0), ("trunk", "allow changed")),
    ("allow rule added", lambda d: d["allow"].append({"writes": ["x/"]}), ("trunk", "allow changed")),
]


@pytest.mark.parametrize(("name", "change", "expected"), DOWNGRADES, ids=[c[0] for c in DOWNGRADES])
def test_downgrade(name, change, expected):
    assert found(change) == (expected if isinstance(expected, list) else [expected])


NOT_DOWNGRADES = [
    ("same plan", lambda d: None),
    ("check added", lambda d: node(d, "schema")["checks"].append({"id": "more", "run": "x"})),
    ("node added", lambda d: d["nodes"].append({"id": "new", "deps": ["schema"]})),
    ("dependency added", lambda d: d["nodes"].append({"id": "x"}) or node(d, "auth-api")["deps"].append("x")),
    ("min_tests raised", lambda d: check(d, "schema", "schema-tests").update(min_tests=9)),
    ("min_tests added", lambda d: check(d, "auth-api", "lint").update(min_tests=1)),
    ("red turned on", lambda d: check(d, "schema", "schema-tests").update(red=True, tests=["t/"])),
    ("review raised", lambda d: node(d, "schema").update(review={"count": 3, "min_rank": 3})),
    ("writes narrowed", lambda d: node(d, "auth-api").update(writes=["src/auth/x/"])),
    ("writes within a prefix", lambda d: node(d, "schema")["writes"].append("src/schema/**/*.ts")),
    ("writes reordered", lambda d: node(d, "auth-api")["writes"].reverse()),
    ("reads reordered", lambda d: d["invariants"][0]["reads"].reverse()),
    ("closure reordered", lambda d: d["closure"].reverse()),
    ("approve added", lambda d: node(d, "schema").update(approve="owner")),
    ("evidence added", lambda d: node(d, "auth-api").update(evidence=[{"id": "e", "what": "x"}])),
    ("evidence to owner", lambda d: node(d, "schema")["evidence"][0].update(by="owner")),
    ("evidence what", lambda d: node(d, "schema")["evidence"][0].update(what="other")),
    ("title brief type later", lambda d: node(d, "schema").update(title="T", brief="B", type="feat", later=True)),
    ("node drive", lambda d: node(d, "auth-api").pop("drive")),
    ("worktrees", lambda d: d.pop("worktrees")),
    ("drive", lambda d: d["drive"].update(max=9)),
    ("limits", lambda d: d.pop("limits")),
    ("slot_setup", lambda d: d.update(slot_setup="make")),
    ("sweep", lambda d: d.pop("sweep")),
    ("on_timeout", lambda d: d["invariants"][0].pop("on_timeout")),
    ("wrap_grace_s", lambda d: d["exec"].update(wrap_grace_s=99)),
    ("exec shell login spelled out", lambda d: d["exec"].update(shell="login")),
    ("allow rule deleted", lambda d: d["allow"].pop(0)),
    ("invariant added", lambda d: d["invariants"].append({"id": "new", "run": "x"})),
]


@pytest.mark.parametrize(("name", "change"), NOT_DOWNGRADES, ids=[c[0] for c in NOT_DOWNGRADES])
def test_not_a_downgrade(name, change):
    assert found(change) == []


def test_several_downgrades_are_all_listed_in_order():
    def change(d):
        d.pop("setup")
        d["nodes"].pop(0)
        node(d, "auth-api")["deps"] = []
        node(d, "auth-api")["review"]["count"] = 0
        node(d, "auth-api")["writes"] += ["a/", "b/"]
        d["allow"][1]["adopt"] = ["x/"]

    old, new = edit(change)
    got = downgrades(old, new)
    assert [(d.node, d.what) for d in got] == [
        ("*", "setup changed"),
        ("schema", "node removed"),
        ("auth-api", "review count lowered (2 -> 0)"),
        ("auth-api", "writes widened: +a/"),
        ("auth-api", "writes widened: +b/"),
        ("auth-api", "dependency schema removed"),
        ("trunk", "allow changed"),
    ]
    assert got[3] == Downgrade(node="auth-api", what="writes widened: +a/", kind="writes-widened", ref="a/")


def test_kind_and_ref_identify_the_item_without_parsing_text():
    old, new = edit(lambda d: node(d, "auth-api")["checks"].pop(0))
    (d,) = downgrades(old, new)
    assert (d.kind, d.ref) == ("check-removed", "auth:tests")


# --- changed specs ---------------------------------------------------------------------------


def test_changed_nodes_names_each_changed_field():
    def change(d):
        node(d, "schema").update(title="T", type="feat")
        check(d, "auth-api", "lint")["run"] = "y"
        node(d, "auth-api")["writes"].reverse()  # order only: no change

    old, new = edit(change)
    assert changed_nodes(old, new) == {"schema": {"title", "type"}, "auth-api": {"checks"}}


def test_changed_nodes_ignores_added_and_removed_nodes_and_reordering():
    def change(d):
        d["nodes"].reverse()
        d["nodes"].append({"id": "new"})
        node(d, "auth-api")["checks"].reverse()

    old, new = edit(change)
    assert changed_nodes(old, new) == {}


def test_plan_wide_changes():
    old, new = edit(lambda d: d.update(setup="x", closure=["a"]) or d["exec"]["env"].clear())
    assert plan_wide_changes(old, new) == {"setup", "closure", "exec"}
    old, new = edit(lambda d: d["exec"].update(wrap_grace_s=5) or d.update(worktrees={"root": "x"}))
    assert plan_wide_changes(old, new) == set()


@pytest.mark.parametrize(
    ("fields", "invalidating", "carry"),
    [
        ({"type"}, False, True),
        ({"drive", "later"}, False, True),
        ({"checks"}, True, True),
        ({"writes", "type"}, True, True),
        ({"brief"}, True, False),
        ({"checks", "deps"}, True, False),
        ({"review"}, True, False),
    ],
)
def test_invalidation_and_carry(fields, invalidating, carry):
    assert invalidates(fields) is invalidating and can_carry(fields) is carry


def test_exec_for_keys():
    plan = parse_plan(FULL)
    assert exec_for_keys(plan) == {"env": {"CARGO_TARGET_DIR": "/abs/target"}, "wrap": plan.exec.wrap}
    assert exec_for_keys(parse_plan("trunk: m\nexec: {wrap: [a, b], wrap_grace_s: 3}")) == {"wrap": ["a", "b"]}
    assert exec_for_keys(parse_plan("trunk: m\nexec: {wrap_grace_s: 3}")) is None
    assert exec_for_keys(parse_plan("trunk: m")) is None


def test_template_changes_and_min_ok_lowered_are_downgrades():
    from owed.plan.load import parse_plan
    from owed.plan.downgrades import downgrades

    def plan(extra):
        return parse_plan("trunk: main\nnodes:\n - id: a\n   writes: [s/]\n   checks:\n    - id: t\n"
                          "      template: junit-xml\n      run: make\n" + extra)

    old = plan("      min_ok: 5\n")
    assert [d.what for d in downgrades(old, plan("      min_ok: 2\n"))] == ["min_ok lowered on check t (5 -> 2)"]
    assert [d.what for d in downgrades(old, plan("      min_ok: 5\n      report: other.xml\n"))] == [
        "check t definition changed (report)"]
    assert downgrades(old, plan("      min_ok: 9\n")) == []


def test_exec_shell_back_to_login_is_a_downgrade_too():
    plain = copy.deepcopy(BASE)
    plain["exec"]["shell"] = "plain"
    old = parse_plan(yaml.safe_dump(plain))
    new = parse_plan(yaml.safe_dump(BASE))
    assert plan_wide_changes(old, new) == {"exec"}
    assert exec_for_keys(old)["shell"] == "plain" and "shell" not in (exec_for_keys(new) or {})
