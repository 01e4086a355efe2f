"""ReadRepo: the Repo a command starts with — discovery, refs and worktrees — completed on first use.

`Context.load` discovers the repository as a ReadRepo (base.RepoBase + refs.RefsMixin +
worktrees.WorktreesMixin): what status, why and the start of every command ask git (gitops/ondisk.py
answers most from git's files). The other concerns (merge-tree, trees and diffs, measurement trees,
leased trees, info/exclude) are five modules and ~2.5 ms of a command's start (issue 15) that a read at
the snapshot head never calls. The first attribute a ReadRepo lacks turns the object into the full
`gitops.repo.Repo` (a subclass: `self.__class__ = Repo`, same state, nothing re-discovered) and answers
from it, so a caller never sees the difference: `isinstance(x, ReadRepo)` holds for both, and
tests/unit/git/test_read_repo.py checks that every Repo method is reachable from a ReadRepo.
"""

from __future__ import annotations

from owed.gitops.refs import RefsMixin
from owed.gitops.worktrees import WorktreesMixin


class ReadRepo(RefsMixin, WorktreesMixin):
    """A repository handle whose rarely used methods are loaded when first asked for."""

    def __getattr__(self, name: str):
        # Called only for names the class lacks; dunders (copy, pickle probes) stay absent.
        if name.startswith("__"):
            raise AttributeError(name)
        from owed.gitops.repo import Repo

        if not isinstance(self, Repo):
            self.__class__ = Repo
        # Another thread may have made this object a Repo between the failed lookup and this call (the parallel
        # measurement jobs of one attest): look again on Repo, without coming back here for a name Repo lacks.
        return object.__getattribute__(self, name)
