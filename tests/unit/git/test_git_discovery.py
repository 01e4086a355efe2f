"""Repo.discover, main worktree, common dir and ledger dir, on real repositories."""

import os

import pytest

from owed.errors import UsageError
from owed.git import Repo


def test_discover_from_root_subdir_and_file(repo):
    repo.commit({"src/a.py": "x\n"})
    for start in (repo.path, repo.path / "src", repo.path / "src" / "a.py"):
        r = Repo.discover(start)
        assert r.toplevel == repo.path
        assert r.git_dir == repo.path / ".git"
        assert r.common_dir == repo.path / ".git"
        assert r.main_worktree == repo.path


def test_linked_worktree_shares_common_dir_and_main_root(repo, tmp_path):
    wt = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    r = Repo.discover(wt)
    assert r.toplevel == wt.resolve()
    assert r.common_dir == repo.path / ".git"
    assert r.git_dir != r.common_dir
    assert r.git_dir.parent == repo.path / ".git" / "worktrees"
    assert r.main_worktree == repo.path
    assert r.ledger_dir() == Repo.discover(repo.path).ledger_dir() == repo.path / ".git" / "owed"


def test_not_a_repository_is_a_usage_error(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(UsageError, match="not inside a git worktree"):
        Repo.discover(plain)
    with pytest.raises(UsageError, match="does not exist"):
        Repo.discover(tmp_path / "missing")


def test_owed_dir_overrides_ledger_dir_relative_to_cwd(repo, tmp_path, monkeypatch):
    r = Repo.discover(repo.path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OWED_DIR", "ledger")
    assert r.ledger_dir() == tmp_path / "ledger"
    assert r.ledger_dir(env={}) == repo.path / ".git" / "owed"
    assert r.ledger_dir(env={"OWED_DIR": str(tmp_path / "x")}) == tmp_path / "x"


def test_main_worktree_refused_when_common_dir_parent_is_not_it(make_repo, tmp_path):
    # --separate-git-dir: the common dir's parent is not the main worktree, so it cannot be derived.
    work, gitdir = tmp_path / "work", tmp_path / "store" / "repo.git"
    work.mkdir()
    os.makedirs(gitdir.parent)
    import subprocess

    subprocess.run(["git", "init", "-q", "-b", "main", f"--separate-git-dir={gitdir}", str(work)], check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "i"], cwd=work, check=True)
    assert Repo.discover(work).main_worktree == work.resolve()  # in the main worktree: its toplevel
    linked = tmp_path / "linked"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(linked)], cwd=work, check=True)
    with pytest.raises(UsageError, match="run owed from the main worktree"):
        _ = Repo.discover(linked).main_worktree


def test_inherited_git_dir_does_not_redirect_calls(repo, make_repo, monkeypatch):
    other = make_repo("other")
    other.commit({"o": "o"})
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))  # as inside a git hook
    r = Repo.discover(repo.path)
    assert r.toplevel == repo.path
    assert r.rev_parse("HEAD") == repo.git("--git-dir", str(repo.path / ".git"), "rev-parse", "HEAD")
