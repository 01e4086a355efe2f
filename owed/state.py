"""Replayed state: what the ledger says, as values.

Map:
- `PlanRef`: one recorded plan (seq, sha, path, rev).
- `State`: the fold of every entry so far (head seq/hash, trunk, plans, per-kind counts, …).
  Later issues add nodes, slots, candidates, observations and blocks here.
- `STATE_VERSION`: bumped whenever the shape or the fold rules change; it names the snapshot file
  (`snapshot/state.v<N>`) so a snapshot of another version is simply not found.

The reducer (owed/reducer.py) is the only code that changes a State, and it does so in place while
folding (copying on every entry would make a 100k replay quadratic). Everyone else treats a State as
a read-only value.
"""

from __future__ import annotations

import msgspec

from owed.canon import ZERO_HASH

STATE_VERSION = 1


class PlanRef(msgspec.Struct, kw_only=True, omit_defaults=True):
    seq: int
    sha: str
    by: str
    path: str | None = None
    rev: str | None = None
    downgrades: int = 0


class State(msgspec.Struct, kw_only=True):
    seq: int = -1
    head: str = ZERO_HASH
    ts: str = ""
    trunk: str = ""
    trunk_commit: str = ""  # the ledger trunk: genesis commit, then each merge / adopt
    genesis_commit: str = ""
    plan: PlanRef | None = None
    plans: list[PlanRef] = msgspec.field(default_factory=list)
    allow_seq: int = 0  # seq of the plan entry that last changed `allow`
    kinds: dict[str, int] = msgspec.field(default_factory=dict)
    merged: dict[str, int] = msgspec.field(default_factory=dict)  # node -> merge seq

    @property
    def initialized(self) -> bool:
        return self.seq >= 0

    @property
    def entries(self) -> int:
        return self.seq + 1
