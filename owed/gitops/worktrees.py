"""Worktrees: slot worktrees, their status, and fast-forwarding a trunk worktree.

Map:
  Worktree(path, head, branch)       one `worktree list` record (branch short name, None if detached)
  add_worktree(path, branch, base)   new branch at base, checked out at path (physical path returned)
  add_detached_worktree(path, c)     detached at commit c
  remove_worktree(path, force)       remove, then prune stale records
  worktree_list()                    every worktree (the main one first)
  worktree_with_branch(branch)       path (a str) of the worktree that has the branch checked out, or None
  worktree_status(path, untracked)   porcelain v1 records "XY path" (rename origins dropped)
  untracked_paths(path, untracked)   the "??" paths of that status (directories keep their trailing /)
  is_clean(path)                     no tracked change and no untracked, not-ignored file
  head(path)                         HEAD commit of a worktree
  ff_worktree(path, commit, keep)    `merge --ff-only` there; Refused while tracked files are dirty (but the
                                     modified paths in `keep`, which git carries through the fast-forward)

`status` runs with --no-optional-locks: a read must not take the index lock of a worktree in which an
agent may be committing at that moment.
"""

from __future__ import annotations

import os
from collections import namedtuple
from typing import TYPE_CHECKING, NamedTuple

from owed.errors import Refused
from owed.gitops import ondisk, proc
from owed.gitops.base import PathLike, RepoBase, _real, decode_path

if TYPE_CHECKING:
    from pathlib import Path


if TYPE_CHECKING:
    class Worktree(NamedTuple):
        path: Path
        head: str | None
        branch: str | None
else:  # the class form's string annotations would each be a ForwardRef, which compiles (owed/cli/lean.py)
    Worktree = namedtuple("Worktree", ("path", "head", "branch"))


class WorktreesMixin(RepoBase):
    def add_worktree(self, path: PathLike, branch: str, base: str) -> Path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._git(["worktree", "add", "--no-track", "-b", branch, "--", os.fspath(path), base])
        return _real(path)

    def add_detached_worktree(self, path: PathLike, commit: str, *, hooks: bool = True) -> Path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        pre = [] if hooks else ["-c", "core.hooksPath=/dev/null"]
        self._git([*pre, "worktree", "add", "--detach", "--", os.fspath(path), commit])
        return _real(path)

    def remove_worktree(self, path: PathLike, force: bool = True) -> None:
        args = ["worktree", "remove"] + (["--force"] if force else []) + ["--", os.fspath(path)]
        self._git(args)
        self.prune_worktrees()

    def prune_worktrees(self) -> None:
        self._git(["worktree", "prune"])

    def worktree_list(self) -> list[Worktree]:
        from pathlib import Path  # a listing (the git fallback, gc): off the read paths

        out = self._git(["worktree", "list", "--porcelain", "-z"]).out
        result: list[Worktree] = []
        fields: dict[str, str] = {}
        for raw in out.split(b"\0"):
            if raw:
                key, _, value = decode_path(raw).partition(" ")
                fields[key] = value
                continue
            if "worktree" in fields:  # an empty field ends a record
                branch = fields.get("branch")
                if branch and branch.startswith("refs/heads/"):
                    branch = branch[len("refs/heads/"):]
                result.append(Worktree(Path(fields["worktree"]), fields.get("HEAD"), branch))
            fields = {}
        return result

    def worktree_with_branch(self, branch: str) -> str | None:
        found = ondisk.branch_worktree(self.common_dir_str, self.main_worktree_str, branch)
        if found is not ondisk.ASK_GIT:
            return found
        for wt in self.worktree_list():
            if wt.branch == branch:
                return str(wt.path)
        return None

    def worktree_status(self, path: PathLike, untracked: str = "normal") -> list[str]:
        args = ["--no-optional-locks", "status", "--porcelain", "-z", f"--untracked-files={untracked}"]
        fields = self._git(args, cwd=path).out.split(b"\0")
        records, i = [], 0
        while i < len(fields):
            rec = fields[i]
            i += 1
            if not rec:
                continue
            records.append(decode_path(rec))
            if b"R" in rec[:2] or b"C" in rec[:2]:
                i += 1  # -z puts a rename's origin path in its own field
        return records

    def untracked_paths(self, path: PathLike, untracked: str = "normal") -> list[str]:
        return [r[3:] for r in self.worktree_status(path, untracked) if r.startswith("?? ")]

    def is_clean(self, path: PathLike) -> bool:
        return not self.worktree_status(path, "normal")

    def head(self, path: PathLike) -> str:
        return self._out(["rev-parse", "--verify", "HEAD^{commit}"], cwd=path)

    def ff_worktree(self, path: PathLike, commit: str, keep: tuple[str, ...] = ()) -> None:
        """Fast-forward the worktree at `path` (normally the trunk's) to `commit`.

        Only tracked changes refuse up front, except a modification of a path in `keep` (the plan file owed
        itself rewrote: its content is the recorded plan), which git keeps as it is when the fast-forward
        does not touch that file; an untracked file or a kept file that the fast-forward would overwrite
        makes git itself refuse, which is reported the same way (nothing moved).
        """
        dirty = [r for r in self.worktree_status(path, "no") if not (r[:2] in (" M", "M ", "MM") and r[3:] in keep)]
        if dirty:
            raise Refused(
                f"trunk worktree {path} has uncommitted changes: commit them there, or detach it "
                f"(git -C {path} switch --detach), then retry"
            )
        r = self._git(["merge", "--ff-only", "--no-edit", commit], cwd=path, ok=range(256))
        if r.code != 0:
            line = proc.first_line(r.err) or proc.first_line(r.out)
            raise Refused(f"cannot fast-forward worktree {path} to {commit[:12]}: {line}")
