"""A node check that fails on the merge tree and on trunk without the node (a trunk-red probe): the merge is
refused as trunk-red, the node waits (status phase, one repository Needs-you line) and merges once trunk moves
(real CLI)."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import git, make_repo
from tests.e2e.test_merge import accepted, ledger
from tests.e2e.test_trunk_refresh import replan

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants: []
    nodes:
      - id: z
        writes: [z.txt]
        checks: [{id: c, run: 'test ! -f broken', timeout_s: 30}]
      - id: w
        writes: [broken]
    """)
FIX = "  - id: f\n    writes: [broken]\n"


def test_a_trunk_red_check_waits_for_trunk_to_move_then_merges(tmp_path, owed):
    repo = make_repo(tmp_path / "r", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "z", {"z.txt": "z\n"})  # passes on its own base
    accepted(owed, repo, "w", {"broken": "w breaks z's check\n"})
    assert owed("merge", "w").returncode == 0
    trunk = git(repo, "rev-parse", "main")
    r = owed("merge", "z", "--json")
    assert r.returncode == 1
    err = json.loads(r.stdout)
    assert err["code"] == "trunk-red" and err["error"].startswith(f"trunk-red: check:c fails on trunk {trunk[:12]}")
    merge_obs = next(e for e in ledger(repo) if e["kind"] == "obs" and e.get("merging") == "z")
    st = owed("status")
    assert f"z: waiting: trunk-red (check:c on trunk {trunk[:12]})" in st.stdout, st.stdout
    assert f"trunk: check:c fails on trunk {trunk[:12]} without z (no names) → fix trunk" in st.stdout
    assert f"owed waive z check:c --accept-risk {merge_obs['seq']}" in st.stdout
    assert "owed merge z" not in st.stdout
    w = owed("why", "z")
    assert f"z — waiting: trunk-red (check:c on trunk {trunk[:12]})" in w.stdout, w.stdout
    assert f"  ✘ check:c fails on the merge tree (obs #{merge_obs['seq']}) → parent" in w.stdout
    probe = next(e for e in ledger(repo) if e["kind"] == "obs" and e.get("probe") == "trunk")
    assert f"fails on trunk {trunk[:12]} without z (probe #{probe['seq']})" in w.stdout
    # (The driver's wait — no halt, no merge, one notice — is tests/driver/test_policy_trunk_red.py.)
    # Trunk moves (a fixing node deletes the file): the waiting merge goes through without a resume.
    replan(owed, repo, PLAN + FIX, "add the fix")
    assert owed("dispatch", "f").returncode == 0
    wt = repo / ".owed" / "wt" / "f-1"
    git(wt, "rm", "-q", "broken")
    git(wt, "commit", "-qm", "fix")
    assert owed("submit", "f", cwd=wt).returncode == 0
    assert owed("attest", "f").returncode == 0
    assert owed("merge", "f").returncode == 0
    st = owed("status").stdout
    assert "z: accepted (merge pending)" in st and "trunk-red" not in st, st
    r = owed("merge", "z")
    assert r.returncode == 0, r.stderr


def test_the_owner_accepts_a_trunk_red_merge_failure_on_its_merge_key_only(tmp_path, owed):
    repo = make_repo(tmp_path / "w", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "z", {"z.txt": "z\n"})
    accepted(owed, repo, "w", {"broken": "w breaks z's check\n"})
    assert owed("merge", "w").returncode == 0
    assert owed("merge", "z").returncode == 1
    merge_obs = next(e for e in ledger(repo) if e["kind"] == "obs" and e.get("merging") == "z")
    cand_key = next(e for e in ledger(repo) if e["kind"] == "submit" and e["node"] == "z")["keys"]["check:c"]
    # A seq that is not a trunk-red merge failure (the candidate's own pass) is refused as before.
    own = next(e for e in ledger(repo) if e["kind"] == "obs" and e["subject"] == "z" and e["obligation"] == "check:c")
    r = owed("waive", "z", "check:c", "--accept-risk", str(own["seq"]), "--reason", "r", "--i-am-owner")
    assert r.returncode == 1 and "is not an active block" in r.stderr, r.stderr
    r = owed("waive", "z", "check:c", "--accept-risk", str(merge_obs["seq"]), "--reason", "trunk's, known",
             "--i-am-owner")
    assert r.returncode == 0, r.stderr
    assert f"binds only the merge key {merge_obs['key'][:12]}" in r.stdout
    waiver = [e for e in ledger(repo) if e["kind"] == "waive"][-1]
    assert waiver["key"] == merge_obs["key"] != cand_key and waiver["accept_risk"] == [merge_obs["seq"]]
    assert "waiting: trunk-red" not in owed("status").stdout
    n_obs = len([e for e in ledger(repo) if e["kind"] == "obs"])
    r = owed("merge", "z")
    assert r.returncode == 0, r.stderr
    assert len([e for e in ledger(repo) if e["kind"] == "obs"]) == n_obs  # the waived merge key is not measured again
    assert owed("verify").returncode == 0  # replay accepts the waived merge key (and only that key)
