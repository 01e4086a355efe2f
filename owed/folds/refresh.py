"""Fold of `refresh` entries and the one way the ledger trunk's invariant keys change.

- refresh {commit, keys}: by the executor only; `commit` is the ledger trunk (a refresh never moves
  trunk: commit and trunk seq stay); `keys` holds a key for every invariant of the current plan and differs
  from the trunk keys or renews a stale definition (otherwise refused: "nothing to refresh"). It replaces the trunk keys;
  the changed keys are then measured as ordinary trunk observations (`owed attest --trunk`).
- `set_trunk_keys(state, keys, seq, plan)`: genesis, merge, adopt and refresh set the trunk keys through it,
  so `state.trunk_since[id]` is the seq of the entry that set the current key (kept while a merge leaves
  it unchanged: "red on trunk since #seq") and `state.trunk_defns[id]` the definition it was keyed under
  (`keys.inv_defn`: a changed invariant reads "not measured on trunk yet" until refreshed);
  `state.defn_since[id]` the seq of the entry that first keyed that definition (trunk red runs begin there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from owed.keys import inv_defn
from owed.lazyre import lazy
from owed.state import State

if TYPE_CHECKING:
    from owed import entries as E

_KEY = lazy(r"^[0-9a-f]{64}\Z")


def set_trunk_keys(state: State, keys: dict[str, str], seq: int, plan) -> None:
    since, defns = dict(state.trunk_since), {}
    for inv in plan.invariants if plan is not None else ():
        if inv.id in keys:
            defns[inv.id] = inv_defn(inv, plan)
    for i, k in keys.items():
        if state.trunk_keys.get(i) != k or i not in since:
            since[i] = seq
    state.trunk_keys = dict(keys)
    state.trunk_since = {i: s for i, s in since.items() if i in keys}
    state.defn_since = {i: state.defn_since.get(i, seq) if state.trunk_defns.get(i) == d else seq
                        for i, d in defns.items()}
    state.trunk_defns = defns


def stale_invariants(state: State, plan) -> list[str]:
    """Invariants of `plan` whose trunk key is missing or was keyed under another definition (pure)."""
    return [inv.id for inv in plan.invariants
            if inv.id not in state.trunk_keys or state.trunk_defns.get(inv.id) != inv_defn(inv, plan)]


def fold_refresh(state: State, e: E.Refresh, plan) -> None:
    # Here, not at the top: status and why import this module for stale_invariants alone, and the fold's
    # refusal helper would bring every entry Struct with it (issue 15). A refresh entry is rare.
    from owed import principals as P
    from owed.folds.slots import refuse

    if e.by != P.EXECUTOR:
        raise refuse(e, "only the executor (executor:owed) records a refresh")
    if e.commit != state.trunk_commit:
        raise refuse(e, f"a refresh is of the ledger trunk {state.trunk_commit[:12]}, not {e.commit[:12]}")
    ids = {i.id for i in plan.invariants}
    if set(e.keys) != ids:
        raise refuse(e, "a refresh records a key for every invariant of the current plan")
    bad = sorted(i for i, k in e.keys.items() if not _KEY.match(k))
    if bad:
        raise refuse(e, f"invariant keys are 64-hex digests ({', '.join(bad)})")
    if e.keys == state.trunk_keys and not stale_invariants(state, plan):
        raise refuse(e, "nothing to refresh on trunk: every invariant key is unchanged")
    set_trunk_keys(state, dict(e.keys), e.seq, plan)
    state.refreshes.append(e.seq)
