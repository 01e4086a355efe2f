"""The policy and trunk debt (pure, on states folded from real entries): an accepted candidate whose merge-tree
failures are all trunk-red waits with a repository notice instead of a merge or a halt, and merges again
once trunk moves; mixed failures keep the ordinary refusal route."""

from __future__ import annotations

from owed import entries as E
from tests.driver.test_policy import Book, accepted_book, run

M = "m" * 40


def merge_fail(b: Book, failed=("t1",), probe=True, probe_names=("t1",), probe_verdict="fail", obligation="check:t"):
    trunk = b.state.trunk_commit
    b.add(E.Obs(by="executor:owed", subject="a", obligation=obligation, key="k" * 64, verdict="fail", commit=M,
                base=trunk, merging="a", failed=tuple(failed)))
    if probe:
        b.add(E.Obs(by="executor:owed", subject="a", obligation=obligation, key="p" * 64, verdict=probe_verdict,
                    commit=trunk, base=trunk, probe="trunk", failed=tuple(probe_names)))


def test_all_trunk_red_waits_with_a_notice_then_merges_when_trunk_moves():
    b, rid = accepted_book()
    b.review("a")
    merge_fail(b)
    sealed = {rid: run(state="sealed", ok=True)}
    acts = b.decide(sealed)
    assert not [a for a in acts if a.node == "a"]  # no merge, no halt, no follow-up
    notes = [a for a in acts if a.kind == "notify"]
    assert [n.node for n in notes] == ["trunk-red:check:t"] and "check:t fails on trunk" in notes[0].reason
    assert "without a (t1)" in notes[0].reason and "owed waive a check:t --accept-risk" in notes[0].command
    # Trunk moves (another node merged): the wait ends without a resume entry.
    b.state.trunk_commit = "1" * 40
    assert [a.kind for a in b.decide(sealed) if a.node == "a"] == ["merge"]


def test_a_passing_probe_new_names_or_a_mixed_failure_do_not_wait():
    for kw in (dict(probe_verdict="pass"), dict(failed=("t1", "t2")), dict(probe=False)):
        b, rid = accepted_book()
        b.review("a")
        merge_fail(b, **kw)
        assert [a.kind for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a"] == ["merge"], kw
    b, rid = accepted_book()
    b.review("a")
    merge_fail(b)
    b.add(E.Obs(by="executor:owed", subject="trunk", obligation="inv:u", key="i" * 64, verdict="fail", commit=M,
                merging="a"))  # an invariant failed on the same merge tree too: not only trunk-red
    assert [a.kind for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a"] == ["merge"]


def test_a_merge_key_waiver_is_checked_on_replay_and_binds_only_that_key():
    import pytest

    from owed.errors import Refused

    b, rid = accepted_book()
    b.review("a")
    merge_fail(b)
    seq = b.state.nodes["a"].trunk_red["check:t"][0]
    waive = dict(by="owner:cli", channel="delegated", node="a", obligation="check:t", reason="trunk's debt",
                 accept_risk=(seq,))
    with pytest.raises(Refused, match="on its merge key"):
        b.add(E.Waive(key="x" * 64, **waive))
    b.add(E.Waive(key="k" * 64, **waive))
    assert [a.kind for a in b.decide({rid: run(state="sealed", ok=True)}) if a.node == "a"] == ["merge"]
    merge = dict(by="executor:owed", node="a", attempt=1, prior=b.state.trunk_commit, commit=M, tree="t" * 40)
    with pytest.raises(Refused, match="check:t does not pass on the merge tree"):
        b.add(E.Merge(checks={"check:t": "z" * 64}, **merge))  # another merge key: the waiver does not reach it
    b.add(E.Merge(checks={"check:t": "k" * 64}, **merge))
    assert b.state.nodes["a"].merged is not None
