"""acceptedSince: since which seq a node's current candidate has been continuously accepted.

`track(state, e, plan)` runs after every fold (owed/reducer.py). It re-evaluates acceptance only for the
nodes the entry can affect — the node an entry names, an observation's subject, or every node with an open
candidate and every node accepted so far for entries that are not node-scoped (plan, genesis, rule, merge,
adopt, …): tests/unit/test_queue_track.py replays ledgers in lockstep with a re-check of every node — and keeps
`NodeRec.accepted_since` (None while not accepted) together with `accepted_cand`, the submit seq it
belongs to, and `accepted_ts`, that entry's time (status's and why's `mergeWaiting[id].since`: since when the
node has waited without interruption): a new candidate or a lost acceptance resets them. The merge queue (owed/views/queue.py) orders
accepted nodes by it. Derived state only: no entry records it, replay recomputes it.
"""

from __future__ import annotations

from owed import entries as E
from owed.acceptance import accepted
from owed.state import State

_IGNORED = (E.Launch, E.Send, E.Halt, E.Note)


def _affected(state: State, e) -> list[str]:
    if isinstance(e, E.Obs):
        return [] if e.subject == "trunk" else [e.subject]
    names = getattr(e, "nodes", None)
    if names is not None and "*" not in names:
        return list(names)
    node = getattr(e, "node", None)
    if isinstance(node, str) and names is None and not isinstance(e, E.Merge):
        return [node]
    # Every open candidate, and every node accepted until now: this entry may have closed its slot (a merge)
    # or dropped its candidate (a plan change), which ends its acceptance.
    return [n for n, r in state.nodes.items()
            if r.accepted_since is not None or (r.slot is not None and r.slot.open and r.slot.cand is not None)]


def track(state: State, e, plan) -> None:
    if plan is None or isinstance(e, _IGNORED):
        return
    for node_id in _affected(state, e):
        rec = state.nodes.get(node_id)
        if rec is None:
            continue
        slot = rec.slot
        cand = slot.cand if slot is not None and slot.open else None
        if cand is None or plan.node(node_id) is None or not accepted(state, plan, node_id):
            rec.accepted_since = rec.accepted_cand = None
            rec.accepted_ts = ""
        elif rec.accepted_since is None or rec.accepted_cand != cand.seq:
            rec.accepted_since, rec.accepted_cand, rec.accepted_ts = e.seq, cand.seq, e.ts
