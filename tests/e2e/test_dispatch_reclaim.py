"""The remains of a dispatch that died before its entry (branch at the base, its worktree): the next dispatch
removes them when only untracked files (the slot setup's output) are there, and refuses when a tracked file
changed (someone's work)."""

from __future__ import annotations

from tests.conftest import git
from tests.e2e.conftest import Flow, plan_text

PLAN = plan_text("""\
    closure: [plan.yaml]
    nodes:
      - id: n
        writes: [n.txt]
    """)


def _remains(f: Flow) -> str:
    base = git(f.repo, "rev-parse", "HEAD")
    git(f.repo, "worktree", "add", "-q", "-b", "owed/n/1", str(f.repo / ".owed" / "wt" / "n-1"), base)
    return base


def test_remains_with_only_setup_output_are_reclaimed(tmp_path):
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    _remains(f)
    (f.repo / ".owed" / "wt" / "n-1" / "node_modules").mkdir()
    (f.repo / ".owed" / "wt" / "n-1" / "node_modules" / "x.js").write_text("x\n")
    r = f.dispatch("n", expect=None)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [e["attempt"] for e in f.ledger() if e["kind"] == "dispatch"] == [1]
    assert not (f.wt("n") / "node_modules").exists()  # a fresh worktree, not the remains


def test_remains_with_a_changed_tracked_file_are_refused(tmp_path):
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    _remains(f)
    (f.repo / ".owed" / "wt" / "n-1" / "plan.yaml").write_text("someone's edit\n")
    r = f.dispatch("n", expect=1)
    assert "branch owed/n/1 already exists" in r.stderr
    assert (f.repo / ".owed" / "wt" / "n-1" / "plan.yaml").read_text() == "someone's edit\n"
    assert not [e for e in f.ledger() if e["kind"] == "dispatch"]
