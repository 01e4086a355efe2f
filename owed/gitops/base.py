"""RepoBase: where a repository is (discovery, main worktree, ledger dir) and how its git is called.

Map:
  RepoBase.discover(path)      from any path inside a worktree (main or linked) -> repository handle
                               (read from .git files by gitops/ondisk.py where it can, else `git rev-parse`)
  .toplevel                    the worktree that contained `path` (physical path)
  .git_dir / .common_dir       per-worktree git dir / shared common dir (absolute, physical)
  .main_worktree               top level of the main worktree, the same from every linked worktree
  .ledger_dir(env)             $OWED_DIR (against the process cwd, symlinks resolved) else <common_dir>/owed
  ._git(args) / ._stream(...)  calls through owed.gitops.proc with this repo's cwd and output limit

OWED_DIR is honoured here rather than by each caller so every command agrees on one ledger location
(the seed: "OWED_DIR overrides ledger storage for isolated tests"); pass `env={}` to ignore it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from pathlib import Path

from owed.errors import UsageError
from owed.gitops import ondisk, proc

PathLike = str | os.PathLike


def _real(p: PathLike) -> Path:
    return Path(os.path.realpath(os.fspath(p)))


def decode_path(raw: bytes) -> str:
    """Git paths are bytes; surrogateescape keeps undecodable names round-trippable to the filesystem."""
    return raw.decode("utf-8", "surrogateescape")


def encode_path(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


class RepoBase:
    """A repository seen from one of its worktrees. Construct with `Repo.discover(path)`."""

    def __init__(self, toplevel: PathLike, git_dir: PathLike, common_dir: PathLike):
        self.toplevel = _real(toplevel)
        self.git_dir = _real(git_dir)
        self.common_dir = _real(common_dir)
        self.output_limit = proc.OUTPUT_LIMIT
        self.timeout = proc.GIT_TIMEOUT_S

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.toplevel)!r})"

    @classmethod
    def discover(cls, path: PathLike = "."):
        p = Path(os.path.abspath(os.fspath(path)))
        if not p.exists():
            raise UsageError(f"{p} does not exist")
        if not p.is_dir():
            p = p.parent
        found = ondisk.discover(str(p))  # git's own files where their layout is plain; else git answers
        if found is not ondisk.ASK_GIT:
            return cls(*found)
        args = ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir"]
        r = proc.run(args, p, ok=(0, 128))
        lines = r.out.decode("utf-8", "surrogateescape").splitlines()
        if r.code != 0 or len(lines) != 3:
            why = proc.first_line(r.err)
            raise UsageError(f"{p} is not inside a git worktree" + (f" ({why})" if why else ""))
        return cls(*lines)

    @cached_property
    def main_worktree(self) -> Path:
        """The main worktree's top level; from a linked worktree, the verified parent of the common dir."""
        if self.git_dir == self.common_dir:
            return self.toplevel
        # A linked worktree: the main worktree is normally <common dir>/.. ; trust it only if git there
        # agrees on the common dir and calls that directory its top level (not so for bare repositories,
        # --separate-git-dir layouts or submodules, which are refused rather than guessed).
        d = self.common_dir.parent
        if ondisk.discover(str(d)) == (str(d), str(self.common_dir), str(self.common_dir)):
            return d
        r = proc.run(
            ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"], d, ok=(0, 128)
        )
        lines = r.out.decode("utf-8", "surrogateescape").splitlines()
        if r.code != 0 or len(lines) != 2 or _real(lines[0]) != d or _real(lines[1]) != self.common_dir:
            raise UsageError(
                f"the main worktree of this repository cannot be located from the linked worktree "
                f"{self.toplevel}: run owed from the main worktree"
            )
        return d

    def ledger_dir(self, env: Mapping[str, str] | None = None) -> Path:
        env = os.environ if env is None else env
        override = env.get("OWED_DIR")
        if override:
            return _real(override)  # physical, like common_dir: one spelling of the ledger path everywhere
        return self.common_dir / "owed"

    # -- calling git -------------------------------------------------------------------------------

    def _git(
        self,
        args: list[str],
        *,
        cwd: PathLike | None = None,
        ok: Iterable[int] = (0,),
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> proc.Completed:
        return proc.run(
            args,
            self.toplevel if cwd is None else cwd,
            ok=ok,
            input=input,
            env=env,
            timeout=self.timeout,
            limit=self.output_limit,
        )

    def _out(self, args: list[str], **kw) -> str:
        """Stdout of a call that prints one value (an oid, a count), stripped."""
        return self._git(args, **kw).out.decode("utf-8", "surrogateescape").strip()

    def _stream(
        self, args: list[str], sink: Callable[[bytes], None], *, cwd: PathLike | None = None, input: bytes | None = None
    ) -> None:
        proc.stream(args, self.toplevel if cwd is None else cwd, sink, input=input, timeout=self.timeout)
