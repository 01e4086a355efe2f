"""merge-tree (clean vs conflict) and commit-tree, including users and CI without a git identity."""

import pytest

from owed.git import GitError, MergeTreeResult, Repo


@pytest.fixture
def forked(repo):
    base = repo.commit({"shared": "1\n2\n3\n", "conf": "base\n"}, "base")
    repo.git("checkout", "-q", "-b", "theirs")
    theirs = repo.commit({"theirs.txt": "t\n", "conf": "theirs\n"}, "theirs")
    repo.git("checkout", "-q", "main")
    ours = repo.commit({"ours.txt": "o\n"}, "ours")
    return Repo.discover(repo.path), base, ours, theirs


def test_merge_tree_clean(forked, repo):
    r, base, ours, _ = forked
    repo.git("checkout", "-q", "-b", "clean", base)
    side = repo.commit({"side.txt": "s\n"}, "side")
    res = r.merge_tree(ours, side)
    assert res.clean and res.conflicts == []
    assert {e.path for e in r.ls_tree(res.tree)} == {"README", "shared", "conf", "ours.txt", "side.txt"}


def test_merge_tree_conflict(forked, repo):
    r, base, ours, theirs = forked
    conflicting = repo.commit({"conf": "ours\n"}, "conflict on main")
    res = r.merge_tree(conflicting, theirs)
    assert res == MergeTreeResult(None, ["conf"])
    assert not res.clean
    assert repo.git("rev-parse", "main") == conflicting  # nothing moved


def test_merge_tree_error_is_raised(forked):
    r, *_ = forked
    with pytest.raises(GitError, match="^git merge-tree failed"):
        r.merge_tree("main", "0" * 40)


def test_commit_tree_parents_message_and_no_ref_moves(forked, repo):
    r, base, ours, side = forked
    repo.git("checkout", "-q", "-b", "clean", base)
    side = repo.commit({"side.txt": "s\n"}, "side")
    tree = r.merge_tree(ours, side).tree
    c = r.commit_tree(tree, [ours, side], "owed: merge side\n\nbody line\n")
    assert repo.git("rev-parse", f"{c}^{{tree}}") == tree
    assert repo.git("log", "-1", "--format=%P", c) == f"{ours} {side}"
    assert repo.git("log", "-1", "--format=%B", c) == "owed: merge side\n\nbody line"
    assert repo.git("log", "-1", "--format=%an <%ae>|%cn <%ce>", c) == (
        "Test Author <author@example.test>|Test Committer <committer@example.test>"
    )
    assert repo.git("rev-parse", "clean") == side


def _no_identity(monkeypatch, home):
    for k in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)  # HOME's (absent) .gitconfig is all there is


def test_commit_tree_without_any_identity_uses_owed(repo, monkeypatch, tmp_path):
    empty_home = tmp_path / "empty-home"
    empty_home.mkdir()
    _no_identity(monkeypatch, empty_home)
    r = Repo.discover(repo.path)
    head = repo.git("rev-parse", "HEAD")
    with pytest.raises(AssertionError):  # plain git really has no identity here
        repo.git("commit-tree", "-m", "x", f"{head}^{{tree}}")
    c = r.commit_tree(r.tree_of(head), [head], "by owed")
    assert repo.git("log", "-1", "--format=%an <%ae>|%cn <%ce>", c) == "owed <owed@localhost>|owed <owed@localhost>"
    assert r.update_ref_cas("refs/heads/main", c, head) is True  # reflog needs no strict identity


def test_commit_tree_keeps_a_configured_identity_and_caller_env(repo, monkeypatch, tmp_path):
    empty_home = tmp_path / "empty-home"
    empty_home.mkdir()
    _no_identity(monkeypatch, empty_home)
    repo.git("config", "user.name", "Configured")
    repo.git("config", "user.email", "me@example.test")
    r = Repo.discover(repo.path)
    head = repo.git("rev-parse", "HEAD")
    env = {"GIT_COMMITTER_DATE": "@1700000000 +0000", "GIT_AUTHOR_NAME": "Caller"}
    c = r.commit_tree(r.tree_of(head), [head], "m", env=env)
    assert repo.git("log", "-1", "--format=%an <%ae>|%cn <%ce>|%ct", c) == (
        "Caller <me@example.test>|Configured <me@example.test>|1700000000"
    )


def test_identity_env_fills_only_missing_parts(repo, monkeypatch, tmp_path):
    _no_identity(monkeypatch, tmp_path)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Env Author")
    repo.git("config", "committer.email", "ci@example.test")
    env = Repo.discover(repo.path).identity_env()
    assert env == {
        "GIT_AUTHOR_EMAIL": "owed@localhost",
        "GIT_COMMITTER_NAME": "owed",
    }
