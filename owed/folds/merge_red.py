"""Merge-tree failures and their trunk-red classification, folded from merge-tree and probe observations.

- A merge-tree observation (`merging: <node>`, a node check or, subject trunk, an invariant) that fails
  sets `merge_fails[obligation]` of that node to [seq, trunk commit, candidate submit seq, failed names];
  a pass removes it (and its trunk-red mark).
- A probe (`probe: trunk`: the same check on trunk without the node) that fails on the trunk the merge
  failure was measured against, with every merge failure name among its own (or neither naming any), marks
  `trunk_red[obligation]` = [merge seq, probe seq, trunk commit, candidate seq, sorted names]; any other
  probe removes the mark. A later merge attempt on the same trunk that reuses the probe keeps the mark.
- `waits_for_trunk(state, node)` (pure): the current candidate's merge on the current trunk failed only
  trunk-red checks: the driver waits (no halt) until trunk moves; status shows `waiting: trunk-red (…)`.
- `merge_key_risk`: an owner waiver citing such a merge-tree failure (`owed waive <node> check:X
  --accept-risk <merge-tree obs seq>`) is recorded on that merge key and binds only it (trunk moving makes
  a new merge key); the merge guard then accepts that key, and the node no longer waits for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from owed.state import State

if TYPE_CHECKING:
    from owed import entries as E
    from owed.ids import ObligationId


def _cand(state: State, node: str) -> int | None:
    slot = state.open_slot(node)
    return slot.cand.seq if slot is not None and slot.cand is not None else None


def note_merge_obs(state: State, e: E.Obs) -> None:
    node = e.merging if e.subject == "trunk" else e.subject
    rec = state.nodes.get(node) if node else None
    if rec is None or not node:
        return
    if e.merging is not None:
        agg = state.agg(e.subject, e.obligation, e.key)
        if e.verdict == "pass" and agg is not None and agg.pool and agg.verdict != "pass":
            return  # a repeating key whose runs still pool to a fail keeps its refusal (owed/pooling.py)
        if e.verdict == "pass":
            rec.merge_fails.pop(e.obligation, None)
            rec.trunk_red.pop(e.obligation, None)
        else:
            rec.merge_fails[e.obligation] = [e.seq, state.trunk_commit, _cand(state, node), list(e.failed), e.key]
        return
    if e.probe != "trunk":
        return
    mf = rec.merge_fails.get(e.obligation)
    mine, names = set(mf[3]) if mf else set(), set(e.failed)
    if (mf is not None and mf[1] == e.commit and e.verdict == "fail"
            and (mine <= names if (mine or names) else True)):
        rec.trunk_red[e.obligation] = [mf[0], e.seq, e.commit, mf[2], sorted(mine), mf[4]]
    else:
        rec.trunk_red.pop(e.obligation, None)


def _waived(rec, obligation: ObligationId, key: str) -> bool:
    return any(w.obligation == obligation and w.key == key for w in rec.waivers)


def current_red(state: State, node: str) -> dict[ObligationId, list]:
    """The trunk-red marks of the node's current candidate on the current trunk (not waived on that key)."""
    rec, cand = state.nodes.get(node), _cand(state, node)
    if rec is None or cand is None:
        return {}
    return {o: r for o, r in rec.trunk_red.items()
            if r[2] == state.trunk_commit and r[3] == cand and not _waived(rec, o, r[5])}


def waits_for_trunk(state: State, node: str) -> dict[ObligationId, list]:
    """Non-empty when every merge-tree failure of the current candidate on the current trunk (a waived merge
    key aside) is trunk-red."""
    red = current_red(state, node)
    if not red:
        return {}
    rec, cand = state.nodes[node], _cand(state, node)
    fails = {o for o, f in rec.merge_fails.items()
             if f[1] == state.trunk_commit and f[2] == cand and not _waived(rec, o, f[4])}
    return red if fails <= set(red) else {}


def merge_key_risk(state: State, node: str, obligation: ObligationId, accept_risk: tuple[int, ...]) -> list | None:
    """The trunk-red merge failure a waiver's `--accept-risk <merge-tree obs seq>` cites (current candidate,
    current trunk), or None when it cites something else (active blocks)."""
    rec, cand = state.nodes.get(node), _cand(state, node)
    if rec is None or cand is None or len(accept_risk) != 1:
        return None
    r = rec.trunk_red.get(obligation)
    if r is not None and r[0] == accept_risk[0] and r[2] == state.trunk_commit and r[3] == cand:
        return r
    return None
