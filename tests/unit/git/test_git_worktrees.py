"""Worktrees: add/remove/list, status and cleanliness, HEAD, the trunk fast-forward."""

import pytest

from owed.errors import Refused
from owed.git import Repo, Worktree


def test_add_worktree_new_branch_at_base_and_list(repo, tmp_path):
    base = repo.git("rev-parse", "HEAD")
    repo.commit({"later": "x"})
    r = Repo.discover(repo.path)
    wt = r.add_worktree(tmp_path / "slots" / "deep" / "n-1", "owed/n/1", base)
    assert wt == (tmp_path / "slots" / "deep" / "n-1").resolve()
    assert r.branch_oid("owed/n/1") == base
    assert r.head(wt) == base
    listed = r.worktree_list()
    assert listed[0] == Worktree(repo.path, repo.git("rev-parse", "HEAD"), "main")
    assert Worktree(wt, base, "owed/n/1") in listed
    assert r.worktree_with_branch("owed/n/1") == str(wt)  # a string: status reads it without pathlib
    assert r.worktree_with_branch("nope") is None
    assert Repo.discover(wt).common_dir == r.common_dir


def test_add_worktree_never_sets_an_upstream(repo, tmp_path):
    repo.git("config", "branch.autoSetupMerge", "always")  # would track even a local base branch
    Repo.discover(repo.path).add_worktree(tmp_path / "s", "slot", "main")
    assert "branch.slot.merge" not in repo.git("config", "--list", "--local")


def test_detached_worktree_and_remove_prunes(repo, tmp_path):
    r = Repo.discover(repo.path)
    head = repo.git("rev-parse", "HEAD")
    wt = r.add_detached_worktree(tmp_path / "d", head)
    assert Worktree(wt, head, None) in r.worktree_list()
    (wt / "scratch").write_text("untracked")
    r.remove_worktree(wt)  # force: untracked files do not stop it
    assert not wt.exists()
    assert [w.path for w in r.worktree_list()] == [repo.path]


def test_remove_worktree_without_force_refuses_dirty(repo, tmp_path):
    r = Repo.discover(repo.path)
    wt = r.add_detached_worktree(tmp_path / "d", "HEAD")
    (wt / "README").write_text("edited")
    with pytest.raises(Exception, match="git worktree failed"):
        r.remove_worktree(wt, force=False)
    assert wt.exists()


def test_status_records_and_cleanliness(repo):
    r = Repo.discover(repo.path)
    (repo.path / ".gitignore").write_text("ignored/\n")
    repo.commit({}, "ignore rule")
    assert r.is_clean(repo.path) and r.worktree_status(repo.path) == []
    (repo.path / "ignored").mkdir()
    (repo.path / "ignored" / "x").write_text("i")
    assert r.is_clean(repo.path)  # ignored files do not count
    (repo.path / "newdir").mkdir()
    (repo.path / "newdir" / "a").write_text("a")
    (repo.path / "new file").write_text("n")
    assert not r.is_clean(repo.path)
    assert sorted(r.untracked_paths(repo.path)) == ["new file", "newdir/"]
    assert sorted(r.untracked_paths(repo.path, "all")) == ["new file", "newdir/a"]
    (repo.path / "README").write_text("changed")
    repo.git("mv", ".gitignore", "renamed-ignore")
    records = r.worktree_status(repo.path)
    assert " M README" in records and "R  renamed-ignore" in records
    assert not any(rec.endswith(".gitignore") for rec in records)  # the rename origin is folded away


def test_status_is_per_worktree(repo, tmp_path):
    r = Repo.discover(repo.path)
    wt = r.add_detached_worktree(tmp_path / "w", "HEAD")
    (repo.path / "dirty").write_text("x")
    assert not r.is_clean(repo.path)
    assert r.is_clean(wt)


def test_ff_worktree_fast_forwards_a_clean_trunk_worktree(repo, tmp_path):
    r = Repo.discover(repo.path)
    repo.git("checkout", "-q", "--detach")
    wt = r.add_detached_worktree(tmp_path / "trunk", "HEAD")
    repo.git("checkout", "-q", "main", cwd=wt)
    repo.git("checkout", "-q", "-b", "feature")
    target = repo.commit({"f": "feature"})
    (wt / "untracked-elsewhere").write_text("fine")  # untracked and not in the way: allowed
    r.ff_worktree(wt, target)
    assert r.head(wt) == target and r.branch_oid("main") == target
    assert (wt / "f").read_text() == "feature"


def test_ff_worktree_refuses_dirty_tracked_files_and_moves_nothing(repo, tmp_path):
    r = Repo.discover(repo.path)
    repo.git("checkout", "-q", "--detach")
    wt = r.add_detached_worktree(tmp_path / "trunk", "HEAD")
    repo.git("checkout", "-q", "main", cwd=wt)
    before = r.branch_oid("main")
    target = repo.commit({"f": "feature"})
    (wt / "README").write_text("uncommitted\n")
    with pytest.raises(Refused) as e:
        r.ff_worktree(wt, target)
    assert e.value.message == (
        f"trunk worktree {wt} has uncommitted changes: commit them there, or detach it "
        f"(git -C {wt} switch --detach), then retry"
    )
    assert r.branch_oid("main") == before and (wt / "README").read_text() == "uncommitted\n"


def test_ff_worktree_refuses_a_non_fast_forward(repo, tmp_path):
    r = Repo.discover(repo.path)
    repo.git("checkout", "-q", "--detach")
    wt = r.add_detached_worktree(tmp_path / "trunk", "HEAD")
    repo.git("checkout", "-q", "main", cwd=wt)
    main_next = repo.commit({"m": "1"}, cwd=wt)
    repo.git("checkout", "-q", "-b", "other", "HEAD")
    other = repo.commit({"o": "1"})
    with pytest.raises(Refused, match="cannot fast-forward"):
        r.ff_worktree(wt, other)
    assert r.branch_oid("main") == main_next


def test_status_folds_worktree_side_rename_origins(repo):
    repo.commit({"old": "".join(f"{i}\n" for i in range(50))})
    (repo.path / "old").rename(repo.path / "new")
    repo.git("add", "-N", "new")  # intent-to-add: git reports a rename in the worktree column
    assert Repo.discover(repo.path).worktree_status(repo.path) == [" R new"]
