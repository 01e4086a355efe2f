"""Issue 12 defect 7 (the driver's part): approval after the reviews, a `*` ruling's re-acknowledgment, no
second reviewer for a resubmitted commit, and a pass in which a run ends never parks. Real CLI, `owed drive`,
bash stand-in agents."""

from __future__ import annotations

import time

from tests.conftest import git
from tests.driver.standins import WRITE_AND_SUBMIT, doc, kinds, make, node, ok, owed

REVIEW_OK = """\
    ACK=${OWED_ACK_RULINGS:+--ack-rulings $OWED_ACK_RULINGS}
    $OWED review "$OWED_NODE" --as "$OWED_REVIEWER" --ok --rank "$OWED_REVIEW_RANK" --candidate "$OWED_CANDIDATE" \\
        --note "looks right" $ACK
"""

WAIT_FOR_GO = """\
    touch "$STATE/reviewer.started"
    while [ ! -e "$STATE/reviewer.go" ]; do sleep 0.1; done
"""


def _once_until(repo, cond, passes: int = 40):
    for _ in range(passes):
        if cond():
            return
        ok(repo, "drive", "--once")
        time.sleep(0.3)
    assert cond(), "condition never reached"


def test_an_approve_owner_node_runs_its_reviewers_before_halting_for_approval(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, reviewer=REVIEW_OK,
                nodes=node("a", reviews=1, extra="  approve: owner\n"))
    ok(repo, "drive")
    [halt] = kinds(repo, "halt")
    assert halt["reason"].startswith("approve needs the owner")
    [review] = kinds(repo, "review")
    assert review["seq"] < halt["seq"]
    assert [launch["role"] for launch in kinds(repo, "launch")] == ["writer", "reviewer"]
    ok(repo, "approve", "a", "--candidate", kinds(repo, "submit")[0]["commit"][:12])
    ok(repo, "drive")
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]


def test_a_star_ruling_after_the_review_gets_the_reviewer_a_re_acknowledgment_then_the_node_merges(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, reviewer=WAIT_FOR_GO + REVIEW_OK, nodes=node("a", reviews=1))
    _once_until(repo, lambda: (tmp_path / "reviewer.started").exists())
    ok(repo, "rule", "--nodes", "*", "every file ends with a newline")  # after the reviewer's packet
    [rule] = kinds(repo, "rule")
    (tmp_path / "reviewer.go").touch()
    r = owed(repo, "drive")
    assert r.returncode == 0, r.stdout + r.stderr
    assert kinds(repo, "halt") == [], r.stdout
    [send] = kinds(repo, "send")
    assert send["rid"].endswith(":reviewer:1") and send["reason"] == "ruling" and send["rulings"] == rule["seq"]
    reviews = kinds(repo, "review")
    assert len(reviews) == 2 and reviews[-1]["ack_rulings"] == rule["seq"]
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]


def test_resubmitting_the_same_commit_while_its_reviewer_runs_launches_no_second_reviewer(tmp_path):
    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, reviewer=WAIT_FOR_GO + REVIEW_OK, nodes=node("a", reviews=1))
    _once_until(repo, lambda: (tmp_path / "reviewer.started").exists())
    worktree = doc(repo, "why", "a")["worktree"]  # the writer resubmits its commit while the reviewer runs
    r = owed(worktree, "submit", "a")
    assert r.returncode == 0, r.stderr
    assert len(kinds(repo, "submit")) == 2
    for _ in range(3):
        ok(repo, "drive", "--once")
    assert [launch["role"] for launch in kinds(repo, "launch")] == ["writer", "reviewer"]
    (tmp_path / "reviewer.go").touch()
    ok(repo, "drive")
    assert [launch["role"] for launch in kinds(repo, "launch")] == ["writer", "reviewer"]
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]
    assert git(repo, "show", "main:a.txt") == "a"


def test_a_run_that_ends_during_a_pass_wakes_the_loop_instead_of_exiting_idle(tmp_path, monkeypatch):
    """The writer seals while the pass is deciding on a snapshot that still shows it running: the driver
    must look again, not exit `idle` with the node's submit unseen."""
    from driver import loop
    from driver.agents import Pool

    repo = make(tmp_path, writer=WRITE_AND_SUBMIT, nodes=node("a"))
    real = loop.Driver.snapshot

    def slow_snapshot(self):
        snap = real(self)
        runs = snap[2]
        for rid, r in runs.items():
            if r.state in ("running", "starting"):
                deadline = time.monotonic() + 30
                while Pool.view(self.pool, rid).state in ("running", "starting") and time.monotonic() < deadline:
                    time.sleep(0.05)
        return snap

    monkeypatch.setattr(loop.Driver, "snapshot", slow_snapshot)
    monkeypatch.chdir(repo)
    assert loop.main(str(repo)) == 0
    assert [m["node"] for m in kinds(repo, "merge")] == ["a"]
