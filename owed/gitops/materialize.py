"""Materialized trees: fresh detached worktrees in which owed measures a commit.

Map:
  closure_pins(base, commit, match)  {path: (mode, oid) from base, or None if absent at base} for matching
                                     paths of either commit: the check closure, always taken from base
  materialize(commit, dest, pin)     `worktree add --detach` at dest (which must not exist), then pinned
                                     paths overwritten (or deleted, for None) -> physical path of dest
  overlay(dest, commit, paths)       write those files of `commit` into the tree (red: base + tests of C)
  discard(dest)                      remove the worktree (falling back to rm -rf) and prune its record

Files are written from blobs by owed itself rather than with `git restore`, so the tree's index and HEAD
still describe `commit`: modes (exec bit, symlinks) are reproduced, contents get the checkout's conversion
(eol attributes, smudge filters), gitlinks become empty directories as in any fresh checkout, and no path is ever followed through a symlink out of dest. Hooks are off for these
worktrees: a post-checkout hook must not change what is measured.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from owed.gitops.base import PathLike, RepoBase, encode_path
from owed.gitops.proc import GitError, first_line
from owed.gitops.trees import GITLINK, TreesMixin
from owed.gitops.worktrees import WorktreesMixin

if TYPE_CHECKING:
    from pathlib import Path

Pin = Mapping[str, "tuple[str, str] | None"]


def _safe_parts(path: str) -> list[str]:
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == ".git":
        raise ValueError(f"not a repository-relative file path: {path!r}")
    return parts


def _remove(p: Path) -> None:
    if p.is_symlink() or p.is_file():
        p.unlink()
    elif p.is_dir():
        import shutil  # materialized trees are removed on write paths only

        shutil.rmtree(p, onerror=_force_writable)


def _force_writable(func, path, _exc) -> None:
    # Checks may leave read-only directories (module caches); make them writable and retry once.
    try:
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, stat.S_IRWXU)
        func(path)
    except OSError:
        pass


class MaterializeMixin(TreesMixin, WorktreesMixin, RepoBase):
    def closure_pins(self, base: str, commit: str, match: Callable[[str], bool]) -> dict[str, tuple[str, str] | None]:
        pins: dict[str, tuple[str, str] | None] = {e.path: (e.mode, e.oid) for e in self.ls_tree(base) if match(e.path)}
        for e in self.ls_tree(commit):
            if match(e.path) and e.path not in pins:
                pins[e.path] = None
        return pins

    def materialize(self, commit: str, dest: PathLike, pin: Pin | None = None) -> Path:
        if os.path.lexists(dest):
            raise ValueError(f"materialize: {dest} already exists")
        tree = self.add_detached_worktree(dest, commit, hooks=False)
        try:
            if pin:
                self._write_entries(tree, pin)
        except BaseException:
            self.discard(tree)
            raise
        return tree

    def overlay(self, dest: PathLike, commit: str, paths: Iterable[str]) -> None:
        from pathlib import Path

        wanted = set(paths)
        found = {e.path: (e.mode, e.oid) for e in self.ls_tree(commit) if e.path in wanted}
        missing = sorted(wanted - found.keys())
        if missing:
            raise ValueError(f"overlay: {missing[0]!r} is not a file of {commit}")
        self._write_entries(Path(dest), found)

    def apply_patch(self, dest: PathLike, patch: bytes) -> str | None:
        """Apply `patch` to the files of the tree at `dest` (a mutant); git's reason when it does not apply."""
        r = self._git(["apply", "--whitespace=nowarn", "-"], cwd=dest, ok=(0, 1, 128), input=patch)
        if r.code == 0:
            return None
        return first_line(r.err) or f"git apply exited {r.code}"

    def discard(self, dest: PathLike) -> None:
        from pathlib import Path

        try:
            self._git(["worktree", "remove", "--force", "--force", "--", os.fspath(dest)])
        except GitError:
            if os.path.lexists(dest):
                _remove(Path(dest))
        self._git(["worktree", "prune"])

    def _write_entries(self, root: Path, entries: Pin) -> None:
        # Deletions first, so a pinned file can take the place of a deleted directory and vice versa.
        for path in sorted(entries, key=lambda p: entries[p] is not None):
            parts = _safe_parts(path)
            target = root.joinpath(*parts)
            self._make_parents(root, parts[:-1])
            if os.path.lexists(target):
                _remove(target)
            value = entries[path]
            if value is None:
                self._prune_empty_parents(root, target.parent)
            else:
                self._write_one(root, target, *value)

    @staticmethod
    def _make_parents(root: Path, dirs: list[str]) -> None:
        p = root
        for name in dirs:
            p = p / name
            if p.is_symlink() or (os.path.lexists(p) and not p.is_dir()):
                p.unlink()  # never follow a symlink out of the tree
            if not p.exists():
                p.mkdir()

    @staticmethod
    def _prune_empty_parents(root: Path, d: Path) -> None:
        while d != root and d.is_dir() and not d.is_symlink() and not any(d.iterdir()):
            d.rmdir()
            d = d.parent

    def _write_one(self, root: Path, target: Path, mode: str, oid: str) -> None:
        if mode == GITLINK:
            target.mkdir()
        elif mode == "120000":
            link = self._git(["cat-file", "blob", oid]).out
            os.symlink(link, encode_path(os.fspath(target)))
        elif mode in ("100644", "100755"):
            perm = 0o777 if mode == "100755" else 0o666  # the umask applies, as in a git checkout
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, perm)
            with os.fdopen(fd, "wb") as f:
                # --filters: the bytes a checkout would write (eol attributes, smudge filters such as LFS),
                # judged by the attributes of the materialized tree itself.
                rel = target.relative_to(root).as_posix()
                self._stream(["cat-file", "--filters", f"--path={rel}", oid], f.write, cwd=root)
        else:
            raise ValueError(f"cannot write {target}: unexpected mode {mode}")
