"""Plan known_red on an invariant through the real CLI: exact names the owner assigns to a fix node let other
merges through as W (a red invariant does not jam merges), the fix's own merge is measured without its list,
entries lapse when it merges, and a recurrence is ordinary red."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import git, make_repo
from tests.e2e.test_merge import SUITE, accepted, ledger

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants:
      - {id: u, run: 'bash suite.sh', timeout_s: 30}
    nodes:
      - id: y
        writes: [y.txt, failing]
      - id: f
        writes: [f.txt, failing]
      - id: h
        writes: [failing]
    """)


def commit(wt, files: dict[str, str], msg: str) -> None:
    for name, text in files.items():
        (wt / name).write_text(text)
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", msg)


def edit(owed, repo, *args):
    plan = repo.parent / "edited-plan.yaml"
    if not plan.exists():
        plan.write_text((repo / "plan.yaml").read_text())
    return owed("edit", "--invariant", "u", "--plan", str(plan), *args)


def test_known_red_lets_other_merges_through_and_the_fix_must_repair_its_names(tmp_path, owed):
    repo = make_repo(tmp_path / "k", PLAN, files={"failing": "alpha\n", "suite.sh": SUITE})
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0  # trunk already fails alpha
    accepted(owed, repo, "y", {"y.txt": "y\n", "failing": "alpha beta\n"})
    r = owed("merge", "y")
    assert r.returncode == 1 and "new failures beta (trunk already failed: alpha)" in r.stderr, r.stderr
    # Assigning debt is an owner-only downgrade; the names are validated against the plan.
    setting = "known_red=[{test: beta, fix: f}]"
    r = edit(owed, repo, "--set", setting, "--as", "parent:p", "--note", "assign")
    assert r.returncode == 1 and "need the owner" in r.stderr and "known_red 'beta' added (fix f)" in r.stderr, r.stderr
    r = edit(owed, repo, "--set", "known_red=[{test: beta, fix: nope}]", "--i-am-owner", "--note", "assign")
    assert r.returncode == 2 and "unknown node" in r.stderr, r.stderr
    r = edit(owed, repo, "--set", setting, "--i-am-owner", "--note", "Assign existing trunk debt to f")
    assert r.returncode == 0, r.stderr
    plan_seq = [e for e in ledger(repo) if e["kind"] == "plan"][-1]["seq"]
    r = owed("merge", "y")  # only listed names beyond trunk's own debt fail: W, the merge goes through
    assert r.returncode == 0, r.stderr
    st = owed("status")
    assert f"inv:u known red: beta (fix: f; plan #{plan_seq})" in st.stdout, st.stdout
    assert f"  inv:u known red: beta (fix: f; plan #{plan_seq})" in owed("brief").stdout
    assert f"  inv:u known red: beta (fix: f; plan #{plan_seq})" in owed("report").stdout
    assert json.loads(owed("status", "--json").stdout)["knownRed"] == [
        {"invariant": "u", "entries": [{"test": "beta", "fix": "f"}], "plan": plan_seq}]
    # The fix: its merge is measured without its own list.
    wt = accepted(owed, repo, "f", {"f.txt": "f\n"})
    assert "Its merge lifts known red inv:u: beta" in owed("why", "f").stdout
    r = owed("merge", "f")
    assert r.returncode == 1 and "known-red tests owned by f still fail on its merge tree: beta" in r.stderr, r.stderr
    commit(wt, {"failing": "alpha\n"}, "repair beta")
    assert owed("submit", "f", cwd=wt).returncode == 0
    assert owed("attest", "f").returncode == 0
    r = owed("merge", "f")
    assert r.returncode == 0, r.stderr
    # Lapsed: removable, listed by --full only; removing entries is free (a parent may).
    doc = json.loads(owed("status", "--json").stdout)
    assert "knownRed" not in doc and doc["lapsedKnownRed"][0]["entries"] == [{"test": "beta", "fix": "f"}]
    assert "Lapsed known red (removable): inv:u known red: beta" in owed("status", "--full").stdout
    # A recurrence after the fix merged is ordinary red.
    accepted(owed, repo, "h", {"failing": "alpha beta\n"})
    r = owed("merge", "h")
    assert r.returncode == 1 and "new failures beta" in r.stderr, r.stderr
    r = edit(owed, repo, "--unset", "known_red", "--as", "parent:p", "--note", "Remove repaired debt")
    assert r.returncode == 0, r.stderr
    assert owed("verify").returncode == 0
