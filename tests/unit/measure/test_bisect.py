"""The sweep's culprit search: outcomes and the run budget, with scripted verdicts per commit."""

from __future__ import annotations

import itertools

from owed.measure.bisect import Point, budget, search


def chain(n):
    return [Point(commit=f"c{i}", parent=f"c{i - 1}", seq=100 + i, node=f"n{i}") for i in range(1, n + 1)]


def scripted(verdicts):
    """commit -> an iterator of verdicts (the last repeats); counts the runs."""
    its = {c: itertools.chain(v, itertools.repeat(v[-1])) for c, v in verdicts.items()}
    return lambda c: next(its[c])


def test_culprit_in_sixteen_merges_within_the_budget():
    for bad in range(1, 17):
        ms = chain(16)
        f = search("c16", ms, lambda c: "pass" if c == "c0" else None, lambda c: "fail" if int(c[1:]) >= bad else "pass")
        assert f.outcome == "culprit" and f.culprit.node == f"n{bad}", (bad, f)
        assert len(f.runs) <= budget(16) == 8
        per = {}
        for c, _ in f.runs:
            per[c] = per.get(c, 0) + 1
        assert max(per.values()) <= 2


def test_flaky_head_is_not_bisected():
    f = search("c4", chain(4), lambda c: None, scripted({"c4": ["fail", "pass"]}))
    assert f.outcome == "flaky" and f.runs == [("c4", "fail"), ("c4", "pass")]


def test_disagreement_is_inconsistent_and_names_no_culprit():
    # c2 passes during the bisect, then fails when confirmed as X^.
    run = scripted({"c4": ["fail"], "c3": ["fail"], "c2": ["pass", "fail"], "c1": ["pass"], "c0": ["pass"]})
    f = search("c4", chain(4), lambda c: "pass" if c == "c0" else None, run)
    assert f.outcome == "inconsistent" and f.culprit is None and "inconsistent (flaky)" in f.reason


def test_adopted_tip_blames_no_merge():
    f = search("tip", chain(3), lambda c: None, scripted({"tip": ["fail"], "c3": ["pass"]}))
    assert f.outcome == "adopted" and f.culprit is None


def test_no_green_boundary_under_the_current_definition():
    run = lambda c: "fail"
    f = search("c3", chain(3), lambda c: None, run, recorded_other=lambda c: c == "c1")
    assert f.outcome == "no-green" and "definition or environment changed" in f.reason
    assert f.runs[-1] == ("c1", "fail")  # the old green was rechecked under the current key


def test_error_stops_and_budget_exhaustion_is_inconclusive():
    f = search("c3", chain(3), lambda c: None, scripted({"c3": ["fail"], "c0": ["error"]}))
    assert f.outcome == "error" and f.culprit is None
    # 16 merges, no recorded green: the recheck of the base costs the run the confirmation needed.
    f = search("c16", chain(16), lambda c: None, lambda c: "fail" if int(c[1:]) >= 9 else "pass")
    assert f.outcome == "inconclusive" and f.culprit is None and len(f.runs) == budget(16)
