"""Refs: resolution, ancestry, counts, compare-and-swap updates and deletes, branch-name checks."""

import pytest

from owed.git import GitError, Repo


@pytest.fixture
def chain(repo):
    """main: c0 - c1 - c2, side branch at c1 (and a tag on c2)."""
    c0 = repo.git("rev-parse", "HEAD")
    c1 = repo.commit({"a": "1"}, "c1")
    repo.git("branch", "side")
    c2 = repo.commit({"a": "2"}, "c2")
    repo.git("tag", "-a", "-m", "t", "v1")
    return Repo.discover(repo.path), c0, c1, c2


def test_rev_parse_full_oid_peeled_or_none(chain, repo):
    r, c0, c1, c2 = chain
    assert r.rev_parse("main") == c2
    assert r.rev_parse(c2[:8]) == c2
    assert r.rev_parse("main~1") == c1
    assert r.rev_parse("v1") == c2  # annotated tag peeled to its commit
    assert r.rev_parse("v1", peel=None) == repo.git("rev-parse", "v1") != c2
    assert r.rev_parse("main", peel="tree") == repo.git("rev-parse", "main^{tree}")
    assert r.rev_parse("nope") is None
    assert r.rev_parse("--all") is None  # never an option


def test_ref_oid_and_branch_oid(chain):
    r, c0, c1, c2 = chain
    assert r.ref_oid("refs/heads/side") == c1
    assert r.branch_oid("main") == c2
    assert r.branch_oid("missing") is None
    with pytest.raises(ValueError):
        r.ref_oid("main")


def test_is_ancestor_count_commits_tree_of(chain, repo):
    r, c0, c1, c2 = chain
    assert r.is_ancestor(c0, c2) and not r.is_ancestor(c2, c0)
    assert r.is_ancestor(c1, c1)
    assert r.count_commits(c0, c2) == 2 and r.count_commits(c2, c0) == 0
    assert r.tree_of(c2) == repo.git("rev-parse", f"{c2}^{{tree}}")
    with pytest.raises(GitError):
        r.is_ancestor(c0, "0" * 40)


def test_update_ref_cas_moves_only_from_the_expected_value(chain, repo):
    r, c0, c1, c2 = chain
    assert r.update_ref_cas("refs/heads/side", c2, c1) is True
    assert repo.git("rev-parse", "side") == c2
    # someone else moved it: our swap from c1 must not overwrite their c0
    repo.git("update-ref", "refs/heads/side", c0)
    assert r.update_ref_cas("refs/heads/side", c2, c1) is False
    assert repo.git("rev-parse", "side") == c0


def test_update_ref_cas_create_only(chain, repo):
    r, c0, c1, c2 = chain
    assert r.update_ref_cas("refs/heads/new", c1, None, message="owed: test") is True
    assert repo.git("rev-parse", "new") == c1
    assert repo.git("reflog", "-1", "--format=%gs", "new") == "owed: test"
    assert r.update_ref_cas("refs/heads/new", c2, None) is False  # exists already
    assert r.update_ref_cas("refs/heads/other", c2, c1) is False  # expected c1, it does not exist
    assert r.branch_oid("other") is None


def test_update_ref_real_failure_raises(chain):
    r, c0, c1, c2 = chain
    with pytest.raises(GitError, match="^git update-ref failed"):
        r.update_ref_cas("refs/heads/side", "1" * 40, c1)  # no such object; ref unmoved


def test_delete_ref_cas(chain, repo):
    r, c0, c1, c2 = chain
    repo.git("branch", "gone", c1)
    assert r.delete_ref_cas("refs/heads/gone", c2) is False  # not at c2: kept
    assert r.branch_oid("gone") == c1
    assert r.delete_ref_cas("refs/heads/gone", c1) is True
    assert r.branch_oid("gone") is None
    assert r.delete_ref_cas("refs/heads/gone", c1) is False  # already gone


@pytest.mark.parametrize(
    "name, ok",
    [
        ("owed/a/1", True),
        ("feature-x", True),
        ("a b", False),
        ("a..b", False),
        ("-x", False),
        ("HEAD", False),
        ("@{-1}", False),
        ("x@{u}", False),
        ("trailing/", False),
        ("x.lock", False),
        ("", False),
    ],
)
def test_check_ref_format_branch(repo, name, ok):
    repo.git("checkout", "-q", "-b", "prev")
    repo.git("checkout", "-q", "main")  # @{-1} now names a real branch: still refused
    assert Repo.discover(repo.path).check_ref_format_branch(name) is ok
