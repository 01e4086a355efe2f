"""The lock boundary (seed 0.22): while this process holds the ledger lock, nothing is spawned and no
destructive or worktree git operation runs.

`owed/ledger/lock.py` marks the holder (`enter` on acquire, `leave` on release) in a context variable, so the
mark is process-local and follows the holder's thread or task: another thread, or a task started outside the
locked step, is not refused, and another process's lock is outside the guard altogether. The mark points to
the lock object itself, so a task that copied the context while the lock was held stops being refused once
the lock is released.

Doors that check: `runner` (every `Child.spawn`: measurements, setup, on_timeout hooks, agents through the
shim), owed's git door (owed/gitops/proc.py: the destructive subcommands), and the other Popen doors of owed
and the driver. One named exemption: `exempt("trunk advance")` around the fast-forward (or ref CAS) of an
already measured commit; git's own post-merge hooks run inside it, under the lock (seed: merge hooks still
run under the ledger lock). A refusal raises `LockBoundary`, an internal error (exit 3): it is an owed bug.

This module imports nothing but `contextvars`: the ledger lock sits on read paths (snapshot refresh).
"""

from __future__ import annotations

from contextvars import ContextVar, Token

_holder: ContextVar[object | None] = ContextVar("owed_ledger_lock_holder", default=None)
_exempt: ContextVar[str | None] = ContextVar("owed_lock_boundary_exempt", default=None)


class LockBoundary(RuntimeError):
    """An operation the lock boundary forbids was attempted under the ledger lock (an owed bug: exit 3)."""


def enter(holder: object) -> Token:
    """Mark the current context as holding the ledger lock; `holder.held` says whether it still does."""
    return _holder.set(holder)


def leave(token: Token) -> None:
    try:
        _holder.reset(token)
    except ValueError:  # released from another context: the mark there ends with `held` going False
        pass


def locked() -> bool:
    """Does this thread/task hold the ledger lock of this process?"""
    h = _holder.get()
    return h is not None and bool(getattr(h, "held", False))


def exempted() -> str | None:
    return _exempt.get() if locked() else None


class exempt:
    """`with exempt("trunk advance"):` the single named git exemption (destructive git allowed, spawns not)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._token: Token | None = None

    def __enter__(self) -> exempt:
        self._token = _exempt.set(self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _exempt.reset(self._token)


def refuse_spawn(what: str) -> None:
    """Raise unless the current context may start `what` (a command, a job, an agent)."""
    if locked():
        raise LockBoundary(f"lock boundary: refusing to spawn {what} while this process holds the ledger lock "
                           "(an owed bug: spawn outside the locked step)")


# git subcommands that change worktrees, branches, the index or refs (read-only forms are let through below).
_DESTRUCTIVE = frozenset({
    "worktree", "reset", "checkout", "switch", "restore", "clean", "update-ref", "merge", "rebase",
    "cherry-pick", "revert", "am", "stash", "pull", "gc", "prune", "read-tree", "checkout-index", "rm", "mv",
})
_READ_WORKTREE = frozenset({"list"})
_BRANCH_WRITES = frozenset({"-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force"})


def git_subcommand(args: list[str]) -> tuple[str, list[str]]:
    """The subcommand of `git args` and what follows it (global options like -c k=v, -C dir come first)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-c", "-C"):
            i += 2
            continue
        if not a.startswith("-"):
            return a, args[i + 1:]
        i += 1
    return "?", []


def destructive(args: list[str]) -> str | None:
    """The operation's name (`worktree remove`, `branch -D`, `update-ref`) if `git args` is guarded, else None."""
    sub, rest = git_subcommand(args)
    if sub == "worktree":
        op = rest[0] if rest else ""
        return None if op in _READ_WORKTREE else f"worktree {op}".strip()
    if sub == "branch":
        flags = [a for a in rest if a in _BRANCH_WRITES]
        return f"branch {flags[0]}" if flags else None
    if sub == "symbolic-ref":
        positional = [a for a in rest if not a.startswith("-")]
        return "symbolic-ref" if len(positional) > 1 or "-d" in rest or "--delete" in rest else None
    return sub if sub in _DESTRUCTIVE else None


def check_git(args: list[str]) -> None:
    """Raise if `git args` is a destructive/worktree operation under the ledger lock outside the exemption."""
    if not locked():
        return
    op = destructive(args)
    if op is None:
        return
    name = _exempt.get()
    if name == "trunk advance" and ((op == "merge" and "--ff-only" in args) or (op == "update-ref" and not _deletes(args))):
        return
    raise LockBoundary(f"lock boundary: refusing git {op} while this process holds the ledger lock "
                       "(an owed bug: only the trunk advance of a measured commit may move git under the lock)")


def _deletes(args: list[str]) -> bool:
    return "-d" in args or "--delete" in args
