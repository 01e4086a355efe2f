"""How many git children a command starts (issue 15): in a plain repository the discovery, the trunk ref and
the trunk's worktree are read from git's files (owed/gitops/ondisk.py), so `owed why` and `owed status`
start no git child at all, and a write command's first git call is its own work; where the layout is not
plain, one `git rev-parse` answers toplevel, git dir and common dir. A `git` wrapper first on PATH logs
every call, then runs the real git."""

from __future__ import annotations

import os
import shutil

from tests.conftest import Cli, make_repo


def logging_git(tmp_path):
    bindir, log = tmp_path / "bin", tmp_path / "git.log"
    bindir.mkdir()
    w = bindir / "git"
    # The door names the directory as `git -C <cwd> ...` (posix_spawn cannot chdir): the log keeps the call itself.
    w.write_text(f'#!/bin/sh\n( [ "$1" = -C ] && shift 2; echo "$*" ) >> "{log}"\nexec {shutil.which("git")} "$@"\n')
    w.chmod(0o755)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}, log


def test_git_calls_per_command(tmp_path):
    repo = make_repo(tmp_path / "repo")
    cli = Cli(repo)
    assert cli("init", "plan.yaml", "--no-measure").returncode == 0
    env, log = logging_git(tmp_path)

    def run(*args):
        log.write_text("")
        r = cli(*args, env=env)
        assert r.returncode == 0, r.stderr
        return log.read_text().splitlines()

    discover = "rev-parse --path-format=absolute --show-toplevel --git-dir --git-common-dir"
    got = run("dispatch", "greeting")
    assert discover not in got and got[0].startswith("check-ref-format"), got
    assert run("why", "greeting") == []
    assert run("status") == []
    assert run("status", "--help") == [] and run("--version") == []
    repo_git = repo / ".git"
    (repo_git / "config").write_text((repo_git / "config").read_text() + "[include]\n\tpath = none\n")
    assert run("why", "greeting") == [discover]  # a layout ondisk.py does not answer: git's own discovery
    got = run("status")
    assert got.count(discover) == 1 and len(got) <= 3, got
