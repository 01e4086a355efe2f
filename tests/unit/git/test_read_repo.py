"""owed/gitops/read.py: a ReadRepo answers every Repo method (it becomes the full Repo on the first one it lacks),
keeps its state through that, and a missing attribute is still an AttributeError."""

from __future__ import annotations

import inspect

import pytest

from owed.gitops.read import ReadRepo
from owed.gitops.repo import Repo


def public_methods(cls) -> set[str]:
    return {n for n, v in inspect.getmembers(cls) if not n.startswith("_") and callable(v)}


def test_every_repo_method_is_reachable_from_a_read_repo(repo):
    names = sorted(public_methods(Repo))
    assert {"merge_tree", "ls_tree", "materialize", "lease_tree", "append_info_exclude", "branch_oid"} <= set(names)
    for name in names:
        r = ReadRepo.discover(repo.path)
        assert type(r) is ReadRepo
        want, got = inspect.getattr_static(Repo, name), getattr(r, name)
        assert got.__func__ is (want.__func__ if isinstance(want, classmethod) else want), name


def test_the_upgrade_keeps_the_state_and_answers_as_repo(repo):
    repo.commit({"a.txt": "a\n"})
    head = repo.git("rev-parse", "HEAD").strip()
    r = ReadRepo.discover(repo.path)
    top, main = r.toplevel_str, r.main_worktree_str  # cached before the upgrade
    assert r.branch_oid("main") == head  # a read method: no upgrade
    assert type(r) is ReadRepo
    assert "a.txt" in [e.path for e in r.ls_tree(head)]
    assert type(r) is Repo and isinstance(r, ReadRepo)
    assert (r.toplevel_str, r.main_worktree_str) == (top, main)
    assert r.ls_tree(head) == Repo.discover(repo.path).ls_tree(head)
    with pytest.raises(AttributeError):
        r.no_such_method
    fresh = ReadRepo.discover(repo.path)
    assert not hasattr(fresh, "__deepcopy__") and type(fresh) is ReadRepo  # dunder probes do not upgrade
    with pytest.raises(AttributeError):
        fresh.no_such_method
    assert type(fresh) is Repo


def test_a_lookup_that_another_thread_upgraded_meanwhile_still_answers(repo):
    """Two parallel measurement jobs of one attest ask the same ReadRepo for `materialize`: both lookups fail on
    ReadRepo, the first `__getattr__` makes the object a Repo, and the second then finds a Repo in `__getattr__`
    (that used to raise "'Repo' object has no attribute 'materialize'" and the job recorded an environment error)."""
    r = ReadRepo.discover(repo.path)
    r.__class__ = Repo  # what the other thread's __getattr__ did between this lookup and this call
    assert ReadRepo.__getattr__(r, "materialize").__func__ is Repo.materialize
    with pytest.raises(AttributeError):
        ReadRepo.__getattr__(r, "no_such_method")

