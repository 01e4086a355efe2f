"""Batch merges through the real CLI: `owed merge A,B,C` lands accepted members with one trunk move and one
measurement of each changed invariant; a failed batch blocks nobody; replay re-checks the member entries."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.conftest import git, make_repo
from tests.e2e.test_merge import accepted, ledger


def plan(count_file) -> str:
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        invariants:
          - {{id: u, run: 'echo run >> {count_file}; test ! -f bad.txt', timeout_s: 30}}
        nodes:
          - {{id: a, writes: [a.txt]}}
          - {{id: b, writes: [b.txt]}}
          - {{id: c, writes: [c.txt]}}
          - {{id: d, writes: [d.txt, bad.txt]}}
          - {{id: e, writes: [a.txt, e.txt]}}
        """)


@pytest.fixture
def brepo(tmp_path, owed):
    count = tmp_path / "runs"
    repo = make_repo(tmp_path / "b", plan(count))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("attest", "--genesis").returncode == 0
    count.write_text("")
    return repo, count


def runs(count) -> int:
    return len(count.read_text().splitlines())


def reflog(repo) -> list[str]:
    return git(repo, "reflog", "show", "--format=%H", "refs/heads/main").splitlines()


def test_batch_of_four_lands_with_one_trunk_move_and_one_invariant_run(owed, brepo):
    repo, count = brepo
    for n in "abcd":
        accepted(owed, repo, n, {f"{n}.txt": n + "\n"})
    pre, moves = git(repo, "rev-parse", "main"), len(reflog(repo))
    count.write_text("")
    r = owed("merge", "a,b,c,d", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["batch"] == ["a", "b", "c", "d"] and doc["prior"] == pre and len(doc["seqs"]) == 4
    assert runs(count) == 1  # one invariant run on the final tree
    assert len(reflog(repo)) == moves + 1 and git(repo, "rev-parse", "main") == doc["commit"]
    assert git(repo, "rev-list", "--first-parent", "--count", f"{pre}..main") == "4"  # M1..M4
    merges = [e for e in ledger(repo) if e["kind"] == "merge"]
    assert [e["node"] for e in merges] == ["a", "b", "c", "d"]
    assert {e["commit"] for e in merges} == {doc["commit"]} and {e["prior"] for e in merges} == {pre}
    assert all(e["members"] == ["a", "b", "c", "d"] for e in merges)
    st = json.loads(owed("status", "--json").stdout)
    assert st["merged"] == ["a", "b", "c", "d"]
    assert st["invariants"][0]["verdict"] == "pass"  # the batch's vote became trunk's evidence when it landed
    why = json.loads(owed("why", "c", "--json").stdout)
    assert why["phase"] == f"merged (#{merges[2]['seq']}, in batch a, b, c, d)"
    assert owed("verify").returncode == 0  # replay re-checks every member's guard


def test_failed_batch_blocks_no_member_and_is_not_repeated_by_the_planner(owed, brepo):
    repo, count = brepo
    for n in "abcd":
        accepted(owed, repo, n, {f"{n}.txt": n + "\n", **({"bad.txt": "x\n"} if n == "d" else {})})
    pre = git(repo, "rev-parse", "main")
    r = owed("merge", "a,b,c,d", "--json")
    assert r.returncode == 1
    err = json.loads(r.stdout.splitlines()[-1])
    assert err["code"] == "guard" and "batch merge of a, b, c, d refused" in err["error"]
    assert "inv:u fail on the batch tree (obs #" in err["error"] and "belong to the batch only" in err["error"]
    assert git(repo, "rev-parse", "main") == pre
    es = ledger(repo)
    assert not [e for e in es if e["kind"] == "merge"]
    vote = [e for e in es if e["kind"] == "obs" and e.get("batch")][-1]
    assert vote["batch"] == {"members": ["a", "b", "c", "d"], "base": pre} and vote["verdict"] == "fail"
    st = json.loads(owed("status", "--full", "--json").stdout)
    assert st["mergeQueue"] == ["a", "b", "c", "d"]  # nobody lost acceptance: batch votes block no member
    # The planner does not batch the same failed set again on this trunk: it halves it.
    from owed.batchplan import plan_batch
    from owed.ops.context import Context

    ctx = Context.load(str(repo))
    assert plan_batch(ctx.state, ctx.plan, ["a", "b", "c", "d"], 8) == ["a", "b"]
    # a and b land as a batch; the suspects c, d are next (their set on the new trunk), then d alone.
    assert owed("merge", "a,b").returncode == 0
    ctx.reload()
    assert plan_batch(ctx.state, ctx.plan, ["c", "d"], 8) == ["c", "d"]
    assert owed("merge", "c,d").returncode == 1
    ctx.reload()
    assert plan_batch(ctx.state, ctx.plan, ["c", "d"], 8) == ["c"]
    assert owed("merge", "c").returncode == 0
    ctx.reload()
    assert plan_batch(ctx.state, ctx.plan, ["d"], 8) == ["d"]
    r = owed("merge", "d")
    assert r.returncode == 1
    assert "d was a member of batch c,d that failed on trunk" in r.stderr and "(obs #" in r.stderr
    assert owed("verify").returncode == 0


def test_batch_refusals_before_anything_is_recorded(owed, brepo):
    repo, _ = brepo
    accepted(owed, repo, "a", {"a.txt": "a\n"})
    accepted(owed, repo, "b", {"b.txt": "b\n"})
    for arg, code, text in [("a,a", 2, "each node once"), ("a,", 2, "comma-separated"),
                            ("a,zz", 1, "unknown node 'zz'"), ("a,c", 1, "c has no open candidate"),
                            ("a,b,c,d,e,a1,a2,a3,a4", 2, "at most 8")]:
        r = owed("merge", arg)
        assert r.returncode == code and text in r.stderr, (arg, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr
    accepted(owed, repo, "e", {"e.txt": "e\n"}, overlap=True)
    n0 = len(ledger(repo))
    r = owed("merge", "a,e")
    assert r.returncode == 1 and "a and e may write the same paths" in r.stderr
    r = owed("merge", "a,b", env={"DSA_CALL": "1"})
    assert r.returncode == 1 and "parent acts are refused" in r.stderr
    assert len(ledger(repo)) == n0  # nothing recorded by any refusal


def test_a_conflicting_member_drops_out_and_the_one_left_merges_alone(owed, brepo):
    repo, count = brepo
    accepted(owed, repo, "a", {"a.txt": "a\n"})
    accepted(owed, repo, "b", {"b.txt": "b\n"})
    accepted(owed, repo, "e", {"a.txt": "e\n", "e.txt": "e\n"}, overlap=True)
    assert owed("merge", "e").returncode == 0  # trunk now has another a.txt: a's candidate conflicts with it
    r = owed("merge", "a,b", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["batch"] == ["b"] and doc["node"] == "b"
    assert doc["dropped"][0]["node"] == "a" and "conflicts with the batch tree (a.txt)" in doc["dropped"][0]["reason"]
    merges = [e for e in ledger(repo) if e["kind"] == "merge"]
    assert [(e["node"], e.get("members", [])) for e in merges] == [("e", []), ("b", [])]  # b as a single merge
    assert json.loads(owed("status", "--json").stdout)["mergeQueue"] == ["a"]  # a stays for its rebase
