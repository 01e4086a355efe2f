"""An accepted node's place in the driver's merge slot, for `owed why <node>` (pure; status shows the same).

- `decorate(state, plan, node_id, view, job)`: on the why record (views/why.py), from the merge queue
  (views/queue.py) and the driver's running merge job (a runtime cache, owed/ops/merge_waiting.py):
  the phase of a node inside the running job (`accepted (merging)` / `accepted (merge in batch with
  <leader>)`), `merge_waiting` `{job, since, ahead}` of a queued node outside it (status's
  `mergeWaiting[id]`) and `merge_batch`, the planned batch it is in (status's `mergeBatch`, with
  `drive.merge_batch` ≥ 2: owed/batchplan.py); a node that landed in a batch: `merged (#seq, in batch a, b,
  c)`. Nothing is set for a node outside the queue.
- `lines(view)`: the text line of the planned batch (the merge waiting is the phase line's: said once).
"""

from __future__ import annotations

from msgspec import UNSET


def decorate(state, plan, node_id: str, v, job: dict | None) -> None:
    from owed.views.queue import merge_queue, merge_waiting, phase_of
    from owed.views.status import planned_batch

    rec = state.nodes.get(node_id)
    if rec is not None and rec.merged is not None:
        members = state.merge_members.get(rec.merged)
        if members:  # landed with others: one trunk move for the batch
            v.phase = f"merged (#{rec.merged}, in batch {', '.join(members)})"
        return
    queue = merge_queue(state, plan)
    if node_id not in queue:
        return
    waiting = merge_waiting(state, queue, job)
    if job and node_id in (job.get("members") or ()) or node_id in waiting:
        v.phase = phase_of(node_id, job, waiting)
    if node_id in waiting:
        v.merge_waiting = waiting[node_id]
    batch = planned_batch(state, plan, queue)
    if node_id in batch:
        v.merge_batch = batch


def lines(v) -> list[str]:
    out = []
    if v.merge_batch is not UNSET and v.merge_batch:
        b = v.merge_batch
        role = "as its leader" if b[0] == v.node else f"with {b[0]}"
        out.append(f"Merge batch (planned): {', '.join(b)} — {v.node} merges in this batch {role} "
                   f"(one final tree measured, trunk moved once)")
    return out
