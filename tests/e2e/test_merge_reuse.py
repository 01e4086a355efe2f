"""After a refused merge nothing is measured again by accident: a retry reuses the recorded merge-tree
observations (the refusal names their seq, age and the remeasure command), status shows the refusal and its
one command instead of `→ owed merge`, and `attest --remeasure` / `resume --remeasure` measure again on the
same keys (a pass after a fail is ⊤: the owner decides)."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import make_repo
from tests.e2e.test_merge import accepted, ledger


def plan(flag) -> str:
    return textwrap.dedent(f"""\
        version: 1
        trunk: main
        invariants:
          - {{id: u, run: 'test ! -f bad.txt && test ! -f {flag}', timeout_s: 30}}
        nodes:
          - id: x
            writes: [x.txt, bad.txt]
        """)


def obs(repo) -> list[dict]:
    return [e for e in ledger(repo) if e["kind"] == "obs" and e.get("merging") == "x"]


def test_a_retry_reuses_the_refusal_status_names_its_command_and_remeasure_measures_again(tmp_path, owed):
    flag = tmp_path / "flag"
    repo = make_repo(tmp_path / "r", plan(flag))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    flag.write_text("")  # the merge tree fails (the trunk itself was measured green at genesis)
    r = owed("merge", "x")
    assert r.returncode == 1 and "inv:u new debt" in r.stderr, r.stderr
    first = obs(repo)
    assert [o["verdict"] for o in first] == ["fail"]
    st = owed("status").stdout
    assert f"x: merge refused: inv:u fails on the merge tree (#{first[0]['seq']})" in st, st
    # trunk has not moved since the slot base: the break is the candidate's own, so the writer repairs it
    # (a rebase would be refused: nothing to rebase)
    repair = 'owed rule --nodes x --writer "repair inv:u on the merge tree"'
    assert f"(measure again: owed attest x --remeasure) → {repair}" in st and "→ owed merge x" not in st, st
    assert "owed rebase x" not in st, st
    why = owed("why", "x").stdout  # why's closing line names the refusal's command too, not `owed merge`
    assert why.rstrip().endswith(f"Accepted: every obligation has a receipt. Next: {repair} (or the owner "
                                 "carries the debt: owed defer x u --reason \"...\")"), why
    r = owed("merge", "x")  # nothing changed: the recorded failure is reused, nothing measured
    assert r.returncode == 1 and f"reused obs #{first[0]['seq']}" in r.stderr, r.stderr
    assert "owed attest x --remeasure" in r.stderr and len(obs(repo)) == 1
    # attest --remeasure: the same key again (still failing)
    r = owed("attest", "x", "--remeasure", "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert [(o["obligation"], o["key"], o["verdict"]) for o in doc["recorded"]] == [("inv:u", first[0]["key"], "fail")]
    # The cause is gone: measured again it passes, but pass + fail on one key is ⊤, for the owner.
    flag.unlink()
    r = owed("attest", "x", "--remeasure")
    assert r.returncode == 4 and "Still not passing on their keys: inv:u" in r.stdout, r.stdout
    r = owed("merge", "x")
    assert r.returncode == 1 and len(obs(repo)) == 3
    assert owed("defer", "x", "u", "--reason", "flaky environment, fixed", "--i-am-owner").returncode == 0
    assert "x: accepted (merge pending)" in owed("status").stdout
    assert owed("merge", "x").returncode == 0


def test_a_break_on_a_moved_trunk_leads_with_rebase(tmp_path, owed):
    both = textwrap.dedent("""\
        version: 1
        trunk: main
        invariants:
          - {id: u, run: '! (test -f a.txt && test -f b.txt)', timeout_s: 30}
        nodes:
          - {id: a, writes: [a.txt]}
          - {id: b, writes: [b.txt]}
        """)
    repo = make_repo(tmp_path / "m", both)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "a", {"a.txt": "a\n"})
    accepted(owed, repo, "b", {"b.txt": "b\n"})
    assert owed("merge", "b").returncode == 0  # trunk moves past a's slot base
    r = owed("merge", "a")
    assert r.returncode == 1 and "inv:u new debt" in r.stderr, r.stderr
    st = owed("status").stdout
    assert "→ owed rebase a (or the owner carries the debt: owed defer a u" in st and "--writer" not in st, st
    assert owed("rebase", "a").returncode == 0  # the command it names is one that acts


def test_resume_remeasure_makes_the_next_merge_measure_its_failures_again(tmp_path, owed):
    flag = tmp_path / "flag"
    repo = make_repo(tmp_path / "s", plan(flag))
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    flag.write_text("")
    assert owed("merge", "x").returncode == 1
    r = owed("resume", "x", "--remeasure", "--after", "x", "--note", "n")
    assert r.returncode == 1, r.stderr  # --remeasure takes no --after (and a node cannot wait for itself)
    r = owed("resume", "x", "--remeasure", "--note", "the disk was full; measure again")
    assert r.returncode == 0 and "measures the failed merge-tree items again" in r.stdout, r.stdout
    assert [e for e in ledger(repo) if e["kind"] == "resume"][-1]["remeasure"] is True
    assert "x: accepted (merge pending)" in owed("status").stdout  # the merge will measure again
    r = owed("merge", "x")
    assert r.returncode == 1 and len(obs(repo)) == 2  # measured again once, on the same key
    assert len({o["key"] for o in obs(repo)}) == 1
    assert owed("merge", "x").returncode == 1 and len(obs(repo)) == 2  # and then reused again
    assert owed("verify").returncode == 0
