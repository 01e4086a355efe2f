"""Seed 0.20 "rebase packets compute upstream and say commit first": the writer's rebase follow-up names a real
upstream (the dropped candidate's base, or the branch's merge-base with the new base when there was none) and
says to commit work in progress before rebasing; `owed rebase` says so too."""

from __future__ import annotations

import subprocess
import textwrap

from driver.messages import follow_up
from owed.ops.context import Context
from tests.conftest import git, make_repo
from tests.e2e.test_merge import accepted

PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants: []
    nodes:
      - {id: a, writes: [a.txt]}
      - {id: b, writes: [b.txt]}
    """)


def test_a_rebase_without_a_dropped_candidate_computes_its_upstream(tmp_path, owed):
    repo = make_repo(tmp_path / "r", PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    assert owed("dispatch", "a").returncode == 0
    wt = repo / ".owed" / "wt" / "a-1"
    (wt / "a.txt").write_text("a\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "a in progress")  # committed, never submitted: no candidate to drop
    accepted(owed, repo, "b", {"b.txt": "b\n"})
    assert owed("merge", "b").returncode == 0
    r = owed("rebase", "a")
    assert r.returncode == 0 and "commit your work in progress first, then run: git rebase --onto" in r.stdout
    ctx = Context.load(str(repo))
    text = follow_up(ctx.state, ctx.plan, "a", "rebase")
    new = ctx.state.open_slot("a").base
    assert "commit your work in progress first" in text and "<old base>" not in text, text
    line = next(ln.strip() for ln in text.splitlines() if ln.strip().startswith("git rebase"))
    assert line == f"git rebase --onto {new} $(git merge-base HEAD {new})", text
    done = subprocess.run(["bash", "-c", line], cwd=wt, capture_output=True, text=True)  # the command works
    assert done.returncode == 0, done.stderr
    assert git(wt, "merge-base", "--is-ancestor", new, "HEAD") == "" and (wt / "b.txt").exists()
    assert git(wt, "log", "--format=%s", f"{new}..HEAD").split() == ["a", "in", "progress"]
