"""remeasure_on through the real CLI: a merge-tree invariant failure whose every diagnostic matches a literal gets
one durable automatic retry on the same key; both votes stay (pass after fail is ⊤: the owner decides); a
failure that does not match is not retried."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import make_repo
from tests.e2e.test_merge import accepted, ledger


def plan(flag) -> str:
    # Fails while the flag file exists, printing its text, and removes it: the next run passes.
    run = f'if test -f {flag}; then cat {flag}; rm -f {flag}; exit 1; fi; true'
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        invariants:
          - id: net
            run: '{run}'
            timeout_s: 30
            remeasure_on: ["connection refused"]
        nodes:
          - id: x
            writes: [x.txt]
        """)


def merge_obs(repo) -> list[dict]:
    return [e for e in ledger(repo) if e["kind"] == "obs" and e.get("merging") == "x"]


def test_a_matching_failure_is_retried_once_on_the_same_key_and_both_votes_stay(tmp_path, owed):
    flag = tmp_path / "flag"
    repo = make_repo(tmp_path / "r", plan(flag))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    flag.write_text("dial tcp: connection refused\n")
    r = owed("merge", "x")
    assert r.returncode == 1, r.stdout + r.stderr  # pass + fail on one key: the owner decides
    first, retry = merge_obs(repo)
    assert (first["verdict"], first["remeasure_match"]) == ("fail", "connection refused")
    assert (retry["verdict"], retry["auto_remeasure"], retry["key"]) == ("pass", first["seq"], first["key"])
    r = owed("merge", "x")  # durable: no second automatic retry, nothing measured again
    assert r.returncode == 1 and len(merge_obs(repo)) == 2
    assert owed("defer", "x", "net", "--reason", "a flaky network, retried", "--i-am-owner").returncode == 0
    assert owed("merge", "x").returncode == 0
    assert owed("verify").returncode == 0


def test_a_failure_that_does_not_match_is_not_retried(tmp_path, owed):
    flag = tmp_path / "flag"
    repo = make_repo(tmp_path / "n", plan(flag))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    flag.write_text("Connection Refused\n")  # literal and case-sensitive
    assert owed("merge", "x").returncode == 1
    assert [(o["verdict"], "remeasure_match" in o) for o in merge_obs(repo)] == [("fail", False)]


def pooled_plan(count) -> str:
    # Fails (printing the literal) while the counter file holds a positive number, counting it down.
    run = (f'n=$(cat {count} 2>/dev/null || echo 0); if [ "$n" -gt 0 ]; then echo $((n - 1)) > {count}; '
           f'echo "dial tcp: connection refused"; exit 1; fi; true')
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        invariants:
          - id: net
            run: '{run}'
            timeout_s: 30
            repeat: {{runs: 2, need: 1}}
            remeasure_on: ["connection refused"]
        nodes:
          - id: x
            writes: [x.txt]
        """)


def test_repeat_pools_the_retry_and_remeasures_votes_without_the_owner(tmp_path, owed):
    """`remeasure_on` with `repeat`: the failure and its automatic retry pool their runs on the key (passes × runs
    ≥ need × total) instead of needing the owner; another remeasure that passes tips the pool."""
    count = tmp_path / "count"
    repo = make_repo(tmp_path / "p", pooled_plan(count))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    count.write_text("2\n")  # both runs of the first measurement fail; everything after passes
    r = owed("merge", "x")
    assert r.returncode == 1, r.stdout + r.stderr
    first, retry = merge_obs(repo)
    assert [v["verdict"] for v in first["runs"]] == ["fail", "fail"] and first["remeasure_match"] == "connection refused"
    assert retry["auto_remeasure"] == first["seq"] and [v["verdict"] for v in retry["runs"]] == ["pass"]
    # 1 of 3 runs passed: 1×2 < 1×3 — the pool says fail (not ⊤: no owner decision is asked for).
    assert "inv:net: repeat pools 3 runs on this key: 1 passed (1×2 < 1×3: fail)" in r.stderr, r.stderr
    assert "owed attest x --remeasure" in r.stderr and "needs the owner" not in r.stderr
    st = owed("status").stdout
    assert f"x: merge refused: inv:net fails on the merge tree (#{first['seq']})" in st, st  # not → owed merge
    r = owed("attest", "x", "--remeasure", "--json")
    assert r.returncode == 0, r.stdout + r.stderr  # 2 of 4 runs passed: 2×2 ≥ 1×4
    assert json.loads(r.stdout)["pooled"] == {"inv:net": "repeat pools 4 runs on this key: 2 passed (2×2 ≥ 1×4: pass)"}
    assert owed("merge", "x").returncode == 0  # no defer, no waiver
    assert not [e for e in ledger(repo) if e["kind"] in ("defer", "waive")]
    assert owed("verify").returncode == 0  # replay pools the same runs
