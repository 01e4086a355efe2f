"""The driver's merge slot as a child process: argv of `owed merge A[,B,…]` and the runtime merge job.

`child_argv(act)` is the background child of an attest or merge action (a batch merge names its members,
comma-separated, leader first). `merge_job(drv, act)` writes the running merge job
(owed/ops/merge_waiting.py: what `owed status` shows as `merge waiting for driver-internal job (…)` and
`merge in batch with <leader>`) for the child's lifetime and always removes it.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager


def members(act) -> list[str]:
    return list(act.batch) if getattr(act, "batch", ()) else [act.node]


def target(act) -> str:
    """What the child is run on: the node, or a batch's members comma-separated."""
    return ",".join(members(act)) if act.kind == "merge" else act.node


def child_argv(act) -> list[str]:
    return [sys.executable, "-m", "owed", act.kind, target(act), "--json"]


@contextmanager
def merge_job(drv, act):
    if act.kind != "merge":
        yield
        return
    from owed.ledger.store import now_iso
    from owed.ops import merge_waiting

    root = drv.ctx.ledger.root
    merge_waiting.write(root, members(act), now_iso())
    try:
        yield
    finally:
        merge_waiting.clear(root)
