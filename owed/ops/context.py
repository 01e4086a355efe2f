"""What every command starts from: the repository, its ledger, the replayed state and the current plan."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from owed.git import Repo
    from owed.ledger.store import Ledger
    from owed.plan.model import Plan
    from owed.state import State


class Context:
    """A plain class, not a dataclass: `dataclasses` imports `inspect` (~5 ms of every read command)."""

    __slots__ = ("cwd", "repo", "ledger", "state", "plan")

    def __init__(self, cwd: str, repo: Repo, ledger: Ledger, state: State, plan: Plan):
        self.cwd, self.repo, self.ledger, self.state, self.plan = cwd, repo, ledger, state, plan

    def __repr__(self) -> str:
        return f"Context(cwd={self.cwd!r}, repo={self.repo!r}, seq={self.state.seq})"

    @classmethod
    def load(cls, cwd: str | None = None, *, need_ledger: bool = True) -> Context:
        from owed.errors import UsageError
        from owed.git import GitError, Repo
        from owed.ledger.store import Ledger

        cwd = cwd or os.getcwd()
        try:
            repo = Repo.discover(cwd)
        except GitError:
            raise UsageError(f"not inside a git repository: {cwd}") from None
        ledger = Ledger(repo.ledger_dir())
        if need_ledger:
            ledger.require()
        from owed.measure.leftovers import prune

        prune(repo)  # measurement trees of a killed owed
        if (ledger.root / "merge-intent.json").exists():  # a merge torn by a kill: complete or roll back
            from owed.ops.merge_intent import recover

            recover(ledger, repo)
        return cls(cwd, repo, ledger, *_state_and_plan(ledger))

    def fresh(self) -> Context:
        """A new Context on the same repository and ledger, with the state and plan read again (no second
        repository discovery: its git call is already answered)."""
        return type(self)(self.cwd, self.repo, self.ledger, *_state_and_plan(self.ledger))

    def reload(self) -> Context:
        self.state = self.ledger.state()
        self.plan = self.ledger.plan(self.state.plan.sha)
        return self


def _state_and_plan(ledger: Ledger) -> tuple[State, Plan | None]:
    state = ledger.state()
    return state, ledger.plan(state.plan.sha) if state.plan else None
