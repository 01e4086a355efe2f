"""Fold rules of the invariant retry policy's observation fields (`remeasure_on`, owed/measure/retry.py).

- `remeasure_match` (on a failing trunk-subject invariant observation): the literal must be one of that
  invariant's `remeasure_on` in the plan current at the entry; it makes the failure due for one automatic
  retry: `state.retries[seq] = [item id, None, commit, merging]`.
- `auto_remeasure` (on a later observation of the same item): the seq of such a failure not yet retried; it
  fills the retry slot, so each failure gets at most one automatic retry (durable: replay knows it). A retry
  is never itself retry-eligible. Both votes stay on the key: pass + fail is ⊤ for the owner unless the invariant
  sets `repeat`, whose runs pool (owed/pooling.py).
"""

from __future__ import annotations

from owed import entries as E
from owed.folds.slots import refuse
from owed.ids import split_obligation
from owed.state import State, item_id


def fold_retry(state: State, e: E.Obs, plan) -> None:
    kind, inv_id = split_obligation(e.obligation)
    if e.subject != "trunk" or kind != "inv":
        raise refuse(e, "only invariant observations carry remeasure_match / auto_remeasure")
    iid = item_id(e.subject, e.obligation, e.key)
    if e.remeasure_match is not None:
        inv = next((i for i in plan.invariants if i.id == inv_id), None)
        if e.verdict != "fail" or inv is None or e.remeasure_match not in inv.remeasure_on:
            raise refuse(e, "remeasure_match names a remeasure_on literal of a failing invariant")
        if e.auto_remeasure is not None:
            raise refuse(e, "an automatic retry is not retried again")
        state.retries[e.seq] = [iid, None, e.commit, e.merging]
    if e.auto_remeasure is not None:
        r = state.retries.get(e.auto_remeasure)
        if r is None or r[0] != iid:
            raise refuse(e, f"auto_remeasure #{e.auto_remeasure} is not a retry-eligible failure on this key")
        if r[1] is not None:
            raise refuse(e, f"failure #{e.auto_remeasure} was already retried (#{r[1]}): one automatic retry")
        r[1] = e.seq
