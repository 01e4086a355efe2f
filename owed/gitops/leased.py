"""Reuse trees: stable detached worktrees under `<git common dir>/owed/trees/<name>-<k>`, leased by pid lock files.

Map:
  trees_root                     <common dir>/owed/trees
  lease_tree(name)               the first `<name>-<k>` (k = 0, 1, …) whose `<name>-<k>.lock` this process can
                                 create (O_EXCL; a lock whose pid is dead on this host is broken) -> its path
  release_tree(path)             remove the lease (the tree stays for the next run)
  reset_tree(path, commit)       make the tree equal a fresh checkout of `commit` at a stable path: `worktree add
                                 --detach` when missing, else `checkout --detach --force` + `clean -ffdx`; then
                                 every gitlink directory emptied (never `git submodule`, never your config);
                                 hooks off -> whether the tree changed commit
  touch_tracked(path)            every tracked file's mtime (and atime) set to now; symlinks themselves, never
                                 their targets; gitlink directories left empty
  reuse_trees()                  [(path, name, leased)] of every tree under trees_root
  remove_reuse_tree(path)        `worktree remove --force --force` (rm -rf as a fallback) and its lock
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from owed.gitops.base import PathLike, RepoBase, decode_path
from owed.gitops.proc import GitError
from owed.gitops.trees import GITLINK, TreesMixin
from owed.lazyre import lazy

if TYPE_CHECKING:
    from pathlib import Path

_NAME = lazy(r"^(?P<name>.+)-(?P<k>\d+)\Z")
_NO_HOOKS = ["-c", "core.hooksPath=/dev/null"]


def _lock_owner_dead(lock: Path) -> bool:
    import json  # here, not at import: stdlib json stays off read paths (issue 15)

    from owed.ledger.lock import HOST, pid_alive

    try:
        doc = json.loads(lock.read_text())
    except (OSError, ValueError):
        return True  # a torn lock file: its writer died before finishing it
    pid = doc.get("pid") if isinstance(doc, dict) else None
    return doc.get("host") == HOST and (not isinstance(pid, int) or not pid_alive(pid))


class LeasedTreesMixin(TreesMixin, RepoBase):
    @property
    def trees_root(self) -> Path:
        from pathlib import Path

        return Path(self.common_dir) / "owed" / "trees"

    def lease_tree(self, name: str) -> Path:
        from owed.ledger.lock import HOST

        root = self.trees_root
        root.mkdir(parents=True, exist_ok=True)
        k = 0
        while True:
            path, lock = root / f"{name}-{k}", root / f"{name}-{k}.lock"
            try:
                fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                if _lock_owner_dead(lock):
                    lock.unlink(missing_ok=True)
                    continue
                k += 1
                continue
            import json

            with os.fdopen(fd, "w") as f:
                f.write(json.dumps({"pid": os.getpid(), "host": HOST, "ts": time.time()}))
            return path

    def release_tree(self, path: PathLike) -> None:
        from pathlib import Path

        Path(f"{os.fspath(path)}.lock").unlink(missing_ok=True)

    def _tree_head(self, path: Path) -> str | None:
        r = self._git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], cwd=path, ok=(0, 1, 128))
        return r.out.decode().strip() if r.code == 0 else None

    def reset_tree(self, path: PathLike, commit: str) -> bool:
        from pathlib import Path

        path = Path(path)
        head = self._tree_head(path) if (path / ".git").exists() else None
        if head is None:
            if os.path.lexists(path):
                self.remove_reuse_tree(path, keep_lock=True)
            os.makedirs(path.parent, exist_ok=True)
            self._git([*_NO_HOOKS, "worktree", "add", "--detach", "--force", "--", os.fspath(path), commit])
        else:
            self._git([*_NO_HOOKS, "checkout", "--detach", "--force", commit, "--"], cwd=path)
            self._git(["clean", "-ffdx", "-q"], cwd=path)
        self._empty_gitlinks(path, commit)
        return head != commit

    def _empty_gitlinks(self, path: Path, commit: str) -> None:
        for e in self.ls_tree(commit):
            if e.mode != GITLINK:
                continue
            d = path.joinpath(*e.path.split("/"))
            if d.is_symlink() or d.is_file():
                d.unlink()
                d.mkdir()
            elif d.is_dir():
                for child in list(d.iterdir()):
                    _rm(child)
            else:
                d.mkdir(parents=True, exist_ok=True)

    def touch_tracked(self, path: PathLike) -> int:
        from pathlib import Path

        path = Path(path)
        out = self._git(["ls-files", "-z", "--stage"], cwd=path).out
        now, n = time.time(), 0
        for rec in out.split(b"\0"):
            if not rec:
                continue
            meta, name = rec.split(b"\t", 1)
            if meta.startswith(GITLINK.encode()):
                continue
            target = path.joinpath(*decode_path(name).split("/"))
            try:
                os.utime(target, (now, now), follow_symlinks=False)
                n += 1
            except (FileNotFoundError, NotImplementedError):
                continue
        return n

    def reuse_trees(self) -> list[tuple[Path, str, bool]]:
        root = self.trees_root
        if not root.is_dir():
            return []
        out = []
        for p in sorted(root.iterdir()):
            m = _NAME.match(p.name)
            if p.name.endswith(".lock") or m is None or not p.is_dir():
                continue
            lock = root / f"{p.name}.lock"
            out.append((p, m.group("name"), lock.exists() and not _lock_owner_dead(lock)))
        return out

    def remove_reuse_tree(self, path: PathLike, *, keep_lock: bool = False) -> None:
        from pathlib import Path

        try:
            self._git(["worktree", "remove", "--force", "--force", "--", os.fspath(path)])
        except GitError:
            if os.path.lexists(path):
                _rm(Path(path))
        self._git(["worktree", "prune"])
        if not keep_lock:
            self.release_tree(path)


def _rm(p: Path) -> None:
    if p.is_symlink() or p.is_file():
        p.unlink()
    elif p.is_dir():
        import shutil

        shutil.rmtree(p, ignore_errors=True)
