"""The refusal hints on folded states (pure): known intermittent needs pass and fail evidence on the same key,
a name already failing on the current trunk key reads `trunk red since`, anonymous failures add neither."""

from __future__ import annotations

from owed import entries as E
from owed.plan.load import parse_plan
from owed.views.refusal_hints import hints
from tests.driver.test_policy import Book, accepted_book
from tests.unit.test_reducer_rules import INV_PLAN, PLAN

M = "m" * 40


def _obs(b, subject, obligation, key, verdict, failed=(), merging="a", commit=M):
    return b.add(E.Obs(by="executor:owed", subject=subject, obligation=obligation, key=key, verdict=verdict,
                       commit=commit, merging=merging, failed=tuple(failed)))


def test_known_intermittent_needs_both_votes_on_one_key_and_a_name():
    b, _ = accepted_book()
    f = _obs(b, "a", "check:t", "k" * 64, "fail", ("flaky_one",))
    rec = b.state.agg("a", "check:t", "k" * 64).last_fail
    assert not [h for h in hints(b.state, b.plan, "a", [("check:t", "k" * 64, rec)], None) if "intermittent" in h]
    _obs(b, "a", "check:t", "k" * 64, "pass")
    out = hints(b.state, b.plan, "a", [("check:t", "k" * 64, rec)], None)
    assert any(h.startswith("known intermittent: flaky_one passed and failed on this key") for h in out), out
    _obs(b, "a", "check:t", "n" * 64, "fail")  # anonymous: no named hint
    anon = b.state.agg("a", "check:t", "n" * 64).last_fail
    assert hints(b.state, b.plan, "a", [("check:t", "n" * 64, anon)], None) == [] and f


def test_a_name_failing_on_the_current_trunk_key_reads_trunk_red_since():
    b = Book(PLAN)
    b.plan = parse_plan(INV_PLAN)
    b.add(E.Plan(by="parent:p", prior=b.state.plan.sha, plan="9" * 64))
    r = b.add(E.Refresh(by="executor:owed", commit=b.state.trunk_commit, keys={"u": "a" * 64, "v": "b" * 64}))
    _obs(b, "trunk", "inv:u", "a" * 64, "fail", ("old_failure",), merging=None, commit=b.state.trunk_commit)
    b.dispatch("a")
    b.submit("a", "c1")
    _obs(b, "trunk", "inv:u", "c" * 64, "fail", ("old_failure",))
    rec = b.state.agg("trunk", "inv:u", "c" * 64).last_fail
    out = hints(b.state, b.plan, "a", [("inv:u", "c" * 64, rec)], ["a/x.py"])
    assert f"old_failure: trunk red since #{r.seq}; fix trunk before retrying" in out, out
    assert not [h for h in out if "pass on trunk" in h]  # no pass on the trunk key: no delta line


def test_a_landed_batch_is_named_as_one_unit_on_trunk():
    """Trunk moved once for a batch: `red on trunk since merge #S` names the batch, not its leader alone."""
    from owed.state import State
    from owed.views.trunk_red import merge_who, since_label

    st = State(merges=[5, 6, 7, 9], merge_nodes={5: "a", 6: "b", 7: "c", 9: "d"},
               merge_members={5: ["a", "b", "c"], 6: ["a", "b", "c"], 7: ["a", "b", "c"]})
    assert since_label(st, 5) == "merge #5 (batch a, b, c)" and merge_who(st, 7) == "batch a, b, c"
    assert since_label(st, 9) == "merge #9 (d)"
