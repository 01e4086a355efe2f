"""How many git children a command starts (issue 15): one repository discovery per command (one
`git rev-parse` answering toplevel, git dir and common dir), and `owed why` needs no other git call.
A `git` wrapper first on PATH logs every call, then runs the real git."""

from __future__ import annotations

import os
import shutil

from tests.conftest import Cli, make_repo


def logging_git(tmp_path):
    bindir, log = tmp_path / "bin", tmp_path / "git.log"
    bindir.mkdir()
    w = bindir / "git"
    w.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec {shutil.which("git")} "$@"\n')
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
    assert got.count(discover) == 1, got
    assert run("why", "greeting") == [discover]
    got = run("status")
    assert got.count(discover) == 1 and len(got) <= 3, got
    assert run("status", "--help") == [] and run("--version") == []
