"""Merges without a worktree: merge-tree to a tree, commit-tree to a commit.

Map:
  MergeTreeResult(tree, conflicts)   tree is None exactly when conflicts is non-empty
  merge_tree(ours, theirs)           `git merge-tree --write-tree --name-only --no-messages -z`
  commit_tree(tree, parents, msg)    a commit object; no ref moves (the caller CASes the ref)
  identity_env(env)                  fallback identity for users/CI without one configured

Identity: owed must merge in CI and in fresh containers that have no `user.name`/`user.email`. For each of
author and committer, a part set neither in the environment (GIT_<ROLE>_NAME/EMAIL, EMAIL) nor in config
(user.*, author.*, committer.*) gets the fixed `owed <owed@localhost>`, for that call only. Timestamps are
git's (the current time) unless the caller's env sets GIT_AUTHOR_DATE/GIT_COMMITTER_DATE.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import NamedTuple

from owed.gitops import proc
from owed.gitops.base import RepoBase, decode_path

FALLBACK_NAME = "owed"
FALLBACK_EMAIL = "owed@localhost"


class MergeTreeResult(NamedTuple):
    tree: str | None
    conflicts: list[str]

    @property
    def clean(self) -> bool:
        return self.tree is not None


class MergeMixin(RepoBase):
    def merge_tree(self, ours: str, theirs: str) -> MergeTreeResult:
        args = ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs]
        r = self._git(args, ok=(0, 1))
        fields = r.out.split(b"\0")
        if not re.fullmatch(rb"[0-9a-f]{40,64}", fields[0]):
            # git exits 1 with no tree both for a conflict and for an unusable revision; only a conflict
            # prints the (conflicted) tree first.
            raise proc.failure(args, r.code, r.err)
        if r.code == 0:
            return MergeTreeResult(fields[0].decode(), [])
        seen: dict[str, None] = {}
        for f in fields[1:]:
            if f:
                seen.setdefault(decode_path(f))
        return MergeTreeResult(None, list(seen))

    def identity_env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """`env` plus fallback author/committer parts for whatever git would not find on its own."""
        merged = {**os.environ, **(env or {})}
        out = dict(env or {})
        r = self._git(["config", "--get-regexp", r"^(user|author|committer)\.(name|email)$"], ok=(0, 1))
        configured = {line.split(" ", 1)[0].lower() for line in r.out.decode("utf-8", "replace").splitlines()}
        for role in ("author", "committer"):
            name_var, email_var = f"GIT_{role.upper()}_NAME", f"GIT_{role.upper()}_EMAIL"
            if not merged.get(name_var) and not configured & {"user.name", f"{role}.name"}:
                out[name_var] = FALLBACK_NAME
            if not merged.get(email_var) and not merged.get("EMAIL") and not configured & {"user.email", f"{role}.email"}:
                out[email_var] = FALLBACK_EMAIL
        return out

    def commit_tree(
        self, tree: str, parents: list[str], message: str, env: Mapping[str, str] | None = None
    ) -> str:
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        args += ["-F", "-"]
        return self._out(args, input=message.encode(), env=self.identity_env(env))
