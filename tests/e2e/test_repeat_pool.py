"""Repeat pooling of a node check through the real CLI (0.20): every run of every observation on one key votes
when the check sets `repeat`, so measuring again decides a pass/fail key by the plan's own tolerance instead
of leaving it ⊤ for the owner; without `repeat` pass + fail stays ⊤."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import git, make_repo
from tests.e2e.test_merge import ledger


def plan(count, repeat: str) -> str:
    run = f'n=$(cat {count} 2>/dev/null || echo 0); if [ "$n" -gt 0 ]; then echo $((n - 1)) > {count}; exit 1; fi; true'
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        invariants: []
        nodes:
          - id: x
            writes: [x.txt]
            checks:
              - {{id: t, run: '{run}', timeout_s: 30{repeat}}}
        """)


def submitted(owed, repo):
    assert owed("dispatch", "x").returncode == 0
    wt = repo / ".owed" / "wt" / "x-1"
    (wt / "x.txt").write_text("x\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "x")
    assert owed("submit", "x", cwd=wt).returncode == 0


def item(owed) -> dict:
    why = json.loads(owed("why", "x", "--json").stdout)
    return next(i for i in why["items"] if i["obligation"] == "check:t") | {"accepted": why["accepted"],
                                                                            "blocks": why["blocks"]}


def test_a_repeating_check_pools_its_runs_across_observations(tmp_path, owed):
    count = tmp_path / "count"
    repo = make_repo(tmp_path / "r", plan(count, ", repeat: {runs: 2, need: 1}"))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    submitted(owed, repo)
    count.write_text("2\n")  # the first measurement's two runs fail; every later run passes
    assert owed("attest", "x").returncode == 1
    it = item(owed)
    assert (it["mark"], it["status"]) == ("D", "failed") and [b["obligation"] for b in it["blocks"]] == ["check:t"]
    assert owed("attest", "x", "--rerun").returncode == 4  # a pass, but 1 of 3 runs: 1×2 < 1×3 pools to fail
    it = item(owed)
    assert (it["mark"], it["status"], it["discharger"]) == ("D", "failed", "writer")  # not ⊤: no owner asked
    assert it["hint"] == "repeat pools 3 runs on this key: 1 passed (1×2 < 1×3: fail)"
    assert owed("attest", "x", "--rerun").returncode == 0  # 2 of 4: 2×2 ≥ 1×4
    it = item(owed)
    assert (it["mark"], it["status"]) == ("E", "measured") and it["accepted"] and not it["blocks"]
    cleared = json.loads(owed("why", "x", "--json").stdout)["cleared"]
    assert cleared[0]["how"] == "pooled pass: repeat pools 4 runs on this key: 2 passed (2×2 ≥ 1×4: pass)"
    assert owed("merge", "x").returncode == 0
    assert owed("verify").returncode == 0  # replay pools the same runs and clears the same block


def test_without_repeat_pass_and_fail_on_one_key_stays_the_owners(tmp_path, owed):
    count = tmp_path / "count"
    repo = make_repo(tmp_path / "n", plan(count, ""))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    submitted(owed, repo)
    count.write_text("1\n")
    assert owed("attest", "x").returncode == 1
    owed("attest", "x", "--rerun")
    it = item(owed)
    assert (it["mark"], it["status"], it["discharger"]) == ("D", "conflict", "owner") and "hint" not in it
    assert [e["verdict"] for e in ledger(repo) if e["kind"] == "obs" and e["subject"] == "x"
            and e["obligation"] == "check:t"] == ["fail", "pass"]


def test_a_passing_attribution_rerun_of_a_repeating_check_is_decided_by_the_pool_not_flaky(tmp_path, owed):
    count = tmp_path / "count"
    repo = make_repo(tmp_path / "a", plan(count, ", repeat: {runs: 2, need: 1}"))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    submitted(owed, repo)
    count.write_text("2\n")
    assert owed("attest", "x").returncode == 1  # [fail, fail]: a block on the first candidate's key
    wt = repo / ".owed" / "wt" / "x-1"
    (wt / "x.txt").write_text("x2\n")
    git(wt, "commit", "-qam", "x2")
    assert owed("submit", "x", cwd=wt).returncode == 0
    assert owed("attest", "x").returncode == 0  # the old key's rerun passes once: 1 of 3 runs pools to fail
    why = json.loads(owed("why", "x", "--json").stdout)
    assert why["accepted"] and not why["blocks"]  # never flaky: no owner waiver asked for
    assert why["cleared"][0]["how"] == ("attributed: pooled fail: repeat pools 3 runs on this key: 1 passed "
                                        "(1×2 < 1×3: fail)")
    assert owed("verify").returncode == 0


def _uncached_repeat_of(plan, subject: str, obligation: str):
    """pooling.repeat_of without its per-plan table: the item's spec looked up in the plan on every call."""
    kind, _, iid = obligation.partition(":")
    if subject == "trunk" and kind == "inv":
        items = [i for i in plan.invariants if i.id == iid]
    else:
        node = plan.node(subject)
        items = [c for c in node.checks if c.id == iid] if node is not None and kind == "check" else []
    rep = items[0].repeat if items else None
    return (rep.runs, rep.needed) if rep else None


def test_replay_with_the_per_plan_repeat_table_equals_the_uncached_lookup(tmp_path, owed, monkeypatch):
    """A real ledger with pooled observations on a repeating check and a repeating invariant: the replayed
    state (every ObsAgg's pool and run votes, the cleared block, history) is the same bytes whether repeat_of
    answers from its per-plan table or scans the plan on every observation."""
    import msgspec

    from owed.folds import judgments
    from owed.ledger.store import Ledger
    from owed.pooling import repeat_of
    from owed.reducer import apply
    from owed.state import State

    count = tmp_path / "count"
    text = plan(count, ", repeat: {runs: 2, need: 1}").replace(
        "invariants: []", "invariants:\n  - {id: u, run: 'true', timeout_s: 30, repeat: {runs: 3, need: 2}}\n"
        "  - {id: v, run: 'true', timeout_s: 30}")
    repo = make_repo(tmp_path / "r", text)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    submitted(owed, repo)
    count.write_text("2\n")
    assert owed("attest", "x").returncode == 1
    assert owed("attest", "x", "--rerun").returncode == 4
    assert owed("attest", "x", "--rerun").returncode == 0
    led = Ledger.discover(repo)
    entries = led.read_all()

    def replay() -> State:
        state = State()
        for e in entries:
            apply(state, e, led.plan)
        return state

    cached = replay()
    p = led.plan(cached.plan.sha)
    asked = {(e.subject, e.obligation) for e in entries if type(e).__name__ == "Obs"}
    assert {("x", "check:t"), ("trunk", "inv:u"), ("trunk", "inv:v")} <= asked, asked
    assert {k: repeat_of(p, *k) for k in asked} == {k: _uncached_repeat_of(p, *k) for k in asked}
    pools = sorted(tuple(a.pool) for a in cached.obs.values() if a.pool)
    assert pools == [(2, 1), (3, 2)], pools  # both repeating items pooled: the comparison is not vacuous
    monkeypatch.setattr(judgments, "repeat_of", _uncached_repeat_of)
    uncached = replay()
    assert msgspec.msgpack.encode(uncached) == msgspec.msgpack.encode(cached)
