"""Native quarantine through the real CLI: the owner excludes exact failing names of a check until the fix merges;
a candidate failing only those is W (quarantined) and merges; the debt is listed; the fix must repair them."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import git, make_repo
from tests.e2e.test_known_red import commit
from tests.e2e.test_merge import SUITE, accepted, ledger

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants: []
    nodes:
      - id: z
        writes: [z.txt]
        checks: [{id: c, run: 'bash suite.sh', timeout_s: 30}]
      - id: fixer
        writes: [failing, f.txt]
    """)


def edit(owed, repo, node, *args):
    plan = repo.parent / "edited-plan.yaml"
    if not plan.exists():
        plan.write_text((repo / "plan.yaml").read_text())
    return owed("edit", node, "--plan", str(plan), *args)


def test_a_quarantined_failure_is_w_the_debt_is_listed_and_the_fix_must_repair_it(tmp_path, owed):
    repo = make_repo(tmp_path / "q", PLAN, files={"failing": "flaky_net\n", "suite.sh": SUITE})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    setting = "checks.c.quarantine=[{test: flaky_net, fix: fixer, note: upstream flake}]"
    r = edit(owed, repo, "z", "--set", setting, "--as", "parent:p", "--note", "q")
    assert r.returncode == 1 and "quarantine 'flaky_net' added (fix fixer)" in r.stderr, r.stderr  # owner-only
    r = edit(owed, repo, "z", "--set", setting, "--i-am-owner", "--note", "quarantine the known flake")
    assert r.returncode == 0, r.stderr
    plan_seq = [e for e in ledger(repo) if e["kind"] == "plan"][-1]["seq"]
    accepted(owed, repo, "z", {"z.txt": "z\n"})  # attest exits 0: the only failure is quarantined
    fail = [e for e in ledger(repo) if e["kind"] == "obs" and e["subject"] == "z" and e["obligation"] == "check:c"]
    assert [(o["verdict"], o["failed"]) for o in fail] == [("fail", ["flaky_net"])]
    why = json.loads(owed("why", "z", "--json").stdout)
    item = next(i for i in why["items"] if i["obligation"] == "check:c")
    assert (item["mark"], item["status"]) == ("W", "quarantined")
    assert f"z/check:c quarantined: flaky_net (fix: fixer; plan #{plan_seq})" in owed("status").stdout
    assert "Its merge lifts quarantine of z/check:c: flaky_net" in owed("why", "fixer").stdout
    assert f"  z/check:c quarantined: flaky_net (fix: fixer; plan #{plan_seq})" in owed("brief").stdout
    assert f"  z/check:c quarantined: flaky_net (fix: fixer; plan #{plan_seq})" in owed("report").stdout
    assert owed("merge", "z").returncode == 0
    # An invariant quarantine: the fix's own merge is measured without its entries, even though trunk already
    # fails those names; once it repairs them it merges and the entries lapse.
    (repo.parent / "edited-plan.yaml").write_text(
        (repo.parent / "edited-plan.yaml").read_text().replace("invariants: []", "invariants:\n  - {id: u, run: 'bash suite.sh', timeout_s: 30}"))
    assert owed("plan", str(repo.parent / "edited-plan.yaml"), "--note", "add u").returncode == 0
    r = owed("edit", "--invariant", "u", "--plan", str(repo.parent / "edited-plan.yaml"), "--set",
             "quarantine=[{test: flaky_net, fix: fixer}]", "--i-am-owner", "--note", "assign the flake to fixer")
    assert r.returncode == 0, r.stderr
    wt = accepted(owed, repo, "fixer", {"f.txt": "f\n"})
    r = owed("merge", "fixer")
    assert r.returncode == 1 and "quarantined tests owned by fixer still fail on its merge tree: flaky_net" in r.stderr, \
        r.stderr
    commit(wt, {"failing": ""}, "repair")
    assert owed("submit", "fixer", cwd=wt).returncode == 0
    assert owed("attest", "fixer").returncode == 0
    r = owed("merge", "fixer")
    assert r.returncode == 0, r.stderr
    assert "quarantined" not in owed("status").stdout  # lapsed with the fix's merge
    assert owed("verify").returncode == 0


def test_adding_a_quarantine_keeps_the_candidate_and_owes_a_remeasure(tmp_path, owed):
    """Measure again, not invalidate (0.20): a quarantine added after the candidate failed keeps the candidate
    (same submit, same keys); its recorded failure binds until owed attest measures it again, then it is W."""
    repo = make_repo(tmp_path / "q", PLAN, files={"failing": "flaky_net\n", "suite.sh": SUITE})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("dispatch", "z").returncode == 0
    wt = repo / ".owed" / "wt" / "z-1"
    commit(wt, {"z.txt": "z\n"}, "z work")
    assert owed("submit", "z", cwd=wt).returncode == 0
    assert owed("attest", "z").returncode == 1  # flaky_net fails: an execution block
    before = json.loads(owed("why", "z", "--json").stdout)
    assert [b["obligation"] for b in before["blocks"]] == ["check:c"]
    r = edit(owed, repo, "z", "--set", "checks.c.quarantine=[{test: flaky_net, fix: fixer}]", "--i-am-owner",
             "--note", "quarantine the known flake")
    assert r.returncode == 0, r.stderr
    why = json.loads(owed("why", "z", "--json").stdout)
    assert why["candidate"]["seq"] == before["candidate"]["seq"]  # not invalidated: no resubmit, no carry
    item = next(i for i in why["items"] if i["obligation"] == "check:c")
    assert item["key"] == next(i for i in before["items"] if i["obligation"] == "check:c")["key"]
    assert (item["mark"], item["status"], item["discharger"]) == ("D", "blocked", "executor")
    assert "failures recorded before their quarantine bind until measured again: owed attest z" in item["hint"]
    assert not why["accepted"] and owed("merge", "z").returncode == 1
    assert [b["obligation"] for b in why["blocks"]] == ["check:c"]  # still binding: not superseded
    assert owed("attest", "z").returncode == 0  # the rerun fails the same names: excused now
    why = json.loads(owed("why", "z", "--json").stdout)
    item = next(i for i in why["items"] if i["obligation"] == "check:c")
    assert (item["mark"], item["status"]) == ("W", "quarantined") and why["accepted"] and not why["blocks"]
    assert owed("merge", "z").returncode == 0
    assert owed("verify").returncode == 0
