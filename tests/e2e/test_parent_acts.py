"""The parent-or-owner acts (dispatch, gc, escape) judge the acting principal's role through owed/ids.py
has_role: a writer or reviewer is refused (exit 1, nothing recorded), a parent or the owner acts. And gc
deletes a finished slot's branch only while it is where gc saw it (moved or deleted meanwhile: kept, exit 0)."""

from __future__ import annotations

import json

from tests.e2e.conftest import plan_text

PLAN = plan_text("""\
    nodes:
      - id: a
        writes: [a.txt]
    """)


def test_a_writer_or_reviewer_may_not_dispatch_gc_or_record_an_escape(flow):
    f = flow(PLAN)
    before = f.ledger_bytes()
    for args, what in [(("dispatch", "a", "--as", "writer:a#1"), "writer:a#1 may not dispatch"),
                       (("gc", "--as", "reviewer:r1"), "reviewer:r1 may not run gc"),
                       (("escape", "a", "--merge", "1", "--class", "missing", "--note", "x", "--as", "writer:a#1"),
                        "writer:a#1 may not record an escape")]:
        r = f.run(*args, expect=1)
        assert what in r.stderr, r.stderr
    assert f.ledger_bytes() == before  # nothing recorded
    f.dispatch("a", "--as", "parent:p1")  # a parent acts
    assert f.ledger()[-1]["kind"] == "dispatch" and f.ledger()[-1]["by"] == "parent:p1"
    assert f.run("gc", "--dry-run", "--as", "parent:p1", expect=0).returncode == 0


def test_gc_survives_a_finished_slots_branch_deleted_after_gc_looked_at_it(flow):
    """The same hook deleting the branch instead: gc's delete misses (it was a re-read None given to
    `git update-ref -d`, a TypeError traceback after the worktree was gone); the worktree is removed, exit 0."""
    from tests.conftest import git

    f, branch, c1, wt = _abandoned(flow)
    _hook(f, f"git update-ref -d refs/heads/{branch} {c1}")
    doc = json.loads(f.run("gc", "--json", "--as", "parent:p1", expect=0).stdout)
    assert [(r["node"], r["branch"]) for r in doc["removed"]] == [("a", None)] and not wt.exists()
    assert git(f.repo, "branch", "--list", branch) == ""


def _abandoned(flow):
    from tests.conftest import git

    f = flow(PLAN)
    f.dispatch("a")
    c1 = f.deliver("a", {"a.txt": "one\n"})
    wt = f.wt("a")
    branch = git(wt, "rev-parse", "--abbrev-ref", "HEAD")
    f.run("abandon", "a", "--note", "start over", "--i-am-owner", expect=0)
    return f, branch, c1, wt


def _hook(f, command: str) -> None:
    """A reference-transaction hook running `command` once gc pins the abandoned candidate (refs/owed/keep/…):
    after gc looked at the slot's branch, before it deletes it."""
    hook = f.repo / ".git" / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)  # (a git without templates makes no hooks directory)
    hook.write_text(f"#!/bin/sh\n[ \"$1\" = committed ] || exit 0\ngrep -q ' refs/owed/keep/' && {command}\nexit 0\n")
    hook.chmod(0o755)


def test_gc_keeps_a_finished_slots_branch_that_moved_after_gc_looked_at_it(flow):
    """gc deletes a finished slot's branch by compare-and-swap on the oid it checked: a commit landing on the
    branch meanwhile keeps it (and its commit). The move comes from a real reference-transaction hook git runs
    when gc pins the abandoned candidate (refs/owed/keep/…), between gc's look at the branch and its delete."""
    from tests.conftest import git

    f, branch, c1, wt = _abandoned(flow)
    moved = git(f.repo, "commit-tree", f"{c1}^{{tree}}", "-p", c1, "-m", "a late commit")
    _hook(f, f"git update-ref refs/heads/{branch} {moved} {c1}")
    doc = f.run("gc", "--json", "--as", "parent:p1", expect=0)
    assert git(f.repo, "rev-parse", f"refs/heads/{branch}") == moved, doc.stdout  # the late commit survives
    submit = next(e["seq"] for e in f.ledger() if e["kind"] == "submit")
    assert git(f.repo, "rev-parse", f"refs/owed/keep/a/1/{submit}") == c1  # the pin whose update ran the hook
    removed = json.loads(doc.stdout)["removed"]
    assert [(r["node"], r["branch"]) for r in removed] == [("a", None)], removed  # reported kept, not removed
    assert not wt.exists()
