"""A merge is recorded and trunk moved, or neither (issue 10 A1): owed SIGKILLed by a git
`reference-transaction` hook at the ref's commit (or before it), or while a slow post-merge hook runs;
the next owed command completes or rolls back the torn merge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from tests.conftest import git, make_repo, wait_for
from tests.e2e.test_merge import accepted, ledger, plan

# Kills the owed process (the nearest ancestor running `-m owed`) when refs/heads/main reaches the stage
# named in $OWED_TEST_KILL_STAGE, once (the flag file is removed first); at `prepared` it also aborts the
# transaction, so git (which outlives owed) cannot move the ref after all.
KILL_HOOK = textwrap.dedent(f"""\
    #!{sys.executable}
    import os, signal, sys
    flag = os.environ.get("OWED_TEST_KILL_FLAG", "")
    lines = sys.stdin.read().split("\\n")
    if not flag or not os.path.exists(flag) or sys.argv[1] != os.environ.get("OWED_TEST_KILL_STAGE"):
        sys.exit(0)
    if not any(l.split(" ")[-1] == "refs/heads/main" for l in lines if l):
        sys.exit(0)
    os.unlink(flag)
    pid = os.getppid()
    while pid > 1:
        cmd = open(f"/proc/{{pid}}/cmdline", "rb").read().split(b"\\0")
        if b"owed" in cmd and b"-m" in cmd:
            os.kill(pid, signal.SIGKILL)
            break
        pid = int([l for l in open(f"/proc/{{pid}}/status") if l.startswith("PPid:")][0].split()[1])
    sys.exit(1 if sys.argv[1] == "prepared" else 0)  # at `prepared`, also abort: the ref never moves
    """)


@pytest.fixture
def trepo(tmp_path, owed):
    repo = make_repo(tmp_path / "m", plan())
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    return repo


def _hook(repo, name: str, text: str) -> None:
    p = repo / ".git" / "hooks" / name
    p.write_text(text)
    p.chmod(0o755)


def _merges(repo) -> list[dict]:
    return [e for e in ledger(repo) if e["kind"] == "merge"]


@pytest.mark.parametrize("checked_out", [True, False], ids=["ff-worktree", "update-ref"])
def test_kill_at_the_ref_commit_is_completed_by_the_next_command(owed, trepo, tmp_path, checked_out):
    if not checked_out:
        git(trepo, "switch", "-q", "--detach")
    prior = git(trepo, "rev-parse", "main")
    flag = tmp_path / "kill-once"
    flag.write_text("")
    _hook(trepo, "reference-transaction", KILL_HOOK)
    env = {"OWED_TEST_KILL_FLAG": str(flag), "OWED_TEST_KILL_STAGE": "committed"}
    r = owed("merge", "x", env=env)
    assert r.returncode == -9, r.stdout + r.stderr
    moved = git(trepo, "rev-parse", "main")
    assert moved != prior and not _merges(trepo)  # the torn state itself
    r = owed("status")
    assert r.returncode == 0, r.stderr
    assert "trunk moved outside owed" not in r.stdout + r.stderr
    (m,) = _merges(trepo)
    assert m["commit"] == moved and m["prior"] == prior and m["node"] == "x"
    assert not (trepo / ".git" / "owed" / "merge-intent.json").exists()
    assert owed("verify").returncode == 0
    assert owed("merge", "x").returncode == 1  # already merged: recorded once


def test_kill_before_the_ref_moves_is_rolled_back(owed, trepo, tmp_path):
    # update-ref (trunk not checked out): a fast-forward whose ref transaction aborts would leave git's
    # own worktree update behind, which is git's matter, not the ledger's.
    git(trepo, "switch", "-q", "--detach")
    prior = git(trepo, "rev-parse", "main")
    flag = tmp_path / "kill-once"
    flag.write_text("")
    _hook(trepo, "reference-transaction", KILL_HOOK)
    r = owed("merge", "x", env={"OWED_TEST_KILL_FLAG": str(flag), "OWED_TEST_KILL_STAGE": "prepared"})
    assert r.returncode == -9, r.stdout + r.stderr
    assert git(trepo, "rev-parse", "main") == prior and not _merges(trepo)
    r = owed("status", "--json")
    assert r.returncode == 0, r.stderr
    assert not (trepo / ".git" / "owed" / "merge-intent.json").exists()
    assert git(trepo, "rev-parse", "main") == prior and not _merges(trepo)
    r = owed("merge", "x")  # the merge can simply be retried
    assert r.returncode == 0, r.stderr
    assert len(_merges(trepo)) == 1 and _merges(trepo)[0]["commit"] == git(trepo, "rev-parse", "main")


def test_kill_during_a_slow_post_merge_hook(owed, trepo, tmp_path):
    started = tmp_path / "hook-started"
    _hook(trepo, "post-merge", f"#!/bin/sh\ntouch {started}\nsleep 30\n")
    p = subprocess.Popen([sys.executable, "-m", "owed", "merge", "x"], cwd=trepo, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(started.exists, timeout=60, what="the post-merge hook")
        os.kill(p.pid, 9)
        p.wait(timeout=10)
    finally:
        try:
            os.killpg(p.pid, 9)  # the hook's sleep
        except ProcessLookupError:
            pass
        p.communicate()
    moved = git(trepo, "rev-parse", "main")
    assert not _merges(trepo)
    r = owed("why", "x")
    assert r.returncode == 0, r.stderr
    (m,) = _merges(trepo)
    assert m["commit"] == moved
    assert owed("verify").returncode == 0


BATCH_PLAN = textwrap.dedent("""\
    version: 1
    trunk: main
    invariants:
      - {id: u, run: 'test ! -f bad.txt', timeout_s: 30}
    nodes:
      - {id: x, writes: [x.txt]}
      - {id: y, writes: [y.txt]}
    """)


@pytest.fixture
def brepo(tmp_path, owed):
    repo = make_repo(tmp_path / "b", BATCH_PLAN)
    owed.cwd = repo
    assert owed("init", "plan.yaml").returncode == 0
    accepted(owed, repo, "x", {"x.txt": "x\n"})
    accepted(owed, repo, "y", {"y.txt": "y\n"})
    git(repo, "switch", "-q", "--detach")
    return repo


@pytest.mark.parametrize("stage", ["committed", "prepared"])
def test_a_killed_batch_merge_is_completed_or_rolled_back(owed, brepo, tmp_path, stage):
    prior = git(brepo, "rev-parse", "main")
    flag = tmp_path / "kill-once"
    flag.write_text("")
    _hook(brepo, "reference-transaction", KILL_HOOK)
    r = owed("merge", "x,y", env={"OWED_TEST_KILL_FLAG": str(flag), "OWED_TEST_KILL_STAGE": stage})
    assert r.returncode == -9, r.stdout + r.stderr
    assert not _merges(brepo)
    assert owed("status").returncode == 0
    assert not (brepo / ".git" / "owed" / "merge-intent.json").exists()
    if stage == "committed":  # the ref moved: both member entries are appended
        assert [m["node"] for m in _merges(brepo)] == ["x", "y"]
        assert {m["commit"] for m in _merges(brepo)} == {git(brepo, "rev-parse", "main")}
    else:  # the ref never moved: rolled back, and the batch can be retried
        assert git(brepo, "rev-parse", "main") == prior and not _merges(brepo)
        assert owed("merge", "x,y").returncode == 0 and len(_merges(brepo)) == 2
    assert owed("verify").returncode == 0


def test_a_torn_batch_tail_is_completed_from_the_intent(owed, brepo):
    """Only the first member's line reached the disk (a torn append, repaired): the intent appends the rest."""
    assert owed("merge", "x,y").returncode == 0
    path = brepo / ".git" / "owed" / "ledger.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    draft_y = json.loads(lines[-1])
    assert draft_y["node"] == "y" and draft_y["members"] == ["x", "y"]
    drafts = [{k: v for k, v in json.loads(x).items() if k not in ("seq", "ts", "prev", "hash")} for x in lines[-2:]]
    path.write_bytes(b"".join(lines[:-1]))
    from owed.ledger import head

    last = json.loads(lines[-2])
    head.write(brepo / ".git" / "owed", last["seq"], last["hash"])  # the head as the torn append left it
    import shutil

    shutil.rmtree(brepo / ".git" / "owed" / "snapshot", ignore_errors=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    from owed.ledger.lock import HOST

    (brepo / ".git" / "owed" / "merge-intent.json").write_text(json.dumps(
        {"trunk": "main", "draft": drafts[0], "drafts": drafts, "pid": int(dead.stdout), "host": HOST}))
    assert [m["node"] for m in _merges(brepo)] == ["x"]
    r = owed("status")
    assert r.returncode == 0, r.stderr
    assert [m["node"] for m in _merges(brepo)] == ["x", "y"]
    assert owed("verify").returncode == 0
