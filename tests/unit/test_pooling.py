"""Repeat pooling (owed/pooling.py, ObsAgg.verdict): runs of every observation on a repeating key vote."""

from __future__ import annotations

from owed import entries as E
from owed.plan.load import parse_plan
from owed.pooling import repeat_of, tally, votes
from owed.state import ObsAgg

PLAN = parse_plan("""\
version: 1
trunk: main
invariants:
  - {id: u, run: 'true', repeat: {runs: 3, need: 2}}
  - {id: v, run: 'true'}
nodes:
  - id: a
    writes: [a.txt]
    checks: [{id: t, run: 'true', repeat: {runs: 2}}]
""")


def test_repeat_of_reads_the_items_spec_and_defaults_need_to_runs():
    assert repeat_of(PLAN, "trunk", "inv:u") == (3, 2) and repeat_of(PLAN, "trunk", "inv:v") is None
    assert repeat_of(PLAN, "a", "check:t") == (2, 2) and repeat_of(PLAN, "a", "writes") is None
    assert repeat_of(PLAN, "b", "check:t") is None


def test_votes_are_the_runs_or_one_vote_of_the_verdict():
    run = lambda v: E.RunVote(verdict=v)  # noqa: E731
    obs = dict(by="executor:owed", subject="trunk", obligation="inv:u", key="k" * 64, commit="c" * 40)
    assert votes(E.Obs(**obs, verdict="fail", runs=(run("pass"), run("fail"), run("fail")))) == (1, 2)
    assert votes(E.Obs(**obs, verdict="pass")) == (1, 0) and votes(E.Obs(**obs, verdict="error")) == (0, 0)


def test_the_pool_passes_at_passes_times_runs_equal_need_times_total():
    agg = ObsAgg(passes=1, fails=1, pool=[3, 2], run_passes=4, run_fails=2)  # 4×3 = 12 ≥ 2×6 = 12
    assert agg.verdict == "pass"
    assert tally(agg) == "repeat pools 6 runs on this key: 4 passed (4×3 ≥ 2×6: pass)"
    agg.run_fails = 3  # 12 < 14
    assert agg.verdict == "fail" and tally(agg).endswith("(4×3 < 2×7: fail)")
    assert ObsAgg(passes=1, fails=1, run_passes=9, run_fails=1).verdict == "conflict"  # no repeat: ⊤
    assert tally(ObsAgg(passes=2, pool=[3, 2], run_passes=4)) is None  # one-sided: nothing pooled to say


def test_the_table_goes_with_its_plan_even_when_the_module_global_is_gone():
    """The weak reference's callback holds the dict itself: at interpreter exit module globals may be None."""
    import gc

    from owed import pooling
    from owed.plan.load import parse_plan

    p = parse_plan("version: 1\ntrunk: main\nnodes:\n  - id: a\n    writes: [a.txt]\n")
    pooling.repeat_of(p, "a", "check:t")
    memo, key = pooling._REPEATS, id(p)
    assert key in memo
    pooling._REPEATS = None  # as at interpreter exit
    try:
        del p
        gc.collect()
        assert key not in memo
    finally:
        pooling._REPEATS = memo
