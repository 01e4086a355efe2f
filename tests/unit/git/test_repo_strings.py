"""Repo's string locations (toplevel_str, git_dir_str, common_dir_str, main_worktree_str, ledger_dir_str) are the
Path attributes' answers as strings, from the main worktree, a subdirectory and a linked worktree, with and
without OWED_DIR; and git's own answer agrees (issue 15: read paths use the strings and never import pathlib)."""

from __future__ import annotations

import os

from owed.git import Repo
from owed.ledger.store import Ledger


def check(repo_obj: Repo, env: dict) -> None:
    assert repo_obj.toplevel_str == str(repo_obj.toplevel)
    assert repo_obj.git_dir_str == str(repo_obj.git_dir)
    assert repo_obj.common_dir_str == str(repo_obj.common_dir)
    assert repo_obj.main_worktree_str == str(repo_obj.main_worktree)
    assert repo_obj.ledger_dir_str(env) == str(repo_obj.ledger_dir(env))


def test_string_locations_equal_the_paths_everywhere(repo, tmp_path):
    repo.commit({"src/a.py": "x\n"})
    wt = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    for start in (repo.path, repo.path / "src", wt):
        r = Repo.discover(start)
        for env in ({}, {"OWED_DIR": str(tmp_path / "elsewhere")}):
            check(r, env)
        top = repo.git("rev-parse", "--path-format=absolute", "--show-toplevel", cwd=start).strip()
        assert r.toplevel_str == os.path.realpath(top)
        assert r.main_worktree_str == os.path.realpath(repo.path)
        assert r.ledger_dir_str({}) == os.path.join(os.path.realpath(repo.path / ".git"), "owed")


def test_a_ledgers_string_dir_and_its_paths_agree(tmp_path):
    led = Ledger(tmp_path / "l" / ".")
    assert led.dir == str(tmp_path / "l")
    assert led.root == tmp_path / "l" and str(led.root) == led.dir
    assert str(led.file) == os.path.join(led.dir, "ledger.jsonl") == led._file
    assert str(led.snapshot_path) == led._snapshot
