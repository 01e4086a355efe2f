"""The merge queue and merge waiting (pure): which accepted node merges next, and what it waits for.

- `merge_queue(state, plan)`: accepted open attempts (dependencies merged) ordered by unique unfinished
  transitive dependents (descending), then `accepted_since` (the seq since which the current candidate is
  continuously accepted, owed/folds/queue.py), then id. Status, why, next and the driver use this order.
- `merge_waiting(state, queue, job)`: for every queued node outside the running merge job, `{job, since, ahead}`:
  the driver-internal job it waits for (e.g. `catalog merge`), since when the node has waited without
  interruption (the time its current candidate became continuously accepted, `acceptedSince`'s entry) and
  its zero-based queue position, recomputed on every read (the job itself is a runtime cache written by the
  driver, owed/ops/merge_waiting.py — never ledger evidence).
- `phase_of(node, job, waiting)`: the status phase text of an accepted node; the job's UTC start is in this
  text only (`… driver-internal job (c merge, since 09:12); 1 merge ahead`).
"""

from __future__ import annotations

from owed.views.record import Record


class MergeWait(Record):
    """A queued node outside the driver's running merge job: that job, the node's own continuous wait start, its
    queue position."""

    job: str
    since: str
    ahead: int


def merge_queue(state, plan) -> list[str]:
    from owed.acceptance import accepted
    from owed.plan.graph import dependent_counts

    weight = dependent_counts(plan, state.merged)
    out = []
    for node in plan.nodes:
        rec = state.nodes.get(node.id)
        if rec is None or rec.merged is not None or rec.held is not None or state.open_slot(node.id) is None:
            continue
        if state.open_slot(node.id).cand is None or any(d not in state.merged for d in node.deps):
            continue
        if accepted(state, plan, node.id):
            out.append(node.id)
    since = {n: state.nodes[n].accepted_since for n in out}
    return sorted(out, key=lambda n: (-weight.get(n, 0), since[n] if since[n] is not None else state.seq + 1, n))


def merge_waiting(state, queue: list[str], job: dict | None) -> dict[str, MergeWait]:
    if not job:
        return {}
    members = set(job.get("members") or ())
    return {n: MergeWait(job["job"], _waiting_since(state, n), i) for i, n in enumerate(queue) if n not in members}


def _waiting_since(state, node: str) -> str:
    """Since when an accepted node has waited: its acceptedSince entry's time (a snapshot written before
    owed kept that time has none: the candidate's submit, the wait's earliest possible start)."""
    rec = state.nodes[node]
    if rec.accepted_ts:
        return rec.accepted_ts
    slot = rec.slot
    return slot.cand.ts if slot is not None and slot.cand is not None else ""


def hhmm(ts: str) -> str:
    """`2026-01-02T09:12:33.123Z` → `09:12` (UTC)."""
    return ts[11:16] if len(ts) >= 16 else ts


def phase_of(node: str, job: dict | None, waiting: dict[str, MergeWait]) -> str:
    members = list(job.get("members") or ()) if job else []
    if node in members:
        leader = members[0]
        return "accepted (merging)" if node == leader else f"accepted (merge in batch with {leader})"
    w = waiting.get(node)
    if w is None:
        return "accepted (merge pending)"
    ahead = w.ahead
    return (f"accepted (merge waiting for driver-internal job ({w.job}, since {hhmm(job['since'] if job else '')}); "
            f"{ahead} merge{'' if ahead == 1 else 's'} ahead)")
