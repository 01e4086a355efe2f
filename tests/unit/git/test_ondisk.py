"""owed/gitops/ondisk.py against git's own answers: every shortcut agrees with git, or asks git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from owed.gitops import ondisk


def git_discover(repo, start: Path) -> tuple[str, str, str]:
    out = repo.git("rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir",
                   cwd=start)
    top, gd, cd = out.splitlines()
    return os.path.realpath(top), os.path.realpath(gd), os.path.realpath(cd)


def git_branch_oid(repo, branch: str) -> str | None:
    out = repo.git("for-each-ref", "--format=%(objectname) %(refname)", "--", f"refs/heads/{branch}")
    hits = [line.split(" ", 1)[0] for line in out.splitlines() if line.split(" ", 1)[1] == f"refs/heads/{branch}"]
    return hits[0] if hits else None


def git_branch_worktree(repo, branch: str) -> str | None:
    """What `git worktree list --porcelain` says, parsed by owed's own git-backed reader."""
    fields = {}
    for line in repo.git("worktree", "list", "--porcelain").splitlines() + [""]:
        if line:
            k, _, v = line.partition(" ")
            fields[k] = v
            continue
        if fields.get("branch") == f"refs/heads/{branch}":
            return os.path.realpath(fields["worktree"])
        fields = {}
    return None


def ondisk_worktree(repo, branch: str):
    found = ondisk.branch_worktree(str(repo.path / ".git"), str(repo.path), branch)
    return found if found in (None, ondisk.ASK_GIT) else os.path.realpath(found)


def test_discovery_of_the_main_worktree_from_its_root_and_a_subdirectory(repo):
    repo.commit({"src/deep/a.py": "x\n"})
    for start in (repo.path, repo.path / "src", repo.path / "src" / "deep"):
        assert ondisk.discover(str(start)) == git_discover(repo, start)


def test_discovery_of_a_linked_worktree_and_its_main_worktree(repo, tmp_path):
    wt = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    (wt / "sub").mkdir()
    for start in (wt, wt / "sub"):
        found = ondisk.discover(str(start))
        assert found == git_discover(repo, start)
        assert found[1] != found[2]  # its own git dir, the shared common dir
    assert ondisk.discover(str(repo.path)) == git_discover(repo, repo.path)


def test_discovery_through_a_symlinked_start_gives_git_physical_paths(repo, tmp_path):
    link = tmp_path / "via-link"
    link.symlink_to(repo.path)
    assert ondisk.discover(str(link)) == git_discover(repo, link)


def test_discovery_asks_git_for_layouts_it_does_not_answer(repo, tmp_path):
    inside = repo.path / ".git" / "refs"
    assert ondisk.discover(str(inside)) is ondisk.ASK_GIT  # inside the git dir
    repo.git("config", "core.worktree", str(repo.path))
    assert ondisk.discover(str(repo.path)) is ondisk.ASK_GIT  # the config moves the worktree
    repo.git("config", "--unset", "core.worktree")
    assert ondisk.discover(str(repo.path)) == git_discover(repo, repo.path)
    bare = tmp_path / "bare.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
    assert ondisk.discover(str(bare)) is ondisk.ASK_GIT
    sep = tmp_path / "sep"
    repo.git("init", "-q", f"--separate-git-dir={tmp_path / 'sep.git'}", str(sep))
    assert ondisk.discover(str(sep)) is ondisk.ASK_GIT  # a .git file without commondir
    plain = tmp_path / "plain"
    plain.mkdir()
    assert ondisk.discover(str(plain)) is ondisk.ASK_GIT  # not a repository: git writes the refusal


def test_a_loose_ref_and_a_packed_ref_read_as_git_reads_them(repo):
    first = repo.git("rev-parse", "HEAD")
    repo.git("branch", "topic")
    second = repo.commit({"b": "b\n"})
    assert ondisk.branch_oid(str(repo.path / ".git"), "main") == git_branch_oid(repo, "main") == second
    repo.git("pack-refs", "--all")
    assert not (repo.path / ".git" / "refs" / "heads" / "main").exists()
    assert ondisk.branch_oid(str(repo.path / ".git"), "main") == git_branch_oid(repo, "main") == second
    assert ondisk.branch_oid(str(repo.path / ".git"), "topic") == git_branch_oid(repo, "topic") == first
    repo.git("update-ref", "refs/heads/main", first)  # a loose ref again, over the stale packed one
    assert ondisk.branch_oid(str(repo.path / ".git"), "main") == git_branch_oid(repo, "main") == first
    repo.git("tag", "-a", "-m", "t", "v1")  # annotated tags add peeled lines to packed-refs
    repo.git("branch", "nested/name")
    repo.git("pack-refs", "--all")
    assert ondisk.branch_oid(str(repo.path / ".git"), "nested/name") == git_branch_oid(repo, "nested/name")
    for missing in ("nope", "nested", "v1"):
        assert ondisk.branch_oid(str(repo.path / ".git"), missing) is git_branch_oid(repo, missing) is None


def test_a_symbolic_ref_or_an_odd_name_is_left_to_git(repo):
    repo.git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
    assert ondisk.branch_oid(str(repo.path / ".git"), "alias") is ondisk.ASK_GIT
    for odd in ("-x", "a..b", "x.lock", "sp ace", "a/", ""):
        assert ondisk.branch_oid(str(repo.path / ".git"), odd) is ondisk.ASK_GIT


def test_the_worktree_of_a_branch_as_git_worktree_list_tells(repo, tmp_path):
    assert ondisk_worktree(repo, "main") == git_branch_worktree(repo, "main") == str(repo.path)  # symbolic HEAD
    assert ondisk_worktree(repo, "side") is git_branch_worktree(repo, "side") is None
    wt = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    repo.git("worktree", "add", "-q", "--detach", str(tmp_path / "detached"))
    assert ondisk_worktree(repo, "side") == git_branch_worktree(repo, "side") == os.path.realpath(wt)
    repo.git("checkout", "-q", "--detach")  # the main worktree detached: main is checked out nowhere
    assert ondisk_worktree(repo, "main") is git_branch_worktree(repo, "main") is None
    repo.git("checkout", "-q", "main", cwd=wt)  # now the linked worktree has it
    assert ondisk_worktree(repo, "main") == git_branch_worktree(repo, "main") == os.path.realpath(wt)


def test_repo_methods_give_the_same_answers_with_and_without_the_shortcut(repo, tmp_path, monkeypatch):
    from owed.git import Repo

    wt = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    fast = Repo.discover(wt)
    answers = (fast.toplevel, fast.git_dir, fast.common_dir, fast.main_worktree, fast.branch_oid("side"),
               fast.branch_oid("main"), fast.branch_oid("gone"), fast.worktree_with_branch("side"),
               fast.worktree_with_branch("main"), fast.worktree_with_branch("gone"))
    for name in ("discover", "branch_oid", "branch_worktree"):
        monkeypatch.setattr(ondisk, name, lambda *a, **k: ondisk.ASK_GIT)
    slow = Repo.discover(wt)
    assert (slow.toplevel, slow.git_dir, slow.common_dir, slow.main_worktree, slow.branch_oid("side"),
            slow.branch_oid("main"), slow.branch_oid("gone"), slow.worktree_with_branch("side"),
            slow.worktree_with_branch("main"), slow.worktree_with_branch("gone")) == answers


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own a directory by another user")
def test_a_repository_owned_by_another_user_is_left_to_git(repo):
    os.chown(repo.path, 12345, 12345)
    try:
        assert ondisk.discover(str(repo.path)) is ondisk.ASK_GIT  # git's safe.directory rules decide
    finally:
        os.chown(repo.path, 0, 0)


def test_a_branch_checked_out_in_two_linked_worktrees_is_left_to_git(repo, tmp_path):
    repo.git("branch", "side")
    repo.git("worktree", "add", "-q", str(tmp_path / "one"), "side")
    repo.git("worktree", "add", "-q", "--force", str(tmp_path / "two"), "side")
    assert ondisk_worktree(repo, "side") is ondisk.ASK_GIT
    assert git_branch_worktree(repo, "side") in (os.path.realpath(tmp_path / "one"), os.path.realpath(tmp_path / "two"))
