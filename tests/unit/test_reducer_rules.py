"""Reducer and acceptance rules found in review, on states built by folding real entries (no I/O)."""

from __future__ import annotations

import textwrap

import msgspec
import pytest

from owed import entries as E
from owed.acceptance import accepted, active_blocks, items
from owed.errors import Refused
from tests.driver.test_policy import Book

PLAN = textwrap.dedent(
    """\
    version: 1
    trunk: main
    closure: [harness/]
    nodes:
      - id: a
        writes: [a/]
        checks: [{id: t, run: "true"}]
        review: {count: 1}
    """
)


def mark(b: Book, obligation: str) -> str:
    return next(i.mark for i in items(b.state, b.plan, "a") if i.obligation == obligation)


def submit(b: Book, commit: str, closure: bool) -> None:
    keys = {"check:t": f"k-{commit}", "writes": f"w-{commit}", "review": f"r-{commit}", "rulings": "x"}
    if closure:
        keys["closure-review"] = f"cr-{commit}"
    b.add(E.Submit(by="writer:a#1", node="a", attempt=1, commit=commit, keys=keys))


def test_a_block_left_on_an_obligation_no_longer_owed_can_be_waived_by_the_owner():
    b = Book(PLAN)
    b.dispatch("a")
    submit(b, "c1", closure=True)
    cand = b.state.nodes["a"].slot.cand
    b.add(E.Review(by="reviewer:r", node="a", attempt=1, key=cand.keys["closure-review"], verdict="block",
                   rank=2, note="do not touch the harness", obligation="closure-review"))
    block = b.state.nodes["a"].blocks[-1]
    submit(b, "c2", closure=False)  # the writer reverted the harness change: closure-review is no longer owed
    for o in ("check:t", "writes"):
        b.obs("a", o, "pass")
    b.review("a")
    assert not accepted(b.state, b.plan, "a") and [x.seq for x in active_blocks(b.state, b.plan, "a")] == [block.seq]
    with pytest.raises(Refused, match="accepts the risk"):
        b.add(E.Waive(by="owner:cli", channel="delegated", node="a", obligation="closure-review", key="other",
                      reason="r", accept_risk=(block.seq,)))
    b.add(E.Waive(by="owner:cli", channel="delegated", node="a", obligation="closure-review", key=block.key,
                  reason="reverted; accept", accept_risk=(block.seq,)))
    assert accepted(b.state, b.plan, "a")


def test_review_block_on_the_current_candidate_is_the_writers_on_an_old_one_a_reviewers():
    b = Book(PLAN)
    b.dispatch("a")
    submit(b, "c1", closure=False)
    b.review("a", verdict="block")
    item = next(i for i in items(b.state, b.plan, "a") if i.obligation == "review")
    assert (item.mark, item.discharger) == ("D", "writer")
    submit(b, "c2", closure=False)
    item = next(i for i in items(b.state, b.plan, "a") if i.obligation == "review")
    assert (item.mark, item.discharger) == ("D", "reviewer")  # a re-review by r (rank >= 1) clears it
    b.review("a", verdict="ok")
    assert mark(b, "review") == "E"


def test_a_writes_block_under_an_older_writes_scope_is_superseded():
    b = Book(PLAN)
    b.dispatch("a")
    submit(b, "c1", closure=False)
    b.obs("a", "writes", "fail")
    assert [x.obligation for x in active_blocks(b.state, b.plan, "a")] == ["writes"]
    wider = PLAN.replace("writes: [a/]", "writes: [a/, b/]")
    from owed.plan.load import parse_plan

    assert active_blocks(b.state, parse_plan(wider), "a") == []


def test_submit_must_carry_every_obligation_the_plan_asks_for():
    b = Book(PLAN)
    b.dispatch("a")
    with pytest.raises(Refused, match=r"missing: check:t"):
        b.add(E.Submit(by="writer:a#1", node="a", attempt=1, commit="c", keys={"writes": "w", "review": "r",
                                                                                 "rulings": "x"}))


INV_PLAN = PLAN.replace("nodes:", "invariants:\n  - {id: u, run: 'true'}\n  - {id: v, run: 'true'}\nnodes:")


def test_a_refresh_replaces_trunk_keys_without_moving_trunk_and_is_checked_on_replay():
    from owed.plan.load import parse_plan

    b = Book(PLAN)
    b.plan = parse_plan(INV_PLAN)  # a later plan adds two invariants
    b.add(E.Plan(by="parent:p", prior=b.state.plan.sha, plan="9" * 64))
    trunk, tseq = b.state.trunk_commit, b.state.trunk_seq
    assert b.state.trunk_keys == {}
    good = dict(by="executor:owed", commit=trunk, keys={"u": "a" * 64, "v": "b" * 64})
    for bad, why in [(dict(by="parent:cli"), "only the executor"), (dict(commit="2" * 40), "of the ledger trunk"),
                     (dict(keys={"u": "a" * 64}), "every invariant of the current plan"),
                     (dict(keys={"u": "a" * 64, "v": "b" * 64, "w": "c" * 64}), "every invariant"),
                     (dict(keys={"u": "a" * 64, "v": "k"}), "64-hex")]:
        with pytest.raises(Refused, match=why):
            b.add(E.Refresh(**{**good, **bad}))
    e = b.add(E.Refresh(**good))
    assert b.state.trunk_keys == good["keys"] and b.state.refreshes == [e.seq]
    assert (b.state.trunk_commit, b.state.trunk_seq) == (trunk, tseq)  # trunk does not move
    assert b.state.trunk_since == {"u": e.seq, "v": e.seq}
    with pytest.raises(Refused, match="nothing to refresh"):
        b.add(E.Refresh(**good))
    e2 = b.add(E.Refresh(**{**good, "keys": {"u": "a" * 64, "v": "d" * 64}}))
    assert b.state.trunk_since == {"u": e.seq, "v": e2.seq}  # an unchanged key keeps its since


def test_sweeps_are_executor_records_that_change_no_acceptance():
    b = Book(PLAN)
    good = dict(commit="1" * 40, key="a" * 64, verdict="fail", failed=("t1",))
    for bad, why in [(dict(by="parent:cli"), "only the executor"), (dict(verdict="red"), "verdict must be one of"),
                     (dict(commit="abc"), "full 40-hex"), (dict(key="k"), "64-hex"),
                     (dict(failed=tuple(map(str, range(51)))), "at most 50"),
                     (dict(aborted="preempted"), "aborted sweep has no verdict")]:
        with pytest.raises(Refused, match=why):
            b.add(E.Sweep(**{"by": "executor:owed", **good, **bad}))
    before = msgspec.json.encode(b.state.nodes)
    b.add(E.Sweep(by="executor:owed", **good))
    b.add(E.Sweep(by="executor:owed", **{**good, "verdict": "error"}, aborted="preempted"))
    assert [row[1:] for row in b.state.sweeps] == [["1" * 40, "a" * 64, "fail"], ["1" * 40, "a" * 64, "aborted"]]
    assert msgspec.json.encode(b.state.nodes) == before


def test_adopt_is_an_owner_act_on_the_ledger_trunk():
    b = Book(PLAN)
    draft = dict(trunk="main", prior="0" * 40, commit="1" * 40, commits=1, changed=("x",), note="release")
    with pytest.raises(Refused, match="allow adopt scopes \\(the plan has none\\)"):
        b.add(E.Adopt(by="parent:cli", **draft))  # a parent adopts only inside the plan's allow adopt scopes
    with pytest.raises(Refused, match="owner act"):
        b.add(E.Adopt(by="writer:a-1", **draft))
    with pytest.raises(Refused, match="prior is not the ledger trunk"):
        b.add(E.Adopt(by="owner:cli", channel="delegated", **{**draft, "prior": "2" * 40}))
    with pytest.raises(Refused, match="needs a note"):
        b.add(E.Adopt(by="owner:cli", channel="delegated", **{**draft, "note": " "}))
    b.add(E.Adopt(by="owner:cli", channel="delegated", **draft))
    assert b.state.trunk_commit == "1" * 40


def test_refused_dispatch_and_halt_leave_no_trace_in_the_state():
    b = Book(PLAN)
    with pytest.raises(Refused):
        b.add(E.Dispatch(by="parent:cli", node="a", attempt=2, base=b.state.trunk_commit, branch="x",
                         worktree="/w", packet="p" * 64))
    assert "a" not in b.state.nodes
    with pytest.raises(Refused, match="open attempt"):
        b.add(E.Halt(by="parent:drive", node="ghost", attempt=1, reason="r", needs="human"))
    b.dispatch("a")
    with pytest.raises(Refused, match="open attempt"):
        b.add(E.Halt(by="parent:drive", node="a", attempt=7, reason="r", needs="human"))


def test_remeasure_on_fields_are_checked_on_replay_one_retry_per_failure():
    from owed.plan.load import parse_plan

    b = Book(PLAN)
    b.plan = parse_plan(INV_PLAN.replace("{id: u, run: 'true'}", "{id: u, run: 'true', remeasure_on: [refused]}"))
    b.add(E.Plan(by="parent:p", prior=b.state.plan.sha, plan="9" * 64))
    obs = dict(by="executor:owed", subject="trunk", obligation="inv:u", key="a" * 64, commit="1" * 40)
    for bad, why in [(dict(verdict="fail", remeasure_match="other"), "remeasure_on literal"),
                     (dict(verdict="pass", remeasure_match="refused"), "remeasure_on literal"),
                     (dict(verdict="fail", remeasure_match="refused", obligation="inv:v"), "remeasure_on literal"),
                     (dict(verdict="pass", auto_remeasure=1), "not a retry-eligible failure")]:
        with pytest.raises(Refused, match=why):
            b.add(E.Obs(**{**obs, **bad}))
    first = b.add(E.Obs(**obs, verdict="fail", remeasure_match="refused"))
    with pytest.raises(Refused, match="not a retry-eligible failure on this key"):
        b.add(E.Obs(**{**obs, "key": "b" * 64}, verdict="pass", auto_remeasure=first.seq))
    b.add(E.Obs(**obs, verdict="pass", auto_remeasure=first.seq))
    with pytest.raises(Refused, match="already retried"):
        b.add(E.Obs(**obs, verdict="pass", auto_remeasure=first.seq))
    assert b.state.agg("trunk", "inv:u", "a" * 64).verdict == "conflict"  # both votes stay


def test_signatures_are_checked_on_replay():
    from owed.plan.load import parse_plan

    b = Book(PLAN)
    b.plan = parse_plan(INV_PLAN)
    b.add(E.Plan(by="parent:p", prior=b.state.plan.sha, plan="9" * 64))
    obs = dict(by="executor:owed", subject="trunk", obligation="inv:u", key="a" * 64, commit="1" * 40)
    for bad, why in [(dict(verdict="pass", signatures={"t": "v2|e|||"}), "failing observation"),
                     (dict(verdict="fail", failed=("t",), signatures={"u": "v2|e|||"}), "name failing tests"),
                     (dict(verdict="fail", failed=("t",), signatures={"t": "e|||"}), "v2|"),
                     (dict(verdict="fail", failed=("t",), signatures={"t": "v2|" + "x" * 1000}), "v2|")]:
        with pytest.raises(Refused, match=why):
            b.add(E.Obs(**{**obs, **bad}))
    ok = b.add(E.Obs(**obs, verdict="fail", failed=("t", "u"), signatures={"t": "v2|e|test/t.py:3||"}))
    assert b.state.agg("trunk", "inv:u", "a" * 64).last_fail.signatures == {"t": "v2|e|test/t.py:3||"}
    assert b.state.history["trunk\x1finv:u"][-1] == [ok.seq, "fail", "a" * 64, "", "", {"t": "v2|e|test/t.py:3||",
                                                                                        "u": ""}, "1" * 40]


def test_every_entry_kind_has_a_fold_that_resolves_from_its_module():
    """The reducer imports a fold module at its first entry of a kind it folds (owed/reducer.py _FOLD_NAMES):
    every kind of the format but genesis, plan and note (folded by the reducer itself) has a fold, and each
    named fold is the callable its module defines."""
    import importlib

    from owed import reducer

    assert set(reducer._FOLD_NAMES) == set(E.KINDS) - {"genesis", "plan", "note"}
    for kind, (module, name) in reducer._FOLD_NAMES.items():
        fold = reducer._fold_of(kind)
        assert fold is getattr(importlib.import_module(f"owed.folds.{module}"), name) and callable(fold), kind
    assert reducer._fold_of("note") is None and reducer._fold_of("genesis") is None
