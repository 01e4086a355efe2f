"""Repo: the one handle owed holds on a git repository, assembled from one mixin per concern.

Map (each part documents its own methods):
  base.RepoBase                 discovery, main worktree, ledger dir, the calls to git
  refs.RefsMixin                rev-parse, ancestry, counts, update-ref CAS, branch-name check
  trees.TreesMixin              ls-tree, reads digest, show, changed paths, patch sha, blob sizes
  merge.MergeMixin              merge-tree, commit-tree with a fallback identity
  worktrees.WorktreesMixin      add/remove/list worktrees, status, clean, head, trunk fast-forward
  materialize.MaterializeMixin  measurement trees: materialize with pins, overlay, discard
  exclude.ExcludeMixin          the common info/exclude: append and exact rollback
  leased.LeasedTreesMixin       reuse trees (exec.trees: reuse): leased stable worktrees, reset, touch, remove

read.ReadRepo (base + refs + worktrees) is the part a command starts with; Repo completes it (owed/gitops/read.py).
"""

from __future__ import annotations

from owed.gitops.exclude import ExcludeMixin
from owed.gitops.leased import LeasedTreesMixin
from owed.gitops.materialize import MaterializeMixin
from owed.gitops.merge import MergeMixin
from owed.gitops.read import ReadRepo
from owed.gitops.trees import TreesMixin


class Repo(ReadRepo, MergeMixin, MaterializeMixin, LeasedTreesMixin, TreesMixin, ExcludeMixin):
    """A repository seen from one of its worktrees: `Repo.discover(path)`."""
