"""RepoBase: where a repository is (discovery, main worktree, ledger dir) and how its git is called.

Map:
  RepoBase.discover(path)      from any path inside a worktree (main or linked) -> repository handle
                               (read from .git files by gitops/ondisk.py where it can, else `git rev-parse`)
  .toplevel                    the worktree that contained `path` (physical path)
  .git_dir / .common_dir       per-worktree git dir / shared common dir (absolute, physical)
  .main_worktree               top level of the main worktree, the same from every linked worktree
  .ledger_dir(env)             $OWED_DIR (against the process cwd, symlinks resolved) else <common_dir>/owed
  .<name>_str                  the same locations as strings (toplevel_str, git_dir_str, common_dir_str,
                               main_worktree_str, ledger_dir_str()): the Path objects above are made on first
                               use, so a read path that keeps to the strings never imports pathlib (~3 ms of
                               a command's start with urllib.parse and ipaddress, issue 15)
  ._git(args) / ._stream(...)  calls through owed.gitops.proc with this repo's cwd and output limit

OWED_DIR is honoured here rather than by each caller so every command agrees on one ledger location
(the seed: "OWED_DIR overrides ledger storage for isolated tests"); pass `env={}` to ignore it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING

from owed.errors import UsageError
from owed.gitops import ondisk, proc

if TYPE_CHECKING:
    from pathlib import Path

PathLike = str | os.PathLike


def _real(p: PathLike) -> Path:
    from pathlib import Path

    return Path(os.path.realpath(os.fspath(p)))


def _real_str(p: PathLike) -> str:
    return os.path.realpath(os.fspath(p))


def decode_path(raw: bytes) -> str:
    """Git paths are bytes; surrogateescape keeps undecodable names round-trippable to the filesystem."""
    return raw.decode("utf-8", "surrogateescape")


def encode_path(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


class RepoBase:
    """A repository seen from one of its worktrees. Construct with `Repo.discover(path)`."""

    def __init__(self, toplevel: PathLike, git_dir: PathLike, common_dir: PathLike):
        self.toplevel_str = _real_str(toplevel)
        self.git_dir_str = _real_str(git_dir)
        self.common_dir_str = _real_str(common_dir)
        self.output_limit = proc.OUTPUT_LIMIT
        self.timeout = proc.GIT_TIMEOUT_S

    @cached_property
    def toplevel(self) -> Path:
        return _real(self.toplevel_str)

    @cached_property
    def git_dir(self) -> Path:
        return _real(self.git_dir_str)

    @cached_property
    def common_dir(self) -> Path:
        return _real(self.common_dir_str)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.toplevel_str!r})"

    @classmethod
    def discover(cls, path: PathLike = "."):
        p = os.path.abspath(os.fspath(path))
        if not os.path.exists(p):
            raise UsageError(f"{p} does not exist")
        if not os.path.isdir(p):
            p = os.path.dirname(p)
        found = ondisk.discover(p)  # git's own files where their layout is plain; else git answers
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
        return _real(self.main_worktree_str)

    @cached_property
    def main_worktree_str(self) -> str:
        if self.git_dir_str == self.common_dir_str:
            return self.toplevel_str
        # A linked worktree: the main worktree is normally <common dir>/.. ; trust it only if git there
        # agrees on the common dir and calls that directory its top level (not so for bare repositories,
        # --separate-git-dir layouts or submodules, which are refused rather than guessed).
        d, common = os.path.dirname(self.common_dir_str), self.common_dir_str
        if ondisk.discover(d) == (d, common, common):
            return d
        r = proc.run(
            ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"], d, ok=(0, 128)
        )
        lines = r.out.decode("utf-8", "surrogateescape").splitlines()
        if r.code != 0 or len(lines) != 2 or _real_str(lines[0]) != d or _real_str(lines[1]) != common:
            raise UsageError(
                f"the main worktree of this repository cannot be located from the linked worktree "
                f"{self.toplevel_str}: run owed from the main worktree"
            )
        return d

    def ledger_dir(self, env: Mapping[str, str] | None = None) -> Path:
        return _real(self.ledger_dir_str(env))

    def ledger_dir_str(self, env: Mapping[str, str] | None = None) -> str:
        env = os.environ if env is None else env
        override = env.get("OWED_DIR")
        if override:
            real = _real_str(override)  # physical, like common_dir: one spelling of the ledger path everywhere
            if not os.path.isdir(real):  # one stat in the common case; a file is a usage error, not exit 3
                if os.path.lexists(real):
                    raise UsageError(f"OWED_DIR={override} is not a directory")
                if os.path.lexists(os.path.dirname(real)) and not os.path.isdir(os.path.dirname(real)):
                    raise UsageError(f"OWED_DIR={override}: {os.path.dirname(real)} is not a directory")
            return real
        return os.path.join(self.common_dir_str, "owed")

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
            self.toplevel_str if cwd is None else cwd,
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
        self, args: list[str], sink: Callable[[bytes], object], *, cwd: PathLike | None = None, input: bytes | None = None
    ) -> None:
        proc.stream(args, self.toplevel_str if cwd is None else cwd, sink, input=input, timeout=self.timeout)
