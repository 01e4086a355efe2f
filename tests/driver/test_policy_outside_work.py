"""driver.policy on slots whose work came from outside a driver run (a person or the main agent dispatched,
committed or submitted by hand): no writer is launched for finished work; a writer launch carries the
follow-up the slot owes (launch `reason`). States folded from real entries (tests/driver/test_policy.Book)."""

from __future__ import annotations

import pytest

from driver.policy import rid_for
from owed import entries as E
from owed.errors import Refused
from tests.driver.test_policy import Book, kinds, run


def _mine(b, runs=None, **facts):
    return [a for a in b.decide(runs, **facts) if a.node == "a"]


def test_a_candidate_submitted_outside_the_driver_is_measured_reviewed_and_merged_without_a_writer():
    b = Book()
    b.dispatch("a")
    b.submit("a", "c1")
    assert kinds(_mine(b)) == [("attest", "a", None)]
    b.obs("a", "check:t", "pass")
    b.obs("a", "writes", "pass")
    [act] = _mine(b)
    assert (act.kind, act.role, act.n) == ("launch", "reviewer", 1)
    rrid = b.launch("a", "reviewer", 1)
    assert _mine(b, {rrid: run()}) == []  # the reviewer runs: nothing else, no writer
    b.review("a")
    assert kinds(_mine(b, {rrid: run(state="sealed", ok=True)})) == [("merge", "a", None)]


def test_a_failing_check_of_an_outside_candidate_launches_the_writer_with_the_repair():
    b = Book()
    b.dispatch("a")
    b.submit("a", "c1")
    b.obs("a", "check:t", "fail")
    b.obs("a", "writes", "pass")
    [act] = _mine(b)
    assert (act.kind, act.role, act.reason, act.rid) == ("launch", "writer", "repair", rid_for(b.project, "a", 1, "writer"))
    rid = act.rid
    b.add(E.Launch(by="parent:drive", node="a", attempt=1, role="writer", rid=rid, spec="s" * 64, reason="repair"))
    assert b.state.nodes["a"].runs[rid].reason == "repair"
    assert _mine(b, {rid: run()}) == []  # the repair run works
    # it ended without a new candidate: the launch was the repair (no second repair follow-up), a halt
    [halt] = _mine(b, {rid: run(state="sealed", ok=True)})
    assert halt.kind == "halt" and halt.reason.startswith("repair sent but the writer finished without a new candidate")


def test_the_repair_launch_counts_against_the_repair_budget():
    b = Book()  # repairs: 1
    b.dispatch("a")
    b.submit("a", "c1")
    b.obs("a", "check:t", "fail")
    b.obs("a", "writes", "pass")
    rid = rid_for(b.project, "a", 1, "writer")
    b.add(E.Launch(by="parent:drive", node="a", attempt=1, role="writer", rid=rid, spec="s" * 64, reason="repair"))
    b.submit("a", "c2")
    b.obs("a", "check:t", "fail")
    b.obs("a", "writes", "pass")
    [act] = _mine(b, {rid: run(state="sealed", ok=True)})
    assert act.kind == "halt" and "repairs exhausted (1 of 1" in act.reason


def test_a_rebased_slot_without_a_writer_run_launches_the_writer_with_the_rebase():
    b = Book()
    b.dispatch("a")
    b.submit("a", "c1")
    t0 = b.state.trunk_commit
    b.add(E.Adopt(by="owner:cli", channel="delegated", trunk="main", prior=t0, commit="1" * 40, commits=1,
                  changed=("x.txt",), note="trunk moved"))
    b.add(E.Rebase(by="parent:drive", node="a", attempt=1, base="1" * 40, from_=t0))
    [act] = _mine(b)
    assert (act.kind, act.role, act.reason) == ("launch", "writer", "rebase")


def test_a_writer_ruling_after_an_outside_candidate_launches_the_writer_carrying_it():
    b = Book()
    b.dispatch("a")
    b.submit("a", "c1")
    b.add(E.Rule(by="parent:cli", nodes=("a",), text="rename the file", writer=True))
    assert b.state.nodes["a"].slot.cand is None  # a writer ruling voids the candidate
    [act] = _mine(b)  # the writer's task lists the ruling (and acts.launch names the slot's commits)
    assert (act.kind, act.role, act.reason) == ("launch", "writer", None)


def test_a_report_resume_without_a_writer_run_launches_the_writer_for_the_report():
    b = Book()
    b.dispatch("a")
    b.submit("a", "c1")
    b.add(E.Resume(by="parent:cli", node="a", note="what did you find?", expect="report"))
    [act] = _mine(b)
    assert (act.kind, act.role, act.reason) == ("launch", "writer", "report")
    rid = rid_for(b.project, "a", 1, "writer")
    b.add(E.Launch(by="parent:drive", node="a", attempt=1, role="writer", rid=rid, spec="s" * 64, reason="report"))
    [halt] = _mine(b, {rid: run(state="sealed", ok=True)})  # reported once: parked, no second report follow-up
    assert halt.kind == "halt" and halt.reason.startswith("reported")


def test_a_dispatched_slot_without_a_candidate_or_run_gets_a_plain_writer_launch():
    b = Book()
    b.dispatch("a")
    [act] = _mine(b)
    assert (act.kind, act.role, act.reason) == ("launch", "writer", None)


@pytest.mark.parametrize("role,reason", [("reviewer", "repair"), ("writer", "bogus")])
def test_replay_refuses_a_launch_reason_that_is_not_a_writer_follow_up(role, reason):
    b = Book()
    b.dispatch("a")
    b.submit("a", "c1")
    rid = rid_for(b.project, "a", 1, role, 1 if role == "reviewer" else None)
    with pytest.raises(Refused, match="launch reason"):
        b.add(E.Launch(by="parent:drive", node="a", attempt=1, role=role, rid=rid, spec="s" * 64, reason=reason))


def test_a_ruling_owed_by_an_unreviewed_outside_candidate_launches_the_writer_to_acknowledge_it():
    b = Book()
    b.dispatch("c")
    b.submit("c", "c1")
    b.add(E.Rule(by="parent:cli", nodes=("c",), text="keep it short"))
    b.obs("c", "writes", "pass")
    [act] = [a for a in b.decide() if a.node == "c"]
    assert (act.kind, act.role, act.reason, act.detail) == ("launch", "writer", "ruling", str(b.state.seq - 1))


def test_a_rejecting_review_of_an_outside_candidate_launches_the_writer_with_the_repair():
    b = Book()
    b.dispatch("a")
    b.submit("a", "c1")
    b.obs("a", "check:t", "pass")
    b.obs("a", "writes", "pass")
    rrid = b.launch("a", "reviewer", 1)
    b.review("a", verdict="block", by="reviewer:drive-a-1-1")
    [act] = _mine(b, {rrid: run(state="sealed", ok=True)})
    assert (act.kind, act.role, act.reason) == ("launch", "writer", "repair")


def test_a_new_attempt_with_blocks_of_the_old_one_gets_a_plain_launch_and_a_voided_candidate_the_repair():
    b = Book()
    b.dispatch("a")
    b.submit("a", "c1")
    b.obs("a", "check:t", "fail")  # an execution block: it binds across candidates and attempts
    b.obs("a", "writes", "pass")
    b.add(E.Rule(by="parent:cli", nodes=("a",), text="start from the spec", writer=True))  # voids c1
    assert b.state.nodes["a"].slot.cand is None
    [act] = _mine(b)
    assert (act.kind, act.role, act.reason) == ("launch", "writer", "repair")  # the slot's own work owes it
    b.add(E.Abandon(by="parent:cli", node="a", attempt=1, reason="start over"))
    b.dispatch("a", attempt=2)
    [act] = _mine(b)
    assert (act.kind, act.role, act.reason, act.attempt) == ("launch", "writer", None, 2)  # as before: its task
