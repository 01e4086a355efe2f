"""owed/folds/batch.py on real folds: member order, no interleaving, shared fields, batch votes apart."""

from __future__ import annotations

import textwrap

import pytest

from owed import entries as E
from owed.acceptance import accepted
from owed.errors import Refused
from tests.driver.test_policy import Book

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    nodes:
      - {id: a, writes: [a/], checks: [{id: t, run: "true"}]}
      - {id: b, writes: [b/]}
      - {id: c, writes: [c/]}
    """)
M = "9" * 40


def book() -> Book:
    b = Book(PLAN)
    for n in "abc":
        b.dispatch(n)
        keys = {"writes": f"w-{n}", "rulings": "x", **({"check:t": "k-a"} if n == "a" else {})}
        b.add(E.Submit(by=f"writer:{n}#1", node=n, attempt=1, commit=n * 40, keys=keys))
        for o in keys:
            if o != "rulings":
                b.obs(n, o, "pass")
        assert accepted(b.state, b.plan, n)
    return b


def member(b, node, members=("a", "b"), **kw) -> E.Merge:
    fields = dict(by="executor:owed", node=node, attempt=1, prior=b.state.trunk_commit if node == members[0] else "0" * 40,
                  commit=M, tree="8" * 40, checks={"check:t": "k-a"} if node == "a" else {}, members=tuple(members))
    fields.update(kw)
    return E.Merge(**fields)


def test_members_land_in_order_and_trunk_moves_to_the_final_commit():
    b = book()
    pre = b.state.trunk_commit
    b.add(member(b, "a"))
    assert b.state.train is not None and b.state.trunk_commit == M
    b.add(member(b, "b", prior=pre))
    assert b.state.train is None and b.state.merged.keys() == {"a", "b"}
    assert b.state.nodes["a"].merge_commit == b.state.nodes["b"].merge_commit == M


@pytest.mark.parametrize("second, why", [
    (lambda b, pre: member(b, "c", ("a", "b"), prior=pre), "next member is b"),
    (lambda b, pre: member(b, "b", ("a", "b", "c"), prior=pre), "next member is b of a, b"),
    (lambda b, pre: member(b, "b", prior="1" * 40), "share prior, commit, tree"),
    (lambda b, pre: member(b, "b", prior=pre, commit="7" * 40), "share prior, commit, tree"),
    (lambda b, pre: E.Note(by="parent:cli", text="between"), "is incomplete: b must follow"),
    (lambda b, pre: E.Merge(by="executor:owed", node="c", attempt=1, prior=M, commit="6" * 40, tree="5" * 40),
     "is incomplete: b must follow"),
])
def test_replay_refuses_a_broken_batch(second, why):
    b = book()
    pre = b.state.trunk_commit
    b.add(member(b, "a"))
    with pytest.raises(Refused, match=why):
        b.add(second(b, pre))


def test_a_batch_starts_with_its_leader_and_members_pass_their_own_guard():
    b = book()
    with pytest.raises(Refused, match="starts with its leader a"):
        b.add(member(b, "b", prior=b.state.trunk_commit))
    with pytest.raises(Refused, match="2 to 8 members"):
        b.add(member(b, "a", members=("a",)))
    # a's check is keyed differently on the batch tree and nothing measured it there: a's guard refuses.
    with pytest.raises(Refused, match="batch member a: check:t does not pass on the merge tree"):
        b.add(member(b, "a", checks={"check:t": "k-batch"}))


def test_a_failing_batch_vote_blocks_no_member_and_is_remembered_per_set_and_base():
    b = book()
    pre = b.state.trunk_commit
    ref = E.BatchRef(members=("a", "b"), base=pre)
    # The same key as a's candidate check: an ordinary merge-tree failure there would count against it.
    b.add(E.Obs(by="executor:owed", subject="a", obligation="check:t", key="k-a", verdict="fail", commit=M,
                base=pre, merging="a", batch=ref))
    assert accepted(b.state, b.plan, "a") and b.state.agg("a", "check:t", "k-a").fails == 0
    assert [(f.members, f.base) for f in b.state.batch_fails] == [(["a", "b"], pre)]
    with pytest.raises(Refused, match="no remeasure_match or auto_remeasure"):
        b.add(E.Obs(by="executor:owed", subject="trunk", obligation="inv:u", key="k", verdict="fail", commit=M,
                    merging="a", batch=ref, remeasure_match="flaky"))
    with pytest.raises(Refused, match="names a member"):
        b.add(E.Obs(by="executor:owed", subject="c", obligation="check:t", key="k", verdict="pass", commit=M,
                    merging="c", batch=ref))


def test_a_failing_batch_vote_catches_no_member_of_a_decoy():
    """Failed batch votes belong to the batch (0.22): a decoy member is caught by its own single merge's failure
    (the bisection's), never by the batch vote its leader's name rides on."""
    from owed.ops.escapes import decoy_outcomes

    ref = E.BatchRef(members=("a", "b"), base="p" * 40)
    vote = E.Obs(seq=5, by="executor:owed", subject="trunk", obligation="inv:u", key="k" * 64, verdict="fail",
                 commit="m" * 40, merging="a", batch=ref)
    assert decoy_outcomes([vote], {"a": "planted", "b": "planted"}) == {"a": "pending", "b": "pending"}
    single = E.Obs(seq=6, by="executor:owed", subject="trunk", obligation="inv:u", key="j" * 64, verdict="fail",
                   commit="n" * 40, merging="b")
    assert decoy_outcomes([vote, single], {"a": "planted", "b": "planted"}) == {"a": "pending", "b": "caught"}
