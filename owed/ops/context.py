"""What every command starts from: the repository, its ledger, the replayed state and the current plan."""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from owed.git import Repo
    from owed.ledger.store import Ledger
    from owed.plan.model import Plan
    from owed.state import State


# A long-lived caller's repositories by cwd and ledger objects by ledger dir (`owed mcp` for its read tools, one
# call at a time per repository): no discovery git call, and the replay memo folds only what was appended since.
WARM: ContextVar[dict | None] = ContextVar("owed_warm_ledgers", default=None)


def _stat(path) -> tuple:
    try:
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns, st.st_ino
    except OSError:
        return ()


def git_files(repo, branch: str | None = None) -> list:
    """The files whose change can change what git says about `branch`'s ref (`branch`), or about which
    worktree has which branch checked out (None): a long-lived reader re-asks git only when one changed."""
    join, common = os.path.join, repo.common_dir_str  # strings: no pathlib on the read paths (issue 15)
    if branch is not None:
        return [join(common, "refs", "heads", branch), join(common, "packed-refs"), join(common, "reftable", "tables.list")]
    wts = join(common, "worktrees")
    try:
        heads = sorted(join(wts, d, "HEAD") for d in os.listdir(wts))
    except OSError:
        heads = []
    return [join(common, "HEAD"), wts, *heads]


def warm_answer(repo, name: str, files: list, ask, *key):
    """`ask()`, or (a long-lived caller, WARM set) its earlier answer while `files` and `key` are unchanged."""
    warm = WARM.get()
    if warm is None:
        return ask()
    sig = (key, tuple(_stat(f) for f in files))
    slot = ("git", name, repo.common_dir_str)
    hit = warm.get(slot)
    if hit is not None and hit[0] == sig:
        return hit[1]
    value = ask()
    warm[slot] = (sig, value)
    return value


def _repo(cwd: str):
    """The repository of `cwd` (a long-lived caller keeps it: discovery is a git call). A ReadRepo: the full Repo
    once a method beyond discovery, refs and worktrees is first used (owed/gitops/read.py)."""
    from owed.gitops.read import ReadRepo as Repo

    warm = WARM.get()
    if warm is None:
        return Repo.discover(cwd)
    key = ("repo", os.path.abspath(cwd))
    if key not in warm:
        warm[key] = Repo.discover(cwd)
    return warm[key]


def _ledger(root):
    from owed.ledger.store import Ledger

    warm = WARM.get()
    if warm is None:
        return Ledger(root)
    key = str(root)
    if key not in warm:
        warm[key] = Ledger(root)
    return warm[key]


class Context:
    """A plain class, not a dataclass: `dataclasses` imports `inspect` (~5 ms of every read command)."""

    __slots__ = ("cwd", "repo", "ledger", "state", "plan")

    def __init__(self, cwd: str, repo: Repo, ledger: Ledger, state: State, plan: Plan):
        self.cwd, self.repo, self.ledger, self.state, self.plan = cwd, repo, ledger, state, plan

    def __repr__(self) -> str:
        return f"Context(cwd={self.cwd!r}, repo={self.repo!r}, seq={self.state.seq})"

    @classmethod
    def load(cls, cwd: str | None = None, *, read: bool = False) -> Context:
        """The context of an initialized ledger (UsageError without one): its state always has a plan.
        `read`: a command that appends nothing (status, why, brief, graph, idle): its load writes the snapshot
        again when it folded entries past it, so the next read folds nothing (Ledger.refreshes); a write
        command leaves that to its locked append."""
        from owed.errors import UsageError
        from owed.gitops.proc import GitError

        cwd = cwd or os.getcwd()
        try:
            repo = _repo(cwd)
        except GitError:
            raise UsageError(f"not inside a git repository: {cwd}") from None
        ledger = _ledger(repo.ledger_dir_str())
        ledger.refreshes = read
        ledger.require()  # (no caller loads a context without a ledger: its plan would be None)
        from owed.measure.leftovers import prune

        prune(repo)  # measurement trees of a killed owed
        if os.path.exists(os.path.join(ledger.dir, "merge-intent.json")):  # a merge torn by a kill: complete or roll back
            from owed.ops.merge_intent import recover

            recover(ledger, repo)
        return cls(cwd, repo, ledger, *_state_and_plan(ledger))

    def fresh(self) -> Context:
        """A new Context on the same repository and ledger, with the state and plan read again (no second
        repository discovery: its git call is already answered)."""
        return type(self)(self.cwd, self.repo, self.ledger, *_state_and_plan(self.ledger))

    def reload(self) -> Context:
        self.state = self.ledger.state()
        self.plan = self.ledger.plan(self.state.plan_ref().sha)
        return self


def _state_and_plan(ledger: Ledger) -> tuple[State, Plan]:
    state = ledger.state()
    return state, ledger.plan(state.plan_ref().sha)
