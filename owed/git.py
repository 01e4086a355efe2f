"""EDGE: every git call of owed goes through here.

    from owed.git import Repo, GitError
    repo = Repo.discover(path)          # any path inside the main worktree or a linked worktree

Map (implementation in owed/gitops/, one module per concern):
  Repo                 discovery (.toplevel .git_dir .common_dir .main_worktree .ledger_dir())
                       refs (rev_parse ref_oid branch_oid is_ancestor count_commits first_parents tree_of
                             update_ref_cas delete_ref_cas check_ref_format_branch)
                       trees (ls_tree entry reads_digest show changed_paths patch_sha changed_blob_sizes)
                       merge (merge_tree commit_tree identity_env)
                       worktrees (add_worktree add_detached_worktree remove_worktree prune_worktrees
                                  worktree_list worktree_with_branch worktree_status untracked_paths
                                  is_clean head ff_worktree)
                       measurement trees (closure_pins materialize overlay apply_patch discard)
                       info/exclude (info_exclude_path append_info_exclude remove_info_exclude_bytes)
  exclude_literal      an anchored, escaped info/exclude rule for one path
  GitError             a git call failed unexpectedly (owed.errors.Internal, exit 3)
  TreeEntry, Worktree, MergeTreeResult   the value types returned
  OUTPUT_LIMIT         buffered output above this (256 MiB) is Refused, naming the git subcommand

Git is a trusted, bounded tool, so calls use `subprocess` directly (argv lists, no shell, LC_ALL=C,
stdin /dev/null, a timeout) instead of the check runner; owed/gitops/proc.py explains why.
"""

from owed.gitops.exclude import exclude_literal
from owed.gitops.merge import MergeTreeResult
from owed.gitops.proc import GIT_TIMEOUT_S, OUTPUT_LIMIT, GitError
from owed.gitops.repo import Repo
from owed.gitops.trees import TreeEntry
from owed.gitops.worktrees import Worktree

__all__ = [
    "GIT_TIMEOUT_S",
    "OUTPUT_LIMIT",
    "GitError",
    "MergeTreeResult",
    "Repo",
    "TreeEntry",
    "Worktree",
    "exclude_literal",
]
