"""Refs and commits: resolve, compare, count, and move refs only by compare-and-swap.

Map:
  rev_parse(rev, peel)          full oid or None (peeled to a commit by default)
  ref_oid(refname)              oid a full ref (refs/...) points to, or None
  branch_oid(branch)            ref_oid("refs/heads/<branch>")
  is_ancestor(a, b)             merge-base --is-ancestor
  count_commits(a, b)           number of commits in a..b
  tree_of(commit)               tree oid of a commit
  update_ref_cas(ref, new, old) False when the ref is not at `old` (None: must not exist); no exception
  delete_ref_cas(ref, old)      False when the ref moved or is gone
  check_ref_format_branch(name) would `git branch <name>` accept this name (no @{-N} expansion)

CAS is what makes concurrent owed processes safe: git's `update-ref <ref> <new> <old>` checks and moves
under the ref lock, so a ref that moved between our read and our write is never overwritten. A refusal is
an expected outcome (the caller retries or refuses), hence a bool; other failures raise GitError.
"""

from __future__ import annotations

from owed.gitops import ondisk, proc
from owed.gitops.base import RepoBase


class RefsMixin(RepoBase):
    def rev_parse(self, rev: str, peel: str | None = "commit") -> str | None:
        if "\0" in rev:  # no revision has a NUL byte (and no argv may carry one)
            return None
        spec = f"{rev}^{{{peel}}}" if peel else rev
        r = self._git(["rev-parse", "--verify", "--quiet", "--end-of-options", spec], ok=(0, 1, 128))
        if r.code != 0:
            return None
        return r.out.decode().strip() or None

    def ref_oid(self, refname: str) -> str | None:
        if not refname.startswith("refs/"):
            raise ValueError(f"ref_oid needs a full ref name (refs/...), got {refname!r}")
        # An exact name match, never rev-parse's DWIM search (which would try refs/heads/<refname> too).
        out = self._git(["for-each-ref", "--format=%(objectname) %(refname)", "--", refname]).out
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            oid, _, name = line.partition(" ")
            if name == refname:
                return oid
        return None

    def branch_oid(self, branch: str) -> str | None:
        found = ondisk.branch_oid(self.common_dir_str, branch)  # the loose ref or packed-refs, where plain
        return self.ref_oid(f"refs/heads/{branch}") if found is ondisk.ASK_GIT else found

    def is_ancestor(self, a: str, b: str) -> bool:
        return self._git(["merge-base", "--is-ancestor", a, b], ok=(0, 1)).code == 0

    def count_commits(self, a: str, b: str) -> int:
        return int(self._out(["rev-list", "--count", f"{a}..{b}", "--"]))

    def first_parents(self, commit: str, limit: int | None = None) -> list[str]:
        """`commit` and its first-parent ancestors, newest first (at most `limit` of them)."""
        return self._out(["rev-list", "--first-parent", *([f"--max-count={limit}"] if limit else []), commit,
                          "--"]).split()

    def tree_of(self, commit: str) -> str:
        return self._out(["rev-parse", "--verify", "--end-of-options", f"{commit}^{{tree}}"])

    def update_ref_cas(self, ref: str, new: str, old: str | None, message: str | None = None) -> bool:
        """Move `ref` to `new` iff it is at `old` (None: iff it does not exist)."""
        args = ["update-ref"]
        if message:
            args += ["-m", message]
        args += ["--", ref, new, old or ""]
        r = self._git(args, ok=(0, 1, 128))
        if r.code == 0:
            return True
        self._raise_unless_moved(args, r, ref, old)
        return False

    def delete_ref_cas(self, ref: str, old: str) -> bool:
        """Delete `ref` iff it is at `old`. Callers keep a branch that is checked out in some worktree."""
        args = ["update-ref", "-d", "--", ref, old]
        r = self._git(args, ok=(0, 1, 128))
        if r.code == 0:
            return True
        self._raise_unless_moved(args, r, ref, old)
        return False

    def _raise_unless_moved(self, args, r, ref: str, old: str | None) -> None:
        # git reports a CAS miss and a real failure (bad object, bad name) the same way; the ref itself
        # tells them apart: if it is no longer where the caller expected, the swap lost a race.
        current = self.ref_oid(ref) if ref.startswith("refs/") else self.rev_parse(ref, peel=None)
        if current != (old or None):
            return
        raise proc.failure(args, r.code, r.err)

    def check_ref_format_branch(self, name: str) -> bool:
        # --branch would expand @{-1} and friends against this repo's history: refuse them outright.
        if not name or name.startswith("-") or "@{" in name:
            return False
        r = self._git(["check-ref-format", "--branch", name], ok=(0, 1, 128))
        return r.code == 0 and r.out.decode("utf-8", "surrogateescape").strip() == name
