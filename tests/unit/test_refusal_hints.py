"""The refusal hints on folded states (pure): known intermittent needs pass and fail evidence on the same key,
a name already failing on the current trunk key reads `trunk red since`, anonymous failures add neither."""

from __future__ import annotations

from owed import entries as E
from owed.plan.load import parse_plan
from owed.views.refusal_hints import hints
from tests.driver.test_policy import Book, accepted_book
from tests.unit.test_reducer_rules import INV_PLAN, PLAN

M = "m" * 40


def _obs(b, subject, obligation, key, verdict, failed=(), merging="a", commit=M, sigs=None):
    return b.add(E.Obs(by="executor:owed", subject=subject, obligation=obligation, key=key, verdict=verdict,
                       commit=commit, merging=merging, failed=tuple(failed), signatures=sigs or {}))


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
    t = _obs(b, "trunk", "inv:u", "a" * 64, "fail", ("old_failure",), merging=None, commit=b.state.trunk_commit)
    b.dispatch("a")
    b.submit("a", "c1")
    _obs(b, "trunk", "inv:u", "c" * 64, "fail", ("old_failure",))
    rec = b.state.agg("trunk", "inv:u", "c" * 64).last_fail
    out = hints(b.state, b.plan, "a", [("inv:u", "c" * 64, rec)], ["a/x.py"])
    assert t.seq == r.seq + 1  # the run begins with the first failing trunk observation, after the refresh
    assert f"old_failure: trunk red since #{t.seq}; fix trunk before retrying" in out, out
    assert not [h for h in out if "pass on trunk" in h]  # no pass on the trunk key: no delta line


def test_a_landed_batch_is_named_as_one_unit_on_trunk():
    """Trunk moved once for a batch: `red on trunk since merge #S` names the batch, not its leader alone."""
    from owed.state import State
    from owed.views.trunk_red import merge_who, since_label

    st = State(merges=[5, 6, 7, 9], merge_nodes={5: "a", 6: "b", 7: "c", 9: "d"},
               merge_members={5: ["a", "b", "c"], 6: ["a", "b", "c"], 7: ["a", "b", "c"]})
    assert since_label(st, 5) == "merge #5 (batch a, b, c)" and merge_who(st, 7) == "batch a, b, c"
    assert since_label(st, 9) == "merge #9 (d)"


SIG_A, SIG_B = "v2|expected 1|test/t.py:3|1|2", "v2|KeyError: 'x'|test/t.py:9||"


def _trunk_book():
    b = Book(PLAN)
    b.plan = parse_plan(INV_PLAN)
    b.add(E.Plan(by="parent:p", prior=b.state.plan.sha, plan="9" * 64))
    b.add(E.Refresh(by="executor:owed", commit=b.state.trunk_commit, keys={"u": "a" * 64, "v": "b" * 64}))
    return b


def test_trunk_red_needs_a_matching_signature_and_starts_at_the_uninterrupted_run():
    b = _trunk_book()
    tc = b.state.trunk_commit
    first = _obs(b, "trunk", "inv:u", "a" * 64, "fail", ("t1",), merging=None, commit=tc, sigs={"t1": SIG_B})
    _obs(b, "trunk", "inv:u", "a" * 64, "pass", merging=None, commit=tc)  # breaks the run
    run = _obs(b, "trunk", "inv:u", "a" * 64, "fail", ("t1",), merging=None, commit=tc, sigs={"t1": SIG_A})
    _obs(b, "trunk", "inv:u", "a" * 64, "fail", ("t1",), merging=None, commit=tc, sigs={"t1": SIG_A})
    b.dispatch("a")
    b.submit("a", "c1")
    _obs(b, "trunk", "inv:u", "c" * 64, "fail", ("t1",), sigs={"t1": SIG_A})
    rec = b.state.agg("trunk", "inv:u", "c" * 64).last_fail
    out = hints(b.state, b.plan, "a", [("inv:u", "c" * 64, rec)], None)
    assert [h for h in out if h.startswith("t1:")] == [f"t1: trunk red since #{run.seq}; fix trunk before retrying"]
    # The error trunk had before the pass (#first): not trunk's red now, but the same error on an older tree.
    _obs(b, "trunk", "inv:u", "d" * 64, "fail", ("t1",), sigs={"t1": SIG_B})
    other = b.state.agg("trunk", "inv:u", "d" * 64).last_fail
    out = hints(b.state, b.plan, "a", [("inv:u", "d" * 64, other)], None)
    mine = [e for e in b.state.history["trunk\x1finv:u"] if e[3] == "a"]
    assert [h for h in out if h.startswith("t1:")] == [f"t1: same test failed on older trees (#{first.seq})",
                                                      f"t1: another error than on a's earlier merge tree "
                                                      f"(#{mine[-2][0]})"], out
    # An error no older tree had: the different-error hint, newest first, at most three (a's own merge trees
    # #c/#d are no independent evidence).
    _obs(b, "trunk", "inv:u", "e" * 64, "fail", ("t1",), sigs={"t1": "v2|TimeoutError|test/t.py:1||"})
    new = b.state.agg("trunk", "inv:u", "e" * 64).last_fail
    out = hints(b.state, b.plan, "a", [("inv:u", "e" * 64, new)], None)
    assert [h for h in out if h.startswith("t1:")][0] == (
        f"t1: same test failed on older trees (different error) (#{run.seq + 1}, #{run.seq}, #{first.seq})"), out


def test_intermittent_needs_the_same_error_and_the_nodes_own_trees_are_no_evidence():
    b, _ = accepted_book()
    _obs(b, "a", "check:t", "k" * 64, "fail", ("flaky_one",), sigs={"flaky_one": SIG_A})
    _obs(b, "a", "check:t", "k" * 64, "pass")
    mine = b.state.agg("a", "check:t", "k" * 64).last_fail
    out = hints(b.state, b.plan, "a", [("check:t", "k" * 64, mine)], None)
    assert any(h.startswith("known intermittent: flaky_one") for h in out), out
    # The node's own merge tree on another key failed the same test: not independent — no older-trees or
    # intermittent claim, only the comparison with its own earlier tree.
    _obs(b, "a", "check:t", "n" * 64, "fail", ("flaky_one",), sigs={"flaky_one": SIG_B})
    fresh = b.state.agg("a", "check:t", "n" * 64).last_fail
    earlier = b.state.agg("a", "check:t", "k" * 64).last_fail
    assert hints(b.state, b.plan, "a", [("check:t", "n" * 64, fresh)], None) == [
        f"flaky_one: another error than on a's earlier merge tree (#{earlier.seq})"]
    # A trunk probe of the same check (trunk without the node) is another tree: it counts, by signature.
    probe = b.add(E.Obs(by="executor:owed", subject="a", obligation="check:t", key="p" * 64, verdict="fail",
                        commit="t" * 40, probe="trunk", failed=("flaky_one",), signatures={"flaky_one": SIG_B}))
    out = hints(b.state, b.plan, "a", [("check:t", "n" * 64, fresh)], None)
    assert out[0] == f"flaky_one: same test failed on older trees (#{probe.seq})", out
    out = hints(b.state, b.plan, "a", [("check:t", "k" * 64, mine)], None)
    assert any(h.startswith("known intermittent: flaky_one") for h in out)  # its own key: still intermittent


def test_a_flaky_trunk_key_makes_the_same_error_intermittent_and_another_error_not():
    b = _trunk_book()
    tc = b.state.trunk_commit
    f = _obs(b, "trunk", "inv:u", "a" * 64, "fail", ("t1",), merging=None, commit=tc, sigs={"t1": SIG_A})
    p = _obs(b, "trunk", "inv:u", "a" * 64, "pass", merging=None, commit=tc)  # latest on trunk: a pass
    b.dispatch("a")
    b.submit("a", "c1")
    _obs(b, "trunk", "inv:u", "c" * 64, "fail", ("t1",), sigs={"t1": SIG_A})
    same = b.state.agg("trunk", "inv:u", "c" * 64).last_fail
    out = hints(b.state, b.plan, "a", [("inv:u", "c" * 64, same)], None)
    assert f"known intermittent: t1 passed and failed on trunk's key (#{p.seq}, #{f.seq})" in out, out
    _obs(b, "trunk", "inv:u", "d" * 64, "fail", ("t1",), sigs={"t1": SIG_B})
    other = b.state.agg("trunk", "inv:u", "d" * 64).last_fail
    out = hints(b.state, b.plan, "a", [("inv:u", "d" * 64, other)], None)
    assert not [h for h in out if "intermittent" in h]
    assert f"t1: same test failed on older trees (different error) (#{f.seq})" in out, out


def _red(b, sig=SIG_A):
    """The merge-tree failure of `a` on a fresh key: its hints' `t1:` lines."""
    if b.state.open_slot("a") is None:
        b.dispatch("a")
        b.submit("a", "c1")
    _obs(b, "trunk", "inv:u", "c" * 64, "fail", ("t1",), sigs={"t1": sig} if sig else None)
    rec = b.state.agg("trunk", "inv:u", "c" * 64).last_fail
    return [h for h in hints(b.state, b.plan, "a", [("inv:u", "c" * 64, rec)], None) if h.startswith(("t1", "known"))]


def _trunk_fail(b, sig=SIG_A, key="a" * 64, verdict="fail"):
    failed = ("t1",) if verdict == "fail" else ()
    return _obs(b, "trunk", "inv:u", key, verdict, failed, merging=None, commit=b.state.trunk_commit,
                sigs={"t1": sig} if sig and failed else None)


def test_trunk_red_runs_begin_under_the_invariants_current_definition():
    """A plan change + refresh is another run definition: failures measured before it are not the run."""
    b = _trunk_book()
    _trunk_fail(b)
    b.plan = parse_plan(INV_PLAN.replace("{id: u, run: 'true'}", "{id: u, run: 'make test'}"))
    b.add(E.Plan(by="parent:p", prior=b.state.plan.sha, plan="8" * 64))
    b.add(E.Refresh(by="executor:owed", commit=b.state.trunk_commit, keys={"u": "e" * 64, "v": "b" * 64}))
    new = _trunk_fail(b, key="e" * 64)
    assert _red(b) == [f"t1: trunk red since #{new.seq}; fix trunk before retrying"]


def test_an_error_observation_after_the_trunk_failure_keeps_trunk_red():
    b = _trunk_book()
    f = _trunk_fail(b)
    _trunk_fail(b, verdict="error")  # stored as the key's last observation: no verdict
    assert _red(b) == [f"t1: trunk red since #{f.seq}; fix trunk before retrying"]


def test_trunk_red_reads_the_complete_run_and_generic_hints_the_last_window(monkeypatch):
    """Longer than any fixed row count: the run's first failure (26 fails before); with a small window the
    pruned rows' run (State.trunk_runs) still gives it, while older-trees hints keep the window."""
    from owed.folds import history

    b = _trunk_book()
    first = _trunk_fail(b)
    for _ in range(25):
        _trunk_fail(b)
    assert _red(b) == [f"t1: trunk red since #{first.seq}; fix trunk before retrying"]
    monkeypatch.setattr(history, "WINDOW", 5)
    monkeypatch.setattr(history, "SLACK", 0)
    b = _trunk_book()
    old = _trunk_fail(b, sig=SIG_B)
    _trunk_fail(b, verdict="pass")
    first = _trunk_fail(b)
    for _ in range(12):
        _trunk_fail(b)
    assert len(b.state.history["trunk\x1finv:u"]) <= 6 and b.state.trunk_runs["trunk\x1finv:u"]["t1"][0] == first.seq
    assert _red(b) == [f"t1: trunk red since #{first.seq}; fix trunk before retrying"] and old.seq < first.seq
    # The generic hints: a failure older than the window is no older-trees evidence, even while its list
    # (not written since) still holds it.
    monkeypatch.setattr(history, "WINDOW", 8)
    b = _trunk_book()
    _trunk_fail(b, sig=SIG_B)
    _trunk_fail(b, verdict="pass")
    b.dispatch("a")
    b.submit("a", "c1")
    near = _red(b)
    assert near == ["t1: same test failed on older trees (different error) (#3)"], near
    for _ in range(8):
        _obs(b, "trunk", "inv:v", "b" * 64, "pass", merging=None, commit=b.state.trunk_commit)
    assert [h for h in _red(b) if "older trees" in h] == []


def test_an_unsigned_failure_is_no_same_error_evidence_for_a_signed_one():
    b = _trunk_book()
    _trunk_fail(b, sig=None)
    _trunk_fail(b, verdict="pass")
    assert not [h for h in _red(b) if "intermittent" in h]  # the trunk key's failure is unsigned
    b = _trunk_book()
    _trunk_fail(b, sig=None)
    signed = _trunk_fail(b)
    assert _red(b) == [f"t1: trunk red since #{signed.seq}; fix trunk before retrying"]  # not the unsigned run


def test_trunk_red_names_the_latest_merge_or_adopt_at_or_before_its_start():
    b = _trunk_book()
    ad = b.add(E.Adopt(by="owner:o", channel="flag", trunk="main", prior=b.state.trunk_commit, commit="f" * 40,
                       commits=1, changed=("z.txt",), note="hotfix", keys={"u": "a" * 64, "v": "b" * 64}))
    f = _trunk_fail(b)
    assert _red(b) == [f"t1: trunk red since #{f.seq} (after adopt #{ad.seq}); fix trunk before retrying"]


def test_a_merged_nodes_merge_tree_rows_are_trunk_facts_only_on_the_commit_it_made_trunk():
    from owed.folds.history import trunk_fact
    from owed.state import NodeRec, State

    st = State(nodes={"b": NodeRec(merged=9, merge_commit="y" * 40), "c": NodeRec()})
    row = [3, "fail", "k" * 64, "b", "", {"t1": SIG_A}]
    assert trunk_fact(st, row + ["y" * 40]) and not trunk_fact(st, row + ["x" * 40])  # an earlier trunk's tree
    assert not trunk_fact(st, [3, "fail", "k" * 64, "c", "", {}, "y" * 40])  # not merged
    assert trunk_fact(st, [3, "fail", "k" * 64, "", "", {}, "z" * 40])  # a trunk observation


def test_a_merged_nodes_merge_tree_on_an_earlier_trunk_is_no_trunk_fact_in_the_run():
    """b's merge tree passed on X (before its rebase), b landed as Y: that pass was never trunk's, so it does
    not break the run of trunk failures on T0 and Y."""
    import textwrap

    p0 = textwrap.dedent("""\
        version: 1
        trunk: main
        nodes:
          - {id: a, writes: [a/]}
          - {id: b, writes: [b/]}
        """)
    b = Book(p0)
    b.plan = parse_plan(p0.replace("nodes:", "invariants:\n  - {id: u, run: 'true'}\nnodes:"))
    b.add(E.Plan(by="parent:p", prior=b.state.plan.sha, plan="9" * 64))
    b.add(E.Refresh(by="executor:owed", commit=b.state.trunk_commit, keys={"u": "a" * 64}))
    t0 = b.state.trunk_commit
    _obs(b, "trunk", "inv:u", "a" * 64, "pass", merging=None, commit=t0)
    for n in "ab":
        b.dispatch(n)
        b.add(E.Submit(by=f"writer:{n}#1", node=n, attempt=1, commit=n * 40, keys={"writes": f"w-{n}", "rulings": "x"}))
        b.obs(n, "writes", "pass")
    start = _obs(b, "trunk", "inv:u", "a" * 64, "fail", ("t1",), merging=None, commit=t0, sigs={"t1": SIG_A})
    _obs(b, "trunk", "inv:u", "y" * 64, "pass", merging="b", commit="x" * 40)  # b's tree on an earlier trunk
    b.add(E.Merge(by="executor:owed", node="b", attempt=1, prior=t0, commit="y" * 40, tree="8" * 40,
                  invariants={"u": "y" * 64}))
    _obs(b, "trunk", "inv:u", "y" * 64, "fail", ("t1",), merging=None, commit="y" * 40, sigs={"t1": SIG_A})
    _obs(b, "trunk", "inv:u", "c" * 64, "fail", ("t1",), merging="a", commit=M, sigs={"t1": SIG_A})
    rec = b.state.agg("trunk", "inv:u", "c" * 64).last_fail
    out = hints(b.state, b.plan, "a", [("inv:u", "c" * 64, rec)], None)
    assert f"t1: trunk red since #{start.seq}; fix trunk before retrying" in out, out


def _two_node_inv_book():
    import textwrap

    p0 = textwrap.dedent("""\
        version: 1
        trunk: main
        nodes:
          - {id: a, writes: [a/]}
          - {id: b, writes: [b/]}
          - {id: c, writes: [c/]}
        """)
    b = Book(p0)
    b.plan = parse_plan(p0.replace("nodes:", "invariants:\n  - {id: u, run: 'true'}\nnodes:"))
    b.add(E.Plan(by="parent:p", prior=b.state.plan.sha, plan="9" * 64))
    b.add(E.Refresh(by="executor:owed", commit=b.state.trunk_commit, keys={"u": "a" * 64}))
    for n in "abc":
        b.dispatch(n)
        b.add(E.Submit(by=f"writer:{n}#1", node=n, attempt=1, commit=n * 40, keys={"writes": f"w-{n}", "rulings": "x"}))
        b.obs(n, "writes", "pass")
    return b


def _merge(b, node, commit):
    """A merge that leaves the invariant's reads alone: the trunk key `a…` stays, on a new trunk commit."""
    b.add(E.Merge(by="executor:owed", node=node, attempt=1, prior=b.state.trunk_commit, commit=commit,
                  tree="8" * 40, invariants={"u": "a" * 64}))


def _delta(b):
    _obs(b, "trunk", "inv:u", "f" * 64, "fail", ("t1",), merging="a", commit=M)
    rec = b.state.agg("trunk", "inv:u", "f" * 64).last_fail
    return [h for h in hints(b.state, b.plan, "a", [("inv:u", "f" * 64, rec)], None) if h.startswith("inv:u: ")]


def test_the_delta_quotes_a_trunk_pass_only_on_the_trunk_commit_the_merge_is_based_on():
    """The trunk key outlives merges that leave its reads alone: its last pass, measured on genesis, is no
    `pass on trunk <current>` after two merges; a pass measured on the current trunk commit is."""
    b = _two_node_inv_book()
    t0 = b.state.trunk_commit
    p = _obs(b, "trunk", "inv:u", "a" * 64, "pass", merging=None, commit=t0)
    assert _delta(b) == [f"inv:u: pass on trunk {t0[:12]} (#{p.seq}) → fail on merge tree {M[:12]} (#{p.seq + 1})"]
    _merge(b, "b", "1" * 40)
    _merge(b, "c", "2" * 40)
    assert b.state.trunk_keys == {"u": "a" * 64} and b.state.trunk_commit == "2" * 40
    out = _delta(b)
    assert out == [f"inv:u: last passed on trunk {t0[:12]} (#{p.seq}), before 2 merges → fail on merge tree "
                   f"{M[:12]} (#{b.state.seq})"], out
    assert not [h for h in out if "pass on trunk 222222222222" in h]
    q = _obs(b, "trunk", "inv:u", "a" * 64, "pass", merging=None, commit="2" * 40)
    assert _delta(b)[0].startswith(f"inv:u: pass on trunk 222222222222 (#{q.seq}) → fail")


def test_the_delta_counts_merges_from_the_merge_that_made_the_passing_commit_trunk():
    """A pass on b's merge commit, then c merges: `before 1 merge` (b's own merge is not counted); a later pass
    on an older commit is not quoted as the current trunk's, while an older pass on the current commit is."""
    b = _two_node_inv_book()
    _merge(b, "b", "1" * 40)
    p = _obs(b, "trunk", "inv:u", "a" * 64, "pass", merging=None, commit="1" * 40)
    _merge(b, "c", "2" * 40)
    assert _delta(b)[0].startswith(f"inv:u: last passed on trunk 111111111111 (#{p.seq}), before 1 merge → fail")
    q = _obs(b, "trunk", "inv:u", "a" * 64, "pass", merging=None, commit="2" * 40)
    _obs(b, "trunk", "inv:u", "a" * 64, "pass", merging=None, commit="1" * 40)  # a probe of an older trunk
    assert _delta(b)[0].startswith(f"inv:u: pass on trunk 222222222222 (#{q.seq}) → fail")


def test_the_delta_counts_adopts_beside_merges():
    """An adoption moves trunk too: a genesis pass after a merge and an adopt is `before 1 merge and 1 adopt`."""
    b = _two_node_inv_book()
    t0 = b.state.trunk_commit
    p = _obs(b, "trunk", "inv:u", "a" * 64, "pass", merging=None, commit=t0)
    _merge(b, "b", "1" * 40)
    b.add(E.Adopt(by="owner:o", channel="flag", trunk="main", prior="1" * 40, commit="3" * 40, commits=1,
                  changed=("x.txt",), note="n", keys={"u": "a" * 64}))
    assert b.state.trunk_commit == "3" * 40 and b.state.trunk_keys == {"u": "a" * 64}
    assert _delta(b)[0].startswith(f"inv:u: last passed on trunk {t0[:12]} (#{p.seq}), before 1 merge and 1 adopt "
                                   "→ fail on merge tree")
