"""EDGE: measurement trees left behind by a killed owed are pruned by the next command.

A measurement tree is a detached worktree at `<tmp>/owed-m-<pid>-<random>/tree` (owed/measure/run.py),
registered in `<git common dir>/worktrees/tree*`. A process killed while measuring cannot discard it. The
next command that loads its context calls `prune(repo)`: for each registered `tree*` whose holder names a
pid that no longer runs, the holder is removed and `git worktree prune` drops the registration. Cheap when
there is nothing to do: one listdir, one small read per `tree*` entry, no git call.
"""

from __future__ import annotations

import os

from owed.lazyre import lazy
from owed.ledger.lock import pid_alive

HOLDER_PREFIX = "owed-m-"
_HOLDER = lazy(r"/owed-m-(\d+)-[^/]+/tree/\.git$")


def holder_prefix() -> str:
    return f"{HOLDER_PREFIX}{os.getpid()}-"


def prune(repo) -> list[str]:
    """Remove measurement trees whose owner died; returns the holders removed."""
    admin = os.path.join(repo.common_dir_str, "worktrees")  # strings: every command runs this (issue 15)
    try:
        names = [n for n in os.listdir(admin) if n.startswith("tree")]
    except OSError:
        return []
    removed = []
    for name in names:
        try:
            with open(os.path.join(admin, name, "gitdir"), encoding="utf-8") as f:
                gitdir = f.read().strip()
        except OSError:
            continue
        m = _HOLDER.search(gitdir)
        if m is None or pid_alive(int(m.group(1))):
            continue
        holder = os.path.dirname(os.path.dirname(gitdir))
        import shutil  # only when there is something to remove: off the read paths

        shutil.rmtree(holder, ignore_errors=True)
        removed.append(holder)
    if removed:
        repo.prune_worktrees()
    return removed
