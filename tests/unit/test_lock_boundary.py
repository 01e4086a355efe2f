"""The lock boundary (seed 0.22, runner/boundary.py): while this process holds the ledger lock, command/job
runners refuse to spawn and destructive/worktree git operations refuse; the trunk advance (ff-only or ref
CAS of a measured commit) is the one named exemption. The guard follows the holder's thread/task only, ends
with the lock, ignores owed's other locks and another process's ledger lock. Real repositories, real git,
real child processes; the refusal is an internal error (exit 3)."""

from __future__ import annotations

import contextvars
import subprocess
import sys
import threading

import pytest

from owed.ledger.lock import DirLock
from owed.ops.context import Context
from runner import RunSpec, run_sync
from runner.boundary import LockBoundary, exempt, locked
from tests.conftest import Cli, git, make_repo


@pytest.fixture
def ledger_repo(tmp_path):
    path = make_repo(tmp_path / "repo")
    r = Cli(path)("init", "plan.yaml", "--no-measure")
    assert r.returncode == 0, r.stderr
    return path


def _lock(ctx: Context) -> DirLock:
    return DirLock(ctx.ledger.root / "lock")  # the ledger lock, as ledger/store.py takes it


def _true(cwd) -> RunSpec:
    return RunSpec(command=["true"], cwd=str(cwd), timeout_s=10, grace_s=0.5)


def test_runner_spawn_refuses_under_the_ledger_lock_and_runs_after_it(ledger_repo):
    ctx = Context.load(str(ledger_repo))
    with _lock(ctx):
        assert locked()
        with pytest.raises(LockBoundary, match="refusing to spawn true"):
            run_sync(_true(ledger_repo))
        with exempt("trunk advance"), pytest.raises(LockBoundary):  # the git exemption allows no spawn
            run_sync(_true(ledger_repo))
    assert not locked()
    assert run_sync(_true(ledger_repo)).exit_code == 0


def test_a_measurement_inside_the_locked_step_refuses_and_records_nothing(ledger_repo):
    from owed.measure.shell import run_in_tree

    ctx = Context.load(str(ledger_repo))
    before = ctx.state.seq

    def make(state):
        run_in_tree(ctx.plan, "true", ledger_repo, 10)  # a check run from inside the append: an owed bug
        raise AssertionError("the measurement ran under the ledger lock")

    with pytest.raises(LockBoundary, match="spawn"):
        ctx.ledger.append(make)
    ctx = Context.load(str(ledger_repo))
    assert ctx.state.seq == before
    assert not locked()


def test_destructive_git_refuses_under_the_lock_reads_pass(ledger_repo, tmp_path):
    ctx = Context.load(str(ledger_repo))
    repo = ctx.repo
    head = repo.rev_parse("HEAD")
    with _lock(ctx):
        assert repo.rev_parse("HEAD") == head  # reads are not guarded
        assert repo.worktree_list()  # `worktree list` reads
        with pytest.raises(LockBoundary, match="git worktree add"):
            repo.add_worktree(tmp_path / "wt", "side", head)
        with pytest.raises(LockBoundary, match="git update-ref"):
            repo.update_ref_cas("refs/heads/other", head, None)
        with pytest.raises(LockBoundary, match="git update-ref"):
            repo.delete_ref_cas("refs/heads/main", head)
    assert not (tmp_path / "wt").exists()
    assert git(ledger_repo, "branch", "--list", "other") == ""
    repo.add_worktree(tmp_path / "wt", "side", head)  # outside the lock: allowed
    with _lock(ctx), pytest.raises(LockBoundary, match="git worktree remove"):
        repo.remove_worktree(tmp_path / "wt")
    with _lock(ctx), pytest.raises(LockBoundary, match="git branch -D"):
        repo._git(["branch", "-D", "side"])
    assert (tmp_path / "wt").exists()


def test_the_trunk_advance_is_the_named_exemption(ledger_repo, tmp_path):
    ctx = Context.load(str(ledger_repo))
    repo = ctx.repo
    pre = repo.rev_parse("HEAD")
    (ledger_repo / "new.txt").write_text("x\n")
    git(ledger_repo, "switch", "-q", "-c", "feature")
    git(ledger_repo, "add", "new.txt")
    git(ledger_repo, "commit", "-q", "-m", "feature")
    m = repo.rev_parse("HEAD")
    git(ledger_repo, "switch", "-q", "main")
    hook = ledger_repo / ".git" / "hooks" / "post-merge"
    hook.write_text(f"#!/bin/sh\necho ran > {tmp_path / 'hook-ran'}\n")
    hook.chmod(0o755)
    with _lock(ctx):
        with pytest.raises(LockBoundary, match="git merge"):
            repo.ff_worktree(ledger_repo, m)  # not exempt: refused
        with exempt("trunk advance"):
            repo.ff_worktree(ledger_repo, m)  # the ff-only advance of the checked-out trunk
            assert repo.update_ref_cas("refs/heads/main", pre, m)  # and the ref CAS (back, for the test)
            assert repo.update_ref_cas("refs/heads/main", m, pre)
            with pytest.raises(LockBoundary, match="git worktree add"):  # nothing else is exempt
                repo.add_worktree(tmp_path / "wt", "side", m)
            with pytest.raises(LockBoundary, match="git update-ref"):
                repo.delete_ref_cas("refs/heads/feature", m)
    assert repo.rev_parse("refs/heads/main") == m
    assert (tmp_path / "hook-ran").read_text() == "ran\n"  # git's merge hook ran inside the advance, under the lock


def test_a_thread_not_holding_the_lock_is_not_refused(ledger_repo, tmp_path):
    ctx = Context.load(str(ledger_repo))
    repo = ctx.repo
    head = repo.rev_parse("HEAD")
    seen: dict = {}

    def other():
        try:
            seen["locked"] = locked()
            seen["exit"] = run_sync(_true(ledger_repo)).exit_code
            repo.add_worktree(tmp_path / "wt", "side", head)
        except BaseException as e:  # noqa: BLE001 - reported to the test thread
            seen["error"] = e

    with _lock(ctx):
        t = threading.Thread(target=other)
        t.start()
        t.join(30)
    assert seen == {"locked": False, "exit": 0}
    assert (tmp_path / "wt").is_dir()


def test_a_context_copied_under_the_lock_is_free_once_it_is_released(ledger_repo):
    ctx = Context.load(str(ledger_repo))
    lock = _lock(ctx)
    lock.acquire()
    copied = contextvars.copy_context()  # what a task started in the locked step inherits
    assert copied.run(locked)
    lock.release()
    assert copied.run(lambda: run_sync(_true(ledger_repo)).exit_code) == 0


def test_other_locks_and_another_process_ledger_lock_are_outside_the_guard(ledger_repo):
    ctx = Context.load(str(ledger_repo))
    with DirLock(ctx.ledger.root / "locks" / "merge", what="merge"):
        assert not locked()
        assert run_sync(_true(ledger_repo)).exit_code == 0
    code = ("import sys, time; from owed.ledger.lock import DirLock\n"
            f"l = DirLock({str(ctx.ledger.root / 'lock')!r}); l.acquire(); print('held', flush=True)\n"
            "sys.stdin.read(); l.release()")
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert not locked()
        assert run_sync(_true(ledger_repo)).exit_code == 0
    finally:
        holder.stdin.close()
        holder.wait(10)


def test_a_refusal_is_an_internal_error_exit_3(capsys):
    from owed.cli.run import _internal
    from owed.ledger import store

    store.RECORDED.clear()  # seqs an earlier in-process command of this worker recorded are not this call's
    code = _internal(LockBoundary("lock boundary: refusing git worktree add while this process holds the "
                                  "ledger lock"), False)
    assert code == 3
    assert "internal error: LockBoundary: lock boundary: refusing git worktree add" in capsys.readouterr().err


def test_an_agent_start_refuses_under_the_ledger_lock(ledger_repo, tmp_path):
    from driver.agents import Pool

    ctx = Context.load(str(ledger_repo))
    pool = Pool(tmp_path / "runs", grace_s=1.0)
    rid = "owed:0123456789ab:greeting:1:writer"
    try:
        with _lock(ctx), pytest.raises(LockBoundary, match=f"spawn agent {rid}"):
            pool.start(rid, 1, command="true", cwd=str(tmp_path), env={}, task_text="t\n", timeout_s=30, kind="run")
        assert not list((tmp_path / "runs").rglob("spawned.json"))  # no shim started
    finally:
        pool.stop_all(now=True)
