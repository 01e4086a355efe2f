"""`owed amend` / `owed edit` rewrite the plan file in the trunk worktree and leave it uncommitted (the ledger
keeps the plan; committing the file is the user's). That file, holding exactly the recorded plan, never
blocks a merge's fast-forward; any other uncommitted change there (or unrecorded plan edits) still does."""

from __future__ import annotations

from tests.conftest import git
from tests.e2e.conftest import Flow, plan_text

PLAN = plan_text("nodes:\n  - id: a\n    writes: [a.txt]\n  - id: b\n    writes: [b.txt]\n")


def _accepted(f: Flow, node: str) -> None:
    f.dispatch(node)
    f.deliver(node, {f"{node}.txt": f"{node}\n"})
    f.attest(node, expect=0)


def test_the_plan_file_owed_rewrote_does_not_block_a_merge(tmp_path):
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    _accepted(f, "a")
    f.run("amend", "b", "--writes", "+docs/", "--note", "docs of b", expect=0)
    assert git(f.repo, "status", "--porcelain").strip() == "M plan.yaml"
    recorded = (f.repo / "plan.yaml").read_text()
    r = f.run("merge", "a", expect=0)
    assert "a" in r.stdout
    assert (f.repo / "a.txt").read_text() == "a\n"  # the trunk worktree was fast-forwarded
    assert (f.repo / "plan.yaml").read_text() == recorded  # and the rewritten plan file kept, still uncommitted
    assert git(f.repo, "status", "--porcelain").strip() == "M plan.yaml"
    f.run("edit", "b", "--set", "title=B", "--note", "a title", expect=0)
    _accepted(f, "b")
    f.run("merge", "b", expect=0)
    f.run("verify", expect=0)


def test_other_uncommitted_changes_still_block_it(tmp_path):
    f = Flow(tmp_path / "repo", PLAN)
    f.init()
    _accepted(f, "a")
    text = (f.repo / "plan.yaml").read_text()
    (f.repo / "plan.yaml").write_text(text.replace("id: b\n", "id: b\n    title: an unrecorded edit\n"))
    r = f.run("merge", "a", expect=1)
    assert "has uncommitted changes" in r.stderr
    git(f.repo, "checkout", "plan.yaml")
    (f.repo / "README.md").write_text("local\n")
    git(f.repo, "add", "README.md")
    r = f.run("merge", "a", expect=1)
    assert "has uncommitted changes" in r.stderr
    assert not any(e["kind"] == "merge" for e in f.ledger())


def test_a_batch_merge_keeps_the_recorded_plan_file_too(tmp_path):
    plan = plan_text("nodes:\n  - id: a\n    writes: [a.txt]\n  - id: b\n    writes: [b.txt]\n  - id: c\n    writes: [c.txt]\n")
    f = Flow(tmp_path / "repo", plan)
    f.init()
    _accepted(f, "a")
    _accepted(f, "b")
    f.run("amend", "c", "--writes", "+docs/", "--note", "docs of c", expect=0)
    recorded = (f.repo / "plan.yaml").read_text()
    f.run("merge", "a,b", expect=0)
    assert (f.repo / "a.txt").read_text() == "a\n" and (f.repo / "b.txt").read_text() == "b\n"
    assert (f.repo / "plan.yaml").read_text() == recorded
    assert git(f.repo, "status", "--porcelain").strip() == "M plan.yaml"
