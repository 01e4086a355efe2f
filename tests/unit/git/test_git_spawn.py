"""The git door's own spawn (os.posix_spawn, not subprocess; issue 15): the guarantees subprocess gave it.
A child that outlives its call (an interrupt in the sink) is killed with its whole group and reaped; git runs
in its own session with python's ignored signals back at their default; the driver's owned-children registry
holds the pid exactly while the door drains it; a missing cwd or git still "could not start"."""

from __future__ import annotations

import os
import time

import pytest

from owed.gitops import proc


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def _gone(pid: int) -> bool:
    for _ in range(150):
        if _state(pid) in (None, "Z"):
            return True
        time.sleep(0.02)
    return False


def test_an_interrupt_in_the_sink_kills_the_group_and_reaps_git(repo, tmp_path):
    pidfile = tmp_path / "pids"
    alias = f"alias.flood=!echo $$ $PPID > {pidfile}; exec yes"

    def sink(chunk: bytes) -> None:
        raise KeyboardInterrupt

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        proc.stream(["-c", alias, "flood"], repo.path, sink)
    assert time.monotonic() - start < 5
    shell, git = (int(x) for x in pidfile.read_text().split())
    assert _gone(shell), f"git's child {shell} outlived the interrupted call"
    with pytest.raises(ChildProcessError):  # git itself was reaped by the door, not left a zombie
        os.waitpid(git, os.WNOHANG)


def test_git_runs_in_its_own_session_with_default_signals(repo):
    # SigIgn of the alias's shell: python ignores SIGPIPE and SIGXFSZ; a spawn that kept them ignored would
    # make git see EPIPE instead of dying when its reader goes away.
    alias = "alias.probe=!ps -o sid= -o pgid= -p $PPID; grep SigIgn /proc/$$/status"
    out = proc.run(["-c", alias, "probe"], repo.path).out.decode().split()
    sid, pgid, _, ignored = out
    assert int(sid) == int(pgid) != os.getsid(0)
    mask = int(ignored, 16)
    assert not mask & (1 << (13 - 1)), "SIGPIPE is still ignored in git"
    assert not mask & (1 << (25 - 1)), "SIGXFSZ is still ignored in git"


def test_owned_holds_the_pid_while_the_door_drains_it(repo):
    from runner import owned  # loaded: the door registers its child as the driver's does

    during: list[set[int]] = []
    proc.stream(["log", "-1", "--format=%H"], repo.path, lambda chunk: during.append(set(owned.pids)))
    assert during and len(during[0]) >= 1
    assert not (during[0] & owned.pids), "the drained git stayed registered after it was reaped"


def test_a_missing_cwd_or_git_could_not_start(repo, tmp_path):
    with pytest.raises(proc.GitError, match=r"^git status could not start: \[Errno 2\] .*nowhere"):
        proc.run(["status"], tmp_path / "nowhere")
    with pytest.raises(proc.GitError, match=r"^git status could not start: \[Errno 2\] .*'git'"):
        proc.run(["status"], repo.path, env={"PATH": str(tmp_path)})


def test_relative_arguments_resolve_against_cwd(repo, tmp_path):
    # posix_spawn has no cwd: git changes directory itself (-C), so paths in args are relative to `cwd`.
    (repo.path / "sub").mkdir()
    (repo.path / "sub" / "f.txt").write_text("x\n")
    out = proc.run(["hash-object", "f.txt"], repo.path / "sub").out.decode().strip()
    assert out == repo.git("hash-object", "sub/f.txt")
